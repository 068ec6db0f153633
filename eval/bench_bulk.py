"""The bulk lane at volume: N extraction jobs through the providers' Batch APIs.

    python -m vetq.eval.bench_bulk --jobs 10000 --json

Starts the embedded Redis, the fake provider (its batch endpoints finishing each batch
`--batch-delay` seconds after it is created, with `--error-rate` of the requests
errored and `--expire-rate` expired) and `--workers` worker processes. The Generator
is `openai:gpt-4.1-mini` (OpenAI's Batch API, a JSONL file) and the Critic
`anthropic:claude-haiku-4-5` (Anthropic's Message Batches), both through the real
SDKs. N jobs are submitted as one batch with lane="bulk", each document distinct (so
no two jobs share a model request), then `--realtime-jobs` more on the realtime lane
for the price comparison.

The account:
- every job accounted for: its final result, counted by status (ok, needs_review)
  and error code; `lost` is jobs without a final result by the deadline;
- no request paid twice: every request the fake provider answered in a batch,
  counted by its custom_id; `paid_twice` is ids that succeeded more than once;
- `provider_batches` created per provider, and their outcomes (succeeded, errored,
  expired, canceled, resubmitted as the coordinator saw them in the batch log);
- wall time to the last result, and Redis memory (used_memory) before the run, at
  its peak (sampled each second) and after the last result;
- the cost per 1,000 verified documents (status ok or needs_review) on each lane:
  bulk from the N jobs' results, realtime from the realtime sample's, both priced by
  the shipped price table, and their ratio (target: bulk <= 0.5 x realtime).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

from vetq.eval.bench_queue import DATA, DOCUMENT

GENERATOR = "openai:gpt-4.1-mini"
CRITIC = "anthropic:claude-haiku-4-5"
MARKER = re.compile(r"bulk-([0-9a-f]{8})-(\d+)")
VERIFIED = ("ok", "needs_review")


def _answer(path: str, body: dict[str, Any]) -> str:
    """The Generator's record, or the Critic's verdicts, for the bench document."""
    if str(body.get("model", "")).startswith("claude"):
        verdicts = [{"field": f, "confidence": 0.95, "grounded": True, "reason": "stated"} for f in DATA]
        return json.dumps({"verdicts": verdicts, "overall_confidence": 0.93, "summary": "ok"})
    return json.dumps(DATA)


class MemorySampler:
    def __init__(self, client: Any) -> None:
        self.client = client
        self.peak = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, name="memory-sampler", daemon=True)

    def used(self) -> int:
        return int(self.client.info("memory")["used_memory"])

    def _run(self) -> None:
        while not self.stop.is_set():
            try:
                self.peak = max(self.peak, self.used())
            except Exception:  # noqa: BLE001 - a missed sample is only a missed sample
                pass
            self.stop.wait(1.0)

    def __enter__(self) -> MemorySampler:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(timeout=5)


def _per_thousand(spent: dict[str, Any], verified: int) -> float | None:
    cost = spent.get("cost_usd")
    if cost is None or verified == 0:
        return None
    return round(cost / verified * 1000, 4)


def run(
    *,
    jobs: int,
    realtime_jobs: int,
    workers: int,
    concurrency: int,
    batch_delay_s: float,
    error_rate: float,
    expire_rate: float,
    max_batch_requests: int,
    deadline_s: float,
    seed: int,
) -> dict[str, Any]:
    import redis as redis_lib

    from vetq.api_client.admin import Admin
    from vetq.api_client.client import Client
    from vetq.core.results import spent_of
    from vetq.core.settings import load_settings
    from vetq.eval.fake_provider import FakeProvider
    from vetq.workers.embedded_redis import EmbeddedRedis
    from vetq.workers.runner import spawn_worker_process, stop_processes

    run_id = uuid.uuid4().hex[:8]
    home = Path(tempfile.mkdtemp(prefix="vetq-bench-bulk-"))
    fake = FakeProvider(seed=seed).start()
    fake.set_responder(_answer)
    fake.configure_batches(batch_delay=batch_delay_s, batch_error_rate=error_rate, batch_expire_rate=expire_rate)
    env = {
        "VETQ_GENERATOR": GENERATOR,
        "VETQ_CRITIC": CRITIC,
        "OPENAI_BASE_URL": fake.base_url_openai,
        "OPENAI_API_KEY": "bench-key-not-real",
        "ANTHROPIC_BASE_URL": fake.base_url_anthropic,
        "ANTHROPIC_API_KEY": "bench-key-not-real",
        "VETQ_HOME": str(home / "worker-home"),
        "VETQ_LOG_LEVEL": "WARNING",
        "VETQ_BULK_TICK_S": "0.5",
        "VETQ_BULK_FLUSH_AGE_S": "2",
        "VETQ_BULK_POLL_S": "1",
        "VETQ_BULK_POLL_MAX_S": "5",
        "VETQ_BULK_MAX_BATCH_REQUESTS": str(max_batch_requests),
    }
    processes = []
    try:
        with EmbeddedRedis(home / "redis-home", role="bench") as server:
            # Workers stop before their Redis does (the `finally` inside this block).
            processes = [
                spawn_worker_process(server.live_url, concurrency=concurrency, extra_env=env) for _ in range(workers)
            ]
            settings = load_settings(home=home / "client-home", log_level="WARNING", generator=GENERATOR, critic=CRITIC)
            reader = redis_lib.Redis.from_url(server.live_url)
            with Client(server.live_url, settings=settings) as client:
                ready_by = time.monotonic() + 60
                while len(Admin.of(client).workers()) < workers:
                    if time.monotonic() > ready_by:
                        raise SystemExit("workers did not start")
                    time.sleep(0.2)
                memory_before = int(reader.info("memory")["used_memory"])
                documents = (
                    {"kind": "extract", "text": f"{DOCUMENT}(document bulk-{run_id}-{i})"} for i in range(jobs)
                )
                started = time.perf_counter()
                with MemorySampler(reader) as memory:
                    batch = client.submit_batch(documents, lane="bulk")
                    submitted_s = time.perf_counter() - started
                    results: dict[int, dict[str, Any]] = {}
                    try:
                        for index, result in batch.as_completed(timeout=deadline_s):
                            results[index] = result
                    except Exception as exc:  # noqa: BLE001 - the account says what is missing
                        print(f"bench_bulk: stopped waiting: {type(exc).__name__}: {exc}", file=sys.stderr)
                    wall_s = time.perf_counter() - started
                    memory_after = int(reader.info("memory")["used_memory"])
                status = client.batch_status(batch.id)
                realtime = client.submit_batch(
                    {"kind": "extract", "text": f"{DOCUMENT}(document bulk-{run_id}-rt{i})"}
                    for i in range(realtime_jobs)
                ).results(timeout=deadline_s)
            stop_processes(processes)
    finally:
        stop_processes(processes)
        fake.stop()

    answers = [e for e in fake.batch_log if e.get("op") == "answer"]
    succeeded = Counter(e["custom_id"] for e in answers if e.get("outcome") == "succeeded")
    creates = [e for e in fake.batch_log if e.get("op") == "create" and e.get("status") == 200]
    outcomes = Counter(
        str(r.get("status")) if r.get("status") != "error" else r["error"]["code"] for r in results.values()
    )
    bulk_verified = sum(outcomes[s] for s in VERIFIED)
    realtime_verified = sum(1 for r in realtime if r.get("status") in VERIFIED)
    bulk_cost = _per_thousand(spent_of(results.values()), bulk_verified)
    realtime_cost = _per_thousand(spent_of(realtime), realtime_verified)
    return {
        "jobs": jobs,
        "workers": workers,
        "concurrency": concurrency,
        "batch_delay_s": batch_delay_s,
        "error_rate": error_rate,
        "expire_rate": expire_rate,
        "results": dict(outcomes),
        "lost": jobs - len(results),
        "verified": bulk_verified,
        "paid_twice": sum(1 for n in succeeded.values() if n > 1),
        "provider_requests_answered": dict(Counter(e.get("outcome") for e in answers)),
        "provider_batches": dict(Counter(e.get("provider") for e in creates)),
        "batch_status": {k: v for k, v in status.items() if k != "provider_batches"},
        "submit_s": round(submitted_s, 1),
        "wall_s": round(wall_s, 1),
        "redis_used_memory_mb": {
            "before": round(memory_before / 2**20, 1),
            "peak": round(max(memory.peak, memory_after) / 2**20, 1),
            "after": round(memory_after / 2**20, 1),
        },
        "cost_per_1000_verified_usd": {"bulk": bulk_cost, "realtime": realtime_cost},
        "bulk_to_realtime": round(bulk_cost / realtime_cost, 3) if bulk_cost and realtime_cost else None,
    }


def passed(figures: dict[str, Any]) -> bool:
    ratio = figures.get("bulk_to_realtime")
    return figures["lost"] == 0 and figures["paid_twice"] == 0 and ratio is not None and ratio <= 0.5


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vetq.eval.bench_bulk", description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--realtime-jobs", type=int, default=200, help="realtime jobs for the price comparison")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--batch-delay", type=float, default=5.0, help="seconds a provider batch takes")
    parser.add_argument("--error-rate", type=float, default=0.01)
    parser.add_argument("--expire-rate", type=float, default=0.01)
    parser.add_argument("--max-batch-requests", type=int, default=5000, help="VETQ_BULK_MAX_BATCH_REQUESTS")
    parser.add_argument("--deadline-s", type=float, default=3600.0)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    figures = run(
        jobs=args.jobs,
        realtime_jobs=args.realtime_jobs,
        workers=args.workers,
        concurrency=args.concurrency,
        batch_delay_s=args.batch_delay,
        error_rate=args.error_rate,
        expire_rate=args.expire_rate,
        max_batch_requests=args.max_batch_requests,
        deadline_s=args.deadline_s,
        seed=args.seed,
    )
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        for key, value in figures.items():
            print(f"{key:>28}: {value}")
    return 0 if passed(figures) else 1


if __name__ == "__main__":
    sys.exit(main())
