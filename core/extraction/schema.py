"""The extraction contract: the Critic's verdicts, the result envelope and the
requests producers send. The record itself is whatever the job's schema says
(core.schemas); values are keyed by their path in it (`line_items[2].amount`)."""

from __future__ import annotations

import base64
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)

from vetq.core.llm.types import Usage, add_costs
from vetq.core.results import RESULT_FORMAT, ErrorResult
from vetq.core.schemas.compiled import SchemaInfo
from vetq.core.validation import json_problem

DEFAULT_FIELD_THRESHOLD = 0.70
DEFAULT_OVERALL_THRESHOLD = 0.75


class FieldVerdict(BaseModel):
    model_config = ConfigDict(allow_inf_nan=False)

    field: str  # a value's path, or an item's or list's (judging every value in it)
    confidence: float = Field(ge=0.0, le=1.0)
    grounded: bool
    reason: str = ""


class CritiqueResult(BaseModel):
    model_config = ConfigDict(allow_inf_nan=False)

    verdicts: list[FieldVerdict] = Field(default_factory=list)
    overall_confidence: float = Field(ge=0.0, le=1.0)
    summary: str = ""


class Span(BaseModel):
    """Where a value stands in the source: text[start:end] == text. For a PDF the
    source is its pages' texts joined by form feeds, and a span also names its page
    (1-based), where it stands in that page's text, and the boxes of the words it
    covers (PDF points, origin top-left, [x0, y0, x1, y1]); fields that do not apply
    are left out of the JSON."""

    start: int
    end: int
    text: str
    page: int | None = None
    page_start: int | None = None
    page_end: int | None = None
    boxes: list[list[float]] | None = None

    @model_serializer(mode="wrap")
    def _without_nulls(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return {key: value for key, value in handler(self).items() if value is not None}


class FlaggedField(BaseModel):
    field: str
    value: Any
    confidence: float
    reason: str


class ExtractionResult(BaseModel):
    # `schema` on the wire; a pydantic model cannot name a field so.
    model_config = ConfigDict(serialize_by_alias=True, validate_by_name=True, validate_by_alias=True)

    format: Literal[2] = RESULT_FORMAT
    status: Literal["ok", "needs_review"]
    schema_info: SchemaInfo = Field(alias="schema")
    data: dict[str, Any]
    field_confidence: dict[str, float | None]
    overall_confidence: float
    flagged_fields: list[FlaggedField] = Field(default_factory=list)
    field_provenance: dict[str, list[Span]] = Field(default_factory=dict)
    trace_id: str
    critic_summary: str | None = None
    notes: list[str] = Field(default_factory=list)
    heuristic_notes: dict[str, list[str]] = Field(default_factory=dict)
    usage: dict[str, Usage] = Field(default_factory=dict)
    # The sum of the stages' cost_usd (always derived from `usage`): 0.0 when no model
    # was called, null when a stage's model has no price.
    cost_usd: float | None = 0.0

    @model_validator(mode="after")
    def _cost_of_the_stages(self) -> ExtractionResult:
        self.cost_usd = add_costs(*(stage.cost_usd for stage in self.usage.values()))
        return self


class ExtractionError(ErrorResult):
    """A failed extraction or validation, with the tokens its stages spent before it
    failed and what they cost (`cost_usd`, derived from `usage` as on a result)."""

    usage: dict[str, Usage] = Field(default_factory=dict)
    cost_usd: float | None = 0.0

    @model_validator(mode="after")
    def _cost_of_the_stages(self) -> ExtractionError:
        self.cost_usd = add_costs(*(stage.cost_usd for stage in self.usage.values()))
        return self


ExtractionOutcome = ExtractionResult | ExtractionError


DOCUMENT_TEXT = (
    "The document's full text exactly as received (e.g. an invoice pasted or forwarded in an email). Do not "
    "summarise or reformat it: every value is checked against this text."
)


SCHEMA_ARGUMENT = (
    "Optional: the record's schema. A built-in's name (invoice, receipt, purchase_order, shipping_notice; "
    "default invoice) or a schema document (an object with name, version, description, fields, rules)."
)


class ExtractionOptions(BaseModel):
    """Gate settings a caller may choose per job. The descriptions are what a caller
    (an agent over MCP included) reads about each field."""

    model_config = ConfigDict(
        extra="forbid", allow_inf_nan=False, serialize_by_alias=True, validate_by_name=True, validate_by_alias=True
    )

    # `schema` on the wire; a pydantic model cannot name a field so.
    record_schema: str | dict[str, Any] | None = Field(default=None, alias="schema", description=SCHEMA_ARGUMENT)
    field_threshold: float | None = Field(
        default=None,
        ge=0.0,
        le=1.0,
        description="Optional, 0-1: a field below this confidence is flagged (default VETQ_FIELD_THRESHOLD).",
    )
    overall_threshold: float | None = Field(
        default=None,
        ge=0.0,
        le=1.0,
        description="Optional, 0-1: the job is needs_review below this overall confidence "
        "(default VETQ_OVERALL_THRESHOLD).",
    )
    heuristics_only: bool = Field(
        default=False,
        description="Skip the Critic model and use only the deterministic checks (grounding, arithmetic, dates, "
        "currency). Faster and needs no model; a validation then needs no provider key at all.",
    )
    trace_id: str | None = Field(
        default=None, max_length=128, description="Carried into every log line and the result; one is made if absent."
    )


DOCUMENT_PDF = (
    "The document as a PDF file: the file's bytes, base64-encoded (standard alphabet). Send `text` or `pdf`, "
    "not both. Never a file path: only the bytes sent are read. A scanned page (no text layer) is read by OCR "
    "where the workers have it, else refused with UNSUPPORTED_DOCUMENT naming the page."
)


class DocumentInput(ExtractionOptions):
    """The document, as text or as a PDF (base64 on the wire; bytes are encoded here):
    exactly one of them. A worker converts the PDF; the producer checks only its size
    and magic (core.documents.input)."""

    text: str | None = Field(default=None, description=DOCUMENT_TEXT)
    pdf: str | None = Field(default=None, description=DOCUMENT_PDF)

    @field_validator("pdf", mode="before")
    @classmethod
    def _pdf_bytes_as_base64(cls, value: Any) -> Any:
        if isinstance(value, (bytes, bytearray, memoryview)):
            return base64.b64encode(bytes(value)).decode("ascii")
        return value

    @model_validator(mode="after")
    def _one_document(self) -> DocumentInput:
        if (self.text is None) == (self.pdf is None):
            raise ValueError(
                "send the document as `text` or as `pdf` (base64), exactly one of them"
                if self.text is None
                else "send the document as `text` or as `pdf`, not both"
            )
        return self


class ExtractionRequest(DocumentInput):
    kind: Literal["extract"] = "extract"


class ValidationRequest(DocumentInput):
    kind: Literal["validate"] = "validate"
    data: dict[str, Any] = Field(
        description="The record to check, as a JSON object with the schema's fields (for the default invoice: "
        "vendor_name, invoice_number, invoice_date as YYYY-MM-DD, subtotal, tax, total as JSON numbers, currency "
        "as an ISO 4217 code, line_items). Use null for a value the document does not hold."
    )

    @field_validator("data")
    @classmethod
    def _json_safe(cls, value: dict[str, Any]) -> dict[str, Any]:
        # Checked here, before the request is serialized: a JSON dump would turn NaN
        # and Infinity into null and a record check would then pass on a missing
        # amount; nesting beyond what JSON encoding can handle would crash the send.
        problem = json_problem(value)
        if problem is not None:
            raise ValueError(problem)
        return value
