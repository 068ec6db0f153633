"""How much the vetq layer costs on top of raw Celery.

    python -m vetq.eval.bench_queue --jobs 2000 --json

Starts the embedded Redis and worker processes, runs N heuristics-only validation
jobs through vetq's client, then N no-op tasks through the same Redis and workers,
and prints jobs per second for both and their ratio."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

DOCUMENT = (
    "Hi team, forwarding the bill from Globex Ltd below.\nRef: GLX/2026/778\nBilling date 2026-02-28.\n"
    "Items came to 540.00 before tax, tax was 43.20, and the amount due is 583.20. Please pay in GBP.\n"
)
DATA = {
    "vendor_name": "Globex Ltd",
    "invoice_number": "GLX/2026/778",
    "invoice_date": "2026-02-28",
    "subtotal": 540.0,
    "tax": 43.2,
    "total": 583.2,
    "currency": "GBP",
}


def _wait_for_workers(client, count: int, timeout: float = 60.0) -> None:
    from vetq.api_client.admin import Admin

    deadline = time.monotonic() + timeout
    while len(Admin.of(client).workers()) < count:
        if time.monotonic() > deadline:
            raise SystemExit("workers did not start")
        time.sleep(0.2)


def run(jobs: int, workers: int, concurrency: int) -> dict:
    from vetq.api_client.client import Client
    from vetq.core.queue import TASK_NOOP
    from vetq.core.settings import load_settings
    from vetq.workers.embedded_redis import EmbeddedRedis
    from vetq.workers.runner import spawn_worker_process, stop_processes

    home = Path(tempfile.mkdtemp(prefix="vetq-bench-"))
    settings = load_settings(home=home, log_level="WARNING")
    with EmbeddedRedis(home, role="bench") as redis:
        processes = [
            spawn_worker_process(redis.live_url, concurrency=concurrency, extra_env={"VETQ_LOG_LEVEL": "WARNING"})
            for _ in range(workers)
        ]
        try:
            with Client(redis.url, settings=settings) as client:
                _wait_for_workers(client, workers)
                warm = client.submit_batch(
                    [{"kind": "validate", "text": DOCUMENT, "data": DATA, "heuristics_only": True}] * 20
                )
                warm.results(timeout=120)

                started = time.perf_counter()
                batch = client.submit_batch(
                    {"kind": "validate", "text": DOCUMENT, "data": DATA, "heuristics_only": True} for _ in range(jobs)
                )
                results = batch.results(timeout=600)
                vetq_s = time.perf_counter() - started
                assert len(results) == jobs and all(r["status"] == "ok" for r in results)

                from celery.result import ResultSet

                started = time.perf_counter()
                handles = [client.app.send_task(TASK_NOOP, args=[None], queue="extract") for _ in range(jobs)]
                ResultSet(handles, app=client.app).join_native(timeout=600)
                raw_s = time.perf_counter() - started
        finally:
            stop_processes(processes)
    vetq_rate, raw_rate = jobs / vetq_s, jobs / raw_s
    return {
        "jobs": jobs,
        "workers": workers,
        "concurrency": concurrency,
        "vetq_jobs_per_s": round(vetq_rate, 1),
        "raw_celery_jobs_per_s": round(raw_rate, 1),
        "ratio": round(vetq_rate / raw_rate, 3),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vetq.eval.bench_queue", description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=2, help="worker processes")
    parser.add_argument("--concurrency", type=int, default=1, help="jobs per worker process")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    from vetq.core.logging import configure_logging

    configure_logging("WARNING")
    if args.jobs < 1 or args.workers < 1:
        parser.error("--jobs and --workers must be at least 1")
    figures = run(args.jobs, args.workers, args.concurrency)
    if args.json:
        print(json.dumps(figures))
    else:
        for key, value in figures.items():
            print(f"{key:>24}: {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
