"""The `vetq` command line. JSON on stdout, logs on stderr.

Exit codes: 0 ok, 1 needs_review, 2 usage, input or configuration error (an unknown
job id included), 3 pipeline, provider or service error (Redis unreachable, or an
unexpected failure: INTERNAL_ERROR), or a canceled job's result (it has no answer).
Nothing but a needs_review result exits 1.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import IO, Any

from vetq.core import __version__
from vetq.core.errors import ConfigError, ErrorCode, VetqError
from vetq.core.results import error_of, error_result

EXIT_OK, EXIT_NEEDS_REVIEW, EXIT_INPUT, EXIT_PIPELINE = 0, 1, 2, 3
INPUT_ERRORS = {
    ErrorCode.INVALID_INPUT.value,
    ErrorCode.BLINDNESS_LEAK.value,
    ErrorCode.NOT_FOUND.value,
    ErrorCode.IDEMPOTENCY_CONFLICT.value,
    ErrorCode.CONFLICT.value,
    ErrorCode.SCHEMA_INVALID.value,
    ErrorCode.SCHEMA_MISMATCH.value,
    ErrorCode.UNSUPPORTED_DOCUMENT.value,
}
EXIT_CODES_TEXT = (
    "Exit codes: 0 ok, 1 needs_review, 2 usage, input or configuration error (an unknown job id included), "
    "3 pipeline, provider or service error (Redis unreachable; INTERNAL_ERROR), or a canceled job's result."
)


def exit_code_for(result: dict[str, Any]) -> int:
    error = error_of(result)
    if error is not None:
        return EXIT_INPUT if error[0] in INPUT_ERRORS else EXIT_PIPELINE
    return EXIT_NEEDS_REVIEW if result.get("status") == "needs_review" else EXIT_OK


def emit(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def fail(code: ErrorCode, message: str, exit_code: int) -> int:
    emit(error_result(code, message))
    return exit_code


def _read_bytes(path: str | None) -> bytes:
    if path and path != "-":
        try:
            with open(path, "rb") as handle:
                return handle.read()
        except OSError as exc:
            raise VetqError(
                f"cannot read {path}: {exc.__class__.__name__}: {exc}", code=ErrorCode.INVALID_INPUT
            ) from None
    if sys.stdin is None or sys.stdin.isatty():
        raise VetqError("no input: pass --file FILE or pipe the document on stdin", code=ErrorCode.INVALID_INPUT)
    stdin_bytes = getattr(sys.stdin, "buffer", None)
    if stdin_bytes is None:  # stdin replaced by a text stream (an embedding host, tests)
        return sys.stdin.read().encode("utf-8", "surrogateescape")
    return bytes(stdin_bytes.read())


def read_text(path: str | None) -> str:
    """The document from --file or stdin, by one rule for both: UTF-8 or refused,
    a leading BOM dropped (core.validation.decode_utf8)."""
    from vetq.core.validation import decode_utf8

    return decode_utf8(_read_bytes(path), what=path if path and path != "-" else "stdin")


def read_document(path: str | None) -> dict[str, Any]:
    """The document from --file or stdin as a request's `text`, or as its `pdf` when
    the bytes start with %PDF- (by the magic, whatever the file is called). A PDF file
    goes by path, so the client refuses one over VETQ_MAX_PDF_BYTES by its size before
    reading it; the worker converts it."""
    from pathlib import Path

    from vetq.core.documents.input import PDF_MAGIC, is_pdf

    if path and path != "-":
        try:
            with open(path, "rb") as handle:
                head = handle.read(len(PDF_MAGIC))
        except OSError as exc:
            raise VetqError(
                f"cannot read {path}: {exc.__class__.__name__}: {exc}", code=ErrorCode.INVALID_INPUT
            ) from None
        if is_pdf(head):
            return {"pdf": Path(path)}
        return {"text": read_text(path)}
    raw = _read_bytes(path)
    if is_pdf(raw):
        return {"pdf": raw}
    from vetq.core.validation import decode_utf8

    return {"text": decode_utf8(raw, what="stdin")}


def _threshold(value: str) -> float:
    import math

    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number") from None
    if not math.isfinite(number) or not 0.0 <= number <= 1.0:
        raise argparse.ArgumentTypeError(f"{value!r} must be a number from 0 to 1")
    return number


def _positive_int(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number") from None
    if number < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return number


def _number(value: str) -> float:
    try:
        return float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number") from None


BUDGET_USD_HELP = (
    "the most the job's model calls may cost, in US dollars (at the workers' prices; VETQ_PRICES); "
    "a call that does not fit is not made (BUDGET_EXCEEDED)"
)


def _check_budget_usd(args: argparse.Namespace) -> None:
    """--budget-usd checked before anything starts: INVALID_INPUT naming it."""
    from vetq.core.llm.prices import check_budget_usd

    check_budget_usd(args.budget_usd, name="--budget-usd")


def _add_submit_options(parser: argparse.ArgumentParser) -> None:
    """The options every submit takes (core.job_options): lane, priority, tenant, callback, key."""
    parser.add_argument(
        "--bulk",
        action="store_true",
        help="run on the bulk lane: the providers' Batch APIs, the same result within 24 h at the batch price",
    )
    parser.add_argument(
        "--bulk-deadline",
        metavar="WHEN",
        help="with --bulk: when the answers are due, an ISO 8601 time or a duration such as 6h or 90m (within 24 h)",
    )
    parser.add_argument(
        "--realtime-fallback",
        action="store_true",
        help="with --bulk: past the deadline, ask the realtime lane (at its price) instead of failing TIMEOUT",
    )
    parser.add_argument("--priority", metavar="LEVEL", help="high, normal (default) or low")
    parser.add_argument("--tenant", help="the customer the job runs for: 1 to 64 of a-z, 0-9, _ and -")
    parser.add_argument("--callback-url", metavar="URL", help="POST the final result here, signed (README, Webhooks)")
    parser.add_argument(
        "--idempotency-key",
        metavar="KEY",
        help="submitting again with the same key gives the same job (a batch line carries its own)",
    )


def _job_options(args: argparse.Namespace, *, batch: bool = False) -> dict[str, Any]:
    """The options of a submit, checked before anything starts: INVALID_INPUT naming them."""
    from vetq.core.job_options import job_options

    lane = "bulk" if args.bulk else None
    if not args.bulk and (args.bulk_deadline or args.realtime_fallback):
        raise VetqError("--bulk-deadline and --realtime-fallback need --bulk", code=ErrorCode.INVALID_INPUT)
    if batch and args.idempotency_key is not None:
        raise VetqError(
            'with --batch each line carries its own "idempotency_key", not --idempotency-key',
            code=ErrorCode.INVALID_INPUT,
        )
    options = {
        "lane": lane,
        "bulk_deadline": args.bulk_deadline,
        "realtime_fallback": args.realtime_fallback,
        "priority": args.priority,
        "tenant": args.tenant,
        "callback_url": args.callback_url,
    }
    if not batch:
        options["idempotency_key"] = args.idempotency_key
    job_options(**options)
    return options


def _positive_float(value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number") from None
    if not number > 0:
        raise argparse.ArgumentTypeError("must be greater than 0")
    return number


class _Parser(argparse.ArgumentParser):
    """Usage errors exit 2 with the message on stderr, like every vetq input error."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        sys.stderr.write(f"vetq: error: {message}\n")
        raise SystemExit(EXIT_INPUT)


def _add_job_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--file",
        "-f",
        help="read the document from FILE (default: stdin): text (UTF-8), or a PDF (by its %%PDF- magic)",
    )
    parser.add_argument(
        "--schema",
        help="the record's schema: a built-in's name (see `vetq schemas list`; default invoice) or a schema file "
        '(.yaml, .yml, .json); with --batch, a line\'s own "schema" wins',
    )
    parser.add_argument("--field-threshold", type=_threshold, help="flag fields below this confidence (0-1)")
    parser.add_argument("--overall-threshold", type=_threshold, help="needs_review below this overall confidence (0-1)")
    parser.add_argument("--heuristics-only", action="store_true", help="skip the Critic: deterministic checks only")
    parser.add_argument(
        "--no-wait", action="store_true", help="print the job id (with --batch, the batch id) and return at once"
    )
    parser.add_argument("--batch", action="store_true", help="JSONL in, one JSON result per line out, in input order")
    parser.add_argument(
        "--timeout",
        type=_positive_float,
        help="seconds to wait for the result; with --batch, the longest wait for the next one, so a long batch "
        "that keeps finishing jobs never times out (default VETQ_WAIT_TIMEOUT_S)",
    )
    parser.add_argument("--token-budget", type=_positive_int, help="with --batch: tokens the whole batch may spend")
    parser.add_argument(
        "--budget-usd", type=_number, metavar="USD", help=f"{BUDGET_USD_HELP}; with --batch, the whole batch's"
    )
    _add_submit_options(parser)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="vetq",
        description="vetq: LLM jobs that check their own work. Extraction that verifies itself and "
        "blind-first decision review, on Celery + Redis.",
        epilog=f"{EXIT_CODES_TEXT} VETQ_REDIS_URL unset means the embedded default (vetq's own Redis and an in-process worker).",
    )
    parser.add_argument("--version", action="version", version=f"vetq {__version__}")
    verbs = parser.add_subparsers(dest="verb", metavar="COMMAND", parser_class=_Parser)

    extract = verbs.add_parser(
        "extract",
        help="extract a verified record (an invoice, or --schema) from a document",
        description="Submit an extraction job, wait, print the result envelope.",
    )
    _add_job_flags(extract)
    extract.set_defaults(handler=cmd_extract)

    validate = verbs.add_parser(
        "validate",
        help="verify a record you already have against its document",
        description="Submit a validation job (no Generator), wait, print the result.",
    )
    _add_job_flags(validate)
    validate.add_argument("--data", help="the record as a JSON object (required unless --batch)")
    validate.set_defaults(handler=cmd_validate)

    schemas = verbs.add_parser("schemas", help="the built-in schemas, and checking a schema file of your own")
    schemas.set_defaults(verb_parser=schemas)
    schema_verbs = schemas.add_subparsers(dest="schemas_verb", metavar="ACTION", parser_class=_Parser)
    schemas_list = schema_verbs.add_parser("list", help="the built-in schemas")
    schemas_list.set_defaults(handler=cmd_schemas_list)
    schemas_show = schema_verbs.add_parser("show", help="a schema as vetq reads it (a built-in's name or a file)")
    schemas_show.add_argument("schema")
    schemas_show.set_defaults(handler=cmd_schemas_show)
    schemas_check = schema_verbs.add_parser("check", help="check a schema file; exit 2 naming what is wrong")
    schemas_check.add_argument("file")
    schemas_check.set_defaults(handler=cmd_schemas_check)

    status = verbs.add_parser(
        "status",
        help="a job's status: queued, running, retrying, waiting, canceling, done, failed or canceled",
    )
    status.add_argument("job_id")
    status.set_defaults(handler=cmd_status)

    cancel = verbs.add_parser(
        "cancel",
        help="cancel jobs: one JSON line per id (exit 2 if an id is unknown)",
        description="A queued or parked job ends canceled now; a running one stops before its next model "
        'call; a finished one is left as it is ("canceled": false).',
    )
    cancel.add_argument("job_ids", nargs="+", metavar="JOB_ID")
    cancel.set_defaults(handler=cmd_cancel)

    result = verbs.add_parser("result", help="wait for a job's result and print it")
    result.add_argument("job_id")
    result.add_argument("--timeout", type=_positive_float, help="seconds to wait (default VETQ_WAIT_TIMEOUT_S)")
    result.add_argument(
        "--until",
        choices=("reviewed",),
        help="reviewed: wait past a needs_review result for the one a person resolves in the inbox",
    )
    result.set_defaults(handler=cmd_result)

    worker = verbs.add_parser("worker", help="run a worker against VETQ_REDIS_URL in the foreground")
    worker.add_argument("--queues", default="extract,review", help="comma-separated queues (default extract,review)")
    worker.add_argument("--concurrency", type=_positive_int, default=None, help="parallel jobs (default: CPU count)")
    worker.add_argument("--pool", choices=("prefork", "threads", "solo"), default="prefork")
    worker.set_defaults(handler=cmd_worker)

    review = verbs.add_parser(
        "review",
        help="blind-first review of an engineering decision",
        description="Submit a review request (JSON: objective, constraints, context, "
        "proposed_solution, decision_type, risk_level, ...), wait, print the verdict. "
        "Describe the problem in the blind fields and the plan only in proposed_solution.",
    )
    review.add_argument("--file", "-f", help="the request as a JSON file (default: stdin)")
    review.add_argument("--mode", choices=("blind_first", "proposal_first"), help="override review_mode")
    review.add_argument("--no-wait", action="store_true", help="print the job id and return at once")
    review.add_argument("--timeout", type=_positive_float, help="seconds to wait (default VETQ_WAIT_TIMEOUT_S)")
    review.add_argument("--budget-usd", type=_number, metavar="USD", help=BUDGET_USD_HELP)
    _add_submit_options(review)
    review.set_defaults(handler=cmd_review)

    gate = verbs.add_parser(
        "should-review",
        help="does this decision deserve a review? (deterministic, no model)",
        description="Read a JSON object (decision_type, risk_level, summary, counts, flags) "
        "and print {should_review, reasons}.",
    )
    gate.add_argument("--file", "-f", help="the JSON input (default: stdin)")
    gate.set_defaults(handler=cmd_should_review)

    outcome = verbs.add_parser("outcome", help="record what became of a review (VETQ_TELEMETRY=on)")
    outcome.add_argument("review_id")
    outcome.add_argument("--accepted", type=_bool, help="was the review's advice taken? (true/false)")
    outcome.add_argument("--rework", type=_bool, help="was rework needed later? (true/false)")
    outcome.add_argument("--useful", type=_bool, help="was the review useful? (true/false)")
    outcome.set_defaults(handler=cmd_outcome)

    telemetry = verbs.add_parser("telemetry", help="review telemetry")
    telemetry.set_defaults(verb_parser=telemetry)
    telemetry_verbs = telemetry.add_subparsers(dest="telemetry_verb", metavar="ACTION", parser_class=_Parser)
    export = telemetry_verbs.add_parser("export", help="write every telemetry record as JSONL")
    export.add_argument("--out", help="file to write (default: stdout)")
    export.set_defaults(handler=cmd_telemetry_export)

    mcp = verbs.add_parser(
        "mcp",
        help="serve vetq's jobs as MCP tools over stdio (Claude Desktop, Cursor, ...)",
        description="An MCP server on stdin/stdout. Nothing but the protocol goes to stdout; logs go to stderr.",
    )
    mcp.set_defaults(handler=cmd_mcp)

    evaluate = verbs.add_parser(
        "eval",
        help="grade extraction on the golden set through the queue",
        description="The extraction eval (see vetq eval --help).",
        add_help=False,
    )
    evaluate.add_argument("eval_args", nargs=argparse.REMAINDER)
    evaluate.set_defaults(handler=cmd_eval)

    bench = verbs.add_parser("bench", help="benchmarks: `vetq bench review`")
    bench.set_defaults(verb_parser=bench)
    bench_verbs = bench.add_subparsers(dest="bench_verb", metavar="BENCHMARK", parser_class=_Parser)
    bench_review = bench_verbs.add_parser("review", help="the blind-review benchmark", add_help=False)
    bench_review.add_argument("bench_args", nargs=argparse.REMAINDER)
    bench_review.set_defaults(handler=cmd_bench_review)

    batch = verbs.add_parser("batch", help="a batch submitted earlier (--batch): its status and its results")
    batch.set_defaults(verb_parser=batch)
    batch_verbs = batch.add_subparsers(dest="batch_verb", metavar="ACTION", parser_class=_Parser)
    batch_status = batch_verbs.add_parser(
        "status", help="jobs done, failed and waiting; each provider batch of the bulk lane with its counts"
    )
    batch_status.add_argument("batch_id")
    batch_status.set_defaults(handler=cmd_batch_status)
    batch_results = batch_verbs.add_parser("results", help="wait for a batch's results; JSONL in input order")
    batch_results.add_argument("batch_id")
    batch_results.add_argument("--timeout", type=_positive_float, help="seconds to wait (default VETQ_WAIT_TIMEOUT_S)")
    batch_results.set_defaults(handler=cmd_batch_results)
    batch_cancel = batch_verbs.add_parser("cancel", help="cancel every job of a batch not finished yet")
    batch_cancel.add_argument("batch_id")
    batch_cancel.set_defaults(handler=cmd_batch_cancel)

    dead = verbs.add_parser("dead", help="messages refused by the workers (dead letters)")
    dead.set_defaults(verb_parser=dead)
    dead_verbs = dead.add_subparsers(dest="dead_verb", metavar="ACTION", parser_class=_Parser)
    dead_list = dead_verbs.add_parser("list", help="show the dead-letter list")
    dead_list.add_argument("--limit", type=_positive_int, default=100, help="how many entries (newest first)")
    dead_list.set_defaults(handler=cmd_dead_list)
    dead_redeliver = dead_verbs.add_parser(
        "redeliver", help="send a job's undelivered webhooks again, as they were (once the receiver is fixed)"
    )
    dead_redeliver.add_argument("job_ids", nargs="+", metavar="JOB_ID")
    dead_redeliver.set_defaults(handler=cmd_dead_redeliver)

    usage = verbs.add_parser(
        "usage", help="each tenant's model use per budget window (VETQ_TENANT_WINDOW_S) and what its budgets have left"
    )
    usage.add_argument("--tenant", help="this tenant only (a line even when it used nothing)")
    usage.add_argument(
        "--windows", type=_positive_int, default=1, help="how many windows, the current one first (default 1)"
    )
    usage.set_defaults(handler=cmd_usage)

    metrics = verbs.add_parser("metrics", help="Prometheus metrics: `vetq metrics serve`, the fleet's gauges")
    metrics.set_defaults(verb_parser=metrics)
    metrics_verbs = metrics.add_subparsers(dest="metrics_verb", metavar="ACTION", parser_class=_Parser)
    metrics_serve = metrics_verbs.add_parser(
        "serve",
        help="serve the fleet's gauges (queue depths, live workers, dead letters, bulk lane) read from Redis",
    )
    metrics_serve.add_argument("--port", type=_port, default=9465, help="port to listen on (default 9465)")
    metrics_serve.add_argument("--address", help="address to listen on (default VETQ_METRICS_ADDRESS, 127.0.0.1)")
    metrics_serve.set_defaults(handler=cmd_metrics_serve)

    inbox = verbs.add_parser(
        "inbox", help="the human-review inbox: needs_review results a person confirms or corrects (vetq[inbox])"
    )
    inbox.set_defaults(verb_parser=inbox)
    inbox_verbs = inbox.add_subparsers(dest="inbox_verb", metavar="ACTION", parser_class=_Parser)
    inbox_migrate = inbox_verbs.add_parser(
        "migrate", help="bring the inbox's database (VETQ_INBOX_URL) to this release's tables"
    )
    inbox_migrate.set_defaults(handler=cmd_inbox, inbox_run="run_migrate")
    inbox_reviewer = inbox_verbs.add_parser(
        "add-reviewer", help="add a reviewer and print their sign-in token (shown once)"
    )
    inbox_reviewer.add_argument("name", help="the reviewer's name: letters, digits and . _ @ -")
    inbox_reviewer.set_defaults(handler=cmd_inbox, inbox_run="run_add_reviewer")
    inbox_sync = inbox_verbs.add_parser(
        "sync",
        help="take the workers' needs_review results into items and write reviewed results still pending "
        "(`vetq inbox serve` does this itself)",
    )
    inbox_sync.add_argument("--follow", action="store_true", help="keep syncing until stopped")
    inbox_sync.set_defaults(handler=cmd_inbox, inbox_run="run_sync")
    inbox_export = inbox_verbs.add_parser(
        "export", help="write resolved items as golden examples (vetq eval), Label Studio tasks or Argilla records"
    )
    export_to = inbox_export.add_mutually_exclusive_group(required=True)
    export_to.add_argument("--golden", metavar="FILE", help="JSONL of {id, text, expected, machine, mistakes}")
    export_to.add_argument("--label-studio", metavar="FILE", help="Label Studio's JSON import")
    export_to.add_argument("--argilla", metavar="FILE", help="Argilla records, JSON lines")
    inbox_export.add_argument("--schema", help="only items of this schema (--golden needs one schema)")
    inbox_export.set_defaults(handler=cmd_inbox, inbox_run="run_export")
    inbox_serve = inbox_verbs.add_parser("serve", help="serve the review page (reviewers sign in with their token)")
    inbox_serve.add_argument("--address", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    inbox_serve.add_argument("--port", type=_port, default=8470, help="port to listen on (default 8470)")
    inbox_serve.add_argument(
        "--secure-cookies", action="store_true", help="mark the session cookie Secure (behind an HTTPS proxy)"
    )
    inbox_serve.set_defaults(handler=cmd_inbox, inbox_run="run_serve")
    inbox_list = inbox_verbs.add_parser("list", help="items, highest priority then oldest first (JSON lines)")
    inbox_list.add_argument("--state", choices=("open", "resolved"), default="open")
    inbox_list.add_argument("--schema", help="only items of this schema")
    inbox_list.add_argument("--tenant", help="only items of this tenant")
    inbox_list.add_argument("--field", help="only items with this field flagged (total, line_items[].amount)")
    inbox_list.add_argument("--limit", type=_positive_int, default=100)
    inbox_list.set_defaults(handler=cmd_inbox, inbox_run="run_list")

    calibrate = verbs.add_parser(
        "calibrate",
        help="field thresholds from the inbox's resolved items, at a target precision (Wilson lower bound)",
    )
    calibrate.add_argument("--target-precision", type=_threshold, default=0.99, help="default 0.99")
    calibrate.add_argument("--schema", help="only this schema")
    calibrate.add_argument(
        "--min-field-values", type=_positive_int, help="a field gets its own threshold only with this many values"
    )
    calibrate.add_argument("--write", metavar="FILE", help="write the thresholds file VETQ_FIELD_THRESHOLDS reads")
    calibrate.set_defaults(handler=cmd_inbox, inbox_run="run_calibrate")

    doctor = verbs.add_parser("doctor", help="check a deployment and name each problem found")
    doctor.add_argument("--timeout", type=_positive_float, default=2.0, help="seconds to wait for worker replies")
    doctor.set_defaults(handler=cmd_doctor)

    up = verbs.add_parser("up", help="run the embedded Redis and N workers in the foreground")
    up.add_argument("--workers", type=_positive_int, default=2, help="worker processes (default 2)")
    up.add_argument("--concurrency", type=_positive_int, default=1, help="jobs per worker process (default 1)")
    up.set_defaults(handler=cmd_up)
    return parser


def _port(value: str) -> int:
    port = _positive_int(value)
    if port > 65535:
        raise argparse.ArgumentTypeError(f"{value!r} is not a port (1-65535)")
    return port


def _bool(value: str) -> bool:
    lowered = value.strip().lower()
    if lowered in ("true", "yes", "1", "y"):
        return True
    if lowered in ("false", "no", "0", "n"):
        return False
    raise argparse.ArgumentTypeError(f"{value!r} is not true or false")


def _read_json_object(path: str | None, what: str) -> dict[str, Any]:
    from vetq.core.validation import load_json

    value = load_json(read_text(path), what=what)
    if not isinstance(value, dict):
        raise VetqError(f"{what} must be a JSON object", code=ErrorCode.INVALID_INPUT)
    return value


def cmd_review(args: argparse.Namespace) -> int:
    from vetq.api_client.client import BlindnessLeakError

    try:
        request = _read_json_object(args.file, "the review request")
        if args.mode:
            request["review_mode"] = args.mode
        # Checked here, before anything starts: input errors and blindness leaks need no provider.
        from vetq.core.review.schema import ReviewRequest
        from vetq.core.validation import parse_model

        parse_model(ReviewRequest, request, what="review request")
        _check_budget_usd(args)
        options = _job_options(args)
    except VetqError as exc:
        return fail(exc.code, exc.message, EXIT_INPUT)
    with _client() as client:
        try:
            job = client.submit_review(request, budget_usd=args.budget_usd, **options)
        except (BlindnessLeakError, VetqError) as exc:
            return fail(exc.code, exc.message, exit_code_for_error(exc))
        if args.no_wait:
            emit({"job_id": job.id, "trace_id": job.trace_id, "status": job.status()})
            return EXIT_OK
        result = job.result(timeout=_wait_timeout(args))
    emit(result)
    return exit_code_for(result)


def cmd_should_review(args: argparse.Namespace) -> int:
    from vetq.api_client.client import Client

    try:
        result = Client.should_review(_read_json_object(args.file, "the should-review input"))
    except VetqError as exc:
        return fail(exc.code, exc.message, EXIT_INPUT)
    emit(result)
    return EXIT_OK


def cmd_outcome(args: argparse.Namespace) -> int:
    from vetq.core.settings import load_settings

    if not load_settings().telemetry:  # said before any Redis is started for nothing
        return fail(ErrorCode.CONFIG_ERROR, "telemetry is off: set VETQ_TELEMETRY=on to record outcomes", EXIT_INPUT)
    with _client() as client:
        try:
            record = client.record_outcome(
                args.review_id,
                accepted_review=args.accepted,
                later_rework_required=args.rework,
                review_was_useful=args.useful,
            )
        except VetqError as exc:
            return fail(exc.code, exc.message, exit_code_for_error(exc))
    emit(record)
    return EXIT_OK


def cmd_telemetry_export(args: argparse.Namespace) -> int:
    try:
        out = open(args.out, "w", encoding="utf-8") if args.out else sys.stdout  # noqa: SIM115
    except OSError as exc:
        return fail(ErrorCode.INVALID_INPUT, f"cannot write {args.out}: {exc.__class__.__name__}: {exc}", EXIT_INPUT)
    count = 0
    try:
        with _admin() as admin:
            for record in admin.export_telemetry():
                out.write(json.dumps(record, sort_keys=True) + "\n")
                count += 1
    finally:
        if args.out:
            out.close()
    sys.stderr.write(f"vetq: exported {count} telemetry record(s)\n")
    return EXIT_OK


def _client() -> Any:
    from vetq.api_client.client import Client

    return Client()


def _admin() -> Any:
    from vetq.api_client.admin import Admin

    return Admin()


def _options(args: argparse.Namespace) -> dict[str, Any]:
    options = {
        "field_threshold": args.field_threshold,
        "overall_threshold": args.overall_threshold,
        "heuristics_only": args.heuristics_only,
    }
    return options | ({"schema": args.schema} if args.schema else {})


def _wait_timeout(args: argparse.Namespace) -> float:
    from vetq.core.settings import load_settings

    return args.timeout or load_settings().wait_timeout_s


def _run_single(args: argparse.Namespace, request: dict[str, Any]) -> int:
    _check_budget_usd(args)
    options = _job_options(args)
    timeout = _wait_timeout(args)
    with _client() as client:
        job = client.submit({**request, **_options(args)}, budget_usd=args.budget_usd, **options)
        if args.no_wait:
            emit({"job_id": job.id, "trace_id": job.trace_id, "status": job.status()})
            if client._embedded is not None and client._embedded.runs_workers:
                sys.stderr.write(
                    "vetq: note: embedded mode; the job runs when a worker next serves this Redis "
                    "(`vetq up`, or the next vetq command)\n"
                )
            return EXIT_OK
        result = job.result(timeout=timeout)
    emit(result)
    return exit_code_for(result)


def _run_batch(args: argparse.Namespace, kind: str) -> int:
    from vetq.api_client.batch import Progress, line_limit, parse_batch_line, read_lines
    from vetq.core.settings import load_settings

    _check_budget_usd(args)
    options = _job_options(args, batch=True)
    if args.schema:  # the run's schema is checked once, before any line is read
        from vetq.core import schemas

        schemas.load(args.schema, load_settings().schema_limits())
    if args.file and args.file != "-":
        try:
            stream: IO[bytes] = open(args.file, "rb")  # noqa: SIM115 - closed below
        except OSError as exc:
            return fail(
                ErrorCode.INVALID_INPUT, f"cannot read {args.file}: {exc.__class__.__name__}: {exc}", EXIT_INPUT
            )
    elif sys.stdin is None or sys.stdin.isatty():
        return fail(ErrorCode.INVALID_INPUT, "--batch reads JSONL from --file or stdin", EXIT_INPUT)
    else:
        # Bytes, as from a file: a line that is not UTF-8 is refused alone, by the same rule.
        stream = getattr(sys.stdin, "buffer", None) or io.BytesIO(sys.stdin.read().encode("utf-8", "surrogateescape"))
    max_chars = line_limit(load_settings().max_pdf_bytes)
    if args.no_wait:
        with stream:
            parsed = [
                parse_batch_line(line, kind=kind, number=n, max_chars=max_chars) for n, line in read_lines(stream)
            ]
        good = [i for i, (_id, line) in enumerate(parsed) if line.get("status") != "error"]
        return _submit_batch_only(args, parsed, good, options)
    timeout = _wait_timeout(args)
    worst = EXIT_OK
    # Input lines are read, sent and answered as a stream: only the lines in flight and
    # the results waiting for an earlier line are held, however long the input.
    line_ids: dict[int, Any] = {}
    outputs: dict[int, dict[str, Any]] = {}
    sent_as: list[int] = []  # input index of each request handed to the batch
    next_index = 0
    progress = Progress()

    def flush() -> None:
        nonlocal next_index, worst
        while next_index in outputs:
            line_id = line_ids.pop(next_index, None)
            out = outputs.pop(next_index)
            if line_id is not None:
                out = {"id": line_id, **{k: v for k, v in out.items() if k != "id"}}
            emit(out)
            worst = max(worst, exit_code_for(out))
            next_index += 1

    def requests() -> Iterator[dict[str, Any]]:
        count = 0
        for n, raw in read_lines(stream):
            line_id, line = parse_batch_line(raw, kind=kind, number=n, max_chars=max_chars)
            index, count = count, count + 1
            line_ids[index] = line_id
            progress.sent(count)
            if line.get("status") == "error":
                outputs[index] = line
                progress.advance()
                continue
            sent_as.append(index)
            yield {**_options(args), **line}
        progress.set_total(count)

    with stream, progress, _client() as client:
        run = client.stream_batch(
            requests(), timeout=timeout, token_budget=args.token_budget, budget_usd=args.budget_usd, **options
        )
        for batch_index, result in run:
            outputs[sent_as[batch_index]] = result
            progress.advance()
            flush()
    flush()
    return worst


def _submit_batch_only(
    args: argparse.Namespace, parsed: list[tuple[Any, dict[str, Any]]], good: list[int], options: dict[str, Any]
) -> int:
    """--batch --no-wait: the lines refused, then one line naming the batch; its results
    come later (`vetq batch status ID`, `vetq batch results ID`)."""
    worst = EXIT_OK
    for _line_id, line in parsed:
        if line.get("status") == "error":
            emit(line)
            worst = max(worst, exit_code_for(line))
    if not good:
        return worst
    with _client() as client:
        batch = client.submit_batch(
            ({**_options(args), **parsed[i][1]} for i in good),
            token_budget=args.token_budget,
            budget_usd=args.budget_usd,
            **options,
        )
        for entry in batch.entries:
            if isinstance(entry, dict):
                emit(entry)
                worst = max(worst, exit_code_for(entry))
        emit({"batch_id": batch.id, "jobs": len(batch.jobs), "lane": options["lane"] or "realtime"})
        if client._embedded is not None and client._embedded.runs_workers:
            sys.stderr.write(
                "vetq: note: embedded mode; the jobs run when a worker next serves this Redis "
                "(`vetq up`, or the next vetq command)\n"
            )
    return worst


def cmd_extract(args: argparse.Namespace) -> int:
    if args.batch:
        return _run_batch(args, "extract")
    return _run_single(args, {"kind": "extract", **read_document(args.file)})


def cmd_validate(args: argparse.Namespace) -> int:
    if args.batch:
        return _run_batch(args, "validate")
    if args.data is None:
        return fail(ErrorCode.INVALID_INPUT, "validate needs --data '{...}' (the record to check)", EXIT_INPUT)
    from vetq.core.validation import load_json

    data = load_json(args.data, what="--data")
    if not isinstance(data, dict):
        return fail(ErrorCode.INVALID_INPUT, "--data must be a JSON object", EXIT_INPUT)
    return _run_single(args, {"kind": "validate", **read_document(args.file), "data": data})


def cmd_schemas_list(args: argparse.Namespace) -> int:
    from vetq.core import schemas

    for name in schemas.builtin_names():
        schema = schemas.builtin(name)
        emit({**schema.info.model_dump(), "description": schema.description, "fields": len(schema.by_path)})
    return EXIT_OK


def cmd_schemas_show(args: argparse.Namespace) -> int:
    from vetq.core import schemas
    from vetq.core.settings import load_settings

    # The limits a job's schema meets (VETQ_SCHEMA_MAX_*), as `schemas check` applies
    # them: a file shown here without complaint must not be refused at submit.
    schema = schemas.load(args.schema, load_settings().schema_limits())
    emit({"schema": schema.info.model_dump(), "document": schema.canonical})
    return EXIT_OK


def cmd_schemas_check(args: argparse.Namespace) -> int:
    from pathlib import Path

    from vetq.core import schemas
    from vetq.core.settings import load_settings

    schema = schemas.load(Path(args.file), load_settings().schema_limits())
    emit(
        {
            "status": "ok",
            "schema": schema.info.model_dump(),
            "fields": len(schema.by_path),
            "rules": [rule.comparison.text for rule in schema.rules],
        }
    )
    return EXIT_OK


def cmd_status(args: argparse.Namespace) -> int:
    with _client() as client:
        emit({"job_id": args.job_id, "status": client.job(args.job_id).status()})
    return EXIT_OK


def cmd_cancel(args: argparse.Namespace) -> int:
    from vetq.core.errors import InvalidInputError, NotFoundError

    worst = EXIT_OK
    with _client() as client:
        for job_id in args.job_ids:
            try:
                emit(client.job(job_id).cancel())
            except (NotFoundError, InvalidInputError) as exc:  # the other ids are still canceled
                emit(error_result(exc.code, exc.message) | {"job_id": job_id})
                worst = EXIT_INPUT
    return worst


def cmd_batch_cancel(args: argparse.Namespace) -> int:
    with _client() as client:
        emit(client.batch(args.batch_id).cancel())
    return EXIT_OK


def cmd_batch_status(args: argparse.Namespace) -> int:
    with _client() as client:
        emit(client.batch_status(args.batch_id))
    return EXIT_OK


def cmd_batch_results(args: argparse.Namespace) -> int:
    worst = EXIT_OK
    with _client() as client:
        for result in client.batch(args.batch_id).results(timeout=_wait_timeout(args)):
            emit(result)
            worst = max(worst, exit_code_for(result))
    return worst


def cmd_result(args: argparse.Namespace) -> int:
    with _client() as client:
        result = client.job(args.job_id).result(timeout=_wait_timeout(args), until=args.until)
    emit(result)
    return exit_code_for(result)


def cmd_mcp(args: argparse.Namespace) -> int:
    from vetq.api_client.mcp_server import serve

    return serve()


def cmd_eval(args: argparse.Namespace) -> int:
    # The eval harness lives in eval/; the CLI is only its front door.
    from vetq.eval.extraction_eval import main as eval_main

    return eval_main(args.eval_args, prog="vetq eval")


def cmd_bench_review(args: argparse.Namespace) -> int:
    from vetq.eval.review_bench.cli import main as bench_main

    return bench_main(args.bench_args)


def cmd_dead_list(args: argparse.Namespace) -> int:
    with _admin() as admin:
        for entry in admin.dead_letters(limit=args.limit):
            emit(entry)
    return EXIT_OK


def cmd_dead_redeliver(args: argparse.Namespace) -> int:
    from vetq.core.errors import NotFoundError

    worst = EXIT_OK
    with _admin() as admin:
        for job_id in args.job_ids:
            try:
                emit(admin.redeliver(job_id))
            except NotFoundError as exc:  # the other jobs' are still sent
                emit(error_result(exc.code, exc.message) | {"job_id": job_id})
                worst = EXIT_INPUT
    return worst


def cmd_usage(args: argparse.Namespace) -> int:
    with _admin() as admin:
        for row in admin.usage(args.tenant, windows=args.windows):
            emit(row)
    return EXIT_OK


def cmd_metrics_serve(args: argparse.Namespace) -> int:
    from vetq.api_client.service_cli import run_metrics_serve

    return run_metrics_serve(args)


def cmd_inbox(args: argparse.Namespace) -> int:
    # The inbox lives in inbox/ (vetq[inbox]); only its verbs import it.
    import importlib.util

    if importlib.util.find_spec("sqlalchemy") is None:
        raise ConfigError("the inbox needs vetq[inbox]: pip install 'vetq[inbox]'")
    from vetq.inbox import cli as inbox_cli

    inbox_cli.require_extra()
    run: Callable[[argparse.Namespace], int] = getattr(inbox_cli, args.inbox_run)
    return run(args)


def cmd_doctor(args: argparse.Namespace) -> int:
    from vetq.api_client.doctor import run_doctor

    return run_doctor(timeout=args.timeout)


def cmd_worker(args: argparse.Namespace) -> int:
    from vetq.api_client.service_cli import run_worker

    try:
        return run_worker(args)
    except SystemExit as stopped:
        if stopped.code in (0, None):
            return EXIT_OK
        # Celery ends a failed worker with its own code 1, which here means needs_review.
        return _worker_failed(stopped.code)


def _worker_failed(celery_exit: object) -> int:
    import redis

    url = _configured_redis_url()
    if url is not None:
        try:
            redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=2).ping()
        except Exception as exc:  # noqa: BLE001 - only to say why the worker stopped
            error = _as_vetq_error(exc)
            return fail(error.code, f"the worker stopped: {error.message}", exit_code_for_error(error))
    return fail(
        ErrorCode.INTERNAL_ERROR,
        f"the worker stopped on an error (Celery exit code {celery_exit}); its log lines on stderr say why",
        EXIT_PIPELINE,
    )


def cmd_up(args: argparse.Namespace) -> int:
    from vetq.api_client.service_cli import run_up

    return run_up(args)


# Verbs that hand their whole argument list to a harness with its own parser.
PASSTHROUGH = {("eval",): "eval_args", ("bench", "review"): "bench_args"}


def _passthrough(argv: list[str]) -> argparse.Namespace | None:
    for prefix, field in PASSTHROUGH.items():
        if tuple(argv[: len(prefix)]) == prefix:
            handler = cmd_eval if field == "eval_args" else cmd_bench_review
            return argparse.Namespace(verb=prefix[0], handler=handler, **{field: argv[len(prefix) :]})
    return None


def main(argv: Sequence[str] | None = None) -> int:
    from vetq.core.logging import configure_logging

    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = _passthrough(argv) or parser.parse_args(argv)
    if not getattr(args, "handler", None):
        # A verb with actions but none given shows that verb's help, not the top level's.
        getattr(args, "verb_parser", parser).print_help(sys.stderr)
        return EXIT_INPUT
    handler: Callable[[argparse.Namespace], int] = args.handler
    # The MCP server reads its settings per call (a bad value fails calls, never the
    # start) and its stdout belongs to the protocol: its own failures go to stderr.
    report = _report_on_stderr if args.verb == "mcp" else fail
    try:
        if args.verb != "mcp":
            from vetq.core.settings import load_settings

            settings = load_settings()
            # A one-shot command keeps stderr quiet unless asked; a worker logs its jobs.
            configure_logging(settings.log_level_of(quiet=args.verb not in ("worker", "up", "metrics")))
        return handler(args)
    except KeyboardInterrupt:
        sys.stderr.write("vetq: interrupted\n")
        return 130
    except Exception as exc:  # noqa: BLE001 - every failure ends as one line and a documented exit code
        error = _as_vetq_error(exc)
        return report(error.code, error.message, exit_code_for_error(error))


def exit_code_for_error(error: VetqError) -> int:
    """2 for what the user can fix in the command or its configuration, 3 otherwise."""
    if isinstance(error, ConfigError) or error.code.value in INPUT_ERRORS:
        return EXIT_INPUT
    return EXIT_PIPELINE


def _as_vetq_error(exc: Exception) -> VetqError:
    if isinstance(exc, VetqError):
        return exc
    from vetq.api_client.client import service_error
    from vetq.core.logging import redact_text

    translated = service_error(exc, _configured_redis_url())
    if translated is not None:
        return translated
    # A bug, not the user's doing: named, with no traceback on the user's screen.
    message = redact_text(str(exc))[:300]
    return VetqError(f"unexpected {type(exc).__name__}: {message}" if message else f"unexpected {type(exc).__name__}")


def _configured_redis_url() -> str | None:
    try:
        from vetq.core.settings import load_settings

        return load_settings().redis_url
    except Exception:  # noqa: BLE001 - only for naming the server in a message
        return None


def _report_on_stderr(code: ErrorCode, message: str, exit_code: int) -> int:
    sys.stderr.write(f"vetq: {code.value}: {message}\n")
    return exit_code


def entrypoint() -> None:
    sys.exit(main())


if __name__ == "__main__":
    entrypoint()
