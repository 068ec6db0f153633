"""A fan-out at the provider's limit: vetq's fleet-wide gate against per-worker retries.

    python -m vetq.eval.bench_ratelimit --jobs 150 --workers 4 --rpm 60 --latency-ms 200 --window-s 6 --json

Starts the fake provider with that limit and W worker processes on an embedded Redis,
runs N extraction jobs (a Generator and a Critic call each, through the real openai
SDK), then runs the same load with the fleet limiter off (each worker honours a 429's
Retry-After on its own, as SDK retries do) as the baseline. `--window-s` shortens the
provider's minute (and vetq's limiter window with it) so a run takes seconds, not
minutes; the limit is `--rpm` requests per window.

utilization = accepted requests / the most a sliding window of `rpm` per window lets
through between the first and the last arrival, rpm x (span / window + 1). Over a
long run that is the achieved requests per minute over the limit.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from vetq.eval.bench_queue import DATA, DOCUMENT

MODEL = "bench-model"


def answer(path: str, body: dict[str, Any]) -> str:
    messages = body.get("messages") or []
    system = next((m.get("content", "") for m in messages if m.get("role") == "system"), "")
    if "You are the Critic" in system:
        verdicts = [{"field": f, "confidence": 0.95, "grounded": True, "reason": "stated"} for f in DATA]
        return json.dumps({"verdicts": verdicts, "overall_confidence": 0.93, "summary": "ok"})
    return json.dumps(DATA)


def run_mode(
    *,
    fleet_limiter: bool,
    jobs: int,
    workers: int,
    concurrency: int,
    rpm: int,
    tpm: int | None,
    latency_ms: float,
    window_s: float,
    timeout_s: float,
) -> dict[str, Any]:
    from vetq.api_client.admin import Admin
    from vetq.api_client.client import Client
    from vetq.core.settings import load_settings
    from vetq.eval.fake_provider import FakeProvider
    from vetq.workers.embedded_redis import EmbeddedRedis
    from vetq.workers.runner import spawn_worker_process, stop_processes

    home = Path(tempfile.mkdtemp(prefix="vetq-bench-rl-"))
    limits = f"openai:{MODEL}={rpm}rpm" + (f",{tpm}tpm" if tpm else "")
    with FakeProvider(rpm=rpm, tpm=tpm, latency_ms=latency_ms, window_s=window_s) as fake, EmbeddedRedis(home) as redis:
        fake.set_responder(answer)
        env = {
            "VETQ_GENERATOR": f"openai:{MODEL}",
            "VETQ_CRITIC": f"openai:{MODEL}",
            "OPENAI_BASE_URL": fake.base_url_openai,
            "OPENAI_API_KEY": "bench-key-not-real",
            "VETQ_LIMITS": limits,
            "VETQ_LIMIT_WINDOW_S": str(window_s),
            "VETQ_FLEET_LIMITER": "on" if fleet_limiter else "off",
            "VETQ_CACHE_TTL_S": "0",
            "VETQ_MAX_SLEEP_S": str(max(window_s, 10.0)),
            "VETQ_MAX_ATTEMPTS": "50",
            "VETQ_LOG_LEVEL": "WARNING",
        }
        processes = [
            spawn_worker_process(
                redis.live_url, queues=["extract"], concurrency=concurrency, pool="threads", extra_env=env
            )
            for _ in range(workers)
        ]
        try:
            settings = load_settings(home=home, log_level="WARNING")
            with Client(redis.url, settings=settings) as client:
                deadline = time.monotonic() + 60
                while len(Admin.of(client).workers()) < workers and time.monotonic() < deadline:
                    time.sleep(0.2)
                batch = client.submit_batch(
                    {"kind": "extract", "text": f"{DOCUMENT}(document {i})"} for i in range(jobs)
                )
                results = batch.results(timeout=timeout_s)
        finally:
            stop_processes(processes)
        log = fake.log
    accepted = [e["time"] for e in log if e["outcome"] == "ok"]
    refused = sum(1 for e in log if e["outcome"] == "429")
    busy = (max(accepted) - min(accepted)) if accepted else 0.0
    allowed = rpm * (busy / window_s + 1)
    return {
        "requests": len(log),
        "rate_limited": refused,
        "rate_limited_fraction": round(refused / len(log), 4) if log else 0.0,
        "utilization": round(len(accepted) / allowed, 3) if accepted else 0.0,
        "jobs_completed": sum(1 for r in results if r.get("status") in ("ok", "needs_review")),
        "busy_s": round(busy, 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vetq.eval.bench_ratelimit", description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=150)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--concurrency", type=int, default=4, help="jobs in flight per worker process")
    parser.add_argument("--rpm", type=int, default=60, help="requests the provider accepts per window")
    parser.add_argument("--tpm", type=int, default=None, help="tokens the provider accepts per window")
    parser.add_argument("--latency-ms", type=float, default=200)
    parser.add_argument("--window-s", type=float, default=60.0, help="the provider's window (a minute by default)")
    parser.add_argument("--timeout-s", type=float, default=1800)
    parser.add_argument("--no-baseline", action="store_true", help="skip the limiter-off baseline run")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    from vetq.core.logging import configure_logging

    configure_logging("WARNING")
    if min(args.jobs, args.workers, args.concurrency, args.rpm) < 1 or args.window_s <= 0:
        parser.error("--jobs, --workers, --concurrency, --rpm and --window-s must be positive")
    common = dict(
        jobs=args.jobs,
        workers=args.workers,
        concurrency=args.concurrency,
        rpm=args.rpm,
        tpm=args.tpm,
        latency_ms=args.latency_ms,
        window_s=args.window_s,
        timeout_s=args.timeout_s,
    )
    figures: dict[str, Any] = run_mode(fleet_limiter=True, **common)
    if not args.no_baseline:
        figures["baseline"] = run_mode(fleet_limiter=False, **common)
    figures["config"] = {k: v for k, v in common.items() if k != "timeout_s"}
    if args.json:
        print(json.dumps(figures))
    else:
        print(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
