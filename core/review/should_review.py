"""Should this decision get a review? A deterministic rule set, no model.

A review is recommended when any structural or risk signal fires (see RULES
below). A trivial change (trivial_kind set) below high risk is not reviewed
unless a structural signal -- any flag, counts at the thresholds, or an
architecture/database/security decision type -- overrides the triviality."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from vetq.core.review.schema import DecisionType, RiskLevel

MANY_MODULES = 3
MANY_FILES = 15
COMPETING_HYPOTHESES = 2

TrivialKind = Literal["formatting", "rename", "simple_ui", "obvious_bugfix", "docs", "small_local_change"]


class ShouldReviewRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    decision_type: DecisionType = Field(description="What kind of decision this is.")
    risk_level: RiskLevel = Field(description="How costly a wrong decision would be.")
    summary: str | None = Field(
        default=None,
        max_length=2_000,
        description="One or two sentences on the change (max 2,000 chars); scanned for migrations, breaking "
        "changes, replaced datastores, auth/crypto/secrets, races and locks.",
    )
    files_changed: int = Field(default=0, ge=0, description="Files the change touches.")
    modules_touched: int = Field(default=0, ge=0, description="Modules or packages the change touches.")
    competing_hypotheses: int = Field(
        default=0, ge=0, description="For debugging: how many plausible explanations are still open."
    )
    changes_public_api: bool = Field(default=False, description="Changes an API others call.")
    changes_db_schema: bool = Field(default=False, description="Changes a database schema.")
    includes_migration: bool = Field(default=False, description="Includes a data or schema migration.")
    replaces_key_dependency: bool = Field(default=False, description="Replaces a framework, database, queue or SDK.")
    security_sensitive: bool = Field(default=False, description="Touches auth, secrets, crypto or untrusted input.")
    performance_critical: bool = Field(default=False, description="On a hot or latency-critical path.")
    irreversible: bool = Field(
        default=False, description="Hard or impossible to undo (data deletion, public release, contract)."
    )
    trivial_kind: TrivialKind | None = Field(
        default=None,
        description="Set when the change is trivial of this kind; ignored at high risk or when a structural "
        "signal fires.",
    )


class ShouldReviewResult(BaseModel):
    should_review: bool
    reasons: list[str] = Field(default_factory=list)


_TECH = r"(?:framework|database|db|queue|sdk|orm|broker|message\s+bus|cache|datastore)"
_DATASTORES = r"(?:postgres(?:ql)?|mysql|mariadb|sqlite|mongo(?:db)?|redis|dynamodb|cassandra|kafka|rabbitmq|sqs|celery|elasticsearch)"

# (pattern, reason) -- word-boundaried, case-insensitive.
SUMMARY_RULES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), reason)
    for pattern, reason in (
        (r"\bmigrat(?:e|es|ed|ing|ion|ions)\b", "summary mentions a migration"),
        (
            r"\bbreaking[\s-]+changes?\b|\bbreaks?\s+(?:the\s+)?(?:api|compatibility|clients?)\b",
            "summary mentions a breaking change",
        ),
        (
            rf"\b(?:replac(?:e|es|ed|ing)|swap(?:s|ped|ping)?|migrat(?:e|es|ed|ing)|mov(?:e|es|ed|ing)|switch(?:es|ed|ing)?)\b"
            rf"(?:\W+\w+){{0,6}}?\W+{_TECH}\b",
            "summary mentions replacing a framework, database, queue or SDK",
        ),
        (
            rf"\b(?:replac(?:e|es|ed|ing)|swap(?:s|ped|ping)?|switch(?:es|ed|ing)?|mov(?:e|es|ed|ing)|migrat(?:e|es|ed|ing))\b"
            rf"(?:\W+\w+){{0,3}}?\W+(?:from\W+)?{_DATASTORES}\b(?:\W+\w+){{0,3}}?\W+(?:to|with|by)\b",
            "summary mentions replacing a framework, database, queue or SDK",
        ),
        (
            r"\b(?:auth|authn|authz|authentication|authorization|oauth2?|jwt|passwords?|encrypt(?:ion|ed|s)?|decrypt\w*|"
            r"crypto\w*|secrets?|tokens?|sql\s+injection|injection|xss|csrf)\b",
            "summary mentions authentication, cryptography, secrets or injection",
        ),
        (
            r"\b(?:race\s+conditions?|races?|deadlocks?|locks?|locking|mutex(?:es)?|concurren(?:cy|t))\b",
            "summary mentions races, locks or concurrency",
        ),
    )
)


def should_review(request: ShouldReviewRequest) -> ShouldReviewResult:
    structural: list[str] = []
    if request.decision_type == "architecture":
        structural.append("architecture decision")
    if request.decision_type == "database":
        structural.append("database decision")
    if request.changes_db_schema:
        structural.append("changes the database schema")
    if request.includes_migration:
        structural.append("includes a migration")
    if request.changes_public_api:
        structural.append("changes a public API")
    if request.replaces_key_dependency:
        structural.append("replaces a key dependency")
    if request.decision_type == "security":
        structural.append("security decision")
    if request.security_sensitive:
        structural.append("security-sensitive change")
    if request.decision_type == "performance":
        structural.append("performance decision")
    if request.performance_critical:
        structural.append("performance-critical change")
    if request.irreversible:
        structural.append("irreversible decision")
    large = request.files_changed >= MANY_FILES or request.modules_touched >= MANY_MODULES
    if request.decision_type == "refactor" and large:
        structural.append(f"large refactor ({request.files_changed} files, {request.modules_touched} modules)")
    else:
        if request.modules_touched >= MANY_MODULES:
            structural.append(f"touches {request.modules_touched} modules (>= {MANY_MODULES})")
        if request.files_changed >= MANY_FILES:
            structural.append(f"changes {request.files_changed} files (>= {MANY_FILES})")

    other: list[str] = []
    if request.decision_type == "debugging" and request.competing_hypotheses >= COMPETING_HYPOTHESES:
        other.append(f"debugging with {request.competing_hypotheses} competing hypotheses")
    if request.risk_level in ("high", "critical"):
        other.append(f"{request.risk_level} risk")
    if request.summary:
        seen: set[str] = set()
        for pattern, reason in SUMMARY_RULES:
            if reason not in seen and pattern.search(request.summary):
                seen.add(reason)
                other.append(reason)

    if request.trivial_kind is not None and request.risk_level not in ("high", "critical"):
        if structural:
            reasons = [*structural, f"trivial kind ({request.trivial_kind}) overridden by a structural signal"]
            return ShouldReviewResult(should_review=True, reasons=reasons + other)
        return ShouldReviewResult(
            should_review=False,
            reasons=[f"trivial change ({request.trivial_kind}) at {request.risk_level} risk"],
        )

    reasons = structural + other
    if reasons:
        return ShouldReviewResult(should_review=True, reasons=reasons)
    return ShouldReviewResult(
        should_review=False,
        reasons=[
            f"no review signal: {request.decision_type} decision at {request.risk_level} risk, "
            f"{request.files_changed} files, {request.modules_touched} modules, no structural flags"
        ],
    )
