"""Per-tenant usage per window (`vetq usage`): what each answered call of a tenant's job
used, added as the call gate settles it. One hash per window
(core.redis_keys.tenant_usage_key), a field per tenant and counter
(core.tenants.USAGE_COUNTERS), one pipelined round trip per answer, kept
USAGE_KEEP_S past the window's end. Jobs without a tenant are not counted."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from vetq.core.llm.prices import micro_usd
from vetq.core.llm.types import Usage
from vetq.core.redis_keys import tenant_usage_key
from vetq.core.tenants import USAGE_KEEP_S, usage_field, window_start

__all__ = ["TenantUsage"]


class TenantUsage:
    def __init__(self, redis_client: Any, window_s: int, *, clock: Callable[[], float] = time.time) -> None:
        if window_s < 1:
            raise ValueError("window_s must be at least 1")
        self.redis = redis_client
        self.window_s = int(window_s)
        self.clock = clock

    def record(self, tenant: str, usage: Usage, *, charged_tokens: int) -> None:
        """Count one answered call of `tenant` (`charged_tokens`: what its budgets were
        charged) in the current window."""
        start = window_start(self.clock(), self.window_s)
        key = tenant_usage_key(self.window_s, start)
        pipe = self.redis.pipeline(transaction=False)
        pipe.hincrby(key, usage_field(tenant, "calls"), 1)
        pipe.hincrby(key, usage_field(tenant, "tokens"), max(0, int(charged_tokens)))
        pipe.hincrby(key, usage_field(tenant, "input_tokens"), max(0, usage.prompt_tokens))
        pipe.hincrby(key, usage_field(tenant, "output_tokens"), max(0, usage.completion_tokens))
        if usage.cost_usd is None:
            pipe.hincrby(key, usage_field(tenant, "unpriced_calls"), 1)
        else:
            pipe.hincrby(key, usage_field(tenant, "cost_micro_usd"), micro_usd(usage.cost_usd))
        pipe.expireat(key, start + self.window_s + USAGE_KEEP_S)
        pipe.execute()
