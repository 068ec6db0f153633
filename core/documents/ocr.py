"""Scanned pages (no text layer) read by Tesseract, through pytesseract: the optional
`vetq[ocr]` extra and Debian's `tesseract-ocr` binary (or any tesseract on PATH).

A page is rendered with pypdfium2 (`page.render(scale=...)`) at OCR_DPI, Tesseract
returns words with pixel boxes and a confidence (0-100), and the words go through the
same layout as the text layer's glyphs; boxes come back in PDF points and
confidences as 0-1, which later lower the score of values read from doubtful words.

Two differences from a text layer are undone before the layout sees the words:
Tesseract's boxes hug the ink, where a text layer's are the font's (ascender to
descender), and the layout measures line spacing in box heights, so a table's header and
its first row a line apart would read as separate blocks, each with columns of its own
(the header no longer over its figures); and a table's vertical rules come back as words
("Net Price | Rate", "C$201.43 || C$14.10") that join the cells they separate."""

from __future__ import annotations

import re
import shutil
from typing import Any

from vetq.core.documents.layout import PlacedWord, lay_out
from vetq.core.documents.pages import Page

__all__ = ["OCR_DPI", "read_page", "unavailable"]

OCR_DPI = 300
POINTS_PER_INCH = 72
# How much taller a text layer's word box is than Tesseract's box around the same word's
# ink: the median over the first pages of the real sets' PDFs that have a text layer
# (1.26 to 1.62 between the tenth and ninetieth percentiles, 114 pages).
INK_TO_FONT_BOX = 1.44
RULE_RE = re.compile(r"[|]+")  # a table's vertical rule read as glyphs


def unavailable(lang: str) -> str | None:
    """Why this process cannot OCR in `lang`, or None when it can."""
    try:
        import pytesseract
    except ImportError:
        return "OCR is not installed on the workers (pip install 'vetq[ocr]', and the tesseract binary)"
    if shutil.which(pytesseract.pytesseract.tesseract_cmd) is None:
        return "the tesseract binary is not installed on the workers (apt-get install tesseract-ocr)"
    try:
        installed = set(pytesseract.get_languages(config=""))
    except Exception as exc:  # noqa: BLE001 - a broken install says so rather than crashing the worker
        return f"tesseract does not run ({type(exc).__name__})"
    missing = [part for part in lang.split("+") if part not in installed]
    if missing:
        return (
            f"tesseract has no language data for {', '.join(missing)} (VETQ_OCR_LANG; installed: "
            f"{', '.join(sorted(installed)) or 'none'}): apt-get install tesseract-ocr-{missing[0]}"
        )
    return None


def read_page(page: Any, number: int, lang: str, timeout_s: float) -> Page:
    """One page read by OCR: its text laid out like a text layer's, each word with its box in points and its confidence."""
    import pytesseract

    scale = OCR_DPI / POINTS_PER_INCH
    width, height = page.get_size()
    image = page.render(scale=scale).to_pil()
    data = pytesseract.image_to_data(
        image, lang=lang, output_type=pytesseract.Output.DICT, timeout=max(int(timeout_s), 1)
    )
    return page_from_tesseract(data, number, width, height, scale)


def page_from_tesseract(data: dict[str, list[Any]], number: int, width: float, height: float, scale: float) -> Page:
    """Tesseract's image_to_data (pixels, confidence 0-100; -1 marks a block, not a word) as a Page."""
    words: list[PlacedWord] = []
    for i, raw in enumerate(data.get("text", [])):
        text = str(raw).strip()
        try:
            confidence = float(data["conf"][i])
        except (TypeError, ValueError):
            continue
        if not text or confidence < 0 or RULE_RE.fullmatch(text):
            continue
        left, top = float(data["left"][i]) / scale, float(data["top"][i]) / scale
        right, ink = left + float(data["width"][i]) / scale, float(data["height"][i]) / scale
        centre, half = top + ink / 2, INK_TO_FONT_BOX * ink / 2
        words.append(
            PlacedWord(text, left, centre - half, right, centre + half, round(min(confidence, 100.0) / 100, 3))
        )
    text, placed = lay_out(words)
    return Page(number=number, text=text, width=width, height=height, words=placed, ocr=True)
