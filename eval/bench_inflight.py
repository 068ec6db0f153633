"""Hundreds of model calls in flight: a fan-out of extraction jobs on thread workers.

    python -m vetq.eval.bench_inflight --jobs 1000 --workers 2 --concurrency 250 --latency-ms 2000 --json

Starts the embedded Redis, the fake provider answering every model call after
`--latency-ms` (its fixed latency; its rate limits far above the load), and `--workers` worker processes, each
`vetq worker --pool threads --concurrency N`. The Generator is `openai:gpt-4.1-mini`
and the Critic `anthropic:claude-haiku-4-5`, both through the real SDKs over HTTP on
127.0.0.1. The response cache is off (`VETQ_CACHE_TTL_S=0`), so a job run twice pays
its calls twice and shows as extra calls. N jobs are submitted as one batch, each
document distinct, after `--warmup` jobs that are not counted (a worker imports its
SDKs and builds its clients at its first calls).

The account:
- `answered_calls`: model calls the fake provider answered (status 200, its client
  still there); `expected_calls`: 2 per job (a Generator and a Critic call);
  `extra_calls` the difference (target 0), `jobs_paid_twice` the jobs with a call
  answered more than once;
- `mean_in_flight`: the fake provider's count of calls received and not yet answered,
  sampled every `--sample-ms` from the first call's arrival to the last answer;
  `max_in_flight` the most at once (its exact counter); `in_flight_by_second` the
  mean of each second, the shape of the run; `steady_in_flight`: the mean over the
  `steady_s` seconds from the first job's end to the last job's start (its
  Generator call's arrival), when a slot that frees finds a job waiting (the slots
  fill before, and drain after: `mean_in_flight` counts both); None when that span
  is shorter than two jobs of a slot (`steady_window`);
- `results`: jobs by status (and error code), `lost` jobs without a result;
- `wall_s` from the first submit to the last result, `calls_per_s` over it;
- `cpu_s`: CPU seconds the workers, this process (fake provider and client) and
  Redis used meanwhile, and `worker_cpu_ms_per_job`: with the calls' latency it
  bounds what one host keeps in flight (in flight = calls per second x latency,
  and calls per second are at most the CPUs over the CPU a call costs);
  `host_load_1m` says how busy the host was (it is shared in CI);
- `worker_events`: how often the workers logged what would explain extra calls
  (`redis_unavailable_retrying_job`, `gate_state_unavailable`,
  `redis_pool_exhausted`, a failed ack; `job_retry` is logged at INFO), from their
  log (`--log-level`, WARNING by default).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from vetq.eval.bench_bulk import CRITIC, GENERATOR
from vetq.eval.bench_bulk import _answer as answer
from vetq.eval.bench_queue import DOCUMENT

FAKE_RPM = 10_000_000
FAKE_TPM = 10_000_000_000
# Worker log events that mean a job (or a call) ran again, or could have.
WATCHED_EVENTS = (
    "redis_unavailable_retrying_job",
    "gate_state_unavailable",
    "redis_pool_exhausted",
    "job_retry",
    "cache_error",
)
WATCHED_TEXT = {"failed_ack": "Failed to acknowledge", "max_connections_error": "MaxConnectionsError"}


class InFlightSampler:
    """Samples the fake provider's in-flight count with its time."""

    def __init__(self, fake: Any, every_s: float) -> None:
        self.fake = fake
        self.every_s = every_s
        self.samples: list[tuple[float, int]] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, name="in-flight-sampler", daemon=True)

    def _run(self) -> None:
        while not self.stop.is_set():
            self.samples.append((time.time(), self.fake.in_flight))
            self.stop.wait(self.every_s)

    def __enter__(self) -> InFlightSampler:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(timeout=5)

    def by_second(self, start: float, end: float) -> list[int]:
        """The mean count in each second from `start` to `end`: the shape of the run."""
        buckets: dict[int, list[int]] = {}
        for moment, n in self.samples:
            if start <= moment <= end:
                buckets.setdefault(int(moment - start), []).append(n)
        return [round(sum(v) / len(v)) for _, v in sorted(buckets.items())]

    def mean(self, start: float, end: float) -> float | None:
        inside = [n for moment, n in self.samples if start <= moment <= end]
        return round(sum(inside) / len(inside), 1) if inside else None


def steady_window(calls: list[dict[str, Any]], latency_s: float) -> tuple[float, float] | None:
    """From the first job's end (its Critic call's arrival plus the latency) to the last
    job's start (the last Generator call's arrival): the span in which a slot that
    frees finds a job waiting (the slots fill before it and drain after it). None when
    it is shorter than two jobs of a slot (four calls' latency): too short to be a
    steady state, a refill's peak more than a level."""
    from vetq.eval.fake_provider import ANTHROPIC_PATH, OPENAI_PATH

    critic = [e["time"] for e in calls if e.get("path") == ANTHROPIC_PATH]
    generator = [e["time"] for e in calls if e.get("path") == OPENAI_PATH]
    if not critic or not generator:
        return None
    start, end = min(critic) + latency_s, max(generator)
    return (start, end) if end - start >= 4 * latency_s else None


@contextlib.contextmanager
def stderr_to(path: Path) -> Iterator[None]:
    """Point this process's fd 2 at `path` while child processes are spawned, so the
    workers (which inherit it, stdout included) log there and not on the terminal."""
    sys.stderr.flush()
    saved = os.dup(2)
    with path.open("ab") as log:
        os.dup2(log.fileno(), 2)
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)


def cpu_s(pid: int | None) -> float | None:
    """CPU seconds (user + system) a process has used so far (Linux; else None)."""
    if pid is None:
        return None
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class CpuMeter:
    """CPU seconds used by the workers, this process (the fake provider and the
    client) and Redis between start() and stop()."""

    def __init__(self, pids: dict[str, list[int | None]]) -> None:
        self.pids = pids
        self.before: dict[str, list[float | None]] = {}
        self.used: dict[str, float | None] = {}

    def _now(self) -> dict[str, list[float | None]]:
        return {name: [cpu_s(pid) for pid in pids] for name, pids in self.pids.items()}

    def start(self) -> None:
        self.before = self._now()

    def stop(self) -> None:
        for name, after in self._now().items():
            spans = [(a - b) for a, b in zip(after, self.before[name], strict=True) if a is not None and b is not None]
            self.used[name] = round(sum(spans), 1) if spans else None


def worker_events(path: Path) -> dict[str, int]:
    counts: Counter[str] = Counter()
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return {}
    for line in lines:
        for name, text in WATCHED_TEXT.items():
            if text in line:
                counts[name] += 1
        try:
            event = json.loads(line).get("event")
        except (ValueError, AttributeError):
            continue
        if event in WATCHED_EVENTS:
            counts[event] += 1
    return {name: counts[name] for name in (*WATCHED_EVENTS, *WATCHED_TEXT)}


def run(
    *,
    jobs: int,
    workers: int,
    concurrency: int,
    latency_ms: float,
    sample_ms: float,
    deadline_s: float,
    warmup: int = 0,
    log_level: str = "WARNING",
    worker_log: Path | None = None,
) -> dict[str, Any]:
    from vetq.api_client.admin import Admin
    from vetq.api_client.client import Client
    from vetq.core.results import error_of
    from vetq.core.settings import load_settings
    from vetq.eval.fake_provider import FakeProvider
    from vetq.workers.embedded_redis import EmbeddedRedis
    from vetq.workers.runner import spawn_worker_process, stop_processes

    run_id = uuid.uuid4().hex[:8]
    home = Path(tempfile.mkdtemp(prefix="vetq-bench-inflight-"))
    log_path = worker_log or home / "workers.log"
    # Limits far above the load: the fake otherwise reports a nominal 10M tokens a
    # minute in its rate-limit headers, which this fan-out crosses (a Critic call
    # reserves 8k), and vetq's limiter rightly waits that out. This run measures
    # in-flight calls; bench_ratelimit measures limits.
    fake = FakeProvider(rpm=FAKE_RPM, tpm=FAKE_TPM, latency_ms=latency_ms).start()
    answered_by_job: Counter[tuple[str, str]] = Counter()
    marker = re.compile(rf"inflight-{run_id}-(\d+)")

    def counting(path: str, body: dict[str, Any]) -> str:
        found = marker.search(json.dumps(body))
        if found:
            answered_by_job[(found.group(1), str(body.get("model")))] += 1
        return answer(path, body)

    fake.set_responder(counting)
    env = {
        "VETQ_GENERATOR": GENERATOR,
        "VETQ_CRITIC": CRITIC,
        "OPENAI_BASE_URL": fake.base_url_openai,
        "OPENAI_API_KEY": "bench-key-not-real",
        "ANTHROPIC_BASE_URL": fake.base_url_anthropic,
        "ANTHROPIC_API_KEY": "bench-key-not-real",
        "VETQ_HOME": str(home / "worker-home"),
        "VETQ_LOG_LEVEL": log_level,
        "VETQ_CACHE_TTL_S": "0",  # as the measurement of issue 16: a job run twice pays twice
    }
    processes = []
    results: list[dict[str, Any]] = []
    try:
        with EmbeddedRedis(home / "redis-home", role="bench") as server:
            with stderr_to(log_path):
                for _ in range(workers):  # each kept as it starts: a failed start stops the others
                    processes.append(
                        spawn_worker_process(
                            server.live_url,
                            queues=["extract"],
                            concurrency=concurrency,
                            pool="threads",
                            extra_env=env,
                            die_with_parent=True,
                        )
                    )
            settings = load_settings(home=home / "client-home", log_level="WARNING")
            with Client(server.live_url, settings=settings) as client:
                ready_by = time.monotonic() + 120
                while len(Admin.of(client).workers()) < workers:
                    if time.monotonic() > ready_by:
                        raise SystemExit("workers did not start")
                    time.sleep(0.2)
                # Warm up: each worker imports its SDKs and builds its clients at its
                # first calls, seconds on a busy host; not what is measured.
                if warmup:
                    client.submit_batch(
                        {"kind": "extract", "text": f"{DOCUMENT}(document warmup-{run_id}-{i})"} for i in range(warmup)
                    ).results(timeout=deadline_s)
                    fake.reset()
                documents = (
                    {"kind": "extract", "text": f"{DOCUMENT}(document inflight-{run_id}-{i})"} for i in range(jobs)
                )
                cpu = CpuMeter(
                    {
                        "workers": [p.pid for p in processes],
                        "fake_provider_and_client": [os.getpid()],
                        "redis": [server.process.pid if server.process is not None else None],
                    }
                )
                cpu.start()
                with InFlightSampler(fake, sample_ms / 1000.0) as sampler:
                    started = time.perf_counter()
                    batch = client.submit_batch(documents)
                    submit_s = time.perf_counter() - started
                    try:
                        results = batch.results(timeout=deadline_s)
                    except Exception as exc:  # noqa: BLE001 - the account says what is missing
                        print(f"bench_inflight: stopped waiting: {type(exc).__name__}: {exc}", file=sys.stderr)
                        results = []
                    wall_s = time.perf_counter() - started
                cpu.stop()
            stop_processes(processes)
    finally:
        stop_processes(processes)
        fake.stop()

    calls = [e for e in fake.log if e.get("path") in ("/v1/chat/completions", "/v1/messages")]
    answered = [e for e in calls if e.get("outcome") == "ok" and not e.get("client_closed")]
    first = min((e["time"] for e in calls), default=0.0)
    last = max((e["time"] for e in answered), default=0.0) + latency_ms / 1000.0
    steady = steady_window(calls, latency_ms / 1000.0)
    statuses = Counter((error_of(r) or (str(r.get("status")),))[0] for r in results if isinstance(r, dict))
    expected = 2 * jobs
    worker_cpu = cpu.used.get("workers")
    return {
        "jobs": jobs,
        "workers": workers,
        "concurrency": concurrency,
        "slots": workers * concurrency,
        "latency_ms": latency_ms,
        "warmup_jobs": warmup,
        "answered_calls": len(answered),
        "expected_calls": expected,
        "extra_calls": len(answered) - expected,
        "calls_not_answered": len(calls) - len(answered),
        "jobs_paid_twice": len({job for (job, _), n in answered_by_job.items() if n > 1}),
        "mean_in_flight": sampler.mean(first, last),
        "steady_in_flight": sampler.mean(*steady) if steady is not None else None,
        "steady_s": round(steady[1] - steady[0], 1) if steady is not None else 0.0,
        "max_in_flight": fake.max_in_flight,
        "in_flight_by_second": sampler.by_second(first, last),
        "results": dict(statuses),
        "lost": jobs - sum(statuses.values()),
        "submit_s": round(submit_s, 1),
        "wall_s": round(wall_s, 1),
        "calls_per_s": round(len(answered) / wall_s, 1) if wall_s else 0.0,
        "cpu_s": cpu.used,
        "worker_cpu_ms_per_job": round(worker_cpu * 1000 / jobs, 1) if worker_cpu is not None else None,
        "host_load_1m": round(os.getloadavg()[0], 1),
        "host_cpus": os.cpu_count(),
        "worker_events": worker_events(log_path),
        "worker_log": str(log_path),
    }


def passed(figures: dict[str, Any]) -> bool:
    return figures["extra_calls"] == 0 and figures["lost"] == 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vetq.eval.bench_inflight", description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=2, help="worker processes")
    parser.add_argument("--concurrency", type=int, default=250, help="threads per worker process")
    parser.add_argument("--latency-ms", type=float, default=2000, help="the fake provider's latency of every call")
    parser.add_argument("--sample-ms", type=float, default=20, help="how often the in-flight count is sampled")
    parser.add_argument("--deadline-s", type=float, default=1800)
    parser.add_argument("--warmup", type=int, default=50, help="jobs run (and not counted) before the measured ones")
    parser.add_argument("--log-level", default="WARNING", help="the workers' VETQ_LOG_LEVEL")
    parser.add_argument("--worker-log", type=Path, default=None, help="where the workers log (default: a temp file)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if min(args.jobs, args.workers, args.concurrency) < 1 or args.latency_ms < 0 or args.sample_ms <= 0:
        parser.error("--jobs, --workers, --concurrency and --sample-ms must be positive, --latency-ms not negative")
    figures = run(
        jobs=args.jobs,
        workers=args.workers,
        concurrency=args.concurrency,
        latency_ms=args.latency_ms,
        sample_ms=args.sample_ms,
        deadline_s=args.deadline_s,
        warmup=args.warmup,
        log_level=args.log_level,
        worker_log=args.worker_log,
    )
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        for key, value in figures.items():
            print(f"{key:>20}: {value}")
    return 0 if passed(figures) else 1


if __name__ == "__main__":
    sys.exit(main())
