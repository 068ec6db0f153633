"""The providers' Batch APIs behind one interface: Anthropic's Message Batches and
OpenAI's Batch API (an uploaded JSONL file of Chat Completions requests).

A `BatchAPI` is made from the realtime client of the same `provider:model`
(`batch_api_for`), and shares its SDK client, its request body (`_params`), its
reading of an answer (`_read`) and its error mapping, so a request answered on the
bulk lane is byte for byte the request the realtime lane would send, and its answer
reads the same.

Every request of a provider batch ends in one of four outcomes (`BatchOutcome`):
succeeded (with the LLMResponse), errored (with the LLMError it maps to), expired or
canceled (never charged: worth resubmitting). A request the provider's results do not
mention at all is reported as expired, so nothing submitted is ever dropped.

Failures of the batch endpoints themselves are core.llm.errors types: a 429 (the
per-model queued-token cap, a busy endpoint) is a RateLimitedError, a submission
refused for its size is ProviderHTTPError 413 (`BatchTooLargeError`), a batch the
provider failed as a whole (OpenAI's `failed`, e.g. token_limit_exceeded) is reported
by `retrieve` with its reason, its requests unanswered.

Paid once. `submit` takes a marker (the coordinator's submission id) that `find` can
find the batch by afterwards: a coordinator that died between the create and recording
the batch leaves it for a successor to adopt rather than send again. OpenAI batches
carry it in their metadata; Anthropic's Message Batches have no metadata, so `find`
matches those by creation time and request count (their custom_ids, the requests'
digests, are only readable once they end). `submit` also takes `proceed`, asked right
before the create call: a caller that no longer may create (its lease lost, its
submission's time to create passed) stops there, certain nothing was created.
`created_nothing(error)` says whether a failed submit certainly created no batch.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from vetq.core.errors import ConfigError
from vetq.core.llm.client import LLMClient
from vetq.core.llm.errors import LLMError, MalformedResponseError, ProviderHTTPError, RateLimitedError
from vetq.core.llm.providers import AnthropicClient, BedrockClient, OpenAIClient, sdk_base_error
from vetq.core.llm.types import LLMRequest, LLMResponse

__all__ = [
    "BATCH_PROVIDERS",
    "BATCH_WINDOW_S",
    "BatchAPI",
    "BatchOutcome",
    "BatchState",
    "BatchTooLargeError",
    "SubmitAbandonedError",
    "batch_api_for",
    "created_nothing",
    "has_batch_api",
]

# Both providers finish a batch within 24 hours or expire what is left.
BATCH_WINDOW_S = 24 * 3600
# Providers whose models vetq can send on the bulk lane.
BATCH_PROVIDERS = frozenset({"anthropic", "openai"})
# Downloading a whole batch's results (up to hundreds of MB) takes longer than one answer.
RESULTS_TIMEOUT_S = 600.0
# From a submit's start to its create call: building the request (and for OpenAI the
# upload, which has its own RESULTS_TIMEOUT_S on top).
CREATE_START_MARGIN_S = 60.0

OutcomeKind = Literal["succeeded", "errored", "expired", "canceled"]
# The OpenAI batch metadata key the submission marker goes under.
MARKER_KEY = "vetq_submission"
# `find` reads at most this many pages of a provider's batch list (newest first).
FIND_MAX_PAGES = 20
# Set on an error raised before any create call was sent (an upload that failed).
_BEFORE_CREATE = "vetq_before_create"


def has_batch_api(provider: str) -> bool:
    return provider in BATCH_PROVIDERS


class BatchTooLargeError(ProviderHTTPError):
    """The provider refused a submission for its size (HTTP 413, or a 400 naming a
    limit on requests or bytes): send it in smaller parts."""


# How the providers word a 400 for a batch over their limits (OpenAI's too_many_tasks,
# "File is too large", Anthropic's "List should have at most N items").
_SIZE_REFUSAL = re.compile(r"too_many_tasks|too large|at most \d+ items|exceeds the maximum|maximum allowed", re.I)


class BatchState(BaseModel):
    """A provider batch as `retrieve` sees it. `counts` has processing, succeeded,
    errored, canceled and expired. `failed`: the provider refused the whole batch
    (`reason` says why; `refused_for_capacity` when it was the queued-token cap, worth
    submitting again later; `refused_for_size` when it held too many requests, worth
    submitting again in smaller batches)."""

    model_config = ConfigDict(frozen=True)

    batch_id: str
    ended: bool
    failed: bool = False
    reason: str | None = None
    refused_for_capacity: bool = False
    refused_for_size: bool = False
    counts: dict[str, int]


class BatchOutcome(BaseModel):
    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    custom_id: str
    kind: OutcomeKind
    response: LLMResponse | None = None
    error: LLMError | None = None


class SubmitAbandonedError(LLMError):
    """`submit` stopped before its create call: the caller's `proceed` said no."""


def created_nothing(error: LLMError) -> bool:
    """Whether a failed `submit` certainly created no provider batch: it stopped before
    the create call, or the provider refused the create (a 4xx: it read the request and
    said no). A timeout, a dropped connection, an unreadable answer or a 5xx may have
    come after the provider created the batch."""
    if getattr(error, _BEFORE_CREATE, False) or isinstance(error, (SubmitAbandonedError, RateLimitedError)):
        return True
    return isinstance(error, ProviderHTTPError) and 400 <= error.status < 500 and error.status not in (408, 409)


def _before_create(error: LLMError) -> LLMError:
    setattr(error, _BEFORE_CREATE, True)
    return error


def _created_at(value: Any) -> float:
    """A batch's created_at as epoch seconds (Anthropic's SDK parses a datetime, OpenAI's is an int)."""
    return float(value.timestamp()) if hasattr(value, "timestamp") else float(value or 0)


def _json_size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


class BatchAPI:
    """One `provider:model`'s batch endpoints. `max_requests` and `max_bytes` are the
    provider's limits on one submission; `line_bytes` is what a line adds to it."""

    provider: str = ""
    max_requests: int = 0
    max_bytes: int = 0

    def __init__(self, client: Any) -> None:
        self._llm = client
        self.model: str = client.model
        self._base_error = sdk_base_error(client._sdk)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r})"

    @property
    def model_key(self) -> str:
        return f"{self.provider}:{self.model}"

    def line(self, custom_id: str, request: LLMRequest) -> dict[str, Any]:
        raise NotImplementedError

    def line_bytes(self, line: dict[str, Any]) -> int:
        return _json_size(line) + 1

    def submit(
        self,
        lines: Sequence[dict[str, Any]],
        *,
        marker: str | None = None,
        proceed: Callable[[], bool] | None = None,
    ) -> str:
        """Create a provider batch of `lines`, findable by `marker`; its id.
        SubmitAbandonedError when `proceed()`, asked right before the create call, is false."""
        raise NotImplementedError

    @property
    def create_start_s(self) -> float:
        """The longest a submit may take from its start to its create call."""
        return CREATE_START_MARGIN_S

    @property
    def create_timeout_s(self) -> float:
        """The longest a create call takes to land or fail (one request: SDK retries are off)."""
        return float(self._llm.timeout_s)

    def find(self, marker: str, requests: int, created_after: float, created_before: float) -> list[str]:
        """The ids of the provider batches, oldest first, created between the two moments
        (epoch s) that may be the one a submit with `marker` of `requests` requests made."""
        raise NotImplementedError

    def _check_proceed(self, proceed: Callable[[], bool] | None) -> None:
        if proceed is not None and not proceed():
            raise SubmitAbandonedError(f"{self.model_key} batch create: not sent (no longer allowed to create)")

    def retrieve(self, batch_id: str) -> BatchState:
        raise NotImplementedError

    def results(self, batch_id: str, custom_ids: Sequence[str]) -> Iterator[BatchOutcome]:
        """One outcome for every id of `custom_ids` (the batch's requests), in any order."""
        raise NotImplementedError

    def cancel(self, batch_id: str) -> None:
        raise NotImplementedError

    # ------------------------------------------------------------------ shared

    def _created_between(
        self,
        list_batches: Callable[..., Any],
        cursor: str,
        created_after: float,
        created_before: float,
        matches: Callable[[Any], bool],
    ) -> list[str]:
        """The ids of the batches created in the window that `matches` accepts, oldest
        first. Both providers list newest first, a page of 100 after a cursor batch id
        (`cursor` names the SDK's parameter); the walk stops at the first page that
        reaches past the window, or after FIND_MAX_PAGES."""
        found: list[str] = []
        after: str | None = None
        for _ in range(FIND_MAX_PAGES):
            kwargs: dict[str, Any] = {"limit": 100} if after is None else {"limit": 100, cursor: after}
            page = self._sdk_call("list", lambda t, kw=kwargs: list_batches(timeout=t, **kw))
            items = list(page.data)
            for batch in items:
                if created_after <= _created_at(batch.created_at) <= created_before and matches(batch):
                    found.append(str(batch.id))
            if not items or not page.has_more or _created_at(items[-1].created_at) < created_after:
                break
            after = str(items[-1].id)
        return found[::-1]

    def _sdk_call(self, what: str, send: Any, *, timeout_s: float | None = None) -> Any:
        timeout = timeout_s or self._llm.timeout_s
        try:
            return send(timeout)
        except self._base_error as exc:
            error = self._llm._map_error(exc, timeout)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            error = MalformedResponseError(f"{self.model_key} batch {what}: an answer that cannot be read ({exc})")
        if isinstance(error, ProviderHTTPError) and (
            error.status == 413 or (error.status == 400 and _SIZE_REFUSAL.search(error.body))
        ):
            raise BatchTooLargeError(error.status, error.body, message=f"{self.model_key} batch {what}: {error}")
        raise error

    def _read_answer(self, custom_id: str, answer: Any) -> BatchOutcome:
        try:
            response = self._llm._read(answer, {})
        except LLMError as exc:
            return BatchOutcome(custom_id=custom_id, kind="errored", error=exc)
        except (ValueError, KeyError, TypeError, AttributeError, IndexError):
            error = MalformedResponseError(f"{self.model_key} sent a batch answer that cannot be read")
            return BatchOutcome(custom_id=custom_id, kind="errored", error=error)
        return BatchOutcome(custom_id=custom_id, kind="succeeded", response=response)

    @staticmethod
    def _unmentioned(custom_ids: Sequence[str], seen: set[str]) -> Iterator[BatchOutcome]:
        for custom_id in custom_ids:
            if custom_id not in seen:
                yield BatchOutcome(custom_id=custom_id, kind="expired")


def _error_text(error: Any) -> tuple[str, str]:
    """(type, message) of a provider's error object, whatever its nesting."""
    if hasattr(error, "model_dump"):
        error = error.model_dump()
    if not isinstance(error, dict):
        return "error", str(error)[:300]
    nested = error.get("error")
    inner: dict[str, Any] = nested if isinstance(nested, dict) else error
    kind = str(inner.get("type") or inner.get("code") or "error")
    return kind, str(inner.get("message") or kind)[:300]


def _status_of(kind: str) -> int:
    """The HTTP status a realtime call would have met for an error of this type."""
    return {
        "invalid_request_error": 400,
        "authentication_error": 401,
        "permission_error": 403,
        "not_found_error": 404,
        "request_too_large": 413,
        "rate_limit_error": 429,
        "overloaded_error": 529,
        "api_error": 500,
    }.get(kind, 500)


class AnthropicBatchAPI(BatchAPI):
    provider = "anthropic"
    max_requests = 100_000
    max_bytes = 256 * 1024 * 1024

    def line(self, custom_id: str, request: LLMRequest) -> dict[str, Any]:
        params = self._llm._params(request)
        extra = params.pop("extra_body", None)
        if extra:
            params.update(extra)
        return {"custom_id": custom_id, "params": params}

    def submit(
        self,
        lines: Sequence[dict[str, Any]],
        *,
        marker: str | None = None,
        proceed: Callable[[], bool] | None = None,
    ) -> str:
        batches = self._llm._client.messages.batches
        self._check_proceed(proceed)
        created = self._sdk_call("create", lambda t: batches.create(requests=list(lines), timeout=t))
        return str(created.id)

    def find(self, marker: str, requests: int, created_after: float, created_before: float) -> list[str]:
        # No metadata on a Message Batch, and its custom_ids are unreadable until it ends:
        # the caller excludes the batches it has recorded, so what is left in the window
        # with as many requests is the one.
        def with_as_many_requests(batch: Any) -> bool:
            counts = batch.request_counts
            return sum(int(getattr(counts, name, 0) or 0) for name in _COUNT_NAMES) == requests

        return self._created_between(
            self._llm._client.messages.batches.list, "after_id", created_after, created_before, with_as_many_requests
        )

    def retrieve(self, batch_id: str) -> BatchState:
        batches = self._llm._client.messages.batches
        batch = self._sdk_call("retrieve", lambda t: batches.retrieve(batch_id, timeout=t))
        counts = batch.request_counts
        return BatchState(
            batch_id=batch_id,
            ended=batch.processing_status == "ended",
            counts={name: int(getattr(counts, name, 0) or 0) for name in _COUNT_NAMES},
        )

    def results(self, batch_id: str, custom_ids: Sequence[str]) -> Iterator[BatchOutcome]:
        batches = self._llm._client.messages.batches
        stream = self._sdk_call("results", lambda t: batches.results(batch_id, timeout=t), timeout_s=RESULTS_TIMEOUT_S)
        seen: set[str] = set()
        wanted = set(custom_ids)
        for item in stream:
            custom_id = str(item.custom_id)
            if custom_id not in wanted or custom_id in seen:
                continue
            seen.add(custom_id)
            result = item.result
            if result.type == "succeeded":
                yield self._read_answer(custom_id, result.message)
            elif result.type == "errored":
                kind, message = _error_text(result.error)
                error = ProviderHTTPError(
                    _status_of(kind), message, message=f"{self.model_key} batch request errored: {kind}: {message}"
                )
                yield BatchOutcome(custom_id=custom_id, kind="errored", error=error)
            else:
                yield BatchOutcome(custom_id=custom_id, kind="canceled" if result.type == "canceled" else "expired")
        yield from self._unmentioned(custom_ids, seen)

    def cancel(self, batch_id: str) -> None:
        batches = self._llm._client.messages.batches
        self._sdk_call("cancel", lambda t: batches.cancel(batch_id, timeout=t))


_COUNT_NAMES = ("processing", "succeeded", "errored", "canceled", "expired")
_OPENAI_ENDED = frozenset({"completed", "expired", "cancelled", "failed"})
# OpenAI's codes for a request the batch never ran.
_OPENAI_UNRUN = {"batch_expired": "expired", "batch_cancelled": "canceled"}
_CAPACITY_CODES = frozenset({"token_limit_exceeded", "rate_limit_exceeded"})
_SIZE_CODES = frozenset({"too_many_tasks"})


class OpenAIBatchAPI(BatchAPI):
    provider = "openai"
    max_requests = 50_000
    max_bytes = 200 * 1024 * 1024
    endpoint = "/v1/chat/completions"

    def line(self, custom_id: str, request: LLMRequest) -> dict[str, Any]:
        return {"custom_id": custom_id, "method": "POST", "url": self.endpoint, "body": self._llm._params(request)}

    def submit(
        self,
        lines: Sequence[dict[str, Any]],
        *,
        marker: str | None = None,
        proceed: Callable[[], bool] | None = None,
    ) -> str:
        sdk = self._llm._client
        data = "".join(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n" for line in lines)
        try:
            upload = self._sdk_call(
                "upload",
                lambda t: sdk.files.create(
                    file=("vetq-batch.jsonl", io.BytesIO(data.encode("utf-8"))), purpose="batch", timeout=t
                ),
                timeout_s=RESULTS_TIMEOUT_S,
            )
        except LLMError as exc:
            raise _before_create(exc) from exc
        self._check_proceed(proceed)
        extra: dict[str, Any] = {"metadata": {MARKER_KEY: marker}} if marker else {}
        created = self._sdk_call(
            "create",
            lambda t: sdk.batches.create(
                input_file_id=upload.id, endpoint=self.endpoint, completion_window="24h", timeout=t, **extra
            ),
        )
        return str(created.id)

    @property
    def create_start_s(self) -> float:
        return CREATE_START_MARGIN_S + RESULTS_TIMEOUT_S

    def find(self, marker: str, requests: int, created_after: float, created_before: float) -> list[str]:
        def marked(batch: Any) -> bool:
            return (batch.metadata or {}).get(MARKER_KEY) == marker

        return self._created_between(self._llm._client.batches.list, "after", created_after, created_before, marked)

    def retrieve(self, batch_id: str) -> BatchState:
        batch = self._sdk_call("retrieve", lambda t: self._llm._client.batches.retrieve(batch_id, timeout=t))
        counts = batch.request_counts
        total = int(getattr(counts, "total", 0) or 0)
        completed = int(getattr(counts, "completed", 0) or 0)
        failed = int(getattr(counts, "failed", 0) or 0)
        ended = batch.status in _OPENAI_ENDED
        left = max(0, total - completed - failed)
        reason, capacity, size = None, False, False
        if batch.status == "failed":
            codes = [(e.code or "", e.message or "") for e in (batch.errors.data or [])] if batch.errors else []
            capacity = any(code in _CAPACITY_CODES for code, _ in codes)
            size = any(code in _SIZE_CODES for code, _ in codes)
            reason = "; ".join(f"{code}: {message}" for code, message in codes)[:300] or "failed"
        unrun = "expired" if batch.status == "expired" else "canceled" if batch.status == "cancelled" else None
        return BatchState(
            batch_id=batch_id,
            ended=ended,
            failed=batch.status == "failed",
            reason=reason,
            refused_for_capacity=capacity,
            refused_for_size=size,
            counts={
                "processing": 0 if ended else left,
                "succeeded": completed,
                "errored": failed,
                "canceled": left if unrun == "canceled" else 0,
                "expired": left if unrun == "expired" else 0,
            },
        )

    def _file_lines(self, file_id: str | None) -> Iterator[dict[str, Any]]:
        if not file_id:
            return
        content = self._sdk_call(
            "results", lambda t: self._llm._client.files.content(file_id, timeout=t), timeout_s=RESULTS_TIMEOUT_S
        )
        for raw in content.text.splitlines():
            if raw.strip():
                try:
                    line = json.loads(raw)
                except ValueError:
                    continue  # one unreadable line: its request reads as unmentioned (expired)
                if isinstance(line, dict):
                    yield line

    def results(self, batch_id: str, custom_ids: Sequence[str]) -> Iterator[BatchOutcome]:
        batch = self._sdk_call("retrieve", lambda t: self._llm._client.batches.retrieve(batch_id, timeout=t))
        seen: set[str] = set()
        wanted = set(custom_ids)
        for line in [*self._file_lines(batch.output_file_id), *self._file_lines(batch.error_file_id)]:
            custom_id = str(line.get("custom_id"))
            if custom_id not in wanted or custom_id in seen:
                continue
            seen.add(custom_id)
            yield self._outcome(custom_id, line)
        yield from self._unmentioned(custom_ids, seen)

    def _outcome(self, custom_id: str, line: dict[str, Any]) -> BatchOutcome:
        error = line.get("error")
        if isinstance(error, dict) and error.get("code") in _OPENAI_UNRUN:
            return BatchOutcome(custom_id=custom_id, kind=_OPENAI_UNRUN[str(error["code"])])  # type: ignore[arg-type]
        answered = line.get("response")
        response: dict[str, Any] = answered if isinstance(answered, dict) else {}
        status = int(response.get("status_code") or 0)
        if error is None and status == 200:
            return self._read_answer(custom_id, response.get("body") or {})
        kind, message = _error_text(error if error is not None else response.get("body") or {})
        status = status if status >= 400 else _status_of(kind)
        return BatchOutcome(
            custom_id=custom_id,
            kind="errored",
            error=ProviderHTTPError(
                status, message, message=f"{self.model_key} batch request errored: {kind}: {message}"
            ),
        )

    def cancel(self, batch_id: str) -> None:
        self._sdk_call("cancel", lambda t: self._llm._client.batches.cancel(batch_id, timeout=t))


def batch_api_for(client: LLMClient) -> BatchAPI:
    """The Batch API of a realtime client's `provider:model`; ConfigError for a provider
    without one (Bedrock, replay and scripted clients)."""
    if isinstance(client, AnthropicClient) and not isinstance(client, BedrockClient):
        return AnthropicBatchAPI(client)
    if isinstance(client, OpenAIClient):
        return OpenAIBatchAPI(client)
    raise ConfigError(
        f"{client.provider}:{client.model} has no batch API vetq can use (the bulk lane serves "
        f"{', '.join(sorted(BATCH_PROVIDERS))}); submit it on the realtime lane"
    )
