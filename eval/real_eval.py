"""The real-document set (eval/golden/real/): false alarms and catch rates of the
deterministic layer on licensed real documents, through the real queue.

    python -m vetq.eval.extraction_eval --real           # the report; exit 1 when the gate fails
    python -m vetq.eval.extraction_eval --real --json    # the report as one JSON object
    vetq eval --real --min-catch 0.95
    vetq eval --real --set heldout                       # documents the heuristics were never tuned on

Every document's correct record (its `truth`, checked by hand against the text) is sent
as a validation job of its own schema (`invoice` or `receipt`), heuristics only, and so
is every deterministic corruption of it (`corruptions`):

- invented_total: the total plus 7.13 (or a multiple of it) that the text nowhere holds;
- other_amount_total: another amount the document prints as the total (the largest one
  below the total that is not the record's own subtotal, tax or tip; else the smallest
  above it; else the subtotal or tax); documents that print no other amount are skipped;
- other_amount_tax, other_amount_subtotal: the same for the tax and the subtotal (the
  printed amount nearest below it that is none of the record's own amounts, else the
  nearest above; else another of the record's own): the wrong row of a tax summary, the
  lines' sum or a line's amount given as the subtotal;
- shifted_date: the date (invoice_date, date) moved by the fewest days (+1, -1, +2, ...)
  that give a date written nowhere in the text, in any form;
- swapped_identifier: two neighbouring characters of invoice_number / receipt_number
  swapped, from the middle outwards, skipping a swap that changes nothing or whose result
  the text holds;
- half_day_time: a receipt's time on the other half of the day (17:31 given as 05:31, a
  12-hour print's PM dropped, or 09:48 as 21:48), where the text prints it nowhere.

Reported, not gated (REPORTED_KINDS): a value the text prints given for another, where only
the labels around it can tell (the heuristics read a date's or number's label where it is
written outright; the Critic is what catches the rest):

- other_date: another date the text prints (one it can only mean), the nearest in time;
- other_identifier: another number the text prints (with three digits or more; no date,
  year or amount, no form of the record's own), the nearest in the text to the record's.

A field a document itself earns a flag for (it does not add up, or its OCR lost a value the
schema requires) is listed in its `expected_flags`: flagged, it is no false alarm; it is not
corrupted either. A false alarm is any other flagged field of a correct record; a false-
alarm document has one, or is needs_review with no field flagged. A corruption is caught
when its field is flagged.

The report gives the plain needs_review rate too (any reason, what a reviewer's queue would
hold), next to the gated false-alarm rate, with the documents the gate exempts counted by
class (EXEMPTION_CLASSES): the gate measures the heuristics, the plain rate the workload.

The gate (exit 1) fails when the false-alarm document rate is above --max-false-alarm-docs,
the false-alarm field rate above --max-false-alarm-fields, the overall catch rate below
--min-catch, or any job ended in an error.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from vetq.core.extraction.amounts import GLUED_UNITS
from vetq.core.extraction.clock import clock_value, find_printed_times, parse_time_value, same_time
from vetq.core.extraction.currencies import ISO_4217
from vetq.core.extraction.dates import find_date_mentions
from vetq.core.extraction.source import currency_hits
from vetq.core.results import error_of
from vetq.core.schemas import builtin

REAL = Path(__file__).parent / "golden" / "real"
DOCUMENTS = REAL / "documents.jsonl"
# The held-out set: real documents of public corpora the heuristics were never tuned on
# (none of them, nor another rendering of one of them, is in eval/golden/real).
HELDOUT = Path(__file__).parent / "golden" / "real_heldout"
REAL_SETS = {"tuned": DOCUMENTS, "heldout": HELDOUT / "documents.jsonl"}

DEFAULT_MAX_FALSE_ALARM_DOCS = 0.05
DEFAULT_MAX_FALSE_ALARM_FIELDS = 0.02
DEFAULT_MIN_CATCH = 0.98
DEFAULT_TIMEOUT_S = 600.0

CORRUPTION_KINDS = (
    "invented_total",
    "other_amount_total",
    "other_amount_tax",
    "other_amount_subtotal",
    "shifted_date",
    "swapped_identifier",
    "half_day_time",
)
OTHER_AMOUNT_FIELDS = ("total", "tax", "subtotal")
REPORTED_KINDS = ("other_date", "other_identifier")
ALL_KINDS = CORRUPTION_KINDS + REPORTED_KINDS
# a number a document prints that a record could give for its own: three digits or more
_NUMBER_TOKEN = re.compile(r"(?<![\w/.\-])[A-Za-z]{0,4}[-/]?[0-9][0-9A-Za-z\-/.]{2,24}(?!\w)")
_MONEY_TOKEN = re.compile(r"[0-9]{1,3}(?:[.,][0-9]{3})*(?:[.,][0-9]{2})?")
_YEAR = re.compile(r"(?:19|20)[0-9]{2}")
INVENTED_STEP = Decimal("7.13")
MAX_DATE_SHIFT = 400

DATE_FIELD = {"invoice": "invoice_date", "receipt": "date"}
ID_FIELD = {"invoice": "invoice_number", "receipt": "receipt_number"}
TIME_FIELD = {"receipt": "time"}
AMOUNT_FIELDS = ("subtotal", "tax", "tip", "total")


def load_documents(path: str | os.PathLike[str] = DOCUMENTS) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


# --- is a value in the text? (the simple, OCR-tolerant checks) ------------------------------
def _alnum(text: str) -> str:
    return "".join(ch for ch in text.casefold() if ch.isalnum())


# a number starts where a letter does not stand before it, or where a currency code
# glued to it does ("OMR39500.00", "USD1,200"), and ends where a letter does not follow,
# or where a currency glued to it does ("100zł", "400,000원")
_GLUED = "|".join(re.escape(unit) for unit in sorted(GLUED_UNITS, key=len, reverse=True))
_CODES = "|".join(sorted(ISO_4217))
_PLAIN_NUMBER = re.compile(
    rf"(?:(?<![^\W_])|(?<=(?<![^\W_])(?:{_CODES})))"
    rf"[0-9](?:[0-9.,'’]*[0-9])?(?:(?![^\W_])|(?=(?i:{_GLUED})(?![^\W_])))"
)
_SPACED_NUMBER = re.compile(r"(?<![0-9.,'’])[0-9]{1,3}(?:[ \u00a0\u202f][0-9]{3})+(?:[.,][0-9]{1,2})?(?![0-9])")


def _readings(token: str) -> set[Decimal]:
    """The values a written number can mean: its digits as a whole number, and with its
    last separator as the decimal point (1.234,56 -> 123456 and 1234.56; 69.180 -> 69180
    and 69.180)."""
    digits = re.sub(r"[^0-9]", "", token)
    out = {Decimal(digits)} if digits else set()
    last = max(token.rfind(sep) for sep in ".,'’ \u00a0\u202f")
    if last > 0 and token[last] in ".,":
        whole, frac = re.sub(r"[^0-9]", "", token[:last]), token[last + 1 :]
        if whole and frac.isdigit():
            out.add(Decimal(f"{whole}.{frac}"))
    return out


def amounts_in_text(text: str) -> set[Decimal]:
    """Every value any number in the text can be read as, without its sign."""
    values: set[Decimal] = set()
    for pattern in (_PLAIN_NUMBER, _SPACED_NUMBER):
        for match in pattern.finditer(text):
            values |= _readings(match.group())
    return values


_TIME_RANGE = re.compile(r"(?<![0-9])[0-9]{1,2}[.:][0-9]{2}\s*-\s*[0-9]{1,2}[.:][0-9]{2}(?![0-9])")


def printed_money(text: str) -> list[Decimal]:
    """Amounts printed with exactly two decimals (12,34 / 1.234,56 / 1’234.56 / 1 234.56),
    in order of appearance, without their sign; not a rate (19,00 %), a time (9.00 Uhr,
    8.00-20.00), a day and month (19.05.) or a part of a longer number."""
    text = _TIME_RANGE.sub(lambda m: " " * len(m.group()), text)
    spaced = [(m.start(), m.end(), m.group()) for m in _SPACED_NUMBER.finditer(text)]
    plain = [
        (m.start(), m.end(), m.group())
        for m in _PLAIN_NUMBER.finditer(text)
        if not any(s <= m.start() < e for s, e, _ in spaced)
    ]
    out = []
    for start, end, token in sorted(spaced + plain):
        rate_time_or_date = re.match(r"\s?%|\s?[Uu]hr|\.|-[0-9]", text[end : end + 6])
        tail_of_a_range = re.search(r"[0-9][.\-]$", text[max(0, start - 2) : start])
        if rate_time_or_date or tail_of_a_range:
            continue
        if re.search(r"[.,][0-9]{2}$", token) and not re.search(r"[.,][0-9]{2}[.,][0-9]{2}$", token):
            whole = re.sub(r"[^0-9]", "", token[:-3])
            if whole:
                out.append(Decimal(f"{whole}.{token[-2:]}"))
    return out


def amount_in_text(value: Any, text: str, values: set[Decimal] | None = None) -> bool:
    try:
        wanted = abs(Decimal(str(value)))
    except InvalidOperation:
        return False
    return wanted in (values if values is not None else amounts_in_text(text))


def date_in_text(value: date | str, text: str) -> bool:
    """In any form vetq reads, or numerically with any of . , / - or spaces between day,
    month and year (OCR writes 02.03,2020), day-month, month-day or year-month-day, 2- or
    4-digit years, or compact (20200302, 02032020)."""
    day = value if isinstance(value, date) else date.fromisoformat(value)
    if any(day in mention.dates for mention in find_date_mentions(text)):
        return True
    d, m, y = rf"0?{day.day}", rf"0?{day.month}", rf"(?:{day.year}|{day.year % 100:02d})"
    sep = r"[ .,/\-]{1,2}"
    forms = (
        rf"{d}{sep}{m}{sep}{y}",
        rf"{m}{sep}{d}{sep}{y}",
        rf"{day.year}{sep}{m}{sep}{d}",
        f"{day.year}{day.month:02d}{day.day:02d}",
        f"{day.day:02d}{day.month:02d}{day.year}",
    )
    return any(re.search(rf"(?<![0-9]){form}(?![0-9])", text) for form in forms)


def identifier_in_text(value: str, text: str) -> bool:
    """Its letters and digits in order, with at most one space, dash, dot or slash between
    two of them, not inside a longer code."""
    chars = [re.escape(ch) for ch in str(value) if ch.isalnum()]
    if not chars:
        return False
    pattern = r"(?<![^\W_])" + r"[ \-./]?".join(chars) + r"(?![^\W_])"
    return re.search(pattern, text, re.IGNORECASE) is not None


def time_in_text(value: str, text: str) -> bool:
    parsed = parse_time_value(value)
    return parsed is not None and any(same_time(printed, parsed) for printed in find_printed_times(text))


def currency_in_text(code: str, text: str) -> bool:
    """The code, a sign or a name for it as vetq reads currencies ("€", "R$", "Kč", "euros");
    a sign several currencies share ("$", "¥", "kr") counts for each of them."""
    return any(code in hit.codes for hit in currency_hits(text))


def enum_in_text(words: Iterable[str], text: str) -> bool:
    folded = text.casefold()
    return any(word.casefold() in folded for word in words)


def value_in_text(schema_name: str, name: str, value: Any, text: str) -> bool:
    """The simple check every non-null truth value passes: the value is in the text."""
    spec = builtin(schema_name).by_path[name]
    kind = spec.kind
    if kind == "amount":
        return amount_in_text(value, text)
    if kind == "date":
        return date_in_text(value, text)
    if kind == "identifier":
        return identifier_in_text(value, text)
    if kind == "currency":
        return currency_in_text(value, text)
    if kind == "enum":
        return enum_in_text(spec.values.get(value, ()), text)
    if kind == "time":
        return time_in_text(value, text)
    return _alnum(str(value)) in _alnum(text)


# --- the corruptions ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Corruption:
    doc_id: str
    kind: str
    field: str
    original: Any
    value: Any
    how: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "doc": self.doc_id,
            "kind": self.kind,
            "field": self.field,
            "original": self.original,
            "value": self.value,
            "how": self.how,
        }


def _money(value: Decimal) -> float:
    return float(value.quantize(Decimal("0.01")))


def _targets(doc: Mapping[str, Any], name: str) -> bool:
    return doc["truth"].get(name) is not None and name not in (doc.get("expected_flags") or {})


def _other_amount(doc: Mapping[str, Any], name: str, printed: Sequence[Decimal], own: set[Decimal]) -> list[Corruption]:
    """Another printed amount given as the field `name` (see the module docstring)."""
    original = doc["truth"][name]
    wanted = Decimal(str(original))
    candidates = [v for v in printed if v != abs(wanted) and v != 0]
    others = [v for v in candidates if v not in own]
    below = [v for v in others if v < abs(wanted)]
    pick = max(below) if below else min(others) if others else max(candidates) if candidates else None
    if pick is None:
        return []
    value = -pick if wanted < 0 else pick
    role = "another line's amount" if pick in others else "another of the record's own amounts"
    return [Corruption(doc["id"], f"other_amount_{name}", name, original, _money(value), f"{role} {pick}")]


def _other_date(doc: Mapping[str, Any], name: str) -> list[Corruption]:
    day = date.fromisoformat(doc["truth"][name])
    printed = {d for m in find_date_mentions(doc["text"]) if len(m.dates) == 1 for d in m.dates if d != day}
    near = sorted((d for d in printed if abs((d - day).days) < MAX_DATE_SHIFT), key=lambda d: (abs((d - day).days), d))
    if not near:
        return []
    how = f"another date the text prints, {(near[0] - day).days:+d} day(s)"
    return [Corruption(doc["id"], "other_date", name, doc["truth"][name], near[0].isoformat(), how)]


def _other_identifier(doc: Mapping[str, Any], name: str) -> list[Corruption]:
    text, ident = doc["text"], str(doc["truth"][name])
    own = _alnum(ident)
    dates = [(m.start, m.end) for m in find_date_mentions(text)]
    where = [m.start() for m in re.finditer(re.escape(ident), text)] or [0]
    candidates = []
    for m in _NUMBER_TOKEN.finditer(text):
        token = m.group().rstrip(".-/")
        written = _alnum(token)
        if not written or written in own or own in written or len(re.findall(r"[0-9]", token)) < 3:
            continue
        if (
            _MONEY_TOKEN.fullmatch(token)
            or _YEAR.fullmatch(token)
            or any(s < m.end() and m.start() < e for s, e in dates)
        ):
            continue
        candidates.append((min(abs(m.start() - w) for w in where), m.start(), token))
    if not candidates:
        return []
    token = min(candidates)[2]
    return [Corruption(doc["id"], "other_identifier", name, ident, token, "another number the text prints")]


def _half_day_time(doc: Mapping[str, Any], name: str) -> list[Corruption]:
    parsed = parse_time_value(doc["truth"][name])
    if parsed is None:
        return []
    given, seconds = parsed
    other = clock_value((given.replace(hour=(given.hour + 12) % 24), seconds))
    if time_in_text(other, doc["text"]):
        return []
    how = "the other half of the day (written nowhere in the text)"
    return [Corruption(doc["id"], "half_day_time", name, doc["truth"][name], other, how)]


def corruptions(doc: Mapping[str, Any]) -> list[Corruption]:
    """The deterministic corruptions of one document's record (see the module docstring)."""
    truth, text, schema = doc["truth"], doc["text"], doc["schema"]
    out: list[Corruption] = []
    values = amounts_in_text(text)
    own = {abs(Decimal(str(truth[name]))) for name in AMOUNT_FIELDS if truth.get(name) is not None}
    if _targets(doc, "total"):
        total = Decimal(str(truth["total"]))
        for step in range(1, 100):
            candidate = total + INVENTED_STEP * step
            if abs(candidate) not in values and abs(candidate) not in own:
                how = f"{total} + {INVENTED_STEP * step} (absent from the text)"
                out.append(Corruption(doc["id"], "invented_total", "total", truth["total"], _money(candidate), how))
                break
    printed = list(dict.fromkeys(printed_money(text)))
    for name in OTHER_AMOUNT_FIELDS:
        if _targets(doc, name):
            out += _other_amount(doc, name, printed, own)
    date_field = DATE_FIELD[schema]
    if _targets(doc, date_field):
        day = date.fromisoformat(truth[date_field])
        for shift in (k * sign for k in range(1, MAX_DATE_SHIFT) for sign in (1, -1)):
            moved = day + timedelta(days=shift)
            if not date_in_text(moved, text):
                how = f"{day.isoformat()} {shift:+d} day(s) (written nowhere in the text)"
                out.append(Corruption(doc["id"], "shifted_date", date_field, truth[date_field], moved.isoformat(), how))
                break
    id_field = ID_FIELD[schema]
    if _targets(doc, id_field):
        ident = str(truth[id_field])
        middle = (len(ident) - 2) / 2
        for i in sorted(range(len(ident) - 1), key=lambda i: (abs(i - middle), i)):
            a, b = ident[i], ident[i + 1]
            if not (a.isalnum() and b.isalnum()) or a == b:
                continue
            swapped = ident[:i] + b + a + ident[i + 2 :]
            if identifier_in_text(swapped, text):
                continue
            how = f"characters {i + 1} and {i + 2} swapped"
            out.append(Corruption(doc["id"], "swapped_identifier", id_field, ident, swapped, how))
            break
    time_field = TIME_FIELD.get(schema)
    if time_field is not None and _targets(doc, time_field):
        out += _half_day_time(doc, time_field)
    if _targets(doc, date_field):
        out += _other_date(doc, date_field)
    if _targets(doc, id_field):
        out += _other_identifier(doc, id_field)
    return out


def all_corruptions(documents: Iterable[Mapping[str, Any]]) -> list[Corruption]:
    return [c for doc in documents for c in corruptions(doc)]


# --- grading -------------------------------------------------------------------------------------
REASON_CLASSES: tuple[tuple[str, str], ...] = (
    ("required value missing", r"^required:"),
    ("conflicting labels", r"^conflicting "),
    ("arithmetic", r"^arithmetic:|^rule .* fails"),
    ("amount not under its label", r"not as a labelled|labels no amount as|no label in the source names"),
    ("date not found", r"^date .* not found|is not a (real )?date"),
    ("currency", r"currency|the source names .*, not |ambiguous symbol"),
    ("enum words", r"the words (for|of)|none of the words"),
    ("near miss (OCR)", r"is not in the source as written"),
    ("not found in the source", r"not found in the source"),
    ("format or pattern", r"does not match the pattern|is not a valid|is not a phone|is not a time of day"),
)


# Why a document earns its expected flags, read from the reasons its label gives (see
# eval/golden/real/README.md, which justifies each class). Unmatched: "other".
EXEMPTION_CLASSES: tuple[tuple[str, str], ...] = (
    ("the document does not add up", r"does not add up"),
    ("the OCR lost a required value", r"\(required\) is null"),
    ("the OCR misread a value", r"OCR"),
)


def exemption_class(reasons: Iterable[str]) -> str:
    joined = " ".join(reasons)
    for name, pattern in EXEMPTION_CLASSES:
        if re.search(pattern, joined):
            return name
    return "other"


def reason_class(fragment: str) -> str:
    for name, pattern in REASON_CLASSES:
        if re.search(pattern, fragment):
            return name
    return "other"


def _template(fragment: str) -> str:
    """A reason with its values blanked, so that alike reasons group."""
    fragment = re.sub(r"'[^']*'", "'…'", fragment)
    return re.sub(r"-?[0-9][0-9.,]*", "#", fragment)


@dataclass
class Flag:
    doc_id: str
    field: str
    value: Any
    confidence: float | None
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "doc": self.doc_id,
            "field": self.field,
            "value": self.value,
            "confidence": self.confidence,
            "reason": self.reason,
        }


@dataclass
class Outcome:
    corruption: Corruption
    caught: bool
    status: str
    confidence: float | None
    reason: str | None
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.corruption.to_dict(),
            "caught": self.caught,
            "status": self.status,
            "confidence": self.confidence,
            "reason": self.reason,
            "error": self.error,
        }


def _rate(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0


@dataclass
class RealReport:
    documents: int
    by_schema: dict[str, int]
    languages: list[str]
    currencies: list[str]
    fields_checked: int
    needs_review: int
    false_alarm_docs: list[str]
    false_alarms: list[Flag]
    expected_flags: int
    expected_flags_seen: int
    outcomes: list[Outcome]
    errors: list[str]
    unflagged_review: list[str] = field(default_factory=list)
    # needs_review documents flagged only on their expected flags: doc id -> exemption class
    exempt_review: dict[str, str] = field(default_factory=dict)

    @property
    def needs_review_rate(self) -> float:
        return _rate(self.needs_review, self.documents)

    def exempt_by_class(self) -> dict[str, int]:
        return dict(Counter(self.exempt_review.values()).most_common())

    @property
    def false_alarm_doc_rate(self) -> float:
        return _rate(len(self.false_alarm_docs), self.documents)

    @property
    def false_alarm_field_rate(self) -> float:
        return _rate(len(self.false_alarms), self.fields_checked)

    def catch(self, kind: str | None = None) -> tuple[int, int]:
        """Caught and made, of one kind, or (None) of the gated kinds together."""
        chosen = [
            o
            for o in self.outcomes
            if (o.corruption.kind == kind if kind is not None else o.corruption.kind in CORRUPTION_KINDS)
        ]
        return sum(o.caught for o in chosen), len(chosen)

    @property
    def catch_rate(self) -> float:
        caught, total = self.catch()
        return _rate(caught, total) if total else 1.0

    def reason_classes(self) -> list[dict[str, Any]]:
        """False-alarm reasons by class, most frequent first, each with its commonest
        reasons (values blanked) and the documents they came from."""
        by_class: dict[str, Counter[str]] = {}
        docs: dict[str, set[str]] = {}
        for flag in self.false_alarms:
            for fragment in flag.reason.split("; "):
                name = reason_class(fragment)
                by_class.setdefault(name, Counter())[_template(fragment)] += 1
                docs.setdefault(name, set()).add(flag.doc_id)
        ranked = sorted(by_class.items(), key=lambda item: (-sum(item[1].values()), item[0]))
        return [
            {
                "class": name,
                "count": sum(counter.values()),
                "documents": len(docs[name]),
                "reasons": [{"reason": text, "count": n} for text, n in counter.most_common(5)],
            }
            for name, counter in ranked
        ]

    def _by_kind(self, kinds: Sequence[str]) -> dict[str, dict[str, Any]]:
        rows = {}
        for kind in kinds:
            caught, total = self.catch(kind)
            rows[kind] = {"caught": caught, "total": total, "rate": _rate(caught, total) if total else None}
        return rows

    def to_dict(self) -> dict[str, Any]:
        kinds = self._by_kind(CORRUPTION_KINDS)
        caught, total = self.catch()
        return {
            "documents": self.documents,
            "by_schema": self.by_schema,
            "languages": self.languages,
            "currencies": self.currencies,
            "false_alarms": {
                "documents": len(self.false_alarm_docs),
                "document_rate": self.false_alarm_doc_rate,
                "fields": len(self.false_alarms),
                "fields_checked": self.fields_checked,
                "field_rate": self.false_alarm_field_rate,
                "needs_review": self.needs_review,
                "needs_review_rate": self.needs_review_rate,
                "needs_review_exempt": len(self.exempt_review),
                "needs_review_exempt_by_class": self.exempt_by_class(),
                "needs_review_exempt_list": self.exempt_review,
                "expected_flags": self.expected_flags,
                "expected_flags_seen": self.expected_flags_seen,
                "by_class": self.reason_classes(),
                "list": [flag.to_dict() for flag in self.false_alarms],
                "unflagged_needs_review": self.unflagged_review,
            },
            "corruptions": {
                "by_kind": kinds,
                "caught": caught,
                "total": total,
                "catch_rate": self.catch_rate,
                "missed": [
                    o.to_dict() for o in self.outcomes if not o.caught and o.corruption.kind in CORRUPTION_KINDS
                ],
                "reported_by_kind": self._by_kind(REPORTED_KINDS),
                "reported_missed": [
                    o.to_dict() for o in self.outcomes if not o.caught and o.corruption.kind in REPORTED_KINDS
                ],
            },
            "errors": self.errors,
        }

    def gate_failures(
        self,
        *,
        max_false_alarm_docs: float = DEFAULT_MAX_FALSE_ALARM_DOCS,
        max_false_alarm_fields: float = DEFAULT_MAX_FALSE_ALARM_FIELDS,
        min_catch: float = DEFAULT_MIN_CATCH,
    ) -> list[str]:
        problems = []
        if self.false_alarm_doc_rate > max_false_alarm_docs:
            problems.append(
                f"false-alarm document rate {self.false_alarm_doc_rate:.4f} is above {max_false_alarm_docs}"
            )
        if self.false_alarm_field_rate > max_false_alarm_fields:
            problems.append(
                f"false-alarm field rate {self.false_alarm_field_rate:.4f} is above {max_false_alarm_fields}"
            )
        if self.catch_rate < min_catch:
            problems.append(f"catch rate {self.catch_rate:.4f} is below {min_catch}")
        if self.errors:
            problems.append(f"{len(self.errors)} job(s) ended in an error")
        return problems

    def to_text(self) -> str:
        data = self.to_dict()
        fa = data["false_alarms"]
        schemas = ", ".join(f"{n} {s}" for s, n in sorted(self.by_schema.items()))
        lines = [
            f"vetq real-document eval (heuristics only): {self.documents} documents ({schemas}), "
            f"{len(self.languages)} languages ({', '.join(self.languages)}), "
            f"{len(self.currencies)} currencies ({', '.join(self.currencies)})",
            "",
            "false alarms on the correct records",
            f"  documents with a false alarm  {fa['documents']:4d} / {self.documents:<4d} {fa['document_rate']:.4f}",
            f"  fields flagged                {fa['fields']:4d} / {self.fields_checked:<4d} {fa['field_rate']:.4f}",
            f"  needs_review (any reason)     {self.needs_review:4d} / {self.documents:<4d} {self.needs_review_rate:.4f}"
            "  (what a reviewer would see; the gate counts the documents with a false alarm)",
            f"    exempt: only expected flags {len(self.exempt_review):4d}",
            *(f"      {n:4d} × {name}" for name, n in self.exempt_by_class().items()),
            f"    with a false alarm          {self.needs_review - len(self.exempt_review):4d}",
            f"  expected flags raised         {self.expected_flags_seen:4d} / {self.expected_flags:<4d} "
            "(documents that do not add up, or whose OCR lost a required value)",
            "",
            "catch rate on corrupted records (the corrupted field flagged)",
        ]

        def kind_line(kind: str, row: Mapping[str, Any]) -> str:
            rate = "   -  " if row["rate"] is None else f"{row['rate']:.4f}"
            return f"  {kind:<22} {row['caught']:4d} / {row['total']:<4d} {rate}"

        lines += [kind_line(kind, row) for kind, row in data["corruptions"]["by_kind"].items()]
        lines.append(
            f"  {'overall':<22} {data['corruptions']['caught']:4d} / {data['corruptions']['total']:<4d} {self.catch_rate:.4f}"
        )
        lines.append("  reported, not gated (a printed value given for another, told only by its labels):")
        lines += [kind_line(kind, row) for kind, row in data["corruptions"]["reported_by_kind"].items()]
        if self.errors:
            lines += ["", f"errors ({len(self.errors)}):", *(f"  {e}" for e in self.errors)]
        lines += ["", "false-alarm reasons by class:"]
        for row in fa["by_class"] or []:
            lines.append(f"  {row['class']}: {row['count']} ({row['documents']} document(s))")
            lines += [f"      {r['count']:3d} × {r['reason']}" for r in row["reasons"]]
        if not fa["by_class"]:
            lines.append("  none")
        lines += ["", f"false alarms ({len(self.false_alarms)}):"]
        lines += [
            f"  {f.doc_id} {f.field} = {_show(f.value)} ({_conf(f.confidence)}): {f.reason}" for f in self.false_alarms
        ]
        lines += [f"  {doc}: needs_review with no field flagged" for doc in self.unflagged_review]
        missed = [o for o in self.outcomes if not o.caught and o.corruption.kind in CORRUPTION_KINDS]
        lines += ["", f"missed corruptions ({len(missed)}, gated kinds):"]
        for o in missed:
            c = o.corruption
            why = o.error or (
                f"{_conf(o.confidence)}, {o.reason}" if o.reason else f"not flagged, {_conf(o.confidence)}"
            )
            lines.append(f"  {c.doc_id} {c.kind}: {c.field} {_show(c.original)} -> {_show(c.value)} ({c.how}): {why}")
        return "\n".join(lines)


def _show(value: Any) -> str:
    return "null" if value is None else json.dumps(value, ensure_ascii=False) if isinstance(value, str) else str(value)


def _conf(confidence: float | None) -> str:
    return "confidence -" if confidence is None else f"confidence {confidence:.2f}"


def flags_by_field(result: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """A result's flagged fields by field path."""
    return {
        str(f.get("field")): f
        for f in result.get("flagged_fields") or []
        if isinstance(f, Mapping) and f.get("field") is not None
    }


def grade_real(
    documents: Sequence[Mapping[str, Any]],
    results: Sequence[Mapping[str, Any] | None],
    corrupted: Sequence[Corruption],
    corrupted_results: Sequence[Mapping[str, Any] | None],
) -> RealReport:
    """Grade the validations of the correct records (`results`, in document order) and of
    the corruptions (`corrupted_results`, in the order of `corrupted`)."""
    if len(documents) != len(results) or len(corrupted) != len(corrupted_results):
        raise ValueError("one result per document and per corruption, in order")
    errors: list[str] = []
    false_docs: list[str] = []
    false_alarms: list[Flag] = []
    unflagged: list[str] = []
    exempt: dict[str, str] = {}
    needs_review = fields_checked = expected = expected_seen = 0
    for doc, result in zip(documents, results, strict=True):
        allowed = doc.get("expected_flags") or {}
        expected += len(allowed)
        fields_checked += sum(
            1 for name, value in doc["truth"].items() if value is not None and value != [] and name not in allowed
        )
        problem = error_of(result) if result is not None else ("ERROR", "no result")
        if problem is not None or result is None:
            errors.append(f"{doc['id']}: {problem[0] if problem else 'ERROR'}: {problem[1] if problem else ''}")
            false_docs.append(doc["id"])
            continue
        flags = flags_by_field(result)
        needs_review += result.get("status") == "needs_review"
        expected_seen += sum(1 for name in allowed if name in flags)
        unexpected = [
            Flag(doc["id"], name, f.get("value"), f.get("confidence"), str(f.get("reason") or ""))
            for name, f in flags.items()
            if name not in allowed
        ]
        false_alarms += unexpected
        if unexpected:
            false_docs.append(doc["id"])
        elif result.get("status") == "needs_review" and not flags:
            unflagged.append(doc["id"])
            false_docs.append(doc["id"])
        elif result.get("status") == "needs_review":
            exempt[doc["id"]] = exemption_class(str(allowed[name]) for name in flags)
    outcomes = []
    for corruption, result in zip(corrupted, corrupted_results, strict=True):
        problem = error_of(result) if result is not None else ("ERROR", "no result")
        if problem is not None or result is None:
            text = f"{problem[0]}: {problem[1]}" if problem else "ERROR"
            errors.append(f"{corruption.doc_id} {corruption.kind}: {text}")
            outcomes.append(Outcome(corruption, False, "error", None, None, error=text))
            continue
        flag = flags_by_field(result).get(corruption.field)
        confidence = (result.get("field_confidence") or {}).get(corruption.field)
        outcomes.append(
            Outcome(
                corruption,
                flag is not None,
                str(result.get("status")),
                confidence,
                str(flag.get("reason")) if flag is not None else None,
            )
        )
    return RealReport(
        documents=len(documents),
        by_schema=dict(Counter(str(d["schema"]) for d in documents)),
        languages=sorted({str(d["language"]) for d in documents}),
        currencies=sorted({str(d["currency"]) for d in documents}),
        fields_checked=fields_checked,
        needs_review=needs_review,
        false_alarm_docs=false_docs,
        false_alarms=false_alarms,
        expected_flags=expected,
        expected_flags_seen=expected_seen,
        outcomes=outcomes,
        errors=errors,
        unflagged_review=unflagged,
        exempt_review=exempt,
    )


# --- running -------------------------------------------------------------------------------------
def _request(doc: Mapping[str, Any], record: Mapping[str, Any], trace: str) -> dict[str, Any]:
    return {
        "kind": "validate",
        "schema": doc["schema"],
        "text": doc["text"],
        "data": dict(record),
        "heuristics_only": True,
        "trace_id": trace[:128],
    }


def run_real(*, client: Any, documents: Sequence[Mapping[str, Any]], timeout: float = DEFAULT_TIMEOUT_S) -> RealReport:
    """Validate every correct record and every corruption (one batch through `client`,
    heuristics only, each with its document's schema) and grade them."""
    documents = list(documents)
    by_id = {doc["id"]: doc for doc in documents}
    corrupted = all_corruptions(documents)
    requests = [_request(doc, doc["truth"], f"real-{doc['id']}") for doc in documents]
    requests += [
        _request(by_id[c.doc_id], {**by_id[c.doc_id]["truth"], c.field: c.value}, f"real-{c.doc_id}-{c.kind}")
        for c in corrupted
    ]
    results = client.submit_batch(requests).results(timeout=timeout)
    if len(results) != len(requests):
        raise RuntimeError(f"{len(requests)} job(s) sent, {len(results)} result(s) back")
    return grade_real(documents, results[: len(documents)], corrupted, results[len(documents) :])


def main_real(args: argparse.Namespace) -> int:
    """`--real` of `python -m vetq.eval.extraction_eval` / `vetq eval` (args from its parser)."""
    refused = [
        flag
        for flag, on in (
            ("--live", args.live),
            ("--record", args.record is not None),
            ("--token-budget", args.token_budget is not None),
            ("--fixture", args.fixture is not None),
            ("--rebuild-golden", args.rebuild_golden),
        )
        if on
    ]
    if refused:
        print(f"error: --real validates heuristics only, with no model: drop {', '.join(refused)}", file=sys.stderr)
        return 2
    path = args.dataset or str(REAL_SETS[getattr(args, "real_set", "tuned")])
    try:
        documents = load_documents(path)
    except (OSError, ValueError) as exc:
        print(f"error: cannot read the documents {path}: {exc}", file=sys.stderr)
        return 2
    bad = [
        str(d.get("id", i))
        for i, d in enumerate(documents)
        if not isinstance(d.get("text"), str)
        or not isinstance(d.get("truth"), dict)
        or d.get("schema") not in DATE_FIELD
    ]
    if bad or not documents:
        print(f"error: every line needs id, schema, text and truth ({', '.join(bad[:5]) or 'empty'})", file=sys.stderr)
        return 2

    # The worker builds its model clients from the settings even though no job here calls
    # one: point them at the invoice set's replay fixture, as the offline eval does.
    fixture = (Path(__file__).parent / "golden" / "invoice" / "replay.json").resolve()
    os.environ["VETQ_GENERATOR"] = f"replay:{fixture}"
    os.environ["VETQ_CRITIC"] = f"replay:{fixture}"
    os.environ.setdefault("VETQ_LOG_LEVEL", "WARNING")

    from vetq.api_client.client import Client
    from vetq.core.errors import VetqError
    from vetq.core.logging import configure_logging
    from vetq.core.settings import load_settings

    try:
        settings = load_settings()
    except VetqError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return 2
    configure_logging(settings.log_level)
    # Its own embedded Redis and worker, as the offline eval.
    settings = settings.model_copy(update={"home": settings.home / "eval", "redis_url": None})
    try:
        with Client(settings=settings) as client:
            report = run_real(client=client, documents=documents, timeout=args.timeout)
    except VetqError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return 2

    if args.json:
        print(json.dumps({"documents_file": path, **report.to_dict()}, ensure_ascii=False, indent=2))
    else:
        # Which set: the tuned one's figures are a ceiling, the held-out one's an estimate.
        print(f"documents: {path}")
        print(report.to_text())
    problems = report.gate_failures(
        max_false_alarm_docs=args.max_false_alarm_docs,
        max_false_alarm_fields=args.max_false_alarm_fields,
        min_catch=args.min_catch,
    )
    if problems:
        print("GATE FAILED: " + "; ".join(problems), file=sys.stderr)
        return 1
    if not args.json:
        print("\ngate passed")
    return 0


if __name__ == "__main__":
    from vetq.eval.extraction_eval import main

    sys.exit(main(["--real", *sys.argv[1:]]))
