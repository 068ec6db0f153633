"""The seam every model call passes through, and the one authority on token budgets.

Stages never call a client directly: they hand the client and request to a gate.
In a plain process the gate is direct; in a worker it is the Redis-backed call gate
(rate limiter, budget ledger, response cache) from workers/.

A gate holds the budgets its calls draw on (a job's, a batch's): before a call it
reserves the request's estimate (prompt estimate + max_tokens) on every one of them
and refuses the call (BudgetExceededError, nothing sent) when one has too little
left; after the call it settles the provider's count. A stage that can work with a
smaller answer asks `tokens_left()` first and sizes max_tokens to fit
(`plan_max_tokens`)."""

from __future__ import annotations

import copy
import threading
from typing import Protocol

from vetq.core.llm.client import LLMClient
from vetq.core.llm.errors import BudgetExceededError
from vetq.core.llm.tokens import estimate_prompt_tokens
from vetq.core.llm.types import LLMRequest, LLMResponse

# Under this many tokens an answer is not worth asking for: a JSON verdict alone needs more.
MIN_CALL_TOKENS = 256


class CallGate(Protocol):
    def call(self, client: LLMClient, request: LLMRequest, *, stage: str) -> LLMResponse: ...

    def tokens_left(self) -> int | None:
        """Tokens the tightest of this gate's budgets still allows (None: no budget)."""
        ...

    def job_scope(self, tokens: int) -> CallGate:
        """This gate for one job of at most `tokens`: its calls draw on the job's own
        budget as well as on every budget this gate already has. A gate that was made
        for one job already (a worker's, bound to `job:<id>`) keeps that budget."""
        ...


def plan_max_tokens(request: LLMRequest, gate: CallGate, *, max_tokens_per_call: int) -> int:
    """The completion allowance for `request`: min(max_tokens_per_call, tokens left -
    prompt estimate). Under MIN_CALL_TOKENS no call is worth making: BudgetExceededError."""
    left = gate.tokens_left()
    if left is None:
        return max_tokens_per_call
    prompt_estimate = estimate_prompt_tokens(request)
    allowance = min(max_tokens_per_call, left - prompt_estimate)
    if allowance < MIN_CALL_TOKENS:
        raise BudgetExceededError(
            f"token budget exhausted: {left} tokens left, the prompt needs about {prompt_estimate}, "
            f"leaving {max(allowance, 0)} for the answer (at least {MIN_CALL_TOKENS} needed)"
        )
    return allowance


class _LocalBudget:
    """One in-process budget: the local counterpart of a ledger scope."""

    def __init__(self, limit: int) -> None:
        self.limit = int(limit)
        self.spent = 0
        self.reserved = 0

    def left(self) -> int:
        return max(0, self.limit - self.spent - self.reserved)


# One lock for every local budget: a call reserves on several at once, all or none.
_BUDGETS_LOCK = threading.Lock()


class DirectGate:
    """No rate limits, no cache: the model is called as asked. Budgets are counters
    in this process (`token_budget`, and one per `job_scope`), reserved and settled
    like the worker gate's ledger scopes."""

    def __init__(self, token_budget: int | None = None) -> None:
        self._budgets: tuple[_LocalBudget, ...] = () if token_budget is None else (_LocalBudget(token_budget),)

    @property
    def spent(self) -> int:
        """Tokens charged to this gate's own (innermost) budget; 0 without one."""
        with _BUDGETS_LOCK:
            return self._budgets[-1].spent if self._budgets else 0

    def tokens_left(self) -> int | None:
        with _BUDGETS_LOCK:
            return min(b.left() for b in self._budgets) if self._budgets else None

    def job_scope(self, tokens: int) -> DirectGate:
        # A copy, so a gate subclass (a test's waiting gate, say) keeps its behaviour.
        job = copy.copy(self)
        job._budgets = (*self._budgets, _LocalBudget(tokens))
        return job

    def call(self, client: LLMClient, request: LLMRequest, *, stage: str) -> LLMResponse:
        if not self._budgets:
            return client.complete(request)
        estimate = estimate_prompt_tokens(request) + request.max_tokens
        with _BUDGETS_LOCK:
            short = [b for b in self._budgets if b.left() < estimate]
            if short:
                raise BudgetExceededError(
                    f"token budget exhausted: the call needs about {estimate} tokens, "
                    f"{min(b.left() for b in short)} are left"
                )
            for budget in self._budgets:
                budget.reserved += estimate
        charged = 0
        try:
            response = client.complete(request)
            # The provider's count; the estimate when it reported none (as the ledger does).
            charged = response.usage.total_tokens if response.usage.total_tokens > 0 else estimate
            return response
        finally:
            with _BUDGETS_LOCK:
                for budget in self._budgets:
                    budget.reserved -= estimate
                    budget.spent += charged
