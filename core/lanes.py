"""The two lanes a job can ask for, checked where a producer submits it.

`realtime` (the default) calls the models as the job runs. `bulk` sends its calls in
the providers' batches, at the batch price, and answers within the provider's window
(24 h): the same verified results, later and cheaper. A bulk job may set a
`bulk_deadline` (when its answers are due; within the window) and allow
`realtime_fallback`: a call still unanswered on the bulk lane past the deadline is then
made on the realtime lane, at the realtime price, instead of ending the job TIMEOUT.

The lane travels in the job's message headers (core.queue's LANE_HEADER and the two
next to it), like the budgets: how a job is run, not what it asks.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Iterable
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from vetq.core.errors import ConfigError, InvalidInputError
from vetq.core.llm.batch_api import BATCH_PROVIDERS, BATCH_WINDOW_S
from vetq.core.llm.client import ModelSpec

__all__ = ["Lane", "LaneOptions", "lane_options", "parse_deadline", "require_batch_models"]


class Lane(StrEnum):
    REALTIME = "realtime"
    BULK = "bulk"


_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|h)\s*$", re.IGNORECASE)


def parse_deadline(value: Any, *, now: float | None = None) -> float | None:
    """A bulk deadline as epoch seconds: a datetime (naive reads as UTC), an ISO 8601
    time, a duration from now ("90m", "6h", "3600s"), or epoch seconds."""
    now = time.time() if now is None else now
    if value is None:
        return None
    if isinstance(value, bool):
        raise InvalidInputError("bulk_deadline must be a time or a duration such as '6h', not a boolean")
    if isinstance(value, (int, float)):
        seconds = float(value)
    elif isinstance(value, datetime):
        seconds = (value if value.tzinfo else value.replace(tzinfo=UTC)).timestamp()
    elif isinstance(value, str):
        duration = _DURATION.match(value)
        if duration:
            amount, unit = float(duration.group(1)), duration.group(2).lower()
            seconds = now + amount * {"s": 1, "m": 60, "h": 3600}[unit]
        else:
            try:
                moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
            except ValueError:
                raise InvalidInputError(
                    f"bulk_deadline {value[:60]!r} is neither an ISO 8601 time nor a duration such as '6h' or '90m'"
                ) from None
            seconds = (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()
    else:
        raise InvalidInputError(f"bulk_deadline must be a time or a duration, not {type(value).__name__}")
    if not math.isfinite(seconds):
        raise InvalidInputError("bulk_deadline must be a finite time")
    return seconds


class LaneOptions:
    """A job's lane, checked: `headers()` is what its message carries."""

    def __init__(self, lane: Lane, deadline: float | None, realtime_fallback: bool) -> None:
        self.lane = lane
        self.deadline = deadline
        self.realtime_fallback = realtime_fallback

    @property
    def bulk(self) -> bool:
        return self.lane is Lane.BULK

    def headers(self) -> dict[str, Any]:
        from vetq.core.queue import BULK_DEADLINE_HEADER, LANE_HEADER, REALTIME_FALLBACK_HEADER

        if not self.bulk:
            return {}
        return {
            LANE_HEADER: self.lane.value,
            BULK_DEADLINE_HEADER: self.deadline,
            REALTIME_FALLBACK_HEADER: self.realtime_fallback,
        }


def lane_options(
    lane: Any = None, *, bulk_deadline: Any = None, realtime_fallback: Any = False, now: float | None = None
) -> LaneOptions:
    """Check a producer's lane arguments: INVALID_INPUT naming the one that is wrong."""
    now = time.time() if now is None else now
    if lane is None:
        lane = Lane.REALTIME
    try:
        chosen = Lane(str(lane).strip().lower()) if isinstance(lane, str) else Lane(lane)
    except ValueError:
        raise InvalidInputError(
            f"lane must be one of {', '.join(repr(v.value) for v in Lane)}, got {str(lane)[:40]!r}"
        ) from None
    if not isinstance(realtime_fallback, bool):
        raise InvalidInputError("realtime_fallback must be true or false")
    deadline = parse_deadline(bulk_deadline, now=now)
    if chosen is Lane.REALTIME:
        if deadline is not None or realtime_fallback:
            raise InvalidInputError("bulk_deadline and realtime_fallback belong to lane 'bulk'")
        return LaneOptions(chosen, None, False)
    if deadline is not None:
        if deadline <= now:
            raise InvalidInputError("bulk_deadline is in the past")
        if deadline > now + BATCH_WINDOW_S:
            raise InvalidInputError(
                f"bulk_deadline is beyond the providers' batch window ({BATCH_WINDOW_S // 3600} h from now)"
            )
    return LaneOptions(chosen, deadline, realtime_fallback)


def require_batch_models(specs: Iterable[ModelSpec]) -> None:
    """CONFIG_ERROR at submission for a bulk job a model of which has no batch API,
    rather than a job that would wait for a batch nobody can send."""
    for spec in specs:
        if spec.provider not in BATCH_PROVIDERS:
            raise ConfigError(
                f"the bulk lane needs a provider batch API, and {spec} has none vetq can use "
                f"(bulk serves {', '.join(sorted(BATCH_PROVIDERS))}); submit on the realtime lane or change the model"
            )
