"""A pydantic class as a schema document, so a Python producer can pass its own
record class. Each field's kind comes from `Field(json_schema_extra={"kind": ...})`
when given, else from its annotation (str: text, int/float/Decimal: number, date,
bool: boolean, Literal or Enum: enum, a model: object, a list of models: list); the
other schema options (labels, pattern, validator, party, values, cues, units, max_items,
required) ride in the same json_schema_extra. The class docstring is the description;
`__vetq_schema__ = {"name", "version", "rules"}` on the class sets the rest.

    class Receipt(BaseModel):
        \"\"\"A till receipt.\"\"\"
        __vetq_schema__ = {"name": "my_receipt", "rules": [{"check": "subtotal + tax = total"}]}
        merchant: str = Field(description="the shop")
        total: float | None = Field(None, json_schema_extra={"kind": "amount", "labels": ["@total"]})
"""

from __future__ import annotations

import enum
import re
import types
import typing
from datetime import date, datetime, time
from decimal import Decimal
from typing import Any, Literal

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from vetq.core.schemas.compiled import SchemaInvalidError

__all__ = ["document_of"]

_OPTIONS = (
    "labels",
    "pattern",
    "validator",
    "party",
    "values",
    "cues",
    "units",
    "max_items",
    "required",
    "kind",
    "description",
)
_MAX_CLASS_DEPTH = 8


def document_of(model: type) -> dict[str, Any]:
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        raise SchemaInvalidError(f"a schema class must be a pydantic BaseModel subclass, got {model!r}")
    extra = dict(getattr(model, "__vetq_schema__", {}) or {})
    name = extra.pop("name", None) or _snake(model.__name__)
    document: dict[str, Any] = {
        "name": name,
        "version": extra.pop("version", 1),
        "description": (model.__doc__ or "").strip(),
        "fields": _fields(model, where=model.__name__, depth=1),
    }
    document.update(extra)  # rules, types
    return document


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _fields(model: type[BaseModel], *, where: str, depth: int) -> dict[str, Any]:
    if depth > _MAX_CLASS_DEPTH:
        raise SchemaInvalidError(f"{where}: the classes nest deeper than {_MAX_CLASS_DEPTH} levels")
    return {name: _field(info, where=f"{where}.{name}", depth=depth) for name, info in model.model_fields.items()}


def _field(info: FieldInfo, *, where: str, depth: int) -> dict[str, Any]:
    given = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
    unknown = set(given) - set(_OPTIONS)
    if unknown:
        raise SchemaInvalidError(f"{where}: json_schema_extra has {sorted(unknown)}, which no schema field takes")
    annotation, optional = _unwrap_optional(info.annotation)
    spec: dict[str, Any] = {}
    if info.description:
        spec["description"] = info.description
    spec["required"] = not optional
    for meta in info.metadata:
        pattern = getattr(meta, "pattern", None)
        if isinstance(pattern, str):
            spec["pattern"] = pattern
    origin = typing.get_origin(annotation)
    if "kind" not in given:
        if origin is list:
            (item,) = typing.get_args(annotation) or (Any,)
            if not (isinstance(item, type) and issubclass(item, BaseModel)):
                raise SchemaInvalidError(f"{where}: a list field holds objects (a list of a BaseModel class)")
            spec.update(kind="list", fields=_fields(item, where=where, depth=depth + 1))
        elif isinstance(annotation, type) and issubclass(annotation, BaseModel):
            spec.update(kind="object", fields=_fields(annotation, where=where, depth=depth + 1))
        else:
            spec.update(_scalar(annotation, where))
    elif given["kind"] in ("list", "object") and "fields" not in given:
        item = (typing.get_args(annotation) or (annotation,))[0] if origin is list else annotation
        if isinstance(item, type) and issubclass(item, BaseModel):
            spec["fields"] = _fields(item, where=where, depth=depth + 1)
    spec.update(given)
    return spec


def _unwrap_optional(annotation: Any) -> tuple[Any, bool]:
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        optional = len(args) < len(typing.get_args(annotation))
        return (args[0] if len(args) == 1 else annotation), optional
    return annotation, False


def _scalar(annotation: Any, where: str) -> dict[str, Any]:
    if typing.get_origin(annotation) is Literal:
        return {"kind": "enum", "values": [str(v) for v in typing.get_args(annotation)]}
    if isinstance(annotation, type):
        if issubclass(annotation, enum.Enum):
            return {"kind": "enum", "values": [str(member.value) for member in annotation]}
        if issubclass(annotation, bool):
            return {"kind": "boolean"}
        if issubclass(annotation, (int, float, Decimal)):
            return {"kind": "number"}
        if issubclass(annotation, datetime):
            raise SchemaInvalidError(
                f"{where}: a datetime has no schema kind; use a date (YYYY-MM-DD) and a time (HH:MM)"
            )
        if issubclass(annotation, date):
            return {"kind": "date"}
        if issubclass(annotation, time):
            return {"kind": "time"}
        if issubclass(annotation, str):
            return {"kind": "text"}
    raise SchemaInvalidError(
        f"{where}: no schema kind for {annotation!r}; give one with Field(json_schema_extra={{'kind': ...}})"
    )
