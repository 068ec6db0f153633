"""Idempotent submission: a producer's key names one job for as long as results are kept.

A backend that retries its own call (a timeout, a crash before it saved the job id)
submits again with the same `idempotency_key` and gets the job it already has. The key
is claimed in Redis before the job is sent (SET NX, one pipelined round trip for a
batch's chunk), with the request's fingerprint: the same key with a different request is
IDEMPOTENCY_CONFLICT, not a silent second job and not a silent wrong one. Keys are
hashed (a key may be anything a caller uses, an order number or an e-mail address) and
kept per tenant, for VETQ_RESULT_TTL_S.

A send that fails gives its claim back, so the retry sends the job. A producer that
died between the claim and the send left a key naming a job never recorded as
submitted: a retry more than TAKEOVER_S after that claim sends the job itself, under the
same id (two retries doing so at once run it twice, and its second run never replaces
its first result).
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from typing import Any

from vetq.core.batch_records import as_text
from vetq.core.redis_keys import idempotency_key, submitted_key

# Longer than a send may take, its retries through a Redis restart included (core.queue's
# task_publish_retry_policy, about 30 s): a claim this old whose job was never recorded
# as submitted belongs to a producer that died.
TAKEOVER_S = 60.0

# What of a request makes it "the same": the task and its payload, not the trace id a
# retry may draw anew.
_NOT_THE_REQUEST = ("trace_id",)


def fingerprint(task: str, payload: dict[str, Any]) -> str:
    canonical = {k: v for k, v in payload.items() if k not in _NOT_THE_REQUEST}
    text = json.dumps({"task": task, "payload": canonical}, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class Claim:
    """A job to submit under a key: its id, trace id and queue if the key is new."""

    key: str
    tenant: str | None
    fingerprint: str
    job_id: str
    trace_id: str
    queue: str

    @property
    def redis_key(self) -> str:
        return idempotency_key(self.tenant, hashlib.sha256(self.key.encode()).hexdigest())

    def record(self, claimed_at: float | None = None) -> str:
        return json.dumps(
            {
                "job_id": self.job_id,
                "fingerprint": self.fingerprint,
                "trace_id": self.trace_id,
                "queue": self.queue,
                "claimed_at": round(time.time() if claimed_at is None else claimed_at, 3),
            }
        )


@dataclass(frozen=True)
class Claimed:
    """What a claim found: `new` (send the job), the existing job's record, or a conflict."""

    new: bool
    job_id: str
    trace_id: str | None
    queue: str | None
    conflict: bool = False


def claim(redis_client: Any, claims: list[Claim], ttl_s: int) -> list[Claimed]:
    """Claim every key at once (one round trip; a second for the keys taken already)."""
    if not claims:
        return []
    now = time.time()
    pipe = redis_client.pipeline(transaction=False)
    for item in claims:
        pipe.set(item.redis_key, item.record(now), nx=True, ex=ttl_s)
    won = pipe.execute()
    taken = [item for item, ok in zip(claims, won, strict=True) if not ok]
    stored: dict[str, dict[str, Any] | None] = {}
    if taken:
        pipe = redis_client.pipeline(transaction=False)
        for item in taken:
            pipe.get(item.redis_key)
        stored = {
            item.redis_key: json.loads(as_text(raw)) if raw is not None else None
            for item, raw in zip(taken, pipe.execute(), strict=True)
        }
        # The jobs of old claims: were they ever recorded as submitted?
        old = [r for r in stored.values() if r is not None and now - float(r.get("claimed_at") or 0) > TAKEOVER_S]
        if old:
            pipe = redis_client.pipeline(transaction=False)
            for old_record in old:
                pipe.exists(submitted_key(str(old_record.get("job_id"))))
            for old_record, exists in zip(old, pipe.execute(), strict=True):
                old_record["orphaned"] = not exists
    outcomes = []
    for item, ok in zip(claims, won, strict=True):
        if ok:
            outcomes.append(Claimed(True, item.job_id, item.trace_id, item.queue))
            continue
        record = stored.get(item.redis_key)
        if record is None:  # expired between the two round trips: the key is free again
            outcomes.extend(claim(redis_client, [item], ttl_s))
            continue
        job_id, trace_id, queue = str(record.get("job_id")), record.get("trace_id"), record.get("queue")
        if record.get("fingerprint") != item.fingerprint:
            outcomes.append(Claimed(False, job_id, trace_id, queue, conflict=True))
        elif record.get("orphaned"):
            # Its producer died before sending it: send it now, as the job the key names.
            outcomes.append(Claimed(True, job_id, trace_id or item.trace_id, queue or item.queue))
        else:
            outcomes.append(Claimed(False, job_id, trace_id, queue))
    return outcomes


def release(redis_client: Any, claimed: list[tuple[Claim, Claimed]]) -> None:
    """Give back keys whose jobs were not sent, each only while it still names that job."""
    for item, outcome in claimed:
        with redis_client.pipeline() as pipe:
            pipe.watch(item.redis_key)
            raw = pipe.get(item.redis_key)
            if raw is not None and json.loads(as_text(raw)).get("job_id") == outcome.job_id:
                pipe.multi()
                pipe.delete(item.redis_key)
                pipe.execute()
