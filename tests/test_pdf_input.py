"""PDF input (issue 14): conversion that keeps columns, page-aware provenance with word
boxes, scanned pages (UNSUPPORTED_DOCUMENT, or OCR), bad PDFs, and every face that
takes a PDF (the client, the CLI, a batch line, MCP). The PDFs are made here
(tests/pdfs.py); nothing binary is committed for them."""

from __future__ import annotations

import base64
import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests import pdfs
from tests.conftest import Service, critic_answer, serving_fake_provider, starts_processes
from vetq.core.documents.input import decode_pdf, encode_pdf
from vetq.core.documents.layout import PlacedWord, lay_out
from vetq.core.documents.ocr import page_from_tesseract, without_rules
from vetq.core.documents.pages import Page, PdfText, Word
from vetq.core.documents.pdf import ConvertOptions, UnsupportedDocumentError, convert
from vetq.core.documents.provenance import locate, penalise_ocr_doubts
from vetq.core.errors import InvalidInputError
from vetq.core.extraction.field_checks import OCR_LOW_CONFIDENCE_FACTOR, FieldCheck
from vetq.core.extraction.pipeline import ExtractionPipeline
from vetq.core.extraction.schema import ExtractionRequest, Span, ValidationRequest
from vetq.core.settings import load_settings

needs_tesseract = pytest.mark.skipif(
    shutil.which("tesseract") is None,
    reason="the tesseract binary is not installed (`make test` installs it: apt-get install tesseract-ocr); "
    "OCR tests skipped",
)


def line_of(text: str, needle: str) -> str:
    lines = [line for line in text.splitlines() if needle in line]
    assert lines, f"{needle!r} not in {text!r}"
    return lines[0]


def heuristics_pipeline(**settings) -> ExtractionPipeline:
    def refuse(spec):
        raise AssertionError(f"no model client may be built here, was asked for {spec}")

    return ExtractionPipeline(load_settings(**settings), client_factory=refuse)


# --------------------------------------------------------------------- conversion (in process)


def test_right_to_left_words_are_read_from_the_right():
    # three Arabic words laid out from the right ("بيز إسبانيا ش.م.", a supplier's name),
    # then a Latin word: each word keeps its own box
    words = [
        PlacedWord("ش.م.", 10, 0, 28, 10),
        PlacedWord("إسبانيا", 31, 0, 60, 10),
        PlacedWord("بيز", 63, 0, 78, 10),
        PlacedWord("Supplier", 81, 0, 120, 10),
    ]
    text, placed = lay_out(words)
    assert text == "بيز إسبانيا ش.م. Supplier"
    assert [(text[w.start : w.end], w.box[0]) for w in placed] == [
        ("بيز", 63),
        ("إسبانيا", 31),
        ("ش.م.", 10),
        ("Supplier", 81),
    ]


HELDOUT_PDFS = Path(__file__).resolve().parent.parent / "eval" / "golden" / "real_heldout" / "pdf"


def test_an_arabic_text_layer_reads_in_its_order():
    # GOBL's Arabic rendering of its example invoice (Apache-2.0; the held-out set keeps it):
    # its glyphs run right to left, each word's letters in the text layer's order
    document = convert((HELDOUT_PDFS / "hinv-goblhtml-full-invoice-ar.pdf").read_bytes(), ConvertOptions(ocr="off"))
    assert "بيز إسبانيا ش.م." in document.text  # the supplier, as the invoice's data names it
    assert "عميل إسبانيا ش.م." in document.text  # the customer
    assert "Supplier" in document.text and "2022-02-01" in document.text


def test_a_word_drawn_over_itself_reads_once():
    # fake bold: the words overprinted a hair apart read once, not "Razón Razón social: social:"
    text = convert(pdfs.overprinted(), ConvertOptions(ocr="off")).text
    assert line_of(text, "Razón").split() == ["Razón", "social:", "Ayala", "San", "Vicente"]
    # the same word drawn again elsewhere on the line stays
    assert line_of(text, "3.155,20").split() == ["Total", "Total", "3.155,20"]
    # CTAN's factura class draws its client block so (the held-out set keeps the print)
    factura = convert((HELDOUT_PDFS / "hinv-factura-factura06.pdf").read_bytes(), ConvertOptions(ocr="off")).text
    assert "Razón social: Ayala San Vicente Usureros." in factura


def test_conversion_keeps_columns_on_one_line_in_reading_order():
    document = convert(pdfs.two_column_invoice(pages=3), ConvertOptions())
    assert [page.number for page in document.pages] == [1, 2, 3]
    assert document.text.split("\f") == [page.text for page in document.pages]
    first, last = document.pages[0].text, document.pages[-1].text
    # Seller and buyer side by side stay side by side, left before right, each line whole.
    for left, right in zip(pdfs.SELLER, pdfs.BUYER, strict=True):
        line = line_of(first, left)
        assert right in line and line.index(left) < line.index(right), line
    for label, value in [*pdfs.LINES]:
        line = line_of(first, label)
        assert line.rstrip().endswith(value), line
    for label, value in pdfs.TOTALS:
        assert line_of(last, label).rstrip().endswith(value)
    # The columns stay aligned: every amount on the summary page starts at one column.
    columns = {line_of(last, label).index(value) for label, value in pdfs.TOTALS}
    assert len(columns) == 1, columns
    assert "Terms and conditions, part 1" in document.pages[1].text


def test_a_span_maps_back_to_its_page_and_a_box_around_its_word():
    import pypdfium2 as pdfium

    data = pdfs.two_column_invoice(pages=2)
    document = convert(data, ConvertOptions())
    text = document.text
    start = text.index("583.20")
    [span] = locate([Span(start=start, end=start + 6, text="583.20")], document)
    page = document.pages[1]
    assert span.page == 2
    assert page.text[span.page_start : span.page_end] == "583.20"
    assert span.page_start == start - len(document.pages[0].text) - 1
    assert span.boxes is not None and len(span.boxes) == 1
    x0, y0, x1, y1 = span.boxes[0]
    # fpdf2 set the amount at x=440 pt on a baseline 132 pt from the top of page 2.
    assert x0 == pytest.approx(440, abs=1.5) and y0 < 132 < y1 + 1
    # And PDFium, asked for the text inside the box (its origin is bottom-left), reads the word.
    pdf = pdfium.PdfDocument(data)
    try:
        height = pdf[1].get_height()
        textpage = pdf[1].get_textpage()
        assert textpage.get_text_bounded(x0, height - y1, x1, height - y0).strip() == "583.20"
    finally:
        pdf.close()
    # A span across two words gets both boxes; a span on page 1 says page 1.
    first = text.index("Globex Ltd")
    [seller] = locate([Span(start=first, end=first + 10, text="Globex Ltd")], document)
    assert seller.page == 1 and len(seller.boxes or []) == 2


def test_text_spans_carry_no_page_fields_in_json():
    assert Span(start=0, end=3, text="abc").model_dump(mode="json") == {"start": 0, "end": 3, "text": "abc"}


@pytest.mark.parametrize(
    "make, needle",
    [
        (pdfs.encrypted, "encrypted"),
        (lambda: pdfs.two_column_invoice()[:900], "damaged"),
        (lambda: b"%PDF-1.7\n" + bytes(random.Random(3).randrange(256) for _ in range(2000)), "damaged"),
        (pdfs.zero_pages, "no pages"),
        (lambda: pdfs.many_pages(4), "VETQ_MAX_PDF_PAGES"),
    ],
    ids=["encrypted", "truncated", "corrupt", "zero-pages", "too-many-pages"],
)
def test_bad_pdfs_are_invalid_input_saying_what_to_do(make, needle):
    with pytest.raises(InvalidInputError) as raised:
        convert(make(), ConvertOptions(max_pages=3))
    assert needle in raised.value.message
    assert any(advice in raised.value.message for advice in ("send", "split"))


def test_a_scanned_page_is_unsupported_naming_the_page_when_ocr_is_off():
    with pytest.raises(UnsupportedDocumentError) as raised:
        convert(pdfs.scanned(), ConvertOptions(ocr="off"))
    assert raised.value.code.value == "UNSUPPORTED_DOCUMENT"
    assert "page 2 " in raised.value.message and "VETQ_OCR=off" in raised.value.message


# --------------------------------------------------------------------- requests and the producer's check


def test_a_request_takes_text_or_pdf_exactly_once():
    pdf = pdfs.two_column_invoice()
    assert ExtractionRequest(pdf=pdf).pdf == encode_pdf(pdf)  # bytes are encoded for the wire
    assert ValidationRequest(pdf=encode_pdf(pdf), data={}).text is None
    for bad in ({}, {"text": "Total 5.00", "pdf": encode_pdf(pdf)}):
        with pytest.raises(ValueError, match=r"exactly one|not both"):
            ExtractionRequest(**bad)


def test_the_producers_pdf_check_size_magic_and_no_paths():
    pdf = pdfs.two_column_invoice()
    assert decode_pdf(encode_pdf(pdf), 10**6) == pdf
    wrapped = base64.encodebytes(pdf).decode()  # base64 broken into lines is still base64
    assert decode_pdf(wrapped, 10**6) == pdf
    with pytest.raises(InvalidInputError, match="VETQ_MAX_PDF_BYTES"):
        decode_pdf(encode_pdf(pdf), len(pdf) - 1)
    for not_a_pdf in ("/srv/invoices/invoice.pdf", encode_pdf(b"PK\x03\x04 a zip"), "", "not base64 at all!"):
        with pytest.raises(InvalidInputError, match="base64"):
            decode_pdf(not_a_pdf, 10**6)


def test_a_batch_line_may_carry_a_pdf_in_base64():
    from vetq.api_client.batch import MAX_LINE_CHARS, line_limit, parse_batch_line

    encoded = encode_pdf(pdfs.two_column_invoice())
    _, good = parse_batch_line(json.dumps({"pdf": encoded, "data": pdfs.DATA}), kind="validate", number=1)
    assert good["pdf"] == encoded and good["kind"] == "validate"
    _, both = parse_batch_line(json.dumps({"pdf": encoded, "text": "x"}), kind="extract", number=2)
    assert both["status"] == "error" and "not both" in both["error"]["message"]
    _, wrong = parse_batch_line(json.dumps({"pdf": 17}), kind="extract", number=3)
    assert wrong["status"] == "error" and "base64" in wrong["error"]["message"]
    # A line long enough for the largest PDF accepted, in base64.
    assert line_limit(10 * 1024 * 1024) > 10 * 1024 * 1024 * 4 // 3 > MAX_LINE_CHARS


def test_ocr_doubt_lowers_a_value_read_only_from_low_confidence_words():
    text_page = Page(1, "Total 583.20", 600, 800, [Word(0, 5, (10, 10, 40, 20)), Word(6, 12, (50, 10, 90, 20))])
    scan = Page(
        2, "Subtotal 540.00", 600, 800, [Word(0, 8, (10, 10, 60, 20), 0.93), Word(9, 15, (70, 10, 110, 20), 0.41)]
    )
    scan.ocr = True
    document = PdfText([text_page, scan])
    offset = len(text_page.text) + 1
    doubtful = FieldCheck("subtotal", spans=[Span(start=offset + 9, end=offset + 15, text="540.00")])
    clean = FieldCheck("vendor_name", spans=[Span(start=offset, end=offset + 8, text="Subtotal")])
    backed = FieldCheck(  # read badly on the scan, but also in the text layer: backed
        "total", spans=[Span(start=offset + 9, end=offset + 15, text="540.00"), Span(start=6, end=12, text="583.20")]
    )
    penalise_ocr_doubts({c.field: c for c in (doubtful, clean, backed)}, document, 0.75)
    assert doubtful.factor == pytest.approx(OCR_LOW_CONFIDENCE_FACTOR)
    assert doubtful.reasons == [
        "read by OCR on page 2 with confidence 0.41 (below 0.75, VETQ_OCR_MIN_CONFIDENCE): check it against the page"
    ]
    assert clean.factor == 1.0 and backed.factor == 1.0


def tesseract_words(*words: tuple[str, int, int, int, int]) -> dict[str, list]:
    """Tesseract's image_to_data for these words (text, left, top, width, height in pixels at 300 dpi)."""
    return {
        "text": [w[0] for w in words],
        "left": [w[1] for w in words],
        "top": [w[2] for w in words],
        "width": [w[3] for w in words],
        "height": [w[4] for w in words],
        "conf": [95] * len(words),
    }


def test_an_ocr_header_keeps_its_column_over_a_row_set_well_below_it():
    # ink 25 px tall with 45 px between the header's and the row's: as a text layer's
    # font boxes they are adjacent lines of one table, not two blocks with grids of their own
    data = tesseract_words(
        ("Description", 400, 1000, 230, 25),
        ("of", 640, 1000, 40, 25),
        ("goods", 690, 1000, 110, 25),
        ("Amount", 1600, 1000, 150, 25),
        ("Widget", 400, 1070, 130, 25),
        ("100.00", 1630, 1070, 120, 25),
    )
    page = page_from_tesseract(data, 1, 612, 792, 300 / 72)
    assert page.text == "Description of goods  Amount\nWidget                 100.00"


def test_a_vertical_rule_parts_two_figures_set_close_across_it():
    # "2" and "150.00" a word space apart, with a rule between them that was whitened
    # before OCR: a quantity and a price, not 2,150.00
    data = tesseract_words(("Survey", 100, 500, 120, 25), ("2", 400, 500, 15, 25), ("150.00", 440, 500, 110, 25))
    assert page_from_tesseract(data, 1, 612, 792, 300 / 72).text == "Survey  2 150.00"
    ruled = page_from_tesseract(data, 1, 612, 792, 300 / 72, [(428, 480, 540)])
    assert ruled.text == "Survey  2  150.00"


@pytest.mark.parametrize("rules", ["lines", "cells", "bars", "closed", "one_path"])
def test_a_rule_the_pdf_draws_parts_two_figures_set_close_across_it(rules):
    # The text layer's own rules, as OCR's: a quantity and a price, not 2,150.00,
    # whether the border is a line, each cell's box, a thin bar, a path's closing side or
    # one line of a path of many.
    assert convert(pdfs.tight_table("none"), ConvertOptions(ocr="off")).text.splitlines()[1] == "Survey  2 150.00"
    assert convert(pdfs.tight_table(rules), ConvertOptions(ocr="off")).text.splitlines()[1] == "Survey  2  150.00"


def test_a_rule_through_a_word_parts_nothing():
    # Text running over its cell's border: the border crosses "Services", not a gap.
    text = convert(pdfs.tight_table("through"), ConvertOptions(ocr="off")).text
    assert text.splitlines()[-1] == "Web Development Services"


def test_a_rule_across_a_space_the_text_itself_holds_parts_nothing():
    # "1 250,00" written as one string, wider than its boxed cell: the cell's border
    # falls in the digit group's space, and the figure stays 1 250,00, not 1 and 250,00.
    text = convert(pdfs.tight_table("overflow"), ConvertOptions(ocr="off")).text
    assert text.splitlines()[-1].split("  ")[-1] == "1 250,00"


def test_an_ocr_table_rule_is_no_word_and_parts_its_cells():
    data = tesseract_words(
        ("Net", 100, 500, 60, 25), ("Price", 175, 500, 100, 25), ("|", 300, 495, 4, 35), ("Rate", 330, 500, 80, 25)
    )
    page = page_from_tesseract(data, 1, 612, 792, 300 / 72)
    assert page.text == "Net Price  Rate"
    assert [page.text[w.start : w.end] for w in page.words] == ["Net", "Price", "Rate"]


# --------------------------------------------------------------------- the worker's conversion (a child process)


@pytest.mark.processes
def test_validate_a_pdf_in_process_gives_page_provenance():
    result = heuristics_pipeline().validate(pdf=pdfs.two_column_invoice(pages=2), data=pdfs.DATA, heuristics_only=True)
    assert result.status == "ok", result
    total = result.field_provenance["total"][0]
    assert (total.page, total.text) == (2, "583.20") and total.boxes
    vendor = result.field_provenance["vendor_name"][0]
    assert vendor.page == 1 and vendor.page_start == vendor.start  # page 1 starts the text


@pytest.mark.processes
@pytest.mark.parametrize(
    "make, settings, needle",
    [
        (pdfs.encrypted, {}, "encrypted"),
        (lambda: pdfs.two_column_invoice()[:900], {}, "damaged"),
        (pdfs.zero_pages, {}, "no pages"),
        (lambda: pdfs.many_pages(4), {"max_pdf_pages": 3}, "VETQ_MAX_PDF_PAGES"),
        (lambda: pdfs.many_pages(40), {"max_pdf_bytes": 2048}, "VETQ_MAX_PDF_BYTES"),
    ],
    ids=["encrypted", "truncated", "zero-pages", "too-many-pages", "too-big"],
)
def test_a_bad_pdf_is_an_invalid_input_result_never_a_crash(make, settings, needle):
    result = heuristics_pipeline(**settings).validate(pdf=make(), data={}, heuristics_only=True)
    assert result.status == "error" and result.error.code == "INVALID_INPUT", result
    assert needle in result.error.message


@pytest.mark.processes
def test_a_conversion_past_its_time_limit_is_stopped_without_hanging():
    # Thirty pages convert in well over 0.05 s: a limit not enforced would return them.
    result = heuristics_pipeline(pdf_timeout_s=0.05).validate(
        pdf=pdfs.many_pages(30), data=pdfs.DATA, heuristics_only=True
    )
    assert result.status == "error" and result.error.code == "INVALID_INPUT"
    assert "VETQ_PDF_TIMEOUT_S" in result.error.message
    # The converter this process started was killed, not left behind (other processes'
    # conversions, such as a parallel test worker's, are not this test's).
    leftover = subprocess.run(
        ["pgrep", "-P", str(os.getpid()), "-f", "vetq.core.documents.pdf"], capture_output=True, text=True
    )
    assert leftover.stdout.split() == []


def _speckle(image, scale):
    """Salt-and-pepper noise over the total (583.20 at x 440 pt, baseline 132 pt): read
    right, but by Tesseract's own account with little confidence."""
    from PIL import ImageDraw

    rnd, draw = random.Random(0), ImageDraw.Draw(image)
    x0, y0, x1, y1 = (int(v * scale) for v in (435, 122, 480, 136))
    for _ in range(250):
        draw.point((rnd.randint(x0, x1), rnd.randint(y0, y1)), fill=0 if rnd.random() < 0.5 else 255)
    return image


def test_a_pages_rules_are_whitened_before_ocr_but_not_its_blocks_or_strokes():
    from PIL import Image, ImageDraw

    scale = 300 / 72  # pixels per point
    image = Image.new("L", (1600, 1400), 255)
    draw = ImageDraw.Draw(image)
    draw.rectangle((100, 100, 1500, 102), fill=0)  # a hairline rule
    draw.rectangle((100, 160, 1500, 171), fill=0)  # a rule near 3 pt thick: all of it goes
    draw.rectangle((800, 200, 801, 1000), fill=0)  # a vertical rule
    draw.rectangle((100, 300, 600, 420), fill=30)  # a shaded box: a block
    draw.rectangle((130, 340, 560, 343), fill=255)  # a white line in it (white text's gap)
    draw.rectangle((900, 300, 903, 440), fill=0)  # a light letter's stem 34 pt tall (a 46-pt capital)
    draw.rectangle((1000, 600, 1060, 604), fill=0)  # a dash
    out, vertical = without_rules(image, scale)
    assert vertical == [(800.5, 200, 1001)]  # x, top, bottom in pixels
    assert [out.getpixel((700, y)) for y in (101, 160, 165, 171)] == [255] * 4
    assert out.getpixel((800, 600)) == 255
    assert [out.getpixel((300, y)) for y in (300, 338, 339, 344, 345, 420)] == [30] * 6
    assert out.getpixel((901, 400)) == 0 and out.getpixel((1030, 602)) == 0


@pytest.mark.processes
@needs_tesseract
def test_ocr_reads_a_table_ruled_on_every_side_of_every_cell():
    # Tesseract alone takes the ruled grid for a picture and reads none of its cells
    result = heuristics_pipeline(ocr="auto").validate(pdf=pdfs.ruled_table_scan(), data=pdfs.DATA, heuristics_only=True)
    assert result.status == "ok", result
    assert [(s.page, s.text) for s in result.field_provenance["total"]] == [(1, "583.20")]
    assert [s.text for s in result.field_provenance["tax"]] == ["43.20"]


@pytest.mark.processes
@needs_tesseract
def test_ocr_reads_a_scanned_page_and_doubts_the_low_confidence_value():
    pipeline = heuristics_pipeline(ocr="auto")
    clean = pipeline.validate(pdf=pdfs.scanned(), data=pdfs.DATA, heuristics_only=True)
    assert clean.status == "ok", clean
    assert "page 2 read by OCR (no text layer)" in clean.notes
    total = clean.field_provenance["total"][0]
    assert (total.page, total.text) == (2, "583.20") and total.boxes
    x0, y0, _x1, y1 = total.boxes[0]
    assert x0 == pytest.approx(440, abs=4) and y0 < 132 < y1 + 2  # the scan's pixels back in points

    spoiled = pipeline.validate(pdf=pdfs.scanned(spoil=_speckle), data=pdfs.DATA, heuristics_only=True)
    assert spoiled.status == "needs_review", spoiled
    assert [f.field for f in spoiled.flagged_fields] == ["total"]
    reasons = spoiled.heuristic_notes["total"]
    assert any(r.startswith("read by OCR on page 2 with confidence 0.") for r in reasons), reasons
    assert spoiled.field_confidence["total"] < clean.field_confidence["total"]
    assert spoiled.field_confidence["subtotal"] == clean.field_confidence["subtotal"]


@pytest.mark.processes
def test_without_tesseract_a_scan_is_unsupported_and_says_how_to_read_it(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")  # the converter, a child, inherits it: no tesseract to be found
    result = heuristics_pipeline(ocr="auto").validate(pdf=pdfs.scanned(), data=pdfs.DATA, heuristics_only=True)
    assert result.status == "error" and result.error.code == "UNSUPPORTED_DOCUMENT"
    assert "page 2 " in result.error.message and "tesseract" in result.error.message


# --------------------------------------------------------------------- through the queue and the faces


def test_a_validate_job_with_a_pdf_over_the_real_queue_returns_page_provenance(service):
    job = service.client.submit_validation(pdf=pdfs.two_column_invoice(pages=3), data=pdfs.DATA, heuristics_only=True)
    result = job.result(timeout=60)
    assert result["status"] == "ok", result
    total = result["field_provenance"]["total"][0]
    assert total["page"] == 3 and total["text"] == "583.20"
    assert len(total["boxes"]) == 1 and len(total["boxes"][0]) == 4
    number = result["field_provenance"]["invoice_number"][0]
    assert number["page"] == 1 and number["page_end"] - number["page_start"] == len("GLX-2026-778")


@pytest.fixture
@starts_processes
def service_without_ocr(redis_url, queue_settings):
    svc = Service(queue_settings.model_copy(update={"ocr": "off"}), redis_url)
    yield svc
    svc.close()


def test_a_scanned_page_over_the_queue_is_unsupported_document(service_without_ocr, tmp_path):
    path = tmp_path / "scan.pdf"
    path.write_bytes(pdfs.scanned())
    result = service_without_ocr.client.submit_extraction(pdf=path).result(timeout=60)
    assert result["status"] == "error" and result["error"]["code"] == "UNSUPPORTED_DOCUMENT"
    assert "page 2 " in result["error"]["message"]


def test_a_pdf_over_the_limit_is_refused_at_the_producer_before_any_job_is_sent(service, tmp_path):
    import redis

    small = service.client.settings.model_copy(update={"max_pdf_bytes": 2048})
    service.client.settings = small
    connection = redis.Redis.from_url(service.client.redis_url)
    before = set(connection.keys("*"))
    big = pdfs.many_pages(40)
    path = tmp_path / "big.pdf"
    path.write_bytes(big)
    for pdf in (big, path, str(path)):
        with pytest.raises(InvalidInputError, match="VETQ_MAX_PDF_BYTES"):
            service.client.submit_extraction(pdf=pdf)
    with pytest.raises(InvalidInputError, match="VETQ_MAX_PDF_BYTES"):
        service.client.submit({"kind": "extract", "pdf": encode_pdf(big)})
    batch = service.client.submit_batch([{"pdf": encode_pdf(big)}])
    assert batch.results(timeout=5)[0]["error"]["code"] == "INVALID_INPUT"
    added = set(connection.keys("*")) - before
    # No job recorded, no message queued: only the batch's own record, naming the refusal.
    assert [key for key in added if not key.startswith(b"vetq:batch:")] == []
    assert service.client.batch_status(batch.id)["failed"] == 1


def vetq(*args, input=None, env=None, timeout=120):
    return subprocess.run(
        [sys.executable, "-m", "vetq.api_client.cli", *args],
        input=input,
        capture_output=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )


def test_cli_file_takes_a_pdf_by_its_magic_and_a_batch_line_by_base64(service, redis_url, tmp_path):
    env = {"VETQ_REDIS_URL": redis_url, "VETQ_HOME": str(tmp_path)}
    pdf = pdfs.two_column_invoice(pages=2)
    named_oddly = tmp_path / "invoice.bin"  # no .pdf suffix: the %PDF- magic decides
    named_oddly.write_bytes(pdf)
    done = vetq("validate", "--heuristics-only", "--file", str(named_oddly), "--data", json.dumps(pdfs.DATA), env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout)
    assert result["field_provenance"]["total"][0]["page"] == 2
    piped = vetq("validate", "--heuristics-only", "--data", json.dumps(pdfs.DATA), input=pdf, env=env)
    assert piped.returncode == 0 and json.loads(piped.stdout)["status"] == "ok"
    lines = [
        json.dumps({"id": "pdf", "pdf": encode_pdf(pdf), "data": pdfs.DATA}),
        json.dumps({"id": "scan", "pdf": encode_pdf(b"%PDF-1.4 nothing"), "data": pdfs.DATA}),
    ]
    batch = vetq("validate", "--batch", "--heuristics-only", input="\n".join(lines).encode(), env=env)
    out = [json.loads(line) for line in batch.stdout.splitlines()]
    assert [o["id"] for o in out] == ["pdf", "scan"]
    assert out[0]["status"] == "ok" and out[0]["field_provenance"]["total"][0]["page"] == 2
    assert out[1]["error"]["code"] == "INVALID_INPUT" and "damaged" in out[1]["error"]["message"]
    assert batch.returncode == 2


def test_cli_exits_2_for_an_unsupported_document(service_without_ocr, redis_url, tmp_path):
    env = {"VETQ_REDIS_URL": redis_url, "VETQ_HOME": str(tmp_path)}
    path = tmp_path / "scan.pdf"
    path.write_bytes(pdfs.scanned())
    done = vetq("extract", "--heuristics-only", "--file", str(path), env=env)
    assert done.returncode == 2, done.stdout + done.stderr
    assert json.loads(done.stdout)["error"]["code"] == "UNSUPPORTED_DOCUMENT"


# --------------------------------------------------------------------- MCP


def _answer(path, body):
    return critic_answer() if body.get("model") == "fake-critic" else json.dumps(pdfs.DATA)


@pytest.fixture
@starts_processes
def mcp_server(monkeypatch, tmp_path):
    from tests.test_mcp import McpServer, _server_env

    with serving_fake_provider(monkeypatch, _answer):
        env = _server_env(
            tmp_path,
            {
                "OPENAI_BASE_URL": os.environ["OPENAI_BASE_URL"],
                "OPENAI_API_KEY": os.environ["OPENAI_API_KEY"],
                "VETQ_GENERATOR": "openai:fake-generator",
                "VETQ_CRITIC": "openai:fake-critic",
            },
        )
        server = McpServer(env, tmp_path / "stderr.log").start()
        yield server
        server.stop()


def test_mcp_extract_takes_a_pdf_in_base64_and_refuses_a_path(mcp_server, tmp_path):
    from tests.test_mcp import payload

    pdf = pdfs.two_column_invoice(pages=2)
    tools = mcp_server.list_tools()
    assert "base64" in tools["extract"].input_schema["properties"]["pdf"]["description"]
    result = payload(mcp_server.call("extract", {"pdf": encode_pdf(pdf)}))
    assert result["status"] == "ok", result
    assert result["data"]["total"] == 583.2
    assert result["field_provenance"]["total"][0]["page"] == 2
    path = tmp_path / "invoice.pdf"
    path.write_bytes(pdf)
    refused = payload(mcp_server.call("extract", {"pdf": str(path)}))
    assert refused["status"] == "error" and refused["error"]["code"] == "INVALID_INPUT"
    assert "not a path" in refused["error"]["message"]
    both = payload(mcp_server.call("validate", {"pdf": encode_pdf(pdf), "text": "x", "data": pdfs.DATA}))
    assert both["error"]["code"] == "INVALID_INPUT" and "not both" in both["error"]["message"]


@pytest.mark.processes
def test_producers_load_no_pdf_library():
    from tests.test_layering import modules_after

    loaded = modules_after(
        "import vetq.api_client.cli, vetq.api_client.batch, vetq.api_client.mcp_server; "
        "from vetq.api_client import Client; from vetq.core.extraction.document import check_input"
    )
    assert "vetq.core.documents.input" in loaded  # the statement really imported the check
    assert not {m for m in loaded if m.split(".")[0] in ("pypdfium2", "pytesseract", "PIL")}
    assert "vetq.core.documents.pdf" not in loaded


# --------------------------------------------------------------------- real PDFs (tests/fixtures/pdf/README.md)

FIXTURES = Path(__file__).parent / "fixtures" / "pdf"


def test_a_real_invoice_keeps_its_totals_table_in_rows_and_columns():
    page = convert((FIXTURES / "alphabet-2015738820.pdf").read_bytes(), ConvertOptions()).pages[0]
    header = line_of(page.text, "Brutto EUR")
    row = line_of(page.text, "71,51")
    assert row.index("376,37") < row.index("71,51") < row.index("447,88")
    # Each figure stands under its own column header (the heuristics read headers so).
    for title, figure in (("Netto EUR", "376,37"), ("MwSt. EUR", "71,51"), ("Brutto EUR", "447,88")):
        left, right = header.index(title), header.index(title) + len(title)
        assert left <= row.index(figure) < right, (title, header, row)
    assert line_of(page.text, "Summe gesamt").rstrip().endswith("447,88")
    assert line_of(page.text, "Rechnungsnummer:").rstrip().endswith("2015738820")


@pytest.mark.processes
def test_real_invoices_verified_from_their_pdfs():
    pipeline = heuristics_pipeline()
    alphabet = {
        "vendor_name": "Alphabet Fuhrparkmanagement GmbH",
        "invoice_number": "2015738820",
        "invoice_date": "2024-11-01",
        "subtotal": 376.37,
        "tax": 71.51,
        "total": 447.88,
        "currency": "EUR",
    }
    good = pipeline.validate(
        pdf=(FIXTURES / "alphabet-2015738820.pdf").read_bytes(), data=alphabet, heuristics_only=True
    )
    assert good.status == "ok", good
    assert all(span.page == 1 and span.boxes for spans in good.field_provenance.values() for span in spans)
    # The Swiss sample's printed figures do not add up: the arithmetic flags them.
    swiss = {"invoice_number": "2021007834", "subtotal": 1500.50, "tax": 155.55, "total": 1756.05, "currency": "CHF"}
    bad = pipeline.validate(
        pdf=(FIXTURES / "swissqrbill-invoice-01.pdf").read_bytes(), data=swiss, heuristics_only=True
    )
    assert bad.status == "needs_review"
    assert any("arithmetic" in reason for reason in bad.heuristic_notes["total"])
    assert bad.field_provenance["total"][0].page == 1
