"""How a producer asks for a job to be run, checked where it is submitted.

Every submit (`Client.submit*`, `AsyncClient`, a batch, the CLI, MCP) takes the same
options, listed once here as `SubmitOptions`:

- `budget_usd`: the most the job's model calls may cost, in US dollars;
- `lane`, `bulk_deadline`, `realtime_fallback`: the lane (core.lanes);
- `priority`: "high", "normal" (default) or "low";
- `tenant`: the customer the job is run for, `[a-z0-9_-]{1,64}`;
- `callback_url`: an http(s) URL the final result is POSTed to;
- `idempotency_key`: the same key returns the same job (at most 200 characters).

A bad option is INVALID_INPUT naming it, before anything is sent. What the worker
needs travels in the message headers (`JobOptions.headers()`), like the budgets: how a
job is run, not what it asks. The idempotency key stays with the producer."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, TypedDict
from urllib.parse import urlsplit

from vetq.core.errors import InvalidInputError
from vetq.core.lanes import LaneOptions, lane_options
from vetq.core.llm.prices import check_budget_usd

__all__ = [
    "BatchOptions",
    "JobOptions",
    "Priority",
    "SubmitOptions",
    "job_options",
]

MAX_IDEMPOTENCY_KEY_CHARS = 200
MAX_CALLBACK_URL_CHARS = 2048
_TENANT = re.compile(r"[a-z0-9_-]{1,64}")


class Priority(StrEnum):
    HIGH = "high"
    NORMAL = "normal"
    LOW = "low"


class BatchOptions(TypedDict, total=False):
    """The keyword options of a batch, for every job in it (`budget_usd` is then the
    batch's one shared budget; an idempotency key belongs to each line)."""

    budget_usd: float | None
    lane: str | None
    bulk_deadline: Any
    realtime_fallback: bool
    priority: str | None
    tenant: str | None
    callback_url: str | None


class SubmitOptions(BatchOptions, total=False):
    """The keyword options of every submit of one job (see the module's text)."""

    idempotency_key: str | None


@dataclass(frozen=True)
class JobOptions:
    lane: LaneOptions
    budget_usd: float | None = None
    priority: Priority = Priority.NORMAL
    tenant: str | None = None
    callback_url: str | None = None
    idempotency_key: str | None = None

    @property
    def bulk(self) -> bool:
        return self.lane.bulk

    def headers(self) -> dict[str, Any]:
        """What the job's message carries (nothing for a default)."""
        from vetq.core.queue import BUDGET_USD_HEADER, CALLBACK_URL_HEADER, PRIORITY_HEADER, TENANT_HEADER

        headers: dict[str, Any] = self.lane.headers()
        if self.budget_usd is not None:
            headers[BUDGET_USD_HEADER] = self.budget_usd
        if self.priority is not Priority.NORMAL:
            headers[PRIORITY_HEADER] = self.priority.value
        if self.tenant is not None:
            headers[TENANT_HEADER] = self.tenant
        if self.callback_url is not None:
            headers[CALLBACK_URL_HEADER] = self.callback_url
        return headers


def check_priority(value: Any) -> Priority:
    if value is None:
        return Priority.NORMAL
    try:
        return Priority(str(value).strip().lower()) if isinstance(value, str) else Priority(value)
    except ValueError:
        raise InvalidInputError(
            f"priority must be one of {', '.join(repr(p.value) for p in Priority)}, got {str(value)[:40]!r}"
        ) from None


def check_tenant(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not _TENANT.fullmatch(value):
        raise InvalidInputError(f"tenant must be 1 to 64 of a-z, 0-9, '_' and '-', got {str(value)[:80]!r}")
    return value


def check_idempotency_key(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise InvalidInputError("idempotency_key must be a non-empty string")
    if len(value) > MAX_IDEMPOTENCY_KEY_CHARS:
        raise InvalidInputError(
            f"idempotency_key is {len(value)} characters; at most {MAX_IDEMPOTENCY_KEY_CHARS} are allowed"
        )
    return value


def check_callback_url(value: Any) -> str | None:
    """An absolute http(s) URL with a host (where it may point is the webhook
    allow-list's to say, core.webhooks)."""
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > MAX_CALLBACK_URL_CHARS:
        raise InvalidInputError(f"callback_url must be a URL of at most {MAX_CALLBACK_URL_CHARS} characters")
    try:
        parts = urlsplit(value.strip())
        parts.port  # noqa: B018 - a port that is not a number raises here
    except ValueError:
        raise InvalidInputError(f"callback_url {value[:80]!r} is not a URL") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InvalidInputError(f"callback_url must be an http or https URL with a host, got {value[:80]!r}")
    if parts.username or parts.password:
        raise InvalidInputError("callback_url must not carry credentials: the result is signed instead")
    return value.strip()


def job_options(
    *,
    budget_usd: Any = None,
    lane: Any = None,
    bulk_deadline: Any = None,
    realtime_fallback: Any = False,
    priority: Any = None,
    tenant: Any = None,
    callback_url: Any = None,
    idempotency_key: Any = None,
) -> JobOptions:
    """A producer's options, checked: INVALID_INPUT naming the one that is wrong."""
    return JobOptions(
        lane=lane_options(lane, bulk_deadline=bulk_deadline, realtime_fallback=realtime_fallback),
        budget_usd=check_budget_usd(budget_usd),
        priority=check_priority(priority),
        tenant=check_tenant(tenant),
        callback_url=check_callback_url(callback_url),
        idempotency_key=check_idempotency_key(idempotency_key),
    )
