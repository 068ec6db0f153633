"""The blind-review benchmark (`vetq bench review`): the cases, the statistics, the
harness end to end through the real review queue against the fake provider
(checkpoint, resume, refusals), and the proof that nothing but a case's input
reaches a model."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from tests.conftest import Service, serving_fake_provider
from tests.test_review_prompts import BENCH_FROZEN, FROZEN
from vetq.core.review.blindness import check_blindness
from vetq.core.review.modes import MODES
from vetq.core.review.schema import ReviewRequest
from vetq.eval.review_bench.cases import FLAWED, load_cases, validate_case
from vetq.eval.review_bench.cli import main, offline_responder
from vetq.eval.review_bench.metrics import label_difference, paired_bootstrap, wilson
from vetq.eval.review_bench.runner import CHECKPOINT_NAME, plan_items, read_checkpoint

MODEL = "openai:bench-reviewer"
SUBSET = ["pm-knight-2012-flag-reuse", "syn-float-money", "syn-outbox"]
CALLS = {"blind_first": 2, "proposal_first": 1, "proposal_first_2pass": 2, "independent_only": 2, "decision_judge": 1}


# ------------------------------------------------------------------ cases


def test_cases_are_valid_balanced_and_blind() -> None:
    cases = load_cases()
    assert len(cases) >= 25
    statuses = [c["ground_truth"]["proposal_status"] for c in cases]
    correct = statuses.count("correct")
    flawed = sum(s in FLAWED for s in statuses)
    assert abs(correct - flawed) <= 3, (correct, flawed)
    postmortems = [c for c in cases if c["source"]["type"] == "postmortem"]
    assert len(postmortems) >= 5
    for case in cases:
        assert validate_case(case) == []
        request = ReviewRequest.model_validate(case["input"])
        assert "review_mode" not in case["input"] and "trace_id" not in case["input"]
        truth = case["ground_truth"]
        if truth["proposal_status"] == "correct":
            assert truth["acceptable_verdicts"] == ["KEEP"]
        if truth["proposal_status"] in FLAWED:
            assert "KEEP" not in truth["acceptable_verdicts"] and truth["material_issue"]
        assert check_blindness(request).score < 0.15, case["id"]
        if case["source"]["url"]:
            assert case["source"]["url"] not in json.dumps(case["input"])


def test_validate_case_names_each_broken_rule() -> None:
    case = json.loads(json.dumps(load_cases(only=["syn-outbox"])[0]))
    case["ground_truth"]["acceptable_verdicts"] = ["KEEP", "MODIFY"]
    case["input"]["context"] += " " + case["input"]["proposed_solution"]
    case["input"]["review_mode"] = "proposal_first"
    problems = " | ".join(validate_case(case))
    assert "accepts KEEP only" in problems
    assert "visible in the blind fields" in problems
    assert "must not set review_mode" in problems
    flawed = json.loads(json.dumps(load_cases(only=["syn-float-money"])[0]))
    flawed["ground_truth"]["acceptable_verdicts"] = ["MODIFY", "KEEP"]
    assert any("never accepts KEEP" in p for p in validate_case(flawed))


def test_plan_shuffles_mode_order_per_case_and_run_reproducibly() -> None:
    modes = list(MODES)
    plan = plan_items(["a", "b"], modes, 3, seed=11)
    assert len(plan) == 2 * 3 * len(modes)
    assert plan == plan_items(["a", "b"], modes, 3, seed=11)
    orders = {tuple(i.mode for i in plan if (i.case_id, i.run) == key) for key in {(i.case_id, i.run) for i in plan}}
    assert len(orders) > 1  # not the same order everywhere
    assert plan != plan_items(["a", "b"], modes, 3, seed=12)


# ------------------------------------------------------------------ statistics


def test_wilson_interval_known_values() -> None:
    lo, hi = wilson(8, 10)
    assert (round(lo, 4), round(hi, 4)) == (0.4902, 0.9433)
    assert wilson(0, 0) == (0.0, 1.0)
    lo, hi = wilson(0, 10)
    assert lo == 0.0 and round(hi, 4) == 0.2775
    lo, hi = wilson(10, 10)
    assert round(lo, 4) == 0.7225 and hi == pytest.approx(1.0)


A = {"c1": [1, 1], "c2": [0, 1], "c3": [1, 0], "c4": [1, 1]}
B = {"c1": [0, 0], "c2": [0, 1], "c3": [0, 0], "c4": [1, 0]}


def test_paired_bootstrap_is_stable_on_a_fixed_dataset() -> None:
    result = paired_bootstrap(A, B, seed=7)
    assert result == paired_bootstrap(A, B, seed=7)
    assert result["cases"] == 4 and result["resamples"] == 5000
    assert result["diff"] == 0.5
    assert result["ci95"] == [0.125, 0.875]
    assert result["ci90"] == [0.25, 0.75]
    assert result["label"] == "clear signal"
    reverse = paired_bootstrap(B, A, seed=7)
    assert reverse["diff"] == -0.5 and reverse["label"] == "clear signal"


def test_identical_modes_give_zero_and_no_observed_advantage() -> None:
    result = paired_bootstrap(A, A, seed=3)
    assert result["diff"] == 0.0 and result["ci95"] == [0.0, 0.0]
    assert result["label"] == "no observed advantage"
    assert paired_bootstrap({}, {}, seed=3)["label"] == "inconclusive"


def test_label_rules() -> None:
    assert label_difference(0.12, (0.01, 0.2), (0.03, 0.18)) == "clear signal"
    assert label_difference(0.08, (0.01, 0.2), (0.03, 0.18)) == "weak signal"  # excludes 0 but < 0.10
    assert label_difference(0.12, (-0.01, 0.25), (0.02, 0.2)) == "weak signal"
    assert label_difference(0.02, (-0.1, 0.14), (-0.08, 0.1)) == "no observed advantage"
    assert label_difference(0.07, (-0.1, 0.24), (-0.05, 0.2)) == "inconclusive"
    assert label_difference(-0.3, (-0.5, -0.1), (-0.45, -0.15)) == "clear signal"


# ------------------------------------------------------------------ end to end through the queue


@pytest.fixture
def fake(monkeypatch):
    with serving_fake_provider(monkeypatch, offline_responder) as provider:
        yield provider


@pytest.fixture
def bench_service(fake, redis_url, queue_settings):
    settings = queue_settings.model_copy(
        update={"reviewer": MODEL, "cache_ttl_s": 0, "max_attempts": 1, "bench_modes": True}
    )
    svc = Service(settings, redis_url, concurrency=4)
    yield svc
    svc.close()


def run(svc, *args: str) -> int:
    return main(list(args), client=svc.client, model=MODEL)


def model_calls(fake) -> int:
    return sum(1 for e in fake.log if e["path"] == "/v1/chat/completions")


def test_end_to_end_resume_refusals_and_fresh(bench_service, fake, tmp_path, capsys) -> None:
    base = [
        "--only",
        ",".join(SUBSET),
        "--modes",
        "blind_first,proposal_first",
        "--runs",
        "2",
        "--out",
        str(tmp_path),
        "--label",
        "e2e",
        "--quiet",
    ]
    folder = tmp_path / "e2e"
    checkpoint = folder / CHECKPOINT_NAME

    assert run(bench_service, *base) == 0
    header, records = read_checkpoint(checkpoint)
    assert header["modes"] == ["blind_first", "proposal_first"] and header["runs"] == 2
    assert header["model"] == MODEL
    # The header reports the very hashes the prompt-freeze test pins.
    assert header["prompt_hashes"] == FROZEN and header["bench_prompt_hashes"] == BENCH_FROZEN
    assert header["case_set_hash"] and header["git_commit"]
    assert len(records) == 12 and len({r["key"] for r in records}) == 12
    assert all(r["verdict"] for r in records)
    assert {r["mode"] for r in records} == {"blind_first", "proposal_first"}
    assert model_calls(fake) == 3 * 2 * (2 + 1)
    report = json.loads((folder / "report.json").read_text())
    assert report["complete"] and report["finished"] == 12
    assert set(report["modes"]) == {"blind_first", "proposal_first"}
    assert report["modes"]["blind_first"]["decision_accuracy"]["n"] == 6
    assert (folder / "report.md").exists() and (folder / "human_sheet.csv").exists()

    # An interruption: only the header and 5 records survived, plus a torn line.
    kept = records[:5]
    lines = checkpoint.read_text().splitlines()
    checkpoint.write_text("\n".join(lines[:6]) + '\n{"kind": "record", "key": "tor')
    fake.reset()
    assert run(bench_service, *base, "--resume") == 0
    missing = [r for r in records[5:]]
    assert model_calls(fake) == sum(CALLS[r["mode"]] for r in missing)
    _, records2 = read_checkpoint(checkpoint)
    assert len(records2) == 12 and {r["key"] for r in records2} == {r["key"] for r in records}
    assert [r for r in records2 if r["key"] in {k["key"] for k in kept}] == kept  # reused untouched
    report = json.loads((folder / "report.json").read_text())
    assert report["this_invocation"]["reused"] == 5 and report["this_invocation"]["sent"] == 7

    # Everything done: a resume sends nothing.
    fake.reset()
    assert run(bench_service, *base, "--resume") == 0
    assert model_calls(fake) == 0

    # Never overwritten without --fresh.
    before = checkpoint.read_text()
    capsys.readouterr()
    assert run(bench_service, *base) == 2
    assert "--fresh" in capsys.readouterr().err
    assert checkpoint.read_text() == before

    # A different configuration is refused on resume, field by field.
    assert run(bench_service, *[a if a != "2" else "3" for a in base], "--seed", "5", "--resume") == 2
    err = capsys.readouterr().err
    assert "seed: checkpoint has 0, this run has 5" in err
    assert "runs: checkpoint has 2, this run has 3" in err
    assert "analysis_plan.bootstrap.seed" in err
    assert checkpoint.read_text() == before

    # --fresh starts over.
    fake.reset()
    assert run(bench_service, *base, "--fresh") == 0
    _, records3 = read_checkpoint(checkpoint)
    assert len(records3) == 12 and model_calls(fake) == 18


def test_human_sheet_hides_the_mode_and_ingest_merges_grades(bench_service, fake, tmp_path, capsys) -> None:
    base = ["--out", str(tmp_path), "--label", "sheet"]
    assert run(bench_service, "--only", SUBSET[0], "--modes", "blind_first,decision_judge", *base, "--quiet") == 0
    folder = tmp_path / "sheet"
    text = (folder / "human_sheet.csv").read_text()
    for mode in MODES:
        assert mode not in text
    key = json.loads((folder / "human_sheet_key.json").read_text())
    with open(folder / "human_sheet.csv", encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 2 and {r["item_id"] for r in rows} == set(key)
    for row, grade in zip(rows, ("good", "poor"), strict=True):
        row["grade"] = grade
    graded = tmp_path / "graded.csv"
    with open(graded, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    assert main(["--ingest-sheet", str(graded), *base]) == 0
    report = json.loads((folder / "report.json").read_text())
    human = report["human_grades"]
    assert human["graded"] == 2
    by_mode = {key[r["item_id"]]["mode"]: r["grade"] for r in rows}
    for mode, grade in by_mode.items():
        assert human["modes"][mode]["mean_score"] == {"good": 2, "poor": 0}[grade]
    assert "Human grades" in (folder / "report.md").read_text()
    rows[0]["grade"] = "excellent"
    with open(graded, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    assert main(["--ingest-sheet", str(graded), *base]) == 2


def test_transient_failures_are_retried_and_counted(bench_service, fake, tmp_path) -> None:
    fake.push_fault({"kind": "5xx", "status": 503})
    args = ["--only", "syn-outbox", "--modes", "proposal_first", "--out", str(tmp_path), "--label", "r", "--quiet"]
    assert run(bench_service, *args, "--retries", "2") == 0
    _, records = read_checkpoint(tmp_path / "r" / CHECKPOINT_NAME)
    assert len(records) == 1 and records[0]["verdict"] and records[0]["retries"] == 1
    assert [e["outcome"] for e in fake.log] == ["5xx", "ok"]
    report = json.loads((tmp_path / "r" / "report.json").read_text())
    assert report["modes"]["proposal_first"]["retries"] == 1


def test_stop_on_rate_limit_is_clean_and_resumable(bench_service, fake, tmp_path) -> None:
    fake.push_fault({"kind": "429", "retry_after": 1})
    args = [
        "--only",
        "syn-outbox",
        "--modes",
        "proposal_first",
        "--out",
        str(tmp_path),
        "--label",
        "rl",
        "--retries",
        "0",
        "--stop-on-rate-limit",
        "--quiet",
        "--max-in-flight",
        "1",
    ]
    assert run(bench_service, *args) == 3
    _, records = read_checkpoint(tmp_path / "rl" / CHECKPOINT_NAME)
    assert records == []  # the refused item is not recorded: a resume runs it
    report = json.loads((tmp_path / "rl" / "report.json").read_text())
    assert report["stopped"] and not report["complete"]
    assert run(bench_service, *args, "--resume") == 0
    _, records = read_checkpoint(tmp_path / "rl" / CHECKPOINT_NAME)
    assert len(records) == 1 and records[0]["verdict"]


# ------------------------------------------------------------------ sentinels


def plant_sentinels(source: Path, target: Path) -> list[str]:
    """Copy the cases with a unique sentinel in every non-input part."""
    target.mkdir()
    planted = []
    for path in sorted(source.glob("*.json")):
        case = json.loads(path.read_text())
        tag = f"ZQSENTINEL{len(planted) // 10:03d}"

        def mark(part: str, tag: str = tag) -> str:
            planted.append(f"{tag}{part}X")
            return planted[-1]

        case["title"] += " " + mark("title")
        case["category"] += " " + mark("category")
        case["source"]["note"] = f"{case['source']['note']} {mark('note')}"
        case["source"]["url"] = f"https://sentinel.invalid/{mark('url')}"
        truth = case["ground_truth"]
        truth["material_issue"] = f"{truth['material_issue'] or ''} {mark('issue')}"
        truth["required_observations"] = [*truth["required_observations"], mark("observation")]
        truth["notes"] = f"{truth['notes']} {mark('notes')}"
        case["diagnostics"] = {**case["diagnostics"], "sentinel": mark("diagnostics"), mark("diagkey"): "x"}
        (target / path.name).write_text(json.dumps(case))
    return planted


def test_no_non_input_part_of_any_case_reaches_a_model_in_any_mode(bench_service, fake, tmp_path) -> None:
    from vetq.eval.review_bench.cases import CASES_DIR

    planted = plant_sentinels(CASES_DIR, tmp_path / "cases")
    bodies: list[str] = []

    def capture(path, body):
        bodies.append(json.dumps(body))
        return offline_responder(path, body)

    fake.set_responder(capture)
    assert (
        run(
            bench_service,
            "--cases",
            str(tmp_path / "cases"),
            "--out",
            str(tmp_path / "out"),
            "--label",
            "sentinel",
            "--quiet",
            "--max-in-flight",
            "16",
        )
        == 0
    )
    cases = load_cases(tmp_path / "cases")
    expected_calls = len(cases) * sum(CALLS.values())
    assert len(bodies) == expected_calls
    everything = "\n".join(bodies)
    assert "ZQSENTINEL" not in everything
    for sentinel in planted:
        assert sentinel not in everything
    # The capture sees what it should: every proposal reached the reviewer.
    for case in cases:
        assert json.dumps(case["input"]["proposed_solution"])[1:-1] in everything
        assert case["id"] not in everything
    _, records = read_checkpoint(tmp_path / "out" / "sentinel" / CHECKPOINT_NAME)
    assert len(records) == len(cases) * len(MODES) and all(r["verdict"] for r in records)


def test_token_budget_caps_the_run_through_the_batch_ledger(bench_service, fake, tmp_path) -> None:
    args = [
        "--only",
        ",".join(SUBSET),
        "--modes",
        "proposal_first",
        "--token-budget",
        "1500",
        "--out",
        str(tmp_path),
        "--label",
        "tb",
        "--quiet",
        "--max-in-flight",
        "1",
    ]
    assert run(bench_service, *args) == 3  # stopped: the cap is reached, resumable
    _, records = read_checkpoint(tmp_path / "tb" / CHECKPOINT_NAME)
    assert len(records) < 3
    assert sum(r["tokens"] for r in records) <= 1500
    assert model_calls(fake) == len(records)  # refused calls never reached the provider
