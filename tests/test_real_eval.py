"""The real-document golden set (eval/golden/real/) and its harness (eval/real_eval.py):
the files agree with what build.py derives, every document names its source, licence and
commit, every record fits its schema and every value in it is in the text, the
corruptions are deterministic and really corrupt, and the eval runs through the queue."""

from __future__ import annotations

import importlib
import json
import random
import re
from datetime import date
from decimal import Decimal

import pytest

from tests.conftest import starts_processes
from vetq.core.schemas import builtin
from vetq.eval import extraction_eval as ev
from vetq.eval import real_eval as re_
from vetq.eval.real_eval import Corruption

build = importlib.import_module("vetq.eval.golden.real.build")

LABELS = build.load_labels()
DOCUMENTS = re_.load_documents()
BY_ID = {doc["id"]: doc for doc in DOCUMENTS}
LICENCE_FILES = {
    "Apache-2.0": "Apache-2.0.txt",
    "MIT": "MIT-SwissQRBill.txt",
    "EUPL-1.2": "EUPL-1.2.txt",
    "CC-BY-4.0": "CC-BY-4.0-softmatic.md",
}


# --- the files agree ---------------------------------------------------------------------------
def test_documents_jsonl_is_what_the_build_derives():
    assert build.DOCUMENTS.read_text(encoding="utf-8") == build.documents_jsonl(LABELS), (
        "eval/golden/real/documents.jsonl is stale: run `python eval/golden/real/build.py`"
    )
    assert [doc["id"] for doc in DOCUMENTS] == [label["id"] for label in LABELS]


def test_every_document_has_its_text_and_no_file_is_stray():
    ids = {label["id"] for label in LABELS}
    assert len(ids) == len(LABELS), "an id repeats"
    assert {p.stem for p in build.TEXTS.glob("*.txt")} == ids
    assert {p.stem for p in build.PDFS.glob("*.pdf")} <= ids
    for doc in DOCUMENTS:
        assert doc["text"] == build.read_text(doc["id"]) and doc["text"].strip()
        assert doc["converter"] == build.CONVERTER


def test_pdfs_are_kept_small_and_only_for_pdf_sources():
    kept = list(build.PDFS.glob("*.pdf"))
    assert all(p.stat().st_size <= build.PDF_LIMIT for p in kept)
    assert sum(p.stat().st_size for p in kept) <= build.PDF_TOTAL_LIMIT
    for doc in DOCUMENTS:
        if doc["pdf_file"] is not None:
            assert doc["format"] in ("pdf", "cii-attached-pdf")
            assert (build.HERE / doc["pdf_file"]).read_bytes()[:5] == b"%PDF-"
        if doc["format"] == "textract-json":
            assert doc["pdf_file"] is None  # no images: the OCR's text only


def test_the_readme_lists_every_document():
    readme = build.README.read_text(encoding="utf-8")
    assert readme == build.readme_with_table(readme, LABELS), "the README's table is stale: run build.py"
    for label in LABELS:
        assert f"| `{label['id']}` |" in readme


# --- sources and licences -------------------------------------------------------------------
def test_every_document_names_its_source_licence_and_commit():
    for doc in DOCUMENTS:
        source = doc["source"]
        assert re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+", source["repo"]), doc["id"]
        assert re.fullmatch(r"[0-9a-f]{40}", source["commit"]), doc["id"]
        assert source["path"] and source["url"].startswith(
            f"https://github.com/{source['repo']}/blob/{source['commit']}/"
        )
        assert source["licence"] in LICENCE_FILES, doc["id"]
        assert (build.HERE / "LICENSES" / LICENCE_FILES[source["licence"]]).is_file()
        assert doc["format"] in build.FORMATS
    # one commit per repository: the set is pinned
    commits: dict[str, set[str]] = {}
    for doc in DOCUMENTS:
        commits.setdefault(doc["source"]["repo"], set()).add(doc["source"]["commit"])
    assert all(len(c) == 1 for c in commits.values())


def test_the_licences_travel_with_their_notices():
    licences = build.HERE / "LICENSES"
    assert "Licensed under European Union Public Licence (EUPL) version 1.2" in (licences / "EUPL-1.2.txt").read_text(
        encoding="utf-8"
    )
    attribution = (licences / "CC-BY-4.0-softmatic.md").read_text(encoding="utf-8")
    assert "Softmatic GmbH" in attribution and "creativecommons.org/licenses/by/4.0" in attribution
    assert "Changes made" in attribution
    assert "Manuel Bleichenbacher" in (licences / "MIT-SwissQRBill.txt").read_text(encoding="utf-8")
    assert "Mustangproject" in (licences / "NOTICE-mustangproject.txt").read_text(encoding="utf-8")
    assert "Apache License" in (licences / "Apache-2.0.txt").read_text(encoding="utf-8")


def test_the_set_is_large_and_varied_enough():
    assert len(DOCUMENTS) >= 60
    assert {doc["schema"] for doc in DOCUMENTS} == {"invoice", "receipt"}
    assert len({doc["language"] for doc in DOCUMENTS}) >= 5
    assert len({doc["currency"] for doc in DOCUMENTS}) >= 5


# --- the records -------------------------------------------------------------------------------
@pytest.mark.parametrize("doc_id", sorted(BY_ID))
def test_the_truth_fits_its_schema(doc_id):
    doc = BY_ID[doc_id]
    schema = builtin(doc["schema"])
    top = {f.name for f in schema.fields}
    assert set(doc["truth"]) == top
    schema.validate_data(doc["truth"])
    lists = [f.name for f in schema.fields if f.kind == "list"]
    assert all(doc["truth"][name] is None for name in lists), "list fields are not labelled: null"
    for name in doc["expected_flags"]:
        assert name in top and doc["expected_flags"][name]
    required_nulls = {f.name for f in schema.fields if f.required and doc["truth"][f.name] is None}
    assert required_nulls <= set(doc["expected_flags"]), "a required null earns a flag: list it"
    if doc["truth"].get("currency") is not None:
        assert doc["truth"]["currency"] == doc["currency"]


@pytest.mark.parametrize("doc_id", sorted(BY_ID))
def test_every_truth_value_is_in_the_text(doc_id):
    doc = BY_ID[doc_id]
    missing = [
        (name, value)
        for name, value in doc["truth"].items()
        if value is not None and not re_.value_in_text(doc["schema"], name, value, doc["text"])
    ]
    assert missing == []


def test_the_simple_checks():
    text = "Summe 1.234,56 EUR\nBetrag 1’500.50 / 123 949.75\nDatum 02.03,20 09:48\nRechnung Nr. RE-2017/505"
    assert re_.amount_in_text(1234.56, text) and re_.amount_in_text(1500.5, text)
    assert re_.amount_in_text(123949.75, text) and not re_.amount_in_text(1234.57, text)
    assert re_.date_in_text("2020-03-02", text) and not re_.date_in_text("2020-03-03", text)
    assert re_.identifier_in_text("RE-2017/505", text) and re_.identifier_in_text("RE2017505", text)
    assert not re_.identifier_in_text("RE-2071/505", text) and not re_.identifier_in_text("2017", "code x2017y")
    assert re_.time_in_text("09:48", text) and re_.currency_in_text("EUR", text)
    # a currency glued after the figure leaves it a number; another word glued to it does not
    assert re_.amount_in_text(1100000, "합계금액 1,100,000원") and re_.currency_in_text("KRW", "1,100,000원")
    assert re_.amount_in_text(100, "Razem 100zł") and not re_.amount_in_text(3, "회원 3명")
    # a currency code glued before the figure likewise; another word glued to it does not
    assert re_.amount_in_text(39500, "TOTAL OMR39500.00") and not re_.amount_in_text(2024, "Nr INV2024")
    assert re_.printed_money("Mo-Fr 8.00-20.00 Uhr, 19,00 % MwSt 7,00 am 19.05. Summe 12,34") == [
        Decimal("7.00"),
        Decimal("12.34"),
    ]
    assert not re_.currency_in_text("USD", text)


def test_a_truth_currency_is_read_as_vetq_reads_currencies():
    """A truth's currency counts as printed when the sign the document prints names it
    ("R$", "Kč", "zł"); a sign several currencies share counts for each."""
    assert re_.currency_in_text("BRL", "VALOR TOTAL: R$ 1266,50")
    assert re_.currency_in_text("CZK", "Celkem 1 210,00 Kč")
    assert re_.currency_in_text("PLN", "Razem 123,00 zł")
    assert re_.currency_in_text("USD", "Total $12.00") and re_.currency_in_text("CAD", "Total $12.00")
    assert re_.currency_in_text("EUR", "payable in euros")
    assert not re_.currency_in_text("BRL", "Total $12.00")
    assert not re_.currency_in_text("EUR", "EURIBOR + 2%")


# --- the corruptions ------------------------------------------------------------------------------
def test_corruptions_are_deterministic():
    first = re_.all_corruptions(DOCUMENTS)
    shuffled = list(DOCUMENTS)
    random.Random(7).shuffle(shuffled)
    again = re_.all_corruptions(json.loads(json.dumps(shuffled)))
    assert sorted(first, key=lambda c: (c.doc_id, c.kind)) == sorted(again, key=lambda c: (c.doc_id, c.kind))
    assert first == re_.all_corruptions(DOCUMENTS)
    kinds = {c.kind for c in first}
    assert kinds == set(re_.ALL_KINDS)
    assert len({(c.doc_id, c.kind) for c in first}) == len(first)  # at most one of each kind per document


def _absent(c: Corruption, text: str) -> bool:
    if c.kind in ("invented_total",):
        return not re_.amount_in_text(c.value, text)
    if c.kind == "shifted_date":
        return not re_.date_in_text(c.value, text)
    if c.kind == "swapped_identifier":
        return not re_.identifier_in_text(c.value, text)
    if c.kind == "half_day_time":
        return not re_.time_in_text(c.value, text)
    return True


@pytest.mark.parametrize("kind", re_.ALL_KINDS)
def test_each_corruption_differs_from_the_truth_and_is_absent_where_required(kind):
    chosen = [c for c in re_.all_corruptions(DOCUMENTS) if c.kind == kind]
    assert len(chosen) >= 35
    for c in chosen:
        doc = BY_ID[c.doc_id]
        truth = doc["truth"][c.field]
        assert c.original == truth and c.value != truth, c
        assert c.field not in doc["expected_flags"]
        assert _absent(c, doc["text"]), c
        builtin(doc["schema"]).validate_data({**doc["truth"], c.field: c.value})
        if kind.startswith("other_amount_"):
            assert c.field == kind.removeprefix("other_amount_")
            assert Decimal(str(abs(c.value))) in re_.printed_money(doc["text"]), c
            assert abs(c.value) != abs(truth)
        if kind == "shifted_date":
            assert date.fromisoformat(c.value) != date.fromisoformat(truth)
        if kind == "other_date":
            assert date.fromisoformat(c.value) != date.fromisoformat(truth) and re_.date_in_text(c.value, doc["text"])
        if kind == "other_identifier":
            assert c.value in doc["text"] and re_._alnum(c.value) not in re_._alnum(truth)
        if kind == "half_day_time":
            assert abs(int(c.value[:2]) - int(truth[:2])) == 12 and c.value[2:] == truth[2:], c
        if kind == "swapped_identifier":
            assert sorted(c.value) == sorted(truth) and len(c.value) == len(truth)
            assert sum(a != b for a, b in zip(c.value, truth, strict=True)) == 2


def test_another_amount_is_the_nearest_printed_figure_below_that_is_none_of_the_records_own():
    doc = {
        "id": "t",
        "schema": "invoice",
        "text": "Widget 40.00\nShipping 15.00\nSubtotal 100.00\nVAT 19.00\nTotal 119.00\n",
        "truth": {"subtotal": 100.0, "tax": 19.0, "total": 119.0},
        "expected_flags": {},
    }
    picked = {c.kind: c.value for c in re_.corruptions(doc) if c.kind.startswith("other_amount_")}
    assert picked == {"other_amount_total": 40.0, "other_amount_subtotal": 40.0, "other_amount_tax": 15.0}
    # no other figure below or above: another of the record's own amounts
    doc = {**doc, "text": "Subtotal 100.00\nVAT 19.00\nTotal 119.00\n"}
    picked = {c.kind: c.value for c in re_.corruptions(doc) if c.kind.startswith("other_amount_")}
    assert picked == {"other_amount_total": 100.0, "other_amount_subtotal": 119.0, "other_amount_tax": 119.0}
    # a field the document earns a flag for is not corrupted
    doc = {**doc, "expected_flags": {"tax": "does not add up"}}
    assert "other_amount_tax" not in {c.kind for c in re_.corruptions(doc)}


def test_documents_without_the_field_get_no_corruption():
    corrupted = {(c.doc_id, c.kind) for c in re_.all_corruptions(DOCUMENTS)}
    for doc in DOCUMENTS:
        if doc["truth"]["total"] is None or "total" in doc["expected_flags"]:
            assert (doc["id"], "invented_total") not in corrupted
        if doc["truth"][re_.DATE_FIELD[doc["schema"]]] is None:
            assert (doc["id"], "shifted_date") not in corrupted


# --- grading, unit level ------------------------------------------------------------------------
def _result(status, flagged=(), confidence=None):
    return {
        "format": 2,
        "status": status,
        "data": {},
        "flagged_fields": [{"field": f, "value": 1, "confidence": 0.3, "reason": r} for f, r in flagged],
        "field_confidence": confidence or {},
    }


def test_grading_counts_false_alarms_expected_flags_and_catches():
    docs = [BY_ID["inv-zf1-acme-42"], BY_ID["inv-hetzner-r0005532486"], BY_ID["rcpt-aldi-02052020-12-01400"]]
    results = [
        _result("needs_review", [("total", "arithmetic: subtotal + tax = 1689.80, but total is 1589.8")]),
        _result("needs_review", [("tax", "16,61 appears in the source but not as a labelled tax"), ("date", "x")]),
        _result("needs_review"),
    ]
    corrupted = [c for c in re_.all_corruptions(docs) if c.kind in ("invented_total", "swapped_identifier")]
    corrupted_results = [
        _result("needs_review", [(c.field, f"{c.value} not found in the source")]) if i else _result("ok")
        for i, c in enumerate(corrupted)
    ]
    report = re_.grade_real(docs, results, corrupted, corrupted_results)
    assert report.false_alarm_docs == ["inv-hetzner-r0005532486", "rcpt-aldi-02052020-12-01400"]
    assert [(f.doc_id, f.field) for f in report.false_alarms] == [
        ("inv-hetzner-r0005532486", "tax"),
        ("inv-hetzner-r0005532486", "date"),
    ]
    assert report.unflagged_review == ["rcpt-aldi-02052020-12-01400"]
    # The plain needs_review rate counts all three; the one flagged only as expected is
    # exempt from the gate, by the class its label gives.
    assert report.needs_review == 3 and report.needs_review_rate == 1.0
    assert report.exempt_review == {"inv-zf1-acme-42": "the document does not add up"}
    assert "needs_review (any reason)        3 / 3    1.0000" in report.to_text()
    assert report.expected_flags_seen == 1 and report.expected_flags == 3
    assert report.catch() == (len(corrupted) - 1, len(corrupted))
    classes = {row["class"]: row["count"] for row in report.reason_classes()}
    assert classes == {"amount not under its label": 1, "other": 1}
    assert report.gate_failures(max_false_alarm_docs=1, max_false_alarm_fields=1, min_catch=0) == []
    assert len(report.gate_failures()) == 3


def test_reported_kinds_are_counted_apart_from_the_gated_catch():
    doc = BY_ID["inv-hetzner-r0005532486"]
    corrupted = [c for c in re_.corruptions(doc) if c.kind in ("invented_total", "other_date", "other_identifier")]
    assert {c.kind for c in corrupted} == {"invented_total", "other_date", "other_identifier"}
    caught = {"invented_total"}
    corrupted_results = [
        _result("needs_review", [(c.field, "x")]) if c.kind in caught else _result("ok") for c in corrupted
    ]
    report = re_.grade_real([doc], [_result("ok")], corrupted, corrupted_results)
    assert report.catch() == (1, 1) and report.catch_rate == 1.0 and report.gate_failures() == []
    assert report.catch("other_date") == (0, 1) and report.catch("other_identifier") == (0, 1)
    data = report.to_dict()["corruptions"]
    assert data["reported_by_kind"]["other_date"] == {"caught": 0, "total": 1, "rate": 0.0}
    assert data["missed"] == []  # the gated kinds' misses only; the others apart
    assert {row["kind"] for row in data["reported_missed"]} == {"other_date", "other_identifier"}
    assert "other_identifier          0 / 1" in report.to_text()


def test_the_cli_wires_real_and_refuses_model_flags(capsys):
    args = ev._parser().parse_args(["--real"])
    assert args.real and args.max_false_alarm_docs == 0.05 and args.max_false_alarm_fields == 0.02
    assert args.min_catch == 0.98
    assert ev.main(["--real", "--live"]) == 2
    assert "--live" in capsys.readouterr().err


# --- through the queue ------------------------------------------------------------------------------
DOCS = DOCUMENTS


def run_through_the_queue(home, documents):
    """A real-document set through the embedded queue, as `vetq eval --real` runs it."""
    from vetq.api_client.client import Client
    from vetq.core.settings import load_settings

    fixture = ev.GoldenSet("invoice").replay.resolve()
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("VETQ_REDIS_URL", raising=False)
        mp.setenv("VETQ_GENERATOR", f"replay:{fixture}")
        mp.setenv("VETQ_CRITIC", f"replay:{fixture}")
        with Client(settings=load_settings(home=home)) as client:
            return re_.run_real(client=client, documents=documents, timeout=300)


@pytest.fixture(scope="module")
@starts_processes
def real_report(tmp_path_factory):
    """The whole set through the queue: the CI gate."""
    return run_through_the_queue(tmp_path_factory.mktemp("real-eval-home"), DOCS)


@pytest.mark.processes
def test_the_deterministic_layer_meets_the_real_document_targets(real_report):
    """At most 5% of documents and 2% of fields flagged on correct records, at least 98%
    of the corruptions caught (the issue's targets; the figures are the README's)."""
    assert real_report.gate_failures() == [], real_report.to_text()
    # and no worse than the README records: a ratchet, lowered as fixes land
    assert len(real_report.false_alarm_docs) <= 4, real_report.to_text()
    assert len(real_report.false_alarms) <= 5, real_report.to_text()


@pytest.mark.processes
def test_the_real_eval_runs_through_the_queue(real_report):
    report = real_report
    assert report.errors == []
    assert report.documents == len(DOCS)
    assert report.by_schema == {"invoice": 51, "receipt": 49}
    data = report.to_dict()
    json.dumps(data)
    assert set(data) == {"documents", "by_schema", "languages", "currencies", "false_alarms", "corruptions", "errors"}
    assert {"documents", "document_rate", "fields", "field_rate", "fields_checked", "by_class", "list"} <= set(
        data["false_alarms"]
    )
    assert set(data["corruptions"]["by_kind"]) == set(re_.CORRUPTION_KINDS)
    assert set(data["corruptions"]["reported_by_kind"]) == set(re_.REPORTED_KINDS)
    made = re_.all_corruptions(DOCS)
    assert data["corruptions"]["total"] == sum(c.kind in re_.CORRUPTION_KINDS for c in made)
    reported = data["corruptions"]["reported_by_kind"]
    assert sum(row["total"] for row in reported.values()) == sum(c.kind in re_.REPORTED_KINDS for c in made)
    assert 0 <= data["false_alarms"]["document_rate"] <= 1 and 0 <= data["corruptions"]["catch_rate"] <= 1
    for flag in data["false_alarms"]["list"]:
        assert flag["doc"] in BY_ID and flag["reason"]
    text = report.to_text()
    assert "false alarms on the correct records" in text and "catch rate on corrupted records" in text
    assert "false-alarm reasons by class" in text and "missed corruptions" in text


@pytest.mark.processes
def test_every_invented_total_is_caught(real_report):
    invented = [o for o in real_report.outcomes if o.corruption.kind == "invented_total"]
    assert len(invented) >= 8
    assert [o.corruption.doc_id for o in invented if not o.caught] == []
