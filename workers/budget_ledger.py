"""Token budgets in Redis, shared by every worker: one per scope (`job:<id>`,
`batch:<id>`, ...), reserved before a model call and settled after it.

Redis layout:

    <prefix>:scope:<scope>     hash  limit, spent, reserved   (TTL from set_limit)
    <prefix>:res:<id>          hash  state (reserved|settled|released), tokens,
                                     scopes (JSON list of scope keys), actual

`reserve` checks and reserves every scope in one Lua script: either each scope has
`limit - spent - reserved >= tokens` and all are reserved, or nothing changes. So a
budget is passed only by what a provider counts beyond the estimate. `settle` and
`release` act once per reservation (its state), so a repeated settle charges once.

A scope without a limit is not checked but is still tracked (spent/reserved), with
`untracked_ttl_s` as its TTL; `remaining()` of such a scope is UNLIMITED.
A reservation never settled nor released (its worker died mid-call) keeps its
tokens reserved until the scope hash expires.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from typing import Any

from core.llm.types import Usage
from workers.rate_limiter import load_lua

__all__ = ["UNLIMITED", "RedisBudgetLedger", "ScopedBudget"]

UNLIMITED = 2**62


def _int(value: Any) -> int:
    if value is None:
        return 0
    if isinstance(value, bytes):
        value = value.decode()
    return int(value)


class RedisBudgetLedger:
    def __init__(self, redis_client: Any, *, key_prefix: str = "vetq:budget",
                 reservation_ttl_s: int = 24 * 3600, untracked_ttl_s: int = 7 * 24 * 3600) -> None:
        self.redis = redis_client
        self.key_prefix = key_prefix
        self.reservation_ttl_s = int(reservation_ttl_s)
        self.untracked_ttl_s = int(untracked_ttl_s)
        self._set_limit = redis_client.register_script(load_lua("budget_set_limit"))
        self._reserve = redis_client.register_script(load_lua("budget_reserve"))
        self._finish = redis_client.register_script(load_lua("budget_finish"))
        self._charge = redis_client.register_script(load_lua("budget_charge"))

    # ------------------------------------------------------------------ keys

    def scope_key(self, scope: str) -> str:
        return f"{self.key_prefix}:scope:{scope}"

    def reservation_key(self, reservation_id: str) -> str:
        return f"{self.key_prefix}:res:{reservation_id}"

    # ------------------------------------------------------------------ API

    def set_limit(self, scope: str, tokens: int, ttl_s: int) -> bool:
        """Give `scope` a limit of `tokens`, unless it already has one (a re-delivered
        job keeps what it spent). True when this call set it."""
        return bool(self._set_limit(keys=[self.scope_key(scope)], args=[int(tokens), max(1, int(ttl_s))]))

    def reserve(self, scopes: Sequence[str], tokens: int) -> str | None:
        """Reserve `tokens` on every scope, atomically; None (nothing reserved) when
        any scope has too little left."""
        tokens = max(0, int(tokens))
        unique = list(dict.fromkeys(scopes))
        while True:
            reservation_id = uuid.uuid4().hex
            result = int(self._reserve(
                keys=[self.reservation_key(reservation_id), *(self.scope_key(s) for s in unique)],
                args=[tokens, self.reservation_ttl_s, self.untracked_ttl_s],
            ))
            if result == 1:
                return reservation_id
            if result == 0:
                return None
            # -1: a uuid collision; draw again

    def _finish_reservation(self, reservation_id: str, mode: str, actual_tokens: int) -> bool:
        key = self.reservation_key(reservation_id)
        raw = self.redis.hget(key, "scopes")
        if raw is None:
            return False
        scope_keys = json.loads(raw.decode() if isinstance(raw, bytes) else raw)
        return bool(self._finish(keys=[key, *scope_keys], args=[mode, max(0, int(actual_tokens))]))

    def settle(self, reservation_id: str, actual_tokens: int) -> bool:
        """Move the reservation to spent at the real usage; True the first time only."""
        return self._finish_reservation(reservation_id, "settle", actual_tokens)

    def release(self, reservation_id: str) -> bool:
        """Give the reservation back (the call failed before the provider charged)."""
        return self._finish_reservation(reservation_id, "release", 0)

    def charge(self, scopes: Sequence[str], tokens: int) -> None:
        """Add `tokens` to spent on every scope without a reservation."""
        unique = list(dict.fromkeys(scopes))
        if unique:
            self._charge(keys=[self.scope_key(s) for s in unique], args=[max(0, int(tokens)), self.untracked_ttl_s])

    def _fields(self, scope: str) -> tuple[int | None, int, int]:
        limit, spent, reserved = self.redis.hmget(self.scope_key(scope), "limit", "spent", "reserved")
        return (None if limit is None else _int(limit)), _int(spent), _int(reserved)

    def remaining(self, scope: str) -> int:
        """limit - spent - reserved, never negative; UNLIMITED for a scope without a limit."""
        limit, spent, reserved = self._fields(scope)
        if limit is None:
            return UNLIMITED
        return max(0, limit - spent - reserved)

    def spent(self, scope: str) -> int:
        return self._fields(scope)[1]

    def reserved(self, scope: str) -> int:
        return self._fields(scope)[2]

    def limit(self, scope: str) -> int | None:
        return self._fields(scope)[0]

    def reservation_state(self, reservation_id: str) -> str | None:
        raw = self.redis.hget(self.reservation_key(reservation_id), "state")
        return raw.decode() if isinstance(raw, bytes) else raw


class ScopedBudget:
    """core.review.budget.BudgetLedger over Redis scopes: `remaining()` is the least
    left over `scopes`.

    `charge()`: when the review's calls go through a RedisCallGate whose
    `budget_scopes` cover these scopes, the gate has already settled each call's
    usage, so `charged_by_gate=True` (the default) makes charge() a no-op rather
    than a double charge. With `charged_by_gate=False` charge() adds the usage to
    spent on every scope."""

    def __init__(self, ledger: RedisBudgetLedger, scopes: Sequence[str], *, charged_by_gate: bool = True) -> None:
        self.ledger = ledger
        self.scopes = list(scopes)
        self.charged_by_gate = charged_by_gate

    def remaining(self) -> int:
        if not self.scopes:
            return UNLIMITED
        return max(0, min(self.ledger.remaining(s) for s in self.scopes))

    def charge(self, usage: Usage) -> None:
        if self.charged_by_gate:
            return
        self.ledger.charge(self.scopes, max(0, int(usage.total_tokens)))
