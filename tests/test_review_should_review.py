"""Every should_review rule, the trivial-kind suppression and its structural override."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from vetq.core.review.should_review import ShouldReviewRequest, should_review

BASE = {"decision_type": "implementation", "risk_level": "low"}


def decide(**fields: object):
    return should_review(ShouldReviewRequest(**(BASE | fields)))


@pytest.mark.parametrize(
    ("fields", "reason_part"),
    [
        ({"decision_type": "architecture"}, "architecture decision"),
        ({"decision_type": "database"}, "database decision"),
        ({"changes_db_schema": True}, "database schema"),
        ({"includes_migration": True}, "migration"),
        ({"changes_public_api": True}, "public API"),
        ({"replaces_key_dependency": True}, "key dependency"),
        ({"decision_type": "security"}, "security decision"),
        ({"security_sensitive": True}, "security-sensitive"),
        ({"decision_type": "performance"}, "performance decision"),
        ({"performance_critical": True}, "performance-critical"),
        ({"irreversible": True}, "irreversible"),
        ({"modules_touched": 3}, "3 modules"),
        ({"files_changed": 15}, "15 files"),
        ({"decision_type": "refactor", "files_changed": 20}, "large refactor"),
        ({"decision_type": "refactor", "modules_touched": 4}, "large refactor"),
        ({"decision_type": "debugging", "competing_hypotheses": 2}, "competing hypotheses"),
        ({"risk_level": "high"}, "high risk"),
        ({"risk_level": "critical"}, "critical risk"),
        ({"summary": "Add a migration for the orders table"}, "migration"),
        ({"summary": "This is a breaking change for v2 clients"}, "breaking change"),
        ({"summary": "Replace Celery with another queue"}, "replacing a framework"),
        ({"summary": "Swap the ORM for raw SQL"}, "replacing a framework"),
        ({"summary": "migrate from Flask to the FastAPI framework"}, "replacing a framework"),
        ({"summary": "Switch from Postgres to MySQL"}, "replacing a framework"),
        ({"summary": "replace the payments SDK"}, "replacing a framework"),
        ({"summary": "Change the message broker: move to NATS broker"}, "replacing a framework"),
        ({"summary": "Rework auth for the admin panel"}, "authentication"),
        ({"summary": "Add OAuth login"}, "authentication"),
        ({"summary": "Rotate JWT signing keys"}, "authentication"),
        ({"summary": "Hash passwords with argon2"}, "authentication"),
        ({"summary": "Encryption at rest for backups"}, "authentication"),
        ({"summary": "Use a crypto library for signatures"}, "authentication"),
        ({"summary": "Move secrets to the vault"}, "authentication"),
        ({"summary": "Refresh token handling"}, "authentication"),
        ({"summary": "Fix SQL injection in search"}, "authentication"),
        ({"summary": "Escape output against XSS"}, "authentication"),
        ({"summary": "Add CSRF protection"}, "authentication"),
        ({"summary": "Fix a race condition in checkout"}, "races"),
        ({"summary": "Deadlock between two workers"}, "races"),
        ({"summary": "Take a lock around the counter"}, "races"),
        ({"summary": "Replace the mutex with a channel"}, "races"),
        ({"summary": "Improve concurrency of the importer"}, "races"),
    ],
)
def test_each_rule_recommends_a_review(fields: dict, reason_part: str) -> None:
    result = decide(**fields)
    assert result.should_review is True, result
    assert any(reason_part.lower() in r.lower() for r in result.reasons), result.reasons
    assert all(isinstance(r, str) and r for r in result.reasons)


@pytest.mark.parametrize(
    "fields",
    [
        {},
        {"summary": "Tidy up the README wording"},
        {"summary": "Blocked clock display"},  # 'lock' only inside a word
        {"summary": "Authority figures in the docs"},  # 'auth' only as a prefix
        {"files_changed": 14, "modules_touched": 2},
        {"decision_type": "refactor", "files_changed": 14, "modules_touched": 2},
        {"decision_type": "debugging", "competing_hypotheses": 1},
        {"competing_hypotheses": 5},  # only counts for debugging
        {"risk_level": "medium"},
    ],
)
def test_no_signal_no_review(fields: dict) -> None:
    result = decide(**fields)
    assert result.should_review is False, result
    assert result.reasons and "no review signal" in result.reasons[0]


@pytest.mark.parametrize("kind", ["formatting", "rename", "simple_ui", "obvious_bugfix", "docs", "small_local_change"])
@pytest.mark.parametrize("risk", ["low", "medium"])
def test_trivial_kinds_below_high_risk_are_not_reviewed(kind: str, risk: str) -> None:
    result = decide(trivial_kind=kind, risk_level=risk, summary="fix token label in the auth form", modules_touched=2)
    assert result.should_review is False
    assert result.reasons == [f"trivial change ({kind}) at {risk} risk"]


@pytest.mark.parametrize("kind", ["formatting", "obvious_bugfix"])
@pytest.mark.parametrize("risk", ["high", "critical"])
def test_trivial_kinds_at_high_risk_are_reviewed(kind: str, risk: str) -> None:
    result = decide(trivial_kind=kind, risk_level=risk)
    assert result.should_review is True
    assert f"{risk} risk" in result.reasons


@pytest.mark.parametrize(
    "override",
    [
        {"changes_public_api": True},
        {"changes_db_schema": True},
        {"includes_migration": True},
        {"replaces_key_dependency": True},
        {"security_sensitive": True},
        {"performance_critical": True},
        {"irreversible": True},
        {"files_changed": 15},
        {"modules_touched": 3},
        {"decision_type": "architecture"},
        {"decision_type": "database"},
        {"decision_type": "security"},
    ],
)
def test_a_structural_signal_overrides_triviality(override: dict) -> None:
    result = decide(trivial_kind="rename", **override)
    assert result.should_review is True
    assert any("overridden by a structural signal" in r for r in result.reasons)


def test_request_is_strict() -> None:
    with pytest.raises(ValidationError):
        ShouldReviewRequest(**BASE, unknown=1)
    with pytest.raises(ValidationError):
        ShouldReviewRequest(**BASE, files_changed=-1)
    with pytest.raises(ValidationError):
        ShouldReviewRequest(**BASE, trivial_kind="typo")
    with pytest.raises(ValidationError):
        ShouldReviewRequest(**BASE, summary="x" * 2_001)
