"""Request and response types every provider speaks, and the rate-limit facts a
provider sends back in its headers."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializationInfo, SerializerFunctionWrapHandler, model_serializer


class Message(BaseModel):
    model_config = ConfigDict(frozen=True)

    role: Literal["user", "assistant"]
    content: str


# How a call is made, not what is asked: neither changes the answer (nor its cache key).
_NOT_IN_FINGERPRINT = {"use_cache", "timeout_s"}


class LLMRequest(BaseModel):
    """What a stage asks of a model. Carries no tools: vetq's models only answer."""

    model_config = ConfigDict(frozen=True)

    system: str
    messages: tuple[Message, ...]
    max_tokens: int = Field(default=1024, ge=1)
    temperature: float | None = 0.0
    json_mode: bool = False
    # Models differ: some want max_completion_tokens, some refuse a temperature or a
    # reasoning effort. The model's profile (core.llm.profiles) sets these before a call.
    reasoning_effort: str | None = None
    max_tokens_field: Literal["max_tokens", "max_completion_tokens"] = "max_tokens"
    # A caller may bypass the response cache (for example a deliberate re-ask).
    use_cache: bool = True
    # Seconds this call may take at most (None: the client's own timeout). Passed to the
    # SDK as its per-request timeout, so a call past it is really ended, not abandoned.
    timeout_s: float | None = Field(default=None, gt=0)

    def fingerprint(self) -> str:
        """A stable hash of everything that shapes the answer (not the model)."""
        canonical = json.dumps(
            self.model_dump(mode="json", exclude=_NOT_IN_FINGERPRINT), sort_keys=True, ensure_ascii=False
        )
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


COST_DECIMALS = 6


class Usage(BaseModel):
    """Tokens and what they cost. `cost_usd` is set by the call gate for each answered
    call (core.llm.prices): 0.0 for no call and for an answer from vetq's response cache
    (nothing was paid for it now), None when a call's model has no price. A sum is None
    as soon as one part is (an unknown cost is never counted as 0), else rounded to
    micro-dollars. None stays in the JSON as null, also where nulls are left out."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    cost_usd: float | None = 0.0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            total_tokens=self.total_tokens + other.total_tokens,
            cost_usd=add_costs(self.cost_usd, other.cost_usd),
        )

    @model_serializer(mode="wrap")
    def _unknown_cost_is_null(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo) -> Any:
        return keep_null_cost(handler(self), self.cost_usd, info)

    @classmethod
    def of(cls, prompt_tokens: int | None, completion_tokens: int | None) -> Usage:
        prompt, completion = int(prompt_tokens or 0), int(completion_tokens or 0)
        return cls(prompt_tokens=prompt, completion_tokens=completion, total_tokens=prompt + completion)


def keep_null_cost(data: Any, cost_usd: float | None, info: SerializationInfo) -> Any:
    """`data` (a model's dump) with an unknown `cost_usd` kept as null where a dump
    without nulls (exclude_none) dropped it, unless the caller excluded the field."""
    wanted = "cost_usd" not in (info.exclude or ()) and (info.include is None or "cost_usd" in info.include)
    if isinstance(data, dict) and cost_usd is None and info.exclude_none and wanted:
        data["cost_usd"] = None
    return data


def add_costs(*costs: float | None) -> float | None:
    """The sum of costs in dollars: None when any is None, else rounded to micro-dollars."""
    if any(cost is None for cost in costs):
        return None
    return round(sum((cost for cost in costs if cost is not None), 0.0), COST_DECIMALS)


_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")


def _parse_duration_s(value: str) -> float | None:
    """OpenAI's reset headers: '1s', '6m0s', '20ms', '1h2m3.5s'."""
    total, matched = 0.0, False
    for number, unit in _DURATION_PART.findall(value):
        matched = True
        total += float(number) * {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}[unit]
    return total if matched else None


def _seconds_until(value: str, now: datetime | None) -> float | None:
    """A reset time given as seconds, a duration, an RFC 3339 or an HTTP date."""
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    duration = _parse_duration_s(value)
    if duration is not None and not value[:4].isdigit():
        return duration
    now = now or datetime.now(UTC)
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        try:
            moment = parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return max(0.0, (moment - now).total_seconds())


def _int_or_none(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


class RateLimitInfo(BaseModel):
    """Rate-limit facts from OpenAI's x-ratelimit-* or Anthropic's
    anthropic-ratelimit-* headers (and retry-after), all as seconds from now."""

    retry_after_s: float | None = None
    limit_requests: int | None = None
    limit_tokens: int | None = None
    remaining_requests: int | None = None
    remaining_tokens: int | None = None
    reset_requests_s: float | None = None
    reset_tokens_s: float | None = None

    @classmethod
    def from_headers(cls, headers: Mapping[str, str] | None, *, now: datetime | None = None) -> RateLimitInfo:
        if not headers:
            return cls()
        h = {str(k).lower(): str(v) for k, v in headers.items()}

        def first(*names: str) -> str | None:
            return next((h[n] for n in names if n in h), None)

        def seconds(*names: str) -> float | None:
            raw = first(*names)
            return _seconds_until(raw, now) if raw is not None else None

        retry_after = None
        if "retry-after-ms" in h:
            ms = _int_or_none(h["retry-after-ms"])
            retry_after = ms / 1000.0 if ms is not None else None
        if retry_after is None and "retry-after" in h:
            retry_after = _seconds_until(h["retry-after"], now)
        return cls(
            retry_after_s=retry_after,
            limit_requests=_int_or_none(first("x-ratelimit-limit-requests", "anthropic-ratelimit-requests-limit")),
            limit_tokens=_int_or_none(first("x-ratelimit-limit-tokens", "anthropic-ratelimit-tokens-limit")),
            remaining_requests=_int_or_none(
                first("x-ratelimit-remaining-requests", "anthropic-ratelimit-requests-remaining")
            ),
            remaining_tokens=_int_or_none(
                first("x-ratelimit-remaining-tokens", "anthropic-ratelimit-tokens-remaining")
            ),
            reset_requests_s=seconds("x-ratelimit-reset-requests", "anthropic-ratelimit-requests-reset"),
            reset_tokens_s=seconds("x-ratelimit-reset-tokens", "anthropic-ratelimit-tokens-reset"),
        )

    def wait_hint_s(self) -> float | None:
        """How long the provider asked us to wait: Retry-After first, then the
        reset time of whichever budget is exhausted."""
        if self.retry_after_s is not None:
            return self.retry_after_s
        hints = []
        if self.remaining_requests == 0 and self.reset_requests_s is not None:
            hints.append(self.reset_requests_s)
        if self.remaining_tokens == 0 and self.reset_tokens_s is not None:
            hints.append(self.reset_tokens_s)
        return max(hints) if hints else None


TRUNCATION_REASONS = frozenset({"length", "max_tokens"})


class LLMResponse(BaseModel):
    text: str
    finish_reason: str | None = None
    model: str = ""
    usage: Usage = Field(default_factory=Usage)
    rate_limit: RateLimitInfo = Field(default_factory=RateLimitInfo)
    has_tool_calls: bool = False
    cached: bool = False

    @property
    def truncated(self) -> bool:
        return (self.finish_reason or "") in TRUNCATION_REASONS

    def with_cost(self, cost_usd: float | None) -> LLMResponse:
        """This response with its usage priced (the call gate's step once a call answered)."""
        return self.model_copy(update={"usage": self.usage.model_copy(update={"cost_usd": cost_usd})})
