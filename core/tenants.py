"""Tenants: per-tenant budgets per window and fair-share weights, the text of
VETQ_TENANT_LIMITS (read by core.settings) as TenantLimits.

    VETQ_TENANT_LIMITS="acme=200000tokens,5usd,weight=3;globex=1000000tokens;*=50000tokens"

Entries are separated by ';', each is `<tenant>=<part>[,<part>...]` with parts
`<n>tokens` (a token budget per window), `<x>usd` (a dollar budget per window) and
`weight=<w>` (the tenant's weight in the fair share of a busy queue and of a model's
rate limit; 1 by default). Any part may be left out; whitespace is ignored; an empty
entry is skipped. The tenant `*` stands for every tenant without an entry of its own
(each such tenant gets a budget of that size, not one shared budget). Jobs sent
without a tenant have no tenant budget and weigh 1.

Budgets count per window of VETQ_TENANT_WINDOW_S seconds, windows starting at
multiples of it since the Unix epoch (a day's window starts at 00:00 UTC), so every
worker agrees on the window without asking anyone."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from vetq.core.errors import ConfigError, InvalidInputError

__all__ = [
    "ANY_TENANT",
    "ENV_VAR",
    "MAX_WEIGHT",
    "USAGE_COUNTERS",
    "USAGE_KEEP_S",
    "TenantLimit",
    "TenantLimits",
    "parse_tenant_limits",
    "usage_counter_of",
    "usage_field",
    "window_start",
]

ENV_VAR = "VETQ_TENANT_LIMITS"
ANY_TENANT = "*"
MAX_WEIGHT = 1000.0
EXAMPLE = "acme=200000tokens,5usd,weight=3;globex=1000000tokens;*=50000tokens"

# What `vetq usage` counts per tenant and window (core.redis_keys.tenant_usage_key): the
# answered calls, the tokens charged to budgets (the provider's count, or the estimate
# when it reported none), the provider's input and output tokens, their cost in
# micro-dollars, and the calls whose model has no price (their cost is not in the sum).
USAGE_COUNTERS = ("calls", "tokens", "input_tokens", "output_tokens", "cost_micro_usd", "unpriced_calls")
# How long a window's usage is kept once the window has ended.
USAGE_KEEP_S = 7 * 24 * 3600


def usage_field(tenant: str, counter: str) -> str:
    return f"{tenant}:{counter}"


def usage_counter_of(field: str) -> tuple[str, str] | None:
    """(tenant, counter) of a usage field; None for a field that is not one."""
    tenant, _, counter = field.rpartition(":")
    return (tenant, counter) if tenant and counter in USAGE_COUNTERS else None


_TOKENS = re.compile(r"^(\d+)\s*tokens$", re.IGNORECASE)
_USD = re.compile(r"^(\d+(?:\.\d+)?|\.\d+)\s*usd$", re.IGNORECASE)
_WEIGHT = re.compile(r"^weight\s*=\s*(\d+(?:\.\d+)?|\.\d+)$", re.IGNORECASE)


@dataclass(frozen=True)
class TenantLimit:
    """A tenant's budgets per window (None: none) and its fair-share weight."""

    tokens: int | None = None
    usd: float | None = None
    weight: float = 1.0


@dataclass(frozen=True)
class TenantLimits:
    """The parsed VETQ_TENANT_LIMITS: `of(tenant)` is what applies to a tenant."""

    entries: dict[str, TenantLimit]

    def of(self, tenant: str | None) -> TenantLimit:
        """A tenant's own entry, else the `*` entry; no tenant: no budget, weight 1."""
        if tenant is None:
            return TenantLimit()
        return self.entries.get(tenant) or self.entries.get(ANY_TENANT) or TenantLimit()

    def weights(self) -> dict[str, float]:
        """The weights that are not 1, by tenant (`*` included), for the queue's fair pop."""
        return {tenant: limit.weight for tenant, limit in self.entries.items() if limit.weight != 1.0}


def window_start(now_s: float, window_s: int) -> int:
    """The start (epoch seconds) of the budget window holding `now_s`."""
    return int(now_s // window_s) * int(window_s)


def _bad(part: str, why: str) -> ConfigError:
    return ConfigError(f"{ENV_VAR}: {why} in {part!r} (expected e.g. {EXAMPLE!r})")


def _tenant_name(name: str, entry: str) -> str:
    if name == ANY_TENANT:
        return name
    from vetq.core.job_options import check_tenant

    try:
        checked = check_tenant(name)
    except InvalidInputError as exc:
        raise _bad(entry, exc.message) from None
    assert checked is not None
    return checked


def _part(part: str, entry: str, values: dict[str, float]) -> None:
    for unit, pattern in (("tokens", _TOKENS), ("usd", _USD), ("weight", _WEIGHT)):
        match = pattern.match(part)
        if match is None:
            continue
        if unit in values:
            raise _bad(entry, f"{unit} is given twice")
        number = float(match.group(1))
        if not (number > 0 and math.isfinite(number)):
            raise _bad(part, f"{unit} must be greater than 0")
        if unit == "weight" and number > MAX_WEIGHT:
            raise _bad(part, f"a weight is at most {MAX_WEIGHT:g}")
        if unit == "usd" and number < 1e-6:
            raise _bad(part, "a dollar budget is at least one micro-dollar (0.000001usd)")
        values[unit] = number
        return
    raise _bad(part, "a part is <n>tokens, <x>usd or weight=<w>")


def parse_tenant_limits(text: str | None) -> TenantLimits:
    """Parse a VETQ_TENANT_LIMITS string; bad syntax raises ConfigError naming the
    variable and the bad part."""
    entries: dict[str, TenantLimit] = {}
    for raw_entry in (text or "").split(";"):
        entry = raw_entry.strip()
        if not entry:
            continue
        name, sep, spec = entry.partition("=")
        name, spec = name.strip(), spec.strip()
        if not sep:
            raise _bad(entry, "missing '=' between the tenant and its limits")
        tenant = _tenant_name(name, entry)
        if tenant in entries:
            raise _bad(entry, f"tenant {tenant!r} is given twice")
        if not spec:
            raise _bad(entry, "no limit or weight given")
        values: dict[str, float] = {}
        for raw_part in spec.split(","):
            _part(raw_part.strip(), entry, values)
        entries[tenant] = TenantLimit(
            tokens=int(values["tokens"]) if "tokens" in values else None,
            usd=values.get("usd"),
            weight=values.get("weight", 1.0),
        )
    return TenantLimits(entries)
