"""Per-model rate limits: the text of VETQ_LIMITS (read by core.settings) as Limits.

    VETQ_LIMITS="anthropic:claude-sonnet-4-5=50rpm,40000tpm;openai:gpt-5-mini=500rpm"

Entries are separated by ';', each is `provider:model=<n>rpm[,<n>tpm]` (either or
both, any order; whitespace is ignored; an empty entry, e.g. a trailing ';', is
skipped). The result maps "provider:model" to a Limit. A model without an entry has
no rpm/tpm limit in the fleet-wide limiter (provider cooldowns still apply).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from vetq.core.errors import ConfigError
from vetq.core.llm.registry import PROVIDERS

__all__ = ["ENV_VAR", "Limit", "parse_limits"]

ENV_VAR = "VETQ_LIMITS"

_PART = re.compile(r"^(\d+)\s*(rpm|tpm)$", re.IGNORECASE)


@dataclass(frozen=True)
class Limit:
    """Requests and tokens per window (60 s unless the limiter says otherwise); None = no limit."""

    rpm: int | None = None
    tpm: int | None = None


def _bad(part: str, why: str) -> ConfigError:
    return ConfigError(
        f"{ENV_VAR}: {why} in {part!r} (expected e.g. 'anthropic:claude-sonnet-4-5=50rpm,40000tpm;"
        f"openai:gpt-5-mini=500rpm')"
    )


def parse_limits(text: str | None) -> dict[str, Limit]:
    """Parse a VETQ_LIMITS string; bad syntax raises ConfigError naming VETQ_LIMITS and the bad part."""
    limits: dict[str, Limit] = {}
    if text is None:
        return limits
    for raw_entry in text.split(";"):
        entry = raw_entry.strip()
        if not entry:
            continue
        key, sep, spec = entry.partition("=")
        key, spec = key.strip(), spec.strip()
        if not sep:
            raise _bad(entry, "missing '=' between the model and its limits")
        provider, colon, model = key.partition(":")
        provider, model = provider.strip(), model.strip()
        if not colon or not provider or not model:
            raise _bad(entry, "the model must be written provider:model")
        if provider not in PROVIDERS:
            raise _bad(entry, f"unknown provider {provider!r} (choose one of {', '.join(PROVIDERS)})")
        model_key = f"{provider}:{model}"
        if model_key in limits:
            raise _bad(entry, f"{model_key} is given twice")
        if not spec:
            raise _bad(entry, "no limit given")
        values: dict[str, int] = {}
        for raw_part in spec.split(","):
            part = raw_part.strip()
            match = _PART.match(part)
            if not match:
                raise _bad(part, "a limit is a positive whole number followed by rpm or tpm")
            number, unit = int(match.group(1)), match.group(2).lower()
            if number <= 0:
                raise _bad(part, "a limit must be greater than 0")
            if unit in values:
                raise _bad(entry, f"{unit} is given twice")
            values[unit] = number
        limits[model_key] = Limit(rpm=values.get("rpm"), tpm=values.get("tpm"))
    return limits
