"""Cancellation, the producer's side (Job.cancel, Batch.cancel, `vetq cancel`).

A cancel sets the job's mark (core.redis_keys.cancel_key, kept as long as results),
which the workers read: at a run's start, in the same script that stores its STARTED
state (the run then ends CANCELED without calling anything), and in the call gate
before each model call that would be paid (a running job stops there, its result
keeping the usage of the calls it made). The mark is set before the job's state is
read, so a run that starts after the read finds it.

What no worker holds is canceled here and now, so its waiter does not have to wait
for a worker to reach it: a job still queued, requeued for a later attempt, or parked
on a provider batch gets its canceled result from this client (core.results
.canceled_result), published like any result. What an earlier run of it paid for (a
requeued job, a bulk job between its batches) only the workers know: when the job's
budget scope shows a spend, the result's cost reads null (unknown), never 0. That write is a WATCH transaction on
the job's result key: it happens only if no worker wrote the key since it was read,
so it never replaces a result or hides a run that started meanwhile (the transaction
is tried again on what the worker wrote). A parked job is also listed for the bulk
coordinator, which takes it off its provider request and withdraws a request no
other job waits on (workers/bulk_store.py, Cancellation).

A running job (STARTED) is only marked: it is `canceling` until its run stops at its
next model call, and a run that makes no further call finishes as it would have. A
finished job is left as it is: cancelling it changes nothing and says so."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import redis

from vetq.api_client.result_stream import FINAL_STATES
from vetq.core.queue import BULK_WAITING_STATE
from vetq.core.redis_keys import (
    BULK_CANCELED_KEY,
    CELERY_RESULT_PREFIX,
    budget_scope_key,
    cancel_key,
    job_scope,
    submitted_key,
)
from vetq.core.results import canceled_result

__all__ = ["CANCEL_CHUNK", "CancelOutcome", "cancel_jobs"]

# Jobs read, marked and written per round trip. A WATCH transaction that meets a write
# by a worker is split in halves and tried again, so a busy batch costs a few more
# round trips, never a lost write.
CANCEL_CHUNK = 200
# A worker holds the job now: it is only marked, and stops at its next model call.
RUNNING_STATE = "STARTED"


@dataclass(frozen=True)
class CancelOutcome:
    """What a cancel found and did for one job: `found` (the id was issued here), the
    Celery state it was in (None: queued, nothing stored yet), its result when it had
    finished, and whether this cancel wrote its canceled result."""

    job_id: str
    found: bool
    state: str | None = None
    result: Any = None
    wrote: bool = False

    @property
    def finished(self) -> bool:
        return self.state in FINAL_STATES and not self.wrote

    @property
    def running(self) -> bool:
        return self.state == RUNNING_STATE


def cancel_jobs(client: Any, job_ids: Sequence[str]) -> list[CancelOutcome]:
    """Cancel the jobs `job_ids` (a Client's), in chunks; one outcome per id, in order."""
    outcomes: list[CancelOutcome] = []
    for start in range(0, len(job_ids), CANCEL_CHUNK):
        outcomes.extend(_cancel_chunk(client, list(job_ids[start : start + CANCEL_CHUNK])))
    return outcomes


def _cancel_chunk(client: Any, job_ids: list[str]) -> list[CancelOutcome]:
    r = client.redis()
    ttl = client.settings.result_ttl_s
    pipe = r.pipeline(transaction=False)
    for job_id in job_ids:
        pipe.exists(submitted_key(job_id))
        pipe.get(CELERY_RESULT_PREFIX + job_id)
        pipe.hget(budget_scope_key(job_scope(job_id)), "spent")
    replies = pipe.execute()
    found: dict[str, CancelOutcome] = {}
    to_mark: list[str] = []
    spent: set[str] = set()
    for index, job_id in enumerate(job_ids):
        submitted, raw, tokens = replies[3 * index : 3 * index + 3]
        if tokens is not None and int(tokens) > 0:
            spent.add(job_id)
        meta = _decoded(client, raw)
        if not submitted and meta is None:
            found[job_id] = CancelOutcome(job_id, found=False)
        elif meta is not None and meta.get("status") in FINAL_STATES:
            found[job_id] = CancelOutcome(job_id, True, str(meta["status"]), meta.get("result"))
        else:
            to_mark.append(job_id)
    if to_mark:
        pipe = r.pipeline(transaction=False)
        for job_id in to_mark:
            pipe.set(cancel_key(job_id), 1, ex=ttl)
        pipe.execute()
        for outcome in _write_canceled(client, to_mark, spent):
            found[outcome.job_id] = outcome
        parked = [o.job_id for o in found.values() if o.wrote and o.state == BULK_WAITING_STATE]
        if parked:
            r.rpush(BULK_CANCELED_KEY, *parked)
    return [found[job_id] for job_id in job_ids]


def _write_canceled(client: Any, job_ids: list[str], spent: set[str]) -> list[CancelOutcome]:
    """Write the canceled result of each job no worker holds, under WATCH (`spent`: the
    jobs whose budget scope shows model calls paid for by an earlier run)."""
    keys = [CELERY_RESULT_PREFIX + job_id for job_id in job_ids]
    with client.redis().pipeline() as pipe:
        while True:
            try:
                pipe.watch(*keys)
                metas = [_decoded(client, raw) for raw in pipe.mget(keys)]
                outcomes = []
                pipe.multi()
                for job_id, key, meta in zip(job_ids, keys, metas, strict=True):
                    state = str(meta["status"]) if meta is not None else None
                    if state in FINAL_STATES or state == RUNNING_STATE:
                        outcomes.append(CancelOutcome(job_id, True, state, meta.get("result") if meta else None))
                        continue
                    value = _canceled_meta(client, job_id, state, paid_before=job_id in spent)
                    pipe.set(key, value, ex=client.settings.result_ttl_s)
                    pipe.publish(key, value)
                    outcomes.append(CancelOutcome(job_id, True, state, wrote=True))
                pipe.execute()
                return outcomes
            except redis.WatchError:
                if len(job_ids) > 1:  # a worker wrote one of them: the halves are tried apart
                    half = len(job_ids) // 2
                    return _write_canceled(client, job_ids[:half], spent) + _write_canceled(
                        client, job_ids[half:], spent
                    )
                # One job whose state just changed: read it again (a job's state changes a
                # bounded number of times, and a final or running one is not written).


def _canceled_meta(client: Any, job_id: str, state: str | None, *, paid_before: bool) -> Any:
    """The stored form of a canceled result, as the workers' backend stores a result.
    What an earlier run of the job paid for is not known here: its cost then reads
    null (unknown), never 0."""
    if state == BULK_WAITING_STATE:
        message = "the job was canceled while it waited for a provider batch"
    elif state is None:
        message = "the job was canceled before it ran"
    else:
        message = "the job was canceled while it waited to run again"
    result = canceled_result(message, spent_unknown=paid_before)
    backend = client.app.backend
    meta = backend._get_result_meta(result=result, state="SUCCESS", traceback=None, request=None)
    meta["task_id"] = job_id
    return backend.encode(meta)


def _decoded(client: Any, raw: Any) -> dict[str, Any] | None:
    if raw is None:
        return None
    meta = client.app.backend.decode_result(raw)
    return meta if isinstance(meta, dict) else None
