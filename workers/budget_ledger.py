"""Token budgets in Redis, shared by every worker: one per scope (`job:<id>`,
`batch:<id>`, ...), reserved before a model call and settled after it.

Redis layout (core.redis_keys.budget_*_key; every key carries the hash tag
`{<prefix>}`, so each script's keys sit in one Redis Cluster slot):

    {<prefix>}:scope:<scope>   hash  limit, spent, reserved, and r:<id> = tokens of
                                     each reservation the scope still holds
                                     (TTL from set_limit)
    {<prefix>}:lease:<scope>   zset  reservation ids held on the scope, scored by the
                                     lease's deadline (ms, Redis TIME)
    {<prefix>}:res:<id>        hash  state (reserved|settled|released), tokens,
                                     scopes and leases (JSON lists of keys),
                                     lease_until_ms, actual

`reserve` checks and reserves every scope in one Lua script: either each scope has
`limit - spent - reserved >= tokens` and all are reserved, or nothing changes. So a
budget is passed only by what a provider counts beyond the estimate. `settle` and
`release` act once per reservation (its state), so a repeated settle charges once.

A scope without a limit is not checked but is still tracked (spent/reserved), with
`untracked_ttl_s` as its TTL; `remaining()` of such a scope is UNLIMITED.

Leases: a reservation is held for `lease_s` (one model call: the provider timeout,
the in-place rate-limit wait before it, and a margin; see `lease_s_for`). A worker
that dies mid-call never settles, so the next `reserve` on the same scope gives the
tokens of every expired lease back, inside the same script (and so does every read
of the scope: `remaining()` never counts a dead worker's tokens). A settle that arrives
after its lease was swept still charges the real usage once, and takes nothing more
off `reserved` on the scopes that already gave the tokens back. `renew` restarts a
lease (e.g. once a long wait for the rate limiter is over).
"""

from __future__ import annotations

import json
import math
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from vetq.core.redis_keys import BUDGET_PREFIX, budget_lease_key, budget_reservation_key, budget_scope_key
from vetq.core.settings import VetqSettings
from vetq.workers.lua_scripts import register

__all__ = ["LEASE_MARGIN_S", "UNLIMITED", "RedisBudgetLedger", "lease_s_for"]

UNLIMITED = 2**62

# Beyond the provider timeout: the SDK's own overhead around the HTTP request and the
# Redis round trips between reserve and the call.
LEASE_MARGIN_S = 10.0


def lease_s_for(settings: VetqSettings, *, margin_s: float = LEASE_MARGIN_S) -> float:
    """How long a reservation may stay unsettled before it counts as its dead worker's:
    the provider timeout, plus the rate-limit wait a worker sleeps in place between
    reserving and calling, plus `margin_s`."""
    return float(settings.provider_timeout_s) + float(settings.max_sleep_s) + float(margin_s)


# Reservations whose keys one ledger remembers at most (a few hundred are in flight
# per worker process; the rest read their keys back).
HELD_KEYS_KEPT = 10_000


def _default_lease_s() -> float:
    fields = VetqSettings.model_fields
    return float(fields["provider_timeout_s"].default) + float(fields["max_sleep_s"].default) + LEASE_MARGIN_S


def _int(value: Any) -> int:
    if value is None:
        return 0
    if isinstance(value, bytes):
        value = value.decode()
    return int(value)


def _text(value: Any) -> str | None:
    return value.decode() if isinstance(value, bytes) else value


class RedisBudgetLedger:
    def __init__(
        self,
        redis_client: Any,
        *,
        key_prefix: str = BUDGET_PREFIX,
        reservation_ttl_s: int = 24 * 3600,
        untracked_ttl_s: int = 7 * 24 * 3600,
        lease_s: float | None = None,
    ) -> None:
        if not key_prefix or "{" in key_prefix or "}" in key_prefix:
            raise ValueError("key_prefix must be non-empty and hold no braces (it becomes the keys' hash tag)")
        lease_s = _default_lease_s() if lease_s is None else float(lease_s)
        if not (lease_s > 0 and math.isfinite(lease_s)):
            raise ValueError("lease_s must be a positive number of seconds")
        self.redis = redis_client
        self.key_prefix = key_prefix
        self.reservation_ttl_s = int(reservation_ttl_s)
        self.untracked_ttl_s = int(untracked_ttl_s)
        self.lease_s = lease_s
        self._lease_ms = max(1, round(lease_s * 1000))
        # What each reservation made here holds (its hash, scopes and lease sets), so
        # settling it does not first read them back: one round trip per model call
        # fewer. Entries leave when the reservation is finished; the bound covers
        # reservations finished elsewhere (a bulk call settled by another worker) or
        # never (a crash), which fall back to reading the keys from the reservation.
        self._held_keys: dict[str, list[str]] = {}
        self._set_limit, self._reserve, self._finish, self._renew, self._charge, self._sweep = register(
            redis_client,
            "budget_set_limit",
            "budget_reserve",
            "budget_finish",
            "budget_renew",
            "budget_charge",
            "budget_sweep",
        )

    # ------------------------------------------------------------------ keys

    def scope_key(self, scope: str) -> str:
        return budget_scope_key(scope, self.key_prefix)

    def lease_key(self, scope: str) -> str:
        return budget_lease_key(scope, self.key_prefix)

    def reservation_key(self, reservation_id: str) -> str:
        return budget_reservation_key(reservation_id, self.key_prefix)

    # ------------------------------------------------------------------ API

    def set_limit(self, scope: str, tokens: int, ttl_s: int) -> bool:
        """Give `scope` a limit of `tokens`, unless it already has one (a re-delivered
        job keeps what it spent). True when this call set it."""
        return bool(self._set_limit(keys=[self.scope_key(scope)], args=[int(tokens), max(1, int(ttl_s))]))

    def set_limits(self, limits: Mapping[str, int], ttl_s: int, ttls: Mapping[str, int] | None = None) -> int:
        """`set_limit` for several scopes in one round trip, each with its TTL from
        `ttls` (a tenant's window) or `ttl_s`; how many got their limit from this call."""
        if not limits:
            return 0
        ttls = ttls or {}
        return int(
            self._set_limit(
                keys=[self.scope_key(scope) for scope in limits],
                args=[
                    *(int(tokens) for tokens in limits.values()),
                    *(max(1, int(ttls.get(scope, ttl_s))) for scope in limits),
                ],
            )
        )

    def reserve(self, scopes: Sequence[str], tokens: int, *, lease_s: float | None = None) -> str | None:
        """Reserve `tokens` on every scope, atomically, under a lease of `lease_s` (the
        ledger's own by default; a bulk-lane call waits hours for its batch); None
        (nothing reserved) when any scope has too little left once expired leases are
        given back."""
        tokens = max(0, int(tokens))
        lease_ms = self._lease_ms if lease_s is None else max(1, round(float(lease_s) * 1000))
        unique = list(dict.fromkeys(scopes))
        while True:
            reservation_id = uuid.uuid4().hex
            keys = [
                self.reservation_key(reservation_id),
                *(self.scope_key(s) for s in unique),
                *(self.lease_key(s) for s in unique),
            ]
            result = int(
                self._reserve(
                    keys=keys,
                    args=[
                        tokens,
                        max(self.reservation_ttl_s, lease_ms // 1000 + 1),
                        self.untracked_ttl_s,
                        lease_ms,
                        reservation_id,
                    ],
                )
            )
            if result == 1:
                if len(self._held_keys) >= HELD_KEYS_KEPT:
                    self._held_keys.clear()
                self._held_keys[reservation_id] = keys
                return reservation_id
            if result == 0:
                return None
            # -1: a uuid collision; draw again

    def _keys_of(self, reservation_id: str) -> list[str] | None:
        known = self._held_keys.get(reservation_id)
        if known is not None:
            return known
        key = self.reservation_key(reservation_id)
        scopes, leases = self.redis.hmget(key, "scopes", "leases")
        if scopes is None or leases is None:
            return None
        return [key, *json.loads(_text(scopes) or "[]"), *json.loads(_text(leases) or "[]")]

    def _finish_reservation(self, reservation_id: str, mode: str, actual_tokens: int) -> bool:
        keys = self._keys_of(reservation_id)
        if keys is None:
            return False
        finished = bool(self._finish(keys=keys, args=[mode, max(0, int(actual_tokens)), reservation_id]))
        self._held_keys.pop(reservation_id, None)
        return finished

    def settle(self, reservation_id: str, actual_tokens: int) -> bool:
        """Move the reservation to spent at the real usage; True the first time only
        (also after its lease expired: what the provider counted is charged once)."""
        return self._finish_reservation(reservation_id, "settle", actual_tokens)

    def release(self, reservation_id: str) -> bool:
        """Give the reservation back (the call failed before the provider charged)."""
        return self._finish_reservation(reservation_id, "release", 0)

    def renew(self, reservation_id: str) -> bool:
        """Restart the reservation's lease from now. False when it is already finished
        or a scope has already given back its expired lease: the caller then holds
        less than it reserved and should release it and reserve again."""
        keys = self._keys_of(reservation_id)
        if keys is None:
            return False
        return bool(self._renew(keys=keys, args=[self._lease_ms, reservation_id]))

    def charge(self, scopes: Sequence[str], tokens: int) -> None:
        """Add `tokens` to spent on every scope without a reservation."""
        unique = list(dict.fromkeys(scopes))
        if unique:
            self._charge(keys=[self.scope_key(s) for s in unique], args=[max(0, int(tokens)), self.untracked_ttl_s])

    def _fields(self, scope: str) -> tuple[int | None, int, int]:
        # Swept first: a review clamps its calls to remaining() and may never reserve,
        # so a read that counted dead workers' tokens could end it for want of budget.
        limit, spent, reserved = self._sweep(keys=[self.scope_key(scope), self.lease_key(scope)])
        return (None if limit is None else _int(limit)), _int(spent), _int(reserved)

    def remaining(self, scope: str) -> int:
        """limit - spent - reserved (expired leases given back first), never negative;
        UNLIMITED for a scope without a limit."""
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
        """reserved, settled, released, or expired (reserved, but its lease has run
        out: the next reserve on its scopes gives its tokens back)."""
        state, until = self.redis.hmget(self.reservation_key(reservation_id), "state", "lease_until_ms")
        state = _text(state)
        if state == "reserved" and until is not None:
            seconds, micros = self.redis.time()
            if seconds * 1000 + micros // 1000 >= _int(until):
                return "expired"
        return state
