"""Turn a producer's payload into a request model, or an INVALID_INPUT error whose
message says what to fix (never the offending document text)."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from vetq.core.errors import InvalidInputError

M = TypeVar("M", bound=BaseModel)


def _dotted(loc: tuple[int | str, ...]) -> str:
    return ".".join(str(part) for part in loc)


def explain(
    exc: ValidationError,
    *,
    limit: int | None = 6,
    root: str = "request",
    path: Callable[[tuple[int | str, ...]], str] = _dotted,
) -> str:
    """The one explainer of a pydantic ValidationError, for a producer's payload, a
    model's answer, MCP arguments and settings alike: `where: what` for the first
    `limit` problems (None: all), then how many more there are. Field paths and
    messages only, never the input itself. `root` names the whole object when a problem
    is in no one field ("request", "answer"); `path` spells a field's location (the
    settings name it by its VETQ_ variable)."""
    errors = exc.errors(include_input=False, include_url=False)
    shown = errors if limit is None else errors[:limit]
    parts = []
    for error in shown:
        where = path(error["loc"]) if error["loc"] else root
        message = error["msg"].removeprefix("Value error, ")
        if error["type"] == "extra_forbidden":
            message = "unknown field"
        parts.append(f"{where}: {message}")
    more = len(errors) - len(shown)
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


# --------------------------------------------------------------------------- strict JSON

# Deeper than any request vetq takes (a record is flat, a review request two levels),
# far below what json or pydantic could recurse into without failing.
MAX_JSON_DEPTH = 32

_BOM = "\ufeff"


class _NotFinite:
    """What the reader makes of NaN, Infinity or a number too large for a float, so the
    walk after parsing can say where it stood instead of a bare parse error."""

    __slots__ = ("literal",)

    def __init__(self, literal: str) -> None:
        self.literal = literal


def _float_or_not_finite(literal: str) -> float | _NotFinite:
    number = float(literal)
    return number if math.isfinite(number) else _NotFinite(literal)


def json_problem(value: Any) -> str | None:
    """Why `value` (parsed JSON, or the same shapes built in Python) is no input vetq
    takes: a number that is not finite, or nesting deeper than MAX_JSON_DEPTH. The
    answer names where the problem stands (`data.total`); None when there is none."""
    stack: list[tuple[Any, tuple[str, ...]]] = [(value, ())]
    while stack:
        item, path = stack.pop()
        if isinstance(item, (dict, list)):
            if len(path) >= MAX_JSON_DEPTH:
                return f"nested more than {MAX_JSON_DEPTH} levels deep"
            if isinstance(item, dict):
                stack.extend((child, (*path, f".{key}")) for key, child in item.items())
            else:
                stack.extend((child, (*path, f"[{index}]")) for index, child in enumerate(item))
            continue
        literal = None
        if isinstance(item, _NotFinite):
            literal = item.literal
        elif isinstance(item, float) and not math.isfinite(item):
            literal = repr(item)
        if literal is not None:
            where = "".join(path).removeprefix(".") or "the value"
            return f"{where} is {literal[:40]}: numbers must be finite (no NaN, Infinity or overflow such as 1e400)"
    return None


def load_json(text: str | bytes, *, what: str) -> Any:
    """The one reader of JSON from outside (CLI flags and files, batch lines): strict
    UTF-8, a leading BOM ignored, NaN/Infinity and overflowing numbers refused, nesting
    bounded. Raises InvalidInputError whose message starts with `what`."""
    value = parse_json_unchecked(text, what=what)
    problem = json_problem(value)
    if problem is not None:
        raise InvalidInputError(f"{what}: {problem}")
    return value


def parse_json_unchecked(text: str | bytes, *, what: str) -> Any:
    """load_json's first half, for a caller that wants to look at a parsed value (a
    batch line's id) before json_problem refuses it. Raises InvalidInputError for what
    is not JSON at all; non-finite numbers stay in as markers json_problem reports."""
    if isinstance(text, bytes):
        text = decode_utf8(text, what=what)
    text = text.removeprefix(_BOM)
    try:
        return json.loads(text, parse_constant=_NotFinite, parse_float=_float_or_not_finite)
    except RecursionError:
        raise InvalidInputError(f"{what}: nested more than {MAX_JSON_DEPTH} levels deep") from None
    except ValueError as exc:
        raise InvalidInputError(f"{what} is not valid JSON ({str(exc)[:80]})") from None


def decode_utf8(raw: bytes, *, what: str) -> str:
    """Bytes from outside as text: UTF-8 or refused, a leading BOM dropped (it marks
    the encoding, it is not content). One rule for stdin, files and batch lines."""
    try:
        return raw.decode("utf-8").removeprefix(_BOM)
    except UnicodeDecodeError as exc:
        raise InvalidInputError(
            f"{what} is not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start}): save it as UTF-8"
        ) from None
