"""What the inbox's tests feed it: a needs_review result of the Globex invoice (tests/
conftest.py's document), as a worker would hand it over, and the store on each
database."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from tests.conftest import GLOBEX, GLOBEX_DATA

HOSTILE = "<script>window.pwned = 1</script>"


class Clock:
    """The store's clock, moved by hand to expire a lease."""

    def __init__(self) -> None:
        self.now = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


def span(text: str, value: str) -> dict[str, Any]:
    start = text.index(value)
    return {"start": start, "end": start + len(value), "text": value}


def needs_review_result(*, text: str = GLOBEX, total: float = 538.20, trace_id: str = "trace-1") -> dict[str, Any]:
    """The machine got the total wrong (538.20 for 583.20) and flagged it."""
    from vetq.core.schemas import builtin

    data = {**GLOBEX_DATA, "total": total, "line_items": []}
    confidence = {path: 0.95 for path in GLOBEX_DATA}
    confidence.update(total=0.31, line_items=None)
    provenance = {"vendor_name": [span(text, "Globex Ltd")], "tax": [span(text, "43.20")]}
    if "583.20" in text:
        provenance["total"] = [span(text, "583.20")]
    return {
        "format": 2,
        "status": "needs_review",
        "schema": builtin("invoice").info.model_dump(),
        "data": data,
        "field_confidence": confidence,
        "overall_confidence": 0.6,
        "flagged_fields": [
            {
                "field": "total",
                "value": total,
                "confidence": 0.31,
                "reason": "subtotal + tax = 583.20, not the total 538.20",
            }
        ],
        "field_provenance": provenance,
        "trace_id": trace_id,
        "usage": {},
        "cost_usd": 0.0,
    }


def draft(
    job_id: str,
    *,
    text: str = GLOBEX,
    tenant: str | None = None,
    priority: str | None = None,
    minutes_ago: float = 0,
    clock: Clock | None = None,
) -> Any:
    from vetq.core.schemas.wire import to_wire
    from vetq.inbox.store import ItemDraft

    reference, _ = to_wire("invoice")
    now = clock() if clock is not None else datetime.now(UTC)
    return ItemDraft(
        job_id=job_id,
        kind="extract",
        request={"text": text, "schema": reference, "trace_id": f"trace-{job_id}"},
        result=needs_review_result(text=text, trace_id=f"trace-{job_id}"),
        finished_at=now - timedelta(minutes=minutes_ago),
        tenant=tenant,
        priority=priority,
    )
