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

    python -m vetq.eval.bench_ratelimit --tenants --flood 2000 --quiet 10 --rpm 600 --window-s 6 --json

runs two tenants through the same limit (issue 18): `flood` submits `--flood` jobs at
once, `quiet` submits `--quiet` jobs `--quiet-after-s` later, while the flood's backlog
is still queued. It reports the quiet tenant's wait per job (submitted to result: p50,
p95, max), the share of the flood's calls answered after the quiet tenant's last call,
and the utilization of the limit: over the whole run (as above), past the first window
(`steady_utilization`: accepted requests over the limit's rate for that long), and in
the whole windows from the quiet tenant's submission that cover its last call; then
the same load sent without
tenants, where the queue is first come, first served, as the baseline.

    python -m vetq.eval.bench_ratelimit --acquire-cost --entries 10000 --calls 500

measures one limiter call instead, with a tokens-per-minute limit and a window already
holding `--entries` entries: Redis's time per admitted acquire, per refused acquire
(the oldest entry must leave first) and per settle, from INFO commandstats (the time
the script ran inside Redis, no network), and the client's round trip.
"""

from __future__ import annotations

import argparse
import json
import math
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


def worker_env(fake: Any, limits: str, window_s: float, **extra: str) -> dict[str, str]:
    """A benchmark worker's settings: both roles on the fake provider's one model under
    `limits`, no response cache, waits long enough to ride out a window."""
    return {
        "VETQ_GENERATOR": f"openai:{MODEL}",
        "VETQ_CRITIC": f"openai:{MODEL}",
        "OPENAI_BASE_URL": fake.base_url_openai,
        "OPENAI_API_KEY": "bench-key-not-real",
        "VETQ_LIMITS": limits,
        "VETQ_LIMIT_WINDOW_S": str(window_s),
        "VETQ_CACHE_TTL_S": "0",
        "VETQ_MAX_SLEEP_S": str(max(window_s, 10.0)),
        "VETQ_MAX_ATTEMPTS": "50",
        "VETQ_LOG_LEVEL": "WARNING",
        **extra,
    }


def spawn_workers(redis_url: str, workers: int, concurrency: int, env: dict[str, str]) -> list[Any]:
    from vetq.workers.runner import spawn_worker_process

    return [
        spawn_worker_process(redis_url, queues=["extract"], concurrency=concurrency, pool="threads", extra_env=env)
        for _ in range(workers)
    ]


def wait_for_workers(client: Any, workers: int, timeout_s: float = 60.0) -> None:
    """Until `workers` workers answer (or the timeout: the run then measures what came up)."""
    from vetq.api_client.admin import Admin

    deadline = time.monotonic() + timeout_s
    while len(Admin.of(client).workers()) < workers and time.monotonic() < deadline:
        time.sleep(0.2)


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
    from vetq.api_client.client import Client
    from vetq.core.settings import load_settings
    from vetq.eval.fake_provider import FakeProvider
    from vetq.workers.embedded_redis import EmbeddedRedis
    from vetq.workers.runner import stop_processes

    home = Path(tempfile.mkdtemp(prefix="vetq-bench-rl-"))
    limits = f"openai:{MODEL}={rpm}rpm" + (f",{tpm}tpm" if tpm else "")
    with FakeProvider(rpm=rpm, tpm=tpm, latency_ms=latency_ms, window_s=window_s) as fake, EmbeddedRedis(home) as redis:
        fake.set_responder(answer)
        env = worker_env(fake, limits, window_s, VETQ_FLEET_LIMITER="on" if fleet_limiter else "off")
        processes = spawn_workers(redis.live_url, workers, concurrency, env)
        try:
            settings = load_settings(home=home, log_level="WARNING")
            with Client(redis.url, settings=settings) as client:
                wait_for_workers(client, workers)
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


TENANT_MARK = "(for tenant {tenant}, document {index})"
FLOOD, QUIET = "flood", "quiet"


def _percentile(values: list[float], share: float) -> float:
    """The nearest-rank percentile (`share` in 0-1) of `values`."""
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered), math.ceil(share * len(ordered))) - 1)]


def _utilization(times: list[float], rpm: int, window_s: float) -> float:
    """Requests accepted over the most a sliding window of `rpm` lets through between
    the first and the last of them."""
    if not times:
        return 0.0
    allowed = rpm * ((max(times) - min(times)) / window_s + 1)
    return round(len(times) / allowed, 3)


def _windows(seconds: float, window_s: float) -> int:
    """Whole windows that cover `seconds` (at least one)."""
    return max(1, math.ceil(seconds / window_s))


def _rate_share(times: list[float], start: float, end: float, rpm: int, window_s: float) -> float | None:
    """The requests accepted in (start, end] over the limit's rate for that long: how
    much of the limit was used in a stretch (None when the stretch is empty)."""
    if end <= start:
        return None
    accepted = sum(1 for t in times if start < t <= end)
    return round(accepted / (rpm / window_s * (end - start)), 3)


def run_tenants(
    *,
    tenants: bool,
    flood: int,
    quiet: int,
    quiet_after_s: float,
    workers: int,
    concurrency: int,
    rpm: int,
    latency_ms: float,
    window_s: float,
    timeout_s: float,
) -> dict[str, Any]:
    """One run of the two tenants' load (`tenants`: with the tenant option; else the
    same jobs without it, the first-come-first-served baseline)."""
    import threading

    from vetq.api_client.client import Client
    from vetq.core.settings import load_settings
    from vetq.eval.fake_provider import FakeProvider
    from vetq.workers.embedded_redis import EmbeddedRedis
    from vetq.workers.runner import stop_processes

    calls: list[tuple[float, str]] = []  # (arrival, tenant) of each answered model call
    calls_lock = threading.Lock()

    def tenant_answer(path: str, body: dict[str, Any]) -> str:
        text = json.dumps(body)
        with calls_lock:
            calls.append((time.time(), QUIET if f"tenant {QUIET}," in text else FLOOD))
        return answer(path, body)

    home = Path(tempfile.mkdtemp(prefix="vetq-bench-tenants-"))
    with (
        FakeProvider(rpm=rpm, latency_ms=latency_ms, window_s=window_s) as fake,
        EmbeddedRedis(home) as redis,
    ):
        fake.set_responder(tenant_answer)
        env = worker_env(fake, f"openai:{MODEL}={rpm}rpm", window_s)
        processes = spawn_workers(redis.live_url, workers, concurrency, env)
        done: dict[str, list[float]] = {FLOOD: [], QUIET: []}
        submitted: dict[str, float] = {}
        try:
            settings = load_settings(home=home, log_level="WARNING")
            with Client(redis.url, settings=settings) as client:
                wait_for_workers(client, workers)

                def submit(tenant: str, count: int) -> Any:
                    requests = (
                        {"kind": "extract", "text": DOCUMENT + TENANT_MARK.format(tenant=tenant, index=i)}
                        for i in range(count)
                    )
                    batch = client.submit_batch(requests, tenant=tenant if tenants else None)
                    submitted[tenant] = time.time()
                    return batch

                def collect(tenant: str, batch: Any) -> None:
                    for _ in batch.as_completed(timeout=timeout_s):
                        done[tenant].append(time.time())

                flood_batch = submit(FLOOD, flood)
                collector = threading.Thread(target=collect, args=(FLOOD, flood_batch), daemon=True)
                collector.start()
                time.sleep(quiet_after_s)
                collect(QUIET, submit(QUIET, quiet))
                collector.join(timeout_s)
        finally:
            stop_processes(processes)
        refused = sum(1 for entry in fake.log if entry["outcome"] == "429")
    waits = [t - submitted[QUIET] for t in done[QUIET]]
    answered = sorted(calls)
    quiet_calls = [t for t, tenant in answered if tenant == QUIET]
    last_quiet = max(quiet_calls) if quiet_calls else float("inf")
    flood_calls = [t for t, tenant in answered if tenant == FLOOD]
    times = [t for t, _ in answered]
    return {
        "quiet_wait_s": {
            "p50": round(_percentile(waits, 0.5), 2) if waits else None,
            "p95": round(_percentile(waits, 0.95), 2) if waits else None,
            "max": round(max(waits), 2) if waits else None,
        },
        "quiet_jobs_completed": len(done[QUIET]),
        "flood_jobs_completed": len(done[FLOOD]),
        "flood_calls_after_quiet_finished": round(
            sum(1 for t in flood_calls if t > last_quiet) / max(1, len(flood_calls)), 3
        ),
        "utilization": _utilization(times, rpm, window_s),
        # past the first window (whose burst the whole-run figure allows for), and in the
        # whole windows from the quiet tenant's submission that cover its last call (never
        # above 1: no window holds more than the limit)
        "steady_utilization": _rate_share(times, min(times) + window_s, max(times), rpm, window_s) if times else None,
        "utilization_while_quiet_waits": _rate_share(
            times,
            submitted[QUIET],
            submitted[QUIET] + window_s * _windows(last_quiet - submitted[QUIET], window_s),
            rpm,
            window_s,
        )
        if quiet_calls
        else None,
        "rate_limited": refused,
        "busy_s": round(max(times) - min(times), 2) if times else 0.0,
        "model_calls": {"flood": len(flood_calls), "quiet": len(quiet_calls)},
    }


def _script_usec(client: Any) -> tuple[int, int]:
    """Calls and microseconds of the scripts Redis ran so far (EVALSHA, EVAL)."""
    stats = client.info("commandstats")
    calls = usec = 0
    for name in ("cmdstat_evalsha", "cmdstat_eval"):
        calls += int(stats.get(name, {}).get("calls", 0))
        usec += int(stats.get(name, {}).get("usec", 0))
    return calls, usec


def run_acquire_cost(*, entries: int, calls: int) -> dict[str, Any]:
    """One limiter call's cost with `entries` entries in the window (tpm limited)."""
    import redis

    from vetq.core.llm.limits import Limit
    from vetq.workers.embedded_redis import EmbeddedRedis
    from vetq.workers.rate_limiter import RedisRateLimiter

    model, est, window_s = "bench:acquire-cost", 10, 3600.0  # a window the run never outlasts
    home = Path(tempfile.mkdtemp(prefix="vetq-bench-acquire-"))
    with EmbeddedRedis(home) as server:
        client = redis.Redis.from_url(server.live_url)
        try:
            roomy = RedisRateLimiter(client, {model: Limit(tpm=10**12)}, window_s=window_s)
            for _ in range(entries):
                roomy.acquire(model, est)

            def phase(step: Any) -> dict[str, float]:
                calls_before, usec_before = _script_usec(client)
                started = time.perf_counter()
                for i in range(calls):
                    step(i)
                elapsed = time.perf_counter() - started
                ran, usec = (a - b for a, b in zip(_script_usec(client), (calls_before, usec_before), strict=True))
                return {
                    "redis_us_per_call": round(usec / max(1, ran), 1),
                    "round_trip_us_per_call": round(elapsed / calls * 1e6, 1),
                }

            admitted: list[str] = []

            def admit(i: int) -> None:
                assert roomy.acquire(model, est, entry_id=f"bench-{i}") == 0.0
                admitted.append(f"bench-{i}")

            figures: dict[str, Any] = {"entries": entries, "calls": calls, "acquire_admitted": phase(admit)}
            figures["settle"] = phase(lambda i: roomy.settle(model, admitted[i], est - 1))
            # A limit the window already fills: every acquire is refused and told when the
            # oldest entry will have left (the tokens to free are one entry's).
            in_window = entries * est + calls * (est - 1)
            full = RedisRateLimiter(client, {model: Limit(tpm=in_window)}, window_s=window_s)
            figures["acquire_refused"] = phase(lambda i: full.acquire(model, est))
            figures["window_entries_after"] = roomy.in_window(model)
            figures["running_sum_recounts"] = roomy.window_sum(model)["recounts"]
        finally:
            client.close()
    return figures


def _main_tenants(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    if min(args.flood, args.quiet) < 1 or args.quiet_after_s < 0:
        parser.error("--flood and --quiet must be positive, --quiet-after-s 0 or more")
    load: dict[str, Any] = dict(
        flood=args.flood,
        quiet=args.quiet,
        quiet_after_s=args.quiet_after_s,
        workers=args.workers,
        concurrency=args.concurrency,
        rpm=args.rpm,
        latency_ms=args.latency_ms,
        window_s=args.window_s,
        timeout_s=args.timeout_s,
    )
    figures = run_tenants(tenants=True, **load)
    if not args.no_baseline:
        figures["baseline_without_tenants"] = run_tenants(tenants=False, **load)
    figures["config"] = {k: v for k, v in load.items() if k != "timeout_s"}
    print(json.dumps(figures) if args.json else json.dumps(figures, indent=2))
    return 0


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
    parser.add_argument("--acquire-cost", action="store_true", help="measure one limiter call on a full window")
    parser.add_argument("--entries", type=int, default=10_000, help="entries in the window (--acquire-cost)")
    parser.add_argument("--calls", type=int, default=500, help="calls measured per kind (--acquire-cost)")
    parser.add_argument("--tenants", action="store_true", help="two tenants, one flooding, through one limit")
    parser.add_argument("--flood", type=int, default=2000, help="jobs the flooding tenant submits (--tenants)")
    parser.add_argument("--quiet", type=int, default=10, help="jobs the quiet tenant submits (--tenants)")
    parser.add_argument("--quiet-after-s", type=float, default=5.0, help="when the quiet tenant submits (--tenants)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    from vetq.core.logging import configure_logging

    configure_logging("WARNING")
    if args.acquire_cost:
        if args.entries < 0 or args.calls < 1:
            parser.error("--entries must be 0 or more and --calls positive")
        cost = run_acquire_cost(entries=args.entries, calls=args.calls)
        print(json.dumps(cost) if args.json else json.dumps(cost, indent=2))
        return 0
    if min(args.jobs, args.workers, args.concurrency, args.rpm) < 1 or args.window_s <= 0:
        parser.error("--jobs, --workers, --concurrency, --rpm and --window-s must be positive")
    if args.tenants:
        return _main_tenants(args, parser)
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
