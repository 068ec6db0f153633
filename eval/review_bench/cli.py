"""`vetq bench review`: the blind-review benchmark (also `python -m vetq.eval.review_bench.cli`).

    vetq bench review                                   # offline, every case, every mode, 1 run
    vetq bench review --modes blind_first,proposal_first --runs 3 --seed 7 --label exp1
    vetq bench review --label exp1 --resume             # continue an interrupted run
    vetq bench review --live --token-budget 2000000 --max-rpm 50 --retries 2 --stop-on-rate-limit
    vetq bench review --ingest-sheet graded.csv --label exp1

Every (case, run, mode) is a `vetq.review` job on the real review queue, served by
an embedded worker (its own Redis under <VETQ_HOME>/bench, response cache off so
runs are independent samples). The mode rides in the `bench_mode` header.

Offline (the default) needs no secret: the worker's reviewer is
`openai:bench-reviewer`, pointed (OPENAI_BASE_URL) at eval.fake_provider running in
this process with `offline_responder`, which answers each phase of each mode with
well-formed JSON chosen deterministically from a hash of (mode, proposal text). The
offline run exercises the whole harness -- queue, modes, prompts, checkpoint,
metrics -- but its numbers measure no model. --live uses VETQ_REVIEWER.

Output in <out>/<label>/: checkpoint.jsonl, report.json, report.md,
human_sheet.csv, human_sheet_key.json. Exit codes: 0 done; 2 usage error, an
existing checkpoint without --resume/--fresh, or a header that differs on --resume
(the differing fields are named); 3 stopped early (rate limited or out of token
budget) -- rerun with --resume.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

DEFAULT_OUT = "eval/review_runs"
OFFLINE_MODEL = "openai:bench-reviewer"
OFFLINE_RESPONDER_VERSION = "offline-v1"
EXIT_OK, EXIT_USAGE, EXIT_STOPPED = 0, 2, 3

# ---------------------------------------------------------------- offline answers

_MODE_MARKERS = (
    ("PHASE 1 OF 2", "position"),
    ("SECOND PASS: RECONSIDER", "proposal_first_2pass"),
    ("PHASE 2 OF 2", "blind_first"),
    ("COMPARE AN INDEPENDENT POSITION", "independent_only"),
    ("JUDGE THE DECISION", "decision_judge"),
    ("REVIEW THE PROPOSED SOLUTION", "proposal_first"),
)
# Cumulative thresholds of the simulated verdict distribution.
_VERDICT_CUTS = ((0.45, "KEEP"), (0.75, "MODIFY"), (0.90, "REPLACE"), (1.01, "INSUFFICIENT_EVIDENCE"))


def _between(text: str, tag: str) -> str | None:
    start, end = text.rfind(f"<{tag}>"), text.rfind(f"</{tag}>")
    return text[start + len(tag) + 2 : end].strip() if 0 <= start < end else None


def _unit(*parts: str) -> float:
    digest = hashlib.sha256("\x1f".join(parts).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def offline_responder(path: str, body: dict[str, Any]) -> str:
    """A deterministic stand-in reviewer for the fake provider (OpenAI chat shape)."""
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    user_texts = [str(m.get("content") or "") for m in messages if m.get("role") == "user"]
    last = user_texts[-1] if user_texts else ""
    kind = next((name for marker, name in _MODE_MARKERS if marker in last), "proposal_first")
    if kind == "position":
        objective = _between(last, "objective") or ""
        u = _unit("position", objective)
        return json.dumps(
            {
                "assumptions": ["the stated constraints are complete"],
                "directions": [
                    {
                        "name": "incremental",
                        "summary": "change the smallest part that meets the objective",
                        "pros": ["low risk"],
                        "cons": ["may not reach the goal"],
                    },
                    {
                        "name": "rework",
                        "summary": "redesign the part that causes the problem",
                        "pros": ["addresses the cause"],
                        "cons": ["cost and time"],
                    },
                ],
                "failure_modes": ["an irreversible step without a rollback", "a safeguard skipped under time pressure"],
                "preferred_solution": "incremental" if u < 0.5 else "rework",
                "assumptions_to_test": ["the environment matches the description"],
            }
        )
    proposal = next((p for p in (_between(t, "proposed_solution") for t in reversed(user_texts)) if p), "")
    u = _unit(kind, proposal)
    verdict = next(v for cut, v in _VERDICT_CUTS if u < cut)
    return json.dumps(
        {
            "verdict": verdict,
            # Never name the mode here: the human sheet must not reveal it.
            "recommendation": f"Offline simulated answer: {verdict.lower().replace('_', ' ')}.",
            "critical_assumptions": ["the description of the environment is accurate"],
            "material_risks": [] if verdict == "KEEP" else ["a failure mode named in the review is not handled"],
            "better_alternative": None
            if verdict in ("KEEP", "INSUFFICIENT_EVIDENCE")
            else "address the named risk first",
            "falsification_probe": {
                "description": "try the change on a staging copy",
                "expected_signal": "the named failure does or does not occur",
            },
            "confidence": round(0.5 + 0.4 * u, 3),
        }
    )


# ---------------------------------------------------------------- arguments


def _csv(value: str) -> list[str]:
    items = [v.strip() for v in value.split(",") if v.strip()]
    if not items:
        raise argparse.ArgumentTypeError("give at least one name")
    return list(dict.fromkeys(items))


def _positive(value: str) -> int:
    number = int(value)
    if number < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return number


def _non_negative(value: str) -> int:
    number = int(value)
    if number < 0:
        raise argparse.ArgumentTypeError("must be 0 or more")
    return number


def parser() -> argparse.ArgumentParser:
    from vetq.core.review.modes import MODES

    p = argparse.ArgumentParser(prog="vetq bench review", description="The blind-review benchmark.")
    p.add_argument("--runs", type=_positive, default=1, help="runs of every (case, mode) (default 1)")
    p.add_argument("--seed", type=int, default=0, help="seed of the mode order and the bootstrap (default 0)")
    p.add_argument("--modes", type=_csv, default=list(MODES), help=f"comma-separated, of {', '.join(MODES)}")
    p.add_argument("--only", type=_csv, default=None, help="comma-separated case ids")
    p.add_argument("--label", default="default", help="name of the run's directory under --out")
    p.add_argument("--out", default=DEFAULT_OUT, help=f"output directory (default {DEFAULT_OUT})")
    p.add_argument("--cases", default=None, help="case directory (default eval/review_cases)")
    p.add_argument("--max-rpm", type=_positive, default=None, help="fleet limit of the reviewer (requests/minute)")
    p.add_argument("--token-budget", type=_positive, default=None, help="token cap of the whole run")
    p.add_argument("--retries", type=_non_negative, default=1, help="re-sends of a transient failure (default 1)")
    p.add_argument("--stop-on-rate-limit", action="store_true", help="stop (resumably) when still rate limited")
    p.add_argument("--resume", action="store_true", help="continue the label's checkpoint")
    p.add_argument("--fresh", action="store_true", help="discard the label's checkpoint and start over")
    p.add_argument("--live", action="store_true", help="use the configured VETQ_REVIEWER (costs tokens)")
    p.add_argument("--max-in-flight", type=_positive, default=8, help="jobs queued at once (default 8)")
    p.add_argument("--job-timeout", type=float, default=900.0, help="seconds to wait for one job")
    p.add_argument("--ingest-sheet", metavar="FILE", default=None, help="merge a graded human sheet into --label")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    return p


# ---------------------------------------------------------------- environment


def _limits_with(existing: str, model: str, rpm: int) -> str:
    from vetq.core.llm.limits import parse_limits

    kept = [
        f"{k}={','.join(p for p in ([f'{v.rpm}rpm'] if v.rpm else []) + ([f'{v.tpm}tpm'] if v.tpm else []))}"
        for k, v in parse_limits(existing).items()
        if k != model
    ]
    return ";".join([*kept, f"{model}={rpm}rpm"])


@contextmanager
def _environment(values: dict[str, str]) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@contextmanager
def _offline_provider(enabled: bool) -> Iterator[Any]:
    if not enabled:
        yield None
        return
    from vetq.eval.fake_provider import FakeProvider

    with FakeProvider() as fake:
        fake.set_responder(offline_responder)
        yield fake


# ---------------------------------------------------------------- header


def build_header(
    args: argparse.Namespace, cases: Sequence[dict[str, Any]], *, model: str, settings: Any
) -> dict[str, Any]:
    from vetq.core.prompts import BENCH_PROMPTS, REVIEW_PROMPTS
    from vetq.core.review.schema import ReviewConfig
    from vetq.core.review.service import config_from_settings
    from vetq.eval.review_bench.cases import case_set_hash
    from vetq.eval.review_bench.metrics import analysis_plan
    from vetq.eval.review_bench.runner import HEADER_VERSION, git_commit

    config: ReviewConfig = config_from_settings(settings)
    return {
        "kind": "header",
        "version": HEADER_VERSION,
        "label": args.label,
        "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "model": model,
        "live": bool(args.live),
        "offline_responder": None if args.live else OFFLINE_RESPONDER_VERSION,
        "parameters": config.model_dump(mode="json"),
        "budgets": {"token_budget": args.token_budget},
        "modes": list(args.modes),
        "runs": args.runs,
        "seed": args.seed,
        "only": list(args.only) if args.only else None,
        "cases": len(cases),
        "case_set_hash": case_set_hash(cases),
        "prompt_hashes": REVIEW_PROMPTS.hashes(),
        "bench_prompt_hashes": BENCH_PROMPTS.hashes(),
        "git_commit": git_commit(),
        "analysis_plan": analysis_plan(list(args.modes), args.seed),
        "execution": {
            "retries": args.retries,
            "stop_on_rate_limit": bool(args.stop_on_rate_limit),
            "max_rpm": args.max_rpm,
            "max_in_flight": args.max_in_flight,
        },
    }


# ---------------------------------------------------------------- main


def _err(message: str) -> None:
    print(f"error: {message}", file=sys.stderr)


def main(argv: Sequence[str] | None = None, *, client: Any = None, model: str | None = None) -> int:
    """Run the benchmark. `client` (tests) is a ready api_client Client whose workers
    already serve the review queue; `model` then names their reviewer."""
    args = parser().parse_args(list(argv) if argv is not None else None)
    from vetq.core.review.modes import MODES

    unknown = [m for m in args.modes if m not in MODES]
    if unknown:
        _err(f"unknown mode(s) {', '.join(unknown)}; choose from {', '.join(MODES)}")
        return EXIT_USAGE
    if args.resume and args.fresh:
        _err("--resume and --fresh exclude each other")
        return EXIT_USAGE
    directory = Path(args.out) / args.label

    if args.ingest_sheet:
        from vetq.eval.review_bench.report import SheetError, ingest_sheet

        try:
            human = ingest_sheet(directory, Path(args.ingest_sheet))
        except (SheetError, OSError, ValueError) as exc:
            _err(str(exc))
            return EXIT_USAGE
        print(f"merged {human['graded']} grade(s) into {directory / 'report.json'}")
        return EXIT_OK

    from vetq.eval.review_bench.cases import CaseError, load_cases

    try:
        cases = load_cases(args.cases, only=args.only)
    except CaseError as exc:
        _err(str(exc))
        return EXIT_USAGE

    if client is not None:
        return _run(args, cases, directory, client=client, model=model or "unknown", settings=client.settings)

    offline = not args.live
    env: dict[str, str] = {}
    if offline:
        env.update({"VETQ_REVIEWER": OFFLINE_MODEL, "OPENAI_API_KEY": "offline-bench-no-secret"})
    from vetq.core.settings import raw_value

    if raw_value("log_level") is None:
        env["VETQ_LOG_LEVEL"] = "ERROR"  # the worker's warnings would drown the output
    with _offline_provider(offline) as fake:
        if fake is not None:
            env["OPENAI_BASE_URL"] = fake.base_url_openai
        with _environment(env):
            from vetq.api_client.client import Client
            from vetq.core.errors import VetqError
            from vetq.core.settings import load_settings

            try:
                settings = load_settings()
                reviewer = settings.reviewer
                if args.max_rpm is not None:
                    os.environ["VETQ_LIMITS"] = _limits_with(settings.limits, reviewer, args.max_rpm)
                    settings = load_settings()
            except VetqError as exc:
                _err(exc.message)
                return EXIT_USAGE
            # Its own embedded Redis and worker (never a running fleet), and no
            # response cache: every run must be a new sample.
            settings = settings.model_copy(
                update={"home": settings.home / "bench", "redis_url": None, "cache_ttl_s": 0, "bench_modes": True}
            )
            try:
                with Client(settings=settings) as own_client:
                    return _run(args, cases, directory, client=own_client, model=reviewer, settings=settings)
            except VetqError as exc:
                _err(exc.message)
                return EXIT_USAGE
            finally:
                if args.max_rpm is not None:
                    os.environ.pop("VETQ_LIMITS", None)


def _run(
    args: argparse.Namespace, cases: list[dict[str, Any]], directory: Path, *, client: Any, model: str, settings: Any
) -> int:
    from vetq.eval.review_bench.report import build_report, write_human_sheet, write_report
    from vetq.eval.review_bench.runner import (
        CHECKPOINT_NAME,
        Checkpoint,
        CheckpointError,
        execute,
        plan_items,
    )

    header = build_header(args, cases, model=model, settings=settings)
    checkpoint = Checkpoint(directory / CHECKPOINT_NAME)
    try:
        previous = checkpoint.open(header, resume=args.resume, fresh=args.fresh)
    except CheckpointError as exc:
        _err(str(exc))
        return EXIT_USAGE
    done = {r["key"] for r in previous}
    items = [i for i in plan_items([c["id"] for c in cases], args.modes, args.runs, args.seed) if i.key not in done]
    spent = sum(int(r.get("tokens") or 0) for r in previous)
    budget_left = None if args.token_budget is None else args.token_budget - spent
    if previous:
        print(f"resuming: {len(previous)} finished item(s) reused, {len(items)} to run")
    progress = None if args.quiet else (lambda line: print(line, file=sys.stderr))
    result = (
        execute(
            client,
            {c["id"]: c for c in cases},
            items,
            checkpoint,
            label=args.label,
            token_budget=budget_left,
            retries=args.retries,
            stop_on_rate_limit=args.stop_on_rate_limit,
            max_in_flight=args.max_in_flight,
            job_timeout_s=args.job_timeout,
            progress=progress,
        )
        if items
        else None
    )
    stopped = result.stopped if result is not None else None
    records = [*previous, *(result.records if result is not None else [])]
    report = build_report(header, records, cases, stopped=stopped)
    report["this_invocation"] = {
        "sent": result.sent if result else 0,
        "finished": result.finished if result else 0,
        "retried": result.retried if result else 0,
        "reused": len(previous),
    }
    write_report(directory, report)
    write_human_sheet(directory, records, cases, seed=args.seed)
    _print_summary(report, directory)
    if stopped:
        print(f"stopped early: {stopped}. Rerun with --resume --label {args.label} to continue.", file=sys.stderr)
        return EXIT_STOPPED
    return EXIT_OK


def _print_summary(report: dict[str, Any], directory: Path) -> None:
    print(f"review benchmark {report['header']['label']}: {report['finished']}/{report['planned']} finished")
    for mode, stats in report["modes"].items():
        acc = stats["decision_accuracy_strict"]
        shown = "–" if acc["rate"] is None else f"{acc['rate']:.2f} [{acc['ci95'][0]:.2f}, {acc['ci95'][1]:.2f}]"
        print(f"  {mode:22s} accuracy(strict) {shown}  tokens(mean) {stats['tokens']['mean']}")
    for c in report["comparisons"]:
        if c["metric"] == "decision_accuracy_strict":
            print(f"  {c['a']} - {c['b']}: {c['diff']} -> {c['label']}")
    print(f"report: {directory / 'report.md'}")


if __name__ == "__main__":
    sys.exit(main())
