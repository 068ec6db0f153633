"""`vetq inbox export`: resolved items as data other tools read.

- `--golden FILE`: JSONL that `vetq eval --dataset FILE --schema NAME` grades (its
  `id`, `text`, `expected`: the reviewed record), each line also carrying the
  machine's record and its mistakes (`machine`, `mistakes`: the fields a person
  corrected), so a corrected item is a recorded mistake the eval must now get right.
- `--label-studio FILE`: Label Studio's JSON import (a list of tasks): the document
  as `data.text`, the machine's values as a prediction and the reviewer's as an
  annotation, one TextArea result per field (`from_name` the field's path, `to_name`
  `text`) and each value's provenance as a `labels` span.
- `--argilla FILE`: Argilla 2.x records, one JSON object per line for
  `dataset.records.log(...)`: `fields.text`, `suggestions` (the machine's values),
  `responses` (the reviewer's), `metadata`.

Every file is written whole or not at all (calibrate.write_atomically)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from vetq.core.errors import InvalidInputError
from vetq.inbox.calibrate import write_atomically
from vetq.inbox.models import CORRECTED, Item
from vetq.inbox.store import REVIEW_KIND, InboxStore

FORMATS = ("golden", "label_studio", "argilla")


def _items(store: InboxStore, schema: str | None) -> list[Item]:
    items = [item for item in store.resolved(schema=schema) if item.reviewed_result is not None]
    if not items:
        where = f" of schema {schema!r}" if schema else ""
        raise InvalidInputError(f"no resolved inbox items{where} to export: resolve items first")
    return items


def golden_rows(items: list[Item]) -> Iterator[dict[str, Any]]:
    for item in items:
        reviewed = item.reviewed_result or {}
        if item.kind == REVIEW_KIND or item.document_text is None or not isinstance(reviewed.get("data"), dict):
            continue  # a golden example is a text document and its record
        yield {
            "id": item.job_id,
            "text": item.document_text,
            "expected": reviewed["data"],
            "schema": item.schema_name,
            "machine": item.machine_result.get("data"),
            "mistakes": [
                {"field": f.path, "machine": f.machine_value, "truth": f.reviewed_value}
                for f in item.fields
                if f.outcome == CORRECTED
            ],
            "reviewer": (reviewed.get("review") or {}).get("reviewer"),
            "reviewed_at": (reviewed.get("review") or {}).get("reviewed_at"),
        }


def _value_text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _studio_results(values: dict[str, Any], provenance: dict[str, Any] | None) -> list[dict[str, Any]]:
    """One TextArea result per field, and (with `provenance`) a `labels` span per place
    the value stands in the document."""
    out: list[dict[str, Any]] = []
    for path, value in values.items():
        out.append({"from_name": path, "to_name": "text", "type": "textarea", "value": {"text": [_value_text(value)]}})
        for span in (provenance or {}).get(path) or []:
            if isinstance(span, dict) and {"start", "end", "text"} <= set(span):
                out.append(
                    {
                        "from_name": "label",
                        "to_name": "text",
                        "type": "labels",
                        "value": {"start": span["start"], "end": span["end"], "text": span["text"], "labels": [path]},
                    }
                )
    return out


def label_studio_tasks(items: list[Item]) -> list[dict[str, Any]]:
    tasks = []
    for item in items:
        provenance = item.machine_result.get("field_provenance")
        machine = {f.path: f.machine_value for f in item.fields}
        reviewed = {f.path: f.reviewed_value for f in item.fields}
        tasks.append(
            {
                "data": {"text": item.document_text or "", "job_id": item.job_id, "schema": item.schema_name},
                "predictions": [
                    {
                        "model_version": "vetq",
                        "result": _studio_results(machine, provenance if isinstance(provenance, dict) else None),
                    }
                ],
                "annotations": [{"result": _studio_results(reviewed, None)}],
            }
        )
    return tasks


def argilla_records(items: list[Item]) -> Iterator[dict[str, Any]]:
    for item in items:
        reviewer = ((item.reviewed_result or {}).get("review") or {}).get("reviewer")
        yield {
            "id": item.job_id,
            "fields": {"text": item.document_text or ""},
            "suggestions": [
                {"question_name": f.path, "value": f.machine_value, "score": f.confidence} for f in item.fields
            ],
            "responses": [{"question_name": f.path, "value": f.reviewed_value, "user": reviewer} for f in item.fields],
            "metadata": {"job_id": item.job_id, "schema": item.schema_name, "tenant": item.tenant},
        }


def export(store: InboxStore, kind: str, path: str, *, schema: str | None = None) -> int:
    """Write resolved items to `path` in `kind`'s format; returns how many."""
    items = _items(store, schema)
    if kind == "golden":
        rows = list(golden_rows(items))
        schemas = sorted({row["schema"] for row in rows})
        if len(schemas) > 1:
            raise InvalidInputError(
                f"resolved items span the schemas {', '.join(schemas)}; `vetq eval` grades one: pass --schema"
            )
        if not rows:
            raise InvalidInputError("no resolved extraction item with a text document to make a golden example of")
        text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    elif kind == "label_studio":
        rows = label_studio_tasks(items)
        text = json.dumps(rows, ensure_ascii=False, indent=1) + "\n"
    elif kind == "argilla":
        rows = list(argilla_records(items))
        text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    else:
        raise InvalidInputError(f"export format must be one of {', '.join(FORMATS)}")
    write_atomically(path, text)
    return len(rows)
