"""Chaos run: jobs through worker kills, a Redis restart and provider fault bursts,
then an account of every job.

    python -m vetq.eval.chaos --jobs 60 --json

Starts the embedded Redis (append-only file on), the fake provider (through the real
openai SDK, `--latency-ms` per answer) and `--workers` worker processes (prefork).
A producer thread submits N extraction jobs at `--rate` per second. Meanwhile:
every `--kill-every-s` seconds a random worker's whole process tree (the node and its
pool children) gets SIGKILL and a replacement starts (at most `--kills`); Redis is
restarted `--redis-restarts` times (same port and data); `--fault-bursts` bursts of
provider 5xx and 429 answers are queued. The run stops when every job has a final
result or at `--deadline-s`, and stops every process it started.

The account:
- completed: a final result with status ok / needs_review; failed: a final result
  that is an error envelope (counted per error code) or a Celery FAILURE; lost: no
  final result by the deadline.
- duplicate_results: job ids for which two *different* final results were written.
  Every result write is observed: a thread subscribes to the result backend's
  pub/sub channels (Celery PUBLISHes every state it stores) and the backend key is
  read again at the end; results are compared on status, data, error code,
  confidence, flags and trace id (not on usage). `redelivered_results` counts job ids
  whose (identical) final result was written more than once. Writes made while the
  subscription is down (the Redis restart) are seen only through the final read.
- extra_model_calls: answered (200) model calls beyond one per stage per job: every
  answered call is attributed to its job by the document's unique marker and to its
  stage by the system prompt. `fault_retries`: calls the provider answered with an
  injected 5xx or 429 (each forces one retry of that call). `interrupted_jobs`: jobs
  that were STARTED on a process tree at the moment it was killed (the STARTED state
  carries the pool process's pid). Target: lost 0, duplicate_results 0,
  extra_model_calls <= interrupted_jobs.

Redelivery of a killed worker's job waits for the visibility timeout (kombu restores
unacknowledged messages of dead consumers only then), hence the short
VETQ_TASK_TIME_LIMIT_S / VETQ_VISIBILITY_TIMEOUT_S of the run.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from vetq.core.queue import priority_keys
from vetq.core.redis_keys import CELERY_RESULT_PREFIX, EXTRACT_QUEUE, KOMBU_UNACKED_KEY
from vetq.core.results import error_of
from vetq.eval.bench_queue import DATA, DOCUMENT

MODEL = "chaos-model"
FINAL_STATES = ("SUCCESS", "FAILURE")
COMPARED = ("status", "data", "error", "overall_confidence", "flagged_fields", "trace_id")
MARKER = re.compile(r"chaos-([0-9a-f]{8})-(\d+)")


def _descendants(pid: int) -> list[int]:
    """Every process below `pid` (Linux /proc)."""
    children: dict[int, list[int]] = defaultdict(list)
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read().decode(errors="replace")
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children[ppid].append(int(entry))
    found, stack = [], [pid]
    while stack:
        for child in children.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found


def kill_tree(process: subprocess.Popen) -> list[int]:
    """SIGKILL a worker node and its pool children; returns the pids killed."""
    pids = [process.pid, *_descendants(process.pid)]
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=10)
    return pids


def _as_bytes(value: bytes | str) -> bytes:
    return value if isinstance(value, bytes) else value.encode()


def _comparable(meta: dict[str, Any]) -> str:
    result = meta.get("result")
    if meta.get("status") == "SUCCESS" and isinstance(result, dict):
        return json.dumps({k: result.get(k) for k in COMPARED}, sort_keys=True, default=str)
    return json.dumps(
        {"state": meta.get("status"), "exc": (result or {}).get("exc_type") if isinstance(result, dict) else None},
        sort_keys=True,
    )


class ResultWatcher:
    """Records every final result write, through the backend's pub/sub channels."""

    def __init__(self, url: str, prefix: str) -> None:
        self.url = url
        self.pattern = f"{CELERY_RESULT_PREFIX}*"
        self.writes: dict[str, list[str]] = defaultdict(list)
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.reconnects = 0
        self.thread = threading.Thread(target=self._run, name="chaos-results", daemon=True)

    def start(self) -> ResultWatcher:
        self.thread.start()
        return self

    def add(self, job_id: str, meta: dict[str, Any]) -> None:
        if meta.get("status") in FINAL_STATES:
            with self.lock:
                self.writes[job_id].append(_comparable(meta))

    def _run(self) -> None:
        import redis

        while not self.stop.is_set():
            try:
                client = redis.Redis.from_url(self.url, socket_connect_timeout=1, socket_timeout=1)
                pubsub = client.pubsub(ignore_subscribe_messages=True)
                pubsub.psubscribe(self.pattern)
                while not self.stop.is_set():
                    message = pubsub.get_message(timeout=0.5)
                    if not message or message.get("type") != "pmessage":
                        continue
                    channel = message["channel"].decode()
                    with contextlib.suppress(ValueError):
                        self.add(channel[len(CELERY_RESULT_PREFIX) :], json.loads(message["data"]))
            except (redis.RedisError, OSError):
                self.reconnects += 1
                self.stop.wait(0.3)

    def close(self) -> None:
        self.stop.set()
        self.thread.join(timeout=5)


class CallLog:
    """Answered model calls per (job marker, stage)."""

    def __init__(self) -> None:
        self.calls: Counter[tuple[str, str]] = Counter()
        self.lock = threading.Lock()

    def responder(self, path: str, body: dict[str, Any]) -> str:
        messages = body.get("messages") or []
        system = next((str(m.get("content", "")) for m in messages if m.get("role") == "system"), "")
        critic = "You are the Critic" in system
        match = MARKER.search(json.dumps(messages))
        with self.lock:
            self.calls[(match.group(0) if match else "?", "critic" if critic else "generator")] += 1
        if critic:
            verdicts = [{"field": f, "confidence": 0.95, "grounded": True, "reason": "stated"} for f in DATA]
            return json.dumps({"verdicts": verdicts, "overall_confidence": 0.93, "summary": "ok"})
        return json.dumps(DATA)


def run_chaos(
    *,
    jobs: int = 60,
    workers: int = 3,
    concurrency: int = 1,
    rate: float = 6.0,
    kill_every_s: float = 4.0,
    kills: int = 4,
    redis_restarts: int = 1,
    fault_bursts: int = 2,
    latency_ms: float = 150.0,
    deadline_s: float = 180.0,
    time_limit_s: int = 20,
    visibility_timeout_s: int = 30,
    seed: int | None = None,
    log_level: str = "WARNING",
) -> dict[str, Any]:
    import redis as redis_lib

    from vetq.api_client.admin import Admin
    from vetq.api_client.client import Client
    from vetq.core.settings import load_settings
    from vetq.eval.fake_provider import FakeProvider
    from vetq.workers.embedded_redis import EmbeddedRedis
    from vetq.workers.runner import spawn_worker_process, stop_processes

    rng = random.Random(seed)
    run_id = uuid.uuid4().hex[:8]
    home = Path(tempfile.mkdtemp(prefix="vetq-chaos-"))
    started = time.monotonic()
    deadline = started + deadline_s
    calls = CallLog()
    processes: list[subprocess.Popen] = []
    kill_log: list[dict[str, Any]] = []
    interrupted: set[str] = set()
    restarts_done = 0
    bursts_done = 0
    job_ids: list[str] = []
    marker_of: dict[str, str] = {}
    last_meta: dict[str, str] = {}
    where_of: dict[str, str] = {}
    submit_errors: list[str] = []
    submitting_done = threading.Event()

    fake = FakeProvider(latency_ms=latency_ms).start()
    server = EmbeddedRedis(home / "redis-home", role="chaos").start()
    watcher = None
    client = None
    try:
        fake.set_responder(calls.responder)
        env = {
            "VETQ_GENERATOR": f"openai:{MODEL}",
            "VETQ_CRITIC": f"openai:{MODEL}",
            "OPENAI_BASE_URL": fake.base_url_openai,
            "OPENAI_API_KEY": "chaos-key-not-real",
            "VETQ_TASK_TIME_LIMIT_S": str(time_limit_s),
            "VETQ_VISIBILITY_TIMEOUT_S": str(visibility_timeout_s),
            "VETQ_HOME": str(home / "worker-home"),
            "VETQ_LOG_LEVEL": log_level,
        }

        def spawn() -> subprocess.Popen:
            return spawn_worker_process(
                server.live_url, queues=["extract"], concurrency=concurrency, pool="prefork", extra_env=env
            )

        processes.extend(spawn() for _ in range(workers))
        settings = load_settings(
            home=home / "client-home",
            log_level=log_level,
            task_time_limit_s=time_limit_s,
            visibility_timeout_s=visibility_timeout_s,
        )
        client = Client(server.live_url, settings=settings)
        ready_by = time.monotonic() + 60
        while len(Admin.of(client).workers()) < workers and time.monotonic() < ready_by:
            time.sleep(0.2)
        watcher = ResultWatcher(server.live_url, CELERY_RESULT_PREFIX).start()
        reader = redis_lib.Redis.from_url(server.live_url, socket_connect_timeout=1, socket_timeout=2)

        def produce() -> None:
            try:
                for i in range(jobs):
                    if time.monotonic() > deadline:
                        break
                    text = f"{DOCUMENT}(document chaos-{run_id}-{i})"
                    try:
                        job_id = client.submit({"kind": "extract", "text": text}).id
                        job_ids.append(job_id)
                        marker_of[job_id] = f"chaos-{run_id}-{i}"
                    except Exception as exc:  # noqa: BLE001 - a submit that fails for good is reported
                        submit_errors.append(f"{type(exc).__name__}: {exc}")
                    time.sleep(1.0 / rate)
            finally:
                submitting_done.set()

        producer = threading.Thread(target=produce, name="chaos-producer", daemon=True)
        producer.start()
        load_s = jobs / rate
        restart_at = [started + (k + 1) * load_s / (redis_restarts + 1) + 1.0 for k in range(redis_restarts)]
        burst_at = [started + k * load_s / max(1, fault_bursts) + 0.5 for k in range(fault_bursts)]
        next_kill = time.monotonic() + kill_every_s

        def metas(ids: list[str]) -> dict[str, dict[str, Any]]:
            if not ids:
                return {}
            values = reader.mget([CELERY_RESULT_PREFIX + i for i in ids])
            return {i: json.loads(v) for i, v in zip(ids, values, strict=True) if v}

        final: dict[str, dict[str, Any]] = {}
        while time.monotonic() < deadline:
            now = time.monotonic()
            if bursts_done < len(burst_at) and now >= burst_at[bursts_done]:
                for _ in range(2):
                    fake.push_fault({"kind": "5xx", "status": 503})
                fake.push_fault({"kind": "429", "retry_after": 1})
                fake.push_fault({"kind": "5xx", "status": 502})
                fake.push_fault({"kind": "429", "retry_after": 1})
                bursts_done += 1
            if restarts_done < len(restart_at) and now >= restart_at[restarts_done]:
                server.restart()
                restarts_done += 1
            if (
                len(kill_log) < kills
                and now >= next_kill
                and (not submitting_done.is_set() or len(final) < len(job_ids))
            ):
                victim = rng.choice([p for p in processes if p.poll() is None] or processes)
                tree = {victim.pid, *_descendants(victim.pid)}
                with contextlib.suppress(redis_lib.RedisError, OSError):
                    pending = [i for i in list(job_ids) if i not in final]
                    for job_id, meta in metas(pending).items():
                        result = meta.get("result")
                        if meta.get("status") == "STARTED" and isinstance(result, dict) and result.get("pid") in tree:
                            interrupted.add(job_id)
                pids = kill_tree(victim)
                processes.remove(victim)
                processes.append(spawn())
                kill_log.append({"at_s": round(now - started, 2), "pids": len(pids)})
                next_kill = now + kill_every_s
            try:
                pending = [i for i in list(job_ids) if i not in final]
                for job_id, meta in metas(pending).items():
                    if meta.get("status") in FINAL_STATES:
                        final[job_id] = meta
            except (redis_lib.RedisError, OSError):
                pass  # Redis is restarting; read again on the next round
            if submitting_done.is_set() and len(final) >= len(job_ids) and restarts_done >= len(restart_at):
                break
            time.sleep(0.25)
        producer.join(timeout=5)
        time.sleep(0.5)  # late duplicate writes still reach the watcher
        # A last read of every key: catches writes made while the subscription was down.
        with contextlib.suppress(redis_lib.RedisError, OSError):
            for job_id, meta in metas(list(job_ids)).items():
                last_meta[job_id] = str(meta.get("status"))
                if meta.get("status") in FINAL_STATES:
                    final.setdefault(job_id, meta)
                    if _comparable(meta) not in watcher.writes.get(job_id, []):
                        watcher.add(job_id, meta)
            # Where a job with no result sits: in its queue, unacknowledged, or nowhere.
            raw_queue = b"".join(
                _as_bytes(item) for key in priority_keys(EXTRACT_QUEUE) for item in reader.lrange(key, 0, -1)
            )
            raw_unacked = b"".join(_as_bytes(item) for item in reader.hvals(KOMBU_UNACKED_KEY))
            for job_id in job_ids:
                if job_id not in final:
                    where_of[job_id] = (
                        "queue"
                        if job_id.encode() in raw_queue
                        else "unacked"
                        if job_id.encode() in raw_unacked
                        else "nowhere"
                    )
    finally:
        if watcher is not None:
            watcher.close()
        if client is not None:
            with contextlib.suppress(Exception):
                client.close()
        stop_processes(processes, timeout=15)
        for process in processes:  # pool children of a node that did not stop cleanly
            for pid in _descendants(process.pid):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
        server.stop()
        fake.stop()

    completed = 0
    failed: Counter[str] = Counter()
    for job_id in job_ids:
        job_meta = final.get(job_id)
        if job_meta is None:
            continue
        result = job_meta.get("result")
        if (
            job_meta["status"] == "SUCCESS"
            and isinstance(result, dict)
            and result.get("status") in ("ok", "needs_review")
        ):
            completed += 1
        elif job_meta["status"] == "SUCCESS" and isinstance(result, dict):
            failed[(error_of(result) or ("UNKNOWN", ""))[0]] += 1
        else:
            failed["INTERNAL_ERROR"] += 1
    lost = [j for j in job_ids if j not in final]
    duplicates = [j for j in job_ids if len(set(watcher.writes.get(j, []))) > 1]
    redelivered = [j for j in job_ids if len(watcher.writes.get(j, [])) > 1 and j not in duplicates]
    mine = {k: v for k, v in calls.calls.items() if k[0].startswith(f"chaos-{run_id}-")}
    extra = sum(n - 1 for n in mine.values() if n > 1)
    log = fake.log
    shutil.rmtree(home, ignore_errors=True)
    return {
        "jobs": jobs,
        "submitted": len(job_ids),
        "submit_errors": len(submit_errors),
        # The first few, so a failed assertion on submit_errors says what went wrong.
        "submit_error_samples": submit_errors[:3],
        "completed": completed,
        "failed": sum(failed.values()),
        "failed_by_code": dict(failed),
        "lost": len(lost),
        "duplicate_results": len(duplicates),
        "redelivered_results": len(redelivered),
        "extra_model_calls": extra,
        "interrupted_jobs": len(interrupted),
        "fault_retries": sum(1 for e in log if e["outcome"] != "ok"),
        "model_calls": len(log),
        "kills": len(kill_log),
        "redis_restarts": restarts_done,
        "fault_bursts": bursts_done,
        "elapsed_s": round(time.monotonic() - started, 1),
        # What became of a lost job: its last state in the backend and its answered calls.
        "lost_detail": [
            {
                "job_id": j,
                "state": last_meta.get(j, "PENDING"),
                "message": where_of.get(j),
                "calls": {
                    stage: calls.calls.get((marker_of.get(j, "?"), stage), 0) for stage in ("generator", "critic")
                },
            }
            for j in lost[:20]
        ],
    }


SUMMED = (
    "submitted",
    "completed",
    "failed",
    "lost",
    "duplicate_results",
    "redelivered_results",
    "extra_model_calls",
    "interrupted_jobs",
    "kills",
    "redis_restarts",
)


def run_passed(figures: dict[str, Any]) -> bool:
    """The targets of one run: nothing lost, no two different results for one job, no
    more extra model calls than jobs a kill interrupted."""
    return (
        figures["lost"] == 0
        and figures["duplicate_results"] == 0
        and figures["extra_model_calls"] <= figures["interrupted_jobs"]
    )


def summarize(runs: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "runs": len(runs),
        "runs_passed": sum(1 for r in runs if run_passed(r)),
        **{f"total_{name}": sum(r[name] for r in runs) for name in SUMMED},
        "worst_lost": max(r["lost"] for r in runs),
        "worst_duplicate_results": max(r["duplicate_results"] for r in runs),
        "worst_extra_over_interrupted": max(r["extra_model_calls"] - r["interrupted_jobs"] for r in runs),
    }


def _run_line(number: int, figures: dict[str, Any]) -> str:
    return (
        f"run {number}: {'pass' if run_passed(figures) else 'FAIL'} submitted={figures['submitted']} "
        f"completed={figures['completed']} failed={figures['failed']} lost={figures['lost']} "
        f"duplicates={figures['duplicate_results']} extra_calls={figures['extra_model_calls']} "
        f"interrupted={figures['interrupted_jobs']} kills={figures['kills']} "
        f"redis_restarts={figures['redis_restarts']} elapsed_s={figures['elapsed_s']}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vetq.eval.chaos", description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=60)
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=1, help="pool processes per worker node")
    parser.add_argument("--rate", type=float, default=6.0, help="jobs submitted per second")
    parser.add_argument("--kill-every-s", type=float, default=4.0)
    parser.add_argument("--kills", type=int, default=4, help="most worker process trees killed")
    parser.add_argument("--redis-restarts", type=int, default=1)
    parser.add_argument("--fault-bursts", type=int, default=2)
    parser.add_argument("--latency-ms", type=float, default=150.0)
    parser.add_argument("--deadline-s", type=float, default=180.0)
    parser.add_argument("--time-limit-s", type=int, default=20, help="VETQ_TASK_TIME_LIMIT_S of the workers")
    parser.add_argument("--visibility-timeout-s", type=int, default=30, help="VETQ_VISIBILITY_TIMEOUT_S")
    parser.add_argument("--seed", type=int, default=None, help="seed of the first run (run k uses seed + k - 1)")
    parser.add_argument("--repeat", type=int, default=1, help="runs in a row: one line per run, then a summary")
    parser.add_argument("--json", action="store_true", help="one JSON object on stdout")
    args = parser.parse_args(argv)
    if min(args.jobs, args.workers, args.concurrency, args.repeat) < 1 or args.rate <= 0 or args.deadline_s <= 0:
        parser.error("--jobs, --workers, --concurrency, --repeat, --rate and --deadline-s must be positive")
    if args.visibility_timeout_s <= args.time_limit_s:
        parser.error("--visibility-timeout-s must be longer than --time-limit-s")
    from vetq.core.logging import configure_logging

    configure_logging("WARNING")
    runs = []
    for number in range(1, args.repeat + 1):
        figures = run_chaos(
            jobs=args.jobs, workers=args.workers, concurrency=args.concurrency, rate=args.rate,
            kill_every_s=args.kill_every_s, kills=args.kills, redis_restarts=args.redis_restarts,
            fault_bursts=args.fault_bursts, latency_ms=args.latency_ms, deadline_s=args.deadline_s,
            time_limit_s=args.time_limit_s, visibility_timeout_s=args.visibility_timeout_s,
            seed=None if args.seed is None else args.seed + number - 1,
        )  # fmt: skip
        runs.append(figures)
        if args.repeat > 1:
            print(json.dumps({"run": number, **figures}) if args.json else _run_line(number, figures), flush=True)
    if args.repeat == 1:
        print(json.dumps(runs[0]) if args.json else json.dumps(runs[0], indent=2))
    else:
        summary = summarize(runs)
        print(json.dumps({"summary": summary}) if args.json else "summary: " + json.dumps(summary))
    return 0 if all(run_passed(r) for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
