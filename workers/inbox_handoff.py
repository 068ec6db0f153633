"""A worker hands each result a person must review to the inbox: one XADD to the
inbox's Redis stream (core.redis_keys.INBOX_STREAM) in the job's task_postrun
(workers/signals.py), once the result is stored, with VETQ_INBOX on.

The worker never opens the inbox's database: the stream decouples the two (a worker
fleet keeps running with the inbox's database down, slow or migrating; a worker
needs no database driver nor credentials), and the inbox takes entries through a
consumer group at its own pace, idempotently by job id (vetq.inbox.ingest). An ok
result costs nothing more than the status check; a needs_review result costs one
XADD of its request and result.

The entry's fields are this module's contract with the inbox (ENTRY_FIELDS)."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any

from vetq.core.logging import get_logger
from vetq.core.queue import (
    BATCH_HEADER,
    CALLBACK_URL_HEADER,
    KIND_OF_TASK,
    PRIORITY_HEADER,
    TASK_REVIEW,
    TENANT_HEADER,
)
from vetq.core.redis_keys import INBOX_STREAM

log = get_logger("vetq.worker")

ENTRY_FIELDS = (
    "job_id",
    "task",
    "request",
    "result",
    "tenant",
    "priority",
    "callback_url",
    "batch_id",
    "finished_at",
)
# The job's message headers an item keeps: its callback gets the reviewed result too.
HEADERS = (TENANT_HEADER, PRIORITY_HEADER, CALLBACK_URL_HEADER, BATCH_HEADER)


def needs_a_person(task_name: Any, retval: Any, *, review_verdicts: bool) -> bool:
    """A needs_review extraction or validation result; a review's verdict when asked."""
    if not isinstance(retval, Mapping):
        return False
    status = retval.get("status")
    if status == "needs_review":
        return task_name in KIND_OF_TASK and task_name != TASK_REVIEW
    return review_verdicts and status == "ok" and task_name == TASK_REVIEW


def entry_of(
    task_name: str, job_id: str, payload: Any, retval: Mapping[str, Any], headers: Mapping[str, Any]
) -> dict[str, str]:
    def text(name: str) -> str:
        value = headers.get(name)
        return str(value) if value else ""

    return {
        "job_id": job_id,
        "task": task_name,
        "request": json.dumps(payload if isinstance(payload, Mapping) else {}, ensure_ascii=False),
        "result": json.dumps(dict(retval), ensure_ascii=False),
        "tenant": text(TENANT_HEADER),
        "priority": text(PRIORITY_HEADER),
        "callback_url": text(CALLBACK_URL_HEADER),
        "batch_id": text(BATCH_HEADER),
        "finished_at": repr(time.time()),
    }


def hand_over(redis_client: Any, entry: Mapping[str, str]) -> bool:
    """XADD the entry. Never raises: a result that cannot be handed over is logged
    with its job id (the result itself is stored) and the worker goes on."""
    try:
        redis_client.xadd(INBOX_STREAM, dict(entry))
    except Exception as exc:  # noqa: BLE001 - the job is done; the handoff's failure is logged, not raised
        log.error("inbox_handoff_failed", job_id=entry.get("job_id"), error=type(exc).__name__)
        return False
    log.info("inbox_handoff", job_id=entry.get("job_id"))
    return True
