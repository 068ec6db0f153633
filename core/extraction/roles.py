"""Which role (an amount field: total, subtotal, tax) each amount in a source plays,
read from the labels a lexicon lists: the nearest label before it on its line, a
label right after it that no later number owns, or a column header above it."""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from dataclasses import dataclass

from vetq.core.extraction.amounts import AmountMention
from vetq.core.extraction.lexicon import MAX_FIRST_WORD_CHARS, WORD_RE, Lexicon, normalise_phrase

__all__ = [
    "CLAUSE_BREAK_RE",
    "COLUMN_LOOKUP_LINES",
    "LABEL_AFTER_WINDOW",
    "LABEL_BEFORE_WINDOW",
    "MAX_LABELS",
    "Label",
    "Lines",
    "RoleAssignment",
    "assign_roles",
    "find_labels",
]

LABEL_BEFORE_WINDOW = 60
LABEL_AFTER_WINDOW = 20
COLUMN_LOOKUP_LINES = 3
MAX_LABELS = 100_000
_MAX_COLUMN_LINE = 2000
CLAUSE_BREAK_RE = re.compile(r"[,;]|\.(?![0-9])")


@dataclass(frozen=True)
class Label:
    start: int
    end: int
    role: str
    trailing: bool = False  # a phrase that usually follows its number ("before tax")


class Lines:
    """A text's line index: the line a position is on, a line's bounds, a column."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def line_of(self, pos: int) -> int:
        return bisect_right(self.starts, pos) - 1

    def bounds(self, idx: int) -> tuple[int, int]:
        s = self.starts[idx]
        e = self.starts[idx + 1] - 1 if idx + 1 < len(self.starts) else len(self.text)
        return s, e

    def column(self, line_start: int, pos: int) -> int:
        seg = self.text[line_start:pos]
        return len(seg.expandtabs(8)) if "\t" in seg else len(seg)


def _label_matches(text: str, lexicon: Lexicon) -> Iterator[re.Match[str]]:
    """Label matches, found by scanning words and matching anchored (fast on big text)."""
    pos = 0
    count = 0
    for w in WORD_RE.finditer(text):
        if (
            w.start() < pos
            or w.end() - w.start() > MAX_FIRST_WORD_CHARS
            or w.group().casefold() not in lexicon.label_first_words
        ):
            continue
        m = lexicon.label_re.match(text, w.start())
        if m is not None:
            yield m
            pos = m.end()
            count += 1
            if count >= MAX_LABELS:
                return


def find_labels(text: str, lexicon: Lexicon) -> list[Label]:
    """Every role label in text, in order."""
    labels: list[Label] = []
    for m in _label_matches(text, lexicon):
        key = normalise_phrase(m.group())
        role = lexicon.role_of_label.get(key) or lexicon.role_of_label.get(key.rstrip("."))
        if role:
            labels.append(Label(m.start(), m.end(), role, key.startswith(lexicon.trailing_label_prefixes)))
    return labels


@dataclass(frozen=True)
class RoleAssignment:
    labels: list[Label]
    label_starts: list[int]
    # roles[i]: amount i's role, or None
    roles: list[str | None]
    # role_label[i]: the label on amount i's own line that gave it its role, -1 when
    # the role came from a column header (or there is none)
    role_label: list[int]


def assign_roles(text: str, amounts: list[AmountMention], lines: Lines, lexicon: Lexicon) -> RoleAssignment:
    labels = find_labels(text, lexicon)
    label_starts = [lb.start for lb in labels]
    n = len(amounts)
    roles: list[str | None] = [None] * n
    role_label: list[int] = [-1] * n

    # candidates: (a) nearest label before on the same line, within the window,
    # no other amount between; (b) a label right after the number.
    pre: list[int] = [-1] * n
    post: list[int] = [-1] * n
    li = 0
    last_label = -1
    amount_since = False
    for ai, am in enumerate(amounts):
        while li < len(labels) and labels[li].end <= am.start:
            last_label = li
            amount_since = False
            li += 1
        if last_label >= 0 and not amount_since:
            lb = labels[last_label]
            if am.start - lb.end <= LABEL_BEFORE_WINDOW and "\n" not in text[lb.end : am.start]:
                pre[ai] = last_label
        amount_since = True
        k = bisect_left(label_starts, am.end)
        if k < len(labels):
            gap = text[am.end : labels[k].start]
            if (
                len(gap) <= LABEL_AFTER_WINDOW
                and "\n" not in gap
                and not any(c.isdigit() for c in gap)
                and not lexicon.term_unit_re.search(gap)  # "30 jours net": a payment term
            ):
                post[ai] = k
    pre_of = {k: ai for ai, k in enumerate(pre) if k >= 0}

    # A label between two numbers goes to the number before it when it is a
    # trailing phrase ("540.00 before tax"), when a clause break separates it
    # from the next number ("43.20 VAT, so 583.20"), or when nothing follows.
    owned_after: dict[int, int] = {}
    for ai in range(n):
        has_pre = pre[ai] >= 0 and pre[ai] not in owned_after
        k = post[ai]
        if has_pre or k < 0:
            continue
        nxt = pre_of.get(k)
        lb = labels[k]
        if nxt is None or lb.trailing or CLAUSE_BREAK_RE.search(text, lb.end, amounts[nxt].start):
            owned_after[k] = ai

    used: set[int] = set()
    for ai in range(n):
        if pre[ai] >= 0 and pre[ai] not in owned_after:
            roles[ai] = labels[pre[ai]].role
            role_label[ai] = pre[ai]
            used.add(pre[ai])
        elif post[ai] >= 0 and owned_after.get(post[ai]) == ai:
            roles[ai] = labels[post[ai]].role
            role_label[ai] = post[ai]
            used.add(post[ai])

    # (c) column layouts: a label above whose columns overlap the number's
    for ai, am in enumerate(amounts):
        if roles[ai] is None:
            roles[ai] = _column_role(am, used, labels, label_starts, lines)
    return RoleAssignment(labels, label_starts, roles, role_label)


def _column_role(
    am: AmountMention, used: set[int], labels: list[Label], label_starts: list[int], lines: Lines
) -> str | None:
    li = lines.line_of(am.start)
    ls, le = lines.bounds(li)
    if le - ls > _MAX_COLUMN_LINE:
        return None
    c0, c1 = lines.column(ls, am.start), lines.column(ls, am.end)
    checked = 0
    j = li - 1
    while j >= 0 and checked < COLUMN_LOOKUP_LINES:
        s, e = lines.bounds(j)
        j -= 1
        if not lines.text[s:e].strip():
            continue
        checked += 1
        if e - s > _MAX_COLUMN_LINE:
            continue
        k0 = bisect_left(label_starts, s)
        k1 = bisect_left(label_starts, e)
        best: tuple[int, str] | None = None
        for k in range(k0, k1):
            if k in used:
                continue
            lb = labels[k]
            l0, l1 = lines.column(s, lb.start), lines.column(s, lb.end)
            overlap = min(c1, l1) - max(c0, l0)
            if overlap > -2 and (best is None or overlap > best[0]):
                best = (overlap, lb.role)
        if best is not None:
            return best[1]
    return None
