"""Review telemetry: records built from an explicit allow-list of fields.

No objective, constraint, context, proposal, evidence or reviewer text is ever
copied into a record -- only identifiers, enums, numbers and error codes."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Protocol

from vetq.core.llm.types import Usage
from vetq.core.review.schema import ReviewError, ReviewRequest, ReviewResult

REVIEW_RECORD_FIELDS: tuple[str, ...] = (
    "record_type",
    "review_id",
    "time",
    "mode",
    "decision_type",
    "risk_level",
    "model",
    "usage",
    "cost_usd",
    "latency_ms",
    "verdict",
    "confidence",
    "error_code",
)
OUTCOME_RECORD_FIELDS: tuple[str, ...] = (
    "record_type",
    "review_id",
    "time",
    "accepted_review",
    "later_rework_required",
    "review_was_useful",
)


class TelemetrySink(Protocol):
    def write(self, record: dict[str, Any]) -> None: ...


class ListSink:
    """Keeps records in memory (tests, local runs)."""

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []

    def write(self, record: dict[str, Any]) -> None:
        self.records.append(record)


def _now_iso(now: datetime | None) -> str:
    moment = now or datetime.now(UTC)
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _usage(usage: Usage | None) -> dict[str, int]:
    u = usage or Usage()
    return {"prompt_tokens": u.prompt_tokens, "completion_tokens": u.completion_tokens, "total_tokens": u.total_tokens}


def _allow(record: dict[str, Any], fields: tuple[str, ...]) -> dict[str, Any]:
    return {key: record[key] for key in fields if key in record}


def build_review_record(
    result_or_error: ReviewResult | ReviewError,
    request: ReviewRequest,
    *,
    mode: str,
    model: str,
    review_id: str | None = None,
    usage: Usage | None = None,
    latency_ms: int | None = None,
    now: datetime | None = None,
) -> dict[str, Any]:
    """One record per review. Only the request's decision_type and risk_level are
    read from the request; nothing textual."""
    record: dict[str, Any] = {
        "record_type": "review",
        "time": _now_iso(now),
        "mode": str(mode),
        "decision_type": request.decision_type,
        "risk_level": request.risk_level,
        "model": str(model),
    }
    if isinstance(result_or_error, ReviewResult):
        meta = result_or_error.meta
        record["review_id"] = review_id or meta.review_id
        record["usage"] = _usage(usage or meta.usage)
        record["cost_usd"] = (usage or meta.usage).cost_usd
        record["latency_ms"] = latency_ms if latency_ms is not None else meta.latency_ms
        record["verdict"] = result_or_error.verdict
        record["confidence"] = float(result_or_error.confidence)
    else:
        meta_e = result_or_error.meta
        record["review_id"] = review_id or (meta_e.review_id if meta_e else None)
        record["usage"] = _usage(usage or (meta_e.usage if meta_e else None))
        record["cost_usd"] = (usage or (meta_e.usage if meta_e else Usage())).cost_usd
        record["latency_ms"] = latency_ms if latency_ms is not None else (meta_e.latency_ms if meta_e else None)
        record["error_code"] = result_or_error.error.code.value
    return _allow(record, REVIEW_RECORD_FIELDS)


def build_outcome_record(
    review_id: str,
    accepted_review: bool | None,
    later_rework_required: bool | None,
    review_was_useful: bool | None,
    *,
    now: datetime | None = None,
) -> dict[str, Any]:
    """What happened after a review (reported later by the producer)."""

    def flag(value: bool | None) -> bool | None:
        return None if value is None else bool(value)

    record = {
        "record_type": "review_outcome",
        "review_id": str(review_id),
        "time": _now_iso(now),
        "accepted_review": flag(accepted_review),
        "later_rework_required": flag(later_rework_required),
        "review_was_useful": flag(review_was_useful),
    }
    return _allow(record, OUTCOME_RECORD_FIELDS)


class StreamSink:
    """Appends records to one stream shared by the whole fleet (a Redis stream). The
    client is any object with redis-py's `xadd`, so core imports no Redis code."""

    def __init__(self, client: Any, stream: str, *, maxlen: int = 1_000_000) -> None:
        self.client = client
        self.stream = stream
        self.maxlen = maxlen

    def write(self, record: dict[str, Any]) -> None:
        import json

        self.client.xadd(
            self.stream, {"record": json.dumps(record, sort_keys=True)}, maxlen=self.maxlen, approximate=True
        )
