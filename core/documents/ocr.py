"""Scanned pages (no text layer) read by Tesseract, through pytesseract: the optional
`vetq[ocr]` extra and Debian's `tesseract-ocr` binary (or any tesseract on PATH).

A page is rendered with pypdfium2 (`page.render(scale=...)`) at OCR_DPI, Tesseract
returns words with pixel boxes and a confidence (0-100), and the words go through the
same layout as the text layer's glyphs; boxes come back in PDF points and
confidences as 0-1, which later lower the score of values read from doubtful words.

A page's table rules are whitened before Tesseract sees the image: its layout analysis
takes a ruled grid for a picture and drops the text in its cells (a whole line-item and
totals table). OCR of the real sets' 567 kept PDFs lost a value of the record on 108 of
them with the rules kept, on 84 without.

Two differences from a text layer are undone before the layout sees the words:
Tesseract's boxes hug the ink, where a text layer's are the font's (ascender to
descender), and the layout measures line spacing in box heights, so a table's header and
its first row a line apart would read as separate blocks, each with columns of its own
(the header no longer over its figures); and a table's vertical rules come back as words
("Net Price | Rate", "C$201.43 || C$14.10") that join the cells they separate."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator, Sequence
from typing import Any

from vetq.core.documents.layout import RULE_MAX_THICK_POINTS, PlacedWord, Rule, lay_out
from vetq.core.documents.pages import Page

__all__ = ["OCR_DPI", "read_page", "unavailable"]

OCR_DPI = 300
POINTS_PER_INCH = 72
# How much taller a text layer's word box is than Tesseract's box around the same word's
# ink: the median over the first pages of the real sets' PDFs that have a text layer
# (1.26 to 1.62 between the tenth and ninetieth percentiles, 114 pages).
INK_TO_FONT_BOX = 1.44
RULE_RE = re.compile(r"[|]+")  # a table's vertical rule read as glyphs
# A rule is a run of dark pixels at least this long (half an inch: longer than any stroke
# of a letter below 48 pt, light titles included; an inch would keep a grid's shorter
# rules, and OCR lost more) in a stack of such runs, one over the next, no thicker than
# layout.RULE_MAX_THICK_POINTS (a shaded box or a band is a block, and stays).
RULE_MIN_POINTS = 36
DARK_BELOW = 160  # of 255 grey levels


def without_rules(image: Any, scale: float) -> tuple[Any, list[Rule]]:
    """The page's image (PIL) in grey, its table rules whitened, and its vertical rules
    (x, top, bottom in pixels): cells on either side of one are apart however close."""
    from PIL import Image, ImageDraw

    grey = image.convert("L")
    dark = grey.point(lambda v: 0 if v < DARK_BELOW else 255).tobytes()
    min_run, thick = round(RULE_MIN_POINTS * scale), max(round(RULE_MAX_THICK_POINTS * scale), 1)
    out = grey.copy()
    draw = ImageDraw.Draw(out)
    width, height = grey.size
    for stack in _rules(dark, width, height, min_run, thick):
        for y, a, b in stack:
            draw.line([(a, y), (b - 1, y)], fill=255)
    across = Image.frombytes("L", (width, height), dark).transpose(Image.Transpose.TRANSPOSE)
    vertical: list[Rule] = []
    for stack in _rules(across.tobytes(), height, width, min_run, thick):
        for x, a, b in stack:
            draw.line([(x, a), (x, b - 1)], fill=255)
        vertical.append(((stack[0][0] + stack[-1][0]) / 2, min(a for _, a, _ in stack), max(b for _, _, b in stack)))
    return out, vertical


def _rules(dark: bytes, width: int, height: int, min_run: int, thick: int) -> Iterator[list[tuple[int, int, int]]]:
    """Each stack of rows' runs of at least min_run dark (0) pixels, as its runs (row,
    start, end), that overlap from one row to the next by half the shorter run, when the
    stack is at most `thick` rows with light rows on both sides: all of a rule, or none of
    a block (a band's rows between the letters of white text in it are no rule)."""
    run = re.compile(rb"\x00{%d,}" % min_run)
    stacks: list[list[tuple[int, int, int]]] = []  # the stacks still growing, each its runs
    for y in range(height + 1):
        row = y * width
        runs = [(m.start() - row, m.end() - row) for m in run.finditer(dark, row, row + width)] if y < height else []
        growing = []
        for stack in stacks:
            _, a0, b0 = stack[-1]
            below = [(a, b) for a, b in runs if min(b, b0) - max(a, a0) > min(b - a, b0 - a0) // 2]
            if below:
                runs.remove(below[0])
                stack.append((y, *below[0]))
                growing.append(stack)
            elif len(stack) <= thick and _light_beside(dark, width, height, stack):
                yield stack
        stacks = growing + [[(y, a, b)] for a, b in runs]


def _light_beside(dark: bytes, width: int, height: int, stack: list[tuple[int, int, int]]) -> bool:
    """Whether the rows just above and just below a stack of runs are dark along at most
    half of the run next to them."""
    (top, a0, b0), (bottom, a1, b1) = stack[0], stack[-1]
    above = dark.count(0, (top - 1) * width + a0, (top - 1) * width + b0) if top > 0 else 0
    below = dark.count(0, (bottom + 1) * width + a1, (bottom + 1) * width + b1) if bottom + 1 < height else 0
    return above <= (b0 - a0) // 2 and below <= (b1 - a1) // 2


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
    image, rules = without_rules(page.render(scale=scale).to_pil(), scale)
    data = pytesseract.image_to_data(
        image, lang=lang, output_type=pytesseract.Output.DICT, timeout=max(int(timeout_s), 1)
    )
    return page_from_tesseract(data, number, width, height, scale, rules)


def page_from_tesseract(
    data: dict[str, list[Any]], number: int, width: float, height: float, scale: float, rules: Sequence[Rule] = ()
) -> Page:
    """Tesseract's image_to_data (pixels, confidence 0-100; -1 marks a block, not a word),
    with the page's vertical rules (pixels) that part its cells, as a Page."""
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
    text, placed = lay_out(words, [(x / scale, top / scale, bottom / scale) for x, top, bottom in rules])
    return Page(number=number, text=text, width=width, height=height, words=placed, ocr=True)
