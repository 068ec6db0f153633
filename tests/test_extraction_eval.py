"""The extraction golden sets (one per built-in schema) and their eval harness: the
files agree, the replay fixtures are current, the offline eval of every set passes its
own gate through the real queue, and a wrong value that goes unflagged fails it."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from tests.conftest import starts_processes
from vetq.core.schemas import builtin
from vetq.core.schemas.records import leaves
from vetq.eval import extraction_eval as ev

SETS = {golden.schema: golden for golden in ev.golden_sets()}
CASES_OF = {name: ev.load_jsonl(golden.cases) for name, golden in SETS.items()}
CASES = CASES_OF["invoice"]
FIELD_NAMES = ("vendor_name", "invoice_number", "invoice_date", "subtotal", "tax", "total", "currency")
KINDS_REQUIRED = {
    "invented_total",
    "line_item_as_total",
    "swapped_subtotal_tax",
    "shifted_date",
    "customer_as_vendor",
    "invented_invoice_number",
    "wrong_currency",
}


def _values(schema, record):
    return {leaf.path: leaf.value for leaf in leaves(builtin(schema).fields, record)}


def _differing(schema, case) -> list[str]:
    got, want = _values(schema, case["generator"]), _values(schema, case["expected"])
    return [path for path in dict.fromkeys([*want, *got]) if got.get(path) != want.get(path)]


def _independent_field_accuracy(schema, cases) -> float:
    right = total = 0
    for case in cases:
        got, want = _values(schema, case["generator"]), _values(schema, case["expected"])
        containers = {p for p, f in builtin(schema).by_path.items() if f.kind in ("list", "object")}
        paths = [p for p in dict.fromkeys([*want, *got]) if not (p in containers and want.get(p) is got.get(p) is None)]
        total += len(paths)
        right += sum(got.get(p) == want.get(p) for p in paths)
    return right / total


# --- the golden files ------------------------------------------------------------------
def test_every_built_in_schema_has_a_golden_set_of_twenty_or_more():
    assert set(SETS) == {"invoice", "receipt", "purchase_order", "shipping_notice"}
    for name, cases in CASES_OF.items():
        assert len(cases) >= 20, name
        assert len({c["id"] for c in cases}) == len(cases), name
        assert len({c["text"] for c in cases}) == len(cases), f"{name}: two cases share a text (the replay key)"


@pytest.mark.parametrize("schema", sorted(SETS))
def test_dataset_is_derived_from_cases(schema):
    golden, cases = SETS[schema], CASES_OF[schema]
    assert golden.dataset.read_text(encoding="utf-8") == ev.dataset_jsonl(cases)
    rows = ev.load_jsonl(golden.dataset)
    assert [r["id"] for r in rows] == [c["id"] for c in cases]
    assert all(set(r) == {"id", "text", "expected"} for r in rows)


def test_invoice_set_size_variety_and_uniqueness():
    assert len(CASES) >= 40
    currencies = {c["expected"]["currency"] for c in CASES if c["expected"]["currency"]}
    assert len(currencies) >= 5, currencies
    # documents that lack fields are labelled null
    for name in ("invoice_number", "invoice_date", "tax"):
        assert any(c["expected"][name] is None for c in CASES), name
    assert any("Forwarded message" in c["text"] for c in CASES)
    assert any("Ignore previous instructions" in c["text"] for c in CASES)


def test_invoice_cases_with_line_items_run_the_item_rules():
    """The invoice's `sum(line_items[].amount) = subtotal` and per-line rules run on
    invoices: cases list their lines, the lines add up, and one line is mistyped."""
    with_items = [c for c in CASES if c["expected"].get("line_items")]
    assert len(with_items) >= 5
    for case in with_items:
        lines = case["expected"]["line_items"]
        subtotal = (
            case["expected"]["subtotal"] if case["expected"]["subtotal"] is not None else case["expected"]["total"]
        )
        assert sum(line["amount"] for line in lines) == pytest.approx(subtotal), case["id"]
    item_mistakes = [
        c
        for c in CASES
        if c["injected_error"] and any(f.startswith("line_items[") for f in c["injected_error"]["fields"])
    ]
    assert item_mistakes and all(c["injected_error"]["caught_by"] == "heuristics" for c in item_mistakes)


@pytest.mark.parametrize("schema", ["receipt", "purchase_order", "shipping_notice"])
def test_the_new_sets_have_line_items_in_several_layouts_and_languages(schema):
    cases = CASES_OF[schema]
    list_field = next(f.name for f in builtin(schema).fields if f.kind == "list")
    assert sum(len(c["expected"][list_field] or []) >= 3 for c in cases) >= len(cases) // 2
    # several languages: words only one language's documents would use
    markers = {
        "de": ("Datum", "Menge", "MwSt", "Lieferschein"),
        "fr": ("Date", "TVA", "Qté", "Bon"),
        "es": ("Fecha", "IVA"),
    }
    assert sum(any(any(m in c["text"] for m in words) for c in cases) for words in markers.values()) >= 2


@pytest.mark.parametrize("schema", sorted(SETS))
def test_injected_errors_are_many_varied_and_honest(schema):
    cases = CASES_OF[schema]
    injected = [c for c in cases if c["injected_error"]]
    assert len(injected) >= (12 if schema == "invoice" else 6)
    kinds = Counter(c["injected_error"]["kind"] for c in injected)
    assert len(kinds) >= 5, kinds
    if schema == "invoice":
        assert set(kinds) >= KINDS_REQUIRED, kinds
    caught_by = Counter(c["injected_error"]["caught_by"] for c in injected)
    assert caught_by["heuristics"] >= 1 and caught_by["critic"] >= 1
    assert set(caught_by) <= {"heuristics", "critic"}
    for case in cases:
        differing = _differing(schema, case)
        if case["injected_error"]:
            assert differing == case["injected_error"]["fields"], case["id"]
        else:
            assert differing == [], case["id"]


@pytest.mark.parametrize("schema", sorted(SETS))
def test_cases_are_well_formed(schema):
    compiled = builtin(schema)
    for case in CASES_OF[schema]:
        # every field is labelled (the invoice set predates line items: those may be left out)
        missing = {f.name for f in compiled.fields} - set(case["expected"])
        assert all(compiled.by_path[name].kind == "list" for name in missing), case["id"]
        compiled.validate_data(case["expected"])
        compiled.validate_data(case["generator"])
        committed = [path for path, value in _values(schema, case["generator"]).items() if value is not None]
        verdicts = case["critic"]["verdicts"]
        judged = [v["field"] for v in verdicts]
        assert len(judged) == len(set(judged)) and set(committed) <= set(judged), case["id"]  # every value judged once
        error = case["injected_error"]
        for v in verdicts:
            if error and v["field"] in error["fields"] and error["caught_by"] == "critic":
                assert v["grounded"] is False and v["confidence"] < 0.5 and v["reason"], case["id"]
            elif not (error and v["field"] in error["fields"]):
                assert v["grounded"] is True and v["confidence"] >= 0.85, case["id"]


@pytest.mark.parametrize("schema", sorted(SETS))
def test_committed_replay_fixture_is_up_to_date(schema, tmp_path):
    fresh = tmp_path / "replay.json"
    assert ev.record_replay(SETS[schema], fresh) == len(CASES_OF[schema])
    committed = json.loads(SETS[schema].replay.read_text(encoding="utf-8"))
    assert json.loads(fresh.read_text(encoding="utf-8")) == committed, (
        f"eval/golden/{schema}/replay.json is stale: run `python -m vetq.eval.extraction_eval --rebuild-golden`"
    )


# --- the offline eval through the real queue ---------------------------------------------
@pytest.fixture(scope="module")
@starts_processes
def queue_reports(tmp_path_factory):
    """Both runs (with the Critic, heuristics only) of every golden set, on one
    embedded service whose models replay every set's fixture."""
    from vetq.api_client.client import Client
    from vetq.core.settings import load_settings

    home = tmp_path_factory.mktemp("eval-home")
    fixture = tmp_path_factory.mktemp("fixture") / "all.json"
    merged: dict = {"version": 1, "recordings": {}}
    for golden in SETS.values():
        recorded = json.loads(golden.replay.read_text(encoding="utf-8"))
        merged["version"] = recorded["version"]
        merged["recordings"].update(recorded["recordings"])
    fixture.write_text(json.dumps(merged), encoding="utf-8")
    reports = {}
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("VETQ_REDIS_URL", raising=False)
        mp.setenv("VETQ_GENERATOR", f"replay:{fixture}")
        mp.setenv("VETQ_CRITIC", f"replay:{fixture}")
        with Client(settings=load_settings(home=home)) as client:
            for schema, cases in CASES_OF.items():
                full = ev.run_eval(client=client, cases=cases, timeout=180, schema=schema)
                heuristics = ev.run_eval(client=client, cases=cases, heuristics_only=True, timeout=180, schema=schema)
                reports[schema] = (full, heuristics)
    return reports


@pytest.mark.processes
@pytest.mark.parametrize("schema", sorted(SETS))
def test_offline_eval_passes_its_gate(queue_reports, schema):
    report, _ = queue_reports[schema]
    cases = CASES_OF[schema]
    assert report.gate_failures() == [], report.to_text()
    assert report.examples == len(cases)
    assert report.field_accuracy >= 0.90
    assert report.silent_wrong == 0
    assert report.catch_rate == 1.0
    assert report.field_accuracy == pytest.approx(_independent_field_accuracy(schema, cases), abs=1e-4)
    wrong_fields = sum(len(c["injected_error"]["fields"]) for c in cases if c["injected_error"])
    assert len(report.failures) == wrong_fields
    assert all(line.endswith("(flagged)") for line in report.failures)
    assert report.exact_match == pytest.approx(sum(not c["injected_error"] for c in cases) / len(cases), abs=1e-4)
    if schema == "invoice":
        assert report.false_alarms == 0
        # every case with an injected error, and only those, goes to review
        assert report.needs_review_rate == pytest.approx(
            sum(bool(c["injected_error"]) for c in cases) / len(cases), abs=1e-4
        )


@pytest.mark.processes
def test_report_shapes(queue_reports):
    report, _ = queue_reports["invoice"]
    data = report.to_dict()
    assert list(data) == list(ev.REPORT_KEYS)
    json.dumps(data)
    assert set(data["calibration"]) == {"target_precision", "recommended_field_threshold", "table"}
    assert [row["threshold"] for row in data["calibration"]["table"]] == list(ev.THRESHOLDS)
    text = report.to_text()
    assert "field accuracy" in text and "calibration" in text and "failures" in text


@pytest.mark.processes
@pytest.mark.parametrize("schema", sorted(SETS))
def test_heuristics_only_mode_grades_too(queue_reports, schema):
    full, heuristics = queue_reports[schema]
    cases = CASES_OF[schema]
    assert heuristics.examples == len(cases)
    assert heuristics.field_accuracy == pytest.approx(full.field_accuracy)  # same Generator answers
    critic_only = sum(
        len(c["injected_error"]["fields"])
        for c in cases
        if c["injected_error"] and c["injected_error"]["caught_by"] == "critic"
    )
    heuristic_caught = sum(
        len(c["injected_error"]["fields"])
        for c in cases
        if c["injected_error"] and c["injected_error"]["caught_by"] == "heuristics"
    )
    # What only the Critic can see goes silent without it; the heuristics catch their share.
    assert heuristics.silent_wrong == critic_only
    assert heuristics.catch_rate == pytest.approx(heuristic_caught / (heuristic_caught + critic_only), abs=1e-4)
    assert heuristics.catch_rate < full.catch_rate
    assert heuristics.mode == "heuristics only"


# --- grading, unit level ---------------------------------------------------------------------
EXPECTED = {
    "vendor_name": "Globex Ltd",
    "invoice_number": "GLX/2026/778",
    "invoice_date": "2026-02-28",
    "subtotal": 540.0,
    "tax": 43.2,
    "total": 583.2,
    "currency": "GBP",
}


def _result(data, flagged=(), status=None, confidence=0.9):
    return {
        "status": status or ("needs_review" if flagged else "ok"),
        "data": data,
        "field_confidence": {f: (None if data.get(f) is None else confidence) for f in FIELD_NAMES},
        "flagged_fields": [{"field": f, "value": data[f], "confidence": 0.3, "reason": "x"} for f in flagged],
    }


def test_values_equal_rules():
    assert ev.values_equal("amount", 583.2, 583.20)
    assert ev.values_equal("amount", 583.204, 583.2)
    assert not ev.values_equal("amount", 583.21, 583.2)
    assert ev.values_equal("text", "  globex   LTD ", "Globex Ltd")
    assert ev.values_equal("date", "2026-02-28", "2026-02-28")
    assert not ev.values_equal("date", "2026-02-27", "2026-02-28")
    assert ev.values_equal("amount", None, None)
    assert not ev.values_equal("amount", 0.0, None)
    assert not ev.values_equal("identifier", None, "GLX/2026/778")
    assert ev.values_equal("currency", "gbp", "GBP")
    assert ev.values_equal("quantity", 2, 2.0) and not ev.values_equal("quantity", 1.5, 1.55)
    assert ev.values_equal("boolean", False, False) and not ev.values_equal("boolean", False, None)
    assert ev.values_equal("time", "7:58", "07:58") and ev.values_equal("time", "5:31 PM", "17:31")
    assert ev.values_equal("time", "17:31:00", "17:31") and not ev.values_equal("time", "05:31", "17:31")


def test_a_missing_or_extra_line_item_counts_as_wrong_values():
    schema = builtin("receipt")
    expected = {"total": 3.0, "items": [{"description": "Tea", "amount": 1.0}, {"description": "Cake", "amount": 2.0}]}
    got = {"total": 3.0, "items": [{"description": "Tea", "amount": 1.0}]}
    grade = ev.grade_case("r", expected, {"status": "ok", "data": got, "flagged_fields": []}, schema)
    wrong = {f.field for f in grade.fields if not f.correct}
    assert wrong == {"items[1].description", "items[1].amount"}
    flagged_item = {"status": "needs_review", "data": got, "flagged_fields": [{"field": "items"}]}
    assert all(
        f.flagged for f in ev.grade_case("r", expected, flagged_item, schema).fields if f.field.startswith("items")
    )


def test_an_unflagged_wrong_field_fails_the_gate():
    wrong = dict(EXPECTED, total=683.2)
    cases = [{"id": "a", "expected": EXPECTED}, {"id": "b", "expected": EXPECTED}]
    report = ev.grade(cases, [_result(dict(EXPECTED)), _result(wrong)])  # total wrong, NOT flagged
    assert report.silent_wrong == 1
    assert report.catch_rate == 0.0
    assert report.failures == ["b total: got 683.2, expected 583.2 (SILENT)"]
    assert report.field_accuracy == pytest.approx(13 / 14, abs=1e-4)
    assert report.exact_match == 0.5
    assert any("unflagged" in p for p in report.gate_failures())

    caught = ev.grade(cases, [_result(dict(EXPECTED)), _result(wrong, flagged=["total"])])
    assert caught.silent_wrong == 0 and caught.catch_rate == 1.0 and caught.gate_failures() == []
    assert caught.failures == ["b total: got 683.2, expected 583.2 (flagged)"]
    assert caught.needs_review_rate == 0.5


def test_false_alarms_and_error_results():
    cases = [{"id": "a", "expected": EXPECTED}, {"id": "b", "expected": EXPECTED}]
    error = {"format": 2, "status": "error", "error": {"code": "PROVIDER_ERROR", "message": "boom"}}
    report = ev.grade(cases, [_result(dict(EXPECTED), flagged=["vendor_name"]), error])
    assert report.false_alarms == 1
    assert report.field_accuracy == 0.5  # the error counts all 7 fields wrong
    assert report.silent_wrong == 0  # an error is loud, not silent
    assert report.failures == ["b: ERROR PROVIDER_ERROR: boom (all 7 values wrong)"]
    assert report.gate_failures()  # accuracy 0.5 < 0.90
    with pytest.raises(ValueError):
        ev.grade(cases, [error])


def test_calibration_table_on_known_pairs():
    pairs = [(0.95, True), (0.9, True), (0.8, False), (0.75, True), (0.6, False), (0.52, True)]
    cal = ev.calibration_table(pairs, target_precision=0.99)
    got = {row["threshold"]: (row["precision"], row["coverage"], row["fields"]) for row in cal["table"]}
    assert got == {
        0.5: (0.6667, 1.0, 6),
        0.55: (0.6, 0.8333, 5),
        0.6: (0.6, 0.8333, 5),
        0.65: (0.75, 0.6667, 4),
        0.7: (0.75, 0.6667, 4),
        0.75: (0.75, 0.6667, 4),
        0.8: (0.6667, 0.5, 3),
        0.85: (1.0, 0.3333, 2),
        0.9: (1.0, 0.3333, 2),
        0.95: (1.0, 0.1667, 1),
    }
    assert cal["recommended_field_threshold"] == 0.85
    assert ev.calibration_table(pairs, target_precision=0.7)["recommended_field_threshold"] == 0.65
    never = ev.calibration_table([(0.99, False), (0.6, True)], target_precision=0.99)
    assert never["recommended_field_threshold"] is None
    assert never["table"][0]["precision"] == 0.5
    empty = ev.calibration_table([])
    assert empty["recommended_field_threshold"] is None and empty["table"][0]["precision"] is None


# --- the command line ---------------------------------------------------------------------------
@pytest.mark.processes
def test_main_fails_the_gate_on_a_modified_dataset(tmp_path, monkeypatch, capsys):
    # The replayed Generator still answers the golden total; the label now says otherwise
    # and nothing flags it: a silent wrong field.
    clean = next(c for c in CASES if c["id"] == "fwd-email-acme-usd")
    other = next(c for c in CASES if c["id"] == "inj-invented-total-globex-gbp")
    rows = ev.dataset_rows([clean, other])
    rows[0]["expected"] = dict(rows[0]["expected"], total=2820.00)
    dataset = tmp_path / "tiny.jsonl"
    dataset.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    monkeypatch.delenv("VETQ_REDIS_URL", raising=False)
    monkeypatch.setenv("VETQ_HOME", str(tmp_path / "home"))
    # main sets these in os.environ; monkeypatch restores them afterwards
    monkeypatch.setenv("VETQ_GENERATOR", "anthropic:not-used")
    monkeypatch.setenv("VETQ_CRITIC", "anthropic:not-used")
    monkeypatch.setenv("VETQ_LOG_LEVEL", "WARNING")

    code = ev.main(["--dataset", str(dataset), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1
    assert out["examples"] == 2
    assert out["silent_wrong"] == 1
    assert "fwd-email-acme-usd total: got 2820.68, expected 2820.0 (SILENT)" in out["failures"]
    assert "inj-invented-total-globex-gbp total: got 683.2, expected 583.2 (flagged)" in out["failures"]

    # the same run passes when one silent field is allowed and accuracy may be lower
    assert ev.main(["--dataset", str(dataset), "--max-silent-wrong", "1", "--min-accuracy", "0.5"]) == 0


@pytest.mark.parametrize("argv", [["--record", "x.json"], ["--token-budget", "1000"]])
def test_main_refuses_what_it_does_not_support(argv, capsys):
    assert ev.main(argv) == 2
    err = capsys.readouterr().err
    assert "use it with --live" in err or "--token-budget only applies with --live" in err


@pytest.mark.processes
def test_live_run_records_a_fixture_that_replays(tmp_path, monkeypatch, capsys):
    """--live against a provider (the fake, through the real openai SDK), --record a
    fixture, then grade the same set offline from that fixture alone."""
    from tests.conftest import serving_fake_provider

    subset = CASES[:3]
    dataset = tmp_path / "dataset.jsonl"
    dataset.write_text("".join(json.dumps({k: c[k] for k in ("id", "text", "expected")}) + "\n" for c in subset))

    def answer(path, body):
        user = body["messages"][-1]["content"]
        case = next(c for c in subset if c["text"].strip() in user)
        critic = "You are the Critic" in body["messages"][0]["content"]
        return json.dumps(case["critic"] if critic else case["generator"])

    fixture = tmp_path / "recorded.json"
    with serving_fake_provider(monkeypatch, answer) as fake:
        monkeypatch.setenv("VETQ_HOME", str(tmp_path / "home"))
        monkeypatch.setenv("VETQ_GENERATOR", "openai:live-generator")
        monkeypatch.setenv("VETQ_CRITIC", "openai:live-critic")
        monkeypatch.delenv("VETQ_RECORD_TO", raising=False)
        code = ev.main(
            ["--live", "--record", str(fixture), "--dataset", str(dataset), "--json", "--token-budget", "100000"]
        )
        live = json.loads(capsys.readouterr().out)
        calls = len(fake.log)
    assert code == 0 and live["examples"] == 3
    assert calls == 6  # a Generator and a Critic call per document
    assert len(json.loads(fixture.read_text())["recordings"]) == 6
    monkeypatch.delenv("VETQ_RECORD_TO")
    assert ev.main(["--fixture", str(fixture), "--dataset", str(dataset), "--json"]) == 0
    replayed = json.loads(capsys.readouterr().out)
    assert replayed["field_accuracy"] == live["field_accuracy"]
