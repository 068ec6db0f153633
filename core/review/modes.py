"""Review modes: how the conversation with the reviewer is laid out.

* blind_first: Phase 1 sees only a BlindBrief -- a model with no field for the
  proposal, built by picking the blind fields explicitly -- and answers with its
  own position. Phase 2 continues the same conversation, reveals the proposal and
  asks for the verdict.
* proposal_first: one call that sees everything (the control).

MODES is a registry so benchmark-only modes can be added later; PRODUCER_MODES is
what a producer may ask for (ReviewRequest.review_mode's Literal matches it).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict

from core.llm.types import Message
from core.review.budget import BudgetExceeded
from core.review.schema import DecisionType, ReviewRequest, RiskLevel
from core.review.session import ReviewSession, render_prompt

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


_TAGS = ("objective", "constraints", "constraint", "context", "environment", "evidence", "item", "proposed_solution")
_CLOSING_TAG = re.compile(r"<(/?\s*(?:" + "|".join(_TAGS) + r")\b)", re.IGNORECASE)


def _data(text: str) -> str:
    """Neutralise our own delimiter tags inside supplied text so it cannot close
    a block early and pose as instructions."""
    return _CLOSING_TAG.sub(r"&lt;\1", text)


def render_brief(brief: BlindBrief) -> str:
    parts = [f"<objective>\n{_data(brief.objective)}\n</objective>"]
    if brief.constraints:
        items = "\n".join(f"<constraint>{_data(c)}</constraint>" for c in brief.constraints)
        parts.append(f"<constraints>\n{items}\n</constraints>")
    else:
        parts.append("<constraints>\n(none given)\n</constraints>")
    parts.append(f"<context>\n{_data(brief.context) or '(none given)'}\n</context>")
    if brief.environment:
        parts.append(f"<environment>\n{_data(brief.environment)}\n</environment>")
    if brief.evidence:
        items = "\n".join(f"<item>{_data(e)}</item>" for e in brief.evidence)
        parts.append(f"<evidence>\n{items}\n</evidence>")
    return "\n\n".join(parts)


def phase1_messages(brief: BlindBrief) -> list[Message]:
    """The Phase-1 conversation. Takes only a BlindBrief: the proposal is not in scope."""
    text = render_prompt(
        "phase1_blind", decision_type=brief.decision_type, risk_level=brief.risk_level, brief=render_brief(brief)
    )
    return [Message(role="user", content=text)]


def phase2_message(proposed_solution: str) -> Message:
    return Message(role="user", content=render_prompt("phase2_reveal", proposed_solution=_data(proposed_solution)))


def proposal_first_messages(request: ReviewRequest) -> list[Message]:
    brief = BlindBrief.from_request(request)
    text = render_prompt(
        "proposal_first",
        decision_type=brief.decision_type,
        risk_level=brief.risk_level,
        brief=render_brief(brief),
        proposed_solution=_data(request.proposed_solution),
    )
    return [Message(role="user", content=text)]


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
    except BudgetExceeded:
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


MODES: dict[str, ModeFn] = {
    "blind_first": run_blind_first,
    "proposal_first": run_proposal_first,
}
PRODUCER_MODES: frozenset[str] = frozenset({"blind_first", "proposal_first"})
