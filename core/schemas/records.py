"""Records of a compiled schema: the pydantic models that parse one (strict for a
caller's data, lenient for a model's answer) and the walk that lists every value of a
record by its path (`line_items[2].amount`)."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, create_model

from vetq.core.extraction.clock import clock_value, parse_time_value
from vetq.core.extraction.currencies import ISO_4217

if TYPE_CHECKING:
    from vetq.core.schemas.compiled import FieldDef

__all__ = ["Leaf", "RecordError", "ancestors", "build_record_model", "leaves", "spell_location"]

MAX_TEXT_CHARS = 2000


class RecordError(ValueError):
    """A record that does not fit its schema; the message names each path."""


def spell_location(loc: Sequence[int | str]) -> str:
    """A pydantic error location as a record path: ("line_items", 1, "amount") ->
    line_items[1].amount."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


# --- values, one parser per kind ------------------------------------------------------
def _text(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError("must be text, not a boolean")
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        value = value.strip()
        return value or None
    return value


def _number(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError("must be a number, not a boolean")
    if isinstance(value, str):
        raise ValueError(f"must be a JSON number (like 1234.56), got the string {value[:40]!r}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError("must be a finite number")
    return value


def _iso_date(value: Any) -> Any:
    if isinstance(value, str):
        value = value.strip()
        if not value:
            return None
        try:
            return date.fromisoformat(value)
        except ValueError as exc:
            raise ValueError(f"must be a real date as YYYY-MM-DD, got {value[:40]!r}") from exc
    if value is not None and not isinstance(value, date):
        raise ValueError("must be a date as YYYY-MM-DD")
    return value


def _clock_time(value: Any) -> Any:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    parsed = parse_time_value(value)
    if parsed is None:
        raise ValueError(f"must be a time of day as HH:MM (24-hour), got {str(value)[:40]!r}")
    return clock_value(parsed)


def _currency(value: Any) -> Any:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError("must be an ISO 4217 code such as EUR")
    code = value.strip().upper()
    if not code:
        return None
    if code not in ISO_4217:
        raise ValueError(f"must be an ISO 4217 code such as EUR, got {value[:20]!r}")
    return code


def _enum(allowed: Sequence[str]) -> Any:
    by_folded = {v.casefold(): v for v in allowed}

    def parse(value: Any) -> Any:
        if value is None:
            return None
        if not isinstance(value, str):
            raise ValueError(f"must be one of: {', '.join(allowed)}")
        if not value.strip():
            return None
        chosen = by_folded.get(value.strip().casefold())
        if chosen is None:
            raise ValueError(f"must be one of: {', '.join(allowed)}; got {value[:40]!r}")
        return chosen

    return parse


def _boolean(value: Any) -> Any:
    if value is None or isinstance(value, bool):
        return value
    raise ValueError("must be true or false")


def _annotation(field: FieldDef, *, strict: bool, model_name: str) -> Any:
    kind = field.kind
    if kind in ("text", "identifier", "email", "phone", "url"):
        return Annotated[Annotated[str, Field(max_length=MAX_TEXT_CHARS)] | None, BeforeValidator(_text)]
    if kind in ("amount", "number", "quantity"):
        return Annotated[float | None, BeforeValidator(_number)]
    if kind == "date":
        return Annotated[date | None, BeforeValidator(_iso_date)]
    if kind == "time":
        return Annotated[str | None, BeforeValidator(_clock_time)]
    if kind == "currency":
        return Annotated[str | None, BeforeValidator(_currency)]
    if kind == "enum":
        return Annotated[str | None, BeforeValidator(_enum(tuple(field.values)))]
    if kind == "boolean":
        return Annotated[bool | None, BeforeValidator(_boolean)]
    child = build_record_model(f"{model_name}_{field.name}", field.children, strict=strict)
    if kind == "object":
        return child | None
    return Annotated[list[child], Field(max_length=field.max_items)] | None  # type: ignore[valid-type]


def build_record_model(name: str, fields: Sequence[FieldDef], *, strict: bool) -> type[BaseModel]:
    """The model of one object of the schema. Strict (a caller's data) refuses a key the
    schema does not have; lenient (a model's answer) drops it: a model that adds a
    "notes" key has still answered the question."""
    config = ConfigDict(extra="forbid" if strict else "ignore", allow_inf_nan=False)
    definitions: dict[str, Any] = {f.name: (_annotation(f, strict=strict, model_name=name), None) for f in fields}
    return create_model(name, __config__=config, **definitions)


def validate_record(model: type[BaseModel], data: Any, *, what: str, limit: int = 6) -> dict[str, Any]:
    """`data` parsed by `model`, as JSON-ready values; RecordError naming each path."""
    from vetq.core.validation import explain

    if not isinstance(data, dict):
        raise RecordError(f"{what} must be a JSON object, got {type(data).__name__}")
    try:
        return model.model_validate(data).model_dump(mode="json")
    except ValidationError as exc:
        raise RecordError(explain(exc, limit=limit, root=what, path=spell_location)) from None
    except RecursionError:
        raise RecordError(f"{what} is nested too deeply") from None


# --- the walk --------------------------------------------------------------------
@dataclass(frozen=True)
class Leaf:
    """One value of a record: a scalar field of some object, or a list or object that
    is null or empty (which the gate treats as one absent value)."""

    path: str  # concrete: line_items[2].amount
    field: FieldDef
    value: Any


def leaves(fields: Sequence[FieldDef], record: dict[str, Any] | None, prefix: str = "") -> Iterator[Leaf]:
    """Every value of a (validated) record, in schema order."""
    record = record or {}
    for field in fields:
        path = f"{prefix}.{field.name}" if prefix else field.name
        value = record.get(field.name)
        if field.kind == "list":
            if not value:
                yield Leaf(path, field, None)
                continue
            for index, item in enumerate(value):
                yield from leaves(field.children, item, f"{path}[{index}]")
        elif field.kind == "object":
            if not value:
                yield Leaf(path, field, None)
                continue
            yield from leaves(field.children, value, path)
        else:
            yield Leaf(path, field, value)


def ancestors(path: str) -> list[str]:
    """The containers a value's path lies in, nearest first: line_items[2].amount ->
    line_items[2], line_items."""
    out: list[str] = []
    while True:
        cut = max(path.rfind("."), path.rfind("["))
        if cut <= 0:
            return out
        path = path[:cut]
        out.append(path)
