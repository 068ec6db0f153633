"""The real documents written differently (eval/layout_variants.py): a neutral variation
adds no false alarm on either real set, and the measure sees what a variation costs."""

from __future__ import annotations

import json
import shutil

import pytest

from vetq.eval import layout_variants as lv
from vetq.eval.real_eval import REAL_SETS, load_documents

DOCUMENTS = [doc for path in REAL_SETS.values() for doc in load_documents(path)]


def test_a_neutral_variation_adds_no_false_alarm_on_the_real_documents():
    results = lv.measure(DOCUMENTS, [v for v in lv.VARIANTS if v.neutral])
    assert {r.variant.name: r.added for r in results if r.added} == {}
    assert all(r.documents == len(DOCUMENTS) for r in results)


def test_the_measure_sees_what_a_variation_takes_away():
    def no_total_lines(text: str) -> str:
        return "\n".join(line for line in text.split("\n") if "total" not in line.casefold())

    without = lv.Variant("no_total_lines", no_total_lines, False, "the lines naming a total left out")
    documents = [doc for doc in DOCUMENTS if doc["truth"].get("total") is not None and "Total" in doc["text"]][:20]
    [result] = lv.measure(documents, [without])
    assert result.added, "taking the totals' lines away must cost flags"
    assert any("total" in fields for fields in result.added.values())


def test_the_command_reports_each_variation(capsys):
    assert lv.main(["--set", "tuned", "--variant", "crlf", "--variant", "twice", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [(r["variant"], r["neutral"], r["documents"]) for r in report] == [
        ("crlf", True, len(load_documents(REAL_SETS["tuned"]))),
        ("twice", False, len(load_documents(REAL_SETS["tuned"]))),
    ]


WITH_PDFS = [
    doc for name, path in REAL_SETS.items() for doc in lv.with_pdfs(load_documents(path), path) if doc.get("pdf")
]
needs_converters = pytest.mark.skipif(
    shutil.which("pdftotext") is None or shutil.which("tesseract") is None,
    reason="pdftotext or tesseract is not installed (`make test` installs both: apt-get install "
    "poppler-utils tesseract-ocr)",
)


@needs_converters
@pytest.mark.processes
def test_each_converter_reads_the_kept_pdfs_and_counts_only_those():
    documents = [*WITH_PDFS[:2], next(doc for doc in DOCUMENTS if doc["format"] != "pdf")]
    results = lv.measure(documents, lv.CONVERTERS)
    assert [(r.variant.name, r.documents, r.unread) for r in results] == [
        ("pdftotext", 2, {}),
        ("tesseract", 2, {}),
        ("pdfplumber", 2, {}),
        ("pypdf", 2, {}),
    ]


def test_the_slow_converter_runs_only_when_named(monkeypatch):
    ran = []
    monkeypatch.setattr(lv, "measure", lambda documents, variants: ran.extend(v.name for v in variants) or [])
    assert lv.main(["--set", "tuned"]) == 0
    assert "tesseract" not in ran and {"pdftotext", "pdfplumber", "pypdf", "crlf"} <= set(ran)


def test_a_value_the_converter_lost_is_counted_apart_from_false_alarms(tmp_path):
    doc = next(d for d in WITH_PDFS if d["truth"].get("invoice_number") and d["truth"].get("total"))
    number = doc["truth"]["invoice_number"]
    assert number in doc["text"]
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"%PDF-1.4 not really")

    def read(pdf, language):
        if pdf == broken:
            raise ValueError("cannot parse")
        # the number lost, and a rival total added: the total's value is still there
        return doc["text"].replace(number, "") + "\nTotal due  98765.43\n"

    converter = lv.Converter("lossy", read, "drops the number", lambda: None)
    [result] = lv.measure([doc, {**doc, "id": "broken", "pdf": str(broken)}], [converter])
    assert result.documents == 1
    assert result.unread == {"broken": "ValueError: cannot parse"}
    assert "invoice_number" in result.lost[doc["id"]]
    assert "invoice_number" not in result.added[doc["id"]]
    assert "total" in result.added[doc["id"]] and "total" not in result.lost[doc["id"]]


def test_a_converter_that_is_not_here_is_named_with_what_to_install(monkeypatch, capsys):
    absent = lv.Converter(
        "absent", lambda pdf, language: "", "nothing", lambda: "the absent tool (apt-get install absent)"
    )
    monkeypatch.setitem(lv.BY_NAME, "absent", absent)
    assert lv.main(["--set", "tuned", "--variant", "absent"]) == 2
    assert "absent cannot run here: install the absent tool (apt-get install absent)" in capsys.readouterr().err
