"""Bind each job's log context before it runs and clear it after, so every line a
task writes carries its trace id and nothing leaks into the next task on the thread."""

from __future__ import annotations

from typing import Any

import structlog
from celery import signals

from core.queue import KIND_OF_TASK, TRACE_HEADER

log = structlog.get_logger("vetq.worker")
_connected = False


def trace_id_of(request: Any) -> str | None:
    value = getattr(request, TRACE_HEADER, None)
    if not value:
        headers = getattr(request, "headers", None) or {}
        value = headers.get(TRACE_HEADER) if isinstance(headers, dict) else None
    return str(value) if value else None


def _bind(task_id: str | None = None, task: Any = None, **_: Any) -> None:
    structlog.contextvars.clear_contextvars()
    request = getattr(task, "request", None)
    delivery = getattr(request, "delivery_info", None) or {}
    structlog.contextvars.bind_contextvars(
        trace_id=trace_id_of(request),
        job_id=task_id,
        kind=KIND_OF_TASK.get(getattr(task, "name", ""), getattr(task, "name", None)),
        queue=delivery.get("routing_key"),
    )
    log.info("job_started")


def _clear(**_: Any) -> None:
    log.info("job_finished")
    structlog.contextvars.clear_contextvars()


def connect() -> None:
    global _connected
    if _connected:
        return
    signals.task_prerun.connect(_bind, weak=False)
    signals.task_postrun.connect(_clear, weak=False)
    _connected = True
