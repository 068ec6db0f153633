"""The request's limits, the envelope shapes and the config defaults."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from vetq.core.errors import ErrorCode
from vetq.core.review.schema import ReviewConfig, ReviewError, ReviewMeta, ReviewRequest

OK = {
    "objective": "o",
    "proposed_solution": "p",
    "decision_type": "other",
    "risk_level": "low",
}


def test_minimal_request_and_defaults() -> None:
    req = ReviewRequest(**OK)
    assert req.review_mode == "blind_first"
    assert req.constraints == [] and req.context == "" and req.evidence is None


@pytest.mark.parametrize(
    "bad",
    [
        {"objective": ""},
        {"objective": "x" * 4_001},
        {"proposed_solution": ""},
        {"proposed_solution": "x" * 60_001},
        {"context": "x" * 60_001},
        {"constraints": ["c"] * 51},
        {"constraints": [""]},
        {"constraints": ["x" * 2_001]},
        {"evidence": ["e"] * 31},
        {"evidence": ["x" * 8_001]},
        {"environment": "x" * 8_001},
        {"trace_id": "x" * 129},
        {"decision_type": "vibes"},
        {"risk_level": "extreme"},
        {"review_mode": "debate"},
        {"surprise": 1},
    ],
)
def test_request_limits(bad: dict) -> None:
    with pytest.raises(ValidationError):
        ReviewRequest(**(OK | bad))


def test_config_defaults() -> None:
    c = ReviewConfig()
    assert (c.max_tokens_per_call, c.max_review_tokens, c.blindness_leak, c.blindness_warn) == (
        4_000,
        20_000,
        0.5,
        0.15,
    )
    assert (c.review_timeout_s, c.temperature, c.reasoning_effort) == (120, 0.2, None)
    with pytest.raises(ValidationError):
        ReviewConfig(unknown=1)


def test_error_envelope_shape() -> None:
    err = ReviewError.of(ErrorCode.BUDGET_EXCEEDED, "out of tokens")
    assert err.model_dump(mode="json", exclude_none=True) == {
        "format": 2,
        "status": "error",
        "error": {"code": "BUDGET_EXCEEDED", "message": "out of tokens"},
    }
    assert err.code == ErrorCode.BUDGET_EXCEEDED


def test_meta_budget_flag_only_when_true() -> None:
    meta = ReviewMeta(review_id="a", review_mode="blind_first", model="x:y")
    assert "budget_exhausted" not in meta.model_dump()
    assert "budget_exhausted" not in meta.model_dump(mode="json")
    assert meta.model_dump()["blindness_warning"] is None
    assert (
        ReviewMeta(review_id="a", review_mode="blind_first", model="x:y", budget_exhausted=True).model_dump(
            mode="json"
        )["budget_exhausted"]
        is True
    )
