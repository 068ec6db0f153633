"""The extraction contract: the typed record, the Critic's verdicts, the result
envelope and the requests producers send."""

from __future__ import annotations

import math
from datetime import date
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from vetq.core.extraction.currencies import ISO_4217
from vetq.core.llm.types import Usage
from vetq.core.results import RESULT_FORMAT, ErrorResult
from vetq.core.validation import json_problem

FIELD_NAMES: tuple[str, ...] = (
    "vendor_name",
    "invoice_number",
    "invoice_date",
    "subtotal",
    "tax",
    "total",
    "currency",
)
AMOUNT_FIELDS: tuple[str, ...] = ("subtotal", "tax", "total")

DEFAULT_FIELD_THRESHOLD = 0.70
DEFAULT_OVERALL_THRESHOLD = 0.75


class InvoiceData(BaseModel):
    """The typed record. Every field is nullable: a value the source does not hold
    is null, never invented."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    vendor_name: str | None = Field(default=None, max_length=500)
    invoice_number: str | None = Field(default=None, max_length=200)
    invoice_date: date | None = None
    subtotal: float | None = None
    tax: float | None = None
    total: float | None = None
    currency: str | None = None

    @field_validator("vendor_name", "invoice_number", mode="before")
    @classmethod
    def _blank_is_null(cls, value: Any) -> Any:
        if isinstance(value, str) and not value.strip():
            return None
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return str(value)
        return value.strip() if isinstance(value, str) else value

    @field_validator("invoice_date", mode="before")
    @classmethod
    def _iso_date_only(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = value.strip()
            if not value:
                return None
            try:
                return date.fromisoformat(value)
            except ValueError as exc:
                raise ValueError(f"invoice_date must be a real date as YYYY-MM-DD, got {value!r}") from exc
        return value

    @field_validator("subtotal", "tax", "total", mode="before")
    @classmethod
    def _plain_number(cls, value: Any) -> Any:
        if isinstance(value, bool):
            raise ValueError("an amount must be a number, not a boolean")
        if isinstance(value, str):
            raise ValueError(f"an amount must be a JSON number (like 1234.56), got the string {value[:40]!r}")
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError("an amount must be a finite number")
        return value

    @field_validator("currency", mode="before")
    @classmethod
    def _iso_currency(cls, value: Any) -> Any:
        if value is None:
            return None
        if not isinstance(value, str):
            raise ValueError("currency must be an ISO 4217 code such as EUR")
        code = value.strip().upper()
        if not code:
            return None
        if code not in ISO_4217:
            raise ValueError(f"currency must be an ISO 4217 code such as EUR, got {value[:20]!r}")
        return code

    def committed(self) -> dict[str, Any]:
        """The non-null fields, in schema order."""
        return {name: getattr(self, name) for name in FIELD_NAMES if getattr(self, name) is not None}


class FieldVerdict(BaseModel):
    model_config = ConfigDict(allow_inf_nan=False)

    field: str
    confidence: float = Field(ge=0.0, le=1.0)
    grounded: bool
    reason: str = ""


class CritiqueResult(BaseModel):
    model_config = ConfigDict(allow_inf_nan=False)

    verdicts: list[FieldVerdict] = Field(default_factory=list)
    overall_confidence: float = Field(ge=0.0, le=1.0)
    summary: str = ""


class Span(BaseModel):
    """Where a value stands in the source: text[start:end] == text."""

    start: int
    end: int
    text: str


class FlaggedField(BaseModel):
    field: str
    value: Any
    confidence: float
    reason: str


class ExtractionResult(BaseModel):
    format: Literal[2] = RESULT_FORMAT
    status: Literal["ok", "needs_review"]
    data: InvoiceData
    field_confidence: dict[str, float | None]
    overall_confidence: float
    flagged_fields: list[FlaggedField] = Field(default_factory=list)
    field_provenance: dict[str, list[Span]] = Field(default_factory=dict)
    trace_id: str
    critic_summary: str | None = None
    notes: list[str] = Field(default_factory=list)
    heuristic_notes: dict[str, list[str]] = Field(default_factory=dict)
    usage: dict[str, Usage] = Field(default_factory=dict)


class ExtractionError(ErrorResult):
    """A failed extraction or validation, with the tokens its stages spent before it failed."""

    usage: dict[str, Usage] = Field(default_factory=dict)


ExtractionOutcome = ExtractionResult | ExtractionError


DOCUMENT_TEXT = (
    "The document's full text exactly as received (e.g. an invoice pasted or forwarded in an email). Do not "
    "summarise or reformat it: every value is checked against this text."
)


class ExtractionOptions(BaseModel):
    """Gate settings a caller may choose per job. The descriptions are what a caller
    (an agent over MCP included) reads about each field."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

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


class ExtractionRequest(ExtractionOptions):
    kind: Literal["extract"] = "extract"
    text: str = Field(description=DOCUMENT_TEXT)


class ValidationRequest(ExtractionOptions):
    kind: Literal["validate"] = "validate"
    text: str = Field(description=DOCUMENT_TEXT)
    data: dict[str, Any] = Field(
        description="The record to check, as a JSON object with any of: vendor_name, invoice_number, invoice_date "
        "(YYYY-MM-DD), subtotal, tax, total (JSON numbers), currency (ISO 4217 code). Use null for a value the "
        "document does not hold."
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
