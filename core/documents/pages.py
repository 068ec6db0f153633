"""A converted document: its pages' texts, and where each word of them stands.

The text the pipeline reads is the pages' texts joined by a form feed ("\\f"), which
the heuristics already read as a page break. Boxes are in PDF points with the origin
at the page's top-left corner, as the page is displayed: [x0, y0, x1, y1]."""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Any

__all__ = ["PAGE_BREAK", "Page", "PdfText", "Word"]

PAGE_BREAK = "\f"


@dataclass(frozen=True, slots=True)
class Word:
    start: int  # character offsets in its page's text
    end: int
    box: tuple[float, float, float, float]
    confidence: float | None = None  # OCR's, 0-1; None for a word from the text layer


@dataclass(slots=True)
class Page:
    number: int  # 1-based
    text: str
    width: float
    height: float
    words: list[Word] = field(default_factory=list)
    ocr: bool = False  # read by OCR (the page had no text layer)

    def to_json(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "text": self.text,
            "width": round(self.width, 2),
            "height": round(self.height, 2),
            "ocr": self.ocr,
            "words": [[w.start, w.end, *w.box, w.confidence] for w in self.words],
        }

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Page:
        words = [
            Word(int(s), int(e), (float(x0), float(y0), float(x1), float(y1)), None if c is None else float(c))
            for s, e, x0, y0, x1, y1, c in obj["words"]
        ]
        return cls(
            number=int(obj["number"]),
            text=str(obj["text"]),
            width=float(obj["width"]),
            height=float(obj["height"]),
            words=words,
            ocr=bool(obj.get("ocr", False)),
        )


@dataclass(slots=True)
class PdfText:
    pages: list[Page]
    _offsets: list[int] = field(default_factory=list, init=False, repr=False)

    def __post_init__(self) -> None:
        offset, self._offsets = 0, []
        for page in self.pages:
            self._offsets.append(offset)
            offset += len(page.text) + len(PAGE_BREAK)

    @property
    def text(self) -> str:
        return PAGE_BREAK.join(page.text for page in self.pages)

    def page_at(self, offset: int) -> tuple[Page, int]:
        """The page holding character `offset` of the joined text, and where that page's text starts."""
        index = max(0, bisect_right(self._offsets, offset) - 1)
        return self.pages[index], self._offsets[index]

    @property
    def ocr_pages(self) -> list[int]:
        return [page.number for page in self.pages if page.ocr]
