"""Fan the benchmark out through the review queue, with a checkpoint.

Every (case, run, mode) is one `vetq.review` job: the payload is the case's input
(nothing else of the case), the mode travels in the `bench_mode` message header
(the worker passes it to run_review as `mode=`), and the run's token budget in the
batch headers (`batch_id`, `batch_token_budget`) that Client.submit_batch uses, so
the workers' budget ledger caps the whole run. A review the cap cuts short
(BUDGET_EXCEEDED, or a result flagged budget_exhausted) is not recorded and stops
the run (exit 3); the tokens it spent before the cut are not counted on resume.

Every finished item is appended as one JSON line to the checkpoint, under a header
line that holds the configuration. A resumed run re-sends only what the checkpoint
does not hold; the remaining token budget is the budget minus what the finished
records spent.
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vetq.core.errors import ErrorCode
from vetq.core.queue import BATCH_BUDGET_HEADER, BATCH_HEADER, BENCH_MODE_HEADER, TASK_REVIEW
from vetq.core.results import error_of, error_result

CHECKPOINT_NAME = "checkpoint.jsonl"
HEADER_VERSION = 1
TRANSIENT_CODES = frozenset({"RATE_LIMITED", "PROVIDER_NETWORK_ERROR", "TIMEOUT"})
# Header keys that describe how the run was executed rather than what it measures:
# they may differ on --resume.
EXECUTION_KEYS = ("kind", "created_at", "execution")
_HTTP_STATUS = re.compile(r"HTTP (\d{3})")


class CheckpointError(Exception):
    """The checkpoint cannot be used as asked (exists without --fresh/--resume, or
    its header differs). The CLI exits 2 with the message."""


# ---------------------------------------------------------------- plan


@dataclass(frozen=True)
class Item:
    case_id: str
    run: int
    mode: str
    order: int  # position of the mode within this (case, run), after the seeded shuffle

    @property
    def key(self) -> str:
        return record_key(self.case_id, self.run, self.mode)


def record_key(case_id: str, run: int, mode: str) -> str:
    return f"{case_id}|{run}|{mode}"


def plan_items(case_ids: Sequence[str], modes: Sequence[str], runs: int, seed: int) -> list[Item]:
    """Every (case, run, mode); the modes of each (case, run) in a seeded random order."""
    items: list[Item] = []
    for case_id in case_ids:
        for run in range(1, runs + 1):
            order = list(modes)
            random.Random(f"{seed}:{case_id}:{run}").shuffle(order)
            items.extend(Item(case_id, run, mode, i) for i, mode in enumerate(order))
    return items


# ---------------------------------------------------------------- checkpoint


def git_commit(cwd: str | Path | None = None) -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            cwd=cwd or Path(__file__).resolve().parent,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return out.stdout.strip() if out.returncode == 0 and out.stdout.strip() else "unknown"


def read_checkpoint(path: Path) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """(header, records). A torn last line (an interrupted write) is dropped."""
    if not path.exists():
        return None, []
    header, records = None, []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError:
                continue
            if number == 0 and row.get("kind") == "header":
                header = row
            elif row.get("kind") == "record":
                records.append(row)
    return header, records


def header_differences(old: Mapping[str, Any], new: Mapping[str, Any], prefix: str = "") -> list[str]:
    """Every field that differs, by dotted name, ignoring EXECUTION_KEYS at the top."""
    out = []
    for key in sorted(set(old) | set(new)):
        if not prefix and key in EXECUTION_KEYS:
            continue
        name = f"{prefix}{key}"
        a, b = old.get(key, "<absent>"), new.get(key, "<absent>")
        if isinstance(a, Mapping) and isinstance(b, Mapping):
            out.extend(header_differences(a, b, prefix=f"{name}."))
        elif a != b:
            out.append(f"{name}: checkpoint has {json.dumps(a)}, this run has {json.dumps(b)}")
    return out


class Checkpoint:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    def open(self, header: dict[str, Any], *, resume: bool, fresh: bool) -> list[dict[str, Any]]:
        """Start (or continue) the checkpoint; returns the finished records reused."""
        old_header, records = read_checkpoint(self.path)
        if self.path.exists() and not fresh:
            if not resume:
                raise CheckpointError(
                    f"a checkpoint already exists at {self.path}: pass --resume to continue it or --fresh to "
                    f"discard it (it is never overwritten otherwise)"
                )
            if old_header is None:
                raise CheckpointError(f"{self.path} has no header line; pass --fresh to start over")
            differences = header_differences(old_header, header)
            if differences:
                raise CheckpointError(
                    "cannot resume: the configuration differs from the checkpoint's header:\n  "
                    + "\n  ".join(differences)
                    + "\n(run with the same settings, or --fresh to start over, or another --label)"
                )
            header = {**header, "created_at": old_header.get("created_at", header.get("created_at"))}
        else:
            records = []
        # Rewrite header + valid records: drops a torn last line before appending.
        latest = {r["key"]: r for r in records}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        with open(tmp, "w", encoding="utf-8") as handle:
            handle.write(json.dumps(header, sort_keys=True) + "\n")
            handle.writelines(json.dumps(record, sort_keys=True) + "\n" for record in latest.values())
        os.replace(tmp, self.path)
        return list(latest.values())

    def append(self, record: dict[str, Any]) -> None:
        with self._lock, open(self.path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record, sort_keys=True) + "\n")
            handle.flush()
            os.fsync(handle.fileno())


# ---------------------------------------------------------------- results


def failure_of(outcome: Mapping[str, Any]) -> tuple[str, str] | None:
    """(code, message) of a failed review, or of a result that holds no verdict; else None."""
    error = error_of(outcome)
    if error is None and not outcome.get("verdict"):
        return "INTERNAL_ERROR", "the result holds no verdict"
    return error


def is_transient(code: str, message: str) -> bool:
    if code in TRANSIENT_CODES:
        return True
    if code == "PROVIDER_HTTP_ERROR":
        match = _HTTP_STATUS.search(message or "")
        return match is not None and int(match.group(1)) >= 500
    return False


def make_record(item: Item, outcome: Mapping[str, Any], *, retries: int, wall_ms: int) -> dict[str, Any]:
    meta_value = outcome.get("meta")
    meta: Mapping[str, Any] = meta_value if isinstance(meta_value, Mapping) else {}
    usage_value = meta.get("usage")
    usage: Mapping[str, Any] = usage_value if isinstance(usage_value, Mapping) else {}
    record: dict[str, Any] = {
        "kind": "record",
        "key": item.key,
        "case_id": item.case_id,
        "run": item.run,
        "mode": item.mode,
        "order": item.order,
        "retries": retries,
        "wall_ms": wall_ms,
        "tokens": int(usage.get("total_tokens") or 0),
        "prompt_tokens": int(usage.get("prompt_tokens") or 0),
        "completion_tokens": int(usage.get("completion_tokens") or 0),
        "latency_ms": meta.get("latency_ms"),
        "phases": meta.get("phases"),
        "review_id": meta.get("review_id"),
        "model": meta.get("model"),
        "finished_at": round(time.time(), 3),
    }
    error = failure_of(outcome)
    if error is not None:
        record.update(verdict=None, error_code=error[0], error_message=error[1][:500])
        return record
    record.update(
        verdict=outcome["verdict"],
        confidence=outcome.get("confidence"),
        recommendation=outcome.get("recommendation"),
        critical_assumptions=outcome.get("critical_assumptions") or [],
        material_risks=outcome.get("material_risks") or [],
        better_alternative=outcome.get("better_alternative"),
        falsification_probe=outcome.get("falsification_probe"),
        budget_exhausted=bool(meta.get("budget_exhausted")),
        blindness_warning=meta.get("blindness_warning"),
    )
    return record


# ---------------------------------------------------------------- fan-out


def send_review(client: Any, payload: dict[str, Any], trace_id: str, headers: dict[str, Any]) -> Any:
    """One `vetq.review` job with extra headers, exactly as Client._send sends it."""
    return client._send(TASK_REVIEW, payload, trace_id, headers)


@dataclass
class RunResult:
    sent: int = 0  # jobs sent to the queue (retries included)
    finished: int = 0  # records written by this invocation
    retried: int = 0
    stopped: str | None = None  # why the run stopped early (resumable), else None
    records: list[dict[str, Any]] = field(default_factory=list)  # this invocation's records


def execute(
    client: Any,
    cases_by_id: Mapping[str, Mapping[str, Any]],
    items: Sequence[Item],
    checkpoint: Checkpoint,
    *,
    label: str,
    token_budget: int | None,
    retries: int = 0,
    stop_on_rate_limit: bool = False,
    max_in_flight: int = 8,
    job_timeout_s: float = 900.0,
    poll_s: float = 0.02,
    progress: Callable[[str], None] | None = None,
) -> RunResult:
    """Send the items (at most max_in_flight at a time), retry transient failures up to
    `retries` times each, checkpoint every finished item."""
    from celery.result import AsyncResult

    result = RunResult()
    batch_headers: dict[str, Any] = {}
    if token_budget is not None:
        if token_budget <= 0:
            result.stopped = "the token budget is spent"
            return result
        batch_headers = {BATCH_HEADER: f"bench-{uuid.uuid4().hex}", BATCH_BUDGET_HEADER: int(token_budget)}
    queue = list(items)
    queue.reverse()  # pop() from the end keeps the planned order
    in_flight: dict[str, tuple[Item, int, Any, float]] = {}
    stopping = False

    def submit(item: Item, attempt: int) -> None:
        trace_id = f"bench-{uuid.uuid4().hex[:20]}"  # never derived from the case
        payload = {**dict(cases_by_id[item.case_id]["input"]), "trace_id": trace_id}
        headers = {BENCH_MODE_HEADER: item.mode, **batch_headers}
        job = send_review(client, payload, trace_id, headers)
        result.sent += 1
        in_flight[job.id] = (item, attempt, job, time.monotonic())

    while queue or in_flight:
        while queue and not stopping and len(in_flight) < max_in_flight:
            submit(queue.pop(), 0)
        if stopping and not in_flight:
            break
        done = []
        for job_id, (_item, _attempt, job, started) in in_flight.items():
            async_result = AsyncResult(job_id, app=client.app)
            if async_result.ready():
                done.append((job_id, job._outcome(async_result)))
            elif time.monotonic() - started > job_timeout_s:
                done.append((job_id, error_result(ErrorCode.TIMEOUT, f"no result within {job_timeout_s:g}s")))
        if not done:
            time.sleep(poll_s)
            continue
        for job_id, outcome in done:
            item, attempt, job, started = in_flight.pop(job_id)
            error = failure_of(outcome)
            if error is not None and is_transient(*error) and attempt < retries and not stopping:
                result.retried += 1
                if progress:
                    progress(f"retry {attempt + 1}/{retries} of {item.key}: {error[0]}")
                submit(item, attempt + 1)
                continue
            if error is not None and error[0] == "RATE_LIMITED" and stop_on_rate_limit:
                stopping = True
                result.stopped = (
                    f"the provider kept refusing ({item.key}: RATE_LIMITED after {attempt} "
                    f"retr{'y' if attempt == 1 else 'ies'}); finished work is checkpointed"
                )
                continue  # not recorded: --resume runs it again
            cut_by_budget = error is None and bool((outcome.get("meta") or {}).get("budget_exhausted"))
            if token_budget is not None and (cut_by_budget or (error is not None and error[0] == "BUDGET_EXCEEDED")):
                # The run's cap cut this review short: not a measurement. Not recorded,
                # so a resume (with budget left) runs it again.
                stopping = True
                result.stopped = "the run's token budget ran out; finished work is checkpointed"
                continue
            record = make_record(item, outcome, retries=attempt, wall_ms=int((time.monotonic() - started) * 1000))
            checkpoint.append(record)
            result.records.append(record)
            result.finished += 1
            if progress:
                progress(f"[{label}] {item.key}: {record['verdict'] or record['error_code']}")
    return result
