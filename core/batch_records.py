"""What a batch looks like in Redis, read the same way by the producer that reports it
(`vetq batch status`, `Client.batch_status`) and the workers that write it.

Two records (keys in core.redis_keys):

* a vetq batch (`Client.submit_batch`): its lane, when it was made, how many jobs it
  has and how many lines were refused at submission, and its job ids in input order;
* a provider batch (a Message Batch, an OpenAI batch) the bulk lane submitted: its
  provider:model, state, request counts by state, polls, and the requests it holds.

`job_state` sorts a job by its Celery result record into done, failed, canceled or
waiting.
"""

from __future__ import annotations

import json
from typing import Any

from vetq.core.queue import BULK_WAITING_STATE
from vetq.core.results import canceled, error_of

__all__ = ["FINISHED_FAILED_STATES", "as_text", "job_state", "provider_batch_view", "text_fields"]

FINISHED_FAILED_STATES = frozenset({"FAILURE", "REVOKED"})


def as_text(value: Any) -> str:
    """A Redis reply (bytes from a client without decode_responses) as text; nil as ""."""
    if value is None:
        return ""
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def text_fields(raw: dict[Any, Any]) -> dict[str, str]:
    """A Redis hash as text."""
    return {as_text(k): as_text(v) for k, v in raw.items()}


def provider_batch_view(batch_id: str, fields: dict[str, str]) -> dict[str, Any]:
    """A provider batch's record as status reports it (the workers' view too)."""
    provider, _, model = fields.get("model_key", "").partition(":")
    return {
        "batch_id": batch_id,
        "provider": provider,
        "model": model,
        "model_key": fields.get("model_key", ""),
        "state": fields.get("state", ""),
        "requests": json.loads(fields.get("requests") or "[]"),
        "counts": json.loads(fields.get("counts") or "{}"),
        "polls": int(fields.get("polls") or 0),
        "created_ms": int(fields.get("created_ms") or 0),
        "cancel_requested": fields.get("cancel_requested") == "1",
        # A request of it lost its last waiting job to a cancel: the next poll cancels the
        # provider batch when no request of it has a job waiting any more.
        "withdrawn": fields.get("withdrawn") == "1",
        "reason": fields.get("reason") or None,
    }


def job_state(meta: dict[str, Any] | None) -> str:
    """done, failed, canceled, waiting_for_provider (a bulk job parked on a provider
    batch) or waiting (queued, running, retrying) for a job's Celery result record
    (None: none yet)."""
    if not meta:
        return "waiting"
    state = meta.get("status")
    if state == "SUCCESS":
        result = meta.get("result")
        if canceled(result):
            return "canceled"
        return "failed" if error_of(result) is not None else "done"
    if state in FINISHED_FAILED_STATES:
        return "failed"
    if state == BULK_WAITING_STATE:
        return "waiting_for_provider"
    return "waiting"
