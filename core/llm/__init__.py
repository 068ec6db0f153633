"""The one boundary between vetq and language models."""

from core.llm.client import LLMClient, ModelSpec
from core.llm.errors import (
    BudgetExceededError,
    LLMError,
    MalformedResponseError,
    OutputTruncatedError,
    ProviderHTTPError,
    ProviderNetworkError,
    ProviderTimeoutError,
    RateLimitedError,
)
from core.llm.types import LLMRequest, LLMResponse, Message, RateLimitInfo, Usage

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
