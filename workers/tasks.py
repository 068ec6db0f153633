"""The tasks: a JSON request in, a JSON result envelope out. Domain failures are
envelopes; only transient provider failures leave as exceptions, to be retried."""

from __future__ import annotations

import random
import threading
from typing import Any

import redis
import structlog
from celery import Celery, Task

from core.errors import ErrorCode, InvalidInputError, VetqError
from core.extraction.pipeline import ExtractionPipeline
from core.llm.client import LLMClient
from core.llm.factory import make_client
from core.extraction.schema import ErrorEnvelope
from core.llm.errors import LLMError
from core.llm.gate import CallGate, DirectGate
from core.llm.limits import parse_limits
from core.queue import TASK_EXTRACT, TASK_NOOP, TASK_REVIEW, TASK_VALIDATE, TELEMETRY_STREAM
from core.review.schema import ReviewError, ReviewErrorMeta, ReviewRequest
from core.review.service import config_from_settings, run_review
from core.review.telemetry import StreamSink, TelemetrySink
from core.settings import VetqSettings
from core.validation import parse_model
from workers.budget_ledger import RedisBudgetLedger, ScopedBudget, lease_s_for
from workers.call_gate import RedisCallGate
from workers.rate_limiter import RedisRateLimiter
from workers.response_cache import RedisResponseCache
from workers.signals import trace_id_of

BATCH_HEADER = "batch_id"
BATCH_BUDGET_HEADER = "batch_token_budget"
MAX_BACKOFF_S = 60.0

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
        import redis

        # One connection pool per process for the gate's state: limiter, ledger, cache.
        self.redis = redis.Redis.from_url(redis_url)
        self.limiter = (
            RedisRateLimiter(self.redis, parse_limits(settings.limits), window_s=settings.limit_window_s)
            if settings.fleet_limiter
            else None
        )
        self.ledger = RedisBudgetLedger(self.redis, lease_s=lease_s_for(settings))
        self.cache = RedisResponseCache(self.redis, settings.cache_ttl_s) if settings.cache_ttl_s > 0 else None

    def gate_for(self, task: Task, *, job_tokens: int) -> RedisCallGate:
        """The call gate of one job: the fleet's limiter and cache, and budgets for the
        job and, when it belongs to one, its batch. Keyed by the job id, so a retried
        job keeps its budget and its count of 429s."""
        job_id = task.request.id
        scopes = [f"job:{job_id}"]
        self.ledger.set_limit(scopes[0], job_tokens, self.settings.result_ttl_s)
        batch_id = header(task, BATCH_HEADER)
        budget = header(task, BATCH_BUDGET_HEADER)
        if batch_id:
            scopes.append(f"batch:{batch_id}")
            if budget is not None:
                self.ledger.set_limit(scopes[1], int(budget), self.settings.result_ttl_s)
        return RedisCallGate(
            self.redis,
            limiter=self.limiter,
            ledger=self.ledger,
            cache=self.cache,
            budget_scopes=scopes,
            max_sleep_s=self.settings.max_sleep_s,
            max_attempts=self.settings.max_attempts,
            attempt_key=f"job:{job_id}",
        )

    def pipeline(self) -> ExtractionPipeline:
        with self._lock:
            if self._pipeline is None:
                self._pipeline = ExtractionPipeline(self.settings, gate=self.gate)
            return self._pipeline

    def reviewer(self) -> LLMClient:
        with self._lock:
            if self._reviewer is None:
                self._reviewer = make_client(
                    self.settings.spec("reviewer"),
                    timeout_s=self.settings.provider_timeout_s,
                    record_to=self.settings.record_to,
                )
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


def header(task: Task, name: str) -> Any:
    value = getattr(task.request, name, None)
    if value is None:
        headers = getattr(task.request, "headers", None) or {}
        value = headers.get(name) if isinstance(headers, dict) else None
    return value


def retry_or_fail(task: Task, exc: LLMError, settings: VetqSettings) -> None:
    """A transient failure hands the worker slot back: the job goes back on its queue
    with a countdown from Retry-After, or full-jitter backoff. Stages already paid for
    come back from the response cache on the next attempt. Returns (so the caller
    writes an error envelope) once the attempts are spent."""
    attempt = task.request.retries + 1
    if attempt >= settings.max_attempts:
        log.warning("job_attempts_exhausted", error_code=exc.code.value, attempts=attempt)
        return
    countdown = getattr(exc, "retry_after_s", None)
    if countdown is None:
        countdown = random.uniform(0, min(MAX_BACKOFF_S, 2.0**attempt))
    log.info("job_retry", error_code=exc.code.value, attempt=attempt, countdown_s=round(countdown, 2))
    raise task.retry(exc=exc, countdown=countdown, max_retries=settings.max_attempts)


BENCH_MODE_HEADER = "bench_mode"


def raise_for_redis_outage(task: Task, exc: Exception, settings: VetqSettings) -> None:
    """Redis went away under a running job: put it back (Celery retries the publish
    until Redis answers) instead of failing it or marking it done."""
    log.warning("redis_unavailable_retrying_job", error=type(exc).__name__, attempt=task.request.retries + 1)
    raise task.retry(exc=exc, countdown=1.0 + random.uniform(0, 2.0), max_retries=settings.max_attempts + 10)


def review_job(
    context: WorkerContext, payload: Any, gate: CallGate | None = None, *, mode: str | None = None
) -> dict[str, Any]:
    trace_id = payload.get("trace_id") if isinstance(payload, dict) else None
    try:
        request = parse_model(ReviewRequest, payload, what="review request")
    except InvalidInputError as exc:
        return ReviewError.of(ErrorCode.INVALID_INPUT, exc.message, meta=ReviewErrorMeta(trace_id=trace_id)).model_dump(
            mode="json", exclude_none=True
        )
    gate = gate or context.gate
    budget = ScopedBudget(context.ledger, gate.budget_scopes) if isinstance(gate, RedisCallGate) else None
    try:
        outcome = run_review(
            request,
            context.reviewer,  # built only once the blindness check has passed
            gate=gate,
            budget=budget,
            config=config_from_settings(context.settings),
            trace_id=request.trace_id,
            telemetry=context.telemetry(),
            mode=mode,
        )
    except VetqError as exc:
        if isinstance(exc, LLMError) and exc.retryable:
            raise
        # A reviewer that cannot be built (no SDK, no key) is the job's answer, not a crash.
        outcome = ReviewError.of(exc.code, exc.message, meta=ReviewErrorMeta(trace_id=request.trace_id))
    return outcome.model_dump(mode="json", exclude_none=True)


def register(app: Celery, settings: VetqSettings, redis_url: str) -> WorkerContext:
    context = WorkerContext(settings, redis_url)
    app.conf.vetq_context = context

    # shared=False: these tasks belong to this app only, never to Celery's default app.
    def extraction(task: Task, payload: Any, kind: str) -> dict[str, Any]:
        payload = with_trace(task, payload, kind)
        try:
            gate = context.gate_for(task, job_tokens=settings.max_job_tokens)
            outcome = context.pipeline().run(payload, raise_retryable=True, gate=gate)
        except redis.RedisError as exc:
            raise_for_redis_outage(task, exc, settings)
        except LLMError as exc:
            retry_or_fail(task, exc, settings)
            trace_id = payload.get("trace_id") if isinstance(payload, dict) else None
            outcome = ErrorEnvelope(error_code=exc.code, error_message=exc.message, trace_id=trace_id)
        return outcome.model_dump(mode="json")

    @app.task(name=TASK_EXTRACT, bind=True, shared=False)
    def extract(self: Task, payload: Any) -> dict[str, Any]:
        return extraction(self, payload, "extract")

    @app.task(name=TASK_VALIDATE, bind=True, shared=False)
    def validate(self: Task, payload: Any) -> dict[str, Any]:
        return extraction(self, payload, "validate")

    @app.task(name=TASK_REVIEW, bind=True, shared=False)
    def review(self: Task, payload: Any) -> dict[str, Any]:
        payload = with_trace(self, payload, None)
        try:
            gate = context.gate_for(self, job_tokens=settings.max_review_tokens)
            # Benchmark-only modes arrive in a header the producer faces never set.
            return review_job(context, payload, gate, mode=header(self, BENCH_MODE_HEADER))
        except redis.RedisError as exc:
            raise_for_redis_outage(self, exc, settings)
        except LLMError as exc:
            retry_or_fail(self, exc, settings)
            trace_id = payload.get("trace_id") if isinstance(payload, dict) else None
            return ReviewError.of(exc.code, exc.message, meta=ReviewErrorMeta(trace_id=trace_id)).model_dump(
                mode="json", exclude_none=True
            )

    @app.task(name=TASK_NOOP, shared=False)
    def noop(payload: Any = None) -> dict[str, Any]:
        """Does nothing: the raw-Celery baseline of the queue benchmark, and a probe."""
        return {"status": "ok"}

    return context
