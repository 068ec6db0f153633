"""Every rule of the confidence gate."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import pytest

from vetq.core.extraction.gate import BASE_CONFIDENCE_WITHOUT_CRITIC, UNJUDGED_OR_UNGROUNDED_CAP, decide
from vetq.core.extraction.schema import CritiqueResult, FieldVerdict
from vetq.core.schemas import builtin, compile_schema
from vetq.core.schemas.records import leaves


@dataclass
class Finding:
    factor: float = 1.0
    reasons: list[str] = field(default_factory=list)


def record_leaves(record, schema=None):
    schema = schema or builtin("invoice")
    return list(leaves(schema.fields, schema.validate_data(record)))


DATA = record_leaves({"vendor_name": "Globex Ltd", "total": 583.2, "currency": "GBP"})


def critique(*verdicts: tuple[str, float, bool], overall: float = 0.9) -> CritiqueResult:
    return CritiqueResult(
        verdicts=[FieldVerdict(field=f, confidence=c, grounded=g, reason=f"r-{f}-{c}-{g}") for f, c, g in verdicts],
        overall_confidence=overall,
    )


ALL_GOOD = critique(("vendor_name", 0.9, True), ("total", 0.9, True), ("currency", 0.9, True))


def run(data=DATA, checks=None, crit=ALL_GOOD, field_threshold=0.7, overall_threshold=0.75):
    return decide(data, checks or {}, crit, field_threshold=field_threshold, overall_threshold=overall_threshold)


def test_all_confident_fields_pass():
    decision = run()
    assert decision.status == "ok"
    assert decision.flagged_fields == []
    assert decision.field_confidence["vendor_name"] == pytest.approx(0.9)


def test_combined_is_critic_times_heuristic_factor():
    decision = run(checks={"total": Finding(0.5, ["583.2 not found in the source"])})
    assert decision.field_confidence["total"] == pytest.approx(0.45)
    assert decision.status == "needs_review"
    [flag] = decision.flagged_fields
    assert flag.field == "total" and flag.value == 583.2
    assert "583.2 not found in the source" in flag.reason and "critic confidence 0.90" in flag.reason


def test_field_exactly_at_threshold_is_not_flagged():
    decision = run(checks={"total": Finding(0.7 / 0.9)}, field_threshold=0.7)
    assert decision.field_confidence["total"] == pytest.approx(0.7)
    assert decision.flagged_fields == []


def test_ungrounded_verdict_caps_critic_confidence():
    crit = critique(("vendor_name", 0.99, False), ("total", 0.9, True), ("currency", 0.9, True))
    decision = run(crit=crit)
    assert decision.field_confidence["vendor_name"] == pytest.approx(UNJUDGED_OR_UNGROUNDED_CAP)
    assert [f.field for f in decision.flagged_fields] == ["vendor_name"]
    assert "critic: not grounded" in decision.flagged_fields[0].reason


def test_missing_verdict_caps_critic_confidence():
    crit = critique(("total", 0.9, True), ("currency", 0.9, True))
    decision = run(crit=crit)
    assert decision.field_confidence["vendor_name"] == pytest.approx(UNJUDGED_OR_UNGROUNDED_CAP)
    assert "no verdict" in decision.flagged_fields[0].reason


def test_cap_applies_even_with_a_lenient_field_threshold():
    crit = critique(("vendor_name", 0.99, False), ("total", 0.9, True), ("currency", 0.9, True))
    decision = run(crit=crit, field_threshold=0.4, overall_threshold=0.0)
    assert decision.field_confidence["vendor_name"] == pytest.approx(0.5)
    assert decision.status == "ok"


def test_nulls_are_never_flagged_and_have_no_confidence():
    decision = run()
    assert decision.field_confidence["invoice_number"] is None
    assert all(f.field != "invoice_number" for f in decision.flagged_fields)


def test_low_overall_confidence_alone_means_needs_review():
    decision = run(
        crit=critique(("vendor_name", 0.9, True), ("total", 0.9, True), ("currency", 0.9, True), overall=0.6)
    )
    assert decision.flagged_fields == []
    assert decision.status == "needs_review"
    assert decision.overall_confidence == pytest.approx(0.6)
    assert any("overall confidence" in n for n in decision.notes)


def test_overall_is_bounded_by_mean_field_confidence():
    decision = run(checks={"total": Finding(0.5)}, overall_threshold=0.0, field_threshold=0.0)
    assert decision.overall_confidence == pytest.approx((0.9 + 0.45 + 0.9) / 3, abs=1e-4)


def test_heuristics_only_starts_from_base_confidence():
    decision = run(crit=None, checks={"currency": Finding(0.85, ["only the ambiguous symbol $"])})
    assert decision.field_confidence["vendor_name"] == pytest.approx(BASE_CONFIDENCE_WITHOUT_CRITIC)
    assert decision.field_confidence["currency"] == pytest.approx(BASE_CONFIDENCE_WITHOUT_CRITIC * 0.85)
    assert decision.status == "ok"


DUPLICATES = [
    ("vendor_name", 0.9, True),
    ("vendor_name", 0.4, True),
    ("vendor_name", 0.4, False),
    ("vendor_name", 0.95, True),
]


@pytest.mark.parametrize("order", list(itertools.permutations(range(4))))
def test_duplicate_verdicts_minimum_wins_and_ungrounded_breaks_ties(order):
    verdicts = [DUPLICATES[i] for i in order] + [("total", 0.9, True), ("currency", 0.9, True)]
    decision = run(crit=critique(*verdicts))
    assert decision.field_confidence["vendor_name"] == pytest.approx(0.4)
    [flag] = decision.flagged_fields
    assert "not grounded" in flag.reason


def test_ungrounded_tie_wins_even_above_cap():
    for order in (0, 1):
        pair = [("vendor_name", 0.8, True), ("vendor_name", 0.8, False)]
        if order:
            pair.reverse()
        decision = run(crit=critique(*pair, ("total", 0.9, True), ("currency", 0.9, True)))
        assert decision.field_confidence["vendor_name"] == pytest.approx(0.5)


def test_every_lowered_factor_keeps_its_reasons_whether_or_not_it_is_flagged():
    checks = {
        "currency": Finding(0.85, ["only the ambiguous symbol '$' supports USD"]),
        "total": Finding(0.5, ["583.2 not found in the source"]),
        "vendor_name": Finding(1.0, []),
    }
    decision = run(checks=checks)
    assert [f.field for f in decision.flagged_fields] == ["total"]
    assert decision.heuristic_notes == {
        "currency": ["only the ambiguous symbol '$' supports USD"],  # not flagged, still explained
        "total": ["583.2 not found in the source"],
    }


def test_a_lowered_factor_without_a_reason_still_shows_the_factor():
    decision = run(checks={"currency": Finding(0.9, [])})
    assert decision.status == "ok"
    assert decision.heuristic_notes == {"currency": ["heuristic factor 0.90"]}


# --- records of any schema: paths, line items, required fields ---------------------------
ORDER = compile_schema(
    {
        "name": "order",
        "fields": {
            "number": {"kind": "identifier", "required": True},
            "note": {"kind": "text"},
            "lines": {
                "kind": "list",
                "required": True,
                "fields": {"sku": {"kind": "identifier"}, "amount": {"kind": "amount"}},
            },
        },
    }
)


def test_a_required_value_that_is_null_is_flagged_and_an_optional_one_is_not():
    decision = decide(
        record_leaves({"number": None, "note": None, "lines": []}, ORDER),
        {},
        None,
        field_threshold=0.7,
        overall_threshold=0.0,
    )
    assert [(f.field, f.value, f.confidence) for f in decision.flagged_fields] == [
        ("number", None, 0.0),
        ("lines", None, 0.0),
    ]
    assert "required" in decision.flagged_fields[0].reason
    assert decision.field_confidence == {"number": None, "note": None, "lines": None}
    assert decision.status == "needs_review"


def test_line_item_values_are_judged_by_path_and_one_bad_item_flags_only_its_value():
    record = {"number": "PO-1", "lines": [{"sku": "A-1", "amount": 10.0}, {"sku": "B-2", "amount": 20.0}]}
    crit = critique(
        ("number", 0.9, True),
        ("lines[0].sku", 0.9, True),
        ("lines[0].amount", 0.9, True),
        ("lines[1].sku", 0.9, True),
        ("lines[1].amount", 0.9, True),
    )
    decision = decide(
        record_leaves(record, ORDER),
        {"lines[1].amount": Finding(0.35, ["20.0 not found in the source"])},
        crit,
        field_threshold=0.7,
        overall_threshold=0.0,
    )
    assert [f.field for f in decision.flagged_fields] == ["lines[1].amount"]
    assert set(decision.field_confidence) == {
        "number",
        "note",
        "lines[0].sku",
        "lines[0].amount",
        "lines[1].sku",
        "lines[1].amount",
    }


def test_a_verdict_on_an_item_judges_the_values_in_it_that_have_none_of_their_own():
    record = {"number": "PO-1", "lines": [{"sku": "A-1", "amount": 10.0}]}
    crit = critique(("number", 0.9, True), ("lines[0]", 0.3, False), ("lines[0].sku", 0.95, True))
    decision = decide(record_leaves(record, ORDER), {}, crit, field_threshold=0.7, overall_threshold=0.0)
    assert decision.field_confidence["lines[0].sku"] == pytest.approx(0.95)  # its own verdict wins
    assert decision.field_confidence["lines[0].amount"] == pytest.approx(0.3)  # the item's verdict
    assert [f.field for f in decision.flagged_fields] == ["lines[0].amount"]
