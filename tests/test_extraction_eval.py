"""The extraction golden set and its eval harness: the files agree, the replay fixture
is current, the offline eval passes its own gate through the real queue, and a
wrong field that goes unflagged fails it."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from tests.conftest import starts_processes
from vetq.core.extraction.schema import FIELD_NAMES, InvoiceData
from vetq.eval import extraction_eval as ev

CASES = ev.load_jsonl(ev.CASES_PATH)
KINDS_REQUIRED = {
    "invented_total",
    "line_item_as_total",
    "swapped_subtotal_tax",
    "shifted_date",
    "customer_as_vendor",
    "invented_invoice_number",
    "wrong_currency",
}


def _independent_field_accuracy(cases) -> float:
    right = sum(c["generator"][f] == c["expected"][f] for c in cases for f in FIELD_NAMES)
    return right / (len(cases) * len(FIELD_NAMES))


# --- the golden files ------------------------------------------------------------------
def test_dataset_is_derived_from_cases():
    assert ev.DATASET_PATH.read_text(encoding="utf-8") == ev.dataset_jsonl(CASES)
    rows = ev.load_jsonl(ev.DATASET_PATH)
    assert [r["id"] for r in rows] == [c["id"] for c in CASES]
    assert all(set(r) == {"id", "text", "expected"} for r in rows)


def test_golden_set_size_variety_and_uniqueness():
    assert len(CASES) >= 40
    assert len({c["id"] for c in CASES}) == len(CASES)
    assert len({c["text"] for c in CASES}) == len(CASES), "two cases share a text (the replay key)"
    currencies = {c["expected"]["currency"] for c in CASES if c["expected"]["currency"]}
    assert len(currencies) >= 5, currencies
    # documents that lack fields are labelled null
    for name in ("invoice_number", "invoice_date", "tax"):
        assert any(c["expected"][name] is None for c in CASES), name
    assert any("Forwarded message" in c["text"] for c in CASES)
    assert any("Ignore previous instructions" in c["text"] for c in CASES)


def test_injected_errors_are_many_varied_and_honest():
    injected = [c for c in CASES if c["injected_error"]]
    assert len(injected) >= 12
    kinds = Counter(c["injected_error"]["kind"] for c in injected)
    assert len(kinds) >= 6 and set(kinds) >= KINDS_REQUIRED, kinds
    caught_by = Counter(c["injected_error"]["caught_by"] for c in injected)
    assert caught_by["heuristics"] >= 1 and caught_by["critic"] >= 1
    assert set(caught_by) <= {"heuristics", "critic"}
    for case in CASES:
        differing = [f for f in FIELD_NAMES if case["generator"][f] != case["expected"][f]]
        if case["injected_error"]:
            assert differing == case["injected_error"]["fields"], case["id"]
        else:
            assert differing == [], case["id"]


def test_cases_are_well_formed():
    for case in CASES:
        assert set(case["expected"]) == set(FIELD_NAMES), case["id"]
        InvoiceData.model_validate(case["expected"])
        InvoiceData.model_validate(case["generator"])
        verdicts = case["critic"]["verdicts"]
        assert [v["field"] for v in verdicts] == list(FIELD_NAMES), case["id"]
        error = case["injected_error"]
        for v in verdicts:
            if error and v["field"] in error["fields"] and error["caught_by"] == "critic":
                assert v["grounded"] is False and v["confidence"] < 0.5 and v["reason"], case["id"]
            elif error and v["field"] in error["fields"]:
                assert v["grounded"] is True and v["confidence"] == 0.9, case["id"]  # the Critic misses it
            else:
                assert v["grounded"] is True and 0.9 <= v["confidence"] <= 0.97, case["id"]


def test_committed_replay_fixture_is_up_to_date(tmp_path):
    fresh = tmp_path / "replay.json"
    assert ev.record_replay(ev.CASES_PATH, fresh) == len(CASES)
    committed = json.loads(ev.REPLAY_PATH.read_text(encoding="utf-8"))
    assert json.loads(fresh.read_text(encoding="utf-8")) == committed, (
        "eval/golden/replay.json is stale: run `python -m vetq.eval.extraction_eval --rebuild-golden`"
    )


# --- the offline eval through the real queue ---------------------------------------------
@pytest.fixture(scope="module")
@starts_processes
def queue_reports(tmp_path_factory):
    from vetq.api_client.client import Client
    from vetq.core.settings import load_settings

    home = tmp_path_factory.mktemp("eval-home")
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("VETQ_REDIS_URL", raising=False)
        mp.setenv("VETQ_GENERATOR", f"replay:{ev.REPLAY_PATH}")
        mp.setenv("VETQ_CRITIC", f"replay:{ev.REPLAY_PATH}")
        with Client(settings=load_settings(home=home)) as client:
            full = ev.run_eval(client=client, cases=CASES, timeout=120)
            heuristics = ev.run_eval(client=client, cases=CASES, heuristics_only=True, timeout=120)
    return full, heuristics


@pytest.mark.processes
def test_offline_eval_passes_its_gate(queue_reports):
    report, _ = queue_reports
    assert report.gate_failures() == [], report.to_text()
    assert report.examples == len(CASES)
    assert report.field_accuracy >= 0.90
    assert report.silent_wrong == 0
    assert report.catch_rate == 1.0
    assert report.field_accuracy == pytest.approx(_independent_field_accuracy(CASES), abs=1e-4)
    wrong_fields = sum(len(c["injected_error"]["fields"]) for c in CASES if c["injected_error"])
    assert len(report.failures) == wrong_fields
    assert all(line.endswith("(flagged)") for line in report.failures)
    assert report.exact_match == pytest.approx(sum(not c["injected_error"] for c in CASES) / len(CASES), abs=1e-4)
    assert report.false_alarms == 0
    # every case with an injected error, and only those, goes to review
    assert report.needs_review_rate == pytest.approx(
        sum(bool(c["injected_error"]) for c in CASES) / len(CASES), abs=1e-4
    )


def test_report_shapes(queue_reports):
    report, _ = queue_reports
    data = report.to_dict()
    assert list(data) == list(ev.REPORT_KEYS)
    json.dumps(data)
    assert set(data["calibration"]) == {"target_precision", "recommended_field_threshold", "table"}
    assert [row["threshold"] for row in data["calibration"]["table"]] == list(ev.THRESHOLDS)
    text = report.to_text()
    assert "field accuracy" in text and "calibration" in text and "failures" in text


def test_heuristics_only_mode_grades_too(queue_reports):
    full, heuristics = queue_reports
    assert heuristics.examples == len(CASES)
    assert heuristics.field_accuracy == pytest.approx(full.field_accuracy)  # same Generator answers
    critic_only = sum(
        len(c["injected_error"]["fields"])
        for c in CASES
        if c["injected_error"] and c["injected_error"]["caught_by"] == "critic"
    )
    heuristic_caught = sum(
        len(c["injected_error"]["fields"])
        for c in CASES
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
        "field_confidence": {f: (None if data[f] is None else confidence) for f in FIELD_NAMES},
        "flagged_fields": [{"field": f, "value": data[f], "confidence": 0.3, "reason": "x"} for f in flagged],
    }


def test_values_equal_rules():
    assert ev.values_equal("total", 583.2, 583.20)
    assert ev.values_equal("total", 583.204, 583.2)
    assert not ev.values_equal("total", 583.21, 583.2)
    assert ev.values_equal("vendor_name", "  globex   LTD ", "Globex Ltd")
    assert ev.values_equal("invoice_date", "2026-02-28", "2026-02-28")
    assert not ev.values_equal("invoice_date", "2026-02-27", "2026-02-28")
    assert ev.values_equal("tax", None, None)
    assert not ev.values_equal("tax", 0.0, None)
    assert not ev.values_equal("invoice_number", None, "GLX/2026/778")
    assert ev.values_equal("currency", "gbp", "GBP")


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
    assert report.failures == ["b: ERROR PROVIDER_ERROR: boom (all 7 fields wrong)"]
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
