"""The Python client: submit jobs, then wait (Redis pub/sub), poll or stream results."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections.abc import AsyncIterator, Iterable, Iterator
from typing import Any

import redis
import structlog
from celery import Celery
from celery.exceptions import TimeoutError as CeleryTimeout
from celery.result import AsyncResult, ResultSet
from kombu.exceptions import OperationalError

from core.errors import ErrorCode, InvalidInputError, VetqError
from core.extraction.pipeline import check_document
from core.extraction.schema import ErrorEnvelope, ExtractionRequest, ValidationRequest
from core.queue import (
    QUEUES,
    TASK_EXTRACT,
    TASK_QUEUES,
    TASK_REVIEW,
    TASK_VALIDATE,
    TELEMETRY_STREAM,
    TRACE_HEADER,
    celery_config,
)
from core.settings import VetqSettings, load_settings
from core.validation import parse_model

log = structlog.get_logger("vetq.client")

# How often a waiting client checks that some worker is alive to run its job.
LIVENESS_CHECK_S = 5.0

STATUS_OF_STATE = {
    "PENDING": "queued",
    "RECEIVED": "queued",
    "STARTED": "running",
    "RETRY": "retrying",
    "SUCCESS": "done",
    "FAILURE": "failed",
    "REVOKED": "failed",
}


class NoWorkerError(VetqError):
    """Nothing consumes the queue a job waits in."""

    code = ErrorCode.CONFIG_ERROR


class BlindnessLeakError(InvalidInputError):
    code = ErrorCode.BLINDNESS_LEAK


class WaitTimeout(VetqError):
    code = ErrorCode.TIMEOUT


class _WaitSlices:
    """A wait cut into slices of LIVENESS_CHECK_S, so a waiter can check between slices
    that some worker is alive; `next()` is None once the overall timeout has passed."""

    def __init__(self, timeout: float | None) -> None:
        self.deadline = None if timeout is None else time.monotonic() + timeout

    def next(self) -> float | None:
        if self.deadline is None:
            return LIVENESS_CHECK_S
        remaining = self.deadline - time.monotonic()
        return min(LIVENESS_CHECK_S, remaining) if remaining > 0 else None


def _failure_envelope(job_id: str, trace_id: str | None, exc: BaseException | None) -> dict[str, Any]:
    return ErrorEnvelope(
        error_code=ErrorCode.INTERNAL_ERROR,
        error_message=f"job {job_id} failed in the worker ({type(exc).__name__ if exc else 'unknown'})",
        trace_id=trace_id,
    ).model_dump(mode="json")


class Job:
    def __init__(self, client: Client, job_id: str, trace_id: str | None, queue: str | None) -> None:
        self.client = client
        self.id = job_id
        self.trace_id = trace_id
        self.queue = queue

    @property
    def _async_result(self) -> AsyncResult:
        return AsyncResult(self.id, app=self.client.app)

    def status(self) -> str:
        """queued, running, retrying, done or failed. A job whose envelope is an
        error is `failed`; its result still says why."""
        state = self._async_result.state
        status = STATUS_OF_STATE.get(state, "queued")
        if status == "done":
            result = self._async_result.result
            if isinstance(result, dict) and (result.get("status") == "error" or "error" in result):
                return "failed"
        return status

    def _outcome(self, async_result: AsyncResult) -> dict[str, Any]:
        if async_result.state == "SUCCESS":
            value = async_result.result
            return value if isinstance(value, dict) else {"status": "error", "error_code": "INTERNAL_ERROR",
                                                          "error_message": "the worker returned a non-object result"}
        return _failure_envelope(self.id, self.trace_id, async_result.result)

    def result(self, timeout: float | None = None) -> dict[str, Any]:
        """Wait for the result through Redis pub/sub (Celery's result consumer). While
        the job is still queued, a worker ping every few seconds makes a queue that
        nobody consumes fail fast with NoWorkerError instead of hanging."""
        async_result = self._async_result
        slices = _WaitSlices(timeout)
        while True:
            slice_s = slices.next()
            if slice_s is None:
                raise WaitTimeout(f"job {self.id} did not finish within {timeout}s; it may still finish: `vetq result {self.id}`")
            try:
                async_result.get(timeout=slice_s, propagate=False, disable_sync_subtasks=False)
            except (TimeoutError, CeleryTimeout):
                if async_result.state == "PENDING":
                    self.client.require_worker(self.queue)
                continue
            return self._outcome(async_result)

    def poll(self, interval: float = 0.5, timeout: float | None = None) -> dict[str, Any]:
        """Wait by polling the result backend every `interval` seconds."""
        deadline = None if timeout is None else time.monotonic() + timeout
        last_liveness = time.monotonic()
        while True:
            async_result = self._async_result
            if async_result.ready():
                return self._outcome(async_result)
            now = time.monotonic()
            if deadline is not None and now >= deadline:
                raise WaitTimeout(f"job {self.id} did not finish within {timeout}s")
            if now - last_liveness >= LIVENESS_CHECK_S and async_result.state == "PENDING":
                self.client.require_worker(self.queue)
                last_liveness = now
            time.sleep(interval)

    async def wait(self, timeout: float | None = None) -> dict[str, Any]:
        return await asyncio.to_thread(self.result, timeout)

    def __repr__(self) -> str:
        return f"Job(id={self.id!r}, trace_id={self.trace_id!r}, queue={self.queue!r})"


class Batch:
    """Jobs submitted together. An item that failed validation at submission holds its
    INVALID_INPUT envelope in place of a job, so results stay in input order."""

    def __init__(self, client: Client, entries: list[Job | dict[str, Any]], batch_id: str) -> None:
        self.client = client
        self.entries = entries
        self.id = batch_id

    @property
    def jobs(self) -> list[Job]:
        return [e for e in self.entries if isinstance(e, Job)]

    def __len__(self) -> int:
        return len(self.entries)

    def counts(self) -> dict[str, int]:
        done = sum(1 for e in self.entries if not isinstance(e, Job) or AsyncResult(e.id, app=self.client.app).ready())
        return {"total": len(self.entries), "done": done, "pending": len(self.entries) - done}

    def as_completed(self, timeout: float | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
        """(input index, result) pairs as results land, via the pub/sub consumer."""
        for index, entry in enumerate(self.entries):
            if not isinstance(entry, Job):
                yield index, entry
        index_of = {e.id: i for i, e in enumerate(self.entries) if isinstance(e, Job)}
        if not index_of:
            return
        pending = set(index_of)
        slices = _WaitSlices(timeout)
        while pending:
            slice_s = slices.next()
            if slice_s is None:
                raise WaitTimeout(f"batch {self.id}: {len(pending)} job(s) unfinished after {timeout}s")
            results = ResultSet([AsyncResult(job_id, app=self.client.app) for job_id in pending], app=self.client.app)
            try:
                for job_id, meta in results.iter_native(timeout=slice_s):
                    if job_id not in pending:
                        continue
                    pending.discard(job_id)
                    job = self.entries[index_of[job_id]]
                    assert isinstance(job, Job)
                    yield index_of[job_id], job._outcome(AsyncResult(job_id, app=self.client.app))
            except (TimeoutError, CeleryTimeout):
                states = {AsyncResult(j, app=self.client.app).state for j in pending}
                if states <= {"PENDING"}:
                    self.client.require_worker(self.jobs[0].queue)

    def results(self, timeout: float | None = None) -> list[dict[str, Any]]:
        ordered: list[dict[str, Any] | None] = [None] * len(self.entries)
        for index, result in self.as_completed(timeout):
            ordered[index] = result
        return [r for r in ordered if r is not None]

    async def aresults(self, timeout: float | None = None) -> list[dict[str, Any]]:
        return await asyncio.to_thread(self.results, timeout)

    async def as_completed_async(self, timeout: float | None = None) -> AsyncIterator[tuple[int, dict[str, Any]]]:
        """The same stream for asyncio code: one thread drains the result consumer and
        hands each result to the event loop as it lands."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[Any] = asyncio.Queue()
        done = object()

        def drain() -> None:
            try:
                for item in self.as_completed(timeout):
                    loop.call_soon_threadsafe(queue.put_nowait, item)
            except BaseException as exc:  # handed to the awaiting side
                loop.call_soon_threadsafe(queue.put_nowait, exc)
            finally:
                loop.call_soon_threadsafe(queue.put_nowait, done)

        threading.Thread(target=drain, name=f"vetq-batch-{self.id[:8]}", daemon=True).start()
        while True:
            item = await queue.get()
            if item is done:
                return
            if isinstance(item, BaseException):
                raise item
            yield item


class Client:
    """A producer. With no Redis URL (argument or VETQ_REDIS_URL) it runs on the
    embedded default: vetq's own Redis and, unless `vetq up` already serves it, an
    in-process worker for the life of the client."""

    def __init__(self, redis_url: str | None = None, *, settings: VetqSettings | None = None) -> None:
        # No logging set-up here: a library leaves the host's handlers and levels alone.
        # The entry points (CLI, worker, MCP server) configure logging.
        self.settings = settings or load_settings()
        self._embedded = None
        url = redis_url or self.settings.redis_url
        if url is None:
            from api_client.embedded import EmbeddedService

            self._embedded = EmbeddedService(self.settings).start()
            url = self._embedded.redis_url
        self.redis_url = url
        self.app = Celery("vetq-producer", set_as_current=False)
        self.app.conf.update(celery_config(self.settings, url))

    # --- submission -------------------------------------------------------
    def _send(self, task_name: str, payload: dict[str, Any], trace_id: str, headers: dict[str, Any] | None = None) -> Job:
        queue = TASK_QUEUES[task_name]
        job_id = uuid.uuid4().hex
        self.app.send_task(
            task_name, args=[payload], task_id=job_id, queue=queue, headers={TRACE_HEADER: trace_id, **(headers or {})}
        )
        log.info("job_submitted", job_id=job_id, trace_id=trace_id, task=task_name, queue=queue)
        return Job(self, job_id, trace_id, queue)

    def _prepare(self, request: Any) -> tuple[str, dict[str, Any], str]:
        if isinstance(request, (ExtractionRequest, ValidationRequest)):
            model = request
        else:
            kind = request.get("kind", "validate" if "data" in request else "extract") if isinstance(request, dict) else None
            model_cls = ValidationRequest if kind == "validate" else ExtractionRequest
            model = parse_model(model_cls, request, what=f"{kind or 'extraction'} request")
        check_document(model.text, self.settings.max_document_chars)
        trace_id = model.trace_id or uuid.uuid4().hex
        payload = model.model_dump(mode="json") | {"trace_id": trace_id}
        task = TASK_VALIDATE if isinstance(model, ValidationRequest) else TASK_EXTRACT
        return task, payload, trace_id

    def submit(
        self, request: ExtractionRequest | ValidationRequest | dict[str, Any], *, headers: dict[str, Any] | None = None
    ) -> Job:
        task, payload, trace_id = self._prepare(request)
        return self._send(task, payload, trace_id, headers)

    def submit_extraction(
        self,
        text: str,
        *,
        field_threshold: float | None = None,
        overall_threshold: float | None = None,
        heuristics_only: bool = False,
        trace_id: str | None = None,
    ) -> Job:
        return self.submit(
            {"kind": "extract", "text": text, "field_threshold": field_threshold,
             "overall_threshold": overall_threshold, "heuristics_only": heuristics_only, "trace_id": trace_id}
        )

    def submit_validation(
        self,
        text: str,
        data: dict[str, Any],
        *,
        field_threshold: float | None = None,
        overall_threshold: float | None = None,
        heuristics_only: bool = False,
        trace_id: str | None = None,
    ) -> Job:
        return self.submit(
            {"kind": "validate", "text": text, "data": data, "field_threshold": field_threshold,
             "overall_threshold": overall_threshold, "heuristics_only": heuristics_only, "trace_id": trace_id}
        )

    def submit_batch(
        self,
        requests: Iterable[ExtractionRequest | ValidationRequest | dict[str, Any]],
        *,
        token_budget: int | None = None,
    ) -> Batch:
        """Submit many jobs. With `token_budget`, every model call of every job in the
        batch draws on one shared budget; a call that does not fit is not made and its
        job ends BUDGET_EXCEEDED."""
        if token_budget is not None and (isinstance(token_budget, bool) or not isinstance(token_budget, int) or token_budget < 1):
            raise InvalidInputError("token_budget must be a positive whole number of tokens")
        batch_id = uuid.uuid4().hex
        headers = {"batch_id": batch_id, "batch_token_budget": token_budget} if token_budget is not None else None
        entries: list[Job | dict[str, Any]] = []
        for request in requests:
            try:
                entries.append(self.submit(request, headers=headers))
            except VetqError as exc:
                entries.append(ErrorEnvelope(error_code=exc.code, error_message=exc.message).model_dump(mode="json"))
        return Batch(self, entries, batch_id)

    # --- review jobs ------------------------------------------------------
    def submit_review(self, request: Any) -> Job:
        """Validate a review request, refuse a blindness leak here (no job, no tokens),
        and queue the review. Raises InvalidInputError or BlindnessLeakError."""
        from core.review.schema import ReviewError, ReviewRequest
        from core.review.service import config_from_settings, preflight

        model = parse_model(ReviewRequest, request, what="review request")
        leak = preflight(model, config_from_settings(self.settings))
        if isinstance(leak, ReviewError):
            raise BlindnessLeakError(leak.error.message)
        trace_id = model.trace_id or uuid.uuid4().hex
        payload = model.model_dump(mode="json", exclude_none=True) | {"trace_id": trace_id}
        return self._send(TASK_REVIEW, payload, trace_id)

    @staticmethod
    def should_review(request: Any = None, **fields: Any) -> dict[str, Any]:
        """The deterministic should-review gate, run locally: no queue, no model."""
        from core.review.should_review import ShouldReviewRequest, should_review

        model = parse_model(ShouldReviewRequest, request if request is not None else fields, what="should_review request")
        return should_review(model).model_dump(mode="json")

    def record_outcome(
        self,
        review_id: str,
        *,
        accepted_review: bool | None = None,
        later_rework_required: bool | None = None,
        review_was_useful: bool | None = None,
    ) -> dict[str, Any]:
        """Add what became of a review to the fleet's telemetry stream (VETQ_TELEMETRY=on)."""
        from core.errors import ConfigError
        from core.review.telemetry import StreamSink, build_outcome_record

        if not self.settings.telemetry:
            raise ConfigError("telemetry is off: set VETQ_TELEMETRY=on to record outcomes")
        if not isinstance(review_id, str) or not review_id.strip() or len(review_id) > 128:
            raise InvalidInputError("review_id must be the review's id (meta.review_id)")
        record = build_outcome_record(review_id, accepted_review, later_rework_required, review_was_useful)
        StreamSink(self.redis(), TELEMETRY_STREAM).write(record)
        return record

    def export_telemetry(self) -> Iterator[dict[str, Any]]:
        """Every telemetry record in the stream, oldest first."""
        import json

        last = "-"
        while True:
            entries = self.redis().xrange(TELEMETRY_STREAM, min=last, max="+", count=1000)
            if last != "-":
                entries = entries[1:]
            if not entries:
                return
            for entry_id, fields in entries:
                yield json.loads(fields[b"record"])
                last = entry_id.decode() if isinstance(entry_id, bytes) else entry_id

    def dead_letters(self, limit: int = 100) -> Iterator[dict[str, Any]]:
        """Messages the workers refused (workers.dead_letter), newest first."""
        import json

        # The list workers.dead_letter.DEAD_LETTER_KEY writes; api_client may not import workers.
        for raw in self.redis().lrange("vetq:dead", 0, max(0, int(limit) - 1)):
            try:
                yield json.loads(raw)
            except ValueError:
                yield {"reason": "unreadable_entry"}

    def redis(self) -> Any:
        import redis

        if getattr(self, "_redis", None) is None:
            self._redis = redis.Redis.from_url(self.redis_url)
        return self._redis

    def job(self, job_id: str, *, queue: str | None = None) -> Job:
        """A handle on a job submitted earlier, by its id."""
        # The queue of a job submitted elsewhere is unknown: waiting then only needs
        # some live worker, not one on a particular queue.
        return Job(self, job_id, None, queue)

    # --- liveness ---------------------------------------------------------
    def workers(self, timeout: float = 1.0) -> dict[str, list[str]]:
        """Which live workers consume which queue."""
        # A broker connection dropped mid-probe is asked again on a fresh connection:
        # a liveness check must not fail a waiting client over one lost socket.
        for attempt in (1, 2, 3):
            try:
                replies = self.app.control.inspect(timeout=timeout).active_queues() or {}
                break
            except (redis.ConnectionError, redis.TimeoutError, OperationalError) as exc:
                log.warning("worker_probe_connection_lost", error=type(exc).__name__, attempt=attempt)
                if attempt == 3:
                    raise
                time.sleep(0.2 * attempt)
        return {host: [q["name"] for q in queues] for host, queues in replies.items()}

    def require_worker(self, queue: str | None) -> None:
        """Raise NoWorkerError when no live worker consumes `queue`. Asked up to three
        times with growing patience: a busy worker, or one reconnecting after a Redis
        restart, may miss one broadcast, and a false alarm would abandon a live job."""
        for timeout in (1.0, 2.0, 4.0):
            if any(queue is None or queue in queues for queues in self.workers(timeout=timeout).values()):
                return
        where = f"the {queue!r} queue" if queue else "any queue"
        raise NoWorkerError(
            f"no worker consumes {where} at {_safe_url(self.redis_url)}: start one with "
            f"`vetq worker --queues {queue or ','.join(QUEUES)}` (or `vetq up`), then wait again"
        )

    def close(self) -> None:
        try:
            _release_result_consumer(self.app)
            self.app.close()
        finally:
            if self._embedded is not None:
                self._embedded.stop()
                self._embedded = None

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _release_result_consumer(app: Celery) -> None:
    """Unsubscribe the pub/sub consumer before Redis may go away, so results still
    referenced later do not try to reach a server that has stopped."""
    consumer = getattr(app.backend, "result_consumer", None)
    if consumer is None:
        return
    getattr(consumer, "subscribed_to", set()).clear()
    getattr(consumer, "_pending_unsubscribe", set()).clear()
    try:
        consumer.stop()
    except Exception:  # noqa: BLE001 - best effort on the way out
        log.debug("result_consumer_stop_failed", exc_info=True)
    consumer._pubsub = None


def _safe_url(url: str) -> str:
    from core.logging import redact_text

    return redact_text(url)
