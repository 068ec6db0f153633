"""Mechanical metrics of the review benchmark: no model grades anything.

Per mode (one record per finished case x run):

* decision_accuracy           verdict in acceptable_verdicts, over successful reviews
* decision_accuracy_strict    the same over ALL records: an error counts as wrong
* keep_on_correct             KEEP, over successes on `correct` cases
* defect_detection            any verdict but KEEP, over successes on flawed cases
                              (materially_flawed | fundamentally_flawed)
* exact_verdict               verdict == the primary (first) acceptable verdict
* false_intervention          MODIFY on `correct` cases (over successes on them)
* severe_false_intervention   REPLACE on `correct` cases
* insufficient_evidence_rate  INSUFFICIENT_EVIDENCE over all successes
* error_rate                  errors over all records
Each rate comes with its 95% Wilson score interval. Tokens (total per review) and
latency (meta.latency_ms) give mean and median; cost_vs_proposal_first is the
ratio of mean tokens to proposal_first's mean tokens.

Mode differences: paired cluster bootstrap over cases. For a pair (A, B) and a
metric, every case that has records of both modes (and belongs to the metric's
population) contributes d_c = mean_A(c) - mean_B(c), the means over that case's
runs (strict: an error scores 0). The point estimate is the mean of d_c. The
bootstrap draws len(cases) cases with replacement, BOOTSTRAP_RESAMPLES (5,000)
times, from random.Random(seed), and takes the mean of d_c over each draw. The CI
at level L is [sorted[floor(a*B)], sorted[ceil((1-a)*B) - 1]] with a = (1-L)/2.

Labels, fixed before the run (they are written into the checkpoint header as the
analysis plan), tried in this order:
  "clear signal"           the 95% CI excludes 0 and |point| >= 0.10
  "weak signal"            the 90% CI excludes 0
  "no observed advantage"  the 95% CI includes 0 and |point| < 0.05
  "inconclusive"           anything else
"excludes 0" means lo > 0 or hi < 0; a CI of [0, 0] includes 0.
"""

from __future__ import annotations

import math
import random
import statistics
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

Z95 = 1.959963984540054
Z90 = 1.6448536269514722
BOOTSTRAP_RESAMPLES = 5_000
CLEAR_MIN_DIFF = 0.10
NO_ADVANTAGE_MAX_DIFF = 0.05
BASELINE_MODE = "proposal_first"
FLAWED = frozenset({"materially_flawed", "fundamentally_flawed"})

LABEL_RULES = (
    ("clear signal", "95% CI excludes 0 and |diff| >= 0.10"),
    ("weak signal", "90% CI excludes 0"),
    ("no observed advantage", "95% CI includes 0 and |diff| < 0.05"),
    ("inconclusive", "otherwise"),
)
# (metric, population of cases) compared between modes, each record scored 0/1.
COMPARED_METRICS = ("decision_accuracy_strict", "keep_on_correct", "defect_detection")


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of successes/n ((0, 1) when n == 0)."""
    if n <= 0:
        return (0.0, 1.0)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def rate(successes: int, n: int) -> dict[str, Any]:
    lo, hi = wilson(successes, n)
    return {
        "k": successes,
        "n": n,
        "rate": round(successes / n, 4) if n else None,
        "ci95": [round(lo, 4), round(hi, 4)],
    }


def _status(truth: Mapping[str, Any]) -> str:
    return str(truth["proposal_status"])


def is_error(record: Mapping[str, Any]) -> bool:
    return not record.get("verdict")


def decision_correct(record: Mapping[str, Any], truth: Mapping[str, Any]) -> bool:
    return bool(record.get("verdict")) and record["verdict"] in truth["acceptable_verdicts"]


def _summary(values: Sequence[float]) -> dict[str, Any]:
    if not values:
        return {"n": 0, "mean": None, "median": None}
    return {"n": len(values), "mean": round(statistics.fmean(values), 2), "median": round(statistics.median(values), 2)}


def mode_metrics(records: Sequence[Mapping[str, Any]], truths: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The metrics of one mode's records (see the module docstring)."""
    ok = [r for r in records if not is_error(r)]
    on_correct = [r for r in ok if _status(truths[r["case_id"]]) == "correct"]
    on_flawed = [r for r in ok if _status(truths[r["case_id"]]) in FLAWED]

    def count(rs, pred):
        return sum(1 for r in rs if pred(r))

    def correct(r):
        return decision_correct(r, truths[r["case_id"]])

    tokens = [float(r.get("tokens") or 0) for r in ok]
    latency = [float(r.get("latency_ms") or 0) for r in ok]
    errors: dict[str, int] = defaultdict(int)
    for r in records:
        if is_error(r):
            errors[str(r.get("error_code") or "UNKNOWN")] += 1
    return {
        "records": len(records),
        "successes": len(ok),
        "decision_accuracy": rate(count(ok, correct), len(ok)),
        "decision_accuracy_strict": rate(count(records, correct), len(records)),
        "keep_on_correct": rate(count(on_correct, lambda r: r["verdict"] == "KEEP"), len(on_correct)),
        "defect_detection": rate(count(on_flawed, lambda r: r["verdict"] != "KEEP"), len(on_flawed)),
        "exact_verdict": rate(
            count(ok, lambda r: r["verdict"] == truths[r["case_id"]]["acceptable_verdicts"][0]), len(ok)
        ),
        "false_intervention": rate(count(on_correct, lambda r: r["verdict"] == "MODIFY"), len(on_correct)),
        "severe_false_intervention": rate(count(on_correct, lambda r: r["verdict"] == "REPLACE"), len(on_correct)),
        "insufficient_evidence_rate": rate(count(ok, lambda r: r["verdict"] == "INSUFFICIENT_EVIDENCE"), len(ok)),
        "error_rate": rate(len(records) - len(ok), len(records)),
        "errors_by_code": dict(sorted(errors.items())),
        "retries": sum(int(r.get("retries") or 0) for r in records),
        "tokens": _summary(tokens),
        "latency_ms": _summary(latency),
    }


# ---------------------------------------------------------------- paired bootstrap


def _percentile_ci(sorted_values: Sequence[float], level: float) -> tuple[float, float]:
    b = len(sorted_values)
    alpha = (1.0 - level) / 2.0
    lo_index = math.floor(alpha * b)
    hi_index = max(lo_index, math.ceil((1.0 - alpha) * b) - 1)
    return sorted_values[lo_index], sorted_values[hi_index]


def _excludes_zero(ci: tuple[float, float]) -> bool:
    return ci[0] > 0 or ci[1] < 0


def label_difference(point: float, ci95: tuple[float, float], ci90: tuple[float, float]) -> str:
    """The pre-registered label (see the module docstring)."""
    eps = 1e-12
    if _excludes_zero(ci95) and abs(point) >= CLEAR_MIN_DIFF - eps:
        return "clear signal"
    if _excludes_zero(ci90):
        return "weak signal"
    if not _excludes_zero(ci95) and abs(point) < NO_ADVANTAGE_MAX_DIFF:
        return "no observed advantage"
    return "inconclusive"


def paired_bootstrap(
    per_case_a: Mapping[str, Sequence[float]],
    per_case_b: Mapping[str, Sequence[float]],
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = 0,
) -> dict[str, Any]:
    """Paired cluster bootstrap of mean(A) - mean(B) over cases. Each mapping gives a
    case's 0/1 scores over its runs; only cases present (non-empty) in both count."""
    cases = sorted(c for c in per_case_a if per_case_a[c] and per_case_b.get(c))
    if not cases:
        return {
            "cases": 0,
            "diff": None,
            "ci95": None,
            "ci90": None,
            "label": "inconclusive",
            "resamples": resamples,
            "seed": seed,
        }
    diffs = [statistics.fmean(per_case_a[c]) - statistics.fmean(per_case_b[c]) for c in cases]
    point = statistics.fmean(diffs)
    rng = random.Random(seed)
    n = len(diffs)
    means = sorted(sum(diffs[rng.randrange(n)] for _ in range(n)) / n for _ in range(resamples))
    ci95 = _percentile_ci(means, 0.95)
    ci90 = _percentile_ci(means, 0.90)
    return {
        "cases": n,
        "diff": round(point, 4),
        "ci95": [round(ci95[0], 4), round(ci95[1], 4)],
        "ci90": [round(ci90[0], 4), round(ci90[1], 4)],
        "label": label_difference(point, ci95, ci90),
        "resamples": resamples,
        "seed": seed,
    }


def _per_case_scores(
    records: Iterable[Mapping[str, Any]],
    truths: Mapping[str, Mapping[str, Any]],
    metric: str,
) -> dict[str, list[float]]:
    scorers: dict[str, tuple[Callable[[str], bool], Callable[[Mapping[str, Any], Mapping[str, Any]], bool]]] = {
        "decision_accuracy_strict": (lambda s: True, lambda r, t: decision_correct(r, t)),
        "keep_on_correct": (lambda s: s == "correct", lambda r, t: r.get("verdict") == "KEEP"),
        "defect_detection": (lambda s: s in FLAWED, lambda r, t: bool(r.get("verdict")) and r["verdict"] != "KEEP"),
    }
    population, score = scorers[metric]
    out: dict[str, list[float]] = defaultdict(list)
    for r in records:
        truth = truths[r["case_id"]]
        if not population(_status(truth)):
            continue
        if metric != "decision_accuracy_strict" and is_error(r):
            continue  # keep/defect rates are over successful reviews
        out[r["case_id"]].append(1.0 if score(r, truth) else 0.0)
    return out


def comparison_pairs(modes: Sequence[str]) -> list[tuple[str, str]]:
    """The pre-declared comparisons: every mode against proposal_first (or, without
    it, against the first mode), plus blind_first against its compute-matched
    control proposal_first_2pass when both run."""
    baseline = BASELINE_MODE if BASELINE_MODE in modes else modes[0]
    pairs = [(m, baseline) for m in modes if m != baseline]
    if "blind_first" in modes and "proposal_first_2pass" in modes:
        pairs.append(("blind_first", "proposal_first_2pass"))
    return pairs


def compare_modes(
    records: Sequence[Mapping[str, Any]],
    truths: Mapping[str, Mapping[str, Any]],
    modes: Sequence[str],
    *,
    seed: int = 0,
    resamples: int = BOOTSTRAP_RESAMPLES,
) -> list[dict[str, Any]]:
    by_mode: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for r in records:
        by_mode[r["mode"]].append(r)
    out = []
    for a, b in comparison_pairs(list(modes)):
        for metric in COMPARED_METRICS:
            result = paired_bootstrap(
                _per_case_scores(by_mode[a], truths, metric),
                _per_case_scores(by_mode[b], truths, metric),
                resamples=resamples,
                seed=seed,
            )
            out.append({"a": a, "b": b, "metric": metric, **result})
    return out


def analysis_plan(modes: Sequence[str], seed: int) -> dict[str, Any]:
    """What the report will compare and how it labels, fixed before the run."""
    return {
        "comparisons": [list(p) for p in comparison_pairs(list(modes))],
        "metrics": list(COMPARED_METRICS),
        "bootstrap": {"kind": "paired cluster over cases", "resamples": BOOTSTRAP_RESAMPLES, "seed": seed},
        "labels": [{"label": label, "rule": rule} for label, rule in LABEL_RULES],
    }


def all_metrics(
    records: Sequence[Mapping[str, Any]],
    truths: Mapping[str, Mapping[str, Any]],
    modes: Sequence[str],
    *,
    seed: int = 0,
) -> dict[str, Any]:
    by_mode: dict[str, list[Mapping[str, Any]]] = {m: [] for m in modes}
    for r in records:
        by_mode.setdefault(r["mode"], []).append(r)
    per_mode = {m: mode_metrics(rs, truths) for m, rs in by_mode.items()}
    base = per_mode.get(BASELINE_MODE, {}).get("tokens", {}).get("mean")
    for stats in per_mode.values():
        mean = stats["tokens"]["mean"]
        stats["cost_vs_proposal_first"] = round(mean / base, 3) if base and mean is not None else None
    return {"modes": per_mode, "comparisons": compare_modes(records, truths, modes, seed=seed)}
