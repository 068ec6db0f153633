"""One extraction or validation run: input checks, Generator, heuristics, Critic and
the confidence gate, returning a result envelope. Never raises for a domain failure."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import structlog

from vetq.core.documents.pages import PdfText
from vetq.core.documents.pdf import convert_isolated
from vetq.core.documents.provenance import locate, penalise_ocr_doubts
from vetq.core.errors import ErrorCode, InvalidInputError, VetqError
from vetq.core.extraction.critic import Critic
from vetq.core.extraction.document import check_document, check_input
from vetq.core.extraction.gate import BASE_CONFIDENCE_WITHOUT_CRITIC, decide
from vetq.core.extraction.generator import Generator
from vetq.core.extraction.heuristics import run_heuristics
from vetq.core.extraction.schema import (
    ExtractionError,
    ExtractionOutcome,
    ExtractionRequest,
    ExtractionResult,
    ValidationRequest,
)
from vetq.core.extraction.thresholds import ThresholdTable
from vetq.core.llm.client import LLMClient, ModelSpec
from vetq.core.llm.errors import LLMError
from vetq.core.llm.factory import make_client
from vetq.core.llm.gate import CallGate, DirectGate
from vetq.core.llm.types import Usage
from vetq.core.logging import get_logger
from vetq.core.schemas.records import RecordError, leaves
from vetq.core.schemas.wire import SchemaSource, resolve, to_wire
from vetq.core.settings import VetqSettings, load_settings
from vetq.core.tracing import stage_span
from vetq.core.validation import parse_model

log = get_logger("vetq.extraction")

ClientFactory = Callable[[ModelSpec], LLMClient]


def parse_extraction_payload(payload: Any) -> ExtractionRequest | ValidationRequest:
    """A task's JSON payload as the request model it names (kind: extract | validate)."""
    kind = payload.get("kind", "extract") if isinstance(payload, dict) else None
    if kind == "validate":
        return parse_model(ValidationRequest, payload, what="validate request")
    return parse_model(ExtractionRequest, payload, what=f"{kind or 'extraction'} request")


class ExtractionPipeline:
    """Built once per process; clients are made the first time a role needs one, so a
    heuristics-only validation builds no provider client at all."""

    def __init__(
        self,
        settings: VetqSettings | None = None,
        *,
        generator_client: LLMClient | None = None,
        critic_client: LLMClient | None = None,
        client_factory: ClientFactory | None = None,
        gate: CallGate | None = None,
    ) -> None:
        self.settings = settings or load_settings()
        self.gate: CallGate = gate or DirectGate(prices=self.settings.price_table())
        self._threshold_table: ThresholdTable | None = None
        self._clients: dict[str, LLMClient] = {}
        # A worker's threads share one pipeline: its clients (an SDK client each, with its
        # connection pool) and its thresholds are made once, not once per thread that
        # starts a job before the first is made (250 threads, 250 clients).
        self._making = threading.Lock()
        if generator_client is not None:
            self._clients["generator"] = generator_client
        if critic_client is not None:
            self._clients["critic"] = critic_client
        self._client_factory = client_factory or (
            lambda spec: make_client(
                spec, timeout_s=self.settings.provider_timeout_s, record_to=self.settings.record_to
            )
        )

    def client(self, role: str) -> LLMClient:
        client = self._clients.get(role)
        if client is None:
            with self._making:
                client = self._clients.get(role)
                if client is None:
                    client = self._clients[role] = self._client_factory(self.settings.spec(role))
        return client

    # Convenience faces for in-process callers, who may name a schema as a producer
    # does (a file, a dict, a pydantic class); a queued job carries a wire reference.
    # The document is `text`, or `pdf` (the file's bytes).
    def extract(
        self, text: str | None = None, *, pdf: bytes | None = None, schema: SchemaSource | None = None, **options: Any
    ) -> ExtractionOutcome:
        return self._run_with_schema({"kind": "extract", "text": text, "pdf": pdf, **options}, schema)

    def validate(
        self,
        text: str | None = None,
        data: Any = None,
        *,
        pdf: bytes | None = None,
        schema: SchemaSource | None = None,
        **options: Any,
    ) -> ExtractionOutcome:
        return self._run_with_schema({"kind": "validate", "text": text, "pdf": pdf, "data": data, **options}, schema)

    def _run_with_schema(self, payload: dict[str, Any], schema: SchemaSource | None) -> ExtractionOutcome:
        if schema is not None:
            try:
                payload["schema"], _ = to_wire(schema, self.settings.schema_limits())
            except VetqError as exc:  # an envelope, as every failure of a run is
                return ExtractionError.of(exc.code, exc.message, trace_id=_trace_id_of(payload))
        return self.run(payload)

    def run(self, payload: Any, *, raise_retryable: bool = False, gate: CallGate | None = None) -> ExtractionOutcome:
        """Run one job. With raise_retryable, a transient provider failure (429, 5xx,
        network, timeout) propagates so the queue can retry the job; otherwise every
        failure is an error envelope. `gate` replaces the pipeline's call gate for this
        run (a worker gives each job one bound to that job's budgets)."""
        trace_id = _trace_id_of(payload)
        gate = gate or self.gate
        with structlog.contextvars.bound_contextvars(trace_id=trace_id):
            usage: dict[str, Usage] = {}
            try:
                request = parse_extraction_payload(payload)
                return self._run(request, trace_id, usage, gate)
            except LLMError as exc:
                _merge_partial_usage(usage, exc)
                if raise_retryable and exc.retryable:
                    raise
                log.warning("extraction_failed", error_code=exc.code.value, error=exc.message)
                return ExtractionError.of(exc.code, exc.message, trace_id=trace_id, usage=usage)
            except VetqError as exc:
                log.warning("extraction_failed", error_code=exc.code.value, error=exc.message)
                return ExtractionError.of(exc.code, exc.message, trace_id=trace_id, usage=usage)
            except Exception as exc:  # a bug must still end as an envelope, never a lost job
                if isinstance(exc, _time_limit_errors()):
                    log.warning("extraction_failed", error_code=ErrorCode.TIMEOUT.value, error="soft time limit")
                    return ExtractionError.of(
                        ErrorCode.TIMEOUT,
                        "the job reached its time limit (VETQ_TASK_TIME_LIMIT_S) before it finished",
                        trace_id=trace_id,
                        usage=usage,
                    )
                log.exception("extraction_internal_error")
                return ExtractionError.of(
                    ErrorCode.INTERNAL_ERROR,
                    f"internal error ({type(exc).__name__}); see the worker log for trace {trace_id}",
                    trace_id=trace_id,
                    usage=usage,
                )

    def _thresholds(self) -> ThresholdTable:
        """VETQ_FIELD_THRESHOLDS, read once per pipeline (a worker's process)."""
        table = self._threshold_table
        if table is None:
            with self._making:
                table = self._threshold_table
                if table is None:
                    table = self._threshold_table = self.settings.threshold_table()
        return table

    def _run(
        self, request: ExtractionRequest | ValidationRequest, trace_id: str, usage: dict[str, Usage], gate: CallGate
    ) -> ExtractionResult:
        started = time.perf_counter()
        # A producer checked the same (a PDF's size and magic); checked again, as a
        # producer of another version or configuration may have sent the message.
        pdf = check_input(
            request.text,
            request.pdf,
            max_chars=self.settings.max_document_chars,
            max_pdf_bytes=self.settings.max_pdf_bytes,
        )
        schema = resolve(request.record_schema, self.settings.schema_limits())
        # A job's own threshold holds for every field; else VETQ_FIELD_THRESHOLDS's for the
        # schema and its fields (core/extraction/thresholds.py), else VETQ_FIELD_THRESHOLD.
        calibrated = self._thresholds().for_schema(schema.name)
        per_field = calibrated.fields if request.field_threshold is None else {}
        field_threshold = _pick(
            request.field_threshold, _pick(calibrated.field_threshold, self.settings.field_threshold)
        )
        overall_threshold = _pick(request.overall_threshold, self.settings.overall_threshold)
        notes: list[str] = []

        if isinstance(request, ValidationRequest):
            try:
                data = schema.validate_data(request.data)
            except RecordError as exc:
                raise InvalidInputError(f"data does not fit the {schema.name} schema: {exc}") from None
            notes.append("generator off: data supplied by the caller")
        # A PDF is converted once the request is known to be good: the costly step last.
        if pdf is not None:
            with stage_span("pdf"):
                pages = self._convert(pdf, notes)
        else:
            pages = None
        text = pages.text if pages is not None else request.text or ""
        if not isinstance(request, ValidationRequest):
            generator = Generator(
                self.client("generator"),
                gate,
                max_tokens=self.settings.generator_max_tokens,
                repair_retries=self.settings.parse_retries,
            )
            with stage_span("generator", **{"vetq.schema": schema.name}) as span:
                answer = generator.run(text, schema)
                span.set_attribute("vetq.attempts", answer.attempts)
            usage["generator"] = answer.usage
            data = answer.value
            if answer.attempts > 1:
                notes.append(f"generator answer repaired after {answer.attempts - 1} unusable attempt(s)")

        record_leaves = list(leaves(schema.fields, data))
        with stage_span("heuristics"):
            checks = run_heuristics(text, data, schema)
            if pages is not None:
                penalise_ocr_doubts(checks, pages, self.settings.ocr_min_confidence)

        critique = None
        critic_summary = None
        if request.heuristics_only:
            notes.append(
                f"critic off: committed fields start from {BASE_CONFIDENCE_WITHOUT_CRITIC} before the heuristics"
            )
        elif any(leaf.value is not None for leaf in record_leaves):
            critic = Critic(
                self.client("critic"),
                gate,
                max_tokens=self.settings.critic_max_tokens,
                repair_retries=self.settings.parse_retries,
            )
            with stage_span("critic") as span:
                answer_c = critic.run(text, schema, data)
                span.set_attribute("vetq.attempts", answer_c.attempts)
            usage["critic"] = answer_c.usage
            critique = answer_c.value
            critic_summary = critique.summary or None
        else:
            notes.append("nothing was extracted, so the critic was not asked")

        with stage_span("gate") as span:
            decision = decide(
                record_leaves,
                checks,
                critique,
                field_threshold=field_threshold,
                overall_threshold=overall_threshold,
                field_thresholds=per_field,
            )
            span.set_attribute("vetq.status", str(decision.status))
            span.set_attribute("vetq.flagged_fields", len(decision.flagged_fields))
        result = ExtractionResult(
            status=decision.status,
            schema=schema.info,
            data=data,
            field_confidence=decision.field_confidence,
            overall_confidence=decision.overall_confidence,
            flagged_fields=decision.flagged_fields,
            field_provenance={
                path: locate(check.spans, pages) if pages is not None else check.spans
                for path, check in checks.items()
                if check.spans
            },
            trace_id=trace_id,
            critic_summary=critic_summary,
            notes=notes + decision.notes,
            heuristic_notes=decision.heuristic_notes,
            usage=usage,
        )
        log.info(
            "extraction_done",
            status=result.status,
            schema=schema.name,
            flagged=[f.field for f in result.flagged_fields],
            overall_confidence=result.overall_confidence,
            total_tokens=sum(u.total_tokens for u in usage.values()),
            cost_usd=result.cost_usd,
            duration_ms=round((time.perf_counter() - started) * 1000, 1),
        )
        return result

    def _convert(self, pdf: bytes, notes: list[str]) -> PdfText:
        """The PDF's pages as text, converted in a child process under VETQ_PDF_TIMEOUT_S."""
        started = time.perf_counter()
        pages = convert_isolated(pdf, self.settings.convert_options())
        check_document(pages.text, self.settings.max_document_chars, what="the PDF")
        if pages.ocr_pages:
            listed = ", ".join(str(n) for n in pages.ocr_pages)
            notes.append(f"{'page' if len(pages.ocr_pages) == 1 else 'pages'} {listed} read by OCR (no text layer)")
        log.info(
            "pdf_converted",
            pages=len(pages.pages),
            ocr_pages=pages.ocr_pages,
            chars=len(pages.text),
            duration_ms=round((time.perf_counter() - started) * 1000, 1),
        )
        return pages


def _pick(requested: float | None, default: float) -> float:
    return default if requested is None else requested


def _trace_id_of(payload: Any) -> str:
    if isinstance(payload, dict):
        candidate = payload.get("trace_id")
        if isinstance(candidate, str) and 0 < len(candidate) <= 128:
            return candidate
    elif getattr(payload, "trace_id", None):
        return str(payload.trace_id)
    return uuid.uuid4().hex


def _time_limit_errors() -> tuple[type[BaseException], ...]:
    """Celery's soft time limit, raised into whatever the job was doing; core does not
    import Celery at module top, and without it no such limit can strike."""
    try:
        from billiard.exceptions import SoftTimeLimitExceeded
    except ImportError:
        return ()
    return (SoftTimeLimitExceeded,)


def _merge_partial_usage(usage: dict[str, Usage], exc: LLMError) -> None:
    if exc.usage is not None and exc.usage.total_tokens:
        usage["failed_stage"] = usage.get("failed_stage", Usage()) + exc.usage
