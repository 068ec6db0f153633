"""The seam every model call passes through, and the one authority on token budgets.

Stages never call a client directly: they hand the client and request to a gate.
In a plain process the gate is direct; in a worker it is the Redis-backed call gate
(rate limiter, budget ledger, response cache) from workers/.

A gate holds the budgets its calls draw on (a job's, a batch's): before a call it
reserves the request's estimate (prompt estimate + max_tokens) on every one of them
and refuses the call (BudgetExceededError, nothing sent) when one has too little
left; after the call it settles the provider's count. A stage that can work with a
smaller answer asks `tokens_left()` first and sizes max_tokens to fit
(`plan_max_tokens`).

Budgets in dollars work the same way, in micro-dollars: the estimate is the prompt
estimate at the model's input price plus max_tokens at its output price, for the
lane the gate's calls run on, and the settle is the call's cost. A gate also prices
every answered call (`Usage.cost_usd`, core.llm.prices): None for a model without a
price, and a dollar budget on such a model is a ConfigError at its first call."""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable
from typing import Protocol

from vetq.core.llm.client import LLMClient
from vetq.core.llm.errors import BudgetExceededError
from vetq.core.llm.prices import (
    MICRO_USD,
    PriceTable,
    budget_micro_usd,
    check_lane,
    micro_usd,
    priced,
    shipped_prices,
)
from vetq.core.llm.tokens import estimate_prompt_tokens
from vetq.core.llm.types import LLMRequest, LLMResponse

# Under this many tokens an answer is not worth asking for: a JSON verdict alone needs more.
MIN_CALL_TOKENS = 256


# Whether an answer can be used (the structured loop's parse). A gate given one counts
# an unusable answer as a `malformed` call and keeps it out of its response cache, so a
# retry asks the model again instead of replaying the answer that failed.
AnswerCheck = Callable[[LLMResponse], bool]


class CallGate(Protocol):
    def call(
        self, client: LLMClient, request: LLMRequest, *, stage: str, usable: AnswerCheck | None = None
    ) -> LLMResponse: ...

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
    in this process (`token_budget`, one per `job_scope`, and `budget_usd` in dollars),
    reserved and settled like the worker gate's ledger scopes. Calls are priced with
    `prices` (the shipped table by default) for `lane`."""

    def __init__(
        self,
        token_budget: int | None = None,
        *,
        budget_usd: float | None = None,
        prices: PriceTable | None = None,
        lane: str = "realtime",
    ) -> None:
        self._budgets: tuple[_LocalBudget, ...] = () if token_budget is None else (_LocalBudget(token_budget),)
        # Micro-dollars, as the ledger keeps them.
        self._usd_budgets: tuple[_LocalBudget, ...] = (
            () if budget_usd is None else (_LocalBudget(budget_micro_usd(budget_usd)),)
        )
        self.prices = prices or shipped_prices()
        self.lane = check_lane(lane)

    @property
    def spent(self) -> int:
        """Tokens charged to this gate's own (innermost) budget; 0 without one."""
        with _BUDGETS_LOCK:
            return self._budgets[-1].spent if self._budgets else 0

    @property
    def spent_usd(self) -> float:
        """Dollars charged to this gate's dollar budget; 0.0 without one."""
        with _BUDGETS_LOCK:
            return self._usd_budgets[-1].spent / MICRO_USD if self._usd_budgets else 0.0

    def tokens_left(self) -> int | None:
        with _BUDGETS_LOCK:
            return min(b.left() for b in self._budgets) if self._budgets else None

    def job_scope(self, tokens: int) -> DirectGate:
        # A copy, so a gate subclass (a test's waiting gate, say) keeps its behaviour.
        job = copy.copy(self)
        job._budgets = (*self._budgets, _LocalBudget(tokens))
        return job

    def call(
        self, client: LLMClient, request: LLMRequest, *, stage: str, usable: AnswerCheck | None = None
    ) -> LLMResponse:
        # No cache and no metrics here: whether the answer is usable changes nothing.
        model_key = f"{client.provider}:{client.model}"
        if not self._budgets and not self._usd_budgets:
            return priced(client.complete(request), self.prices.lookup(model_key), lane=self.lane)
        prompt_estimate = estimate_prompt_tokens(request)
        estimate = prompt_estimate + request.max_tokens
        # A dollar budget needs the model's price before anything is sent.
        price = self.prices.price_for_budget(model_key) if self._usd_budgets else self.prices.lookup(model_key)
        usd_estimate = (
            price.estimate_micro_usd(prompt_estimate, request.max_tokens, lane=self.lane)
            if price is not None and self._usd_budgets
            else 0
        )
        with _BUDGETS_LOCK:
            short = [b for b in self._budgets if b.left() < estimate]
            if short:
                raise BudgetExceededError(
                    f"token budget exhausted: the call needs about {estimate} tokens, "
                    f"{min(b.left() for b in short)} are left"
                )
            short = [b for b in self._usd_budgets if b.left() < usd_estimate]
            if short:
                raise BudgetExceededError(
                    f"dollar budget exhausted: the call may cost up to ${usd_estimate / MICRO_USD:.6f}, "
                    f"${min(b.left() for b in short) / MICRO_USD:.6f} is left"
                )
            for budget in self._budgets:
                budget.reserved += estimate
            for budget in self._usd_budgets:
                budget.reserved += usd_estimate
        charged = charged_usd = 0
        try:
            response = priced(client.complete(request), price, lane=self.lane)
            # The provider's count; the estimate when it reported none (as the ledger does).
            reported = response.usage.total_tokens > 0
            charged = response.usage.total_tokens if reported else estimate
            cost = response.usage.cost_usd
            charged_usd = micro_usd(cost) if reported and cost is not None else usd_estimate
            return response
        finally:
            with _BUDGETS_LOCK:
                for budget in self._budgets:
                    budget.reserved -= estimate
                    budget.spent += charged
                for budget in self._usd_budgets:
                    budget.reserved -= usd_estimate
                    budget.spent += charged_usd
