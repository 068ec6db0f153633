"""The held-out real-document set (eval/golden/real_heldout/): documents the heuristics were
never tuned on. Its files agree with what its build derives, no document of the tuned set
is in it, every label value is in its text, and its evaluation runs through the queue.
The issue's targets are asserted only where the measured figures meet them (catch, false
alarms per field); the document rate (1 of 9) does not, and is reported, not asserted."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from tests.conftest import starts_processes
from vetq.eval import extraction_eval as ev
from vetq.eval import real_eval as re_

HELDOUT = re_.HELDOUT
DOCUMENTS = re_.load_documents(re_.REAL_SETS["heldout"])
TUNED = re_.load_documents(re_.REAL_SETS["tuned"])


def test_no_tuned_document_is_held_out():
    tuned = {(d["source"]["repo"], d["source"]["path"]) for d in TUNED}
    tuned_keys = {(str(d["truth"].get("invoice_number")), abs(d["truth"].get("total") or 0)) for d in TUNED}
    for doc in DOCUMENTS:
        assert (doc["source"]["repo"], doc["source"]["path"]) not in tuned, doc["id"]
        if doc["truth"].get("invoice_number") and doc["truth"].get("total") is not None:
            assert (str(doc["truth"]["invoice_number"]), abs(doc["truth"]["total"])) not in tuned_keys, doc["id"]
    assert not {d["id"] for d in DOCUMENTS} & {d["id"] for d in TUNED}


def test_every_document_names_its_source_licence_and_commit_and_its_values_are_in_its_text():
    assert len(DOCUMENTS) >= 9
    for doc in DOCUMENTS:
        source = doc["source"]
        assert source["licence"] and len(source["commit"]) == 40 and source["path"], doc["id"]
        assert (HELDOUT / doc["text_file"]).read_text(encoding="utf-8") == doc["text"]
        for name, value in doc["truth"].items():
            if value is not None:
                assert re_.value_in_text(doc["schema"], name, value, doc["text"]), (doc["id"], name, value)


def test_documents_jsonl_is_what_the_build_derives():
    spec = importlib.util.spec_from_file_location("heldout_build", Path(HELDOUT) / "build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    real_build = module.real_build
    labels = real_build.load_labels()
    assert [label["id"] for label in labels] == [doc["id"] for doc in DOCUMENTS]
    assert (HELDOUT / "documents.jsonl").read_text(encoding="utf-8") == real_build.documents_jsonl(labels)


def test_the_cli_chooses_the_set():
    assert ev._parser().parse_args(["--real"]).real_set == "tuned"
    assert ev._parser().parse_args(["--real", "--set", "heldout"]).real_set == "heldout"


@pytest.fixture(scope="module")
@starts_processes
def heldout_report(tmp_path_factory):
    """The held-out set through the queue, as `vetq eval --real --set heldout` runs it."""
    from tests.test_real_eval import run_through_the_queue

    return run_through_the_queue(tmp_path_factory.mktemp("heldout-eval-home"), DOCUMENTS)


@pytest.mark.processes
def test_the_heldout_eval_runs_and_computes_its_catch(heldout_report):
    report = heldout_report
    assert report.errors == []
    assert report.documents == len(DOCUMENTS)
    caught, total = report.catch()
    assert total == len(re_.all_corruptions(DOCUMENTS)) and total > 0
    assert report.catch_rate == round(caught / total, 4)
    # Targets the held-out figures meet (README): asserted. The document rate is not met.
    assert report.catch_rate >= re_.DEFAULT_MIN_CATCH, report.to_text()
    assert report.false_alarm_field_rate <= re_.DEFAULT_MAX_FALSE_ALARM_FIELDS, report.to_text()
