"""Reports of a benchmark run, all under <out>/<label>/:

* report.json / report.md  the header, per-mode metrics with Wilson intervals, the
  pre-declared paired comparisons with their labels, and per-case verdicts;
* human_sheet.csv          one row per successful record for human grading: the
  case's input and the reviewer's answer, the mode hidden behind an item id, rows
  shuffled (seeded); columns `grade` (good | acceptable | poor) and `notes` are
  left blank for the grader;
* human_sheet_key.json     item id -> (case, run, mode): keep it away from graders;
* `ingest_sheet` merges graded sheets back: report.json gains "human_grades"
  (per mode: graded count, share good-or-acceptable with its Wilson interval, mean
  score with good=2, acceptable=1, poor=0) and report.md is rewritten.
"""

from __future__ import annotations

import csv
import hashlib
import json
import random
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from vetq.eval.review_bench.metrics import all_metrics, rate

GRADES = {"good": 2, "acceptable": 1, "poor": 0}
SHEET_NAME = "human_sheet.csv"
KEY_NAME = "human_sheet_key.json"
REPORT_JSON = "report.json"
REPORT_MD = "report.md"
SHEET_COLUMNS = (
    "item_id",
    "objective",
    "constraints",
    "context",
    "proposed_solution",
    "verdict",
    "recommendation",
    "material_risks",
    "better_alternative",
    "grade",
    "notes",
)
RATE_ROWS = (
    "decision_accuracy",
    "decision_accuracy_strict",
    "keep_on_correct",
    "defect_detection",
    "exact_verdict",
    "false_intervention",
    "severe_false_intervention",
    "insufficient_evidence_rate",
    "error_rate",
)


def build_report(
    header: Mapping[str, Any],
    records: Sequence[Mapping[str, Any]],
    cases: Sequence[Mapping[str, Any]],
    *,
    stopped: str | None = None,
) -> dict[str, Any]:
    truths = {c["id"]: c["ground_truth"] for c in cases}
    records = [r for r in records if r["case_id"] in truths]
    modes = list(header["modes"])
    planned = len(cases) * int(header["runs"]) * len(modes)
    per_case: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for r in sorted(records, key=lambda r: (r["case_id"], r["run"], r["mode"])):
        per_case[r["case_id"]][r["mode"]].append(r.get("verdict") or f"ERROR:{r.get('error_code')}")
    return {
        "header": dict(header),
        "complete": len(records) >= planned and stopped is None,
        "planned": planned,
        "finished": len(records),
        "stopped": stopped,
        **all_metrics(records, truths, modes, seed=int(header["seed"])),
        "cases": [
            {
                "id": c["id"],
                "status": c["ground_truth"]["proposal_status"],
                "acceptable": c["ground_truth"]["acceptable_verdicts"],
                "verdicts": {m: per_case[c["id"]].get(m, []) for m in modes},
            }
            for c in cases
        ],
    }


def _fmt_rate(stat: Mapping[str, Any]) -> str:
    if not stat["n"]:
        return "–"
    return f"{stat['rate']:.2f} [{stat['ci95'][0]:.2f}, {stat['ci95'][1]:.2f}] ({stat['k']}/{stat['n']})"


def render_markdown(report: Mapping[str, Any]) -> str:
    header = report["header"]
    modes = list(report["modes"])
    lines = [
        f"# Review benchmark: {header.get('label')}",
        "",
        f"- model: `{header.get('model')}` ({'live' if header.get('live') else 'offline fake provider'})",
        (
            f"- cases: {header.get('cases')} (set {str(header.get('case_set_hash'))[:12]}), runs: {header.get('runs')}, "
            f"seed: {header.get('seed')}, modes: {', '.join(modes)}"
        ),
        f"- finished {report['finished']}/{report['planned']}"
        + (f" — STOPPED: {report['stopped']}" if report.get("stopped") else ""),
        f"- git commit: `{header.get('git_commit')}`",
        "",
        *(
            []
            if header.get("live")
            else [
                "**Offline run**: the answers come from a deterministic stand-in (a hash of mode and proposal), so these",
                "numbers test the harness and measure no model.",
                "",
            ]
        ),
        "Rates with 95% Wilson intervals (k/n). Mechanical grading: a verdict is right when it is one of the",
        "case's acceptable verdicts; strict accuracy counts errors as wrong.",
        "",
        "| metric | " + " | ".join(modes) + " |",
        "|---|" + "---|" * len(modes),
    ]
    for row in RATE_ROWS:
        lines.append(f"| {row} | " + " | ".join(_fmt_rate(report["modes"][m][row]) for m in modes) + " |")
    for name, key in (("tokens mean / median", "tokens"), ("latency ms mean / median", "latency_ms")):
        cells = [f"{report['modes'][m][key]['mean']} / {report['modes'][m][key]['median']}" for m in modes]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines.append(
        "| cost vs proposal_first | "
        + " | ".join(str(report["modes"][m]["cost_vs_proposal_first"]) for m in modes)
        + " |"
    )
    lines.append("| retries | " + " | ".join(str(report["modes"][m]["retries"]) for m in modes) + " |")
    lines += [
        "",
        "## Paired comparisons (cluster bootstrap over cases)",
        "",
        (
            "Labels fixed before the run: clear signal = 95% CI excludes 0 and |diff| >= 0.10; weak signal = 90% CI "
            "excludes 0; no observed advantage = 95% CI includes 0 and |diff| < 0.05; otherwise inconclusive."
        ),
        "",
        "| A − B | metric | cases | diff | 95% CI | 90% CI | label |",
        "|---|---|---|---|---|---|---|",
    ]
    for c in report["comparisons"]:
        ci95 = "–" if c["ci95"] is None else f"[{c['ci95'][0]:+.2f}, {c['ci95'][1]:+.2f}]"
        ci90 = "–" if c["ci90"] is None else f"[{c['ci90'][0]:+.2f}, {c['ci90'][1]:+.2f}]"
        diff = "–" if c["diff"] is None else f"{c['diff']:+.3f}"
        lines.append(
            f"| {c['a']} − {c['b']} | {c['metric']} | {c['cases']} | {diff} | {ci95} | {ci90} | {c['label']} |"
        )
    human = report.get("human_grades")
    if human:
        lines += [
            "",
            "## Human grades",
            "",
            "| mode | graded | good or acceptable | mean score (0-2) |",
            "|---|---|---|---|",
        ]
        for mode, stats in human["modes"].items():
            lines.append(
                f"| {mode} | {stats['graded']} | {_fmt_rate(stats['good_or_acceptable'])} | {stats['mean_score']} |"
            )
    lines += [
        "",
        "## Verdicts per case",
        "",
        "| case | truth | acceptable | " + " | ".join(modes) + " |",
        "|---|---|---|" + "---|" * len(modes),
    ]
    for c in report["cases"]:
        cells = [", ".join(c["verdicts"][m]) or "–" for m in modes]
        lines.append(f"| {c['id']} | {c['status']} | {'/'.join(c['acceptable'])} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def write_report(directory: Path, report: Mapping[str, Any]) -> None:
    (directory / REPORT_JSON).write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    (directory / REPORT_MD).write_text(render_markdown(report), encoding="utf-8")


# ---------------------------------------------------------------- human sheet


def item_id(seed: int, key: str) -> str:
    return "H" + hashlib.sha256(f"{seed}:{key}".encode()).hexdigest()[:10]


def write_human_sheet(
    directory: Path, records: Sequence[Mapping[str, Any]], cases: Sequence[Mapping[str, Any]], *, seed: int
) -> int:
    """The sheet (mode hidden) and its key; returns the number of rows."""
    by_id = {c["id"]: c for c in cases}
    rows, key = [], {}
    for r in records:
        if not r.get("verdict") or r["case_id"] not in by_id:
            continue
        data = by_id[r["case_id"]]["input"]
        ident = item_id(seed, r["key"])
        key[ident] = {"case_id": r["case_id"], "run": r["run"], "mode": r["mode"]}
        rows.append(
            {
                "item_id": ident,
                "objective": data["objective"],
                "constraints": " | ".join(data.get("constraints") or []),
                "context": data.get("context", ""),
                "proposed_solution": data["proposed_solution"],
                "verdict": r["verdict"],
                "recommendation": r.get("recommendation") or "",
                "material_risks": " | ".join(r.get("material_risks") or []),
                "better_alternative": r.get("better_alternative") or "",
                "grade": "",
                "notes": "",
            }
        )
    rows.sort(key=lambda row: row["item_id"])
    random.Random(seed).shuffle(rows)
    with open(directory / SHEET_NAME, "w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=SHEET_COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    (directory / KEY_NAME).write_text(json.dumps(key, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return len(rows)


class SheetError(ValueError):
    pass


def ingest_sheet(directory: Path, sheet: Path) -> dict[str, Any]:
    """Merge a graded sheet into report.json (and rewrite report.md); returns the grades."""
    report_path, key_path = directory / REPORT_JSON, directory / KEY_NAME
    if not report_path.exists() or not key_path.exists():
        raise SheetError(f"no report and key in {directory}: run the benchmark with this --label first")
    key = json.loads(key_path.read_text(encoding="utf-8"))
    report = json.loads(report_path.read_text(encoding="utf-8"))
    scores: dict[str, list[int]] = defaultdict(list)
    items: dict[str, dict[str, Any]] = {}
    problems = []
    with open(sheet, encoding="utf-8", newline="") as handle:
        for line, row in enumerate(csv.DictReader(handle), start=2):
            grade = (row.get("grade") or "").strip().lower()
            ident = (row.get("item_id") or "").strip()
            if not grade:
                continue
            if ident not in key:
                problems.append(f"line {line}: unknown item_id {ident!r}")
                continue
            if grade not in GRADES:
                problems.append(f"line {line}: grade {grade!r} is not one of {', '.join(GRADES)}")
                continue
            scores[key[ident]["mode"]].append(GRADES[grade])
            items[ident] = {**key[ident], "grade": grade, "notes": (row.get("notes") or "").strip()}
    if problems:
        raise SheetError("the sheet has problems:\n  " + "\n  ".join(problems))
    human = {
        "sheet": str(sheet),
        "graded": len(items),
        "modes": {
            mode: {
                "graded": len(values),
                "good_or_acceptable": rate(sum(v >= 1 for v in values), len(values)),
                "mean_score": round(sum(values) / len(values), 3) if values else None,
            }
            for mode, values in sorted(scores.items())
        },
        "items": items,
    }
    report["human_grades"] = human
    write_report(directory, report)
    return human
