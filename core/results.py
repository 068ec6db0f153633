"""The result format every job returns, and the one reader of a result's error.

Format 2 (RESULT_FORMAT): every result, success or failure, of every job kind, is a
JSON object with `"format": 2` and a `"status"` (`ok` | `needs_review` | `error` for
extraction and validation, `ok` | `error` for reviews). A failure is

    {"format": 2, "status": "error", "error": {"code": "<ErrorCode>", "message": "..."},
     "trace_id": "...", ...}

plus what its kind adds (extraction: per-stage `usage`; review: `meta`). A canceled
job is a failure like any other, with the code CANCELED (`canceled` tells it apart):
one shape for every reader of `status`, and the usage of the calls it made before it
stopped, where the run that stopped knew it.

Format 1 (before the field existed) had two error shapes: extraction's
`{"status": "error", "error_code", "error_message"}` and the review's
`{"error": {"code", "message"}, "meta"}`, and a successful review had no status. A
worker of the old version may still have such a result in the backend (for
VETQ_RESULT_TTL_S), so `upgrade` reads both and everything else reads format 2."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal, Self

from pydantic import BaseModel

from vetq.core.errors import ErrorCode

RESULT_FORMAT: Literal[2] = 2


class ErrorBody(BaseModel):
    code: ErrorCode
    message: str


class ErrorResult(BaseModel):
    """The failure of a job of any kind. A job kind subclasses it for its extras."""

    format: Literal[2] = RESULT_FORMAT
    status: Literal["error"] = "error"
    error: ErrorBody
    trace_id: str | None = None

    @classmethod
    def of(cls, code: ErrorCode, message: str, **extras: Any) -> Self:
        return cls(error=ErrorBody(code=code, message=message), **extras)

    @property
    def code(self) -> ErrorCode:
        return self.error.code

    @property
    def message(self) -> str:
        return self.error.message


def error_result(code: ErrorCode | str, message: str, *, trace_id: str | None = None) -> dict[str, Any]:
    """The JSON of a failure made outside any pipeline: by a client, the CLI, a batch line."""
    body: dict[str, Any] = {
        "format": RESULT_FORMAT,
        "status": "error",
        "error": {"code": str(code), "message": message},
    }
    if trace_id is not None:
        body["trace_id"] = trace_id
    return body


def failure_result(job_id: str, trace_id: str | None, exc: BaseException | None) -> dict[str, Any]:
    """The result of a job whose task raised (Celery's FAILURE state): what a client reads
    and what its callback receives."""
    return error_result(
        ErrorCode.INTERNAL_ERROR,
        f"job {job_id} failed in the worker ({type(exc).__name__ if exc else 'unknown'})",
        trace_id=trace_id,
    )


def canceled_result(message: str, *, trace_id: str | None = None, spent_unknown: bool = False) -> dict[str, Any]:
    """The result of a job canceled before a run of it could stop at a model call: by
    the client that canceled it (queued, requeued or parked) or by a worker at the
    start of a run. `spent_unknown`: an earlier run may have paid for model calls this
    result cannot name, so its `cost_usd` is null (unknown), never a silent 0."""
    body = error_result(ErrorCode.CANCELED, message, trace_id=trace_id)
    if spent_unknown:
        body["cost_usd"] = None
    return body


def canceled(result: Any) -> bool:
    """True for the result of a canceled job (error code CANCELED), in either format."""
    error = error_of(result)
    return error is not None and error[0] == ErrorCode.CANCELED.value


def upgrade(result: Mapping[str, Any]) -> dict[str, Any]:
    """A result in format 2, whichever format it was written in. A format-2 result
    comes back as it is."""
    current = dict(result)
    if current.get("format") == RESULT_FORMAT:
        return current
    meta = current.get("meta")
    if not isinstance(meta, Mapping):
        meta = {}
    error = current.get("error")
    if current.get("status") == "error" and "error_code" in current:
        code, message = current.pop("error_code"), current.pop("error_message", None)
        current["error"] = {"code": str(code or ErrorCode.INTERNAL_ERROR), "message": str(message or "")}
    elif isinstance(error, Mapping):
        current["error"] = {
            "code": str(error.get("code") or ErrorCode.INTERNAL_ERROR),
            "message": str(error.get("message") or ""),
        }
        current["status"] = "error"
    elif "verdict" in current:  # a review's success had no status
        current.setdefault("status", "ok")
    if "status" in current and "trace_id" not in current and meta.get("trace_id"):
        current["trace_id"] = meta["trace_id"]
    head = {"format": RESULT_FORMAT, **({"status": current.pop("status")} if "status" in current else {})}
    return head | current


def error_of(result: Any) -> tuple[str, str] | None:
    """(code, message) of a failed job's result, in either format; None for a success
    (or anything that is not a result)."""
    if not isinstance(result, Mapping):
        return None
    current = upgrade(result)
    error = current.get("error")
    if current.get("status") != "error" or not isinstance(error, Mapping):
        return None
    return str(error.get("code")), str(error.get("message"))


_TOKEN_COUNTS = ("prompt_tokens", "completion_tokens", "total_tokens")


def _usages_of(result: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The usage entries a result reports: an extraction's per stage, a review's in its meta."""
    usage = result.get("usage")
    if isinstance(usage, Mapping):
        return [u for u in usage.values() if isinstance(u, Mapping)]
    meta = result.get("meta")
    if isinstance(meta, Mapping) and isinstance(meta.get("usage"), Mapping):
        return [meta["usage"]]
    return []


def _cost_of(result: Mapping[str, Any], usages: list[Mapping[str, Any]]) -> float | None:
    meta = result.get("meta")
    if "cost_usd" in result:
        cost = result["cost_usd"]
    elif isinstance(meta, Mapping) and "cost_usd" in meta:
        cost = meta["cost_usd"]
    else:
        # No cost said: nothing spent, or a worker that did not price its calls (unknown).
        spent = any(_count(u.get(name)) for u in usages for name in _TOKEN_COUNTS)
        return None if spent else 0.0
    return float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) else None


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def spent_of(results: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """What `results` (of any job kind, in either format) spent together: `cost_usd` in
    US dollars (None as soon as one result's cost is unknown, rounded to micro-dollars)
    and the token counts. A result that reports no usage (a failure made before any
    job ran) spent nothing."""
    cost: float | None = 0.0
    totals = dict.fromkeys(_TOKEN_COUNTS, 0)
    for result in results:
        if not isinstance(result, Mapping):
            continue
        current = upgrade(result)
        usages = _usages_of(current)
        for usage in usages:
            for name in _TOKEN_COUNTS:
                totals[name] += _count(usage.get(name))
        one = _cost_of(current, usages)
        cost = None if cost is None or one is None else round(cost + one, 6)
    return {"cost_usd": cost, **totals}
