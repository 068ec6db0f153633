"""The review contract: what a producer sends, what it gets back, the settings a
caller passes in, and the shapes the reviewer model must answer in."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializationInfo,
    StringConstraints,
    field_validator,
    model_serializer,
    model_validator,
)

from vetq.core.llm.json_extract import normalize_confidence
from vetq.core.llm.types import Usage, keep_null_cost
from vetq.core.results import RESULT_FORMAT, ErrorResult
from vetq.core.review.parsing import MAX_LIST_ITEMS, normalize_optional_text, normalize_str_list, normalize_verdict

DecisionType = Literal[
    "architecture",
    "refactor",
    "debugging",
    "database",
    "api",
    "dependency",
    "performance",
    "security",
    "implementation",
    "other",
]
RiskLevel = Literal["low", "medium", "high", "critical"]
ReviewMode = Literal["blind_first", "proposal_first"]
# Benchmark-only modes (core.review.modes.MODES): reached only through run_review's
# `mode` argument (the queue's `bench_mode` header), never through ReviewRequest.
BenchMode = Literal["proposal_first_2pass", "independent_only", "decision_judge"]
AnyReviewMode = Literal["blind_first", "proposal_first", "proposal_first_2pass", "independent_only", "decision_judge"]
Verdict = Literal["KEEP", "MODIFY", "REPLACE", "INSUFFICIENT_EVIDENCE"]

Constraint = Annotated[str, StringConstraints(min_length=1, max_length=2_000)]
EvidenceItem = Annotated[str, StringConstraints(min_length=1, max_length=8_000)]


# ---------------------------------------------------------------- settings


class ReviewConfig(BaseModel):
    """Per-review settings. The caller fills these from its settings
    (VETQ_MAX_TOKENS_PER_CALL, VETQ_MAX_REVIEW_TOKENS, VETQ_BLINDNESS_LEAK,
    VETQ_BLINDNESS_WARN, ...); core/review reads no environment itself."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    max_tokens_per_call: int = Field(default=4_000, ge=1)
    max_review_tokens: int = Field(default=20_000, ge=1)
    blindness_leak: float = Field(default=0.5, ge=0.0, le=1.0)
    blindness_warn: float = Field(default=0.15, ge=0.0, le=1.0)
    review_timeout_s: float = Field(default=120.0, gt=0.0)
    temperature: float | None = Field(default=0.2, ge=0.0, le=2.0)
    reasoning_effort: str | None = None
    # Benchmark-only modes (modes.BENCH_MODES) run only where this is on: the workers
    # `vetq bench review` starts for itself (VETQ_BENCH_MODES), never a producer's fleet.
    bench_modes: bool = False


# ---------------------------------------------------------------- request


class ReviewRequest(BaseModel):
    """A decision to review. Every text field is data for the reviewer, never an
    instruction to it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    objective: str = Field(
        min_length=1,
        max_length=4_000,
        description="BLIND field. The problem to solve and what success means, without the chosen approach "
        "(max 4,000 chars).",
    )
    constraints: list[Constraint] = Field(
        default_factory=list,
        max_length=50,
        description="BLIND field. Hard requirements and limits (budget, latency, compatibility, team skills), "
        "one per item; not the plan (max 50 items).",
    )
    context: str = Field(
        default="",
        max_length=60_000,
        description="BLIND field. Background on the system and the problem: what exists today, what hurts, what "
        "was tried; not the plan (max 60,000 chars).",
    )
    proposed_solution: str = Field(
        min_length=1,
        max_length=60_000,
        description="The plan under review, in full. The ONLY field that may describe the plan (max 60,000 chars).",
    )
    decision_type: DecisionType = Field(description="What kind of decision this is.")
    risk_level: RiskLevel = Field(description="How costly a wrong decision would be.")
    review_mode: ReviewMode = Field(
        default="blind_first",
        description="blind_first (default): the reviewer forms its own view before seeing the plan. "
        "proposal_first: it sees the plan at once (no blindness check; weaker).",
    )
    environment: str | None = Field(
        default=None,
        max_length=8_000,
        description="BLIND field. Runtime, stack, scale and deployment facts (max 8,000 chars).",
    )
    evidence: list[EvidenceItem] | None = Field(
        default=None,
        max_length=30,
        description="BLIND field. Measurements, logs, benchmarks, error messages, one per item (max 30 items).",
    )
    trace_id: str | None = Field(
        default=None, max_length=128, description="Carried into every log line and the result; one is made if absent."
    )


# ---------------------------------------------------------------- result


class FalsificationProbe(BaseModel):
    description: str
    expected_signal: str


class ReviewMeta(BaseModel):
    review_id: str
    review_mode: AnyReviewMode
    model: str
    phases: int = 0
    usage: Usage = Field(default_factory=Usage)
    # What the review's calls cost (usage.cost_usd): null when the model has no price.
    cost_usd: float | None = 0.0
    latency_ms: int = 0
    # Present (and true) only when the budget ran out before the last phase.
    budget_exhausted: bool | None = None
    blindness_warning: str | None = None
    fallbacks: list[str] = Field(default_factory=list)
    trace_id: str | None = None

    @model_validator(mode="after")
    def _cost_of_the_calls(self) -> ReviewMeta:
        self.cost_usd = self.usage.cost_usd
        return self

    @model_serializer(mode="wrap")
    def _drop_unset_budget_flag(self, handler: Any, info: SerializationInfo) -> dict[str, Any]:
        data = handler(self)
        if isinstance(data, dict) and not data.get("budget_exhausted"):
            data.pop("budget_exhausted", None)
        return keep_null_cost(data, self.cost_usd, info)


class ReviewResult(BaseModel):
    """What a producer gets back. The reviewer's Phase-1 position and the
    conversation transcript are never part of it."""

    format: Literal[2] = RESULT_FORMAT
    status: Literal["ok"] = "ok"
    verdict: Verdict
    recommendation: str
    critical_assumptions: list[str] = Field(default_factory=list, max_length=MAX_LIST_ITEMS)
    material_risks: list[str] = Field(default_factory=list, max_length=MAX_LIST_ITEMS)
    better_alternative: str | None = None
    falsification_probe: FalsificationProbe
    confidence: float = Field(ge=0.0, le=1.0)
    meta: ReviewMeta
    trace_id: str | None = None

    @model_validator(mode="after")
    def _trace_id_from_meta(self) -> ReviewResult:
        if self.trace_id is None:
            self.trace_id = self.meta.trace_id
        return self


class ReviewErrorMeta(BaseModel):
    review_id: str | None = None
    review_mode: AnyReviewMode | None = None
    model: str | None = None
    phases: int = 0
    usage: Usage = Field(default_factory=Usage)
    cost_usd: float | None = 0.0
    latency_ms: int | None = None
    fallbacks: list[str] = Field(default_factory=list)
    trace_id: str | None = None

    @model_validator(mode="after")
    def _cost_of_the_calls(self) -> ReviewErrorMeta:
        self.cost_usd = self.usage.cost_usd
        return self

    @model_serializer(mode="wrap")
    def _unknown_cost_is_null(self, handler: Any, info: SerializationInfo) -> Any:
        return keep_null_cost(handler(self), self.cost_usd, info)


class ReviewError(ErrorResult):
    """A failed review: the common error result plus `meta` (what was spent, on what)."""

    meta: ReviewErrorMeta | None = None

    @model_validator(mode="after")
    def _trace_id_from_meta(self) -> ReviewError:
        if self.trace_id is None and self.meta is not None:
            self.trace_id = self.meta.trace_id
        return self


ReviewOutcome = ReviewResult | ReviewError


# ---------------------------------------------------------------- model answers


class _Lenient(BaseModel):
    """Model answers: unknown keys are ignored (models add chatter), lists are
    truncated rather than refused."""

    model_config = ConfigDict(extra="ignore", allow_inf_nan=False)


class Direction(_Lenient):
    name: str = Field(min_length=1)
    summary: str = Field(min_length=1)
    pros: list[str] = Field(default_factory=list)
    cons: list[str] = Field(default_factory=list)

    @field_validator("pros", "cons", mode="before")
    @classmethod
    def _lists(cls, value: Any) -> list[str]:
        return normalize_str_list(value)


class BlindPosition(_Lenient):
    """Phase 1: the reviewer's own position, formed without the proposal."""

    assumptions: list[str] = Field(default_factory=list)
    directions: list[Direction] = Field(min_length=1, max_length=5)
    failure_modes: list[str] = Field(default_factory=list)
    preferred_solution: str = Field(min_length=1)
    assumptions_to_test: list[str] = Field(default_factory=list)

    @field_validator("assumptions", "failure_modes", "assumptions_to_test", mode="before")
    @classmethod
    def _lists(cls, value: Any) -> list[str]:
        return normalize_str_list(value)

    @field_validator("directions", mode="before")
    @classmethod
    def _at_most_five(cls, value: Any) -> Any:
        return value[:5] if isinstance(value, list) else value


class VerdictAnswer(_Lenient):
    """Phase 2 (or proposal_first): the verdict on the proposal."""

    verdict: Verdict
    recommendation: str = Field(min_length=1)
    critical_assumptions: list[str] = Field(default_factory=list)
    material_risks: list[str] = Field(default_factory=list)
    better_alternative: str | None = None
    falsification_probe: FalsificationProbe
    confidence: float = Field(ge=0.0, le=1.0)

    @field_validator("verdict", mode="before")
    @classmethod
    def _verdict(cls, value: Any) -> str:
        return normalize_verdict(value)

    @field_validator("confidence", mode="before")
    @classmethod
    def _confidence(cls, value: Any) -> float:
        return normalize_confidence(value)

    @field_validator("better_alternative", mode="before")
    @classmethod
    def _optional(cls, value: Any) -> str | None:
        return normalize_optional_text(value)

    @field_validator("critical_assumptions", "material_risks", mode="before")
    @classmethod
    def _lists(cls, value: Any) -> list[str]:
        return normalize_str_list(value)


ANSWER_SCHEMAS: dict[str, type[_Lenient]] = {"position": BlindPosition, "verdict": VerdictAnswer}
