"""The blindness check: a proposal copied into a blind field is refused before any
model call; partial overlap warns; shared domain words do not."""

from __future__ import annotations

import pytest

from vetq.core.errors import ErrorCode
from vetq.core.llm.gate import DirectGate
from vetq.core.llm.scripted import ScriptedLLMClient
from vetq.core.review.blindness import check_blindness, shingles, words
from vetq.core.review.schema import ReviewConfig, ReviewError, ReviewRequest, ReviewResult
from vetq.core.review.service import preflight, run_review

PROPOSAL = (
    "Add a nullable tenant_id column to the invoices table, backfill it in batches of five thousand rows "
    "from the accounts mapping, then add the NOT NULL constraint and a composite index in a second deploy."
)
POS = (
    '{"assumptions": [], "directions": [{"name": "a", "summary": "b", "pros": [], "cons": []}],'
    ' "failure_modes": [], "preferred_solution": "a", "assumptions_to_test": []}'
)
VER = (
    '{"verdict": "KEEP", "recommendation": "ok", "critical_assumptions": [], "material_risks": [],'
    ' "better_alternative": null, "falsification_probe": {"description": "d", "expected_signal": "s"},'
    ' "confidence": 0.9}'
)


def make_request(**overrides: object) -> ReviewRequest:
    data: dict = {
        "objective": "Make invoices multi-tenant without downtime.",
        "constraints": ["Zero downtime", "PostgreSQL 15"],
        "context": "The invoices table has 40 million rows.",
        "proposed_solution": PROPOSAL,
        "decision_type": "database",
        "risk_level": "high",
        "environment": "AWS RDS",
        "evidence": ["A previous ALTER TABLE locked writes for 9 minutes."],
    }
    data.update(overrides)
    return ReviewRequest(**data)


def with_copy(field: str) -> ReviewRequest:
    base = make_request()
    if field == "objective":
        return make_request(objective="Review this: " + PROPOSAL[:3_000])
    if field == "constraint":
        return make_request(constraints=[*base.constraints, PROPOSAL])
    if field == "context":
        return make_request(context=base.context + "\n\nPlan: " + PROPOSAL)
    if field == "environment":
        return make_request(environment=PROPOSAL)
    if field == "evidence":
        return make_request(evidence=[*(base.evidence or []), PROPOSAL])
    raise AssertionError(field)


EXPECTED_FIELD = {
    "objective": "objective",
    "constraint": "constraints[2]",
    "context": "context",
    "environment": "environment",
    "evidence": "evidence[1]",
}


@pytest.mark.parametrize("field", list(EXPECTED_FIELD))
def test_a_copy_in_any_blind_field_is_refused_with_zero_calls(field: str) -> None:
    client = ScriptedLLMClient([])  # any call would raise ScriptExhaustedError
    outcome = run_review(with_copy(field), client, gate=DirectGate(), config=ReviewConfig())
    assert isinstance(outcome, ReviewError)
    assert outcome.error.code == ErrorCode.BLINDNESS_LEAK
    assert client.requests == []
    assert "1.00" in outcome.error.message
    assert EXPECTED_FIELD[field] in outcome.error.message
    assert outcome.meta is not None and outcome.meta.usage.total_tokens == 0
    report = check_blindness(with_copy(field))
    assert report.leaked and report.score == 1.0 and report.n == 5
    assert report.field == EXPECTED_FIELD[field]


@pytest.mark.parametrize("field", list(EXPECTED_FIELD))
def test_proposal_first_only_warns(field: str) -> None:
    client = ScriptedLLMClient([VER])
    outcome = run_review(
        with_copy(field).model_copy(update={"review_mode": "proposal_first"}),
        client,
        gate=DirectGate(),
        config=ReviewConfig(),
    )
    assert isinstance(outcome, ReviewResult)
    assert outcome.meta.blindness_warning is not None
    assert len(client.requests) == 1


def test_partial_overlap_warns_but_runs() -> None:
    # About a third of the proposal quoted in the context: above warn (0.15), below leak (0.5).
    quoted = "backfill it in batches of five thousand rows from the accounts mapping"
    request = make_request(context="The invoices table has 40 million rows. Someone suggested: " + quoted)
    report = check_blindness(request)
    assert 0.15 <= report.score < 0.5, report
    assert not report.leaked and report.warning is not None and "context" in report.warning
    client = ScriptedLLMClient([POS, VER])
    outcome = run_review(request, client, gate=DirectGate(), config=ReviewConfig())
    assert isinstance(outcome, ReviewResult)
    assert outcome.meta.blindness_warning == report.warning
    assert len(client.requests) == 2


def test_shared_domain_words_do_not_warn() -> None:
    request = make_request(
        objective="Plan the postgres database migration for the invoices table.",
        context="The postgres database migration must keep the invoices table writable; tenant_id and batches matter.",
        proposed_solution="Run the postgres database migration with pg_repack and a shadow table, "
        "switching over with a short rename under a lock timeout of two seconds.",
    )
    report = check_blindness(request)
    assert report.score < 0.15
    assert report.warning is None and not report.leaked
    client = ScriptedLLMClient([POS, VER])
    outcome = run_review(request, client, gate=DirectGate(), config=ReviewConfig())
    assert isinstance(outcome, ReviewResult) and outcome.meta.blindness_warning is None


def test_thresholds_come_from_the_config() -> None:
    quoted = "backfill it in batches of five thousand rows from the accounts mapping"
    request = make_request(context="Someone suggested: " + quoted)
    default = preflight(request, ReviewConfig())
    assert not isinstance(default, ReviewError) and default.warning is not None
    refused = preflight(request, ReviewConfig(blindness_leak=0.2))
    assert isinstance(refused, ReviewError) and refused.error.code == ErrorCode.BLINDNESS_LEAK
    quiet = preflight(request, ReviewConfig(blindness_warn=0.9, blindness_leak=0.95))
    assert not isinstance(quiet, ReviewError) and quiet.warning is None


def test_fields_are_shingled_separately() -> None:
    # "a b c d e" split across two constraints must not count as a 5-gram.
    request = make_request(
        proposed_solution="alpha beta gamma delta epsilon", constraints=["alpha beta gamma", "delta epsilon"]
    )
    assert check_blindness(request).score == 0.0


def test_short_proposals_use_shorter_shingles() -> None:
    request = make_request(proposed_solution="Use Redis", context="we could use redis here")
    report = check_blindness(request)
    assert report.n == 2 and report.score == 1.0 and report.leaked


def test_tokeniser_and_shingles() -> None:
    assert words("Straße, PostgreSQL-15 ÉTÉ") == ["strasse", "postgresql", "15", "été"]
    assert shingles(["a", "b", "c"], 2) == {("a", "b"), ("b", "c")}
    assert shingles(["a"], 2) == set()
