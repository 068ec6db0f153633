"""Bind each job's log context before it runs and clear it after, so every line a
task writes carries its trace id and nothing leaks into the next task on the thread.

A job's one outcome line is vetq's `job_finished` (its state, its result's status and
error code, its run time), never Celery's success line, which would carry a copy of
the result (core/logging.py drops it; the tasks build no such copy)."""

from __future__ import annotations

import time
from typing import Any

import structlog
from celery import signals

from vetq.core.logging import get_logger
from vetq.core.queue import KIND_OF_TASK, TASK_WEBHOOK, TRACE_HEADER
from vetq.core.tracing import TRACEPARENT_HEADER, TRACESTATE_HEADER, get_tracer

log = get_logger("vetq.worker")
_connected = False


def trace_id_of(request: Any) -> str | None:
    value = getattr(request, TRACE_HEADER, None)
    if not value:
        headers = getattr(request, "headers", None) or {}
        value = headers.get(TRACE_HEADER) if isinstance(headers, dict) else None
    return str(value) if value else None


def _metrics_started(task: Any = None, **_: Any) -> None:
    """Prometheus (workers/metrics.py): the time the job waited in its queue."""
    from vetq.workers import metrics

    if getattr(task, "name", None) == TASK_WEBHOOK:
        return  # a delivery is no job: counted by workers/webhooks.py
    request = getattr(task, "request", None)
    delivery = getattr(request, "delivery_info", None) or {}
    metrics.job_started(task, delivery.get("routing_key"), metrics.sent_at_of(request))


def _metrics_finished(task: Any = None, retval: Any = None, state: str | None = None, **_: Any) -> None:
    """Prometheus: the job's outcome, read from its envelope as job_finished reads it, and its run time."""
    from vetq.workers import metrics

    if getattr(task, "name", None) == TASK_WEBHOOK:
        return
    request = getattr(task, "request", None)
    started = getattr(request, "vetq_started_at", None)
    runtime_s = time.monotonic() - started if isinstance(started, float) else None
    delivery = getattr(request, "delivery_info", None) or {}
    metrics.job_finished(task, delivery.get("routing_key"), state, retval, runtime_s)


def _metrics_process_exited(pid: int | None = None, **_: Any) -> None:
    from vetq.workers import metrics

    metrics.process_exited(pid)  # a prefork child's metrics files: marked dead


def _bind(task_id: str | None = None, task: Any = None, **_: Any) -> None:
    structlog.contextvars.clear_contextvars()
    request = getattr(task, "request", None)
    delivery = getattr(request, "delivery_info", None) or {}
    trace_id = trace_id_of(request)
    kind = KIND_OF_TASK.get(getattr(task, "name", ""), getattr(task, "name", None))
    if request is not None and get_tracer().enabled:
        trace_id = _start_task_span(request, task, task_id, trace_id, kind, delivery.get("routing_key")) or trace_id
    structlog.contextvars.bind_contextvars(
        trace_id=trace_id,
        job_id=task_id,
        kind=kind,
        queue=delivery.get("routing_key"),
    )
    if request is not None:
        request.vetq_started_at = time.monotonic()
    log.info("job_started")


def _start_task_span(
    request: Any, task: Any, task_id: str | None, trace_id: str | None, kind: str | None, queue: str | None
) -> str | None:
    """The task span, current until task_postrun: in the job's trace, a child of the
    producer span whose traceparent the message carries (or linked to it). Its trace id
    (the job's own) is the one the job's log lines carry."""
    headers = getattr(request, "headers", None)
    carrier = dict(headers) if isinstance(headers, dict) else {}
    for name in (TRACEPARENT_HEADER, TRACESTATE_HEADER):
        value = getattr(request, name, None)
        if isinstance(value, str):
            carrier[name] = value
    attributes = {
        "messaging.system": "celery",
        "messaging.operation.type": "process",
        "messaging.destination.name": queue,
        "messaging.message.id": task_id,
        "vetq.task": getattr(task, "name", None),
        "vetq.kind": kind,
    }
    span_context = get_tracer().span_in_trace(
        getattr(task, "name", None) or "vetq.task", trace_id, attributes, kind="consumer", carrier=carrier
    )
    span = span_context.__enter__()
    request.vetq_span = (span_context, span)
    return span.trace_id


def _end_task_span(request: Any, state: str | None, outcome: dict[str, Any]) -> None:
    held = getattr(request, "vetq_span", None)
    if held is None:
        return
    request.vetq_span = None
    span_context, span = held
    span.set_attribute("vetq.state", state)
    span.set_attribute("vetq.status", outcome.get("status"))
    if outcome.get("error_code"):
        span.set_error(str(outcome["error_code"]))
    elif state == "FAILURE":  # RETRY (requeued) and WAITING (parked) are no failures
        span.set_error(str(state))
    span_context.__exit__(None, None, None)


def outcome_of(retval: Any) -> dict[str, Any]:
    """What a job's log line says of its result: the status and the error code, never
    a value from it (results hold document data)."""
    if not isinstance(retval, dict):
        return {}
    outcome: dict[str, Any] = {"status": retval.get("status")}
    error = retval.get("error")
    if isinstance(error, dict) and error.get("code"):
        outcome["error_code"] = error["code"]
    return outcome


def _clear(task: Any = None, retval: Any = None, state: str | None = None, **_: Any) -> None:
    started = getattr(getattr(task, "request", None), "vetq_started_at", None)
    runtime_ms = round((time.monotonic() - started) * 1000, 1) if isinstance(started, float) else None
    outcome = outcome_of(retval)
    log.info("job_finished", state=state, runtime_ms=runtime_ms, **outcome)
    _end_task_span(getattr(task, "request", None), state, outcome)
    structlog.contextvars.clear_contextvars()


def _dead_letter_invalid_input(
    task_id: str | None = None, task: Any = None, args: Any = None, kwargs: Any = None, retval: Any = None, **_: Any
) -> None:
    from vetq.workers.dead_letter import record_task_outcome

    try:
        record_task_outcome(task, task_id, args, kwargs, retval)
    except Exception:
        log.exception("dead_letter_failed")


def _dead_letter_bad_arguments(
    task_id: str | None = None,
    exception: BaseException | None = None,
    args: Any = None,
    kwargs: Any = None,
    sender: Any = None,
    **_: Any,
) -> None:
    from vetq.workers.dead_letter import record_bad_arguments

    try:
        if exception is not None:
            record_bad_arguments(sender, task_id, exception, args, kwargs)
    except Exception:
        log.exception("dead_letter_failed")


def _deliver_result(
    task: Any = None, task_id: str | None = None, retval: Any = None, state: str | None = None, **_: Any
) -> None:
    """A job that ended and carries a callback_url: its result's delivery is published
    (workers/webhooks.py). Never raises: the job's own outcome stands."""
    from vetq.workers.webhooks import schedule_delivery

    if task is None or task_id is None or getattr(task, "name", None) not in KIND_OF_TASK:
        return
    try:
        schedule_delivery(task, task_id, state, retval)
    except Exception:
        log.exception("webhook_not_scheduled")


def _hand_to_inbox(
    task_id: str | None = None,
    task: Any = None,
    args: Any = None,
    retval: Any = None,
    state: str | None = None,
    **_: Any,
) -> None:
    """VETQ_INBOX: a needs_review result (and, when asked, a review's verdict) goes to
    the human-review inbox's stream (workers/inbox_handoff.py). An ok result returns
    at the status check."""
    if state != "SUCCESS" or not isinstance(retval, dict) or retval.get("status") not in ("needs_review", "ok"):
        return
    context = getattr(getattr(getattr(task, "app", None), "conf", None), "vetq_context", None)
    settings = getattr(context, "settings", None)
    if context is None or settings is None or not settings.inbox or not task_id:
        return
    from vetq.workers import inbox_handoff
    from vetq.workers.metrics import header_of

    name = getattr(task, "name", "")
    if not inbox_handoff.needs_a_person(name, retval, review_verdicts=settings.inbox_review_verdicts):
        return
    request = getattr(task, "request", None)
    headers = {key: header_of(request, key) for key in inbox_handoff.HEADERS}
    payload = args[0] if isinstance(args, (list, tuple)) and args else None
    inbox_handoff.hand_over(context.redis, inbox_handoff.entry_of(name, task_id, payload, retval, headers))


def _flush_traces(**_: Any) -> None:
    try:
        get_tracer().flush()
    except Exception:
        log.exception("trace_flush_failed")


def connect() -> None:
    global _connected
    if _connected:
        return
    from vetq.core.logging import hide_task_data

    hide_task_data()  # Celery's task lines would print each job's result: the extracted data
    signals.task_prerun.connect(_bind, weak=False)
    signals.task_prerun.connect(_metrics_started, weak=False)
    signals.task_postrun.connect(_metrics_finished, weak=False)
    signals.worker_process_shutdown.connect(_metrics_process_exited, weak=False)
    signals.task_postrun.connect(_dead_letter_invalid_input, weak=False)
    signals.task_postrun.connect(_deliver_result, weak=False)
    signals.task_postrun.connect(_hand_to_inbox, weak=False)
    signals.task_postrun.connect(_clear, weak=False)
    signals.task_failure.connect(_dead_letter_bad_arguments, weak=False)
    # Spans still in the batch processor's queue are exported before a process ends
    # (a prefork child leaves by os._exit, past any atexit hook).
    signals.worker_process_shutdown.connect(_flush_traces, weak=False)
    signals.worker_shutdown.connect(_flush_traces, weak=False)
    _connected = True
