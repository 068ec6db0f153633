"""`vetq mcp`: vetq's jobs as MCP tools over stdio.

Seven tools: `extract`, `validate`, `list_schemas`, `review_decision`,
`should_review`, `record_outcome` and `job_result`. Extraction jobs go through the queue (VETQ_REDIS_URL, or the
embedded default: vetq's own Redis plus an in-process worker), with ONE Client
made on the first call that needs it and closed when the client disconnects.

Contracts:

- Tools never raise. Every failure is the result format's error
  (`{"format": 2, "status": "error", "error": {"code", "message"}}`, core.results):
  an extraction failure is a normal result; a review-side failure (BLINDNESS_LEAK,
  INVALID_INPUT, provider errors, config errors) is an MCP tool error (`isError: true`).
  Every result carries the same JSON as structured content and as text.
- The operator's thresholds (VETQ_FIELD_THRESHOLD / VETQ_OVERALL_THRESHOLD,
  defaults 0.70 / 0.75) are a floor the calling agent may raise but never lower:
  a lower argument is raised and `notes` says so. A malformed floor turns every
  call into a CONFIG_ERROR (never a looser gate) while the server still starts.
- `extract`, `validate` and `review_decision` take an optional `lane`: "bulk" submits
  the job to the providers' Batch APIs (half the price, answered within 24 h) and
  returns its job id at once; `job_result` fetches its result once it is done. They
  also take `priority`, `tenant` and `idempotency_key` (core.job_options); not
  `callback_url`: an agent does not choose where the server POSTs results.
- Only protocol messages go to stdout: vetq logs are JSON lines on stderr, the
  stdio transport diverts fd 1 to stderr for everything but itself, and
  `sys.stdout` is pointed at stderr while the server runs.
"""

from __future__ import annotations

import inspect
import json
import sys
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from vetq.core.errors import ConfigError, ErrorCode, InvalidInputError, VetqError
from vetq.core.results import error_of, error_result

try:
    from mcp_types import CallToolResult, TextContent, ToolAnnotations
except ImportError:  # pragma: no cover - depends on the install
    raise ConfigError("`vetq mcp` needs the MCP SDK (2.3 or later): pip install 'vetq[mcp]'") from None

# The settings that make the operator's threshold floor (VETQ_FIELD_THRESHOLD,
# VETQ_OVERALL_THRESHOLD): the gate's own thresholds.
FLOOR_SETTINGS = ("field_threshold", "overall_threshold")

EXTRACTION_TOOLS = frozenset({"extract", "validate"})
REVIEW_TOOLS = frozenset({"review_decision", "should_review", "record_outcome"})

SERVER_INSTRUCTIONS = (
    "vetq runs LLM jobs that check their own work. `extract` turns a document (an invoice by default; "
    "`list_schemas` names the other record types) into a typed record and says which fields a person must confirm; `validate` checks a record you already have against "
    "its document. `review_decision` is a blind-first second opinion on an engineering decision: call it "
    "before expensive or hard-to-reverse decisions, and ask `should_review` (deterministic, instant) first "
    "when unsure whether a decision deserves one. `record_outcome` reports what became of a review."
)


# --------------------------------------------------------------------------- floor


def read_floor(settings: Any = None) -> dict[str, float]:
    """The operator's threshold floor: the thresholds of `settings` (by default the
    environment's, read per call). A malformed setting raises ConfigError naming the
    variable, so every call fails until it is fixed instead of running a looser gate."""
    if settings is None:
        from vetq.core.settings import load_settings

        settings = load_settings()
    return {name: float(getattr(settings, name)) for name in FLOOR_SETTINGS}


def apply_floor(requested: dict[str, float | None], floor: dict[str, float]) -> tuple[dict[str, float], list[str]]:
    """The thresholds to send (never below the floor) and a note for each raised one."""
    chosen: dict[str, float] = {}
    notes: list[str] = []
    for name, minimum in floor.items():
        value = requested.get(name)
        if value is None:
            chosen[name] = minimum
        elif value < minimum:
            chosen[name] = minimum
            notes.append(f"{name} raised from {float(value)!r} to {float(minimum)!r}")
        else:
            chosen[name] = float(value)
    return chosen, notes


# --------------------------------------------------------------------------- schemas

# In VETQ_MCP_SCHEMAS, the word that lets agents send schemas of their own.
INLINE = "inline"


def schema_permitted(name: str, settings: Any) -> bool:
    allowed = {part.strip() for part in settings.mcp_schemas.split(",") if part.strip()}
    return not allowed or name in allowed


def allowed_schema(schema: Any, settings: Any) -> None:
    """Refuse a schema the operator has not opened to agents (VETQ_MCP_SCHEMAS), and any
    file path: an agent names a built-in or sends a document, never a file on the server."""
    from vetq.core.schemas.catalog import DEFAULT_SCHEMA, builtin_names, looks_like_path

    if isinstance(schema, dict):
        if not schema_permitted(INLINE, settings):
            raise InvalidInputError(
                "this server takes no schemas of the agent's own (VETQ_MCP_SCHEMAS): name one of list_schemas"
            )
        return
    name = DEFAULT_SCHEMA if schema is None else str(schema)
    if looks_like_path(name) or name not in builtin_names():
        raise InvalidInputError(
            f"schema {name[:80]!r} is not a built-in schema: see list_schemas, or send a schema document"
        )
    if not schema_permitted(name, settings):
        raise InvalidInputError(
            f"schema {name!r} is not open to agents on this server (VETQ_MCP_SCHEMAS): see list_schemas"
        )


def refuse_pdf_path(pdf: Any) -> None:
    """`pdf` over MCP is the file's bytes in base64, never a path: the agent does not
    choose files on the server. Said plainly for what looks like a path or a URL (the
    producer's check refuses any other text that is not a PDF in base64)."""
    if not isinstance(pdf, str):
        return
    head = pdf.strip()[:300]
    if head.startswith(("/", "~", "./", "../", "file:", "http:", "https:")) or head.lower().endswith(".pdf"):
        raise InvalidInputError(
            "pdf must be the PDF file's bytes in base64, not a path or URL: this server never reads a file "
            "an agent names; read the file yourself and send its contents"
        )


def _schema_summary(schema: Any) -> dict[str, Any]:
    return {
        **schema.info.model_dump(),
        "description": schema.description,
        "fields": {path: field.kind for path, field in schema.by_path.items()},
        "rules": [rule.comparison.text for rule in schema.rules],
    }


# --------------------------------------------------------------------------- results


def _tool_result(payload: dict[str, Any], *, is_error: bool = False) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps(payload, ensure_ascii=False))],
        structured_content=payload,
        is_error=is_error,
    )


def extraction_error(code: ErrorCode | str, message: str) -> Any:
    return _tool_result(error_result(code, message))


def review_error(code: ErrorCode | str, message: str) -> Any:
    return _tool_result(error_result(code, message), is_error=True)


def error_for(tool: str, code: ErrorCode | str, message: str) -> Any:
    return extraction_error(code, message) if tool in EXTRACTION_TOOLS else review_error(code, message)


# --------------------------------------------------------------------------- state


class VetqTools:
    """The tool implementations and the one Client they share."""

    def __init__(self) -> None:
        self._client: Any = None
        self._lock = threading.Lock()
        self._closed = False

    # The floor and settings are read per call: a malformed value fails the call, not the server.
    @staticmethod
    def settings() -> Any:
        from vetq.core.settings import load_settings

        return load_settings()

    def client(self) -> Any:
        with self._lock:
            if self._closed:
                raise ConfigError("the vetq MCP server is shutting down")
            if self._client is None:
                from vetq.api_client.client import Client

                self._client = Client(settings=self.settings())
            return self._client

    def close(self) -> None:
        with self._lock:
            self._closed = True
            client, self._client = self._client, None
        if client is not None:
            client.close()

    # ---------------------------------------------------------------- extraction

    def run_extraction(self, request: dict[str, Any]) -> Any:
        lane = {name: request.pop(name) for name in JOB_ARGUMENTS if name in request}
        try:
            floor = read_floor()
            thresholds, notes = apply_floor({name: request.pop(name, None) for name in FLOOR_SETTINGS}, floor)
            settings = self.settings()
            allowed_schema(request.get("schema"), settings)
            refuse_pdf_path(request.get("pdf"))
            job = self.client().submit({**request, **thresholds}, **lane)
            if lane.get("lane") == "bulk":
                return _submitted(job)
            result = job.result(timeout=settings.wait_timeout_s)
        except VetqError as exc:
            return extraction_error(exc.code, exc.message)
        except Exception as exc:  # noqa: BLE001 - tools never raise
            return extraction_error(ErrorCode.INTERNAL_ERROR, f"{type(exc).__name__}: the job could not be run")
        if not isinstance(result, dict):
            return extraction_error(ErrorCode.INTERNAL_ERROR, "the worker returned a non-object result")
        if notes:
            result = {**result, "notes": [*notes, *(result.get("notes") or [])]}
        return _tool_result(result)

    def run_list_schemas(self) -> Any:
        from vetq.core import schemas

        try:
            settings = self.settings()
            names = [name for name in schemas.builtin_names() if schema_permitted(name, settings)]
            listed = [_schema_summary(schemas.builtin(name)) for name in names]
        except VetqError as exc:
            return review_error(exc.code, exc.message)
        return _tool_result({"schemas": listed, "inline_allowed": schema_permitted(INLINE, settings)})

    # ---------------------------------------------------------------- review

    def run_review(self, request: dict[str, Any]) -> Any:
        from vetq.core.review.schema import ReviewError, ReviewRequest
        from vetq.core.review.service import config_from_settings, preflight
        from vetq.core.validation import parse_model

        lane = {name: request.pop(name) for name in JOB_ARGUMENTS if name in request}
        try:
            read_floor()
            settings = self.settings()
            # Input errors and blindness leaks are refused here: no Redis, no job, no key needed.
            model = parse_model(ReviewRequest, request, what="review request")
            leak = preflight(model, config_from_settings(settings))
            if isinstance(leak, ReviewError):
                return _tool_result(leak.model_dump(mode="json", exclude_none=True), is_error=True)
            job = self.client().submit_review(request, **lane)
            if lane.get("lane") == "bulk":
                return _submitted(job)
            result = job.result(timeout=settings.wait_timeout_s)
        except VetqError as exc:
            return review_error(exc.code, exc.message)
        except Exception as exc:  # noqa: BLE001 - tools never raise
            return review_error(ErrorCode.INTERNAL_ERROR, f"{type(exc).__name__}: the review could not be run")
        if not isinstance(result, dict):
            return review_error(ErrorCode.INTERNAL_ERROR, "the worker returned a non-object result")
        return _tool_result(result, is_error=error_of(result) is not None)

    def run_job_result(self, job_id: str) -> Any:
        """A job's result once it is done; until then its id and status."""
        from vetq.api_client.client import JobStatus

        try:
            job = self.client().job(job_id)
            status = job.status()
            if status not in (JobStatus.DONE, JobStatus.FAILED):
                return _tool_result({"job_id": job_id, "status": status.value})
            result = job.result(timeout=self.settings().wait_timeout_s)
        except VetqError as exc:
            return review_error(exc.code, exc.message)
        except Exception as exc:  # noqa: BLE001 - tools never raise
            return review_error(ErrorCode.INTERNAL_ERROR, f"{type(exc).__name__}: the result could not be read")
        return _tool_result(result)

    def run_should_review(self, request: dict[str, Any]) -> Any:
        from vetq.api_client.client import Client

        try:
            read_floor()
            return _tool_result(Client.should_review(request))
        except VetqError as exc:
            return review_error(exc.code, exc.message)
        except Exception as exc:  # noqa: BLE001
            return review_error(ErrorCode.INTERNAL_ERROR, f"{type(exc).__name__}: should_review failed")

    def run_record_outcome(self, review_id: str, outcome: dict[str, bool | None]) -> Any:
        try:
            read_floor()
            if not self.settings().telemetry:  # checked before any Redis starts
                raise ConfigError(
                    "telemetry is off: set VETQ_TELEMETRY=on in the MCP server's environment to record outcomes"
                )
            if not review_id.strip():
                raise InvalidInputError("review_id must be the review's id (meta.review_id)")
            record = self.client().record_outcome(review_id, **outcome)
        except VetqError as exc:
            return review_error(exc.code, exc.message)
        except Exception as exc:  # noqa: BLE001
            return review_error(ErrorCode.INTERNAL_ERROR, f"{type(exc).__name__}: the outcome could not be recorded")
        return _tool_result(record)


# --------------------------------------------------------------------------- the wire


def unreadable_line_error(exc: Exception) -> Any:
    """The JSON-RPC answer to a line the transport could not read: a parse error for
    anything that is not JSON (garbage, nesting past the parser's depth limit), an
    invalid-request error for JSON that is not a JSON-RPC message. The id is null, as
    JSON-RPC 2.0 prescribes when the request's id cannot be read."""
    from mcp_types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError
    from pydantic import ValidationError

    errors = exc.errors() if isinstance(exc, ValidationError) else []
    if errors and all(error["type"] != "json_invalid" for error in errors):
        error = ErrorData(
            code=INVALID_REQUEST, message="Invalid Request: the line is JSON but not a JSON-RPC 2.0 message"
        )
    else:
        reason = next((str(e["msg"]) for e in errors if e["type"] == "json_invalid"), type(exc).__name__)
        error = ErrorData(code=PARSE_ERROR, message=f"Parse error: {reason[:120]}")
    return JSONRPCError(jsonrpc="2.0", id=None, error=error)


class AnswerUnreadableLines:
    """The read side of the stdio transport, with an answer for every unreadable line.

    The SDK's transport hands a line it cannot parse to the server as an exception,
    which the server only logs: the client gets no reply at all. This wrapper sends
    the JSON-RPC error for each such line and passes every message on untouched
    (with the sender context the SDK's own stream carries)."""

    def __init__(self, inner: Any, write_stream: Any) -> None:
        self._inner = inner
        self._write_stream = write_stream

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        from mcp.shared.message import SessionMessage

        while True:
            item = await self._inner.receive()
            if not isinstance(item, Exception):
                return item
            await self._write_stream.send(SessionMessage(unreadable_line_error(item)))

    def __aiter__(self) -> AnswerUnreadableLines:
        return self

    async def __anext__(self) -> Any:
        import anyio

        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    def close(self) -> None:
        self._inner.close()

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> AnswerUnreadableLines:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


# --------------------------------------------------------------------------- tool signatures


def arguments_of(model: type[BaseModel], leave_out: frozenset[str] = frozenset()) -> inspect.Signature:
    """A tool signature listing the request model's fields, required ones first, so
    the SDK derives the tool's input schema (types, limits, descriptions) from the
    model itself. A field with a default may also be null, meaning that default:
    agents often send null for an argument they do not use. A default made by a
    factory (an empty list) shows as null."""
    required: list[inspect.Parameter] = []
    optional: list[inspect.Parameter] = []
    for field_name, field in model.model_fields.items():
        name = field.alias or field_name  # the wire's name (`schema`), not the attribute's
        if name in leave_out:
            continue
        described = Field(description=field.description)
        annotation: Any = Annotated[(field.annotation, *field.metadata)] if field.metadata else field.annotation
        if field.is_required():
            required.append(
                inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=Annotated[annotation, described])
            )
        else:
            default = None if field.default_factory is not None else field.default
            optional.append(
                inspect.Parameter(
                    name,
                    inspect.Parameter.KEYWORD_ONLY,
                    default=default,
                    annotation=Annotated[annotation | None, described],
                )
            )
    return inspect.Signature([*required, *optional], return_annotation=CallToolResult)


# The job options of the job tools (core.job_options), beside the request model's fields.
JOB_ARGUMENTS = ("lane", "bulk_deadline", "realtime_fallback", "priority", "tenant", "idempotency_key")
JOB_PARAMETERS = (
    inspect.Parameter(
        "lane",
        inspect.Parameter.KEYWORD_ONLY,
        default=None,
        annotation=Annotated[
            Literal["realtime", "bulk"] | None,
            Field(
                description="realtime (default): wait for the result. bulk: the providers' Batch APIs at half the "
                "price, answered within 24 h; returns the job id at once, fetch the result with job_result."
            ),
        ],
    ),
    inspect.Parameter(
        "bulk_deadline",
        inspect.Parameter.KEYWORD_ONLY,
        default=None,
        annotation=Annotated[
            str | None,
            Field(max_length=64, description="With lane bulk: when the answer is due, e.g. 6h or an ISO 8601 time."),
        ],
    ),
    inspect.Parameter(
        "realtime_fallback",
        inspect.Parameter.KEYWORD_ONLY,
        default=None,
        annotation=Annotated[
            bool | None,
            Field(description="With lane bulk: past the deadline, use the realtime lane instead of failing."),
        ],
    ),
    inspect.Parameter(
        "priority",
        inspect.Parameter.KEYWORD_ONLY,
        default=None,
        annotation=Annotated[Literal["high", "normal", "low"] | None, Field(description="normal unless given.")],
    ),
    inspect.Parameter(
        "tenant",
        inspect.Parameter.KEYWORD_ONLY,
        default=None,
        annotation=Annotated[
            str | None,
            Field(max_length=64, description="The customer the job runs for: a-z, 0-9, _ and -."),
        ],
    ),
    inspect.Parameter(
        "idempotency_key",
        inspect.Parameter.KEYWORD_ONLY,
        default=None,
        annotation=Annotated[
            str | None,
            Field(max_length=200, description="Calling again with the same key gives the same job, not a new one."),
        ],
    ),
)


def _submitted(job: Any) -> CallToolResult:
    return _tool_result(
        {"job_id": job.id, "status": job.status().value, "lane": "bulk", "next": "call job_result with this job_id"}
    )


def model_tool(
    name: str,
    model: type[BaseModel],
    run: Callable[[dict[str, Any]], CallToolResult],
    *,
    fixed: dict[str, Any] | None = None,
    extra: tuple[inspect.Parameter, ...] = (),
) -> Callable[..., CallToolResult]:
    """A tool taking `model`'s fields as its arguments, less the ones the tool fixes
    itself (`fixed`, the job kind) and the trace id (the server makes one per call).
    `run` gets the arguments the agent gave, nulls dropped so the model applies its
    defaults, and validates them with the model, as every other producer does."""
    fixed = fixed or {}

    def tool(**arguments: Any) -> CallToolResult:
        return run({**{key: value for key, value in arguments.items() if value is not None}, **fixed})

    signature = arguments_of(model, frozenset({*fixed, "trace_id"}))
    signature = signature.replace(parameters=[*signature.parameters.values(), *extra])
    tool.__name__ = tool.__qualname__ = name
    tool.__signature__ = signature  # type: ignore[attr-defined]
    tool.__annotations__ = {p.name: p.annotation for p in signature.parameters.values()} | {"return": CallToolResult}
    return tool


FLOOR_NOTE = (
    "field_threshold and overall_threshold may only raise the operator's floor (VETQ_FIELD_THRESHOLD / "
    "VETQ_OVERALL_THRESHOLD on the server): a lower value is raised to it and `notes` says so."
)
EXTRACT_DESCRIPTION = (
    "Extract a verified record from messy text or a PDF (`pdf`: the file's bytes in base64, never a path; "
    "spans then name their page and word boxes): an invoice by default, or any schema `list_schemas` names "
    "(receipt, purchase_order, shipping_notice, ...) or a schema document you send (`schema`). A Generator model "
    "extracts; deterministic heuristics and a Critic model score "
    "every value. Returns an envelope: status `ok`, or `needs_review` with `flagged_fields` naming what a person "
    "must confirm and why (by path, e.g. line_items[2].amount), `field_provenance` spans backing each value, "
    "and `notes`. Failures come back as "
    '{format: 2, status: "error", error: {code, message}}, never as a tool error. Null fields mean the text does not '
    "hold the value. "
    f"{FLOOR_NOTE}"
)
VALIDATE_DESCRIPTION = (
    "Verify a record you already have (e.g. one you extracted yourself) against its source document (`text`, or "
    "`pdf` as base64), without re-extracting. Same envelope as `extract`: `ok`, or `needs_review` with each doubtful field flagged with the "
    "reason (not found in the text, arithmetic mismatch, bad date, ...). With heuristics_only=true no model is "
    'called at all. Failures come back as {format: 2, status: "error", error: {code, message}}. '
    f"{FLOOR_NOTE}"
)
REVIEW_DESCRIPTION = (
    "Blind-first review of an engineering decision by a separate reviewer model. Call it BEFORE an expensive or "
    "hard-to-reverse decision (architecture, database/schema, migrations, public APIs, key dependencies, "
    "security, performance); when unsure whether a decision deserves a review, call `should_review` first. "
    "BLINDNESS CONTRACT: the reviewer first reasons about the problem WITHOUT seeing your plan, then compares. "
    "So describe the PROBLEM in the blind fields -- objective, constraints, context, environment, evidence -- "
    "and put the PLAN ONLY in `proposed_solution`. A request whose blind fields already contain the plan is "
    "refused with error code BLINDNESS_LEAK (before any model call): move the plan out of them and retry. "
    "Returns verdict (KEEP, MODIFY, REPLACE, INSUFFICIENT_EVIDENCE), recommendation, critical_assumptions, "
    "material_risks, better_alternative, the cheapest falsification_probe, confidence and meta.review_id. "
    'Errors are tool errors with {"format": 2, "status": "error", "error": {"code", "message"}}.'
)
SHOULD_REVIEW_DESCRIPTION = (
    "Does this decision deserve a `review_decision`? A deterministic rule set (no model, instant, free): "
    "returns {should_review, reasons}. Structural signals (architecture/database/security decisions, schema "
    "changes, migrations, public API changes, replaced key dependencies, irreversible steps, many files or "
    "modules) and high/critical risk recommend a review; a trivial change at low risk does not."
)
LIST_SCHEMAS_DESCRIPTION = (
    "The schemas `extract` and `validate` take here: each built-in's name, version, hash, description, fields "
    "(path: kind) and rules, and whether you may send a schema document of your own (inline_allowed)."
)
JOB_RESULT_DESCRIPTION = (
    "The result of a job submitted with lane=bulk (by its job_id): the same envelope `extract`, `validate` or "
    "`review_decision` returns, once the job is done; until then {job_id, status} (queued, running, waiting: "
    "its model calls wait in a provider batch). Bulk jobs finish within 24 h; poll every few minutes."
)
RECORD_OUTCOME_DESCRIPTION = (
    "Record what became of a review (by its meta.review_id): was the advice taken, was rework needed later, "
    "was it useful. Appends to the fleet's telemetry stream; needs VETQ_TELEMETRY=on in the server's "
    "environment (otherwise a CONFIG_ERROR tool error). Call it once the outcome is known."
)


def build_server(tools: VetqTools | None = None) -> Any:
    """The MCPServer with the seven tools registered."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from pydantic import ValidationError

    from vetq.core import __version__
    from vetq.core.validation import explain

    state = tools or VetqTools()

    @asynccontextmanager
    async def lifespan(_server: Any) -> AsyncIterator[dict[str, Any]]:
        # The transport holds its own handle on the wire; anything else that prints goes to stderr.
        saved = sys.stdout
        sys.stdout = sys.stderr
        try:
            yield {}
        finally:
            try:
                import anyio

                await anyio.to_thread.run_sync(state.close)
            finally:
                sys.stdout = saved

    class VetqMCPServer(MCPServer):
        vetq_tools: VetqTools

        async def run_stdio_async(self) -> None:
            from mcp.server.stdio import stdio_server

            async with stdio_server() as (read_stream, write_stream):
                await self._lowlevel_server.run(
                    AnswerUnreadableLines(read_stream, write_stream),
                    write_stream,
                    self._lowlevel_server.create_initialization_options(),
                )

        async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
            if name in EXTRACTION_TOOLS or name in REVIEW_TOOLS:
                try:
                    read_floor()
                except ConfigError as exc:
                    return error_for(name, exc.code, exc.message)
            try:
                return await super().call_tool(name, arguments, context)
            except ToolError as exc:
                cause = exc.__cause__
                if isinstance(cause, ValidationError) and (name in EXTRACTION_TOOLS or name in REVIEW_TOOLS):
                    problems = explain(cause, limit=None, root="arguments")
                    return error_for(name, ErrorCode.INVALID_INPUT, f"invalid arguments: {problems}")
                raise

    server = VetqMCPServer(
        name="vetq",
        version=__version__,
        instructions=SERVER_INSTRUCTIONS,
        lifespan=lifespan,
        log_level="WARNING",
    )

    def record_outcome(
        review_id: Annotated[str, Field(max_length=128, description="The review's meta.review_id.")],
        accepted_review: Annotated[
            bool | None, Field(default=None, description="Was the review's advice taken?")
        ] = None,
        later_rework_required: Annotated[
            bool | None, Field(default=None, description="Was rework needed later?")
        ] = None,
        review_was_useful: Annotated[bool | None, Field(default=None, description="Was the review useful?")] = None,
    ) -> CallToolResult:
        return state.run_record_outcome(
            review_id,
            {
                "accepted_review": accepted_review,
                "later_rework_required": later_rework_required,
                "review_was_useful": review_was_useful,
            },
        )

    def list_schemas() -> CallToolResult:
        return state.run_list_schemas()

    from vetq.core.extraction.schema import ExtractionRequest, ValidationRequest
    from vetq.core.review.schema import ReviewRequest
    from vetq.core.review.should_review import ShouldReviewRequest

    extract = model_tool(
        "extract", ExtractionRequest, state.run_extraction, fixed={"kind": "extract"}, extra=JOB_PARAMETERS
    )
    validate = model_tool(
        "validate", ValidationRequest, state.run_extraction, fixed={"kind": "validate"}, extra=JOB_PARAMETERS
    )
    review_decision = model_tool("review_decision", ReviewRequest, state.run_review, extra=JOB_PARAMETERS)

    def job_result(
        job_id: Annotated[str, Field(max_length=128, description="The job_id a bulk submission returned.")],
    ) -> CallToolResult:
        return state.run_job_result(job_id)

    should_review = model_tool("should_review", ShouldReviewRequest, state.run_should_review)

    registrations: list[tuple[Callable[..., Any], str, str, ToolAnnotations]] = [
        (
            extract,
            "Extract a verified record",
            EXTRACT_DESCRIPTION,
            ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=True),
        ),
        (
            validate,
            "Validate a record against its document",
            VALIDATE_DESCRIPTION,
            ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=True),
        ),
        (
            list_schemas,
            "List the record schemas",
            LIST_SCHEMAS_DESCRIPTION,
            ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False),
        ),
        (
            review_decision,
            "Blind-first decision review",
            REVIEW_DESCRIPTION,
            ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=False, open_world_hint=True),
        ),
        (
            should_review,
            "Should this decision be reviewed?",
            SHOULD_REVIEW_DESCRIPTION,
            ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False),
        ),
        (
            job_result,
            "The result of a bulk job",
            JOB_RESULT_DESCRIPTION,
            ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False),
        ),
        (
            record_outcome,
            "Record a review's outcome",
            RECORD_OUTCOME_DESCRIPTION,
            ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False),
        ),
    ]
    for fn, title, description, hints in registrations:
        server.add_tool(fn, name=fn.__name__, title=title, description=description, annotations=hints)
    server.vetq_tools = state
    return server


def serve() -> int:
    """Run the stdio server until the client disconnects; 0 on a clean exit."""
    from vetq.core.logging import configure_logging
    from vetq.core.settings import log_level_from_environment

    # Logs first, and to stderr: stdout belongs to the protocol. A malformed
    # VETQ_LOG_LEVEL falls back to the default here rather than stopping the server.
    configure_logging(log_level_from_environment(quiet=True))
    server = build_server()
    try:
        server.run("stdio")
    except KeyboardInterrupt:
        pass
    finally:
        server.vetq_tools.close()
    return 0


if __name__ == "__main__":
    sys.exit(serve())
