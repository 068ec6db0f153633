"""PDFs made for the tests (nothing binary is committed): fpdf2 lays out the pages,
pypdfium2 renders a page to make a scan of it."""

from __future__ import annotations

import io
from collections.abc import Callable

from fpdf import FPDF

# Two columns on every line: a label on the left, its value far to the right, and on
# the first page a second block (the buyer) beside the seller's address.
SELLER = ["Globex Ltd", "12 Harbour Road", "Leeds LS1 4AB"]
BUYER = ["Bill to: Initech GmbH", "Hauptstrasse 5", "10115 Berlin"]
LINES = [("Invoice number", "GLX-2026-778"), ("Invoice date", "28.02.2026"), ("Currency", "GBP")]
TOTALS = [("Subtotal", "540.00"), ("VAT 8%", "43.20"), ("Total due", "583.20")]
DATA = {
    "vendor_name": "Globex Ltd",
    "invoice_number": "GLX-2026-778",
    "invoice_date": "2026-02-28",
    "subtotal": 540.00,
    "tax": 43.20,
    "total": 583.20,
    "currency": "GBP",
}


def _doc() -> FPDF:
    pdf = FPDF(unit="pt", format="A4")
    pdf.set_auto_page_break(False)
    pdf.set_font("Helvetica", size=11)
    return pdf


def two_column_invoice(*, pages: int = 2) -> bytes:
    """Page 1: seller and buyer side by side, then label/value rows. The totals stand
    on the last page (page 2 by default), after filler pages."""
    pdf = _doc()
    pdf.add_page()
    for i, (left, right) in enumerate(zip(SELLER, BUYER, strict=True)):
        pdf.text(60, 80 + 14 * i, left)
        pdf.text(340, 80 + 14 * i, right)
    for i, (label, value) in enumerate(LINES):
        pdf.text(60, 200 + 16 * i, label)
        pdf.text(400, 200 + 16 * i, value)
    for n in range(2, pages):
        pdf.add_page()
        pdf.text(60, 80, f"Terms and conditions, part {n - 1}")
    pdf.add_page()
    pdf.text(60, 60, "Summary")
    for i, (label, value) in enumerate(TOTALS):
        pdf.text(60, 100 + 16 * i, label)
        pdf.text(440, 100 + 16 * i, value)
    return bytes(pdf.output())


def ruled_table_scan(dpi: int = 200) -> bytes:
    """A scan (an image-only page) of an invoice whose items and totals stand in a table
    ruled on every side of every cell, as office suites print one."""
    pdf = _doc()
    pdf.add_page()
    pdf.text(60, 60, SELLER[0])
    for i, (label, value) in enumerate(LINES):
        pdf.text(60, 90 + 16 * i, f"{label}: {value}")
    rows = [
        ("Item", "Qty", "Price", "Amount"),
        ("Survey", "2", "150.00", "300.00"),
        ("Report", "1", "240.00", "240.00"),
    ]
    rows += [("", "", label, value) for label, value in TOTALS]
    pdf.set_xy(60, 170)
    for row in rows:
        for text in row:
            pdf.cell(120, 22, text, border=1)
        pdf.ln(22)
        pdf.set_x(60)
    drawn = bytes(pdf.output())
    image = render(drawn, 0, dpi)
    scan = _doc()
    scan.add_page()
    scan.image(image, x=0, y=0, w=scan.w, h=scan.h)
    return bytes(scan.output())


def tight_table(rules: str) -> bytes:
    """A Qty column right-aligned against a Price column, "2" a word space from "150.00",
    with `rules` drawn at their border: "none"; "lines" (a stroked line); "cells" (each
    cell's box); "bars" (a thin filled rectangle); "closed" (a stroked triangle whose
    closing side, drawn by no line operator of its own, is the border); "through" (the
    border drawn through the description's last word, text running over its cell);
    "overflow" (a total wider than its boxed cell, the border in its digit group's space);
    "one_path" (the border and many other lines drawn as one path, as a grid may be)."""
    pdf = _doc()
    pdf.add_page()
    pdf.set_font("Helvetica", size=10)
    rows = [("Item", "Qty", "Price"), ("Survey", "2", "150.00"), ("Report", "1", "240.00")]
    widths = (120, 30, 60)
    for r, row in enumerate(rows):
        x = 60.0
        for text, width in zip(row, widths, strict=True):
            pdf.set_xy(x, 100 + 16 * r)
            pdf.cell(width, 16, text, border=1 if rules == "cells" else 0, align="R" if width == 30 else "L")
            x += width
    border, top, bottom = 210.0, 100.0, 148.0  # between Qty and Price
    if rules == "lines":
        pdf.line(border, top, border, bottom)
    elif rules == "bars":
        pdf.rect(border - 0.4, top, 0.8, bottom - top, style="F")
    elif rules == "through":
        pdf.text(60, 170, "Web Development Services")
        pdf.line(160, 160, 160, 175)  # through "Services"
    elif rules == "overflow":  # a figure wider than its boxed cell, its border in "1 250,00"'s space
        pdf.set_xy(60, 160)
        pdf.cell(120, 16, "Total TTC", border=1)
        pdf.cell(pdf.get_string_width("250,00") + 4, 16, "1 250,00", border=1, align="R")
    drawn = bytes(pdf.output())
    if rules == "closed":
        # a triangle whose closing side is the border
        return _with_path(drawn, [[(border, top), (border + 50, (top + bottom) / 2), (border, bottom)]], close=True)
    if rules == "one_path":
        # the border, and a notes area's forty lines under the table, as one path
        notes = [[(60.0, 200.0 + 8 * i), (300.0, 200.0 + 8 * i)] for i in range(40)]
        return _with_path(drawn, [[(border, top), (border, bottom)], *notes], close=False)
    return drawn


def _with_path(drawn: bytes, subpaths: list[list[tuple[float, float]]], *, close: bool) -> bytes:
    """`drawn` with one stroked path of straight `subpaths` (points from the page's top
    left) added by PDFium, which fpdf2 has no call for."""
    import pypdfium2 as pdfium
    import pypdfium2.raw as pdfium_c

    document = pdfium.PdfDocument(drawn)
    page = document[0]
    height = page.get_height()  # PDF space: y up from the page's foot
    x0, y0 = subpaths[0][0]
    path = pdfium_c.FPDFPageObj_CreateNewPath(x0, height - y0)
    for i, points in enumerate(subpaths):
        if i:
            pdfium_c.FPDFPath_MoveTo(path, points[0][0], height - points[0][1])
        for x, y in points[1:]:
            pdfium_c.FPDFPath_LineTo(path, x, height - y)
        if close:
            pdfium_c.FPDFPath_Close(path)
    pdfium_c.FPDFPath_SetDrawMode(path, pdfium_c.FPDF_FILLMODE_NONE, True)
    pdfium_c.FPDFPage_InsertObject(page, path)
    pdfium_c.FPDFPage_GenerateContent(page)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def overprinted() -> bytes:
    """Fake bold as some generators draw it: each word of the client line drawn twice, a
    third of a point apart. The same word drawn again elsewhere on the page is a word."""
    pdf = _doc()
    pdf.add_page()
    for dx in (0, 0.3):
        pdf.text(60 + dx, 80, "Razón social: Ayala San Vicente")
    pdf.text(60, 110, "Total")
    pdf.text(300, 110, "Total")
    pdf.text(440, 110, "3.155,20")
    return bytes(pdf.output())


def many_pages(count: int) -> bytes:
    pdf = _doc()
    for n in range(count):
        pdf.add_page()
        pdf.text(60, 60, f"Page {n + 1}: Total 5.00")
    return bytes(pdf.output())


def encrypted() -> bytes:
    pdf = _doc()
    pdf.set_encryption(owner_password="owner-secret", user_password="user-secret")
    pdf.add_page()
    pdf.text(60, 60, "Total 583.20")
    return bytes(pdf.output())


def zero_pages() -> bytes:
    import pypdfium2 as pdfium

    out = io.BytesIO()
    document = pdfium.PdfDocument.new()
    document.save(out)
    document.close()
    return out.getvalue()


def render(data: bytes, page: int = 0, dpi: int = 200):  # -> PIL.Image.Image
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(data)
    try:
        return document[page].render(scale=dpi / 72).to_pil().convert("L")
    finally:
        document.close()


def scanned(*, text_page_first: bool = True, spoil: Callable | None = None, dpi: int = 200) -> bytes:
    """A PDF whose page 2 (or 1, without text_page_first) is an image only: a scan of
    the two-column invoice's totals page. `spoil(image, scale)` may mark the image first."""
    source = two_column_invoice(pages=2)
    image = render(source, 1, dpi)
    if spoil is not None:
        image = spoil(image, dpi / 72)
    pdf = _doc()
    if text_page_first:
        pdf.add_page()
        for i, (label, value) in enumerate(LINES):
            pdf.text(60, 200 + 16 * i, label)
            pdf.text(400, 200 + 16 * i, value)
        pdf.text(60, 80, SELLER[0])
    pdf.add_page()
    pdf.image(image, x=0, y=0, w=pdf.w, h=pdf.h)
    return bytes(pdf.output())
