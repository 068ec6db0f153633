"""Dead letters: messages a worker refuses, kept where an operator can see them.

A message the worker cannot decode (a pickled or otherwise disallowed content type,
a body that is not what its content type says), one that names a task this worker
does not have, one Celery cannot even read as a task, a job whose payload fails
validation (the task still returns its INVALID_INPUT result), and a job's result its
callback_url never took (workers/webhooks.py) are each refused once:
logged with the reason, acknowledged or rejected without requeue (never retried
forever) and pushed onto the Redis list `vetq:dead`, newest first, capped.

Each entry is a JSON object: time, reason, task, job_id, queue, content_type, error
and a short, redacted preview of the body, never the whole document.

This module is the store (make_entry, record, read) and the two recorders the task
signals call (workers.signals): a result that is INVALID_INPUT, and arguments that do
not fit the task. The messages the consumer itself refuses are recorded by
workers.dead_letter_consumer."""

from __future__ import annotations

import inspect
import json
import time
from collections.abc import Iterator
from typing import Any

from vetq.core.errors import ErrorCode
from vetq.core.logging import get_logger
from vetq.core.redis_keys import DEAD_LETTER_KEY
from vetq.core.results import error_of

log = get_logger("vetq.dead_letter")

DEAD_LETTER_CAP = 10_000
PREVIEW_CHARS = 200
# Redacted before cutting, so a secret cut in half is never left half-visible.
_REDACT_WINDOW = 4_000

REASON_DECODE_ERROR = "decode_error"
REASON_CONTENT_DISALLOWED = "content_disallowed"
REASON_UNKNOWN_TASK = "unknown_task"
REASON_UNKNOWN_MESSAGE = "unknown_message"
REASON_INVALID_TASK = "invalid_task"
REASON_MALFORMED = "malformed_message"
REASON_INVALID_INPUT = "invalid_input"
REASON_BAD_ARGUMENTS = "bad_arguments"
# A job's result that could not be POSTed to its callback_url (workers/webhooks.py):
# every attempt failed, or the destination or the worker's settings refuse it.
REASON_WEBHOOK_FAILED = "webhook_failed"
REASON_WEBHOOK_REFUSED = "webhook_refused"


def preview(body: Any) -> str:
    """At most PREVIEW_CHARS characters of a body, secrets masked."""
    from vetq.core.logging import redact_text

    if body is None:
        return ""
    if isinstance(body, (bytes, bytearray, memoryview)):
        text = bytes(body)[:_REDACT_WINDOW].decode("utf-8", errors="replace")
    elif isinstance(body, str):
        text = body[:_REDACT_WINDOW]
    else:
        try:
            text = json.dumps(body, default=repr)[:_REDACT_WINDOW]
        except (TypeError, ValueError):
            text = repr(body)[:_REDACT_WINDOW]
    text = redact_text(text)
    if len(text) > PREVIEW_CHARS:
        text = text[: PREVIEW_CHARS - 1] + "…"
    return text


def make_entry(
    *,
    reason: str,
    task: str | None = None,
    job_id: str | None = None,
    queue: str | None = None,
    content_type: str | None = None,
    body: Any = None,
    error: BaseException | str | None = None,
) -> dict[str, Any]:
    from vetq.core.logging import redact_text

    if isinstance(error, BaseException):
        error = f"{type(error).__name__}: {error}"
    return {
        "time": time.time(),
        "reason": reason,
        "task": task,
        "job_id": job_id,
        "queue": queue,
        "content_type": content_type,
        "error": redact_text(str(error))[:300] if error else None,
        "preview": preview(body),
    }


def record(redis_client: Any, entry: dict[str, Any], *, cap: int = DEAD_LETTER_CAP) -> bool:
    """Push one entry (newest first) and trim the list to `cap`. Never raises: a
    dead letter that cannot be written is logged, and the worker goes on serving."""
    log.warning(
        "message_refused",
        reason=entry.get("reason"),
        task=entry.get("task"),
        job_id=entry.get("job_id"),
        queue=entry.get("queue"),
        content_type=entry.get("content_type"),
        error=entry.get("error"),
    )
    if redis_client is None:
        log.error("dead_letter_not_recorded", reason=entry.get("reason"), detail="no Redis client")
        return False
    try:
        pipe = redis_client.pipeline()
        pipe.lpush(DEAD_LETTER_KEY, json.dumps(entry, sort_keys=True, default=str))
        pipe.ltrim(DEAD_LETTER_KEY, 0, cap - 1)
        pipe.execute()
        return True
    except Exception as exc:  # noqa: BLE001 - never let bookkeeping stop the worker
        log.error("dead_letter_not_recorded", reason=entry.get("reason"), error=f"{type(exc).__name__}: {exc}")
        return False


def read(redis_client: Any, limit: int = 100) -> Iterator[dict[str, Any]]:
    """The newest `limit` entries, newest first."""
    for raw in redis_client.lrange(DEAD_LETTER_KEY, 0, max(0, limit - 1)):
        try:
            yield json.loads(raw)
        except ValueError:
            yield {"reason": "unreadable_entry", "preview": preview(raw)}


def redis_of(app: Any) -> Any:
    """The worker's Redis connection pool (WorkerContext), or one from the broker URL."""
    context = getattr(app.conf, "vetq_context", None)
    client = getattr(context, "redis", None)
    if client is not None:
        return client
    client = getattr(app, "_vetq_dead_letter_redis", None)
    if client is None:
        import redis

        client = redis.Redis.from_url(app.conf.broker_url)
        app._vetq_dead_letter_redis = client
    return client


def invalid_input_of(retval: Any) -> str | None:
    """The message of an INVALID_INPUT result (of any job kind), else None."""
    error = error_of(retval)
    if error is None or error[0] != ErrorCode.INVALID_INPUT:
        return None
    return error[1] or "invalid input"


def record_task_outcome(task: Any, task_id: str | None, args: Any, kwargs: Any, retval: Any) -> None:
    """task_postrun: a job whose payload failed validation is also a dead letter."""
    message = invalid_input_of(retval)
    if message is None:
        return
    request = getattr(task, "request", None)
    delivery = getattr(request, "delivery_info", None) or {}
    payload = args[0] if isinstance(args, (list, tuple)) and args else (kwargs or None)
    entry = make_entry(
        reason=REASON_INVALID_INPUT,
        task=getattr(task, "name", None),
        job_id=task_id,
        queue=delivery.get("routing_key") if isinstance(delivery, dict) else None,
        content_type=getattr(request, "content_type", None) or "application/json",
        body=payload,
        error=message,
    )
    app = getattr(task, "app", None)
    record(redis_of(app) if app is not None else None, entry)


def arguments_fit(task: Any, args: Any, kwargs: Any) -> bool:
    """Whether a message's arguments bind to the task's run function. A TypeError
    from inside a task that was called correctly is a bug, not bad input, however
    its message reads."""
    try:
        signature = inspect.signature(task.run)  # bound: `self` of a bind=True task is not counted
    except (TypeError, ValueError):
        return True  # no signature to check against: never blame the message
    positional = args if isinstance(args, (list, tuple)) else ()
    named = kwargs if isinstance(kwargs, dict) else {}
    try:
        signature.bind(*positional, **named)
    except TypeError:
        return False
    return True


def record_bad_arguments(task: Any, task_id: str | None, exc: BaseException, args: Any, kwargs: Any) -> None:
    """task_failure: a message whose arguments do not fit the task's signature."""
    if not isinstance(exc, TypeError) or task is None or arguments_fit(task, args, kwargs):
        return
    request = getattr(task, "request", None)
    delivery = getattr(request, "delivery_info", None) or {}
    entry = make_entry(
        reason=REASON_BAD_ARGUMENTS,
        task=getattr(task, "name", None),
        job_id=task_id,
        queue=delivery.get("routing_key") if isinstance(delivery, dict) else None,
        content_type="application/json",
        body={"args": args, "kwargs": kwargs},
        error=exc,
    )
    app = getattr(task, "app", None)
    record(redis_of(app) if app is not None else None, entry)
