"""`vetq calibrate`: field thresholds from what reviewers found.

Every value of a resolved extraction item is a labelled example: the confidence the
gate gave it and whether the machine had it right (the reviewer kept it) or wrong
(corrected it). A field is auto-accepted at threshold t when its confidence is at
least t; the auto-accepted values' precision must reach the target. A sample's
precision is not the field's, so a threshold is chosen only where the Wilson score
interval's lower bound (95 %) reaches the target: the lowest such threshold (most
fields accepted), per schema, and per field where that field's own values support
one. With too few values, no threshold can be supported: the answer is how many more
reviews (all of them right, at the highest confidence) would.

The values come from needs_review results only (that is what reaches the inbox), so
they over-represent doubtful records: thresholds from them are conservative."""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vetq.core.errors import InvalidInputError
from vetq.inbox.models import CONFIRMED, CORRECTED
from vetq.inbox.store import REVIEW_KIND, InboxStore

Z_95 = 1.959963984540054
MAX_EXTRA = 10_000_000


def wilson_lower_bound(correct: int, total: int, z: float = Z_95) -> float:
    """The lower end of the Wilson score interval of a proportion."""
    if total <= 0:
        return 0.0
    p = correct / total
    denominator = 1 + z * z / total
    centre = p + z * z / (2 * total)
    margin = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total))
    return max(0.0, (centre - margin) / denominator)


@dataclass(frozen=True)
class Example:
    schema: str
    field: str  # template path
    confidence: float
    correct: bool


@dataclass(frozen=True)
class Fit:
    """The lowest threshold whose accepted values' Wilson lower bound reaches the target."""

    threshold: float | None
    precision: float | None
    lower_bound: float | None
    count: int  # values accepted at the threshold
    total: int  # values seen
    more_needed: int  # reviews still needed when no threshold is supported (else 0)

    def as_dict(self) -> dict[str, Any]:
        return {
            "threshold": self.threshold,
            "precision": None if self.precision is None else round(self.precision, 4),
            "wilson_lower_bound": None if self.lower_bound is None else round(self.lower_bound, 4),
            "count": self.count,
            "values": self.total,
            "more_reviews_needed": self.more_needed,
        }


def fit(examples: list[Example], target: float) -> Fit:
    ranked = sorted(examples, key=lambda e: e.confidence, reverse=True)
    best: tuple[float, float, float, int] | None = None
    correct = 0
    for index, example in enumerate(ranked):
        correct += example.correct
        count = index + 1
        # A threshold sits at a distinct confidence: every value at it is accepted together.
        if index + 1 < len(ranked) and ranked[index + 1].confidence == example.confidence:
            continue
        bound = wilson_lower_bound(correct, count)
        if bound >= target:
            best = (example.confidence, correct / count, bound, count)
    if best is not None:
        threshold, precision, bound, count = best
        return Fit(round(threshold, 4), precision, bound, count, len(ranked), 0)
    return Fit(None, None, None, 0, len(ranked), more_reviews_needed(ranked, target))


def more_reviews_needed(ranked: list[Example], target: float) -> int:
    """The fewest more values, every one right and above every confidence seen, that
    would give some threshold a lower bound at the target."""
    prefixes = [(0, 0)]
    correct = 0
    for index, example in enumerate(ranked):
        correct += example.correct
        prefixes.append((correct, index + 1))
    best = MAX_EXTRA
    for right, count in prefixes:
        low, high = 0, MAX_EXTRA
        if wilson_lower_bound(right + high, count + high) < target:
            continue
        while low < high:
            middle = (low + high) // 2
            if wilson_lower_bound(right + middle, count + middle) >= target:
                high = middle
            else:
                low = middle + 1
        best = min(best, low)
    return best


def examples_of(store: InboxStore, schema: str | None = None) -> list[Example]:
    out = []
    for item in store.resolved(schema=schema):
        if item.kind == REVIEW_KIND:
            continue
        for field in item.fields:
            if field.confidence is None or field.outcome not in (CONFIRMED, CORRECTED):
                continue
            out.append(Example(item.schema_name, field.template, field.confidence, field.outcome == CONFIRMED))
    return out


def calibrate(examples: Iterable[Example], target: float, *, min_field_values: int | None = None) -> dict[str, Any]:
    """Per schema: the pooled threshold, and each field's own where its values support
    one; `refused` names each schema whose values support none, with the reviews needed."""
    if not 0.5 <= target < 1.0:
        raise InvalidInputError("--target-precision must be at least 0.5 and below 1")
    by_schema: dict[str, list[Example]] = defaultdict(list)
    for example in examples:
        by_schema[example.schema].append(example)
    if not by_schema:
        raise InvalidInputError(
            "no resolved inbox items with scored values to calibrate from: resolve items in the inbox first "
            "(`vetq inbox serve`)"
        )
    report: dict[str, Any] = {"target_precision": target, "confidence_level": 0.95, "schemas": {}, "refused": {}}
    for schema, examples_of_schema in sorted(by_schema.items()):
        pooled = fit(examples_of_schema, target)
        if pooled.threshold is None:
            report["refused"][schema] = pooled.as_dict()
            continue
        fields: dict[str, Any] = {}
        by_field: dict[str, list[Example]] = defaultdict(list)
        for example in examples_of_schema:
            by_field[example.field].append(example)
        for name, field_examples in sorted(by_field.items()):
            if min_field_values is not None and len(field_examples) < min_field_values:
                continue
            own = fit(field_examples, target)
            if own.threshold is not None:
                fields[name] = own.as_dict()
        report["schemas"][schema] = {**pooled.as_dict(), "fields": fields}
    return report


def thresholds_file(report: dict[str, Any]) -> dict[str, Any]:
    """The file VETQ_FIELD_THRESHOLDS reads (core/extraction/thresholds.py)."""
    return {
        "format": 1,
        "target_precision": report["target_precision"],
        "schemas": {
            name: {
                "field_threshold": entry["threshold"],
                "fields": {field: fitted["threshold"] for field, fitted in entry["fields"].items()},
            }
            for name, entry in report["schemas"].items()
        },
    }


def write_atomically(path: str | os.PathLike[str], text: str) -> None:
    """`text` in `path`, whole or not at all: written beside it, then renamed over it.
    InvalidInputError naming the path when it cannot be written."""
    target = Path(path)
    try:
        handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent or Path("."))
    except OSError as exc:
        raise InvalidInputError(f"cannot write {target}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temporary, target)
    except OSError as exc:
        Path(temporary).unlink(missing_ok=True)
        raise InvalidInputError(f"cannot write {target}: {exc.strerror or exc}") from None


def write_json(path: str | os.PathLike[str], document: Any) -> None:
    write_atomically(path, json.dumps(document, ensure_ascii=False, indent=2) + "\n")
