"""The one place a review's token budget is decided.

Policy, before every call:
    max_tokens = min(max_tokens_per_call, budget_left - prompt_estimate)
and if that is under MIN_CALL_TOKENS no call is made (BudgetExceeded). After every
call the provider's reported usage total is charged.

`BudgetLedger` is a protocol so a worker can back it with Redis later;
`LocalBudget` is the in-process implementation.
"""

from __future__ import annotations

import threading
from typing import Protocol, runtime_checkable

from core.errors import ErrorCode, VetqError
from core.llm.tokens import estimate_prompt_tokens
from core.llm.types import LLMRequest, Usage
from core.review.schema import ReviewConfig

MIN_CALL_TOKENS = 256

__all__ = [
    "MIN_CALL_TOKENS",
    "BudgetExceeded",
    "BudgetLedger",
    "LocalBudget",
    "ReviewConfig",
    "plan_max_tokens",
]


class BudgetExceeded(VetqError):
    """Not enough budget left for a useful call; no call was made."""

    code = ErrorCode.BUDGET_EXCEEDED
    retryable = False


@runtime_checkable
class BudgetLedger(Protocol):
    def remaining(self) -> int:
        """Tokens still available to this review (never negative)."""
        ...

    def charge(self, usage: Usage) -> None:
        """Record what a finished call cost (its total tokens)."""
        ...


class LocalBudget:
    """An in-memory ledger for one review."""

    def __init__(self, limit: int) -> None:
        self.limit = int(limit)
        self.spent = 0
        self._lock = threading.Lock()

    def remaining(self) -> int:
        with self._lock:
            return max(0, self.limit - self.spent)

    def charge(self, usage: Usage) -> None:
        with self._lock:
            self.spent += max(0, int(usage.total_tokens))


def plan_max_tokens(prompt_estimate: int, *, remaining: int, max_tokens_per_call: int) -> int:
    """The completion allowance for the next call, or BudgetExceeded."""
    allowance = min(max_tokens_per_call, remaining - prompt_estimate)
    if allowance < MIN_CALL_TOKENS:
        raise BudgetExceeded(
            f"review token budget exhausted: {remaining} tokens left, the prompt needs about "
            f"{prompt_estimate}, leaving {max(allowance, 0)} for the answer (at least {MIN_CALL_TOKENS} needed)"
        )
    return allowance


def plan_for_request(request: LLMRequest, ledger: BudgetLedger, config: ReviewConfig) -> int:
    return plan_max_tokens(
        estimate_prompt_tokens(request), remaining=ledger.remaining(), max_tokens_per_call=config.max_tokens_per_call
    )
