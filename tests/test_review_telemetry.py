"""Telemetry keeps only allow-listed fields: no request or reviewer text, ever."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from vetq.core.llm.errors import MalformedResponseError
from vetq.core.llm.gate import DirectGate
from vetq.core.llm.scripted import ScriptedLLMClient
from vetq.core.review.schema import ReviewConfig, ReviewError, ReviewRequest, ReviewResult
from vetq.core.review.service import run_review
from vetq.core.review.telemetry import (
    OUTCOME_RECORD_FIELDS,
    REVIEW_RECORD_FIELDS,
    ListSink,
    build_outcome_record,
    build_review_record,
)

S = "SENTINELxq93"


def planted_request(**overrides: object) -> ReviewRequest:
    data: dict = {
        "objective": f"objective {S} text",
        "constraints": [f"constraint {S} one", f"{S}"],
        "context": f"context about things {S}",
        "proposed_solution": f"the proposal is entirely different words {S} here",
        "decision_type": "api",
        "risk_level": "medium",
        "environment": f"env {S}",
        "evidence": [f"evidence {S}"],
        "trace_id": f"trace-{S}",
    }
    data.update(overrides)
    return ReviewRequest(**data)


POSITION = {
    "assumptions": [f"assume {S}"],
    "directions": [{"name": f"n {S}", "summary": f"s {S}", "pros": [S], "cons": [S]}],
    "failure_modes": [S],
    "preferred_solution": f"prefer {S}",
    "assumptions_to_test": [S],
}
VERDICT = {
    "verdict": "REPLACE",
    "recommendation": f"recommend {S}",
    "critical_assumptions": [S],
    "material_risks": [S],
    "better_alternative": f"alt {S}",
    "falsification_probe": {"description": S, "expected_signal": S},
    "confidence": 0.6,
}


def test_review_record_holds_no_planted_text() -> None:
    sink = ListSink()
    client = ScriptedLLMClient([json.dumps(POSITION), json.dumps(VERDICT)])
    outcome = run_review(planted_request(), client, gate=DirectGate(), config=ReviewConfig(), telemetry=sink)
    assert isinstance(outcome, ReviewResult)
    assert S in outcome.recommendation  # the producer gets the text...
    (record,) = sink.records
    dumped = json.dumps(record)
    assert S not in dumped  # ...telemetry never does
    assert S.lower() not in dumped.lower()
    assert set(record) <= set(REVIEW_RECORD_FIELDS)
    assert record["record_type"] == "review"
    assert record["review_id"] == outcome.meta.review_id
    assert record["mode"] == "blind_first"
    assert (record["decision_type"], record["risk_level"]) == ("api", "medium")
    assert record["model"] == "scripted:scripted-model"
    assert record["verdict"] == "REPLACE" and record["confidence"] == 0.6
    assert record["usage"]["total_tokens"] == outcome.meta.usage.total_tokens > 0
    assert "error_code" not in record
    assert record["time"].endswith("Z")


def test_error_record_holds_no_planted_text() -> None:
    sink = ListSink()
    client = ScriptedLLMClient([f"garbage {S}", f"more garbage {S}"])
    outcome = run_review(planted_request(), client, gate=DirectGate(), config=ReviewConfig(), telemetry=sink)
    assert isinstance(outcome, ReviewError)
    (record,) = sink.records
    assert S not in json.dumps(record)
    assert record["error_code"] == "MALFORMED_RESPONSE"
    assert "verdict" not in record and set(record) <= set(REVIEW_RECORD_FIELDS)


def test_leak_record_holds_no_planted_text() -> None:
    sink = ListSink()
    request = planted_request(context=f"the proposal is entirely different words {S} here")
    outcome = run_review(request, ScriptedLLMClient([]), gate=DirectGate(), config=ReviewConfig(), telemetry=sink)
    assert isinstance(outcome, ReviewError)
    (record,) = sink.records
    assert record["error_code"] == "BLINDNESS_LEAK" and S not in json.dumps(record)


def test_builder_ignores_text_even_when_handed_it() -> None:
    error = ReviewError.of(MalformedResponseError.code, f"message {S}")
    record = build_review_record(
        error,
        planted_request(),
        mode="blind_first",
        model="x:y",
        now=datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC),
    )
    assert S not in json.dumps(record)
    assert record["time"] == "2025-01-02T03:04:05Z"


def test_outcome_record() -> None:
    record = build_outcome_record("abc123", True, None, False)
    assert set(record) == set(OUTCOME_RECORD_FIELDS)
    assert record["record_type"] == "review_outcome"
    assert (record["accepted_review"], record["later_rework_required"], record["review_was_useful"]) == (
        True,
        None,
        False,
    )


def test_a_failing_sink_never_breaks_a_review() -> None:
    class Broken:
        def write(self, record: dict) -> None:
            raise OSError("disk full")

    client = ScriptedLLMClient([json.dumps(POSITION), json.dumps(VERDICT)])
    outcome = run_review(planted_request(), client, gate=DirectGate(), config=ReviewConfig(), telemetry=Broken())
    assert isinstance(outcome, ReviewResult)
