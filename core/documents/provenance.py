"""From the joined text back to the PDF: a span's page, its place in that page's text
and the boxes of the words it covers; and the OCR doubt behind a value."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Mapping

from vetq.core.documents.pages import Page, PdfText, Word
from vetq.core.extraction.field_checks import OCR_LOW_CONFIDENCE_FACTOR, FieldCheck
from vetq.core.extraction.schema import Span

__all__ = ["locate", "penalise_ocr_doubts", "words_under"]


def _place(span: Span, pages: PdfText) -> tuple[Page, int, int]:
    page, offset = pages.page_at(span.start)
    start = max(0, span.start - offset)
    end = max(start, min(span.end - offset, len(page.text)))
    return page, start, end


def words_under(page: Page, start: int, end: int) -> list[Word]:
    """The words of `page` that overlap its text's [start, end) (the words are in text order)."""
    starts = [word.start for word in page.words]
    first = max(0, bisect_right(starts, start) - 1)
    out = []
    for word in page.words[first:]:
        if word.start >= end:
            break
        if word.end > start:
            out.append(word)
    return out


def locate(spans: Iterable[Span], pages: PdfText) -> list[Span]:
    """The spans with their page (1-based), page_start/page_end in that page's text,
    and the boxes of the words they cover."""
    located = []
    for span in spans:
        page, start, end = _place(span, pages)
        boxes = [[round(v, 2) for v in word.box] for word in words_under(page, start, end)]
        located.append(
            span.model_copy(update={"page": page.number, "page_start": start, "page_end": end, "boxes": boxes or None})
        )
    return located


def penalise_ocr_doubts(checks: Mapping[str, FieldCheck], pages: PdfText, min_confidence: float) -> None:
    """Lower the score of a value whose every occurrence was read by OCR from a word
    below `min_confidence` (VETQ_OCR_MIN_CONFIDENCE): the value found may be a
    misreading. An occurrence from the text layer, or read with confidence, backs it."""
    if not pages.ocr_pages:
        return
    for check in checks.values():
        if not check.spans:
            continue
        best: tuple[float, int] | None = None  # the best-read occurrence: its weakest word, its page
        for span in check.spans:
            page, start, end = _place(span, pages)
            confidences = [w.confidence for w in words_under(page, start, end) if w.confidence is not None]
            weakest = min(confidences, default=1.0)
            if best is None or weakest > best[0]:
                best = (weakest, page.number)
        if best is not None and best[0] < min_confidence:
            check.penalise(
                OCR_LOW_CONFIDENCE_FACTOR,
                f"read by OCR on page {best[1]} with confidence {best[0]:.2f} (below {min_confidence:.2f}, "
                "VETQ_OCR_MIN_CONFIDENCE): check it against the page",
            )
