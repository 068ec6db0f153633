"""A job's side of the bulk lane: what the call gate does with a model call of a job
that asked for `lane="bulk"`.

The answer is looked for where the bulk lane leaves it: the request's record (the
job that queued it receives it as its own, not cached, call), then the response cache
(another job's answer, or the realtime lane's). Without an answer, the call is queued
for the next provider batch (or joins the same request another job queued) and the
job is parked (`BulkWaitError`): the task records its message, gives its worker slot
back, and is published again when the answer lands (workers/bulk_coordinator.py).

A request that failed for good raises the job's error; one past its bulk deadline is
answered on the realtime lane when the job allows it (the gate's ordinary path), and
is the job's TIMEOUT otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vetq.core.errors import ErrorCode
from vetq.core.llm.batch_api import has_batch_api
from vetq.core.llm.client import LLMClient
from vetq.core.llm.errors import LLMError, ProviderHTTPError
from vetq.core.llm.types import LLMRequest, LLMResponse
from vetq.core.logging import get_logger
from vetq.workers.bulk_store import UNRESOLVED, BulkStore, StoredRequest
from vetq.workers.response_cache import RedisResponseCache

__all__ = ["BulkJob", "BulkLaneError", "BulkWaitError", "bulk_answer", "stored_error"]

log = get_logger("vetq.bulk")


class BulkWaitError(LLMError):
    """The job's call waits for a provider batch: park the job. Retryable, so it
    leaves the stages the way a rate-limit wait does, up to the task."""

    code = ErrorCode.RATE_LIMITED
    retryable = True

    def __init__(self, message: str, *, digest: str, model_key: str, new_request: dict[str, str] | None) -> None:
        super().__init__(message)
        self.digest = digest
        self.model_key = model_key
        self.new_request = new_request


class BulkLaneError(LLMError):
    """A bulk-lane request that ended without an answer: the job's error, not retried."""

    retryable = False

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class BulkJob:
    """What the gate of one bulk job knows of it."""

    job_id: str
    deadline: float | None
    realtime_fallback: bool
    vetq_batch: str | None


def stored_error(error: dict[str, Any]) -> LLMError:
    """The LLMError a failed request's record describes. An HTTP refusal comes back as
    ProviderHTTPError (so a model's parameter fallbacks still apply), never retryable:
    the bulk lane already retried it."""
    message = str(error.get("message") or "the bulk-lane request failed")
    status = error.get("status")
    if status:
        http = ProviderHTTPError(int(status), str(error.get("body") or ""), message=message)
        http.retryable = False
        return http
    try:
        code = ErrorCode(str(error.get("code")))
    except ValueError:
        code = ErrorCode.PROVIDER_HTTP_ERROR
    return BulkLaneError(code, message)


def describe_error(exc: LLMError) -> dict[str, str]:
    """A failed request's error as its record keeps it (see stored_error)."""
    fields = {"code": exc.code.value, "message": exc.message}
    if isinstance(exc, ProviderHTTPError):
        fields |= {"status": str(exc.status), "body": exc.body}
    return fields


def bulk_answer(
    job: BulkJob,
    store: BulkStore,
    cache: RedisResponseCache | None,
    client: LLMClient,
    request: LLMRequest,
    *,
    stage: str,
    digest: str,
) -> LLMResponse | None:
    """The answer for the bulk job's call, or None when it is to be asked on the
    realtime lane now. Raises BulkWaitError (park) or the request's error."""
    provider, model = client.provider, client.model
    model_key = f"{provider}:{model}"
    stored = store.get(digest)
    if stored is not None and stored.state == "done":
        response = stored.response()
        if response is not None:
            # The job that queued the request is the one that paid for it.
            return response if stored.owner == job.job_id else response.model_copy(update={"cached": True})
    if cache is not None:
        hit = cache.get(provider, model, request, stage=stage)
        if hit is not None:
            return hit
    if stored is not None and stored.state == "failed":
        raise stored_error(stored.error() or {})
    if stored is not None and stored.state == "realtime":
        if job.realtime_fallback:
            log.info("bulk_realtime_fallback", stage=stage, model_key=model_key)
            return None
        raise BulkLaneError(
            ErrorCode.TIMEOUT,
            f"the {stage} call was not answered on the bulk lane before its deadline, and the job does not "
            "allow the realtime lane (realtime_fallback)",
        )
    if not has_batch_api(provider):
        raise BulkLaneError(
            ErrorCode.CONFIG_ERROR,
            f"{model_key} has no batch API vetq can use: submit this job on the realtime lane",
        )
    new_request = (
        None
        if _unresolved(stored)
        else {"request": request.model_dump_json(), "stage": stage, "vbatch": job.vetq_batch or ""}
    )
    raise BulkWaitError(
        f"the {stage} call waits for a provider batch of {model_key}",
        digest=digest,
        model_key=model_key,
        new_request=new_request,
    )


def _unresolved(stored: StoredRequest | None) -> bool:
    return stored is not None and stored.state in UNRESOLVED
