"""Heuristics-only validation of amounts the source contradicts (issue 11, item 14):
two different labelled totals, an arithmetic mismatch nothing in the source explains,
and the reasons behind every lowered score, flagged or not."""

from __future__ import annotations

import pytest

from vetq.core.extraction.pipeline import ExtractionPipeline
from vetq.core.settings import load_settings

CONFLICTING_TOTALS = "Subtotal 540.00, tax 43.20, total 583.20 GBP. The total is 999.99."
RIGHT = {"subtotal": 540.0, "tax": 43.2, "total": 583.2, "currency": "GBP"}


def validate(text: str, data: dict):
    return ExtractionPipeline(load_settings()).validate(text, data, heuristics_only=True)


def test_the_reported_document_with_the_second_total_is_needs_review_naming_the_conflict(service):
    job = service.client.submit_validation(CONFLICTING_TOTALS, dict(RIGHT, total=999.99), heuristics_only=True)
    result = job.result(timeout=30)
    assert result["status"] == "needs_review", result
    assert [f["field"] for f in result["flagged_fields"]] == ["total"]
    reason = result["flagged_fields"][0]["reason"]
    assert "conflicting total" in reason and "583.20" in reason and "999.99" in reason
    assert "beyond rounding" in reason  # 540.00 + 43.20 is not 999.99 either
    notes = result["heuristic_notes"]["total"]
    assert len(notes) == 2 and all(note in reason for note in notes)


def test_the_first_total_is_not_confirmed_either_while_the_source_contradicts_it():
    result = validate(CONFLICTING_TOTALS, RIGHT)
    assert result.status == "needs_review"
    [flag] = result.flagged_fields
    assert flag.field == "total" and "conflicting total" in flag.reason and "999.99" in flag.reason


def test_a_grounded_total_that_does_not_add_up_is_needs_review():
    text = "Globex Ltd invoice GLX-7\nSubtotal 540.00\nVAT 43.20\nTotal 683.20 GBP\n"
    result = validate(text, {"vendor_name": "Globex Ltd", "invoice_number": "GLX-7", **dict(RIGHT, total=683.2)})
    assert result.status == "needs_review"
    [flag] = result.flagged_fields
    assert flag.field == "total"
    assert "the difference 100.00 is beyond rounding" in flag.reason
    assert result.field_provenance["total"][0].text == "683.20"  # grounded, and still not forgiven


def test_an_unflagged_field_with_a_lowered_score_says_why():
    text = "Subtotal 540.00\nVAT 43.20\nShipping 15.00\nTotal 598.20\nAll amounts in GBP"
    result = validate(text, dict(RIGHT, total=598.2))
    assert result.status == "ok"
    assert result.flagged_fields == []
    assert result.field_confidence["total"] < result.field_confidence["subtotal"]
    [note] = result.heuristic_notes["total"]
    assert "the difference 15.00" in note and "shipping 15.00" in note
    assert set(result.heuristic_notes) == {"total"}


def test_a_fully_grounded_record_has_no_heuristic_notes():
    text = "Subtotal 540.00\nVAT 43.20\nTotal 583.20 GBP"
    result = validate(text, RIGHT)
    assert result.status == "ok"
    assert result.heuristic_notes == {}


@pytest.mark.parametrize(
    "text",
    [
        "Subtotal 540.00, tax 43.20, total 583.20 GBP.\nThe total is 583.20.",
        "Subtotal 540.00\nTax 43.20\nTotal 583.20\nAmount due 583.20 GBP",
        "Subtotal 540.00\nTax 43.20\nTotal 583.20 GBP\nAmount paid 200.00\nBalance due 383.20",
        "Subtotal 540.00\nTax 43.20\nTotal 583.20 GBP\nPaid 583.20 by card, balance due 0.00",
        "Page 1 subtotal 300.00\nPage 2 subtotal 240.00\nSubtotal 540.00\nTax 43.20\nTotal 583.20 GBP",
        "Subtotal 540.00\nTax 43.20\nTotal 583.20 GBP\nTotal EUR 680.00",
    ],
)
def test_real_documents_that_repeat_or_reconcile_their_totals_stay_ok(text):
    result = validate(text, RIGHT)
    assert result.status == "ok", result.flagged_fields
    assert not any("conflicting" in n for notes in result.heuristic_notes.values() for n in notes)
