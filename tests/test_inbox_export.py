"""Corrections feed the system: resolved items as golden examples `vetq eval` grades,
Label Studio and Argilla imports, and field thresholds calibrated to a target
precision (Wilson lower bound) that the gate then reads. Bad input is a clear error
and nothing half-written. SQLite only: the store's own tests cover PostgreSQL."""

from __future__ import annotations

import json

import pytest

from tests.conftest import GLOBEX
from tests.inbox_data import Clock, draft

RESOLVED_ITEMS = 20


@pytest.fixture(scope="module")
def resolved_store(tmp_path_factory):
    """RESOLVED_ITEMS items whose machine got the total wrong (confidence 0.31), every
    other value right (0.95), resolved by a reviewer."""
    from vetq.inbox.store import InboxStore

    clock = Clock()
    store = InboxStore.open(f"sqlite:///{tmp_path_factory.mktemp('export') / 'inbox.sqlite3'}", clock=clock)
    store.add_reviewer("ana")
    ana = store.reviewer_named("ana")
    for index in range(RESOLVED_ITEMS):
        item_id, _ = store.add_item(draft(f"job-{index:02d}", clock=clock))
        store.claim(item_id, ana)
        clock.advance(30)
        store.resolve(item_id, ana, {"total": 583.2})
    store.add_item(draft("job-open", clock=clock))  # unresolved: exported by nobody
    yield store
    store.close()


def test_golden_export_is_a_dataset_vetq_eval_grades_with_the_machines_mistake_recorded(resolved_store, tmp_path):
    from vetq.eval.extraction_eval import grade, load_jsonl
    from vetq.inbox.export import export

    path = tmp_path / "golden.jsonl"
    assert export(resolved_store, "golden", str(path)) == RESOLVED_ITEMS
    cases = load_jsonl(path)
    first = cases[0]
    assert (first["id"], first["text"], first["schema"]) == ("job-00", GLOBEX, "invoice")
    assert first["expected"]["total"] == 583.2 and first["machine"]["total"] == 538.2
    assert first["mistakes"] == [{"field": "total", "machine": 538.2, "truth": 583.2}]
    # Graded as `vetq eval --dataset` grades: the machine's answer is wrong on the total, and flagged.
    machine_results = [
        {"status": "needs_review", "data": c["machine"], "flagged_fields": [{"field": "total"}]} for c in cases
    ]
    report = grade(cases, machine_results, schema="invoice")
    assert report.silent_wrong == 0 and report.catch_rate == 1.0 and report.field_accuracy < 1.0
    perfect = grade(cases, [{"status": "ok", "data": c["expected"]} for c in cases], schema="invoice")
    assert perfect.field_accuracy == 1.0


def test_label_studio_and_argilla_exports_carry_both_answers(resolved_store, tmp_path):
    from vetq.inbox.export import export

    studio = tmp_path / "studio.json"
    assert export(resolved_store, "label_studio", str(studio)) == RESOLVED_ITEMS
    task = json.loads(studio.read_text())[0]
    assert task["data"]["text"] == GLOBEX
    predicted = {r["from_name"]: r["value"] for r in task["predictions"][0]["result"] if r["type"] == "textarea"}
    annotated = {r["from_name"]: r["value"] for r in task["annotations"][0]["result"] if r["type"] == "textarea"}
    assert (predicted["total"]["text"], annotated["total"]["text"]) == (["538.2"], ["583.2"])
    spans = [r["value"] for r in task["predictions"][0]["result"] if r["type"] == "labels"]
    assert {
        "start": GLOBEX.index("43.20"),
        "end": GLOBEX.index("43.20") + 5,
        "text": "43.20",
        "labels": ["tax"],
    } in spans

    argilla = tmp_path / "argilla.jsonl"
    assert export(resolved_store, "argilla", str(argilla)) == RESOLVED_ITEMS
    record = json.loads(argilla.read_text().splitlines()[0])
    assert record["fields"]["text"] == GLOBEX
    suggestion = next(s for s in record["suggestions"] if s["question_name"] == "total")
    response = next(r for r in record["responses"] if r["question_name"] == "total")
    assert (suggestion["value"], suggestion["score"], response["value"], response["user"]) == (
        538.2,
        0.31,
        583.2,
        "ana",
    )


def test_an_export_that_cannot_be_written_says_so_and_leaves_nothing(resolved_store, tmp_path):
    from vetq.core.errors import InvalidInputError
    from vetq.inbox.export import export

    with pytest.raises(InvalidInputError, match="cannot write"):
        export(resolved_store, "golden", str(tmp_path / "no-such-folder" / "golden.jsonl"))
    target = tmp_path / "kept.jsonl"
    target.write_text("what was there\n")
    with pytest.raises(InvalidInputError, match="no resolved inbox items of schema 'receipt'"):
        export(resolved_store, "golden", str(target), schema="receipt")
    assert target.read_text() == "what was there\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.jsonl"]


def test_the_wilson_lower_bound():
    from vetq.inbox.calibrate import wilson_lower_bound

    assert wilson_lower_bound(0, 0) == 0.0
    assert wilson_lower_bound(10, 10) == pytest.approx(0.7225, abs=1e-4)
    assert wilson_lower_bound(381, 381) >= 0.99 > wilson_lower_bound(380, 380)
    assert wilson_lower_bound(95, 100) == pytest.approx(0.8882, abs=1e-4)


def test_calibration_finds_the_threshold_its_data_supports_or_says_how_many_more_reviews_it_needs(resolved_store):
    from vetq.core.errors import InvalidInputError
    from vetq.inbox.calibrate import calibrate, examples_of

    examples = examples_of(resolved_store)
    assert len(examples) == RESOLVED_ITEMS * 7  # every scored value: line_items has no confidence
    report = calibrate(examples, 0.95)
    invoice = report["schemas"]["invoice"]
    # Accepting the 0.95 values (all right) keeps the lower bound above 0.95; taking in the
    # 0.31 totals (all wrong) would not.
    assert (invoice["threshold"], invoice["count"], invoice["precision"]) == (0.95, 120, 1.0)
    assert invoice["wilson_lower_bound"] >= 0.95
    # 20 values of one field, all right, bound the precision at 0.84 only: no field has its own.
    assert invoice["fields"] == {}
    thin = calibrate(examples, 0.99)
    assert thin["schemas"] == {}
    # 381 values all right are the fewest with a lower bound at 0.99: 261 more than the 120 seen.
    assert thin["refused"]["invoice"]["more_reviews_needed"] == 261
    with pytest.raises(InvalidInputError, match="no resolved inbox items"):
        calibrate([], 0.99)


def test_calibrate_writes_the_thresholds_file_the_gate_reads(resolved_store, tmp_path, monkeypatch, capsys):
    from vetq.api_client.cli import main
    from vetq.core.extraction.thresholds import load_thresholds
    from vetq.inbox.calibrate import calibrate, examples_of, thresholds_file, write_json

    path = tmp_path / "thresholds.json"
    write_json(path, thresholds_file(calibrate(examples_of(resolved_store), 0.95)))
    table = load_thresholds(path)
    assert table.for_schema("invoice").field_threshold == 0.95
    assert table.for_schema("receipt").field_threshold is None

    # Through the CLI on an empty inbox: refused, exit 2, nothing written.
    monkeypatch.setenv("VETQ_HOME", str(tmp_path / "empty-home"))
    refused = tmp_path / "refused.json"
    assert main(["calibrate", "--target-precision", "0.99", "--write", str(refused)]) == 2
    error = json.loads(capsys.readouterr().out)["error"]
    assert error["code"] == "INVALID_INPUT" and "no resolved inbox items" in error["message"]
    assert not refused.exists()


def test_the_gate_flags_by_the_calibrated_threshold_of_each_field(tmp_path):
    from tests.conftest import GLOBEX_DATA
    from vetq.core.errors import ConfigError
    from vetq.core.extraction.pipeline import ExtractionPipeline
    from vetq.core.settings import load_settings

    path = tmp_path / "thresholds.json"
    path.write_text(
        json.dumps({"format": 1, "schemas": {"invoice": {"field_threshold": 0.5, "fields": {"tax": 0.99}}}})
    )
    pipeline = ExtractionPipeline(load_settings(home=tmp_path, field_thresholds=path))
    payload = {"kind": "validate", "text": GLOBEX, "data": GLOBEX_DATA, "heuristics_only": True}
    result = pipeline.run(payload).model_dump(mode="json", by_alias=True)
    # Every value scores 0.95 without the Critic: only the tax, held to 0.99, is flagged.
    assert [flag["field"] for flag in result["flagged_fields"]] == ["tax"]
    assert "below 0.99" in result["flagged_fields"][0]["reason"]
    # A job's own threshold holds for every field.
    assert pipeline.run({**payload, "field_threshold": 0.9}).flagged_fields == []
    path.write_text('{"format": 1, "schemas": {"invoice": {"field_threshold": 7}}}')
    with pytest.raises(ConfigError, match="VETQ_FIELD_THRESHOLDS"):
        load_settings(field_thresholds=path)
