"""The worker's consumer: Celery's, recording every message it refuses as a dead
letter (workers.dead_letter), and guarding against two ways Celery's own cleanup can
stop a worker when the broker connection drops.

`DeadLetterConsumer` replaces Celery's worker consumer (`worker_consumer`, set by
`workers.app.create_app`) and records in `on_decode_error` (no signal exists for it),
`on_unknown_message`, `on_unknown_task` and `on_invalid_task` (Celery sends
`task_rejected` / `task_unknown` there too, but the consumer has the raw message and
the app's Redis at hand); it also guards the task handler so a malformed message that
makes Celery's own parsing raise is refused instead of reaching the consumer loop.
These are overrides of Celery internals: tests/test_celery_internals.py checks that
each hook still exists with its signature, and pyproject.toml bounds Celery."""

from __future__ import annotations

from typing import Any

from celery.worker.consumer import Consumer

from vetq.core.logging import get_logger
from vetq.workers.dead_letter import (
    REASON_CONTENT_DISALLOWED,
    REASON_DECODE_ERROR,
    REASON_INVALID_TASK,
    REASON_MALFORMED,
    REASON_UNKNOWN_MESSAGE,
    REASON_UNKNOWN_TASK,
    make_entry,
    record,
    redis_of,
)

log = get_logger("vetq.dead_letter")


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
