"""Typed model-call failures. Each knows its error code and whether a retry may help.
Messages never carry an API key or the document."""

from __future__ import annotations

from vetq.core.errors import ErrorCode, VetqError
from vetq.core.llm.types import RateLimitInfo, Usage

HTTP_BODY_LIMIT = 300


class LLMError(VetqError):
    retryable: bool = False
    # Set by the structured-answer loop (core.llm.structured) as the error leaves it:
    # what the answer's attempts cost before it failed (repairs and refused requests
    # too), and the parameter fallbacks it took, so a caller can account for both.
    usage: Usage | None = None
    fallbacks: tuple[str, ...] = ()


class RateLimitedError(LLMError):
    code = ErrorCode.RATE_LIMITED
    retryable = True

    def __init__(self, message: str, *, retry_after_s: float | None = None, rate_limit: RateLimitInfo | None = None):
        super().__init__(message)
        self.rate_limit = rate_limit or RateLimitInfo(retry_after_s=retry_after_s)
        self.retry_after_s = retry_after_s if retry_after_s is not None else self.rate_limit.wait_hint_s()


class ProviderHTTPError(LLMError):
    code = ErrorCode.PROVIDER_HTTP_ERROR

    def __init__(self, status: int, body: str = "", *, message: str | None = None):
        self.status = int(status)
        self.body = (body or "")[:HTTP_BODY_LIMIT]
        super().__init__(message or f"provider answered HTTP {self.status}: {self.body}")
        # Server-side failures are worth another try; a 4xx is our request's fault.
        self.retryable = self.status >= 500 or self.status in (408, 409)


class ProviderNetworkError(LLMError):
    code = ErrorCode.PROVIDER_NETWORK_ERROR
    retryable = True


class ProviderTimeoutError(LLMError):
    code = ErrorCode.TIMEOUT
    retryable = True


class MalformedResponseError(LLMError):
    code = ErrorCode.MALFORMED_RESPONSE


class OutputTruncatedError(LLMError):
    code = ErrorCode.OUTPUT_TRUNCATED


class BudgetExceededError(LLMError):
    """Too little of a token budget is left for the call; nothing was sent. Raised by
    the call gate that holds the budget, or before a call whose allowance would be
    under MIN_CALL_TOKENS (core.llm.gate.plan_max_tokens)."""

    code = ErrorCode.BUDGET_EXCEEDED
