"""The bulk lane's state in Redis: each model request waiting for, or answered by, a
provider batch; the jobs parked on them; the provider batches; the wake list. Shared
by every worker, like the budgets and the response cache (keys in core.redis_keys,
all under the `{vetq:bulk}` hash tag).

A request is named by its response-cache digest (provider, model, request), so two
jobs asking the same thing share one provider request and it is paid once. Its
states:

    pending    waiting in `pending:<model>` for the next provider batch
    submitting claimed by a submission (`submission`) whose provider batch is being
               created, or was and is not recorded yet (see Submissions below)
    submitted  in a provider batch (`batch`), waiting for its end
    done       answered: `response` holds the LLMResponse (also in the response cache)
    failed     `error` holds the job's error (errored twice, expired past its bounds)
    realtime   past its bulk deadline unanswered: a job that allows it asks the
               realtime lane

A job parks on one request at a time (a job's stages call one model at a time): its
message (task, queue, payload, headers) waits in `job:<id>` and its id in the
request's waiters. Parking and resolving are each one Lua script, so a job parks
either before the answer lands (and is woken) or after it (and runs on at once); it
is never left waiting on an answered request. Waking moves the parked jobs to the
wake list in the same script; the coordinator publishes them and deletes their
records: a crash in between publishes a job twice (a second run reads every answer
from the cache and writes the same result), never zero times.

Submissions. A provider batch is paid for once it is created, and creating it and
recording it cannot be one step. So the requests going into a batch are first claimed
(`claim`, one script, fenced by the coordinator's lock: a coordinator that lost its
lease claims nothing) under a submission id recorded in `sub:<id>` with the moment
after which no create for it may start and the moment by which one must have landed.
The id travels with the create (workers/bulk_coordinator.py). Then either the batch is
recorded (`record_batch`: the claimed requests become `submitted`, the submission
closes), or the submission is released (`release`: its still-claimed requests go back
to pending) because the create was refused or never sent, or it stays open until a
coordinator finds its batch at the provider and records it, or finds none after the
second moment and releases it. Claimed requests are in no pending set, so nothing
sends them again meanwhile.

Cancellation. A parked job a client canceled (its result written already) is listed in
`canceled`; the coordinator takes it off its request (`withdraw`, one script). A
request no other job waits on is withdrawn while it is pending: deleted, never sent,
its reservations released. One a provider batch already carries cannot be taken out
of it (neither Batch API cancels one request of a batch): it is orphaned, and its
batch is marked `withdrawn`, so a poll cancels the whole batch once every request of
it is orphaned; an orphan the batch ends without answering is withdrawn then, not
sent again. A request other jobs still wait on stays, and the job that queued it
keeps its reservation: that request will be paid.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Sequence
from typing import Any

import redis

from vetq.core.batch_records import as_text, provider_batch_view, text_fields
from vetq.core.llm.types import LLMRequest, LLMResponse
from vetq.core.redis_keys import (
    BULK_CANCELED_KEY,
    BULK_LOCK_KEY,
    BULK_MODELS_KEY,
    BULK_OPEN_KEY,
    BULK_SUBMISSIONS_KEY,
    BULK_WAKE_KEY,
    bulk_batch_key,
    bulk_hold_key,
    bulk_job_key,
    bulk_pending_key,
    bulk_request_key,
    bulk_submission_key,
    bulk_vbatch_key,
    bulk_waiters_key,
)
from vetq.workers.lua_scripts import register

__all__ = ["UNRESOLVED", "BulkStore", "ParkedJob", "StoredRequest", "Submission", "Withdrawal"]

UNRESOLVED = frozenset({"pending", "submitting", "submitted"})
# How long an unresolved request, a parked job or an open batch is kept: two provider
# windows (24 h each) and a day to spare, so nothing waiting is ever evicted by age.
BULK_LIVE_TTL_S = 3 * 24 * 3600


def _float(value: str | None) -> float | None:
    try:
        return float(value) if value not in (None, "") else None
    except ValueError:
        return None


class StoredRequest:
    """One bulk-lane request as Redis holds it."""

    def __init__(self, digest: str, fields: dict[str, str]) -> None:
        self.digest = digest
        self.fields = fields

    @property
    def state(self) -> str:
        return self.fields.get("state", "")

    @property
    def model_key(self) -> str:
        return self.fields.get("model_key", "")

    @property
    def owner(self) -> str:
        return self.fields.get("owner", "")

    @property
    def stage(self) -> str:
        return self.fields.get("stage", "")

    @property
    def reservation(self) -> str | None:
        """The ledger reservation of the request's tokens (None: no budget to draw on)."""
        return self.fields.get("reservation") or None

    @property
    def reservation_usd(self) -> str | None:
        """... and of its micro-dollars."""
        return self.fields.get("reservation_usd") or None

    def estimates(self) -> tuple[int, int]:
        """(tokens, micro-dollars) reserved: what is charged when a provider reports no usage."""
        return int(self.fields.get("estimate") or 0), int(self.fields.get("estimate_usd") or 0)

    @property
    def deadline(self) -> float | None:
        return _float(self.fields.get("deadline"))

    @property
    def fallback(self) -> bool:
        return self.fields.get("fallback") == "1"

    @property
    def errors(self) -> int:
        return int(self.fields.get("errors") or 0)

    @property
    def resubmits(self) -> int:
        return int(self.fields.get("resubmits") or 0)

    @property
    def vetq_batch(self) -> str | None:
        return self.fields.get("vbatch") or None

    def request(self) -> LLMRequest | None:
        raw = self.fields.get("request")
        return LLMRequest.model_validate_json(raw) if raw else None

    def response(self) -> LLMResponse | None:
        raw = self.fields.get("response")
        return LLMResponse.model_validate_json(raw) if raw else None

    def error(self) -> dict[str, Any] | None:
        raw = self.fields.get("error")
        return json.loads(raw) if raw else None

    def overdue(self, now: float) -> bool:
        deadline = self.deadline
        return deadline is not None and now >= deadline


class Submission:
    """Requests claimed for one provider batch that is not recorded yet: `marked` when
    they were claimed, `create_by` the last moment its create may start, `settled_by`
    the moment by which a create that started has landed (epoch seconds)."""

    def __init__(self, submission_id: str, fields: dict[str, str]) -> None:
        self.id = submission_id
        self.model_key = fields.get("model_key", "")
        self.digests: list[str] = json.loads(fields.get("requests") or "[]")
        self.vetq_batches: list[str] = json.loads(fields.get("vbatches") or "[]")
        self.marked = float(fields.get("marked") or 0)
        self.create_by = float(fields.get("create_by") or 0)
        self.settled_by = float(fields.get("settled_by") or 0)
        self.checks = int(fields.get("checks") or 0)


class ParkedJob:
    def __init__(self, job_id: str, fields: dict[str, str]) -> None:
        self.job_id = job_id
        self.task = fields.get("task", "")
        self.queue = fields.get("queue", "")
        self.payload: Any = json.loads(fields.get("payload") or "null")
        self.headers: dict[str, Any] = json.loads(fields.get("headers") or "{}")
        self.digest = fields.get("digest", "")
        self.parked_ms = fields.get("parked_ms", "")


class Withdrawal:
    """What taking a canceled job off its request did (bulk_withdraw.lua's outcome):
    the reservations of a withdrawn request, to release; the provider batch of an
    orphaned one; the parked job's task and queue when it was still parked."""

    def __init__(
        self, reply: Sequence[Any], *, task: str = "", queue: str = "", headers: dict[str, Any] | None = None
    ) -> None:
        outcome, reservation, reservation_usd, batch = (as_text(x) for x in reply)
        self.outcome = outcome
        self.reservations = [r for r in (reservation, reservation_usd) if r]
        self.batch = batch
        self.task = task
        self.queue = queue
        self.headers = headers or {}

    @property
    def was_parked(self) -> bool:
        """The job was still parked: no run of it will end it, so whoever withdrew it
        counts it and delivers its callback."""
        return self.outcome != "moved" and bool(self.task)


class BulkStore:
    def __init__(self, redis_client: Any, *, resolved_ttl_s: int) -> None:
        self.redis = redis_client
        self.resolved_ttl_s = max(1, int(resolved_ttl_s))
        self._park, self._resolve, self._claim, self._record, self._release, self._withdraw = register(
            redis_client, "bulk_park", "bulk_resolve", "bulk_claim", "bulk_record", "bulk_release", "bulk_withdraw"
        )

    # ------------------------------------------------------------------ requests

    def get(self, digest: str) -> StoredRequest | None:
        fields = text_fields(self.redis.hgetall(bulk_request_key(digest)))
        return StoredRequest(digest, fields) if fields else None

    def get_many(self, digests: Sequence[str]) -> list[StoredRequest | None]:
        pipe = self.redis.pipeline(transaction=False)
        for digest in digests:
            pipe.hgetall(bulk_request_key(digest))
        return [
            StoredRequest(d, text_fields(raw)) if raw else None for d, raw in zip(digests, pipe.execute(), strict=True)
        ]

    def park(
        self,
        *,
        job_id: str,
        digest: str,
        model_key: str,
        new_request: dict[str, str] | None,
        deadline: float | None,
        fallback: bool,
        job: dict[str, Any],
    ) -> str:
        """Create (`new_request`: its fields) or join the request `digest` and park the
        job on it: "created", "joined", or "resolved" (it was answered meanwhile)."""
        fields = {"model_key": model_key, **(new_request or {})} if new_request is not None else None
        result = self._park(
            keys=[
                bulk_request_key(digest),
                bulk_waiters_key(digest),
                bulk_pending_key(model_key),
                BULK_MODELS_KEY,
                bulk_job_key(job_id),
            ],
            args=[
                job_id,
                digest,
                _now_ms(),
                BULK_LIVE_TTL_S,
                json.dumps(fields) if fields is not None else "",
                "" if deadline is None else repr(float(deadline)),
                "1" if fallback else "0",
                json.dumps({name: str(value) for name, value in job.items()}),
            ],
        )
        return as_text(result)

    def resolve(self, digest: str, state: str, **fields: str) -> int:
        """Resolve the request (done, failed, realtime) and wake its jobs: how many, or
        -1 when it was resolved already."""
        return int(
            self._resolve(
                keys=[bulk_request_key(digest), bulk_waiters_key(digest), BULK_WAKE_KEY],
                args=[state, self.resolved_ttl_s, json.dumps(fields), ""],
            )
        )

    def keep_realtime_answer(self, digest: str, model_key: str, response_json: str, *, owner: str) -> bool:
        """A bulk job past its deadline answered its call on the realtime lane: keep
        the answer as the request's, so the job's re-runs find it as the one it paid
        for (the response cache would hand it back at no cost). False when the
        request is in a batch or answered already."""
        # Metered already: the realtime lane counted the call in the metrics.
        fields = {"response": response_json, "owner": owner, "model_key": model_key, "metered": "1"}
        return (
            int(
                self._resolve(
                    keys=[bulk_request_key(digest), bulk_waiters_key(digest), BULK_WAKE_KEY],
                    args=["done", self.resolved_ttl_s, json.dumps(fields), "realtime"],
                )
            )
            >= 0
        )

    def first_read(self, digest: str) -> bool:
        """True once per answered request: the first time its paying job reads the
        answer, when the call goes into the metrics (re-runs of the job read it again)."""
        key = bulk_request_key(digest)
        pipe = self.redis.pipeline(transaction=False)
        pipe.hsetnx(key, "metered", "1")
        pipe.ttl(key)
        first, ttl = pipe.execute()
        if ttl == -1:  # the request expired just before: the flag alone must not stay forever
            self.redis.expire(key, self.resolved_ttl_s)
        return bool(first)

    def requeue(self, requests: Iterable[StoredRequest], *, counter: str | None = None) -> None:
        """Put unanswered requests back in their model's pending set (a resubmission, a
        retry after an error, a submission refused), `counter` (errors or resubmits)
        counted up."""
        pipe = self.redis.pipeline(transaction=True)
        now = _now_ms()
        for stored in requests:
            key = bulk_request_key(stored.digest)
            pipe.hset(key, mapping={"state": "pending", "batch": ""})
            if counter is not None:
                pipe.hincrby(key, counter, 1)
            pipe.zadd(bulk_pending_key(stored.model_key), {stored.digest: now})
            pipe.sadd(BULK_MODELS_KEY, stored.model_key)
        pipe.execute()

    def pending_models(self) -> list[str]:
        return sorted(as_text(m) for m in self.redis.smembers(BULK_MODELS_KEY))

    def pending(self, model_key: str, limit: int) -> list[tuple[str, float]]:
        """The oldest `limit` pending digests of a model, with their age in seconds."""
        now = _now_ms()
        raw = self.redis.zrange(bulk_pending_key(model_key), 0, max(0, limit - 1), withscores=True)
        return [(as_text(digest), max(0.0, (now - score) / 1000.0)) for digest, score in raw]

    def pending_count(self, model_key: str) -> int:
        return int(self.redis.zcard(bulk_pending_key(model_key)))

    def forget_pending(self, model_key: str, digests: Sequence[str]) -> None:
        pipe = self.redis.pipeline(transaction=True)
        if digests:
            pipe.zrem(bulk_pending_key(model_key), *digests)
        pipe.execute()
        # A model whose pending set emptied is dropped from the set the coordinator scans;
        # a park racing this re-adds it.
        if self.pending_count(model_key) == 0:
            self.redis.srem(BULK_MODELS_KEY, model_key)
            if self.pending_count(model_key) > 0:
                self.redis.sadd(BULK_MODELS_KEY, model_key)

    def hold(self, model_key: str, seconds: float) -> None:
        self.redis.set(bulk_hold_key(model_key), "1", px=max(1, int(seconds * 1000)))

    def held_for_s(self, model_key: str) -> float:
        ttl = int(self.redis.pttl(bulk_hold_key(model_key)))
        return ttl / 1000.0 if ttl > 0 else 0.0

    # ------------------------------------------------------------------ provider batches

    def claim(
        self,
        token: bytes | str,
        submission_id: str,
        model_key: str,
        digests: Sequence[str],
        *,
        vetq_batches: Iterable[str],
        marked: float,
        create_by: float,
        settled_by: float,
        check_in_s: float,
    ) -> list[str] | None:
        """Claim the requests of `digests` still pending for the submission: those
        claimed, or None when `token` no longer holds the coordinator lock."""
        fields = {
            "model_key": model_key,
            "vbatches": json.dumps(sorted(set(vetq_batches))),
            "marked": repr(marked),
            "create_by": repr(create_by),
            "settled_by": repr(settled_by),
        }
        claimed = self._claim(
            keys=[
                BULK_LOCK_KEY,
                BULK_SUBMISSIONS_KEY,
                bulk_submission_key(submission_id),
                bulk_pending_key(model_key),
                *(bulk_request_key(d) for d in digests),
            ],
            args=[
                token,
                submission_id,
                _now_ms() + int(check_in_s * 1000),
                json.dumps(fields),
                BULK_LIVE_TTL_S,
                *digests,
            ],
        )
        return None if claimed is None else [as_text(d) for d in claimed]

    def record_batch(
        self,
        batch_id: str,
        model_key: str,
        digests: Sequence[str],
        vetq_batches: Iterable[str],
        next_poll_s: float,
        *,
        submission: str,
    ) -> str:
        """The submission's requests are in provider batch `batch_id`: mark them
        submitted, open the batch for polling, close the submission. "recorded",
        "known" (recorded already) or "late" (the submission had been released)."""
        now = _now_ms()
        vbatches = sorted(set(vetq_batches))
        fields = {
            "model_key": model_key,
            "created_ms": now,
            "requests": json.dumps(list(digests)),
            "state": "in_progress",
            "counts": json.dumps({"processing": len(digests)}),
            "polls": 0,
        }
        result = self._record(
            keys=[
                bulk_submission_key(submission),
                BULK_SUBMISSIONS_KEY,
                bulk_batch_key(batch_id),
                BULK_OPEN_KEY,
                *(bulk_request_key(d) for d in digests),
                *(bulk_vbatch_key(v) for v in vbatches),
            ],
            args=[
                submission,
                batch_id,
                json.dumps(fields),
                now + int(next_poll_s * 1000),
                BULK_LIVE_TTL_S,
                len(digests),
            ],
        )
        return as_text(result)

    def release(self, submission: Submission) -> int:
        """Give the submission's requests it still claims back to pending; how many."""
        return int(
            self._release(
                keys=[
                    bulk_submission_key(submission.id),
                    BULK_SUBMISSIONS_KEY,
                    bulk_pending_key(submission.model_key),
                    BULK_MODELS_KEY,
                    *(bulk_request_key(d) for d in submission.digests),
                ],
                args=[submission.id, _now_ms(), submission.model_key, *submission.digests],
            )
        )

    def submission(self, submission_id: str) -> Submission | None:
        fields = text_fields(self.redis.hgetall(bulk_submission_key(submission_id)))
        return Submission(submission_id, fields) if fields else None

    def due_submissions(self, limit: int = 100) -> list[str]:
        """The open submissions whose check is due, oldest first."""
        return [
            as_text(s) for s in self.redis.zrangebyscore(BULK_SUBMISSIONS_KEY, "-inf", _now_ms(), start=0, num=limit)
        ]

    def check_submission_in(self, submission_id: str, seconds: float) -> None:
        pipe = self.redis.pipeline(transaction=True)
        pipe.hincrby(bulk_submission_key(submission_id), "checks", 1)
        pipe.zadd(BULK_SUBMISSIONS_KEY, {submission_id: _now_ms() + int(seconds * 1000)}, xx=True)
        pipe.execute()

    def forget_submission(self, submission_id: str) -> None:
        self.redis.zrem(BULK_SUBMISSIONS_KEY, submission_id)

    def batch_known(self, batch_id: str) -> bool:
        return bool(self.redis.exists(bulk_batch_key(batch_id)))

    def due_batches(self, limit: int = 100) -> list[str]:
        return [as_text(b) for b in self.redis.zrangebyscore(BULK_OPEN_KEY, "-inf", _now_ms(), start=0, num=limit)]

    def batch(self, batch_id: str) -> dict[str, Any] | None:
        fields = text_fields(self.redis.hgetall(bulk_batch_key(batch_id)))
        return provider_batch_view(batch_id, fields) if fields else None

    def update_batch(self, batch_id: str, *, next_poll_s: float | None, **fields: Any) -> None:
        """Record what a poll saw; `next_poll_s` None closes the batch (it ended)."""
        mapping = {k: json.dumps(v) if isinstance(v, (dict, list)) else str(v) for k, v in fields.items()}
        pipe = self.redis.pipeline(transaction=True)
        if mapping:
            pipe.hset(bulk_batch_key(batch_id), mapping=mapping)
        pipe.hincrby(bulk_batch_key(batch_id), "polls", 1)
        if next_poll_s is None:
            pipe.zrem(BULK_OPEN_KEY, batch_id)
            pipe.expire(bulk_batch_key(batch_id), self.resolved_ttl_s)
        else:
            pipe.zadd(BULK_OPEN_KEY, {batch_id: _now_ms() + int(next_poll_s * 1000)})
        pipe.execute()

    def vetq_batch_batches(self, vetq_batch: str) -> list[str]:
        return sorted(as_text(b) for b in self.redis.smembers(bulk_vbatch_key(vetq_batch)))

    # ------------------------------------------------------------------ waking

    def woken(self, limit: int) -> list[str]:
        return [as_text(j) for j in self.redis.lrange(BULK_WAKE_KEY, 0, max(0, limit - 1))]

    def parked(self, job_id: str) -> ParkedJob | None:
        fields = text_fields(self.redis.hgetall(bulk_job_key(job_id)))
        return ParkedJob(job_id, fields) if fields else None

    def parked_count(self, job_ids: Sequence[str]) -> int:
        pipe = self.redis.pipeline(transaction=False)
        for job_id in job_ids:
            pipe.exists(bulk_job_key(job_id))
        return sum(int(x) for x in pipe.execute())

    def woke(self, parked: ParkedJob) -> None:
        """The job was published again: its wake entry goes, and its parked record
        unless the job, already running again, parked on its next call meanwhile."""
        key = bulk_job_key(parked.job_id)
        with self.redis.pipeline(transaction=True) as pipe:
            while True:
                try:
                    pipe.watch(key)
                    same = (as_text(pipe.hget(key, "digest")), as_text(pipe.hget(key, "parked_ms"))) == (
                        parked.digest,
                        parked.parked_ms,
                    )
                    pipe.multi()
                    if same:
                        pipe.delete(key)
                    pipe.lrem(BULK_WAKE_KEY, 1, parked.job_id)
                    pipe.execute()
                    return
                except redis.WatchError:
                    continue  # it parked again just now: look again

    # ------------------------------------------------------------------ cancellation

    def canceled(self, limit: int) -> list[str]:
        """The oldest `limit` parked jobs clients canceled, to take off their requests."""
        return [as_text(j) for j in self.redis.lrange(BULK_CANCELED_KEY, 0, max(0, limit - 1))]

    def forget_canceled(self, job_id: str) -> None:
        self.redis.lrem(BULK_CANCELED_KEY, 0, job_id)

    def withdraw(self, job_id: str) -> Withdrawal:
        """Take the canceled job off the request it is parked on (withdrawing the request
        when no job waits on it any more); "moved" when it is parked on none."""
        for _ in range(3):  # a job woken and parked again meanwhile is looked up again
            digest, task, queue, headers = (
                as_text(x) for x in self.redis.hmget(bulk_job_key(job_id), "digest", "task", "queue", "headers")
            )
            if not digest:
                return Withdrawal(["moved", "", "", ""])
            model_key = as_text(self.redis.hget(bulk_request_key(digest), "model_key"))
            withdrawal = Withdrawal(
                self._withdraw(
                    keys=[
                        bulk_request_key(digest),
                        bulk_waiters_key(digest),
                        bulk_pending_key(model_key),
                        bulk_job_key(job_id),
                    ],
                    args=[digest, job_id, ""],
                ),
                task=task,
                queue=queue,
                headers=json.loads(headers or "{}"),
            )
            if withdrawal.outcome != "moved":
                return withdrawal
        return Withdrawal(["moved", "", "", ""])

    def withdraw_orphan(self, stored: StoredRequest) -> Withdrawal:
        """Withdraw a request its provider batch ended without answering, when no job
        waits on it any more (all of them were canceled): "withdrawn", or another
        outcome and nothing changed."""
        return Withdrawal(
            self._withdraw(
                keys=[
                    bulk_request_key(stored.digest),
                    bulk_waiters_key(stored.digest),
                    bulk_pending_key(stored.model_key),
                    bulk_job_key(""),
                ],
                args=[stored.digest, "", "submitted"],
            )
        )

    def mark_withdrawn(self, batch_id: str) -> None:
        """A request of the provider batch lost its last job: its next poll looks whether
        any request of it still has one."""
        key = bulk_batch_key(batch_id)
        if self.redis.exists(key):
            self.redis.hset(key, "withdrawn", "1")

    def all_orphaned(self, requests: Sequence[StoredRequest]) -> bool:
        """True when no job waits on any of `requests` (one pipelined round trip)."""
        pipe = self.redis.pipeline(transaction=False)
        for stored in requests:
            pipe.scard(bulk_waiters_key(stored.digest))
        return all(int(n) == 0 for n in pipe.execute())

    def counts(self) -> dict[str, int]:
        """What the bulk lane holds now (for status and the benchmark)."""
        models = self.pending_models()
        return {
            "pending_requests": sum(self.pending_count(m) for m in models),
            "open_batches": int(self.redis.zcard(BULK_OPEN_KEY)),
            "jobs_to_wake": int(self.redis.llen(BULK_WAKE_KEY)),
        }


def _now_ms() -> int:
    return int(time.time() * 1000)
