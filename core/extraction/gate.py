"""The confidence gate: combine the Critic's verdicts with the heuristic factors and
decide ok or needs_review, naming every field a person must confirm and why."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from vetq.core.extraction.schema import CritiqueResult, FieldVerdict, FlaggedField
from vetq.core.schemas.records import Leaf, ancestors

# With the Critic off, every committed field starts here before the heuristics.
BASE_CONFIDENCE_WITHOUT_CRITIC = 0.95
# A committed field the Critic calls ungrounded, or does not judge, can score no higher.
UNJUDGED_OR_UNGROUNDED_CAP = 0.5


class HeuristicFinding(Protocol):
    factor: float
    reasons: list[str]


@dataclass
class GateDecision:
    status: Literal["ok", "needs_review"]
    field_confidence: dict[str, float | None]
    overall_confidence: float
    flagged_fields: list[FlaggedField]
    notes: list[str] = field(default_factory=list)
    # every committed field whose heuristic factor is below 1.0, with its reasons,
    # flagged or not: a forgiven penalty must still say why the score is lower
    heuristic_notes: dict[str, list[str]] = field(default_factory=dict)


def decisive_verdicts(critique: CritiqueResult) -> dict[str, FieldVerdict]:
    """One verdict per field. Duplicates: the lowest confidence wins, and on a tie the
    ungrounded one, so the order the Critic wrote them in never matters."""
    chosen: dict[str, FieldVerdict] = {}
    for verdict in critique.verdicts:
        current = chosen.get(verdict.field)
        if current is None or (verdict.confidence, verdict.grounded) < (current.confidence, current.grounded):
            chosen[verdict.field] = verdict
    return chosen


def _critic_view(path: str, verdicts: Mapping[str, FieldVerdict] | None) -> tuple[float, list[str]]:
    if verdicts is None:
        return BASE_CONFIDENCE_WITHOUT_CRITIC, []
    # A value's own verdict, else its item's or list's (a Critic may judge a whole line).
    verdict = next((verdicts[p] for p in (path, *ancestors(path)) if p in verdicts), None)
    if verdict is None:
        return UNJUDGED_OR_UNGROUNDED_CAP, ["critic gave no verdict for this field"]
    if not verdict.grounded:
        detail = f": {verdict.reason}" if verdict.reason else ""
        return min(verdict.confidence, UNJUDGED_OR_UNGROUNDED_CAP), [f"critic: not grounded in the source{detail}"]
    reasons = [f"critic confidence {verdict.confidence:.2f}: {verdict.reason}".rstrip(": ")]
    return verdict.confidence, reasons


def decide(
    record_leaves: Sequence[Leaf],
    checks: Mapping[str, HeuristicFinding],
    critique: CritiqueResult | None,
    *,
    field_threshold: float,
    overall_threshold: float,
    field_thresholds: Mapping[str, float] | None = None,
) -> GateDecision:
    """`field_thresholds`: a threshold per template path (`line_items[].amount`) that
    overrides `field_threshold` for that field (core/extraction/thresholds.py)."""
    verdicts = decisive_verdicts(critique) if critique is not None else None
    field_confidence: dict[str, float | None] = {}
    flagged: list[FlaggedField] = []
    heuristic_notes: dict[str, list[str]] = {}
    for leaf in record_leaves:
        name, value = leaf.path, leaf.value
        if value is None:
            field_confidence[name] = None  # an honest null is never flagged...
            if leaf.field.required:  # ...but a value the schema requires is missing
                flagged.append(
                    FlaggedField(
                        field=name,
                        value=None,
                        confidence=0.0,
                        reason=f"required: the record has no {leaf.field.kind} value for {name}",
                    )
                )
            continue
        critic_confidence, critic_reasons = _critic_view(name, verdicts)
        check = checks.get(name)
        factor = check.factor if check is not None else 1.0
        combined = round(critic_confidence * factor, 4)
        field_confidence[name] = combined
        if factor < 1.0:
            heuristic_notes[name] = (
                list(check.reasons) if check is not None and check.reasons else [f"heuristic factor {factor:.2f}"]
            )
        threshold = field_threshold
        if field_thresholds:
            threshold = field_thresholds.get(re.sub(r"\[\d+\]", "[]", name), field_threshold)
        if combined < threshold:
            heuristic_reasons = list(check.reasons) if check is not None else []
            reason_parts = heuristic_reasons + critic_reasons
            if not reason_parts:
                reason_parts = [f"confidence {combined:.2f} below {threshold:.2f}"]
            flagged.append(
                FlaggedField(
                    field=name,
                    value=value,
                    confidence=combined,
                    reason="; ".join(reason_parts),
                )
            )
    committed = [c for c in field_confidence.values() if c is not None]
    model_overall = critique.overall_confidence if critique is not None else BASE_CONFIDENCE_WITHOUT_CRITIC
    overall = round(min([model_overall, sum(committed) / len(committed)] if committed else [model_overall]), 4)
    notes = []
    if overall < overall_threshold:
        notes.append(f"overall confidence {overall:.2f} is below the threshold {overall_threshold:.2f}")
    status: Literal["ok", "needs_review"] = "needs_review" if flagged or overall < overall_threshold else "ok"
    return GateDecision(
        status=status,
        field_confidence=field_confidence,
        overall_confidence=overall,
        flagged_fields=flagged,
        notes=notes,
        heuristic_notes=heuristic_notes,
    )
