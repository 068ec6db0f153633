"""The extraction golden sets, one per built-in schema, graded end to end through the
real queue.

    python -m vetq.eval.extraction_eval                 # offline: replayed Generator and Critic
    python -m vetq.eval.extraction_eval --schema receipt
    python -m vetq.eval.extraction_eval --json          # the report as one JSON object
    python -m vetq.eval.extraction_eval --heuristics-only
    python -m vetq.eval.extraction_eval --live          # the configured providers (costs tokens)

Every labeled example is submitted as an extraction job through an
`api_client.client.Client` (one batch), the results come back in input order and
each value of the record (every field, every line item's fields, by path) is graded
against the label:

- a value is correct when the result's value equals the expected one by its kind:
  amounts to the cent, numbers exactly, text and identifiers case- and
  whitespace-insensitively, dates as ISO strings, times as times of day ("7:58" is
  "07:58"), and null == null. A list item the
  result lacks or adds counts as wrong values. An error result counts every expected
  value wrong (nothing is committed, so nothing is silent: its values count as
  caught, and its failure lines say ERROR). A value is flagged when its path, or an
  item or list that holds it, is in flagged_fields.
- a wrong field is *caught* when the result names it in flagged_fields and *silent*
  otherwise; a correct field that is flagged is a false alarm.
- calibration: for field thresholds 0.50, 0.55, ... 0.95, the precision and coverage
  of the committed fields whose confidence reaches the threshold, and the lowest
  threshold whose precision reaches the target.

The gate (exit 1) fails when field accuracy is below --min-accuracy or more than
--max-silent-wrong wrong fields went unflagged.

Files under eval/golden/<schema>/: cases.jsonl is the source of truth (document,
label, authored Generator and Critic answers, the injected error if any);
dataset.jsonl is derived from it (id, text, expected) by `write_dataset`; replay.json
is recorded from it by `record_replay` (`python -m vetq.eval.extraction_eval
--rebuild-golden`, every schema).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from vetq.core.extraction.clock import parse_time_value
from vetq.core.results import error_of
from vetq.core.schemas import CompiledSchema, builtin, builtin_names
from vetq.core.schemas.catalog import DEFAULT_SCHEMA
from vetq.core.schemas.records import ancestors, leaves

GOLDEN = Path(__file__).parent / "golden"


@dataclass(frozen=True)
class GoldenSet:
    """The golden files of one built-in schema."""

    schema: str

    @property
    def folder(self) -> Path:
        return GOLDEN / self.schema

    @property
    def cases(self) -> Path:
        return self.folder / "cases.jsonl"

    @property
    def dataset(self) -> Path:
        return self.folder / "dataset.jsonl"

    @property
    def replay(self) -> Path:
        return self.folder / "replay.json"


def golden_sets() -> list[GoldenSet]:
    """Every built-in schema that has a golden set."""
    return [GoldenSet(name) for name in builtin_names() if GoldenSet(name).cases.exists()]


INVOICE = GoldenSet(DEFAULT_SCHEMA)

THRESHOLDS: tuple[float, ...] = tuple(round(0.50 + 0.05 * i, 2) for i in range(10))
DEFAULT_TARGET_PRECISION = 0.99
DEFAULT_MIN_ACCURACY = 0.90
DEFAULT_MAX_SILENT_WRONG = 0
DEFAULT_TIMEOUT_S = 300.0

REPORT_KEYS = (
    "examples",
    "field_accuracy",
    "exact_match",
    "needs_review_rate",
    "catch_rate",
    "silent_wrong",
    "false_alarms",
    "failures",
    "calibration",
)


# --- the golden files ----------------------------------------------------------------
def load_jsonl(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def dataset_rows(cases: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The labeled set without the authored answers: {"id", "text", "expected"}."""
    return [{"id": c["id"], "text": c["text"], "expected": c["expected"]} for c in cases]


def dataset_jsonl(cases: Iterable[Mapping[str, Any]]) -> str:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in dataset_rows(cases))


def write_dataset(golden: GoldenSet = INVOICE) -> int:
    """Derive dataset.jsonl from cases.jsonl; returns the number of rows."""
    cases = load_jsonl(golden.cases)
    golden.dataset.write_text(dataset_jsonl(cases), encoding="utf-8")
    return len(cases)


def record_replay(golden: GoldenSet = INVOICE, fixture_path: str | os.PathLike[str] | None = None) -> int:
    """Record the replay fixture of a golden set from its authored answers."""
    from vetq.eval.fixtures import record_cases

    cases = [
        {"id": c["id"], "text": c["text"], "generator": c["generator"], "critic": c["critic"]}
        for c in load_jsonl(golden.cases)
    ]
    return record_cases(cases, fixture_path or golden.replay, schema=golden.schema)


# --- grading ---------------------------------------------------------------------------
def _cents(value: Any) -> Decimal | None:
    number = _number(value)
    return None if number is None else number.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


def _norm_text(value: Any) -> str:
    return " ".join(str(value).split()).casefold()


def _number(value: Any) -> Decimal | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        number = Decimal(str(value))
    except (InvalidOperation, ValueError):
        return None
    return number.normalize() if number.is_finite() else None


def values_equal(kind: str, got: Any, expected: Any) -> bool:
    """The grading rule for one value of a kind (see the module docstring)."""
    if got in (None, []) or expected in (None, []):
        return got in (None, []) and expected in (None, [])
    if kind == "amount":
        a, b = _cents(got), _cents(expected)
        return a is not None and a == b
    if kind in ("number", "quantity"):
        n, m = _number(got), _number(expected)
        return n is not None and n == m
    if kind == "date":
        return str(got).strip()[:10] == str(expected).strip()[:10] and len(str(got).strip()) >= 10
    if kind == "time":  # "17:31:00" is "17:31"
        clock, wanted = parse_time_value(got), parse_time_value(expected)
        return clock is not None and wanted is not None and clock[0] == wanted[0]
    if kind == "boolean":
        return got is expected
    return _norm_text(got) == _norm_text(expected)


@dataclass
class FieldGrade:
    case_id: str
    field: str
    got: Any
    expected: Any
    correct: bool
    flagged: bool
    confidence: float | None = None
    error: bool = False


@dataclass
class CaseGrade:
    id: str
    status: str
    fields: list[FieldGrade]
    error: str | None = None

    @property
    def exact(self) -> bool:
        return all(f.correct for f in self.fields)


def _values(schema: CompiledSchema, record: Mapping[str, Any] | None) -> dict[str, tuple[str, Any]]:
    """path -> (kind, value) of every value of a record; a list or object that is
    empty counts as no value at all (an invoice without line items has 7 values)."""
    return {
        leaf.path: (leaf.field.kind, leaf.value)
        for leaf in leaves(schema.fields, dict(record or {}))
        if not (leaf.value is None and leaf.field.kind in ("list", "object"))
    }


def grade_case(
    case_id: str, expected: Mapping[str, Any], result: Mapping[str, Any] | None, schema: CompiledSchema | None = None
) -> CaseGrade:
    schema = schema or builtin(DEFAULT_SCHEMA)
    wanted = _values(schema, expected)
    error = error_of(result)
    status = str((result or {}).get("status", "error"))
    data = (result or {}).get("data")
    if result is None or error is not None or status == "error" or not isinstance(data, Mapping):
        code, message = error or ("ERROR", "no result")
        grades = [
            FieldGrade(case_id, path, None, want, False, True, None, error=True) for path, (_, want) in wanted.items()
        ]
        return CaseGrade(case_id, "error", grades, error=f"{code}: {message}")
    flagged = {f.get("field") for f in result.get("flagged_fields") or [] if isinstance(f, Mapping)}
    confidence = result.get("field_confidence") or {}
    got_values = _values(schema, data)
    grades = []
    for path in dict.fromkeys([*wanted, *got_values]):
        kind, want = wanted[path] if path in wanted else (got_values[path][0], None)
        got = got_values[path][1] if path in got_values else None
        is_flagged = path in flagged or any(container in flagged for container in ancestors(path))
        grades.append(
            FieldGrade(case_id, path, got, want, values_equal(kind, got, want), is_flagged, confidence.get(path))
        )
    return CaseGrade(case_id, status, grades)


def calibration_table(
    pairs: Iterable[tuple[float, bool]],
    *,
    thresholds: Sequence[float] = THRESHOLDS,
    target_precision: float = DEFAULT_TARGET_PRECISION,
) -> dict[str, Any]:
    """Precision and coverage of the committed fields that would pass at each field
    threshold. `pairs` holds (field confidence, correct) for every committed field."""
    pairs = [(float(c), bool(ok)) for c, ok in pairs if c is not None and math.isfinite(float(c))]
    total = len(pairs)
    table = []
    recommended = None
    for t in thresholds:
        passing = [ok for c, ok in pairs if c >= t - 1e-9]
        correct = sum(passing)
        precision = round(correct / len(passing), 4) if passing else None
        coverage = round(len(passing) / total, 4) if total else 0.0
        table.append(
            {
                "threshold": round(t, 2),
                "precision": precision,
                "coverage": coverage,
                "fields": len(passing),
                "correct": correct,
            }
        )
        if recommended is None and precision is not None and precision >= target_precision - 1e-12:
            recommended = round(t, 2)
    return {"target_precision": target_precision, "recommended_field_threshold": recommended, "table": table}


def _show(value: Any) -> str:
    return "null" if value is None else json.dumps(value, ensure_ascii=False) if isinstance(value, str) else str(value)


@dataclass
class EvalReport:
    examples: int
    field_accuracy: float
    exact_match: float
    needs_review_rate: float
    catch_rate: float
    silent_wrong: int
    false_alarms: int
    failures: list[str]
    calibration: dict[str, Any]
    mode: str = "critic"
    schema: str = DEFAULT_SCHEMA
    cases: list[CaseGrade] = field(default_factory=list, repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {key: getattr(self, key) for key in REPORT_KEYS}

    def gate_failures(
        self, *, min_accuracy: float = DEFAULT_MIN_ACCURACY, max_silent_wrong: int = DEFAULT_MAX_SILENT_WRONG
    ) -> list[str]:
        """Why the gate fails (empty when it passes)."""
        problems = []
        if self.field_accuracy < min_accuracy:
            problems.append(f"field accuracy {self.field_accuracy:.4f} is below {min_accuracy:.4f}")
        if self.silent_wrong > max_silent_wrong:
            problems.append(f"{self.silent_wrong} wrong field(s) went unflagged (allowed: {max_silent_wrong})")
        return problems

    def to_text(self) -> str:
        errors = sum(1 for c in self.cases if c.status == "error")
        wrong = sum(1 for c in self.cases for f in c.fields if not f.correct)
        lines = [
            f"vetq extraction eval, {self.schema} ({self.mode}): {self.examples} examples, "
            f"{sum(len(c.fields) for c in self.cases)} values",
            f"  field accuracy     {self.field_accuracy:.2%}",
            f"  exact match        {self.exact_match:.2%}",
            f"  needs_review rate  {self.needs_review_rate:.2%}",
            f"  catch rate         {self.catch_rate:.2%}  ({wrong} wrong field(s))",
            f"  silent wrong       {self.silent_wrong}",
            f"  false alarms       {self.false_alarms}",
        ]
        if errors:
            lines.append(f"  error results      {errors}")
        cal = self.calibration
        rec = cal["recommended_field_threshold"]
        lines.append("")
        lines.append(
            f"calibration (target precision {cal['target_precision']:.2%}; "
            f"recommended field threshold: {'none reaches it' if rec is None else f'{rec:.2f}'})"
        )
        lines.append("  threshold  precision  coverage  fields")
        for row in cal["table"]:
            precision = "    -    " if row["precision"] is None else f"{row['precision']:9.2%}"
            lines.append(f"  {row['threshold']:9.2f}  {precision}  {row['coverage']:8.2%}  {row['fields']:6d}")
        lines.append("")
        if self.failures:
            lines.append(f"failures ({len(self.failures)}):")
            lines.extend(f"  {line}" for line in self.failures)
        else:
            lines.append("failures: none")
        return "\n".join(lines)


def grade(
    cases: Sequence[Mapping[str, Any]],
    results: Sequence[Mapping[str, Any] | None],
    *,
    target_precision: float = DEFAULT_TARGET_PRECISION,
    mode: str = "critic",
    schema: str = DEFAULT_SCHEMA,
) -> EvalReport:
    """Grade results (in the order of cases) against each case's "expected"."""
    if len(cases) != len(results):
        raise ValueError(f"{len(cases)} case(s) but {len(results)} result(s)")
    compiled = builtin(schema)
    graded = [grade_case(str(c["id"]), c["expected"], r, compiled) for c, r in zip(cases, results, strict=True)]
    all_fields = [f for g in graded for f in g.fields]
    wrong = [f for f in all_fields if not f.correct]
    caught = [f for f in wrong if f.flagged]
    silent = [f for f in wrong if not f.flagged]
    false_alarms = [f for f in all_fields if f.correct and f.flagged]
    failures = []
    for g in graded:
        if g.status == "error":
            failures.append(f"{g.id}: ERROR {g.error} (all {len(g.fields)} values wrong)")
            continue
        for f in g.fields:
            if not f.correct:
                failures.append(
                    f"{g.id} {f.field}: got {_show(f.got)}, expected {_show(f.expected)} "
                    f"({'flagged' if f.flagged else 'SILENT'})"
                )
    pairs = [
        (f.confidence, f.correct)
        for g in graded
        if g.status != "error"
        for f in g.fields
        if f.got is not None and f.confidence is not None
    ]
    n = len(graded)
    return EvalReport(
        examples=n,
        field_accuracy=round(sum(f.correct for f in all_fields) / len(all_fields), 4) if all_fields else 0.0,
        exact_match=round(sum(g.exact for g in graded) / n, 4) if n else 0.0,
        needs_review_rate=round(sum(g.status == "needs_review" for g in graded) / n, 4) if n else 0.0,
        catch_rate=round(len(caught) / len(wrong), 4) if wrong else 1.0,
        silent_wrong=len(silent),
        false_alarms=len(false_alarms),
        failures=failures,
        calibration=calibration_table(pairs, target_precision=target_precision),
        mode=mode,
        schema=schema,
        cases=graded,
    )


# --- running -----------------------------------------------------------------------------
def run_eval(
    *,
    client: Any,
    cases: Sequence[Mapping[str, Any]],
    heuristics_only: bool = False,
    timeout: float = DEFAULT_TIMEOUT_S,
    target_precision: float = DEFAULT_TARGET_PRECISION,
    token_budget: int | None = None,
    schema: str = DEFAULT_SCHEMA,
) -> EvalReport:
    """Submit every case as an extraction job of `schema` through `client` (one
    batch), wait for the results in input order and grade them."""
    cases = list(cases)
    batch = client.submit_batch(
        (
            {
                "kind": "extract",
                "schema": schema,
                "text": c["text"],
                "heuristics_only": heuristics_only,
                "trace_id": f"eval-{c['id']}"[:128],
            }
            for c in cases
        ),
        token_budget=token_budget,
    )
    results = batch.results(timeout=timeout)
    return grade(
        cases,
        results,
        target_precision=target_precision,
        mode="heuristics only" if heuristics_only else "critic",
        schema=schema,
    )


def _parser(prog: str = "python -m vetq.eval.extraction_eval") -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog, description="Grade the extraction golden set through the real queue.")
    p.add_argument("--json", action="store_true", help="print the report as one JSON object")
    p.add_argument(
        "--schema",
        default=DEFAULT_SCHEMA,
        choices=[g.schema for g in golden_sets()],
        help="the built-in schema whose golden set runs (default %(default)s)",
    )
    p.add_argument(
        "--min-accuracy",
        type=float,
        default=DEFAULT_MIN_ACCURACY,
        help="fail (exit 1) below this field accuracy (default %(default)s)",
    )
    p.add_argument(
        "--max-silent-wrong",
        type=int,
        default=DEFAULT_MAX_SILENT_WRONG,
        help="fail (exit 1) with more unflagged wrong fields than this (default %(default)s)",
    )
    p.add_argument("--heuristics-only", action="store_true", help="run with the Critic off")
    p.add_argument(
        "--target-precision",
        type=float,
        default=DEFAULT_TARGET_PRECISION,
        help="precision the recommended field threshold must reach (default %(default)s)",
    )
    p.add_argument("--live", action="store_true", help="use the configured providers instead of the replay fixture")
    p.add_argument("--token-budget", type=int, default=None, help="with --live: a token budget for the run")
    p.add_argument("--record", metavar="PATH", default=None, help="with --live: record the answers into PATH")
    p.add_argument(
        "--dataset",
        metavar="PATH",
        default=None,
        help="JSONL of {id, text, expected} (default: eval/golden/SCHEMA/dataset.jsonl)",
    )
    p.add_argument(
        "--fixture",
        metavar="PATH",
        default=None,
        help="replay fixture of the offline run (default: eval/golden/SCHEMA/replay.json)",
    )
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S, help="seconds to wait for the batch")
    p.add_argument(
        "--rebuild-golden",
        action="store_true",
        help="re-derive dataset.jsonl and re-record replay.json from cases.jsonl for every golden set, then exit",
    )
    from vetq.eval import real_eval

    real = p.add_argument_group(
        "the real-document set (eval/golden/real, both schemas, heuristics only; --dataset names its documents.jsonl)"
    )
    real.add_argument(
        "--real",
        action="store_true",
        help="report false alarms on the real documents' correct records and catch rates on their corruptions",
    )
    real.add_argument(
        "--max-false-alarm-docs",
        type=float,
        default=real_eval.DEFAULT_MAX_FALSE_ALARM_DOCS,
        help="with --real: fail (exit 1) above this share of documents with a false alarm (default %(default)s)",
    )
    real.add_argument(
        "--max-false-alarm-fields",
        type=float,
        default=real_eval.DEFAULT_MAX_FALSE_ALARM_FIELDS,
        help="with --real: fail (exit 1) above this share of correct fields flagged (default %(default)s)",
    )
    real.add_argument(
        "--min-catch",
        type=float,
        default=real_eval.DEFAULT_MIN_CATCH,
        help="with --real: fail (exit 1) below this share of corruptions caught (default %(default)s)",
    )
    real.add_argument(
        "--set",
        dest="real_set",
        choices=tuple(real_eval.REAL_SETS),
        default="tuned",
        help="with --real: `tuned` (eval/golden/real, the set the heuristics were tuned on: a ceiling) or "
        "`heldout` (eval/golden/real_heldout, documents they were never tuned on) (default %(default)s)",
    )
    return p


def main(argv: Sequence[str] | None = None, *, prog: str = "python -m vetq.eval.extraction_eval") -> int:
    """`prog` is the name the usage shows: `vetq eval` when the CLI is the front door."""
    args = _parser(prog).parse_args(argv)
    if args.real:
        from vetq.eval.real_eval import main_real

        return main_real(args)
    golden = GoldenSet(args.schema)

    if args.rebuild_golden:
        from vetq.core.logging import configure_logging

        configure_logging("WARNING")
        for each in golden_sets():
            rows = write_dataset(each)
            recorded = record_replay(each)
            print(f"wrote {each.dataset} ({rows} rows) and recorded {recorded} case(s) into {each.replay}")
        return 0
    if args.record is not None:
        if not args.live:
            print(
                "error: --record records live answers: use it with --live (authored answers are recorded "
                "with `python -m vetq.eval.extraction_eval --rebuild-golden`)",
                file=sys.stderr,
            )
            return 2
        from vetq.core.settings import raw_value

        if raw_value("redis_url"):
            print(
                "error: --record needs the embedded default (unset VETQ_REDIS_URL): remote workers "
                "cannot write this machine's fixture",
                file=sys.stderr,
            )
            return 2
        # Read by the in-process worker when it builds its model clients.
        os.environ["VETQ_RECORD_TO"] = str(Path(args.record).resolve())
    if args.token_budget is not None and not args.live:
        print("error: --token-budget only applies with --live", file=sys.stderr)
        return 2

    dataset = args.dataset or str(golden.dataset)
    try:
        cases = load_jsonl(dataset)
    except (OSError, ValueError) as exc:
        print(f"error: cannot read the dataset {dataset}: {exc}", file=sys.stderr)
        return 2
    bad = [
        str(c.get("id", i))
        for i, c in enumerate(cases)
        if not isinstance(c.get("expected"), dict) or not isinstance(c.get("text"), str)
    ]
    if bad or not cases:
        print(
            f"error: every dataset line needs id, text and expected ({', '.join(bad[:5]) or 'empty'})", file=sys.stderr
        )
        return 2

    if not args.live:
        fixture = Path(args.fixture or golden.replay).resolve()
        # Set before the settings are read: the in-process worker builds its models from them.
        os.environ["VETQ_GENERATOR"] = f"replay:{fixture}"
        os.environ["VETQ_CRITIC"] = f"replay:{fixture}"
        os.environ.setdefault("VETQ_LOG_LEVEL", "WARNING")

    from vetq.api_client.client import Client
    from vetq.core.errors import VetqError
    from vetq.core.logging import configure_logging
    from vetq.core.settings import load_settings

    try:
        settings = load_settings()
    except VetqError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return 2
    configure_logging(settings.log_level)
    if not args.live:
        # Its own embedded Redis and worker: a `vetq up` (or VETQ_REDIS_URL) serving live
        # models must never answer the replayed run.
        settings = settings.model_copy(update={"home": settings.home / "eval", "redis_url": None})

    try:
        with Client(settings=settings) as client:
            report = run_eval(
                client=client,
                cases=cases,
                heuristics_only=args.heuristics_only,
                timeout=args.timeout,
                target_precision=args.target_precision,
                token_budget=args.token_budget,
                schema=args.schema,
            )
    except VetqError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return 2

    if args.json:
        print(json.dumps(report.to_dict(), ensure_ascii=False, indent=2))
    else:
        print(report.to_text())
    problems = report.gate_failures(min_accuracy=args.min_accuracy, max_silent_wrong=args.max_silent_wrong)
    if problems:
        print("GATE FAILED: " + "; ".join(problems), file=sys.stderr)
        return 1
    if not args.json:
        print("\ngate passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
