"""Field thresholds per schema and per field, from a file (VETQ_FIELD_THRESHOLDS) that
`vetq calibrate --write` makes from reviewed inbox items:

    {"format": 1, "target_precision": 0.99,
     "schemas": {"invoice": {"field_threshold": 0.82, "fields": {"total": 0.9}}}}

A field's threshold is its own entry (by template path: `line_items[].amount`), else
its schema's `field_threshold`, else VETQ_FIELD_THRESHOLD; a job that sets its own
`field_threshold` uses that for every field."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vetq.core.errors import ConfigError

ENV_VAR = "VETQ_FIELD_THRESHOLDS"
FORMAT = 1


@dataclass(frozen=True)
class SchemaThresholds:
    field_threshold: float | None = None
    fields: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class ThresholdTable:
    schemas: Mapping[str, SchemaThresholds] = field(default_factory=dict)

    def for_schema(self, name: str) -> SchemaThresholds:
        return self.schemas.get(name) or SchemaThresholds()


def _threshold(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ConfigError(f"{ENV_VAR}: {where} must be a number from 0 to 1")
    if not 0.0 <= float(value) <= 1.0:
        raise ConfigError(f"{ENV_VAR}: {where} must be a number from 0 to 1")
    return float(value)


def parse_thresholds(document: Any) -> ThresholdTable:
    if not isinstance(document, Mapping) or document.get("format") != FORMAT:
        raise ConfigError(f'{ENV_VAR}: not a thresholds file (a JSON object with "format": {FORMAT}, "schemas")')
    schemas = document.get("schemas")
    if not isinstance(schemas, Mapping):
        raise ConfigError(f'{ENV_VAR}: "schemas" must map schema names to their thresholds')
    table: dict[str, SchemaThresholds] = {}
    for name, entry in schemas.items():
        if not isinstance(entry, Mapping):
            raise ConfigError(f"{ENV_VAR}: schemas.{name} must be an object")
        default = entry.get("field_threshold")
        fields = entry.get("fields") or {}
        if not isinstance(fields, Mapping):
            raise ConfigError(f"{ENV_VAR}: schemas.{name}.fields must map field paths to thresholds")
        table[str(name)] = SchemaThresholds(
            field_threshold=None if default is None else _threshold(default, f"schemas.{name}.field_threshold"),
            fields={str(p): _threshold(v, f"schemas.{name}.fields.{p}") for p, v in fields.items()},
        )
    return ThresholdTable(table)


def load_thresholds(path: Path | None) -> ThresholdTable:
    """The table in `path` (none: empty); ConfigError naming the variable and the problem."""
    if path is None:
        return ThresholdTable()
    try:
        document = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{ENV_VAR}: cannot read {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise ConfigError(f"{ENV_VAR}: {path} is not JSON ({exc})") from None
    return parse_thresholds(document)
