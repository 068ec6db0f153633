"""Review modes: how the conversation with the reviewer is laid out.

* blind_first: Phase 1 sees only a BlindBrief -- a model with no field for the
  proposal, built by picking the blind fields explicitly -- and answers with its
  own position. Phase 2 continues the same conversation, reveals the proposal and
  asks for the verdict.
* proposal_first: one call that sees everything (the control).

Benchmark-only modes (run by `vetq bench review` through the queue's `bench_mode`
header; a producer can never ask for them):

* proposal_first_2pass: proposal_first, then a second call in the same
  conversation asking the reviewer to reconsider its verdict critically; the second
  answer is the verdict (the compute-matched control of blind_first: two calls).
* independent_only: the blind Phase-1 position, then a FRESH conversation that sees
  only that position and the proposal -- not the original fields -- and gives the
  verdict.
* decision_judge: one call that sees everything, framed so that preserving a
  correct proposal is worth as much as catching a flawed one.

MODES is the registry; PRODUCER_MODES is what a producer may ask for
(ReviewRequest.review_mode's Literal matches it). The benchmark modes' prompts are
core.prompts.BENCH_PROMPTS, kept apart from REVIEW_PROMPTS, which pins what
producers get.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict

from vetq.core.llm.errors import BudgetExceededError
from vetq.core.llm.types import Message
from vetq.core.prompts import BENCH_PROMPTS, REVIEW_PROMPTS, REVIEW_TAGS, PromptSet, fence, neutralise_tags
from vetq.core.review.schema import DecisionType, ReviewRequest, RiskLevel
from vetq.core.review.session import ReviewSession

BUDGET_EXHAUSTED_RECOMMENDATION = (
    "The review's token budget ran out after the reviewer formed its own position and before it could "
    "compare the proposal; no verdict was reached. Raise the review budget or shorten the context and ask again."
)


class BlindBrief(BaseModel):
    """Everything Phase 1 may see. It has no proposal field, and extra keys are
    refused, so the proposal cannot reach Phase 1 through it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    objective: str
    constraints: tuple[str, ...] = ()
    context: str = ""
    environment: str | None = None
    evidence: tuple[str, ...] = ()
    decision_type: DecisionType
    risk_level: RiskLevel

    @classmethod
    def from_request(cls, request: ReviewRequest) -> BlindBrief:
        # Fields picked one by one on purpose: never `request.model_dump()`.
        return cls(
            objective=request.objective,
            constraints=tuple(request.constraints),
            context=request.context,
            environment=request.environment,
            evidence=tuple(request.evidence or ()),
            decision_type=request.decision_type,
            risk_level=request.risk_level,
        )


def _data(text: str) -> str:
    """Neutralise our own delimiter tags (any case, any whitespace) inside supplied
    text so it cannot close a block early and pose as instructions."""
    return neutralise_tags(text, REVIEW_TAGS)


def _block(tag: str, text: str) -> str:
    return fence(tag, text, tags=REVIEW_TAGS)


def render_brief(brief: BlindBrief) -> str:
    parts = [_block("objective", brief.objective)]
    if brief.constraints:
        items = "\n".join(f"<constraint>{_data(c)}</constraint>" for c in brief.constraints)
        parts.append(f"<constraints>\n{items}\n</constraints>")
    else:
        parts.append("<constraints>\n(none given)\n</constraints>")
    parts.append(_block("context", brief.context or "(none given)"))
    if brief.environment:
        parts.append(_block("environment", brief.environment))
    if brief.evidence:
        items = "\n".join(f"<item>{_data(e)}</item>" for e in brief.evidence)
        parts.append(f"<evidence>\n{items}\n</evidence>")
    return "\n\n".join(parts)


def phase1_messages(brief: BlindBrief) -> list[Message]:
    """The Phase-1 conversation. Takes only a BlindBrief: the proposal is not in scope."""
    text = REVIEW_PROMPTS.render(
        "phase1_blind", decision_type=brief.decision_type, risk_level=brief.risk_level, brief=render_brief(brief)
    )
    return [Message(role="user", content=text)]


def phase2_message(proposed_solution: str) -> Message:
    return Message(
        role="user", content=REVIEW_PROMPTS.render("phase2_reveal", proposed_solution=_data(proposed_solution))
    )


def full_view_messages(request: ReviewRequest, prompts: PromptSet, key: str) -> list[Message]:
    """One user message that shows the reviewer everything: the brief and the proposal."""
    brief = BlindBrief.from_request(request)
    text = prompts.render(
        key,
        decision_type=brief.decision_type,
        risk_level=brief.risk_level,
        brief=render_brief(brief),
        proposed_solution=_data(request.proposed_solution),
    )
    return [Message(role="user", content=text)]


def proposal_first_messages(request: ReviewRequest) -> list[Message]:
    return full_view_messages(request, REVIEW_PROMPTS, "proposal_first")


@dataclass
class ModeOutcome:
    """A mode's answer: the parsed verdict dict (VerdictAnswer shape), how many
    phases completed, and whether the budget ran out before the verdict."""

    verdict: dict[str, Any]
    phases: int
    budget_exhausted: bool = False


ModeFn = Callable[[ReviewRequest, ReviewSession], ModeOutcome]


def run_blind_first(request: ReviewRequest, session: ReviewSession) -> ModeOutcome:
    messages = phase1_messages(BlindBrief.from_request(request))
    _position, conversation = session.ask(messages, schema_kind="position", phase="phase1")
    # The assistant turn in `conversation` is the parsed position re-serialised.
    try:
        verdict, _ = session.ask(
            [*conversation, phase2_message(request.proposed_solution)], schema_kind="verdict", phase="phase2"
        )
    except BudgetExceededError:
        # Phase 1 left too little for Phase 2 (or for its repair): not an error.
        return ModeOutcome(verdict=budget_exhausted_verdict(), phases=1, budget_exhausted=True)
    return ModeOutcome(verdict=verdict, phases=2)


def run_proposal_first(request: ReviewRequest, session: ReviewSession) -> ModeOutcome:
    verdict, _ = session.ask(proposal_first_messages(request), schema_kind="verdict", phase="proposal_first")
    return ModeOutcome(verdict=verdict, phases=1)


def budget_exhausted_verdict() -> dict[str, Any]:
    return {
        "verdict": "INSUFFICIENT_EVIDENCE",
        "recommendation": BUDGET_EXHAUSTED_RECOMMENDATION,
        "critical_assumptions": [],
        "material_risks": [],
        "better_alternative": None,
        "falsification_probe": {
            "description": "Run the review again with a larger token budget.",
            "expected_signal": "A verdict other than INSUFFICIENT_EVIDENCE.",
        },
        "confidence": 0.0,
    }


# ---------------------------------------------------------------- benchmark-only modes


def _position_data(position: dict[str, Any]) -> str:
    return _data(json.dumps(position, ensure_ascii=False, indent=1))


def run_proposal_first_2pass(request: ReviewRequest, session: ReviewSession) -> ModeOutcome:
    first, conversation = session.ask(proposal_first_messages(request), schema_kind="verdict", phase="proposal_first")
    second_turn = Message(role="user", content=BENCH_PROMPTS.render("proposal_second_pass"))
    try:
        verdict, _ = session.ask([*conversation, second_turn], schema_kind="verdict", phase="second_pass")
    except BudgetExceededError:
        # No budget left to reconsider: the first verdict stands, flagged.
        return ModeOutcome(verdict=first, phases=1, budget_exhausted=True)
    return ModeOutcome(verdict=verdict, phases=2)


def independent_compare_messages(position: dict[str, Any], proposed_solution: str) -> list[Message]:
    """The fresh conversation of independent_only: the position and the proposal, nothing else."""
    text = BENCH_PROMPTS.render(
        "independent_compare", position=_position_data(position), proposed_solution=_data(proposed_solution)
    )
    return [Message(role="user", content=text)]


def run_independent_only(request: ReviewRequest, session: ReviewSession) -> ModeOutcome:
    position, _conversation = session.ask(
        phase1_messages(BlindBrief.from_request(request)), schema_kind="position", phase="phase1"
    )
    try:
        # A new conversation: the Phase-1 turns (and so the original fields) are not carried over.
        verdict, _ = session.ask(
            independent_compare_messages(position, request.proposed_solution),
            schema_kind="verdict",
            phase="independent_compare",
        )
    except BudgetExceededError:
        return ModeOutcome(verdict=budget_exhausted_verdict(), phases=1, budget_exhausted=True)
    return ModeOutcome(verdict=verdict, phases=2)


def decision_judge_messages(request: ReviewRequest) -> list[Message]:
    return full_view_messages(request, BENCH_PROMPTS, "decision_judge")


def run_decision_judge(request: ReviewRequest, session: ReviewSession) -> ModeOutcome:
    verdict, _ = session.ask(decision_judge_messages(request), schema_kind="verdict", phase="decision_judge")
    return ModeOutcome(verdict=verdict, phases=1)


MODES: dict[str, ModeFn] = {
    "blind_first": run_blind_first,
    "proposal_first": run_proposal_first,
    "proposal_first_2pass": run_proposal_first_2pass,
    "independent_only": run_independent_only,
    "decision_judge": run_decision_judge,
}
PRODUCER_MODES: frozenset[str] = frozenset({"blind_first", "proposal_first"})
# Modes whose first phase must not see the proposal: refused when the blind fields leak it.
BLIND_MODES: frozenset[str] = frozenset({"blind_first", "independent_only"})
BENCH_MODES: tuple[str, ...] = ("proposal_first_2pass", "independent_only", "decision_judge")
