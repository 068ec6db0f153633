"""The fleet-wide rate limiter: one sliding window per `provider:model`, kept in
Redis, so it holds across every worker process and host.

Redis layout (core.redis_keys.rate_limit_keys and rate_limit_sum_key; all keys of one
model share the hash tag `{provider:model}`):

    <prefix>:{provider:model}:w    sorted set: admitted entry ids, scored by time (ms, Redis TIME)
    <prefix>:{provider:model}:t    hash: entry id -> tokens (estimate, corrected by settle)
    <prefix>:{provider:model}:sum  hash: the window's running sum of tokens (and entries)
    <prefix>:{provider:model}:cd   cooldown: exists while every worker must wait (PTTL = time left)
    <prefix>:{provider:model}:wq   the calls waiting in place, by when they ask again (tenants)
    <prefix>:{provider:model}:wp   the waiting tenants: their calls, tokens and weight

The window, token and sum keys expire one window after their last write. Every
decision is one Lua script, so admission is atomic and uses Redis's clock, not the
workers'. A tokens-per-minute check reads the running sum, kept by the same scripts
that add, settle and trim entries, so an acquire costs O(log n) in the entries of the
window rather than a read of all of them (workers/lua/include/rl_window.lua says why
the sum cannot drift, and what makes the scripts count it again from the window).
`settle` re-dates an entry to the moment the answer came back: the provider saw the
request somewhere between admission and then, so the later time never lets the next
request arrive inside the provider's window. An entry whose call failed (a 429
included) stays in the window: counting it is the safe side.

Tenants share a model's limit fairly (issue 18). A tenant's entry is
`<tenant>:<id>` (`entry_id_for`), and the running sum keeps each tenant's entries and
tokens in the window beside the total. A call refused with a wait its worker sleeps in
place registers as waiting until it asks again (`:wq`, `:wp`), so the acquire knows
which tenants have work waiting. When others wait, a tenant over its share of the limit
(the limit x its weight / the weights of the tenants waiting and its own) is admitted
only into what is left once the waiting tenants under their share are given what their
waiting calls need; a tenant under its share, or alone, is admitted as before. Capacity
is never held back for a call that is not waiting for it, so the limit stays used
(work-conserving), and a tenant's burst of thousands of calls cannot starve another
tenant's few: their calls are next whenever capacity frees up. Calls sent without a
tenant are one tenant (``) of weight 1. With no tenant in the window and nobody
waiting, an acquire does what it did before (one EXISTS more).
"""

from __future__ import annotations

import math
import threading
import uuid
from collections.abc import Mapping
from typing import Any

from vetq.core.llm.limits import Limit
from vetq.core.llm.types import RateLimitInfo
from vetq.core.logging import get_logger
from vetq.core.redis_keys import RATE_LIMIT_PREFIX, rate_limit_keys, rate_limit_sum_key, rate_limit_waiting_keys
from vetq.workers.lua_scripts import register

__all__ = ["DEFAULT_WINDOW_S", "WAITING_GRACE_S", "RedisRateLimiter", "entry_id_for"]

log = get_logger("vetq.rate_limiter")

DEFAULT_WINDOW_S = 60.0
# How long past its wait a call that sleeps in place stays registered as waiting (the
# sleep's overshoot and the round trip back); a call not back by then is forgotten.
WAITING_GRACE_S = 1.0


def entry_id_for(tenant: str | None, entry_id: str | None = None) -> str:
    """A limiter entry id: `<tenant>:<id>` for a tenant's call, the plain id otherwise."""
    entry = entry_id or uuid.uuid4().hex
    return f"{tenant}:{entry}" if tenant else entry


class RedisRateLimiter:
    """Admit model calls within `rpm` requests and `tpm` tokens per `window_s` window.

    `acquire` returns 0.0 when the call is admitted (and recorded), else the seconds
    to wait before asking again. Models missing from `limits` are not counted, but a
    shared cooldown (set by `cooldown` or `learn`) still holds them back."""

    def __init__(
        self,
        redis_client: Any,
        limits: Mapping[str, Limit] | None = None,
        *,
        key_prefix: str = RATE_LIMIT_PREFIX,
        window_s: float = DEFAULT_WINDOW_S,
    ) -> None:
        if window_s <= 0:
            raise ValueError("window_s must be positive")
        self.redis = redis_client
        self.limits: dict[str, Limit] = dict(limits or {})
        self.key_prefix = key_prefix
        self.window_s = float(window_s)
        self._window_ms = round(self.window_s * 1000)
        self._acquire, self._settle, self._cooldown = register(redis_client, "rl_acquire", "rl_settle", "rl_cooldown")
        self._local = threading.local()

    # ------------------------------------------------------------------ keys

    def _keys(self, model_key: str) -> tuple[str, str, str]:
        return rate_limit_keys(model_key, self.key_prefix)

    def _sum_key(self, model_key: str) -> str:
        return rate_limit_sum_key(model_key, self.key_prefix)

    def _waiting_keys(self, model_key: str) -> tuple[str, str]:
        return rate_limit_waiting_keys(model_key, self.key_prefix)

    def limit_for(self, model_key: str) -> Limit | None:
        return self.limits.get(model_key)

    @property
    def last_entry_id(self) -> str | None:
        """The entry id of this thread's last admitted acquire (for settle)."""
        return getattr(self._local, "entry_id", None)

    # ------------------------------------------------------------------ API

    def acquire(
        self,
        model_key: str,
        est_tokens: int,
        *,
        entry_id: str | None = None,
        weight: float = 1.0,
        waits_in_place_s: float = 0.0,
    ) -> float:
        """0.0 = admitted (the entry `entry_id`, or a fresh id kept in `last_entry_id`,
        is recorded with `est_tokens`); otherwise the seconds to wait. A request larger
        than the tpm limit never fits: it gets a full window's wait every time (the
        call gate refuses such requests before asking).

        A tenant's call has an `entry_id_for(tenant)` and its tenant's `weight`; a
        refusal whose wait is at most `waits_in_place_s` (the caller sleeps it and asks
        again with the same entry id) registers the call as waiting, which is what
        gives its tenant a share of the limit."""
        limit = self.limits.get(model_key) or Limit()
        entry = entry_id or uuid.uuid4().hex
        window, tokens, cooldown = self._keys(model_key)
        wait_ms = int(
            self._acquire(
                keys=[window, tokens, cooldown, self._sum_key(model_key), *self._waiting_keys(model_key)],
                args=[
                    int(limit.rpm or 0),
                    int(limit.tpm or 0),
                    max(0, int(est_tokens)),
                    self._window_ms,
                    entry,
                    float(weight) if weight > 0 else 1.0,
                    max(0, math.floor(waits_in_place_s * 1000)),
                    round(WAITING_GRACE_S * 1000),
                ],
            )
        )
        if wait_ms <= 0:
            self._local.entry_id = entry
            return 0.0
        return wait_ms / 1000.0

    def settle(self, model_key: str, entry_id: str, actual_tokens: int) -> bool:
        """Correct an admitted entry to what the provider counted (and date it now,
        the conservative end of when the provider saw it). False if it has left the
        window (or the model is not counted)."""
        window, tokens, _ = self._keys(model_key)
        return bool(
            self._settle(
                keys=[window, tokens, self._sum_key(model_key)],
                args=[entry_id, max(0, int(actual_tokens)), self._window_ms],
            )
        )

    def cooldown(self, model_key: str, seconds: float) -> float:
        """Make every worker wait `seconds` before the next call to this model; an
        existing longer cooldown is kept (never shortened). Returns the seconds left."""
        ms = math.ceil(max(0.0, float(seconds)) * 1000)
        left_ms = int(self._cooldown(keys=[self._keys(model_key)[2]], args=[ms]))
        return max(0, left_ms) / 1000.0

    def cooldown_left(self, model_key: str) -> float:
        left_ms = int(self.redis.pttl(self._keys(model_key)[2]))
        return max(0, left_ms) / 1000.0

    def learn(self, model_key: str, rate_limit: RateLimitInfo | None) -> float:
        """When the provider says no requests (or tokens) remain, cool down until its
        reset time. Returns the cooldown set (0.0 when none was needed)."""
        if rate_limit is None:
            return 0.0
        waits = []
        if rate_limit.remaining_requests == 0 and rate_limit.reset_requests_s is not None:
            waits.append(rate_limit.reset_requests_s)
        if rate_limit.remaining_tokens == 0 and rate_limit.reset_tokens_s is not None:
            waits.append(rate_limit.reset_tokens_s)
        wait = max(waits) if waits else 0.0
        if wait <= 0:
            return 0.0
        log.info("rate_limit_learned", model_key=model_key, cooldown_s=round(wait, 3))
        return self.cooldown(model_key, wait)

    def in_window(self, model_key: str) -> int:
        """How many entries the model's window holds (expired ones included until the
        next acquire prunes them); for tests and metrics."""
        return int(self.redis.zcard(self._keys(model_key)[0]))

    def tenants_in_window(self, model_key: str) -> dict[str, tuple[int, int]]:
        """Each tenant's (entries, tokens) in the model's window as the scripts keep
        them, the calls without a tenant under ``; for tests and an operator's look."""
        saved = {
            (k.decode() if isinstance(k, bytes) else k): int(float(v))
            for k, v in self.redis.hgetall(self._sum_key(model_key)).items()
        }
        tenants = {
            name[2:]: (value, saved.get(f"k:{name[2:]}", 0)) for name, value in saved.items() if name.startswith("n:")
        }
        rest = (saved.get("entries", 0) - saved.get("tn", 0), saved.get("tokens", 0) - saved.get("tk", 0))
        if rest[0] > 0:
            tenants[""] = rest
        return tenants

    def waiting_tenants(self, model_key: str) -> dict[str, dict[str, float]]:
        """The tenants registered as waiting for the model: calls, tokens and weight."""
        raw = self.redis.hgetall(self._waiting_keys(model_key)[1])
        waiting: dict[str, dict[str, float]] = {}
        for key, value in raw.items():
            name = key.decode() if isinstance(key, bytes) else key
            kind, _, tenant = name.partition(":")
            waiting.setdefault(tenant, {})[{"n": "calls", "k": "tokens", "w": "weight"}[kind]] = float(value)
        return waiting

    def window_sum(self, model_key: str) -> dict[str, int]:
        """The window's running sum as the scripts keep it: `tokens` in `entries`
        entries (expired ones included until the next acquire trims them), and how
        many times it was counted again from the whole window (`recounts`, which only
        a key lost on its own or a writer that does not keep the sum causes); for
        tests and metrics."""
        saved = self.redis.hmget(self._sum_key(model_key), "tokens", "entries", "recounts")
        return {
            name: int(float(value or 0)) for name, value in zip(("tokens", "entries", "recounts"), saved, strict=True)
        }
