"""The one boundary between vetq and language models."""

from vetq.core.llm.client import LLMClient, ModelSpec
from vetq.core.llm.errors import (
    BudgetExceededError,
    LLMError,
    MalformedResponseError,
    OutputTruncatedError,
    ProviderHTTPError,
    ProviderNetworkError,
    ProviderTimeoutError,
    RateLimitedError,
)
from vetq.core.llm.types import LLMRequest, LLMResponse, Message, RateLimitInfo, Usage

__all__ = [
    "BudgetExceededError",
    "LLMClient",
    "LLMError",
    "LLMRequest",
    "LLMResponse",
    "MalformedResponseError",
    "Message",
    "ModelSpec",
    "OutputTruncatedError",
    "ProviderHTTPError",
    "ProviderNetworkError",
    "ProviderTimeoutError",
    "RateLimitInfo",
    "RateLimitedError",
    "Usage",
]
