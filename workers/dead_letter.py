"""Dead letters: messages a worker refuses, kept where an operator can see them.

A message the worker cannot decode (a pickled or otherwise disallowed content type,
a body that is not what its content type says), one that names a task this worker
does not have, one Celery cannot even read as a task, and a job whose payload fails
validation (the task still returns its INVALID_INPUT envelope) are each refused once:
logged with the reason, acknowledged or rejected without requeue (never retried
forever) and pushed onto the Redis list `vetq:dead`, newest first, capped.

Each entry is a JSON object: time, reason, task, job_id, queue, content_type, error
and a short, redacted preview of the body, never the whole document.

The hooks: `DeadLetterConsumer` replaces Celery's worker consumer (`worker_consumer`,
set by `workers.app.create_app`) and records in `on_decode_error` (no signal exists for
it), `on_unknown_message`, `on_unknown_task` and `on_invalid_task` (Celery sends
`task_rejected` / `task_unknown` there too, but the consumer has the raw message and
the app's Redis at hand); it also guards the task handler so a malformed message that
makes Celery's own parsing raise is refused instead of reaching the consumer loop.
Invalid payloads are recorded from the `task_postrun` signal (workers.signals)."""

from __future__ import annotations

import inspect
import json
import time
from collections.abc import Iterator
from typing import Any

from celery.worker.consumer import Consumer

from core.errors import ErrorCode
from core.logging import get_logger
from core.results import error_of

log = get_logger("vetq.dead_letter")

DEAD_LETTER_KEY = "vetq:dead"
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


def preview(body: Any) -> str:
    """At most PREVIEW_CHARS characters of a body, secrets masked."""
    from core.logging import redact_text

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
    from core.logging import redact_text

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


def _message_fields(message: Any) -> dict[str, Any]:
    headers = getattr(message, "headers", None)
    headers = headers if isinstance(headers, dict) else {}
    delivery = getattr(message, "delivery_info", None) or {}
    properties = getattr(message, "properties", None) or {}
    delivery = delivery if isinstance(delivery, dict) else {}
    return {
        "task": _text(headers.get("task")),
        "job_id": _text(headers.get("id") or properties.get("correlation_id")),
        "queue": _text(delivery.get("routing_key") or delivery.get("exchange")),
        "content_type": _text(getattr(message, "content_type", None)),
        "body": getattr(message, "body", None),
    }


def _text(value: Any) -> str | None:
    if value is None:
        return None
    return str(value)[:200]


def _reason_of(exc: BaseException | None, default: str) -> str:
    from kombu.exceptions import ContentDisallowed, DecodeError

    if isinstance(exc, ContentDisallowed):
        return REASON_CONTENT_DISALLOWED
    if isinstance(exc, DecodeError):
        return REASON_DECODE_ERROR
    return default


class DeadLetterConsumer(Consumer):
    """Celery's consumer, recording every message it refuses as a dead letter."""

    def _dead_letter(self, message: Any, reason: str, exc: BaseException | str | None) -> None:
        try:
            entry = make_entry(reason=reason, error=exc, **_message_fields(message))
            record(redis_of(self.app), entry)
        except Exception:
            log.exception("dead_letter_failed", reason=reason)

    def on_decode_error(self, message: Any, exc: BaseException) -> None:
        # Celery logs it and acknowledges: the message is not retried.
        super().on_decode_error(message, exc)
        self._dead_letter(message, _reason_of(exc, REASON_DECODE_ERROR), exc)

    def on_unknown_message(self, body: Any, message: Any) -> None:
        super().on_unknown_message(body, message)  # rejected without requeue
        self._dead_letter(message, REASON_UNKNOWN_MESSAGE, "not a Celery task message")

    def on_unknown_task(self, body: Any, message: Any, exc: BaseException) -> None:
        super().on_unknown_task(body, message, exc)  # rejected, marked failed (NotRegistered)
        name = (
            (getattr(message, "headers", None) or {}).get("task")
            if isinstance(getattr(message, "headers", None), dict)
            else None
        )
        self._dead_letter(message, REASON_UNKNOWN_TASK, f"no task named {name!r} on this worker")

    def on_invalid_task(self, body: Any, message: Any, exc: BaseException) -> None:
        super().on_invalid_task(body, message, exc)  # rejected without requeue
        self._dead_letter(message, _reason_of(exc, REASON_INVALID_TASK), exc)

    def on_connection_error_after_connected(self, exc: BaseException) -> None:
        # Celery closes the broken connection here; with the Redis transport, closing a
        # connection that was already collected can raise AttributeError (kombu restores
        # unacked messages through a client that is gone), which would stop the whole
        # worker when Redis restarts. The messages it held stay in Redis's unacked set
        # and are restored after the visibility timeout; the consumer reconnects.
        log.warning("broker_connection_lost", error=f"{type(exc).__name__}: {exc}", detail="reconnecting with backoff")
        try:
            super().on_connection_error_after_connected(exc)
        except Exception as cleanup:  # noqa: BLE001
            log.warning("broker_connection_cleanup_failed", error=f"{type(cleanup).__name__}: {cleanup}")
            self.connection = None

    def call_soon_ack(self, p: Any, *args: Any, **kwargs: Any) -> Any:
        # The ack of a job that finished after its broker connection was lost runs on a
        # channel that no longer has a client: kombu raises AttributeError, which would
        # stop the worker. The message stays unacknowledged in Redis and is redelivered
        # after the visibility timeout (the rerun answers from the response cache).
        def guarded(*a: Any, **kw: Any) -> Any:
            try:
                return p(*a, **kw)
            except AttributeError as exc:
                log.warning(
                    "ack_lost_with_connection",
                    error=f"{type(exc).__name__}: {exc}",
                    detail="the job is redelivered after the visibility timeout",
                )
                return None

        return super().call_soon_ack(guarded, *args, **kwargs)

    def create_task_handler(self, *args: Any, **kwargs: Any) -> Any:
        handler = super().create_task_handler(*args, **kwargs)
        connection_errors = tuple(self.connection_errors or ()) + tuple(getattr(self, "channel_errors", ()) or ())

        def on_task_received(message: Any) -> Any:
            try:
                return handler(message)
            except connection_errors:
                raise  # the consumer reconnects; the message stays unacknowledged
            except Exception as exc:  # noqa: BLE001 - a malformed message must not reach the loop
                # e.g. a JSON body that is a number or a string: Celery's parsing raises.
                try:
                    if not getattr(message, "acknowledged", False):
                        message.reject(requeue=False)
                except Exception:
                    log.warning("dead_letter_reject_failed", exc_info=True)
                self._dead_letter(message, _reason_of(exc, REASON_MALFORMED), exc)
                return None

        return on_task_received


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
