"""Deterministic heuristics: check every committed value of a record against the
source text, by its kind, then the checks across fields its schema declares.

They are free, never call a model, and can only LOWER a score: each committed value
gets a multiplicative factor in (0, 1] (1.0 = no concern), readable reasons and the
spans where it stands in the source. The checks themselves are field_checks (one per
kind) and cross_checks (conflicting labels, the schema's rules).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import partial
from typing import Any

from vetq.core.extraction.cross_checks import check_conflicts, check_rules, check_unlabelled_totals
from vetq.core.extraction.field_checks import CHECKS, INTERNAL_ERROR_FACTOR, FieldCheck
from vetq.core.extraction.source import Source
from vetq.core.schemas.compiled import CompiledSchema
from vetq.core.schemas.records import Leaf, leaves

__all__ = ["run_heuristics"]

# Characters written for the same thing as plainer ones, read as those: spaces other than
# U+0020 (no-break, narrow no-break, figure, thin, ideographic ...), as text taken from
# HTML or a word processor carries them; a prime or a modifier apostrophe grouping
# thousands ("12′760.00") as the apostrophe does. One character for one, so every span
# found still points into the text as sent.
_PLAINER = {
    **{code: " " for code in (0x00A0, 0x1680, *range(0x2000, 0x200B), 0x202F, 0x205F, 0x3000)},
    0x2032: "\u2019",
    0x02BC: "\u2019",
}
_PLAINER_RE = re.compile("[" + "".join(chr(code) for code in _PLAINER) + "]")


def run_heuristics(text: str, record: dict[str, Any], schema: CompiledSchema) -> dict[str, FieldCheck]:
    """One FieldCheck per COMMITTED (non-null) value of a validated record, keyed by its
    path, in schema order. Null values are absent: an honest null is never checked."""
    if not isinstance(text, str):
        text = "" if text is None else str(text)
    as_sent = text
    if _PLAINER_RE.search(text):
        text = text.translate(_PLAINER)
    committed = [leaf for leaf in leaves(schema.fields, record) if leaf.value is not None]
    if not committed:
        return {}
    try:
        src = Source(text, schema.lexicon, schema.value_lexicon)
    except Exception as exc:  # noqa: BLE001 - a failing analysis marks every value unverified
        return _all_unverified(committed, f"the source could not be analysed ({type(exc).__name__})")

    checks: dict[str, FieldCheck] = {}
    for leaf in committed:
        checks[leaf.path] = _guarded(leaf.path, partial(CHECKS[leaf.field.kind], src, leaf))
    currency = next((leaf.value for leaf in committed if leaf.field.kind == "currency" and "[" not in leaf.path), None)
    cross_checks: Iterable[tuple[str, Callable[[], None]]] = (
        ("label conflict", lambda: check_conflicts(src, checks, currency)),
        ("rules", lambda: check_rules(src, schema, committed, checks)),
        ("unlabelled total", lambda: check_unlabelled_totals(src, schema, committed, checks)),
    )
    for what, cross_check in cross_checks:
        try:
            cross_check()
        except Exception as exc:  # noqa: BLE001 - a failing cross-check marks the numbers unverified
            for check in checks.values():
                if check.number is not None:
                    check.penalise(INTERNAL_ERROR_FACTOR, f"the {what} check could not run ({type(exc).__name__})")
    if src.text != as_sent:  # a plainer character or a page break read as a line's end
        for check in checks.values():
            check.spans = [span.model_copy(update={"text": as_sent[span.start : span.end]}) for span in check.spans]
    return checks


# A check that fails (a bug, an input nobody foresaw) lowers its value's score and
# names itself in the reasons; it never fails the job, so these catches are blind.
def _guarded(path: str, check: Callable[[], FieldCheck]) -> FieldCheck:
    try:
        return check()
    except Exception as exc:  # noqa: BLE001 - a failing check marks its value unverified
        failed = FieldCheck(path)
        failed.penalise(INTERNAL_ERROR_FACTOR, f"the {path} check could not run ({type(exc).__name__})")
        return failed


def _all_unverified(committed: list[Leaf], reason: str) -> dict[str, FieldCheck]:
    out = {}
    for leaf in committed:
        check = FieldCheck(leaf.path)
        check.penalise(INTERNAL_ERROR_FACTOR, reason)
        out[leaf.path] = check
    return out
