"""How a schema reads to a model: the JSON skeleton the Generator fills in, and the
field guide the Critic judges by, both rendered from the schema so every schema gets
the same prompts (core/extraction/prompts/*_v2.md) with its own fields."""

from __future__ import annotations

from collections.abc import Sequence

from vetq.core.schemas.compiled import CompiledSchema, FieldDef

__all__ = ["field_guide", "skeleton"]

_SHAPES = {
    "text": "string",
    "identifier": "string",
    "email": "string (an e-mail address)",
    "phone": "string (a phone number as written)",
    "url": "string (a URL)",
    "amount": "number",
    "number": "number",
    "quantity": "number",
    "date": '"YYYY-MM-DD"',
    "time": '"HH:MM" (24-hour; "HH:MM:SS" where seconds are printed)',
    "currency": '"ISO 4217 code"',
    "boolean": "true or false",
}


def _shape(field: FieldDef) -> str:
    if field.kind == "enum":
        return "one of " + ", ".join(f'"{value}"' for value in field.values)
    return _SHAPES[field.kind]


def _comment(field: FieldDef) -> str:
    parts = [field.description] if field.description else []
    if field.required:
        parts.append("required: the document should state it")
    if field.labels and field.kind not in ("list", "object"):
        parts.append("the document may call it " + ", ".join(f'"{label}"' for label in field.labels[:4]))
    return "; ".join(parts)


def skeleton(schema: CompiledSchema) -> str:
    """The record as a JSON object with a comment per field: what the Generator answers."""
    return "\n".join(_object_lines(schema.fields, indent=0))


def _object_lines(fields: Sequence[FieldDef], *, indent: int) -> list[str]:
    pad = "  " * indent
    lines = [pad + "{"]
    for i, field in enumerate(fields):
        comma = "," if i < len(fields) - 1 else ""
        comment = _comment(field)
        note = f"  // {comment}" if comment else ""
        if field.kind in ("list", "object"):
            opener = "[" if field.kind == "list" else ""
            lines.append(f'{pad}  "{field.name}": {opener}{note}'.rstrip())
            inner = _object_lines(field.children, indent=indent + 2)
            if field.kind == "list":
                lines.extend(inner)
                lines.append(f"{pad}    ...")
                lines.append(f"{pad}  ]{comma}")
            else:
                inner[-1] = inner[-1] + " or null" + comma
                lines.extend(inner)
        else:
            lines.append(f'{pad}  "{field.name}": {_shape(field)} or null{comma}{note}')
    lines.append(pad + "}")
    return lines


def field_guide(schema: CompiledSchema) -> str:
    """One line per field the Critic may be asked about, by its path (`[]` stands for
    any item), with its kind and meaning."""
    return "\n".join(_guide_lines(schema.fields))


def _guide_lines(fields: Sequence[FieldDef]) -> list[str]:
    lines = []
    for field in fields:
        comment = _comment(field)
        lines.append(f"- {field.path}: {field.kind}" + (f" ({comment})" if comment else ""))
        lines.extend(_guide_lines(field.children))
    return lines
