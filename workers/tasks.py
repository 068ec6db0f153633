"""The tasks: a JSON request in, a JSON result envelope out. Domain failures are
envelopes; only transient provider failures leave as exceptions, to be retried."""

from __future__ import annotations

import threading
from typing import Any

import structlog
from celery import Celery, Task

from core.errors import ErrorCode, InvalidInputError
from core.extraction.pipeline import ExtractionPipeline
from core.llm.client import LLMClient
from core.llm.factory import make_client
from core.llm.gate import CallGate, DirectGate
from core.queue import TASK_EXTRACT, TASK_NOOP, TASK_REVIEW, TASK_VALIDATE, TELEMETRY_STREAM
from core.review.schema import ReviewError, ReviewErrorMeta, ReviewRequest
from core.review.service import config_from_settings, run_review
from core.review.telemetry import StreamSink, TelemetrySink
from core.settings import VetqSettings
from core.validation import parse_model
from workers.signals import trace_id_of

log = structlog.get_logger("vetq.worker")


class WorkerContext:
    """What a worker process builds once and reuses for every job: the extraction
    pipeline, the reviewer client, the call gate and the telemetry sink."""

    def __init__(self, settings: VetqSettings, redis_url: str) -> None:
        self.settings = settings
        self.redis_url = redis_url
        self._lock = threading.Lock()
        self._pipeline: ExtractionPipeline | None = None
        self._reviewer: LLMClient | None = None
        self.gate: CallGate = DirectGate()
        self._telemetry: TelemetrySink | None = None

    def pipeline(self) -> ExtractionPipeline:
        with self._lock:
            if self._pipeline is None:
                self._pipeline = ExtractionPipeline(self.settings, gate=self.gate)
            return self._pipeline

    def reviewer(self) -> LLMClient:
        with self._lock:
            if self._reviewer is None:
                self._reviewer = make_client(self.settings.spec("reviewer"), timeout_s=self.settings.provider_timeout_s)
            return self._reviewer

    def telemetry(self) -> TelemetrySink | None:
        if not self.settings.telemetry:
            return None
        with self._lock:
            if self._telemetry is None:
                import redis

                self._telemetry = StreamSink(redis.Redis.from_url(self.redis_url), TELEMETRY_STREAM)
            return self._telemetry

    # Tests and the demo serve jobs with prepared parts.
    def replace(self, pipeline: ExtractionPipeline) -> None:
        with self._lock:
            self._pipeline = pipeline

    def replace_reviewer(self, client: LLMClient) -> None:
        with self._lock:
            self._reviewer = client


def with_trace(task: Task, payload: Any, kind: str | None) -> Any:
    """The payload as the stage reads it: its kind fixed by the task name, and the
    trace id from the message headers when the payload carries none."""
    if not isinstance(payload, dict):
        return payload
    payload = {**payload, "kind": kind} if kind else dict(payload)
    if not payload.get("trace_id"):
        payload["trace_id"] = trace_id_of(task.request)
    return payload


def review_job(context: WorkerContext, payload: Any) -> dict[str, Any]:
    trace_id = payload.get("trace_id") if isinstance(payload, dict) else None
    try:
        request = parse_model(ReviewRequest, payload, what="review request")
    except InvalidInputError as exc:
        return ReviewError.of(ErrorCode.INVALID_INPUT, exc.message, meta=ReviewErrorMeta(trace_id=trace_id)).model_dump(
            mode="json", exclude_none=True
        )
    outcome = run_review(
        request,
        context.reviewer,  # built only once the blindness check has passed
        gate=context.gate,
        config=config_from_settings(context.settings),
        trace_id=request.trace_id,
        telemetry=context.telemetry(),
    )
    return outcome.model_dump(mode="json", exclude_none=True)


def register(app: Celery, settings: VetqSettings, redis_url: str) -> WorkerContext:
    context = WorkerContext(settings, redis_url)
    app.conf.vetq_context = context

    # shared=False: these tasks belong to this app only, never to Celery's default app.
    @app.task(name=TASK_EXTRACT, bind=True, shared=False)
    def extract(self: Task, payload: Any) -> dict[str, Any]:
        return context.pipeline().run(with_trace(self, payload, "extract")).model_dump(mode="json")

    @app.task(name=TASK_VALIDATE, bind=True, shared=False)
    def validate(self: Task, payload: Any) -> dict[str, Any]:
        return context.pipeline().run(with_trace(self, payload, "validate")).model_dump(mode="json")

    @app.task(name=TASK_REVIEW, bind=True, shared=False)
    def review(self: Task, payload: Any) -> dict[str, Any]:
        return review_job(context, with_trace(self, payload, None))

    @app.task(name=TASK_NOOP, shared=False)
    def noop(payload: Any = None) -> dict[str, Any]:
        """Does nothing: the raw-Celery baseline of the queue benchmark, and a probe."""
        return {"status": "ok"}

    return context
