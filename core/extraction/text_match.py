"""Normalised string matching that maps matches back to original character offsets.

The source is folded once (casefold, compatibility decomposition, combining marks
dropped) while an index map remembers, for every folded character, the original
character it came from. A committed value is then matched against the folded text
letter by letter and digit by digit, with any run of whitespace / punctuation
allowed between them, and on token boundaries at both ends. So "GLOBEX LTD."
matches "Globex Ltd", "GLX-2026-778" matches "GLX/2026/778", and "Ex" does not
match inside "Globex".
"""

from __future__ import annotations

import re
import unicodedata
from array import array
from dataclasses import dataclass
from functools import lru_cache

__all__ = [
    "ASCII_FORMS",
    "UNSPACED_SCRIPTS",
    "NearMatch",
    "NormalizedText",
    "alnum_key",
    "find_normalized",
    "fold_with_map",
]

_NON_ASCII_RUN = re.compile(r"[^\x00-\x7f]+")
# The scripts written with no spaces between words (Thai, Japanese kana, Chinese and
# Japanese ideographs, Korean syllables as a line wraps them), as a character class's body
UNSPACED_SCRIPTS = "\u0e00-\u0e7f\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff"
_MAX_NEEDLE_CHARS = 600
_MAX_HITS = 200


# Every script's decimal digits as ASCII ones, the Arabic decimal and thousands
# separators as "." and ",", and the fullwidth forms CJK prints write ("￥１１，０００－",
# "（税込）", the ideographic space) as the ASCII characters and signs they stand for: one
# character for one, so offsets do not move ("١٬٢٣٤٫٥٦" reads as "1,234.56", a value
# written in either form matches the other).
ASCII_FORMS: dict[int, str] = {
    cp: str(unicodedata.decimal(chr(cp))) for cp in range(0x80, 0x10000) if unicodedata.category(chr(cp)) == "Nd"
}
ASCII_FORMS.update({0x066B: ".", 0x066C: ","})
ASCII_FORMS.update({cp: chr(cp - 0xFEE0) for cp in range(0xFF01, 0xFF5F)})
ASCII_FORMS.update({0x3000: " ", 0xFFE0: "¢", 0xFFE1: "£", 0xFFE5: "¥", 0xFFE6: "₩"})


@lru_cache(maxsize=65536)
def _fold_char(ch: str) -> str:
    # no exception to expect: casefold and NFKD are total on every code point, lone surrogates included
    s = unicodedata.normalize("NFKD", ch.translate(ASCII_FORMS).casefold())
    s = "".join(c for c in s if not unicodedata.combining(c))
    return s.casefold()


def fold_with_map(text: str) -> tuple[str, array | None]:
    """Fold ``text`` for matching. Returns the folded string and a map from folded
    index to original index (``None`` when the mapping is the identity)."""
    if text.isascii():
        return text.lower(), None
    parts: list[str] = []
    idx = array("q")
    pos = 0
    for m in _NON_ASCII_RUN.finditer(text):
        s, e = m.span()
        if s > pos:
            parts.append(text[pos:s].lower())
            idx.extend(range(pos, s))
        for i in range(s, e):
            f = _fold_char(text[i])
            if f:
                parts.append(f)
                idx.extend([i] * len(f))
        pos = e
    if pos < len(text):
        parts.append(text[pos:].lower())
        idx.extend(range(pos, len(text)))
    return "".join(parts), idx


def alnum_key(value: str) -> str:
    """The folded letters and digits of ``value`` (what matching compares)."""
    folded, _ = fold_with_map(value)
    return "".join(c for c in folded if c.isalnum())


NEAR_MIN_CHARS = 6  # no near match for a shorter value
NEAR_CHARS_PER_EDIT = 8  # one edit allowed per this many letters and digits


@dataclass(frozen=True)
class NearMatch:
    start: int
    end: int
    edits: int


class NormalizedText:
    """A source text folded once, searchable many times."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.folded, self._map = fold_with_map(text)
        self._alnum: tuple[str, list[int]] | None = None

    def _to_original(self, fs: int, fe: int) -> tuple[int, int]:
        if self._map is None:
            return fs, fe
        start = self._map[fs]
        end = self._map[fe - 1] + 1
        text = self.text
        # keep trailing combining marks with their base character
        while end < len(text) and unicodedata.combining(text[end]):
            end += 1
        return start, end

    def find(self, value: str) -> list[tuple[int, int]]:
        """Original-offset spans of every normalised occurrence of ``value``."""
        if not isinstance(value, str):
            value = str(value)
        chars = alnum_key(value)
        if not chars or len(chars) > _MAX_NEEDLE_CHARS:
            return []
        pattern = r"(?<![^\W_])" + r"[\W_]*".join(re.escape(c) for c in chars) + r"(?![^\W_])"
        try:
            rx = re.compile(pattern)
        except re.error:  # pragma: no cover - defensive
            return []
        spans: list[tuple[int, int]] = []
        for m in rx.finditer(self.folded):
            spans.append(self._to_original(m.start(), m.end()))
            if len(spans) >= _MAX_HITS:
                break
        # de-duplicate (expansions like "ß" -> "ss" can map two hits to one char)
        out: list[tuple[int, int]] = []
        for sp in spans:
            if not out or out[-1] != sp:
                out.append(sp)
        return out

    def near(self, value: str) -> NearMatch | None:
        """The closest run of the text to ``value`` within a few edits of its letters
        and digits (OCR noise: "SDN BND" for "SDN BHD"), or None. Short values have no
        near match: two characters off in five is another word."""
        chars = alnum_key(value)
        if len(chars) < NEAR_MIN_CHARS or len(chars) > _MAX_NEEDLE_CHARS:
            return None
        if self._alnum is None:
            kept = [i for i, c in enumerate(self.folded) if c.isalnum()]
            self._alnum = ("".join(self.folded[i] for i in kept), kept)
        haystack, positions = self._alnum
        if not haystack:
            return None
        from rapidfuzz import fuzz

        found = fuzz.partial_ratio_alignment(chars, haystack)
        if found is None:
            return None
        allowed = max(1, len(chars) // NEAR_CHARS_PER_EDIT)
        width = found.dest_end - found.dest_start
        # partial_ratio is an Indel similarity: one substituted character costs two.
        indel = round((1 - found.score / 100) * (len(chars) + width))
        if width == 0 or indel == 0 or indel > 2 * allowed or abs(width - len(chars)) > allowed:
            return None  # (no edit at all: the exact search refused it, off a word's boundary)
        first, last = positions[found.dest_start], positions[found.dest_end - 1]
        folded = self.folded
        if (first > 0 and folded[first - 1].isalnum()) or (last + 1 < len(folded) and folded[last + 1].isalnum()):
            return None  # inside a longer word: "Inform" is not "Information"
        start, end = self._to_original(first, last + 1)
        return NearMatch(start, end, (indel + 1) // 2)


def find_normalized(text: str, value: str) -> list[tuple[int, int]]:
    """Convenience wrapper: spans of ``value`` in ``text`` (original offsets)."""
    return NormalizedText(text).find(value)
