"""The one error vocabulary shared by extraction and review jobs."""

from __future__ import annotations

from enum import StrEnum


class ErrorCode(StrEnum):
    INVALID_INPUT = "INVALID_INPUT"
    # A document vetq cannot read as sent: a PDF page with no text layer (a scan) on a
    # worker without OCR. The message names the pages.
    UNSUPPORTED_DOCUMENT = "UNSUPPORTED_DOCUMENT"
    SCHEMA_INVALID = "SCHEMA_INVALID"
    SCHEMA_MISMATCH = "SCHEMA_MISMATCH"
    CONFIG_ERROR = "CONFIG_ERROR"
    PROVIDER_HTTP_ERROR = "PROVIDER_HTTP_ERROR"
    PROVIDER_NETWORK_ERROR = "PROVIDER_NETWORK_ERROR"
    RATE_LIMITED = "RATE_LIMITED"
    TIMEOUT = "TIMEOUT"
    MALFORMED_RESPONSE = "MALFORMED_RESPONSE"
    OUTPUT_TRUNCATED = "OUTPUT_TRUNCATED"
    BUDGET_EXCEEDED = "BUDGET_EXCEEDED"
    BLINDNESS_LEAK = "BLINDNESS_LEAK"
    NOT_FOUND = "NOT_FOUND"
    SERVICE_UNAVAILABLE = "SERVICE_UNAVAILABLE"
    # An idempotency key already names a job whose request was different.
    IDEMPOTENCY_CONFLICT = "IDEMPOTENCY_CONFLICT"
    # The job was canceled (Job.cancel, `vetq cancel`): it never ran, or it stopped
    # before its next model call; its result keeps the usage of the calls it made.
    CANCELED = "CANCELED"
    # Two people at one thing: an inbox item claimed by another reviewer, or already resolved.
    CONFLICT = "CONFLICT"
    INTERNAL_ERROR = "INTERNAL_ERROR"


class VetqError(Exception):
    """A failure that becomes an error envelope: it carries its code and a message
    safe to show a user (no document text, no secret)."""

    code: ErrorCode = ErrorCode.INTERNAL_ERROR

    def __init__(self, message: str, *, code: ErrorCode | None = None) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else self.code.value


class InvalidInputError(VetqError):
    code = ErrorCode.INVALID_INPUT


class ConfigError(VetqError):
    code = ErrorCode.CONFIG_ERROR


class NotFoundError(VetqError):
    """The thing asked for (a job id, say) was never issued here, or has expired."""

    code = ErrorCode.NOT_FOUND


class IdempotencyConflictError(VetqError):
    code = ErrorCode.IDEMPOTENCY_CONFLICT


class ConflictError(VetqError):
    """The thing is someone else's now (an inbox item another reviewer claimed) or is
    done (resolved): nothing was written."""

    code = ErrorCode.CONFLICT


class ServiceUnavailableError(VetqError):
    """Redis (or the embedded service) cannot be reached or started: nothing about the
    request is wrong, the service is."""

    code = ErrorCode.SERVICE_UNAVAILABLE
