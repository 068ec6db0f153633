"""Positioned words -> a page's text that keeps its layout.

Words are grouped into visual lines by their vertical position and ordered left to
right; words at ordinary word spacing make one segment ("Total due"), and a wider gap
starts a new segment, which is placed on a character grid shared by the whole page:
segments that start at one x on different lines start at one column, columns keep
their left-to-right order, and each is as far right as the text before it on any line
needs, plus two spaces. So a label and its amount on one visual line stay on one text
line, in reading order; a table's columns stay aligned from line to line (a column
header stands over its figures); and the page is no wider than its text needs (a
label at the left margin is not 80 blanks away from its amount at the right one, as a
grid in points would make it). The same layout serves the text layer (pypdfium2's
glyphs) and OCR (Tesseract's words)."""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from statistics import median

from vetq.core.documents.pages import Word

__all__ = ["PlacedWord", "Rule", "lay_out"]

# A gap up to this many character widths is ordinary word spacing: one space.
WORD_GAP_CHARS = 1.6
# Segments whose left edges lie within this many character widths share a column.
SAME_COLUMN_CHARS = 0.6
# Spaces between two segments on one line: a column gap is never a word space.
COLUMN_GAP = 2
# A word joins a line when its vertical centre is within this share of the smaller
# of the two heights from the line's centre.
SAME_LINE_SHARE = 0.5
# A vertical gap above this many line heights leaves one blank line.
BLANK_LINE_GAP = 1.0
# A vertical gap above this many line heights ends a block: each block has a grid of
# its own, so an address block's long lines do not push a table below it to the right.
BLOCK_GAP = 1.5


# A vertical rule drawn on the page: its x, top and bottom, in points.
Rule = tuple[float, float, float]
# A rule is no thicker than this, in points, whether drawn (documents/pdf.py) or found in
# a page's image (documents/ocr.py): a thicker dark shape is a band or a shaded box.
RULE_MAX_THICK_POINTS = 4
# How far past a rule a word's box may reach and the rule still stand beside it, not
# through it (points): a glyph's box is a little wider than its ink.
RULE_REACH = 1.5


@dataclass(frozen=True, slots=True)
class PlacedWord:
    text: str
    x0: float
    y0: float  # top, in points from the page's top edge
    x1: float
    y1: float
    confidence: float | None = None
    # A space character of the text itself stands before it (not one PDFium inserted
    # between strings): the producer wrote the two words as one string, "1 250,00", and
    # a cell's border drawn across that space (the figure overflowing its cell) parts
    # nothing.
    spaced: bool = False

    @property
    def centre(self) -> float:
        return (self.y0 + self.y1) / 2

    @property
    def height(self) -> float:
        return max(self.y1 - self.y0, 0.1)


def _lines(words: list[PlacedWord]) -> list[list[PlacedWord]]:
    lines: list[list[PlacedWord]] = []
    centres: list[float] = []
    heights: list[float] = []
    for word in sorted(words, key=lambda w: (w.centre, w.x0)):
        if lines:
            tolerance = SAME_LINE_SHARE * min(word.height, heights[-1])
            if abs(word.centre - centres[-1]) <= tolerance:
                lines[-1].append(word)
                n = len(lines[-1])
                centres[-1] += (word.centre - centres[-1]) / n
                heights[-1] += (word.height - heights[-1]) / n
                continue
        lines.append([word])
        centres.append(word.centre)
        heights.append(word.height)
    return [sorted(line, key=lambda w: w.x0) for line in lines]


def strong_direction(ch: str) -> str | None:
    """A character's strong direction: "R" for Arabic, Hebrew and the other right-to-left
    scripts, "L" for letters written left to right, None for digits, signs and spaces."""
    kind = unicodedata.bidirectional(ch)
    return "R" if kind in ("R", "AL") else "L" if kind == "L" else None


def _right_to_left(text: str) -> bool:
    """Whether a word is written right to left: its first strong character is."""
    return next((d for ch in text if (d := strong_direction(ch)) is not None), None) == "R"


def _reading_order(segment: list[PlacedWord]) -> list[PlacedWord]:
    """A segment's words as they are read: left to right, but a run of right-to-left
    words ("بيز إسبانيا ش.م.", laid out from the right) from its rightmost word on."""
    out: list[PlacedWord] = []
    run: list[PlacedWord] = []
    for word in segment:
        if _right_to_left(word.text):
            run.append(word)
            continue
        out += reversed(run)
        run = []
        out.append(word)
    return out + run[::-1]


def _segments(line: list[PlacedWord], char_width: float, rules: Sequence[Rule]) -> list[list[PlacedWord]]:
    top, bottom = min(w.centre for w in line), max(w.centre for w in line)
    rules = [rule for rule in rules if rule[1] <= bottom and rule[2] >= top]  # a page may draw thousands
    segments: list[list[PlacedWord]] = []
    for word in line:
        if (
            segments
            and word.x0 - segments[-1][-1].x1 <= WORD_GAP_CHARS * char_width
            and (word.spaced or not _ruled_apart(segments[-1][-1], word, rules))
        ):
            segments[-1].append(word)
        else:
            segments.append([word])
    return segments


def _ruled_apart(left: PlacedWord, right: PlacedWord, rules: Sequence[Rule]) -> bool:
    """Whether a vertical rule stands in the gap between two words of a line ("2 | 150.00"
    is a quantity and a price, not 2,150.00). A rule through a word (text running over
    its cell's border) parts nothing."""
    return any(
        left.x1 - RULE_REACH <= x <= right.x0 + RULE_REACH and top <= right.centre <= bottom for x, top, bottom in rules
    )


def _top(line: list[list[PlacedWord]]) -> float:
    return min(w.y0 for segment in line for w in segment)


def _bottom(line: list[list[PlacedWord]]) -> float:
    return max(w.y1 for segment in line for w in segment)


def _block_columns(lines: list[list[list[PlacedWord]]], char_width: float) -> dict[int, int]:
    """The text column of every segment of a block (by the segment's id): left edges
    within SAME_COLUMN_CHARS share one; columns keep their order in x, and each stands
    right of every segment before it on its own line, COLUMN_GAP spaces on."""
    edges = sorted({segment[0].x0 for line in lines for segment in line})
    anchor_of: dict[float, int] = {}
    anchors = 0
    first = edges[0]
    for x in edges:
        if x - first > SAME_COLUMN_CHARS * char_width:
            anchors += 1
            first = x
        anchor_of[x] = anchors
    needs: list[list[tuple[int, int]]] = [[] for _ in range(anchors + 1)]
    for line in lines:
        for before, segment in pairwise(line):
            width = sum(len(w.text) for w in before) + len(before) - 1
            needs[anchor_of[segment[0].x0]].append((anchor_of[before[0].x0], width))
    column = [0] * (anchors + 1)
    for a in range(1, anchors + 1):
        column[a] = max([column[a - 1] + 1, *(column[b] + width + COLUMN_GAP for b, width in needs[a])])
    return {id(segment): column[anchor_of[segment[0].x0]] for line in lines for segment in line}


# A word drawn again within this share of its height of where it was drawn is drawn over
# itself: fake bold, the same glyphs overprinted a fraction of a point apart.
OVERPRINT_SHARE = 0.25


def _without_overprints(words: list[PlacedWord]) -> list[PlacedWord]:
    """The words less each one drawn over an earlier copy of itself: "Razón social:"
    printed twice, a hair apart, reads once, not "Razón Razón social: social:"."""
    seen: dict[str, list[PlacedWord]] = {}
    out: list[PlacedWord] = []
    for word in words:
        copies = seen.setdefault(word.text, [])
        reach = OVERPRINT_SHARE * word.height
        if any(
            abs(word.x0 - c.x0) <= reach
            and abs(word.x1 - c.x1) <= reach
            and abs(word.y0 - c.y0) <= reach
            and abs(word.y1 - c.y1) <= reach
            for c in copies
        ):
            continue
        copies.append(word)
        out.append(word)
    return out


def lay_out(words: list[PlacedWord], rules: Sequence[Rule] = ()) -> tuple[str, list[Word]]:
    """The page's text and each word's offsets and box in it; words on either side of one
    of the page's vertical `rules` are in separate cells, however close."""
    words = _without_overprints([w for w in words if w.text])
    if not words:
        return "", []
    char_width = max(median((w.x1 - w.x0) / len(w.text) for w in words), 0.5)
    line_height = median(w.height for w in words)
    lines = [_segments(line, char_width, rules) for line in _lines(words)]
    column_of: dict[int, int] = {}
    block: list[list[list[PlacedWord]]] = []
    for line in lines:
        if block and _top(line) - _bottom(block[-1]) > BLOCK_GAP * line_height:
            column_of.update(_block_columns(block, char_width))
            block = []
        block.append(line)
    column_of.update(_block_columns(block, char_width))
    out: list[str] = []
    placed: list[Word] = []
    length = 0
    previous_bottom: float | None = None
    for line in lines:
        if previous_bottom is not None:
            out.append("\n")
            length += 1
            if _top(line) - previous_bottom > BLANK_LINE_GAP * line_height:
                out.append("\n")
                length += 1
        previous_bottom = _bottom(line)
        line_start = length
        for segment in line:
            pad = max(column_of[id(segment)] - (length - line_start), 0 if length == line_start else COLUMN_GAP)
            out.append(" " * pad)
            length += pad
            for i, word in enumerate(_reading_order(segment)):
                if i:
                    out.append(" ")
                    length += 1
                out.append(word.text)
                placed.append(
                    Word(length, length + len(word.text), (word.x0, word.y0, word.x1, word.y1), word.confidence)
                )
                length += len(word.text)
    return "".join(out), placed
