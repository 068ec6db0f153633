"""PDF -> pages of text with word boxes, by pypdfium2 (PDFium), in a child process.

Why a child process: PDFium is not thread-safe ("it is not allowed to call pdfium
functions simultaneously across different threads, not even with different
documents", pypdfium2's docs), a worker may run jobs on threads, and a pathological
PDF can loop or crash the library. `convert_isolated` runs the conversion as
`python -m vetq.core.documents.pdf` in its own process group with a wall-clock limit
(VETQ_PDF_TIMEOUT_S), a CPU limit and an address-space limit, and kills the group
(Tesseract included) when the time is up: the worker never hangs or dies on a PDF.

`convert` is the conversion itself, a pure function of the bytes and the options.
`render` draws the pages as images for a person (the inbox's review page), run the
same way by `render_isolated`.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from vetq.core.documents.layout import RULE_MAX_THICK_POINTS, PlacedWord, Rule, lay_out, strong_direction
from vetq.core.documents.pages import Page, PdfText
from vetq.core.errors import ConfigError, ErrorCode, InvalidInputError, VetqError

__all__ = [
    "ConvertOptions",
    "PageImage",
    "RenderOptions",
    "UnsupportedDocumentError",
    "convert",
    "convert_isolated",
    "render",
    "render_isolated",
]

# A page holding fewer characters than this over an image that covers at least
# SCANNED_IMAGE_SHARE of it is a scan (a fax header line over a scanned page).
SCANNED_MIN_CHARS = 10
SCANNED_IMAGE_SHARE = 0.5
# The child process's limits besides the wall clock: address space, and CPU seconds
# beyond the wall-clock limit (a second net should the parent be unable to kill it).
CHILD_MEMORY_BYTES = 4 * 1024**3
CHILD_CPU_MARGIN_S = 5
# A word breaks where the next glyph starts further than this share of the glyph
# height after the previous one (no space character in between), or moves back.
GLYPH_GAP_SHARE = 0.3
# A drawn vertical rule: a straight stroked segment, or a filled bar, no thicker than
# layout.RULE_MAX_THICK_POINTS and at least this tall (a table row's cell border; shorter
# marks are decoration). OCR asks more of a rule (documents/ocr.py): there a glyph's stem
# looks like one.
RULE_MIN_TALL_PT = 8.0
# A path of more segments with a curve among them is a drawing (a logo, a chart), not a
# table's rules; one of straight lines only is read whole (a grid drawn as one path), up
# to RULE_MAX_PATH_SEGMENTS.
RULE_MAX_SEGMENTS = 64
RULE_MAX_PATH_SEGMENTS = 20_000


class UnsupportedDocumentError(VetqError):
    code = ErrorCode.UNSUPPORTED_DOCUMENT


@dataclass(frozen=True)
class ConvertOptions:
    max_pages: int = 50
    ocr: str = "auto"  # auto: read scanned pages with Tesseract when it is installed; off: never
    ocr_lang: str = "eng"
    timeout_s: float = 60.0


@dataclass(frozen=True)
class RenderOptions:
    # 110 dpi: an A4 page is 909 x 1286 pixels, its 10-point text plainly readable
    # beside the review form, in some 100 kB of grayscale PNG.
    dpi: float = 110.0
    max_pages: int = 50
    # A page larger than this at `dpi` (a poster, a drawing) is drawn smaller to fit it.
    max_pixels: int = 3_000_000
    timeout_s: float = 60.0


@dataclass(frozen=True)
class PageImage:
    number: int  # 1-based
    width: float  # the page as displayed, in points: the space provenance boxes are in
    height: float
    png: bytes


# --------------------------------------------------------------------------- conversion


def _open(data: bytes, max_pages: int) -> Any:
    """The PDF opened by PDFium; InvalidInputError for one that will not open, has no
    pages or too many."""
    import pypdfium2 as pdfium

    try:
        document = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        raise InvalidInputError(_load_problem(str(exc), data)) from None
    count = len(document)
    problem = None
    if count == 0:
        problem = "the PDF has no pages: send a PDF with at least one page"
    elif count > max_pages:
        problem = (
            f"the PDF has {count} pages; the limit is {max_pages} (VETQ_MAX_PDF_PAGES): split it into shorter documents"
        )
    if problem is not None:
        document.close()
        raise InvalidInputError(problem)
    return document


def convert(data: bytes, options: ConvertOptions) -> PdfText:
    """The PDF's pages as text with word boxes. InvalidInputError for an encrypted,
    damaged, empty or too long PDF; UnsupportedDocumentError naming the scanned pages
    when they cannot be read (OCR off or not installed)."""
    document = _open(data, options.max_pages)
    try:
        pages: list[Page] = []
        scanned: list[int] = []
        for index in range(len(document)):
            page = document[index]
            try:
                read = _text_layer_page(page, index + 1)
                if _is_scanned(page, read):
                    scanned.append(index + 1)
                pages.append(read)
            finally:
                page.close()
        if scanned:
            _read_scans(document, pages, scanned, options)
        return PdfText(pages)
    finally:
        document.close()


def render(data: bytes, options: RenderOptions) -> list[PageImage]:
    """The PDF's pages as grayscale PNG images at options.dpi (a page over
    options.max_pixels drawn smaller), each with its displayed size in points.
    InvalidInputError as `convert` for a PDF that will not open or is too long."""
    import io
    import math

    document = _open(data, options.max_pages)
    try:
        images = []
        for index in range(len(document)):
            page = document[index]
            try:
                width, height = page.get_size()  # as displayed: /Rotate applied, as the render is
                scale = options.dpi / 72
                pixels = width * height * scale * scale
                if pixels > options.max_pixels:
                    scale *= math.sqrt(options.max_pixels / pixels)
                out = io.BytesIO()
                page.render(scale=scale, grayscale=True).to_pil().save(out, format="PNG")
                images.append(PageImage(index + 1, float(width), float(height), out.getvalue()))
            finally:
                page.close()
        return images
    finally:
        document.close()


def _load_problem(message: str, data: bytes) -> str:
    """What to tell the sender of a PDF PDFium would not open. PDFium's reason is a
    hint only (a PDF with no pages fails with a stale "password" error): the bytes
    decide between encrypted, empty and damaged."""
    import re

    lowered = message.lower()
    encrypted = re.search(rb"/Encrypt\s*\d+\s+\d+\s+R|/Encrypt\s*<<", data) is not None
    if not encrypted and re.search(rb"/Count\s+0\b", data) and not re.search(rb"/Count\s+[1-9]", data):
        return "the PDF has no pages: send a PDF with at least one page"
    if encrypted or (("password" in lowered or "security" in lowered) and b"/Encrypt" in data):
        return (
            "the PDF is encrypted (it needs a password to open): send it unprotected, "
            "e.g. printed or exported to a new PDF"
        )
    return (
        "the PDF is damaged or not a PDF (PDFium could not open it): send the original file, or print it to a new PDF"
    )


def _display_transform(page: Any) -> Callable[[float, float], tuple[float, float]]:
    """Page space (origin bottom-left, unrotated) -> display space in points (origin
    top-left, the page's /Rotate applied), from PDFium's own page-to-device mapping."""
    import ctypes

    import pypdfium2.raw as pdfium_c

    width, height = page.get_size()
    scale = 100  # device coordinates are integers: map at 1/100 pt
    size_x, size_y = round(width * scale), round(height * scale)

    def device(x: float, y: float) -> tuple[float, float]:
        dx, dy = ctypes.c_int(), ctypes.c_int()
        pdfium_c.FPDF_PageToDevice(page, 0, 0, size_x, size_y, 0, x, y, dx, dy)
        return dx.value / scale, dy.value / scale

    ox, oy = device(0, 0)
    ax, ay = device(100, 0)
    bx, by = device(0, 100)
    xx, xy = (ax - ox) / 100, (ay - oy) / 100
    yx, yy = (bx - ox) / 100, (by - oy) / 100
    return lambda x, y: (ox + x * xx + y * yx, oy + x * xy + y * yy)


def _drawn_rules(page: Any, to_display: Callable[[float, float], tuple[float, float]]) -> list[Rule]:
    """The vertical rules a page draws (a table's column borders, each cell's box), in
    display space: the layout keeps the words either side of one in separate cells,
    as it does for the rules OCR finds ("2 | 150.00" is a quantity and a price)."""
    import ctypes

    import pypdfium2.raw as pdfium_c

    rules: list[Rule] = []
    fill, stroke = ctypes.c_int(), ctypes.c_int()
    x, y = ctypes.c_float(), ctypes.c_float()
    left, bottom, right, top = (ctypes.c_float() for _ in range(4))
    matrix = pdfium_c.FS_MATRIX()
    upright_is_x = page.get_rotation() in (90, 270)  # a quarter-turned page shows its x axis upright
    # PDFium's own calls, not pypdfium2's object wrappers: a page may draw thousands of paths.
    for index in range(pdfium_c.FPDFPage_CountObjects(page)):
        path = pdfium_c.FPDFPage_GetObject(page, index)
        if pdfium_c.FPDFPageObj_GetType(path) != pdfium_c.FPDF_PAGEOBJ_PATH:
            continue
        pdfium_c.FPDFPageObj_GetBounds(path, left, bottom, right, top)
        if (right.value - left.value if upright_is_x else top.value - bottom.value) < RULE_MIN_TALL_PT:
            continue  # nothing in it stands tall enough (a horizontal rule, a mark)
        count = pdfium_c.FPDFPath_CountSegments(path)
        if not 0 < count <= RULE_MAX_PATH_SEGMENTS or not pdfium_c.FPDFPath_GetDrawMode(path, fill, stroke):
            continue
        pdfium_c.FPDFPageObj_GetMatrix(path, matrix)
        points: list[tuple[float, float]] = []
        lines: list[tuple[tuple[float, float], tuple[float, float]]] = []
        for i in range(count):
            segment = pdfium_c.FPDFPath_GetPathSegment(path, i)
            kind = pdfium_c.FPDFPathSegment_GetType(segment)
            if kind == pdfium_c.FPDF_SEGMENT_BEZIERTO and count > RULE_MAX_SEGMENTS:
                break  # a drawing
            pdfium_c.FPDFPathSegment_GetPoint(segment, x, y)
            point = to_display(
                matrix.a * x.value + matrix.c * y.value + matrix.e, matrix.b * x.value + matrix.d * y.value + matrix.f
            )
            # A closing side comes as a segment of its own: PDFium reads "h" as a line
            # back to the subpath's start.
            if points and kind == pdfium_c.FPDF_SEGMENT_LINETO:
                lines.append((points[-1], point))
            points.append(point)
        else:
            if stroke.value:  # each straight segment is a line
                for a, b in lines:
                    rules += _upright(a, b)
            elif fill.value:  # a bar: the whole shape
                xs, ys = [p[0] for p in points], [p[1] for p in points]
                rules += _upright((min(xs), min(ys)), (max(xs), max(ys)))
    return rules


def _upright(a: tuple[float, float], b: tuple[float, float]) -> list[Rule]:
    """The rule from a to b, if it stands upright, thin and tall enough to be one."""
    if abs(a[0] - b[0]) <= RULE_MAX_THICK_POINTS and abs(a[1] - b[1]) >= RULE_MIN_TALL_PT:
        return [((a[0] + b[0]) / 2, min(a[1], b[1]), max(a[1], b[1]))]
    return []


def _text_layer_page(page: Any, number: int) -> Page:
    import pypdfium2.raw as pdfium_c

    width, height = page.get_size()
    to_display = _display_transform(page)
    textpage = page.get_textpage()
    words: list[PlacedWord] = []
    try:
        chars: list[str] = []
        box: list[float] = []  # the current word's x0, y0, x1, y1
        last: tuple[float, float, float, float] | None = None
        strong: str | None = None  # the current word's first strong direction: "R" (Arabic, Hebrew ...) or "L"
        spaced = False  # the next word follows a space character of the text itself

        def flush() -> None:
            nonlocal spaced
            if chars:
                words.append(PlacedWord("".join(chars), box[0], box[1], box[2], box[3], spaced=spaced))
                spaced = False
            chars.clear()

        for i in range(textpage.count_chars()):
            code = pdfium_c.FPDFText_GetUnicode(textpage, i)
            ch = chr(code) if 0 < code < 0x110000 else ""
            if not ch or ch.isspace() or not ch.isprintable():
                flush()
                spaced = ch == " " and bool(words) and not pdfium_c.FPDFText_IsGenerated(textpage, i)
                last = None
                continue
            left, bottom, right, top = textpage.get_charbox(i, loose=True)
            (ax, ay), (bx, by) = to_display(left, bottom), to_display(right, top)
            x0, x1, y0, y1 = min(ax, bx), max(ax, bx), min(ay, by), max(ay, by)
            if x1 <= 0 or y1 <= 0 or x0 >= width or y0 >= height:
                continue  # drawn off the page: not part of what it shows
            if last is not None:
                h = max(y1 - y0, 0.1)
                same_line = abs((y0 + y1) / 2 - (last[1] + last[3]) / 2) <= 0.5 * h
                if strong == "R" and strong_direction(ch) != "L":
                    # a right-to-left word's next letter stands to the left of the last
                    apart = x1 < last[0] - GLYPH_GAP_SHARE * h or x0 > last[2] + 0.5 * h
                else:
                    apart = x0 > last[2] + GLYPH_GAP_SHARE * h or x0 < last[0] - 0.5 * h
                if not same_line or apart:
                    flush()
            if not chars:
                box[:] = [x0, y0, x1, y1]
                strong = None
            else:
                box[:] = [min(box[0], x0), min(box[1], y0), max(box[2], x1), max(box[3], y1)]
            chars.append(ch)
            if strong is None:
                strong = strong_direction(ch)
            last = (x0, y0, x1, y1)
        flush()
    finally:
        textpage.close()
    text, placed = lay_out(words, _drawn_rules(page, to_display))
    return Page(number=number, text=text, width=width, height=height, words=placed)


def _is_scanned(page: Any, read: Page) -> bool:
    glyphs = sum(w.end - w.start for w in read.words)
    if glyphs >= SCANNED_MIN_CHARS:
        return False
    import pypdfium2.raw as pdfium_c

    area = max(read.width * read.height, 1.0)
    covered = 0.0
    for obj in page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_IMAGE], max_depth=4):
        left, bottom, right, top = obj.get_bounds()
        covered = max(covered, max(right - left, 0) * max(top - bottom, 0))
    if glyphs == 0:
        return covered > 0  # an image and no text at all: nothing to read but the image
    return covered >= SCANNED_IMAGE_SHARE * area


def _read_scans(document: Any, pages: list[Page], scanned: list[int], options: ConvertOptions) -> None:
    from vetq.core.documents import ocr

    named = ", ".join(str(n) for n in scanned)
    which = f"page {named} has" if len(scanned) == 1 else f"pages {named} have"
    if options.ocr == "off":
        raise UnsupportedDocumentError(
            f"{which} no text layer (a scanned image) and OCR is off (VETQ_OCR=off): "
            "send the document's text, a PDF with a text layer, or turn OCR on"
        )
    missing = ocr.unavailable(options.ocr_lang)
    if missing is not None:
        raise UnsupportedDocumentError(
            f"{which} no text layer (a scanned image) and this worker cannot read it: {missing}"
        )
    for number in scanned:
        page = document[number - 1]
        try:
            pages[number - 1] = ocr.read_page(page, number, options.ocr_lang, options.timeout_s)
        finally:
            page.close()


# --------------------------------------------------------------------------- isolation


def convert_isolated(data: bytes, options: ConvertOptions) -> PdfText:
    """`convert` in a child process limited to options.timeout_s of wall-clock time:
    past it the child's process group is killed and the PDF refused (INVALID_INPUT).
    A child that crashes (a signal, a memory limit) is refused the same way; the
    worker carries on."""
    reply = _in_child(CONVERT, data, asdict(options), options.timeout_s)
    return PdfText([Page.from_json(page) for page in reply["pages"]])


def render_isolated(data: bytes, options: RenderOptions) -> list[PageImage]:
    """`render` in a child process, limited as `convert_isolated` is: the inbox's
    server never runs PDFium itself (not thread-safe, and a PDF may hang it)."""
    import base64

    reply = _in_child(RENDER, data, asdict(options), options.timeout_s)
    return [
        PageImage(int(page["number"]), float(page["width"]), float(page["height"]), base64.b64decode(page["png"]))
        for page in reply["pages"]
    ]


CONVERT, RENDER = "convert", "render"
# What a child's failure says, by its task: what it was doing, what the PDF could not
# be, and who could not do it.
_DOING = {
    CONVERT: ("converting the PDF", "converted", "the worker cannot convert PDFs"),
    RENDER: ("drawing the PDF's pages", "drawn", "the inbox cannot draw PDF pages"),
}


def _in_child(task: str, data: bytes, options: dict[str, Any], timeout_s: float) -> dict[str, Any]:
    """`python -m vetq.core.documents.pdf TASK OPTIONS` in its own process group, the PDF
    on its stdin, killed with its group after timeout_s: its JSON reply, or the
    VetqError it reported, or INVALID_INPUT for a child that timed out or crashed."""
    command = [sys.executable, "-m", "vetq.core.documents.pdf", task, json.dumps(options)]
    child = subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own process group: Tesseract goes with it
    )
    try:
        out, err = child.communicate(data, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise InvalidInputError(
            f"{_DOING[task][0]} took longer than {timeout_s:g} s (VETQ_PDF_TIMEOUT_S) and was stopped: "
            "it may be damaged or unusually complex; print it to a new PDF, send its text, or raise the limit"
        ) from None
    finally:
        if child.poll() is None:
            _kill_group(child)
    return _reply(task, child.returncode, out, err)


def _kill_group(child: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(child.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        child.kill()
    child.wait()
    for stream in (child.stdin, child.stdout, child.stderr):
        if stream is not None:
            stream.close()


def _reply(task: str, returncode: int, out: bytes, err: bytes) -> dict[str, Any]:
    try:
        reply = json.loads(out) if out else None
    except ValueError:
        reply = None
    if not isinstance(reply, dict):
        if returncode < 0:
            try:
                cause = f"signal {signal.Signals(-returncode).name}"
            except ValueError:
                cause = f"signal {-returncode}"
        else:
            cause = f"exit code {returncode}"
        detail = err.decode("utf-8", "replace").strip().splitlines()[-1:] if err else []
        raise InvalidInputError(
            f"the PDF could not be {_DOING[task][1]} (the child process stopped: {cause}"
            f"{'; ' + detail[0][:200] if detail else ''}): send the original file, or print it to a new PDF"
        )
    if "error" in reply:
        code, message = reply["error"]["code"], str(reply["error"]["message"])
        raise VetqError(message, code=ErrorCode(code))
    return reply


def _limit_child() -> None:
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (CHILD_MEMORY_BYTES, CHILD_MEMORY_BYTES))
    except (ImportError, ValueError, OSError):
        pass


def main(argv: list[str]) -> int:
    """The child's side: its task (convert, render) and options as JSON in argv, the
    PDF on stdin, the reply (or an error) as JSON on stdout."""
    task, raw_options = argv[0], json.loads(argv[1])
    timeout_s = float(raw_options["timeout_s"])
    try:
        import resource

        cpu = int(timeout_s) + CHILD_CPU_MARGIN_S
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    except (ImportError, ValueError, OSError):
        pass
    _limit_child()
    data = sys.stdin.buffer.read()
    try:
        if task == RENDER:
            import base64

            reply: dict[str, Any] = {
                "pages": [
                    {
                        "number": image.number,
                        "width": image.width,
                        "height": image.height,
                        "png": base64.b64encode(image.png).decode("ascii"),
                    }
                    for image in render(data, RenderOptions(**raw_options))
                ]
            }
        else:
            reply = {"pages": [page.to_json() for page in convert(data, ConvertOptions(**raw_options)).pages]}
    except VetqError as exc:
        reply = {"error": {"code": exc.code.value, "message": exc.message}}
    except ImportError as exc:
        reply = {"error": {"code": ConfigError.code.value, "message": f"{_DOING[task][2]}: {exc}"}}
    except MemoryError:
        reply = {
            "error": {
                "code": ErrorCode.INVALID_INPUT.value,
                "message": f"the PDF needs more memory to be {_DOING[task][1]} than a child process may take: "
                "print it to a new PDF",
            }
        }
    sys.stdout.write(json.dumps(reply, ensure_ascii=False))
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
