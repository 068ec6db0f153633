"""Is the proposal already written into the fields the reviewer sees blind?

The check runs before anything else (before a client is built, before any token
is spent). It measures containment: the share of the proposal's distinct n-word
shingles (n = min(5, words in the proposal)) that also occur in the blind fields.

Tokens are `re.findall(r"\\w+", text.casefold())`. Each blind field is shingled
on its own -- objective, context, environment, and every constraint and every
evidence item separately -- so no shingle spans two fields (a proposal cannot
"match" by the accident of one field's last words meeting the next's first).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from vetq.core.review.schema import ReviewRequest

DEFAULT_LEAK = 0.5
DEFAULT_WARN = 0.15
MAX_N = 5

_WORD = re.compile(r"\w+")


def words(text: str) -> list[str]:
    return _WORD.findall((text or "").casefold())


def shingles(tokens: list[str], n: int) -> set[tuple[str, ...]]:
    if n <= 0 or len(tokens) < n:
        return set()
    return {tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)}


def blind_fields(request: ReviewRequest) -> list[tuple[str, str]]:
    """(name, text) of every field the Phase-1 reviewer sees, one entry per list item."""
    fields: list[tuple[str, str]] = [("objective", request.objective)]
    fields += [(f"constraints[{i}]", c) for i, c in enumerate(request.constraints)]
    fields.append(("context", request.context))
    if request.environment:
        fields.append(("environment", request.environment))
    fields += [(f"evidence[{i}]", e) for i, e in enumerate(request.evidence or [])]
    return fields


@dataclass(frozen=True)
class BlindnessReport:
    score: float
    n: int
    leaked: bool
    warning: str | None
    # The blind field holding the most of the proposal's shingles (None if none does).
    field: str | None = None
    field_score: float = 0.0

    def leak_message(self) -> str:
        where = f"; most of it is in {self.field} ({self.field_score:.2f})" if self.field else ""
        return (
            f"the proposed solution is already present in the fields the reviewer must see blind "
            f"(containment {self.score:.2f}{where}). Remove it from objective, constraints, context, "
            f"environment and evidence, or ask for review_mode proposal_first."
        )


def check_blindness(
    request: ReviewRequest, *, leak: float = DEFAULT_LEAK, warn: float = DEFAULT_WARN
) -> BlindnessReport:
    proposal_words = words(request.proposed_solution)
    n = min(MAX_N, len(proposal_words))
    target = shingles(proposal_words, n)
    if not target:
        return BlindnessReport(score=0.0, n=n, leaked=False, warning=None)
    found: set[tuple[str, ...]] = set()
    best_field, best_score = None, 0.0
    for name, text in blind_fields(request):
        common = target & shingles(words(text), n)
        if not common:
            continue
        found |= common
        field_score = len(common) / len(target)
        if field_score > best_score:
            best_field, best_score = name, field_score
    score = len(found) / len(target)
    leaked = score >= leak
    warning = None
    if score >= warn:
        warning = (
            f"the blind fields already contain part of the proposal (containment {score:.2f}, "
            f"mostly in {best_field}); the reviewer's first position may not be independent"
        )
    return BlindnessReport(score=score, n=n, leaked=leaked, warning=warning, field=best_field, field_score=best_score)
