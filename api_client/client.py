"""The Python client: submit jobs, then wait (Redis pub/sub), poll or stream results."""

from __future__ import annotations

import itertools
import json
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import Any

import redis
from celery import Celery
from celery.exceptions import TimeoutError as CeleryTimeout
from celery.result import AsyncResult
from kombu.exceptions import BatchPublishError, OperationalError
from redis.retry import Retry
from typing_extensions import Unpack

from vetq.api_client.cancel import CancelOutcome, cancel_jobs
from vetq.api_client.idempotency import Claim, claim, fingerprint, release
from vetq.api_client.result_stream import FINAL_STATES, ResultStream
from vetq.core.batch_records import as_text, job_state, provider_batch_view, text_fields
from vetq.core.documents.input import is_pdf, pdf_size_limit_text
from vetq.core.errors import (
    ConfigError,
    ErrorCode,
    IdempotencyConflictError,
    InvalidInputError,
    NotFoundError,
    ServiceUnavailableError,
    VetqError,
)
from vetq.core.extraction.document import check_input
from vetq.core.extraction.schema import ExtractionRequest, ValidationRequest
from vetq.core.job_options import BatchOptions, JobOptions, SubmitOptions, check_idempotency_key, job_options
from vetq.core.lanes import require_batch_models
from vetq.core.llm.client import ModelSpec
from vetq.core.logging import get_logger
from vetq.core.queue import (
    BATCH_BUDGET_HEADER,
    BATCH_BUDGET_USD_HEADER,
    BUDGET_USD_HEADER,
    BULK_WAITING_STATE,
    PRIORITY_HEADER,
    QUEUES,
    SENT_AT_HEADER,
    TASK_EXTRACT,
    TASK_QUEUES,
    TASK_REVIEW,
    TASK_VALIDATE,
    TRACE_HEADER,
    celery_config,
    priority_step,
)
from vetq.core.redis_keys import (
    CELERY_RESULT_PREFIX,
    TELEMETRY_STREAM,
    batch_jobs_key,
    batch_record_key,
    bulk_batch_key,
    bulk_vbatch_key,
    cancel_key,
    submitted_key,
)
from vetq.core.results import canceled, error_of, error_result, failure_result, spent_of, upgrade
from vetq.core.schemas.catalog import looks_like_path
from vetq.core.schemas.compiled import CompiledSchema
from vetq.core.schemas.records import RecordError
from vetq.core.schemas.wire import SchemaSource, to_wire
from vetq.core.settings import VetqSettings, check_redis_url, load_settings
from vetq.core.tracing import get_tracer
from vetq.core.validation import parse_model
from vetq.core.webhooks import require_callback_allowed

log = get_logger("vetq.client")

# How often a waiting client checks that some worker is alive to run its job.
LIVENESS_CHECK_S = 5.0
# Job results read per round trip by batch_status.
STATUS_CHUNK = 1000
# Jobs of a batch are recorded (core.redis_keys.submitted_key) in one pipelined round trip per
# this many, then published: the record costs one round trip per chunk, not per job.
SUBMIT_CHUNK = 500
MAX_JOB_ID_CHARS = 200
SCHEMA_CACHE_SIZE = 64


def _schema_key(source: Any) -> Any:
    """What identifies a schema source for the client's cache (None: not cached)."""
    if source is None or (isinstance(source, str) and not looks_like_path(source)):
        return ("name", source)
    if isinstance(source, (str, Path)):
        try:
            stat = Path(source).stat()
        except OSError:
            return None  # the load will say what is wrong
        return ("file", str(Path(source).resolve()), stat.st_mtime_ns, stat.st_size)
    if isinstance(source, dict):
        # Field order is part of a schema (its hash, the prompt's order, a record's), so
        # the key keeps the document's order: two dicts with the same fields in another
        # order are two schemas, each with its own reference.
        try:
            return ("document", json.dumps(source, default=str))
        except (TypeError, ValueError):
            return None
    if isinstance(source, type):
        return ("class", source)
    return None


def expire_collected(pipe: Any, job_ids: Iterable[str], ttl_s: int) -> None:
    """Queue, on a sync or asyncio pipeline, the early expiry of collected results.
    EXPIRE, not EXPIRE ... LT (Redis 7): a result that had less time left may gain a
    little, which costs memory for at most `ttl_s`, never a result."""
    for job_id in job_ids:
        pipe.expire(CELERY_RESULT_PREFIX + job_id, ttl_s)
        pipe.expire(submitted_key(job_id), ttl_s)


REVIEWED = "reviewed"
UNTIL_CHOICES = (REVIEWED,)


def check_until(until: str | None) -> None:
    if until is not None and until not in UNTIL_CHOICES:
        raise InvalidInputError(f"until must be {' or '.join(UNTIL_CHOICES)} (or left out), not {until!r}")


def awaits_review(result: dict[str, Any], settings: VetqSettings) -> bool:
    """Whether a person will review this result in the inbox: a needs_review result,
    or a review's verdict where verdicts go to the inbox too."""
    status = result.get("status")
    return status == "needs_review" or (status == "ok" and "verdict" in result and settings.inbox_review_verdicts)


def reviewed_of(raw: Any) -> dict[str, Any] | None:
    """The reviewed result a stored or published Celery meta holds, else None."""
    if raw is None:
        return None
    try:
        meta = json.loads(raw)
    except (TypeError, ValueError):
        return None
    result = meta.get("result") if isinstance(meta, dict) and meta.get("status") == "SUCCESS" else None
    if isinstance(result, dict) and result.get("status") == REVIEWED:
        return upgrade(result)
    return None


class JobStatus(StrEnum):
    """Where a job stands. `failed` also covers a job that ran and returned an error
    result, except a canceled one (error code CANCELED), which is `canceled`."""

    QUEUED = "queued"
    RUNNING = "running"
    RETRYING = "retrying"
    DONE = "done"
    FAILED = "failed"
    # A bulk job parked until its provider batch answers (it holds no worker).
    WAITING = "waiting"
    # Running, and asked to cancel: it stops before its next model call.
    CANCELING = "canceling"
    CANCELED = "canceled"


STATUS_OF_STATE = {
    "PENDING": JobStatus.QUEUED,
    "RECEIVED": JobStatus.QUEUED,
    "STARTED": JobStatus.RUNNING,
    "RETRY": JobStatus.RETRYING,
    "SUCCESS": JobStatus.DONE,
    "FAILURE": JobStatus.FAILED,
    "REVOKED": JobStatus.FAILED,
    BULK_WAITING_STATE: JobStatus.WAITING,
}


def status_of(state: str, result: Any) -> JobStatus:
    """A job's status from its stored Celery state and result (a finished job's result
    says done, failed or canceled)."""
    status = STATUS_OF_STATE.get(state, JobStatus.QUEUED)
    if status is JobStatus.DONE and error_of(result) is not None:
        return JobStatus.CANCELED if canceled(result) else JobStatus.FAILED
    return status


def cancel_report(outcome: CancelOutcome) -> dict[str, Any]:
    """What a cancel did to one job: `canceled` (this cancel stopped it, or will at its
    next model call) and its `status` now."""
    report: dict[str, Any] = {"job_id": outcome.job_id}
    if outcome.finished:
        status = status_of(str(outcome.state), outcome.result)
        return report | {"canceled": False, "status": status, "message": f"the job had already finished ({status})"}
    if outcome.running:
        return report | {
            "canceled": True,
            "status": JobStatus.CANCELING,
            "message": "the job is running: it stops before its next model call "
            "(a run that needs no more calls finishes as it would have)",
        }
    return report | {"canceled": True, "status": JobStatus.CANCELED}


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
    return failure_result(job_id, trace_id, exc)


def service_error(exc: BaseException, redis_url: str | None) -> VetqError | None:
    """The VetqError an exception from Redis, kombu or Celery's result store means, or
    None for anything else: a refused password is CONFIG_ERROR (fix the URL), a server
    that cannot be reached is SERVICE_UNAVAILABLE. Messages never carry the password."""
    from celery.exceptions import BackendError

    where = f"Redis at {_safe_url(redis_url)}" if redis_url else "Redis"
    chain: list[BaseException] = []
    seen: BaseException | None = exc
    while seen is not None and seen not in chain and len(chain) < 20:
        chain.append(seen)
        seen = seen.__cause__ or seen.__context__
    for link in chain:
        text = str(link)
        if isinstance(link, redis.AuthenticationError) or (
            isinstance(link, redis.ResponseError) and ("NOAUTH" in text or "WRONGPASS" in text)
        ):
            return ConfigError(f"{where} refused the credentials: fix the password in VETQ_REDIS_URL")
    for link in chain:
        if isinstance(
            link,
            (redis.ConnectionError, redis.TimeoutError, OperationalError, BackendError, ConnectionError, TimeoutError),
        ) or (isinstance(link, RuntimeError) and "Retry limit exceeded" in str(link)):
            return ServiceUnavailableError(
                f"{where} cannot be reached ({type(link).__name__}): start it, or fix VETQ_REDIS_URL"
            )
    return None


@contextmanager
def _service_errors(redis_url: str | None) -> Iterator[None]:
    try:
        yield
    except VetqError:
        raise
    except Exception as exc:
        translated = service_error(exc, redis_url)
        if translated is None:
            raise
        raise translated from None


class Job:
    def __init__(self, client: Client, job_id: str, trace_id: str | None, queue: str | None) -> None:
        self.client = client
        self.id = job_id
        self.trace_id = trace_id
        self.queue = queue

    @property
    def _async_result(self) -> AsyncResult:
        return AsyncResult(self.id, app=self.client.app)

    def _require_issued(self, async_result: AsyncResult) -> None:
        """NotFoundError for an id no client submitted to this Redis (or whose record
        expired with the results): otherwise it would read as a job still queued."""
        if self.client._was_submitted(self.id):
            return
        if async_result.state == "PENDING":
            raise NotFoundError(
                f"no job {self.id!r} was submitted to {_safe_url(self.client.redis_url)}, or its result has "
                "expired (VETQ_RESULT_TTL_S): check the id and VETQ_REDIS_URL"
            )

    def status(self) -> JobStatus:
        """queued, running, retrying, waiting, canceling, done, failed or canceled. A
        job whose result is an error is `failed` (`canceled` if it was canceled); its
        result still says why. Raises NotFoundError for an id never submitted here (or
        expired), ServiceUnavailableError if Redis is down."""
        with _service_errors(self.client.redis_url):
            async_result = self._async_result
            state = async_result.state
            if state == "PENDING":
                self._require_issued(async_result)
            status = status_of(state, async_result.result)
            if status is JobStatus.RUNNING and self.client.redis().exists(cancel_key(self.id)):
                return JobStatus.CANCELING
            return status

    def cancel(self) -> dict[str, Any]:
        """Cancel the job: queued, requeued or parked on a provider batch, it ends
        `canceled` now and never runs again; running, it stops before its next model
        call (`canceling`), its result keeping what it spent; finished, nothing changes.
        Returns {"job_id", "canceled", "status"} (and a "message" saying why when it was
        not canceled at once). NotFoundError for an id never submitted here."""
        with _service_errors(self.client.redis_url):
            (outcome,) = cancel_jobs(self.client, [self.id])
        if not outcome.found:
            raise NotFoundError(
                f"no job {self.id!r} was submitted to {_safe_url(self.client.redis_url)}, or its result has "
                "expired (VETQ_RESULT_TTL_S): check the id and VETQ_REDIS_URL"
            )
        log.info("job_cancel", job_id=self.id, state=outcome.state, wrote=outcome.wrote)
        return cancel_report(outcome)

    def _outcome(self, async_result: AsyncResult) -> dict[str, Any]:
        return self._outcome_of(async_result.state, async_result.result)

    def _outcome_of(self, state: str, value: Any) -> dict[str, Any]:
        """The result envelope of a finished job from its Celery state and value."""
        if state == "SUCCESS":
            if isinstance(value, dict):
                return upgrade(value)  # a result an older worker wrote reads in today's format
            return error_result(
                ErrorCode.INTERNAL_ERROR, "the worker returned a non-object result", trace_id=self.trace_id
            )
        return _failure_envelope(self.id, self.trace_id, value)

    def result(self, timeout: float | None = None, *, until: str | None = None) -> dict[str, Any]:
        """Wait for the result through Redis pub/sub (Celery's result consumer). While
        the job is still queued, a worker ping every few seconds makes a queue that
        nobody consumes fail fast with NoWorkerError instead of hanging. Raises
        NotFoundError at once for an id never submitted here (or expired).

        `until="reviewed"` waits past a needs_review result (and, with
        VETQ_INBOX_REVIEW_VERDICTS, a review's verdict) for the result a person
        resolves in the inbox (`status: "reviewed"`); any other result, which no
        person reviews, is returned as it is. `timeout` covers the whole wait."""
        check_until(until)
        with _service_errors(self.client.redis_url):
            deadline = None if timeout is None else time.monotonic() + timeout
            outcome = self._wait(timeout)
            if until is None or not awaits_review(outcome, self.client.settings):
                return outcome
            return self._wait_reviewed(deadline, timeout)

    def _wait_reviewed(self, deadline: float | None, timeout: float | None) -> dict[str, Any]:
        """The job's reviewed result, published on its channel by the inbox
        (workers/result_backend.store_reviewed); read once after subscribing, so a
        review stored before the subscription is not missed."""
        key = CELERY_RESULT_PREFIX + self.id
        redis_client = self.client.redis()
        pubsub = redis_client.pubsub(ignore_subscribe_messages=True)
        try:
            pubsub.subscribe(key)
            reviewed = reviewed_of(redis_client.get(key))
            while reviewed is None:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise WaitTimeout(
                        f"job {self.id} was not reviewed within {timeout}s; it may still be: "
                        f"`vetq result {self.id} --until reviewed`"
                    )
                message = pubsub.get_message(timeout=LIVENESS_CHECK_S if left is None else min(left, LIVENESS_CHECK_S))
                if message is not None and message.get("type") == "message":
                    reviewed = reviewed_of(message.get("data"))
        finally:
            pubsub.close()
        self.client._expire_collected([self.id])
        return reviewed

    def _wait(self, timeout: float | None) -> dict[str, Any]:
        async_result = self._async_result
        self._require_issued(async_result)
        slices = _WaitSlices(timeout)
        while True:
            slice_s = slices.next()
            if slice_s is None:
                raise WaitTimeout(
                    f"job {self.id} did not finish within {timeout}s; it may still finish: `vetq result {self.id}`"
                )
            try:
                async_result.get(timeout=slice_s, propagate=False, disable_sync_subtasks=False)
            except (TimeoutError, CeleryTimeout):
                if async_result.state == "PENDING":
                    self.client.require_worker(self.queue)
                continue
            outcome = self._outcome(async_result)
            self.client._expire_collected([self.id])
            return outcome

    def poll(self, interval: float = 0.5, timeout: float | None = None) -> dict[str, Any]:
        """Wait by polling the result backend every `interval` seconds."""
        with _service_errors(self.client.redis_url):
            return self._poll(interval, timeout)

    def _poll(self, interval: float, timeout: float | None) -> dict[str, Any]:
        self._require_issued(self._async_result)
        deadline = None if timeout is None else time.monotonic() + timeout
        last_liveness = time.monotonic()
        while True:
            async_result = self._async_result
            if async_result.ready():
                outcome = self._outcome(async_result)
                self.client._expire_collected([self.id])
                return outcome
            now = time.monotonic()
            if deadline is not None and now >= deadline:
                raise WaitTimeout(f"job {self.id} did not finish within {timeout}s")
            if now - last_liveness >= LIVENESS_CHECK_S and async_result.state == "PENDING":
                self.client.require_worker(self.queue)
                last_liveness = now
            time.sleep(interval)

    def __repr__(self) -> str:
        return f"Job(id={self.id!r}, trace_id={self.trace_id!r}, queue={self.queue!r})"


class Batch:
    """Jobs submitted together. An item that failed validation at submission holds its
    INVALID_INPUT envelope in place of a job, so results stay in input order."""

    def __init__(self, client: Client, entries: list[Job | dict[str, Any]], batch_id: str) -> None:
        self.client = client
        self.entries = entries
        self.id = batch_id
        # The results handed out so far, by input index (what spent() adds up).
        self.collected: dict[int, dict[str, Any]] = {}
        # Set by the client that submits the batch (what every job's message carries).
        self._options: JobOptions | None = None
        self._headers: dict[str, Any] = {"batch_id": batch_id}

    @property
    def jobs(self) -> list[Job]:
        return [e for e in self.entries if isinstance(e, Job)]

    def __len__(self) -> int:
        return len(self.entries)

    def counts(self) -> dict[str, int]:
        """How many of the batch's jobs are done (refused lines count as done): one
        MGET per STATUS_CHUNK jobs."""
        jobs = self.jobs
        done = len(self.entries) - len(jobs)
        with _service_errors(self.client.redis_url):
            r = self.client.redis()
            for start in range(0, len(jobs), STATUS_CHUNK):
                keys = [CELERY_RESULT_PREFIX + job.id for job in jobs[start : start + STATUS_CHUNK]]
                done += sum(1 for raw in r.mget(keys) if raw is not None and _stored_state(raw) in FINAL_STATES)
        return {"total": len(self.entries), "done": done, "pending": len(self.entries) - done}

    def as_completed(self, timeout: float | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
        """(input index, result) pairs as results land. `timeout`: the longest wait for
        the next result (a batch that keeps finishing jobs never times out; one where
        nothing lands for `timeout` seconds raises WaitTimeout)."""
        with _service_errors(self.client.redis_url):
            yield from self._as_completed(timeout)

    def _as_completed(self, timeout: float | None) -> Iterator[tuple[int, dict[str, Any]]]:
        for index, entry in enumerate(self.entries):
            if not isinstance(entry, Job):
                self.collected[index] = entry
                yield index, entry
        index_of = {e.id: i for i, e in enumerate(self.entries) if isinstance(e, Job)}
        if not index_of:
            return
        stream = self._result_stream()
        stream.add(index_of)
        for job_id, meta in stream.results(timeout, self._timed_out(timeout)):
            yield self._collect(index_of[job_id], meta)

    def _result_stream(self) -> ResultStream:
        queues = {job.queue for job in self.jobs}
        queue = queues.pop() if len(queues) == 1 else None
        return ResultStream(
            self.client.redis(),
            decode=self.client.app.backend.decode_result,
            on_idle=lambda: self.client.require_worker(queue),
            on_collected=self.client._expire_collected
            if self.client.settings.collected_result_ttl_s is not None
            else None,
            idle_s=LIVENESS_CHECK_S,
        )

    def _timed_out(self, timeout: float | None) -> Callable[[int], BaseException]:
        def timed_out(left: int) -> WaitTimeout:
            return WaitTimeout(f"batch {self.id}: no result for {timeout}s, {left} job(s) unfinished")

        return timed_out

    def _collect(self, index: int, meta: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        job = self.entries[index]
        assert isinstance(job, Job)
        outcome = job._outcome_of(meta["status"], meta.get("result"))
        self.collected[index] = outcome
        return index, outcome

    def cancel(self) -> dict[str, Any]:
        """Cancel every job of the batch not finished yet (as Job.cancel, a chunk of
        jobs per round trip): {"batch_id", "total", "canceled" (now), "canceling"
        (running: each stops before its next model call), "finished" (already done,
        refused lines included)}."""
        jobs = self.jobs
        with _service_errors(self.client.redis_url):
            outcomes = cancel_jobs(self.client, [job.id for job in jobs])
        counts = {"canceled": 0, "canceling": 0, "finished": len(self.entries) - len(jobs)}
        for outcome in outcomes:
            if outcome.finished or not outcome.found:
                counts["finished"] += 1
            elif outcome.running:
                counts["canceling"] += 1
            else:
                counts["canceled"] += 1
        log.info("batch_cancel", batch_id=self.id, **counts)
        return {"batch_id": self.id, "total": len(self.entries), **counts}

    def spent(self) -> dict[str, Any]:
        """What the results collected so far (by as_completed, results, or an
        AsyncBatch over this batch) spent: `cost_usd` (null as soon as one result's cost is unknown: a model
        without a price, or a result from a worker that did not price its calls),
        `prompt_tokens`, `completion_tokens`, `total_tokens`, and `results`, how many
        results it counts of the batch's `total`."""
        collected = list(self.collected.values())
        return {**spent_of(collected), "results": len(collected), "total": len(self.entries)}

    def results(self, timeout: float | None = None) -> list[dict[str, Any]]:
        ordered: list[dict[str, Any] | None] = [None] * len(self.entries)
        for index, result in self.as_completed(timeout):
            ordered[index] = result
        return [r for r in ordered if r is not None]


class BatchStream:
    """A batch collected while it is submitted (Client.stream_batch): iterate it for
    (input index, result) pairs as results land. `batch` is the Batch so far (its id,
    `spent()`); `submitted` counts the requests sent (refused ones included) and
    `total` is None until the input is exhausted."""

    def __init__(self, batch: Batch, requests: Iterator[Any], timeout: float | None) -> None:
        self.batch = batch
        self.id = batch.id
        self._requests = requests
        self._timeout = timeout
        self.submitted = 0
        self.total: int | None = None

    def __iter__(self) -> Iterator[tuple[int, dict[str, Any]]]:
        with _service_errors(self.batch.client.redis_url):
            yield from self._run()

    def _run(self) -> Iterator[tuple[int, dict[str, Any]]]:
        batch, client = self.batch, self.batch.client
        stream: ResultStream | None = None
        index_of: dict[str, int] = {}
        try:
            while chunk := list(itertools.islice(self._requests, SUBMIT_CHUNK)):
                first = len(batch.entries)
                added = client._submit_chunk(batch, chunk)
                self.submitted += len(added)
                jobs = {}
                for offset, entry in enumerate(added):
                    if isinstance(entry, Job):
                        jobs[entry.id] = first + offset
                    else:
                        batch.collected[first + offset] = entry
                        yield first + offset, entry
                if jobs:
                    index_of.update(jobs)
                    if stream is None:
                        stream = batch._result_stream()
                    stream.add(jobs)
                # Hand out what has landed meanwhile, without waiting, then send more.
                while stream is not None and (item := stream.next(0)) is not None:
                    yield batch._collect(index_of[item[0]], item[1])
            client._close_batch(batch)
            self.total = len(batch.entries)
            if stream is not None:
                for job_id, meta in stream.results(self._timeout, batch._timed_out(self._timeout)):
                    yield batch._collect(index_of[job_id], meta)
        finally:
            if stream is not None:
                stream.close()


class Client:
    """A producer. With no Redis URL (argument or VETQ_REDIS_URL) it runs on the
    embedded default: vetq's own Redis and, unless `vetq up` already serves it, an
    in-process worker for the life of the client."""

    def __init__(self, redis_url: str | None = None, *, settings: VetqSettings | None = None) -> None:
        # No logging set-up here: a library leaves the host's handlers and levels alone.
        # The entry points (CLI, worker, MCP server) configure logging.
        self.settings = settings or load_settings()
        self._embedded = None
        if redis_url:
            try:
                redis_url = check_redis_url(redis_url)
            except ValueError as exc:
                raise ConfigError(f"redis_url {exc}") from None
        url = redis_url or self.settings.redis_url
        if url is None:
            from vetq.api_client.embedded import EmbeddedService

            self._embedded = EmbeddedService(self.settings).start()
            url = self._embedded.redis.live_url
        self.redis_url: str = url
        self._schema_refs: dict[Any, tuple[dict[str, Any], CompiledSchema]] = {}
        self.app = _ProducerApp(self, "vetq-producer", set_as_current=False)
        self.app.conf.update(celery_config(self.settings, url))

    # --- submission -------------------------------------------------------
    def _send(
        self, task_name: str, payload: dict[str, Any], trace_id: str, headers: dict[str, Any] | None = None
    ) -> Job:
        with _service_errors(self.redis_url):
            return self._publish(uuid.uuid4().hex, task_name, payload, trace_id, headers)

    def _record_submitted(self, job_ids: list[str], *, batch_id: str | None = None) -> None:
        """Record the ids before their messages go out, in one round trip, so a status
        asked the moment submit returns already knows them (see Job._require_issued);
        a batch's also in its list of jobs."""
        pipe = self.redis().pipeline(transaction=False)
        for job_id in job_ids:
            pipe.set(submitted_key(job_id), 1, ex=self.settings.result_ttl_s)
        if batch_id is not None:
            pipe.rpush(batch_jobs_key(batch_id), *job_ids)
            pipe.expire(batch_jobs_key(batch_id), self.settings.result_ttl_s)
        pipe.execute()

    def _expire_collected(self, job_ids: Sequence[str]) -> None:
        """With VETQ_COLLECTED_RESULT_TTL_S set, the results just handed out (and their
        submitted marks) expire that long from now, in one round trip."""
        ttl = self.settings.collected_result_ttl_s
        if ttl is None or not job_ids:
            return
        pipe = self.redis().pipeline(transaction=False)
        expire_collected(pipe, job_ids, ttl)
        pipe.execute()

    def _was_submitted(self, job_id: str) -> bool:
        return bool(self.redis().exists(submitted_key(job_id)))

    def _publish(
        self,
        job_id: str,
        task_name: str,
        payload: dict[str, Any],
        trace_id: str,
        headers: dict[str, Any] | None,
        *,
        recorded: bool = False,
    ) -> Job:
        tracer = get_tracer()
        # The producer span starts the job's trace (README, Traces); its context travels
        # in the message headers as W3C traceparent.
        with tracer.span_in_trace("vetq.submit", trace_id, _submit_attributes(task_name, job_id), kind="producer"):
            if tracer.enabled:
                headers = dict(headers or {})
                tracer.inject(headers)
            if not recorded:
                self._record_submitted([job_id])
            (job,) = self._send_many([(job_id, task_name, payload, trace_id, headers)])
        log.info("job_submitted", job_id=job_id, trace_id=trace_id, task=task_name, queue=job.queue)
        return job

    def _send_many(self, items: Sequence[tuple[str, str, dict[str, Any], str, dict[str, Any] | None]]) -> list[Job]:
        """Send recorded jobs (id, task, payload, trace id, headers) as one pipelined
        round trip (kombu's publish batch). Unlike Celery's send_task this subscribes
        to no result channel: a job's waiter subscribes when it waits (Job.result reads
        the stored result after subscribing; a batch, ResultStream), so a batch costs
        no SUBSCRIBE and UNSUBSCRIBE per job. No argsrepr is built either: that would
        be a copy of the document in every message's headers.

        A Redis that is briefly gone (a restart, a failover) delays the send, with the
        patience of core.queue's task_publish_retry_policy, instead of failing it.
        kombu retries neither a batch's flush nor a publish inside a batch cleanly (its
        retry revives the channel under the batch), so the whole batch is retried here,
        on a reconnected producer. A flush that failed half-way may have queued some
        messages already; sending them again is the at-least-once delivery every Redis
        publish retry has: a job's second run never replaces its first result
        (workers/result_backend.py) and finds its paid model calls in the response
        cache. A wrong password never gets here: the jobs' record, just before, fails
        on it at once (_RetryUnlessRefused)."""
        policy = self.app.conf.task_publish_retry_policy
        for attempt in itertools.count():
            try:
                return self._publish_pipelined(items)
            except BROKER_SEND_ERRORS as exc:
                if attempt >= policy["max_retries"]:
                    raise
                interval = min(policy["interval_start"] + attempt * policy["interval_step"], policy["interval_max"])
                policy["errback"](exc, interval)
                time.sleep(interval)
        raise AssertionError("unreachable")

    def _publish_pipelined(
        self, items: Sequence[tuple[str, str, dict[str, Any], str, dict[str, Any] | None]]
    ) -> list[Job]:
        amqp = self.app.amqp
        jobs = []
        with self.app.producer_or_acquire() as producer:
            try:
                with producer.batch(max_size=max(1, 2 * len(items))):
                    for job_id, task_name, payload, trace_id, headers in items:
                        queue = TASK_QUEUES[task_name]
                        message = amqp.create_task_message(job_id, task_name, [payload], {}, argsrepr="", kwargsrepr="")
                        headers = {**(headers or {}), SENT_AT_HEADER: time.time()}  # the queued-time metric
                        amqp.send_task_message(
                            producer,
                            task_name,
                            message,
                            queue=queue,
                            priority=priority_step(headers.get(PRIORITY_HEADER)),  # its list (core.queue)
                            headers={TRACE_HEADER: trace_id, **(headers or {})},
                            retry=False,  # _send_many retries the whole batch
                        )
                        jobs.append(Job(self, job_id, trace_id, queue))
            except BROKER_SEND_ERRORS:
                # The pooled connection's channel died with Redis: reconnect it before
                # the pool hands it to the next send.
                try:
                    producer.connection.close()
                except Exception:  # noqa: BLE001 - closing a dead connection may fail too
                    pass
                raise
        return jobs

    def _pdf_bytes(self, pdf: bytes | bytearray | memoryview | str | Path) -> bytes:
        """A PDF given as bytes or as a file's path, refused here, before any job is
        sent, when it is over VETQ_MAX_PDF_BYTES (a file by its size, unread) or not a
        PDF by its magic."""
        limit = self.settings.max_pdf_bytes
        if isinstance(pdf, (bytes, bytearray, memoryview)):
            data, what = bytes(pdf), "pdf"
        elif isinstance(pdf, (str, Path)):
            what = str(pdf)
            try:
                size = Path(pdf).stat().st_size
                if size > limit:
                    raise InvalidInputError(pdf_size_limit_text(size, limit))
                data = Path(pdf).read_bytes()
            except OSError as exc:
                raise InvalidInputError(f"cannot read {what}: {exc.__class__.__name__}: {exc}") from None
        else:
            raise InvalidInputError(f"pdf must be the file's bytes or its path, not {type(pdf).__name__}")
        if len(data) > limit:
            raise InvalidInputError(pdf_size_limit_text(len(data), limit))
        if not is_pdf(data):
            raise InvalidInputError(f"{what} is not a PDF (a PDF starts with %PDF-)")
        return data

    def _prepare(self, request: Any) -> tuple[str, dict[str, Any], str]:
        if isinstance(request, dict) and isinstance(request.get("pdf"), Path):
            request = {**request, "pdf": self._pdf_bytes(request["pdf"])}  # a path is read here, by the producer
        schema_source = request.get("schema") if isinstance(request, dict) else None
        if schema_source is not None and not isinstance(schema_source, (str, dict)):
            request = {**request, "schema": None}  # a class, a Path or a compiled schema: resolved below
        if isinstance(request, (ExtractionRequest, ValidationRequest)):
            model = request
        else:
            kind = (
                request.get("kind", "validate" if "data" in request else "extract")
                if isinstance(request, dict)
                else None
            )
            if kind == "validate":
                model = parse_model(ValidationRequest, request, what="validate request")
            else:
                model = parse_model(ExtractionRequest, request, what=f"{kind or 'extraction'} request")
        # Text by the document rules; a PDF by its size and magic only: the worker converts it.
        check_input(
            model.text, model.pdf, max_chars=self.settings.max_document_chars, max_pdf_bytes=self.settings.max_pdf_bytes
        )
        reference, schema = self._schema_reference(schema_source if schema_source is not None else model.record_schema)
        if isinstance(model, ValidationRequest):
            try:
                schema.validate_data(model.data)
            except RecordError as exc:
                raise InvalidInputError(f"data does not fit the {schema.name} schema: {exc}") from None
        trace_id = model.trace_id or get_tracer().new_trace_id()
        payload = model.model_dump(mode="json") | {"trace_id": trace_id, "schema": reference}
        task = TASK_VALIDATE if isinstance(model, ValidationRequest) else TASK_EXTRACT
        return task, payload, trace_id

    def _schema_reference(self, source: Any) -> tuple[dict[str, Any], CompiledSchema]:
        """A job's schema checked and compiled here, so a bad one is refused before any
        job is sent, and the reference its message carries (core.schemas.wire). Kept per
        source: a batch of ten thousand lines naming one schema file reads it once."""
        key = _schema_key(source)
        cached = self._schema_refs.get(key) if key is not None else None
        if cached is None:
            cached = to_wire(source, self.settings.schema_limits())
            if key is not None:
                if len(self._schema_refs) >= SCHEMA_CACHE_SIZE:
                    self._schema_refs.clear()
                self._schema_refs[key] = cached
        return cached

    def submit(
        self,
        request: ExtractionRequest | ValidationRequest | dict[str, Any],
        *,
        headers: dict[str, Any] | None = None,
        **options: Unpack[SubmitOptions],
    ) -> Job:
        """Submit one extraction or validation. The options (core.job_options), each
        checked here (INVALID_INPUT naming it):

        - `budget_usd`: the most this job's model calls may cost, in US dollars (a call
          that does not fit is not made: the job ends BUDGET_EXCEEDED);
        - `lane`: "realtime" (default) or "bulk" (the providers' Batch APIs: the same
          result, later, at the batch price), with `bulk_deadline` (a datetime, an ISO
          8601 time or a duration such as "6h", within 24 h) and `realtime_fallback`
          (past the deadline, ask the realtime lane instead of ending TIMEOUT);
        - `priority`: "high", "normal" (default) or "low";
        - `tenant`: the customer the job runs for (`[a-z0-9_-]{1,64}`);
        - `callback_url`: where the final result is POSTed (README, Webhooks);
        - `idempotency_key`: the same key returns the same job."""
        checked = job_options(**options)
        task, payload, trace_id = self._prepare(request)
        headers = {**(headers or {}), **self._job_headers(checked, task, payload)}
        return self._submit_job(checked, task, payload, trace_id, headers)

    def _submit_job(
        self, options: JobOptions, task: str, payload: dict[str, Any], trace_id: str, headers: dict[str, Any]
    ) -> Job:
        """Send one checked job; under an idempotency key, only if the key names no job yet."""
        if options.idempotency_key is None:
            return self._send(task, payload, trace_id, headers or None)
        item = Claim(
            options.idempotency_key,
            options.tenant,
            fingerprint(task, payload),
            uuid.uuid4().hex,
            trace_id,
            TASK_QUEUES[task],
        )
        with _service_errors(self.redis_url):
            (outcome,) = claim(self.redis(), [item], self.settings.result_ttl_s)
            if outcome.conflict:
                raise IdempotencyConflictError(_conflict_text(options.idempotency_key, outcome.job_id))
            if not outcome.new:
                log.info("job_deduplicated", job_id=outcome.job_id, trace_id=outcome.trace_id, task=task)
                return Job(self, outcome.job_id, outcome.trace_id, outcome.queue)
            trace_id = outcome.trace_id or trace_id
            try:
                return self._publish(outcome.job_id, task, payload | {"trace_id": trace_id}, trace_id, headers or None)
            except BaseException:
                release(self.redis(), [(item, outcome)])  # not sent: the retry sends it
                raise

    def _job_headers(self, options: JobOptions, task: str, payload: dict[str, Any]) -> dict[str, Any]:
        """The options' message headers; CONFIG_ERROR for a bulk job a model of which has
        no batch API (checked against this client's settings, as the workers' should be).
        A callback_url this deployment does not allow is refused here (core.webhooks)."""
        require_callback_allowed(options.callback_url, self.settings)
        if options.bulk:
            require_batch_models(self._models_of(task, payload))
        return options.headers()

    def _models_of(self, task: str, payload: dict[str, Any]) -> list[ModelSpec]:
        """The models a job will call: the reviewer, or the Generator (extraction) and the Critic."""
        if task == TASK_REVIEW:
            return [self.settings.spec("reviewer")]
        if payload.get("heuristics_only"):
            return []
        return [self.settings.spec("generator")] * (task == TASK_EXTRACT) + [self.settings.spec("critic")]

    def submit_extraction(
        self,
        text: str | None = None,
        *,
        pdf: bytes | str | Path | None = None,
        schema: SchemaSource | None = None,
        field_threshold: float | None = None,
        overall_threshold: float | None = None,
        heuristics_only: bool = False,
        trace_id: str | None = None,
        **options: Unpack[SubmitOptions],
    ) -> Job:
        """Extract a record of `schema` (a built-in's name, default invoice; a schema
        file's path; the document as a dict; a pydantic class) from `text`, or from
        `pdf` (the file's bytes or its path; a worker converts it). The options
        (`budget_usd`, `lane`, `priority`, `tenant`, ...): as for `submit`."""
        thresholds = {"field_threshold": field_threshold, "overall_threshold": overall_threshold}
        return self.submit(
            {
                "kind": "extract",
                **self._document(text, pdf),
                "schema": schema,
                **thresholds,
                "heuristics_only": heuristics_only,
                "trace_id": trace_id,
            },
            **options,
        )

    def submit_validation(
        self,
        text: str | None = None,
        data: dict[str, Any] | None = None,
        *,
        pdf: bytes | str | Path | None = None,
        schema: SchemaSource | None = None,
        field_threshold: float | None = None,
        overall_threshold: float | None = None,
        heuristics_only: bool = False,
        trace_id: str | None = None,
        **options: Unpack[SubmitOptions],
    ) -> Job:
        """Verify `data`, a record of `schema`, against `text` or `pdf` (the file's
        bytes or its path) (no Generator). The options: as for `submit`."""
        thresholds = {"field_threshold": field_threshold, "overall_threshold": overall_threshold}
        if data is None:
            raise InvalidInputError("submit_validation needs data: the record to check")
        return self.submit(
            {
                "kind": "validate",
                **self._document(text, pdf),
                "data": data,
                "schema": schema,
                **thresholds,
                "heuristics_only": heuristics_only,
                "trace_id": trace_id,
            },
            **options,
        )

    def _document(self, text: str | None, pdf: bytes | str | Path | None) -> dict[str, Any]:
        if pdf is None:
            return {"text": text}
        if text is not None:
            raise InvalidInputError("send the document as text or as pdf, not both")
        return {"pdf": self._pdf_bytes(pdf)}

    def submit_batch(
        self,
        requests: Iterable[ExtractionRequest | ValidationRequest | dict[str, Any]],
        *,
        token_budget: int | None = None,
        **options: Unpack[BatchOptions],
    ) -> Batch:
        """Submit many jobs. With `token_budget` (tokens) or `budget_usd` (US dollars,
        at the prices the workers know), every model call of every job in the batch
        draws on one shared budget; a call that does not fit is not made and its job
        ends BUDGET_EXCEEDED. `batch.spent()` adds up what the results say they cost.
        The other options (`lane`, `priority`, `tenant`, `callback_url`, ...): as for
        `submit`, for every job; a request given as a dict may carry its own
        `idempotency_key`. The batch is recorded in Redis (`batch_status(batch.id)`,
        `batch(batch.id)`). To collect results while a long input is still being
        submitted, use `stream_batch`."""
        batch = self._open_batch(token_budget, options)
        pending = iter(requests)
        while chunk := list(itertools.islice(pending, SUBMIT_CHUNK)):
            self._submit_chunk(batch, chunk)
        self._close_batch(batch)
        return batch

    def stream_batch(
        self,
        requests: Iterable[ExtractionRequest | ValidationRequest | dict[str, Any]],
        *,
        timeout: float | None = None,
        token_budget: int | None = None,
        **options: Unpack[BatchOptions],
    ) -> BatchStream:
        """Submit many jobs and collect their results at once: iterating the returned
        BatchStream submits `requests` a chunk at a time, reading them lazily, and
        yields (input index, result) as results land, from the first chunk on. Only
        the chunk being sent and the jobs in flight are in memory, however long the
        input. `timeout`: the longest wait for the next result once everything is
        submitted (WaitTimeout). Other arguments as for `submit_batch`."""
        batch = self._open_batch(token_budget, options)
        return BatchStream(batch, iter(requests), timeout)

    def _open_batch(self, token_budget: int | None, given: BatchOptions) -> Batch:
        """A new batch, checked and recorded, with no jobs yet."""
        if token_budget is not None and (
            isinstance(token_budget, bool) or not isinstance(token_budget, int) or token_budget < 1
        ):
            raise InvalidInputError("token_budget must be a positive whole number of tokens")
        if "idempotency_key" in given:
            raise InvalidInputError("a batch takes no idempotency_key: give each request its own")
        options = job_options(**given)
        require_callback_allowed(options.callback_url, self.settings)
        batch_id = uuid.uuid4().hex
        budgets = {BATCH_BUDGET_HEADER: token_budget, BATCH_BUDGET_USD_HEADER: options.budget_usd}
        budgets = {name: value for name, value in budgets.items() if value is not None}
        with _service_errors(self.redis_url):
            self._record_batch(batch_id, {"lane": options.lane.lane.value, "created": f"{time.time():.3f}", **budgets})
        batch = Batch(self, [], batch_id)
        batch._options = options
        # The dollar budget is the batch's, shared: not each job's own.
        job_headers = {k: v for k, v in options.headers().items() if k != BUDGET_USD_HEADER}
        batch._headers = {"batch_id": batch_id, **budgets, **job_headers}
        return batch

    def _submit_chunk(self, batch: Batch, chunk: list[Any]) -> list[Job | dict[str, Any]]:
        """Send a chunk of the batch's requests: their ids recorded in one round trip,
        then their messages in one; a request refused at submission holds its envelope
        in its place. What was added to `batch.entries`."""
        options = batch._options
        prepared: list[tuple[str, tuple[str, dict[str, Any], str]] | dict[str, Any]] = []
        keyed: dict[int, Claim] = {}  # the lines that carry an idempotency key
        for request in chunk:
            try:
                key = None
                if isinstance(request, dict) and "idempotency_key" in request:
                    request = dict(request)
                    key = check_idempotency_key(request.pop("idempotency_key"))
                job = self._prepare(request)
                if options is not None and options.bulk:
                    require_batch_models(self._models_of(job[0], job[1]))
                job_id = uuid.uuid4().hex
                if key is not None:
                    tenant = options.tenant if options is not None else None
                    keyed[len(prepared)] = Claim(
                        key, tenant, fingerprint(job[0], job[1]), job_id, job[2], TASK_QUEUES[job[0]]
                    )
                prepared.append((job_id, job))
            except VetqError as exc:  # bad input: an envelope in its place, the batch goes on
                prepared.append(error_result(exc.code, exc.message))
        tracer = get_tracer()
        # One producer span per chunk, not per job: a job's task span is a child of it
        # when they share a trace, else the root of the job's own trace, linked to it.
        attributes: dict[str, Any] = {
            "messaging.system": "celery",
            "messaging.batch.message_count": len(prepared),
            "vetq.batch_id": batch.id,
        }
        with _service_errors(self.redis_url), tracer.span("vetq.submit_batch", attributes, kind="producer"):
            headers = batch._headers
            if tracer.enabled:
                headers = dict(headers)
                tracer.inject(headers)
            # Keyed lines: a key that names a job already gives that job (not sent again).
            existing: dict[int, Job | dict[str, Any]] = {}
            claims = list(keyed.items())
            outcomes = claim(self.redis(), [c for _, c in claims], self.settings.result_ttl_s)
            for (index, item), outcome in zip(claims, outcomes, strict=True):
                if outcome.conflict:
                    error = IdempotencyConflictError(_conflict_text(item.key, outcome.job_id))
                    existing[index] = error_result(error.code, error.message)
                elif not outcome.new:
                    existing[index] = Job(self, outcome.job_id, outcome.trace_id, outcome.queue)
                else:  # new, or an orphaned claim's job sent now under its id
                    task, payload, _ = prepared[index][1]  # type: ignore[index]
                    trace_id = outcome.trace_id or item.trace_id
                    prepared[index] = (outcome.job_id, (task, payload | {"trace_id": trace_id}, trace_id))
            prepared = [existing.get(i, entry) for i, entry in enumerate(prepared)]  # type: ignore[misc]
            sendable = [(job_id, *job, headers) for job_id, job in (i for i in prepared if isinstance(i, tuple))]
            # In input order: a batch's list of jobs is (Client.batch).
            recorded = [e[0] if isinstance(e, tuple) else e.id for e in prepared if not isinstance(e, dict)]
            if recorded:
                self._record_submitted(recorded, batch_id=batch.id)
            try:
                sent = iter(self._send_many(sendable) if sendable else [])
            except BaseException:
                new_claims = [(c, o) for (_, c), o in zip(claims, outcomes, strict=True) if o.new]
                release(self.redis(), new_claims)  # not sent: a retry sends them
                raise
            added = [next(sent) if isinstance(item, tuple) else item for item in prepared]
        batch.entries.extend(added)
        if self._embedded is not None:
            self._embedded.scale_for(len(batch.entries))
        return added

    def _close_batch(self, batch: Batch) -> None:
        """Every request is sent: the batch's record says how many, and how many were refused."""
        with _service_errors(self.redis_url):
            refused = sum(1 for e in batch.entries if not isinstance(e, Job))
            self._record_batch(batch.id, {"total": len(batch.entries), "refused": refused, "state": "submitted"})
        log.info("batch_submitted", batch_id=batch.id, jobs=len(batch.entries) - refused, refused=refused)

    def _record_batch(self, batch_id: str, fields: dict[str, Any]) -> None:
        key = batch_record_key(batch_id)
        pipe = self.redis().pipeline(transaction=False)
        pipe.hset(key, mapping={name: str(value) for name, value in fields.items()})
        pipe.expire(key, self.settings.result_ttl_s)
        pipe.execute()

    def batch(self, batch_id: str) -> Batch:
        """A batch submitted earlier (by any client of this Redis), by its id: its jobs
        in input order (lines refused at submission are not kept)."""
        with _service_errors(self.redis_url):
            self._batch_record(batch_id)
            job_ids = [as_text(j) for j in self.redis().lrange(batch_jobs_key(batch_id), 0, -1)]
        return Batch(self, [Job(self, job_id, None, None) for job_id in job_ids], batch_id)

    def batch_status(self, batch_id: str) -> dict[str, Any]:
        """Where a batch stands: its jobs done, failed and waiting (of which waiting for
        a provider batch), what the finished ones spent, and each provider batch its
        bulk jobs' calls went to, with its request counts by state."""
        with _service_errors(self.redis_url):
            return self._batch_status(batch_id)

    def _batch_record(self, batch_id: str) -> dict[str, str]:
        record = text_fields(self.redis().hgetall(batch_record_key(batch_id)))
        if not record:
            raise NotFoundError(
                f"no batch {batch_id!r} was submitted to {_safe_url(self.redis_url)}, or it has expired"
            )
        return record

    def _batch_status(self, batch_id: str) -> dict[str, Any]:
        r = self.redis()
        record = self._batch_record(batch_id)
        job_ids = [as_text(j) for j in r.lrange(batch_jobs_key(batch_id), 0, -1)]
        counts = dict.fromkeys(("done", "failed", "canceled", "waiting", "waiting_for_provider"), 0)
        finished: list[dict[str, Any]] = []
        for start in range(0, len(job_ids), STATUS_CHUNK):
            chunk = job_ids[start : start + STATUS_CHUNK]
            for raw in r.mget([CELERY_RESULT_PREFIX + job_id for job_id in chunk]):
                meta = json.loads(raw) if raw else None
                state = job_state(meta)
                counts[state] += 1
                if meta is not None and meta.get("status") == "SUCCESS" and isinstance(meta.get("result"), dict):
                    finished.append(meta["result"])
        counts["failed"] += int(record.get("refused") or 0)
        counts["waiting"] += counts["waiting_for_provider"]
        provider_batches = []
        for provider_batch in sorted(as_text(b) for b in r.smembers(bulk_vbatch_key(batch_id))):
            fields = text_fields(r.hgetall(bulk_batch_key(provider_batch)))
            if fields:
                view = provider_batch_view(provider_batch, fields)
                view["requests"] = len(view["requests"])
                provider_batches.append(view)
        return {
            "batch_id": batch_id,
            "lane": record.get("lane", "realtime"),
            "submitting": record.get("state") != "submitted",
            "total": int(record.get("total") or len(job_ids)),
            **counts,
            "spent": spent_of(finished),
            "provider_batches": provider_batches,
        }

    # --- review jobs ------------------------------------------------------
    def submit_review(self, request: Any, **options: Unpack[SubmitOptions]) -> Job:
        """Validate a review request, refuse a blindness leak here (no job, no tokens),
        and queue the review. Raises InvalidInputError or BlindnessLeakError. The
        options (`budget_usd`: the most the review's model calls may cost; `lane`,
        `priority`, `tenant`, ...): as for `submit`."""
        from vetq.core.review.schema import ReviewError, ReviewRequest
        from vetq.core.review.service import config_from_settings, preflight

        checked = job_options(**options)
        headers = self._job_headers(checked, TASK_REVIEW, {})
        model = parse_model(ReviewRequest, request, what="review request")
        leak = preflight(model, config_from_settings(self.settings))
        if isinstance(leak, ReviewError):
            raise BlindnessLeakError(leak.error.message)
        trace_id = model.trace_id or get_tracer().new_trace_id()
        payload = model.model_dump(mode="json", exclude_none=True) | {"trace_id": trace_id}
        return self._submit_job(checked, TASK_REVIEW, payload, trace_id, headers)

    @staticmethod
    def should_review(request: Any = None, **fields: Any) -> dict[str, Any]:
        """The deterministic should-review gate, run locally: no queue, no model."""
        from vetq.core.review.should_review import ShouldReviewRequest, should_review

        model = parse_model(
            ShouldReviewRequest, request if request is not None else fields, what="should_review request"
        )
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
        from vetq.core.errors import ConfigError
        from vetq.core.review.telemetry import StreamSink, build_outcome_record

        if not self.settings.telemetry:
            raise ConfigError("telemetry is off: set VETQ_TELEMETRY=on to record outcomes")
        if not isinstance(review_id, str) or not review_id.strip() or len(review_id) > 128:
            raise InvalidInputError("review_id must be the review's id (meta.review_id)")
        record = build_outcome_record(review_id, accepted_review, later_rework_required, review_was_useful)
        StreamSink(self.redis(), TELEMETRY_STREAM).write(record)
        return record

    def redis(self) -> Any:
        import redis

        if getattr(self, "_redis", None) is None:
            from redis.backoff import ExponentialBackoff

            # As patient as a publish (core.queue's task_publish_retry_policy, ~30 s):
            # a Redis restart or failover delays a submit instead of failing it.
            self._redis = redis.Redis.from_url(
                self.redis_url,
                retry=_RetryUnlessRefused(ExponentialBackoff(cap=2.0, base=0.5), 20),
                retry_on_error=[redis.ConnectionError, redis.TimeoutError],
            )
        return self._redis

    def job(self, job_id: str, *, queue: str | None = None) -> Job:
        """A handle on a job submitted earlier, by its id. Its status() and result()
        raise NotFoundError if no client submitted that id to this Redis."""
        if not isinstance(job_id, str) or not job_id.strip() or len(job_id) > MAX_JOB_ID_CHARS:
            raise InvalidInputError(
                f"a job id is the non-empty `job_id` a submit printed (at most {MAX_JOB_ID_CHARS} characters)"
            )
        # The queue of a job submitted elsewhere is unknown: waiting then only needs
        # some live worker, not one on a particular queue.
        return Job(self, job_id, None, queue)

    # --- liveness ---------------------------------------------------------
    def require_worker(self, queue: str | None) -> None:
        """Raise NoWorkerError when no live worker consumes `queue`. Asked up to three
        times with growing patience: a busy worker, or one reconnecting after a Redis
        restart, may miss one broadcast, and a false alarm would abandon a live job."""
        for timeout in (1.0, 2.0, 4.0):
            with _service_errors(self.redis_url):
                live = live_workers(self.app, timeout)
            if any(queue is None or queue in queues for queues in live.values()):
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


def live_workers(app: Celery, timeout: float) -> dict[str, list[str]]:
    """Which live workers consume which queue: the one probe behind a waiting
    producer's require_worker and the operator's Admin.workers."""
    # A broker connection dropped mid-probe is asked again on a fresh connection:
    # a liveness check must not fail a waiting client over one lost socket.
    for attempt in (1, 2, 3):
        try:
            replies = app.control.inspect(timeout=timeout).active_queues() or {}
            break
        except (redis.ConnectionError, redis.TimeoutError, OperationalError) as exc:
            log.warning("worker_probe_connection_lost", error=type(exc).__name__, attempt=attempt)
            if attempt == 3:
                raise
            time.sleep(0.2 * attempt)
    return {host: [q["name"] for q in queues] for host, queues in replies.items()}


# What a send meets while Redis restarts or fails over: worth sending again.
BROKER_SEND_ERRORS: tuple[type[Exception], ...] = (
    BatchPublishError,
    OperationalError,
    redis.ConnectionError,
    redis.TimeoutError,
    ConnectionError,
)


class _RetryUnlessRefused(Retry):
    """redis-py's retry, minus a refused password (an AuthenticationError is a
    ConnectionError to redis-py): asking again cannot change the answer."""

    def call_with_retry(self, do: Any, fail: Any, is_retryable: Any = None, with_failure_count: bool = False) -> Any:
        def retryable(error: Exception) -> bool:
            return not isinstance(error, redis.AuthenticationError) and (is_retryable is None or is_retryable(error))

        return super().call_with_retry(do, fail, retryable, with_failure_count)


class _ProducerApp(Celery):
    """The client's Celery app. Every task it sends, by whatever path (a submit, or
    `client.app.send_task` by name), is first recorded under core.redis_keys.submitted_key, so
    status and result can tell an id never issued (NOT_FOUND) from a job still queued."""

    def __init__(self, client: Client, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.vetq_client = client

    def send_task(
        self,
        name: str,
        args: Any = None,
        kwargs: Any = None,
        *,
        task_id: str | None = None,
        vetq_recorded: bool = False,
        **options: Any,
    ) -> AsyncResult:
        task_id = task_id or uuid.uuid4().hex
        if not vetq_recorded:  # a batch records a whole chunk in one round trip beforehand
            self.vetq_client._record_submitted([task_id])
        return super().send_task(name, args, kwargs, task_id=task_id, **options)


def _submit_attributes(task_name: str, job_id: str) -> dict[str, Any]:
    """A producer span's attributes: the task, its queue and the job's id."""
    return {
        "messaging.system": "celery",
        "messaging.operation.type": "send",
        "messaging.destination.name": TASK_QUEUES.get(task_name),
        "messaging.message.id": job_id,
        "vetq.task": task_name,
    }


def _conflict_text(key: str, job_id: str) -> str:
    return (
        f"idempotency_key {key[:60]!r} already names job {job_id}, submitted with a different request; "
        "use a new key for a new request"
    )


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
    except Exception:
        log.debug("result_consumer_stop_failed", exc_info=True)
    consumer._pubsub = None


def _stored_state(raw: bytes) -> str | None:
    """The Celery state of a stored result, without decoding its value."""
    try:
        meta = json.loads(raw)
    except ValueError:
        return None
    return meta.get("status") if isinstance(meta, dict) else None


def _safe_url(url: str) -> str:
    from vetq.core.logging import redact_text

    return redact_text(url)
