"""Turn a producer's payload into a request model, or an INVALID_INPUT error whose
message says what to fix (never the offending document text)."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from core.errors import InvalidInputError

M = TypeVar("M", bound=BaseModel)


def explain(exc: ValidationError, *, limit: int = 6) -> str:
    parts = []
    for error in exc.errors()[:limit]:
        where = ".".join(str(p) for p in error["loc"]) or "request"
        message = error["msg"].removeprefix("Value error, ")
        if error["type"] == "extra_forbidden":
            message = "unknown field"
        parts.append(f"{where}: {message}")
    more = len(exc.errors()) - limit
    if more > 0:
        parts.append(f"and {more} more problem(s)")
    return "; ".join(parts)


def parse_model(model: type[M], payload: Any, *, what: str = "request") -> M:
    if isinstance(payload, model):
        return payload
    if not isinstance(payload, dict):
        raise InvalidInputError(f"the {what} must be a JSON object, got {type(payload).__name__}")
    try:
        return model.model_validate(payload)
    except ValidationError as exc:
        raise InvalidInputError(f"invalid {what}: {explain(exc)}") from None
    except RecursionError:
        raise InvalidInputError(f"invalid {what}: nested too deeply") from None
