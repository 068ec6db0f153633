"""Deterministic heuristics: check each committed field against the source text.

They are free, never call a model, and can only LOWER a score: each committed field
gets a multiplicative factor in (0, 1] (1.0 = no concern), readable reasons and the
spans where its value stands in the source.
"""

from __future__ import annotations

import dataclasses
import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal, InvalidOperation
from itertools import combinations, product
from typing import Any

from vetq.core.extraction.amounts import CENT, AmountMention, find_amounts, parse_amount, to_cents
from vetq.core.extraction.currencies import AMBIGUOUS_SYMBOLS, CURRENCY_WORDS, ISO_4217, UNAMBIGUOUS_SYMBOLS
from vetq.core.extraction.dates import find_date_mentions, is_real_iso_date
from vetq.core.extraction.lexicon import INVOICE_LEXICON, WORD_RE, Lexicon, first_word, normalise_phrase, phrase_pattern
from vetq.core.extraction.roles import CLAUSE_BREAK_RE, LABEL_AFTER_WINDOW, LABEL_BEFORE_WINDOW, Lines, assign_roles
from vetq.core.extraction.schema import AMOUNT_FIELDS, FIELD_NAMES, InvoiceData, Span
from vetq.core.extraction.text_match import NormalizedText

__all__ = [
    "AMBIGUOUS_CURRENCY_FACTOR",
    "ARITHMETIC_FACTOR",
    "CONFLICT_FACTOR",
    "EXTRA_CHARGE_FACTOR",
    "INTERNAL_ERROR_FACTOR",
    "INVALID_DATE_FACTOR",
    "NO_ROLE_LABEL_FACTOR",
    "ROLE_MISMATCH_FACTOR",
    "ROUNDING_TOLERANCE",
    "UNGROUNDED_FACTOR",
    "FieldCheck",
    "run_heuristics",
]

# --- penalties (multiplicative) ------------------------------------------------
UNGROUNDED_FACTOR = 0.35  # value not in the source at all
ROLE_MISMATCH_FACTOR = 0.6  # amount present, but another number carries this role's label
ARITHMETIC_FACTOR = 0.7  # subtotal + tax != total, and no labelled charge or rounding explains it
EXTRA_CHARGE_FACTOR = 0.9  # they do not add up, but a labelled charge / discount or rounding does
CONFLICT_FACTOR = 0.6  # another amount carries this field's label with a different value
AMBIGUOUS_CURRENCY_FACTOR = 0.85  # only a shared symbol ("$") supports the code
NO_ROLE_LABEL_FACTOR = 0.85  # amount present, the source labels no number for this role
INVALID_DATE_FACTOR = 0.1  # invoice_date is not a real date
INTERNAL_ERROR_FACTOR = 0.5  # a check itself failed: treat the field as unverified
MIN_FACTOR = 0.01

_CENTS_RE = re.compile(r"[.,][0-9]{2}\)?$")
ROUNDING_TOLERANCE = Decimal("0.05")  # cash rounding to 0.05, per-line tax rounding
_MAX_ADJUSTMENTS = 8


@dataclass
class FieldCheck:
    field: str
    factor: float = 1.0
    reasons: list[str] = dataclasses.field(default_factory=list)
    spans: list[Span] = dataclasses.field(default_factory=list)

    def penalise(self, factor: float, reason: str) -> None:
        self.factor = max(MIN_FACTOR, min(1.0, self.factor * factor))
        if reason:
            self.reasons.append(reason)


@dataclass(frozen=True)
class _Context:
    """What the words around one amount, on its own line, say it is."""

    adjustment: str | None  # the charge or deduction phrase that qualifies it ("shipping", "paid")
    partial: bool  # a page, carried-forward or instalment figure
    rate_base: bool  # the base a tax rate applies to ("20% on 540.00")
    currencies: frozenset[str]  # currencies named right next to it


def _span(text: str, s: int, e: int) -> Span:
    return Span(start=s, end=e, text=text[s:e])


def _short(value: Any, limit: int = 80) -> str:
    s = str(value)
    return s if len(s) <= limit else s[: limit - 1] + "…"


# --- the source, analysed once --------------------------------------------------
class _Source:
    def __init__(self, text: str, lexicon: Lexicon) -> None:
        self.text = text
        self.lexicon = lexicon
        self._norm: NormalizedText | None = None
        self.lines = Lines(text)
        self.date_mentions = find_date_mentions(text)
        self.amounts: list[AmountMention] = find_amounts(text, date_mentions=self.date_mentions)
        assignment = assign_roles(text, self.amounts, self.lines, lexicon)
        self.labels = assignment.labels
        self.roles = assignment.roles
        self.role_label = assignment.role_label
        self._currency: list[_CurrencyHit] | None = None
        self._currency_starts: list[int] = []
        self._context: dict[int, _Context] = {}
        self._adjustments: list[tuple[Decimal, str, str]] | None = None
        self._page_starts: list[int] | None = None
        self._adjustment_sums: dict[bool, dict[Decimal, list[str]]] = {}

    @property
    def norm(self) -> NormalizedText:
        if self._norm is None:
            self._norm = NormalizedText(self.text)
        return self._norm

    @property
    def currency_hits(self) -> list[_CurrencyHit]:
        if self._currency is None:
            self._currency = _currency_hits(self.text)
            self._currency_starts = [h.start for h in self._currency]
        return self._currency

    def context(self, ai: int) -> _Context:
        """Amount ai's qualifiers, read from its own line: the words since the previous
        amount (and, for an unlabelled number, the words right after it)."""
        cached = self._context.get(ai)
        if cached is not None:
            return cached
        text, am = self.text, self.amounts[ai]
        ls, le = self.lines.bounds(self.lines.line_of(am.start))
        prev_end = self.amounts[ai - 1].end if ai > 0 and self.amounts[ai - 1].end > ls else ls
        start = max(prev_end, am.start - LABEL_BEFORE_WINDOW)
        before = text[start : am.start]
        next_start = self.amounts[ai + 1].start if ai + 1 < len(self.amounts) else len(text)
        after_end = min(le, next_start, am.end + LABEL_AFTER_WINDOW)
        after = text[am.end : after_end]
        adjustment = None
        for m in self.lexicon.adjustment_re.finditer(before):
            adjustment = normalise_phrase(m.group())  # the phrase nearest the number wins
        if adjustment is None and self.roles[ai] is None:
            after_phrase = self.lexicon.adjustment_re.match(after.lstrip(" \t\u00a0:"))
            rest = text[am.end + len(after) : min(le, next_start)]
            if after_phrase is not None and (
                next_start >= le or CLAUSE_BREAK_RE.search(rest) or CLAUSE_BREAK_RE.search(after)
            ):
                adjustment = normalise_phrase(after_phrase.group())
        # partial qualifiers may stand before a page number ("Page 1 subtotal 300.00"),
        # so they are read back to the last amount written with cents
        partial_start = max(ls, am.start - LABEL_BEFORE_WINDOW)
        k = ai - 1
        while k >= 0 and self.amounts[k].end > partial_start:
            if _CENTS_RE.search(self.amounts[k].raw):
                partial_start = self.amounts[k].end
                break
            k -= 1
        partial = self.lexicon.partial_re.search(text, partial_start, am.start) is not None
        rate_base = self.lexicon.rate_base_re.search(before) is not None
        codes: set[str] = set()
        hits = self.currency_hits
        for h in hits[bisect_left(self._currency_starts, start) :]:
            if h.start >= am.end + len(after):
                break
            between = (
                text[h.end : am.start] if h.end <= am.start else text[am.end : h.start] if h.start >= am.end else "x"
            )
            if not any(c.isalnum() for c in between):  # written right next to the number
                codes |= h.codes
        ctx = _Context(adjustment, partial, rate_base, frozenset(codes))
        self._context[ai] = ctx
        return ctx

    def page_of(self, pos: int) -> int:
        """Which page pos is on (0 when the text marks no pages)."""
        if self._page_starts is None:
            lines = self.lines
            self._page_starts = [
                lines.starts[lines.line_of(m.start())] for m in self.lexicon.page_mark_re.finditer(self.text)
            ]
        return bisect_right(self._page_starts, pos)

    def adjustments(self) -> list[tuple[Decimal, str, str]]:
        """(amount, kind, phrase) of every labelled charge or deduction, each once."""
        if self._adjustments is not None:
            return self._adjustments
        seen: dict[tuple[Decimal, str], tuple[Decimal, str, str]] = {}
        for ai, am in enumerate(self.amounts):
            ctx = self.context(ai)
            cents = to_cents(abs(am.value))
            if ctx.adjustment is None or cents is None or cents == 0:
                continue
            kind = self.lexicon.adjustment_kind.get(ctx.adjustment, "either")
            seen.setdefault((cents, kind), (cents, kind, f"{ctx.adjustment} {am.raw}"))
            if len(seen) >= _MAX_ADJUSTMENTS:
                break
        self._adjustments = list(seen.values())
        return self._adjustments

    def adjustment_sums(self, either_way: bool) -> dict[Decimal, list[str]]:
        if either_way not in self._adjustment_sums:
            self._adjustment_sums[either_way] = _adjustment_sums(self.adjustments(), either_way=either_way)
        return self._adjustment_sums[either_way]


# --- checks -------------------------------------------------------------------------
def _check_string(src: _Source, name: str, value: Any) -> FieldCheck:
    fc = FieldCheck(name)
    value = str(value)
    spans = src.norm.find(value)
    if not spans:
        fc.penalise(UNGROUNDED_FACTOR, f"'{_short(value)}' not found in the source")
    else:
        fc.spans = [_span(src.text, s, e) for s, e in spans]
    return fc


def _check_date(src: _Source, value: Any) -> FieldCheck:
    fc = FieldCheck("invoice_date")
    if isinstance(value, datetime):
        value = value.date()
    if isinstance(value, str):
        if not is_real_iso_date(value.strip()):
            fc.penalise(INVALID_DATE_FACTOR, f"'{_short(value)}' is not a real date (YYYY-MM-DD)")
            return fc
        value = date.fromisoformat(value.strip())
    if not isinstance(value, date):
        fc.penalise(INVALID_DATE_FACTOR, f"{_short(value)!r} is not a date")
        return fc
    spans = [(m.start, m.end) for m in src.date_mentions if value in m.dates]
    if not spans:
        fc.penalise(UNGROUNDED_FACTOR, f"date {value.isoformat()} not found in the source in any written form")
    else:
        fc.spans = [_span(src.text, s, e) for s, e in spans]
    return fc


def _to_decimal(value: Any) -> Decimal | None:
    if isinstance(value, bool) or value is None:
        return None
    d: Decimal | None
    try:
        if isinstance(value, Decimal):
            d = value
        elif isinstance(value, (int, float)):
            d = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
        elif isinstance(value, str):
            d = parse_amount(value)
        else:
            return None
    except (InvalidOperation, ValueError, OverflowError):
        return None
    if d is None or not d.is_finite():
        return None
    return d


def _as_given(value: Any) -> str:
    return _short(repr(value) if isinstance(value, float) else value, 40)


@dataclass
class _AmountStatus:
    value: Decimal | None
    grounded: bool = False
    role_grounded: bool = False


def _check_amount(src: _Source, name: str, value: Any) -> tuple[FieldCheck, _AmountStatus]:
    fc = FieldCheck(name)
    d = _to_decimal(value)
    st = _AmountStatus(d)
    if d is None:
        fc.penalise(UNGROUNDED_FACTOR, f"{_as_given(value)} is not a finite number")
        return fc, st
    cents = to_cents(d)
    hits: list[int] = []
    if cents is not None:
        for i, am in enumerate(src.amounts):
            c = to_cents(am.value)
            if c is not None and (c == cents or (am.value < 0 and -c == cents)):
                hits.append(i)
    if not hits:
        fc.penalise(UNGROUNDED_FACTOR, f"{_as_given(value)} not found in the source")
        return fc, st
    st.grounded = True
    labelled = [i for i in hits if src.roles[i] == name]
    others = [i for i in hits if src.roles[i] != name]
    fc.spans = [_span(src.text, src.amounts[i].start, src.amounts[i].end) for i in labelled + others]
    if labelled:
        st.role_grounded = True
        return fc, st
    shown = src.amounts[hits[0]].raw
    role_numbers = [am.raw for am, r in zip(src.amounts, src.roles, strict=True) if r == name]
    if role_numbers:
        listed = ", ".join(dict.fromkeys(role_numbers[:3]))
        fc.penalise(
            ROLE_MISMATCH_FACTOR,
            f"{shown} appears in the source but not as a labelled {name} (labelled {name}: {listed})",
        )
    else:
        fc.penalise(NO_ROLE_LABEL_FACTOR, f"{shown} appears in the source, but the source labels no amount as {name}")
    return fc, st


def _adjustment_sums(adjustments: list[tuple[Decimal, str, str]], *, either_way: bool) -> dict[Decimal, list[str]]:
    """Every sum some of the labelled charges / deductions make (a charge adds, a
    deduction subtracts; either_way ignores direction), each with the fewest phrases."""
    sums: dict[Decimal, list[str]] = {}
    for size in range(1, len(adjustments) + 1):
        for combo in combinations(adjustments, size):
            options = [
                (value,) if either_way or kind == "charge" else (-value,) if kind == "deduction" else (value, -value)
                for value, kind, _ in combo
            ]
            for signs in product(*options):
                total = sum(signs, Decimal(0))
                sums.setdefault(abs(total) if either_way else total, [phrase for _, _, phrase in combo])
    return sums


def _difference_made_of(src: _Source, diff: Decimal, *, either_way: bool) -> list[str] | None:
    """The labelled charges / deductions that make up diff, or None."""
    target = to_cents(abs(diff) if either_way else diff)
    if target is None:
        return None
    sums = src.adjustment_sums(either_way)
    for near in (target, target - CENT, target + CENT):
        if near in sums:
            return sums[near]
    return None


def _check_arithmetic(
    src: _Source, checks: dict[str, FieldCheck], status: dict[str, _AmountStatus], data_values: dict[str, Any]
) -> None:
    if not all(f in status and status[f].value is not None for f in AMOUNT_FIELDS):
        return
    sub, tax, tot = (status[f].value for f in AMOUNT_FIELDS)
    assert sub is not None and tax is not None and tot is not None
    try:
        total_sum = sub + tax
        diff = tot - total_sum
        if abs(diff) <= CENT:
            return
        summary = (
            f"subtotal + tax = {sub:.2f} + {tax:.2f} = {total_sum:.2f}, but total is {_as_given(data_values['total'])}"
        )
    except (InvalidOperation, ValueError, OverflowError):
        return
    if abs(diff) <= ROUNDING_TOLERANCE:
        checks["total"].penalise(EXTRA_CHARGE_FACTOR, f"{summary}: the difference {diff:.2f} is within rounding")
        return
    made_of = _difference_made_of(src, diff, either_way=False)
    if made_of is not None:
        checks["total"].penalise(
            EXTRA_CHARGE_FACTOR,
            f"{summary}: the difference {diff:.2f} is an extra charge or discount the source labels ({' + '.join(made_of)})",
        )
        return
    # Never forgiven, however well the amounts are grounded: the source (or the record)
    # contradicts itself. Blame the fields not fully grounded, else the total.
    weak = [f for f in AMOUNT_FIELDS if not (status[f].grounded and status[f].role_grounded)]
    reason = (
        f"arithmetic: {summary}: the difference {diff:.2f} is beyond rounding and no labelled charge "
        "or discount in the source makes it up"
    )
    for f in weak or ["total"]:
        checks[f].penalise(ARITHMETIC_FACTOR, reason)


def _conflict_candidates(src: _Source, role: str) -> list[int]:
    """Amounts a label on their own line gives this role, as a figure for the whole
    document: not a page or carried-forward figure, not a charge or payment ("Total
    paid 200.00"), not a rate's base, not zero, not after an "incl. VAT" phrase (which
    may name the tax it includes)."""
    out = []
    for ai, role_of in enumerate(src.roles):
        k = src.role_label[ai]
        if role_of != role or k < 0 or not src.amounts[ai].value:
            continue
        label = src.labels[k]
        if label.start < src.amounts[ai].start and src.text[label.start : label.end].casefold().startswith(
            src.lexicon.tax_included_prefixes
        ):
            continue
        ctx = src.context(ai)
        if ctx.adjustment is None and not ctx.partial and not ctx.rate_base:
            out.append(ai)
    return out


def _check_conflicts(
    src: _Source, checks: dict[str, FieldCheck], status: dict[str, _AmountStatus], currency: Any
) -> None:
    """A committed amount labelled as its role, while another amount carries the same
    role's label with a different value: the source contradicts itself."""
    for name in AMOUNT_FIELDS:
        st = status.get(name)
        if st is None or not st.role_grounded or st.value is None:
            continue
        mine_cents = to_cents(abs(st.value))
        candidates = _conflict_candidates(src, name)
        mine = [ai for ai in candidates if to_cents(abs(src.amounts[ai].value)) == mine_cents]
        if mine_cents is None or not mine:
            continue
        with_cents = any(_CENTS_RE.search(src.amounts[ai].raw) for ai in mine)
        my_pages = {src.page_of(src.amounts[ai].start) for ai in mine}
        my_currencies = frozenset().union(*(src.context(ai).currencies for ai in mine))
        if not my_currencies and isinstance(currency, str):
            my_currencies = frozenset({currency.strip().upper()})
        parts: list[tuple[int, Decimal]] = []
        for ai in candidates:
            cents = to_cents(abs(src.amounts[ai].value))
            if cents is None or cents == mine_cents:
                continue
            if with_cents and not _CENTS_RE.search(src.amounts[ai].raw):
                continue  # "Total: 3" (a count) beside "Total 583.20"
            parts.append((ai, cents))
        if not parts or mine_cents in (sum(c for _, c in parts), sum({c for _, c in parts})):
            continue  # its parts: tax per rate, subtotals per page
        others: dict[Decimal, str] = {}
        for ai, cents in parts:
            if src.page_of(src.amounts[ai].start) not in my_pages:
                continue  # another page's figure: a running subtotal, a page total
            theirs = src.context(ai).currencies
            if theirs and my_currencies and not theirs & my_currencies:
                continue  # the same figure in another currency
            others.setdefault(cents, src.amounts[ai].raw)
        if not others:
            continue
        unexplained = [
            raw
            for cents, raw in others.items()
            if _difference_made_of(src, mine_cents - cents, either_way=True) is None
        ]
        if unexplained:
            shown = src.amounts[mine[0]].raw
            checks[name].penalise(
                CONFLICT_FACTOR,
                f"conflicting {name} in the source: {shown} and {', '.join(unexplained[:3])} are each labelled {name}, "
                "and no labelled payment, charge or discount accounts for the difference",
            )


_SYMBOLS: dict[str, str | None] = {
    **{sym: c for sym, c in UNAMBIGUOUS_SYMBOLS.items()},
    **{sym: None for sym in AMBIGUOUS_SYMBOLS},
}
_SYMBOL_RE = re.compile("|".join(re.escape(x) for x in sorted(_SYMBOLS, key=len, reverse=True)))
_CUR_WORDS: dict[str, str | None] = {**CURRENCY_WORDS, "dollar": None, "dollars": None}
_CUR_WORD_RE = re.compile(
    r"(?<![^\W\d_])(?:"
    + "|".join(phrase_pattern(w) for w in sorted(_CUR_WORDS, key=len, reverse=True))
    + r")(?![^\W\d_])",
    re.IGNORECASE,
)
_CAPS3_RE = re.compile(r"[A-Z]{3}")
_CUR_FIRST_WORDS = frozenset(first_word(w) for w in _CUR_WORDS)
_MAX_CURRENCY_HITS = 1000


def _letter(text: str, i: int) -> bool:
    return 0 <= i < len(text) and text[i].isalpha()


@dataclass
class _CurrencyHit:
    start: int
    end: int
    codes: frozenset[str]
    strong: bool  # names exactly one currency


def _currency_hits(text: str) -> list[_CurrencyHit]:
    hits: list[_CurrencyHit] = []
    for m in _CAPS3_RE.finditer(text):
        if m.group() in ISO_4217 and not _letter(text, m.start() - 1) and not _letter(text, m.end()):
            hits.append(_CurrencyHit(m.start(), m.end(), frozenset({m.group()}), True))
            if len(hits) >= _MAX_CURRENCY_HITS:
                break
    for m in _SYMBOL_RE.finditer(text):
        sym = m.group()
        if sym[0].isalpha() and _letter(text, m.start() - 1):
            continue
        if sym[-1].isalpha() and _letter(text, m.end()):
            continue
        code = _SYMBOLS[sym]
        if code is not None:
            hits.append(_CurrencyHit(m.start(), m.end(), frozenset({code}), True))
        else:
            hits.append(_CurrencyHit(m.start(), m.end(), AMBIGUOUS_SYMBOLS[sym], False))
        if len(hits) >= 2 * _MAX_CURRENCY_HITS:
            break
    first_words = _CUR_FIRST_WORDS
    for w in WORD_RE.finditer(text):
        if w.end() - w.start() > 12 or w.group().casefold() not in first_words:
            continue
        word = _CUR_WORD_RE.match(text, w.start())
        if word is None:
            continue
        key = normalise_phrase(word.group())
        code = _CUR_WORDS.get(key)
        if code is not None:
            hits.append(_CurrencyHit(word.start(), word.end(), frozenset({code}), True))
        elif key in ("dollar", "dollars"):
            hits.append(_CurrencyHit(word.start(), word.end(), AMBIGUOUS_SYMBOLS["$"], False))
        if len(hits) >= 3 * _MAX_CURRENCY_HITS:
            break
    hits.sort(key=lambda h: h.start)
    return hits


def _check_currency(src: _Source, value: Any) -> FieldCheck:
    fc = FieldCheck("currency")
    code = str(value).strip().upper()
    hits = src.currency_hits
    strong = [h for h in hits if h.strong and code in h.codes]
    if strong:
        fc.spans = [_span(src.text, h.start, h.end) for h in strong]
        return fc
    ambiguous = [h for h in hits if not h.strong and code in h.codes]
    if ambiguous:
        fc.spans = [_span(src.text, h.start, h.end) for h in ambiguous]
        sym = src.text[ambiguous[0].start : ambiguous[0].end]
        fc.penalise(
            AMBIGUOUS_CURRENCY_FACTOR,
            f"only the ambiguous symbol '{sym}' supports {_short(code, 10)} (no ISO code or unambiguous symbol)",
        )
        return fc
    others = list(dict.fromkeys(c for h in hits if h.strong for c in h.codes))[:4]
    if others:
        fc.penalise(UNGROUNDED_FACTOR, f"the source names {', '.join(others)}, not {_short(code, 10)}")
    else:
        fc.penalise(UNGROUNDED_FACTOR, f"currency {_short(code, 10)} not found in the source (no code, symbol or name)")
    return fc


# A check that fails (a bug, an input nobody foresaw) lowers its fields' scores and
# names itself in the reasons; it never fails the job, so these catches are blind.
def _guard(name: str, fn: Any, *args: Any) -> FieldCheck:
    try:
        return fn(*args)
    except Exception as exc:  # noqa: BLE001 - a failing check marks its field unverified
        fc = FieldCheck(name)
        fc.penalise(INTERNAL_ERROR_FACTOR, f"the {name} check could not run ({type(exc).__name__})")
        return fc


def _check_amount_recording(src: _Source, name: str, value: Any, status: dict[str, _AmountStatus]) -> FieldCheck:
    """_check_amount, keeping what it learned of the amount for the cross-checks."""
    fc, status[name] = _check_amount(src, name, value)
    return fc


def run_heuristics(text: str, data: InvoiceData, *, lexicon: Lexicon = INVOICE_LEXICON) -> dict[str, FieldCheck]:
    """One FieldCheck per COMMITTED (non-null) field of data, keyed by field name.
    Null fields are absent. The lexicon names the labels each amount role reads."""
    if not isinstance(text, str):
        text = "" if text is None else str(text)
    values = {name: getattr(data, name, None) for name in FIELD_NAMES}
    committed = {k: v for k, v in values.items() if v is not None}
    if not committed:
        return {}
    try:
        src = _Source(text, lexicon)
    except Exception as exc:  # noqa: BLE001  # pragma: no cover - a failing analysis marks every field unverified
        out = {}
        for name in committed:
            fc = FieldCheck(name)
            fc.penalise(INTERNAL_ERROR_FACTOR, f"the source could not be analysed ({type(exc).__name__})")
            out[name] = fc
        return out

    checks: dict[str, FieldCheck] = {}
    status: dict[str, _AmountStatus] = {}
    for name, value in committed.items():
        if name in ("vendor_name", "invoice_number"):
            checks[name] = _guard(name, _check_string, src, name, value)
        elif name == "invoice_date":
            checks[name] = _guard(name, _check_date, src, value)
        elif name in AMOUNT_FIELDS:
            checks[name] = _guard(name, _check_amount_recording, src, name, value, status)
        elif name == "currency":
            checks[name] = _guard(name, _check_currency, src, value)
    cross_checks = (
        ("label conflict", lambda: _check_conflicts(src, checks, status, values["currency"])),
        ("arithmetic", lambda: _check_arithmetic(src, checks, status, values)),
    )
    for what, cross_check in cross_checks:
        try:
            cross_check()
        except Exception as exc:  # noqa: BLE001 - a failing cross-check marks the amounts unverified
            for name in AMOUNT_FIELDS:
                if name in checks:
                    checks[name].penalise(
                        INTERNAL_ERROR_FACTOR, f"the {what} check could not run ({type(exc).__name__})"
                    )
    return {name: checks[name] for name in FIELD_NAMES if name in checks}
