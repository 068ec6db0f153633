"""The tasks: a JSON request in, a JSON result envelope out. Domain failures are
envelopes; only transient provider failures leave as exceptions, to be retried."""

from __future__ import annotations

import threading
from typing import Any

import structlog
from celery import Celery, Task

from core.extraction.pipeline import ExtractionPipeline
from core.queue import TASK_EXTRACT, TASK_NOOP, TASK_VALIDATE
from core.settings import VetqSettings
from workers.signals import trace_id_of

log = structlog.get_logger("vetq.worker")


class PipelineHolder:
    """One pipeline per worker app (so per worker process), built on first use."""

    def __init__(self, settings: VetqSettings) -> None:
        self.settings = settings
        self._pipeline: ExtractionPipeline | None = None
        self._lock = threading.Lock()

    def get(self) -> ExtractionPipeline:
        with self._lock:
            if self._pipeline is None:
                self._pipeline = ExtractionPipeline(self.settings)
            return self._pipeline

    def replace(self, pipeline: ExtractionPipeline) -> None:
        """Serve jobs with a prepared pipeline (tests inject scripted models here)."""
        with self._lock:
            self._pipeline = pipeline


def with_trace(task: Task, payload: Any, kind: str) -> Any:
    """The payload as the pipeline reads it: its kind fixed by the task name, and the
    trace id from the message headers when the payload carries none."""
    if not isinstance(payload, dict):
        return payload
    payload = {**payload, "kind": kind}
    if not payload.get("trace_id"):
        payload["trace_id"] = trace_id_of(task.request)
    return payload


def register(app: Celery, settings: VetqSettings) -> None:
    holder = PipelineHolder(settings)
    app.conf.vetq_pipeline = holder

    # shared=False: these tasks belong to this app only, never to Celery's default app.
    @app.task(name=TASK_EXTRACT, bind=True, shared=False)
    def extract(self: Task, payload: Any) -> dict[str, Any]:
        return holder.get().run(with_trace(self, payload, "extract")).model_dump(mode="json")

    @app.task(name=TASK_VALIDATE, bind=True, shared=False)
    def validate(self: Task, payload: Any) -> dict[str, Any]:
        return holder.get().run(with_trace(self, payload, "validate")).model_dump(mode="json")

    @app.task(name=TASK_NOOP, shared=False)
    def noop(payload: Any = None) -> dict[str, Any]:
        """Does nothing: the raw-Celery baseline of the queue benchmark, and a probe."""
        return {"status": "ok"}
