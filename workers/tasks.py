"""The tasks: a JSON request in, a JSON result envelope out. Domain failures are
envelopes; only transient provider failures leave as exceptions, to be retried."""

from __future__ import annotations

import json
import math
import threading
import time
from typing import Any, NoReturn

import redis
from celery import Celery, Task
from celery.exceptions import Ignore, SoftTimeLimitExceeded

from vetq.core.errors import ErrorCode, InvalidInputError, VetqError
from vetq.core.extraction.pipeline import ExtractionPipeline
from vetq.core.extraction.schema import ExtractionError
from vetq.core.job_options import check_tenant
from vetq.core.llm.client import LLMClient
from vetq.core.llm.errors import LLMError
from vetq.core.llm.factory import make_client
from vetq.core.llm.gate import CallGate, DirectGate
from vetq.core.llm.limits import parse_limits
from vetq.core.llm.prices import budget_micro_usd, check_budget_usd
from vetq.core.logging import get_logger
from vetq.core.queue import (
    BATCH_BUDGET_HEADER,
    BATCH_BUDGET_USD_HEADER,
    BATCH_HEADER,
    BENCH_MODE_HEADER,
    BUDGET_USD_HEADER,
    BULK_DEADLINE_HEADER,
    BULK_WAITING_STATE,
    CALLBACK_URL_HEADER,
    LANE_HEADER,
    PRIORITY_HEADER,
    REALTIME_FALLBACK_HEADER,
    SENT_AT_HEADER,
    TASK_EXTRACT,
    TASK_NOOP,
    TASK_QUEUES,
    TASK_REVIEW,
    TASK_VALIDATE,
    TENANT_HEADER,
    TRACE_HEADER,
    priority_step,
    requeue_step_s,
)
from vetq.core.redis_keys import TELEMETRY_STREAM, batch_scope, cancel_key, job_scope, tenant_scope, usd_scope
from vetq.core.results import RESULT_FORMAT, canceled_result
from vetq.core.review.schema import ReviewError, ReviewErrorMeta, ReviewRequest
from vetq.core.review.service import config_from_settings, run_review
from vetq.core.review.telemetry import StreamSink, TelemetrySink
from vetq.core.settings import VetqSettings
from vetq.core.tenants import window_start
from vetq.core.tracing import TRACEPARENT_HEADER, TRACESTATE_HEADER
from vetq.core.validation import parse_model
from vetq.workers.budget_ledger import RedisBudgetLedger, lease_s_for
from vetq.workers.bulk_coordinator import BulkCoordinator
from vetq.workers.bulk_lane import BulkJob, BulkWaitError
from vetq.workers.bulk_store import BulkStore, ParkedJob
from vetq.workers.call_gate import GateStateUnavailableError, RedisCallGate, full_jitter_backoff_s
from vetq.workers.rate_limiter import RedisRateLimiter
from vetq.workers.redis_pool import (
    POOL_EXHAUSTED,
    exhaustion_message,
    log_exhaustion,
    redis_pool_size,
    worker_redis,
)
from vetq.workers.response_cache import RedisResponseCache
from vetq.workers.result_backend import CANCELED_ATTRIBUTE
from vetq.workers.signals import trace_id_of
from vetq.workers.tenant_usage import TenantUsage

# A job's own retry counts travel in its message headers (Task.retry keeps the headers
# it is given), apart from Celery's `retries`, which every requeue (and every parked
# step) bumps: a Redis blip must not spend an attempt meant for the provider.
PROVIDER_RETRIES_HEADER = "vetq_provider_retries"
OUTAGE_RETRIES_HEADER = "vetq_outage_retries"
# Epoch seconds before which a requeued job must not run (set when its wait is longer
# than one requeue step); a delivery that wakes earlier parks again.
NOT_BEFORE_HEADER = "vetq_not_before"
# A benchmark-only review mode (`vetq bench review` sets it; producers never do).
EXTRA_OUTAGE_RETRIES = 10
# The length of the repr Celery's tracer makes of a vetq task's result: none.
RESULT_REPR_MAXSIZE = 0
EARLY_WAKE_TOLERANCE_S = 0.05
# A tenant's budget scope outlives its window by this much: a call reserved in the
# window's last seconds still settles on it.
TENANT_SCOPE_MARGIN_S = 3600

log = get_logger("vetq.worker")


class WorkerContext:
    """What a worker process builds once and reuses for every job: the extraction
    pipeline, the reviewer client, the call gate and the telemetry sink."""

    def __init__(self, settings: VetqSettings, redis_url: str) -> None:
        self.settings = settings
        self.redis_url = redis_url
        self._lock = threading.Lock()
        self._pipeline: ExtractionPipeline | None = None
        self._reviewer: LLMClient | None = None
        self.prices = settings.price_table()
        self.gate: CallGate = DirectGate(prices=self.prices)
        self._telemetry: TelemetrySink | None = None
        # One connection pool per process for the gate's state (limiter, ledger, cache),
        # dead letters and telemetry: a blocking pool, grown to the worker's concurrency
        # before it starts (workers/app.size_redis_pools), so a job thread waits for a
        # connection rather than failing as if Redis were down.
        self.redis = worker_redis(redis_url, max_connections=redis_pool_size(None))
        self.limiter = (
            RedisRateLimiter(self.redis, parse_limits(settings.limits), window_s=settings.limit_window_s)
            if settings.fleet_limiter
            else None
        )
        self.ledger = RedisBudgetLedger(self.redis, lease_s=lease_s_for(settings))
        self.cache = RedisResponseCache(self.redis, settings.cache_ttl_s) if settings.cache_ttl_s > 0 else None
        self.bulk_store = BulkStore(self.redis, resolved_ttl_s=settings.result_ttl_s)
        self.tenants = settings.tenant_table()
        self.tenant_usage = TenantUsage(self.redis, settings.tenant_window_s)

    def gate_for(self, task: Task, *, job_tokens: int) -> RedisCallGate:
        """The call gate of one job: the fleet's limiter and cache, and budgets for the
        job and, when it belongs to one, its batch. Keyed by the job id, so a retried
        job keeps its budget and its count of 429s. The gate gives each scope its
        limit (once) when the job's first model call needs the ledger: building it
        costs no round trip, and a job that calls no model leaves no budget key."""
        job_id = task.request.id
        scopes = [job_scope(job_id)]
        limits = {scopes[0]: job_tokens}
        batch_id = header(task, BATCH_HEADER)
        budget = header(task, BATCH_BUDGET_HEADER)
        if batch_id:
            scopes.append(batch_scope(batch_id))
            if budget is not None:
                limits[scopes[1]] = int(budget)
        usd_scopes = self._usd_scopes(task, job_id, batch_id, limits)
        tenant = tenant_of(task)
        ttls: dict[str, int] = {}
        if tenant is not None:
            self._tenant_budgets(tenant, scopes, usd_scopes, limits, ttls)
        return RedisCallGate(
            self.redis,
            limiter=self.limiter,
            ledger=self.ledger,
            cache=self.cache,
            budget_scopes=scopes,
            usd_scopes=usd_scopes,
            budget_limits=limits,
            budget_ttl_s=self.settings.result_ttl_s,
            budget_ttls=ttls,
            prices=self.prices,
            max_sleep_s=self.settings.max_sleep_s,
            max_attempts=self.settings.max_attempts,
            attempt_key=job_scope(job_id),
            # The hard time limit, held by the gate because the thread and solo pools
            # do not enforce Celery's (prefork does, and its soft limit strikes first).
            deadline=time.monotonic() + self.settings.task_time_limit_s,
            bulk=bulk_job_of(task, batch_id),
            bulk_store=self.bulk_store,
            cancel_key=cancel_key(job_id),
            tenant=tenant,
            tenant_weight=self.tenants.of(tenant).weight,
            usage=self.tenant_usage,
        )

    def canceled_at_start(self, task: Task) -> bool:
        """Whether the job was canceled before this run: the STARTED write read its mark
        (workers/result_backend.py); where none did (VETQ_TRACK_STARTED=off), one read."""
        canceled = getattr(task.request, CANCELED_ATTRIBUTE, None)
        if canceled is None:
            try:
                canceled = bool(self.redis.exists(cancel_key(task.request.id)))
            except redis.RedisError as exc:
                raise_for_redis_outage(task, exc, self.settings)
        return bool(canceled)

    def _tenant_budgets(
        self, tenant: str, scopes: list[str], usd_scopes: list[str], limits: dict[str, int], ttls: dict[str, int]
    ) -> None:
        """The tenant's budgets for the current window (VETQ_TENANT_LIMITS) as ledger
        scopes, kept until the window has ended. A job's calls count in the window it
        started in; each scope gets its limit once, so a changed limit applies from the
        next window."""
        limit = self.tenants.of(tenant)
        if limit.tokens is None and limit.usd is None:
            return
        now = time.time()
        window_s = self.settings.tenant_window_s
        start = window_start(now, window_s)
        scope = tenant_scope(tenant, start)
        ttl = max(1, math.ceil(start + window_s - now)) + TENANT_SCOPE_MARGIN_S
        if limit.tokens is not None:
            scopes.append(scope)
            limits[scope], ttls[scope] = limit.tokens, ttl
        if limit.usd is not None:
            usd_scopes.append(usd_scope(scope))
            limits[usd_scopes[-1]], ttls[usd_scopes[-1]] = budget_micro_usd(limit.usd), ttl

    def park(self, task: Task, payload: Any, wait: BulkWaitError, gate: RedisCallGate) -> dict[str, Any]:
        """Park a bulk job on the request it waits for, and give its worker slot back
        (Ignore: the message is acknowledged, nothing is written as its result). Its
        message is kept with the request and published again when the answer lands.
        A request answered meanwhile runs the job again at once instead. A job canceled
        since its gate looked is not parked: its canceled result is returned."""
        bulk = gate.bulk
        assert bulk is not None
        # WAITING is written before the job is parked: once parked it may be woken and
        # finish at once, and a later write would hide its result.
        task.update_state(state=BULK_WAITING_STATE, meta={"lane": "bulk", "model": wait.model_key})
        if self.redis.exists(cancel_key(task.request.id)):
            # A client that canceled it before WAITING was written saw it running and only
            # marked it: parked now, nothing would ever end it.
            gate.release_reserved(wait.new_request)
            return canceled_run(task, payload, self.ledger, parking=True)
        outcome = self.bulk_store.park(
            job_id=task.request.id,
            digest=wait.digest,
            model_key=wait.model_key,
            new_request=wait.new_request,
            deadline=bulk.deadline,
            fallback=bulk.realtime_fallback,
            job={
                "task": task.name,
                "queue": TASK_QUEUES.get(task.name, ""),
                "payload": json.dumps(payload),
                "headers": json.dumps(message_headers(task)),
            },
        )
        if outcome != "created":
            gate.release_reserved(wait.new_request)  # another job's request carries the budget
        if outcome == "resolved":
            requeue(task, None, self.settings, wait_s=0.0)
        log.info("job_waiting_for_batch", model_key=wait.model_key, request=outcome)
        raise Ignore()

    def publish_parked(self, app: Celery, parked: ParkedJob) -> None:
        """Send a parked job again, with its own id, headers and priority, once its
        answer landed (queued again from now, for the queued-time metric)."""
        app.send_task(
            parked.task,
            args=[parked.payload],
            task_id=parked.job_id,
            queue=parked.queue or None,
            priority=priority_step(parked.headers.get(PRIORITY_HEADER)),
            headers={**parked.headers, SENT_AT_HEADER: time.time()},
        )

    def bulk_coordinator(self, app: Celery, *, lease_s: float | None = None) -> BulkCoordinator:
        return BulkCoordinator(
            self.redis,
            self.settings,
            store=self.bulk_store,
            cache=self.cache,
            ledger=self.ledger,
            prices=self.prices,
            publish=lambda parked: self.publish_parked(app, parked),
            deliver_canceled=lambda job_id, headers: _deliver_canceled(app, job_id, headers),
            lease_s=lease_s,
        )

    def _usd_scopes(self, task: Task, job_id: str, batch_id: Any, limits: dict[str, int]) -> list[str]:
        """The dollar budgets the job's headers carry (its own, its batch's) as ledger
        scopes in micro-dollars, their limits added to `limits` (the gate sets each
        once: a re-delivered job keeps what it spent)."""
        wanted = [(job_scope(job_id), header(task, BUDGET_USD_HEADER))]
        if batch_id:
            wanted.append((batch_scope(batch_id), header(task, BATCH_BUDGET_USD_HEADER)))
        scopes = []
        for scope, budget in wanted:
            if budget is not None:
                scopes.append(usd_scope(scope))
                limits[scopes[-1]] = usd_limit(budget)
        return scopes

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
                self._telemetry = StreamSink(self.redis, TELEMETRY_STREAM)
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


def canceled_run(task: Task, message: Any, ledger: RedisBudgetLedger, *, parking: bool = False) -> dict[str, Any]:
    """The result of a run that found its job canceled where it holds no usage: at its
    start (it calls nothing), or about to park on the bulk lane. What was paid for (by
    an earlier run: a requeued job, a bulk job woken from its batch) is not this run's
    to know: when the job's budget scope shows a spend, its cost reads null (unknown),
    never 0."""
    log.info("job_canceled", stage="park" if parking else "start")
    trace_id = message.get("trace_id") if isinstance(message, dict) else None
    earlier = parking or int(getattr(task.request, "retries", 0) or 0) > 0 or header(task, LANE_HEADER) == "bulk"
    if parking:
        text = "the job was canceled before it waited for a provider batch"
    else:
        text = "the job was canceled between two of its runs" if earlier else "the job was canceled before it ran"
    return canceled_result(
        text,
        trace_id=trace_id or trace_id_of(task.request),
        spent_unknown=earlier and ledger.spent(job_scope(task.request.id)) > 0,
    )


def usd_limit(budget: Any) -> int:
    """A dollar budget from a message header, in micro-dollars. A value no producer
    sends (not a positive number) allows nothing rather than everything."""
    try:
        dollars = check_budget_usd(budget)
    except InvalidInputError:
        log.warning("budget_header_invalid")
        return 0
    return budget_micro_usd(dollars) if dollars is not None else 0


def tenant_of(task: Task) -> str | None:
    """The tenant a job runs for (its `vetq_tenant` header). A value no producer sends
    is logged and the job runs without a tenant, as a job that names none would."""
    value = header(task, TENANT_HEADER)
    try:
        return check_tenant(value)
    except InvalidInputError:
        log.warning("tenant_header_invalid")
        return None


def bulk_job_of(task: Task, batch_id: Any) -> BulkJob | None:
    """The bulk lane's view of a job whose headers ask for it (None: realtime)."""
    if header(task, LANE_HEADER) != "bulk":
        return None
    try:
        deadline = float(header(task, BULK_DEADLINE_HEADER)) if header(task, BULK_DEADLINE_HEADER) else None
    except (TypeError, ValueError):
        deadline = None
    return BulkJob(
        job_id=task.request.id,
        deadline=deadline,
        realtime_fallback=header(task, REALTIME_FALLBACK_HEADER) is True,
        vetq_batch=str(batch_id) if batch_id else None,
    )


# The headers a job keeps when it goes back on its queue (a requeue, a wake from the
# bulk lane): vetq's own, never a due time that has passed.
KEPT_HEADERS = (
    TRACE_HEADER,
    BATCH_HEADER,
    BATCH_BUDGET_HEADER,
    BUDGET_USD_HEADER,
    BATCH_BUDGET_USD_HEADER,
    LANE_HEADER,
    BULK_DEADLINE_HEADER,
    REALTIME_FALLBACK_HEADER,
    BENCH_MODE_HEADER,
    PROVIDER_RETRIES_HEADER,
    OUTAGE_RETRIES_HEADER,
    TRACEPARENT_HEADER,  # the job's place in its trace (core/tracing.py)
    TRACESTATE_HEADER,
    PRIORITY_HEADER,
    TENANT_HEADER,
    CALLBACK_URL_HEADER,
)


def message_headers(task: Task) -> dict[str, Any]:
    headers = {k: v for k, v in (getattr(task.request, "headers", None) or {}).items() if k in KEPT_HEADERS}
    for name in KEPT_HEADERS:
        value = header(task, name)
        if value is not None:
            headers[name] = value
    return headers


def _deliver_canceled(app: Celery, job_id: str, headers: dict[str, Any]) -> bool:
    from vetq.workers.webhooks import deliver_canceled_parked  # it imports this module

    return deliver_canceled_parked(app, job_id, headers)


def header(task: Task, name: str) -> Any:
    value = getattr(task.request, name, None)
    if value is None:
        headers = getattr(task.request, "headers", None) or {}
        value = headers.get(name) if isinstance(headers, dict) else None
    return value


def counted(task: Task, name: str) -> int:
    try:
        return max(0, int(header(task, name) or 0))
    except (TypeError, ValueError):
        return 0


def requeue(
    task: Task,
    exc: BaseException | None,
    settings: VetqSettings,
    *,
    wait_s: float,
    counts: dict[str, int] | None = None,
) -> NoReturn:
    """The one way a job goes back on its queue. Its countdown never exceeds one
    requeue step (visibility timeout - hard time limit - margin): kombu keeps an ETA
    message unacknowledged from delivery until the job ends, and Redis hands an
    unacknowledged message to another worker after the visibility timeout, so a
    longer countdown would run the job twice. A longer wait is taken in steps, with
    the due time in the headers (see park_until_due). Steps rather than a due-time
    sorted set: the message stays in the broker the whole time, so a worker dying
    between steps loses nothing and no re-publisher has to run anywhere.

    `counts` updates the job's retry counters; the budget (keyed by job id) and every
    other header go along unchanged."""
    step = requeue_step_s(settings.visibility_timeout_s or 0, settings.task_time_limit_s)
    wait_s = max(0.0, float(wait_s))
    headers = {**(getattr(task.request, "headers", None) or {}), **(counts or {})}
    headers[SENT_AT_HEADER] = time.time() + min(wait_s, step)  # queued from when it is due again
    if wait_s > step:
        headers[NOT_BEFORE_HEADER] = time.time() + wait_s
    else:
        headers.pop(NOT_BEFORE_HEADER, None)
    # max_retries=None with the task's own None: vetq's counters, not Celery's, decide.
    # The job goes back to the list of its priority header (Celery would reuse the
    # delivered message's kombu priority; the header is what the producer asked for).
    raise task.retry(
        exc=exc,
        countdown=min(wait_s, step),
        headers=headers,
        max_retries=None,
        priority=priority_step(header(task, PRIORITY_HEADER)),
    )


def park_until_due(task: Task, settings: VetqSettings) -> None:
    """A step of a long wait that woke before the job's due time goes back to sleep
    without running anything and without spending an attempt."""
    due = header(task, NOT_BEFORE_HEADER)
    try:
        left = float(due) - time.time() if due is not None else 0.0
    except (TypeError, ValueError):
        left = 0.0
    if left > EARLY_WAKE_TOLERANCE_S:
        log.info("job_parked", due_in_s=round(left, 2))
        requeue(task, None, settings, wait_s=left)


def retry_or_fail(task: Task, exc: LLMError, settings: VetqSettings) -> None:
    """A transient failure hands the worker slot back: the job goes back on its queue
    after Retry-After, or full-jitter backoff. Stages already paid for come back from
    the response cache on the next attempt. Returns (so the caller writes an error
    envelope) once the attempts are spent. The call gate's Redis out of reach is an
    outage, not a provider attempt: counted apart (raise_for_redis_outage), as when it
    strikes before the job's first call, and an envelope once those are spent."""
    if isinstance(exc, GateStateUnavailableError):
        outages = counted(task, OUTAGE_RETRIES_HEADER)
        if outages < settings.max_attempts + EXTRA_OUTAGE_RETRIES:
            raise_for_redis_outage(task, exc, settings)
        log.error("redis_unavailable_giving_up", error=type(exc).__name__, attempts=outages + 1)
        return
    retries = counted(task, PROVIDER_RETRIES_HEADER)
    attempt = retries + 1
    if attempt >= settings.max_attempts:
        log.warning("job_attempts_exhausted", error_code=exc.code.value, attempts=attempt)
        return
    wait = getattr(exc, "retry_after_s", None)
    if wait is None:
        wait = full_jitter_backoff_s(attempt)
    log.info("job_retry", error_code=exc.code.value, attempt=attempt, wait_s=round(wait, 2))
    requeue(task, exc, settings, wait_s=wait, counts={PROVIDER_RETRIES_HEADER: retries + 1})


def raise_for_redis_outage(task: Task, exc: Exception, settings: VetqSettings) -> None:
    """Redis went away under a running job: put it back (Celery retries the publish
    until Redis answers) instead of failing it or marking it done. Counted apart
    from the provider's attempts."""
    outages = counted(task, OUTAGE_RETRIES_HEADER)
    if outages >= settings.max_attempts + EXTRA_OUTAGE_RETRIES:
        log.error("redis_unavailable_giving_up", error=type(exc).__name__, attempts=outages + 1)
        raise exc
    log.warning("redis_unavailable_retrying_job", error=type(exc).__name__, attempt=outages + 1)
    requeue(task, exc, settings, wait_s=1.0 + full_jitter_backoff_s(1), counts={OUTAGE_RETRIES_HEADER: outages + 1})


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
    try:
        outcome = run_review(
            request,
            context.reviewer,  # built only once the blindness check has passed
            # The job's gate holds the review's budget (its job scope is max_review_tokens).
            gate=gate or context.gate,
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
    # resultrepr_maxsize=0: Celery's tracer makes a repr of every result (for its success
    # line, which vetq drops, and for the pool's reply to the worker), walking the whole
    # envelope; at 0 it stops at once. Results hold document data and are never logged.
    options = {"bind": True, "shared": False, "max_retries": None, "resultrepr_maxsize": RESULT_REPR_MAXSIZE}

    def extraction(task: Task, message: Any, kind: str) -> dict[str, Any]:
        if context.canceled_at_start(task):
            return canceled_run(task, message, context.ledger)
        park_until_due(task, settings)
        payload = with_trace(task, message, kind)
        try:
            gate = context.gate_for(task, job_tokens=settings.max_job_tokens)
            outcome = context.pipeline().run(payload, raise_retryable=True, gate=gate)
        except BulkWaitError as wait:
            return context.park(task, message, wait, gate)
        except POOL_EXHAUSTED as exc:  # not an outage: never requeued (workers/redis_pool.py)
            log_exhaustion(exc)
            trace_id = payload.get("trace_id") if isinstance(payload, dict) else None
            outcome = ExtractionError.of(ErrorCode.INTERNAL_ERROR, exhaustion_message(exc), trace_id=trace_id)
        except redis.RedisError as exc:
            raise_for_redis_outage(task, exc, settings)
        except LLMError as exc:
            retry_or_fail(task, exc, settings)
            trace_id = payload.get("trace_id") if isinstance(payload, dict) else None
            outcome = ExtractionError.of(exc.code, exc.message, trace_id=trace_id)
        return outcome.model_dump(mode="json")

    @app.task(name=TASK_EXTRACT, **options)
    def extract(self: Task, payload: Any) -> dict[str, Any]:
        return extraction(self, payload, "extract")

    @app.task(name=TASK_VALIDATE, **options)
    def validate(self: Task, payload: Any) -> dict[str, Any]:
        return extraction(self, payload, "validate")

    @app.task(name=TASK_REVIEW, **options)
    def review(self: Task, message: Any) -> dict[str, Any]:
        if context.canceled_at_start(self):
            return canceled_run(self, message, context.ledger)
        park_until_due(self, settings)
        payload = with_trace(self, message, None)
        try:
            gate = context.gate_for(self, job_tokens=settings.max_review_tokens)
            # Benchmark-only modes arrive in a header the producer faces never set.
            return review_job(context, payload, gate, mode=header(self, BENCH_MODE_HEADER))
        except BulkWaitError as wait:
            return context.park(self, message, wait, gate)
        except POOL_EXHAUSTED as exc:  # not an outage: never requeued (workers/redis_pool.py)
            log_exhaustion(exc)
            code, message = ErrorCode.INTERNAL_ERROR, exhaustion_message(exc)
        except redis.RedisError as exc:
            raise_for_redis_outage(self, exc, settings)
        except LLMError as exc:
            retry_or_fail(self, exc, settings)
            code, message = exc.code, exc.message
        except SoftTimeLimitExceeded:
            # Struck outside a model call (the gate turns one inside a call into TIMEOUT).
            code = ErrorCode.TIMEOUT
            message = f"the review stopped at its soft time limit ({settings.task_time_limit_s}s hard limit)"
        trace_id = payload.get("trace_id") if isinstance(payload, dict) else None
        return ReviewError.of(code, message, meta=ReviewErrorMeta(trace_id=trace_id)).model_dump(
            mode="json", exclude_none=True
        )

    @app.task(name=TASK_NOOP, shared=False)
    def noop(payload: Any = None) -> dict[str, Any]:
        """Does nothing: the raw-Celery baseline of the queue benchmark, and a probe."""
        return {"format": RESULT_FORMAT, "status": "ok"}

    return context
