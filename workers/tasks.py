"""The tasks: a JSON request in, a JSON result envelope out. Domain failures are
envelopes; only transient provider failures leave as exceptions, to be retried."""

from __future__ import annotations

import threading
from typing import Any

import structlog
from celery import Celery, Task

from core.extraction.pipeline import ExtractionPipeline
from core.queue import TASK_EXTRACT, TASK_VALIDATE
from core.settings import VetqSettings

log = structlog.get_logger("vetq.worker")

_pipeline: ExtractionPipeline | None = None
_pipeline_lock = threading.Lock()
_pipeline_override: ExtractionPipeline | None = None


def use_pipeline(pipeline: ExtractionPipeline | None) -> None:
    """Run jobs in this process with the given pipeline (tests, the demo's replay run)."""
    global _pipeline_override
    _pipeline_override = pipeline


def pipeline_for(settings: VetqSettings) -> ExtractionPipeline:
    """Built once per worker process and reused by every job it runs."""
    global _pipeline
    if _pipeline_override is not None:
        return _pipeline_override
    with _pipeline_lock:
        if _pipeline is None:
            _pipeline = ExtractionPipeline(settings)
        return _pipeline


def register(app: Celery, settings: VetqSettings) -> None:
    def run_extraction(task: Task, payload: Any, kind: str) -> dict[str, Any]:
        if isinstance(payload, dict):
            payload = {**payload, "kind": kind}
            from workers.signals import trace_id_of

            if not payload.get("trace_id"):
                payload["trace_id"] = trace_id_of(task.request)
        outcome = pipeline_for(settings).run(payload)
        return outcome.model_dump(mode="json")

    @app.task(name=TASK_EXTRACT, bind=True, shared=False)
    def extract(self: Task, payload: Any) -> dict[str, Any]:
        return run_extraction(self, payload, "extract")

    @app.task(name=TASK_VALIDATE, bind=True, shared=False)
    def validate(self: Task, payload: Any) -> dict[str, Any]:
        return run_extraction(self, payload, "validate")
