"""Deterministic heuristics: check each committed field against the source text.

They are free, never call a model, and can only LOWER a score: each committed field
gets a multiplicative factor in (0, 1] (1.0 = no concern), readable reasons and the
spans where its value stands in the source.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from core.extraction.amounts import AmountMention, find_amounts, parse_amount, to_cents
from core.extraction.currencies import AMBIGUOUS_SYMBOLS, CURRENCY_WORDS, ISO_4217, UNAMBIGUOUS_SYMBOLS
from core.extraction.dates import find_date_mentions, is_real_iso_date
from core.extraction.schema import AMOUNT_FIELDS, FIELD_NAMES, InvoiceData, Span
from core.extraction.text_match import NormalizedText

__all__ = [
    "FieldCheck",
    "run_heuristics",
    "UNGROUNDED_FACTOR",
    "ROLE_MISMATCH_FACTOR",
    "ARITHMETIC_FACTOR",
    "EXTRA_CHARGE_FACTOR",
    "AMBIGUOUS_CURRENCY_FACTOR",
    "NO_ROLE_LABEL_FACTOR",
    "INVALID_DATE_FACTOR",
    "INTERNAL_ERROR_FACTOR",
]

# --- penalties (multiplicative) ------------------------------------------------
UNGROUNDED_FACTOR = 0.35  # value not in the source at all
ROLE_MISMATCH_FACTOR = 0.6  # amount present, but another number carries this role's label
ARITHMETIC_FACTOR = 0.7  # subtotal + tax != total, on the fields not fully grounded
EXTRA_CHARGE_FACTOR = 0.9  # all three grounded and labelled, yet they do not add up
AMBIGUOUS_CURRENCY_FACTOR = 0.85  # only a shared symbol ("$") supports the code
NO_ROLE_LABEL_FACTOR = 0.85  # amount present, the source labels no number for this role
INVALID_DATE_FACTOR = 0.1  # invoice_date is not a real date
INTERNAL_ERROR_FACTOR = 0.5  # a check itself failed: treat the field as unverified
MIN_FACTOR = 0.01

# --- role labels ------------------------------------------------------------------
_ROLE_PHRASES: dict[str, tuple[str, ...]] = {
    "total": (
        "total", "grand total", "total due", "total amount", "amount due", "balance due",
        "amount payable", "total payable", "total to pay", "amount to pay", "invoice total",
        "gross", "gross amount", "gross total", "total gross",
        "total incl. vat", "total incl vat", "total inc. vat", "total inc vat", "total including vat",
        "total incl. tax", "total incl tax", "total including tax", "total incl. gst", "total inc gst",
        "incl. vat", "including vat", "incl. tax", "including tax",
        "gesamtbetrag", "gesamtsumme", "rechnungsbetrag", "endbetrag", "summe", "bruttobetrag", "brutto",
        "gesamt", "total inkl. mwst", "total inkl. mwst.", "betrag inkl. mwst", "betrag inkl. mwst.",
        "total ttc", "montant ttc", "ttc", "montant total", "net à payer", "net a payer", "à payer",
        "importe total", "total a pagar", "totale", "importo totale", "totaal", "te betalen",
        "razem", "do zapłaty", "suma", "total general",
        "summa att betala", "att betala", "totalt", "invoice value", "total invoice value",
    ),
    "subtotal": (
        "subtotal", "sub-total", "sub total", "net", "net amount", "net total", "total net",
        "before tax", "total before tax", "amount before tax",
        "excl. vat", "excl vat", "excluding vat", "ex vat", "ex. vat", "excl. tax", "excl tax",
        "excluding tax", "ex tax", "excl. gst", "excl gst", "ex gst", "excluding gst",
        "total excl. vat", "total excl vat", "total excluding vat", "total ex vat", "total excl. tax",
        "pre-tax", "pre tax", "pretax", "pre-tax total", "pre-tax amount",
        "zwischensumme", "nettobetrag", "netto", "summe netto", "gesamt netto", "betrag netto",
        "total ht", "montant ht", "ht", "base imponible", "subtotale", "imponibile", "subtotaal",
        "suma netto", "wartość netto",
        "taxable value", "taxable amount", "exkl. moms", "summa exkl. moms",
    ),
    "tax": (
        "tax", "vat", "gst", "hst", "pst", "qst", "sales tax", "tax was", "vat was",
        "total tax", "tax total", "tax amount", "vat amount", "total vat", "amount of tax",
        "mwst", "mwst.", "ust", "ust.", "umsatzsteuer", "mehrwertsteuer", "steuer",
        "tva", "montant tva", "iva", "btw", "moms", "impuesto", "igst", "cgst", "sgst",
        "gst/hst", "vat/tax", "podatek vat", "kwota vat",
    ),
}
_PHRASE_ROLE: dict[str, str] = {}
for _role, _phrases in _ROLE_PHRASES.items():
    for _p in _phrases:
        _PHRASE_ROLE[_p] = _role

_SPACE = r"[ \t\u00a0\u202f]{1,2}"


def _phrase_rx(p: str) -> str:
    return _SPACE.join(re.escape(w) for w in p.split(" "))


_LABEL_RE = re.compile(
    r"(?<![^\W_])(?:"
    + "|".join(_phrase_rx(p) for p in sorted(_PHRASE_ROLE, key=len, reverse=True))
    + r")(?![^\W_])"
    # not a tax id / rate / quantity: "VAT No.", "Tax ID", "Tax rate", "Total items"
    r"(?![ \t]*[:.#]?[ \t]*(?:no|nr|number|num|id|reg|registration|identification|rate|code|exempt"
    r"|invoice|items|qty|quantity|hours|units|pieces|pcs|weight)(?![^\W_]))"
    # payment terms: "Net 30 days"
    r"(?![ \t]+[0-9]{1,3}[ \t]*(?:days?|d)(?![^\W_]))",
    re.IGNORECASE,
)
_WS_RE = re.compile(r"\s+")
_WORD_RE = re.compile(r"[^\W\d_]+")
_LABEL_FIRST_WORDS = frozenset(_WORD_RE.match(p).group() for p in _PHRASE_ROLE)  # type: ignore[union-attr]
MAX_LABELS = 100_000


def _iter_labels(text: str):  # type: ignore[no-untyped-def]
    """Label matches, found by scanning words and matching anchored (fast on big text)."""
    pos = 0
    count = 0
    for w in _WORD_RE.finditer(text):
        if w.start() < pos or w.end() - w.start() > 20 or w.group().casefold() not in _LABEL_FIRST_WORDS:
            continue
        m = _LABEL_RE.match(text, w.start())
        if m is not None:
            yield m
            pos = m.end()
            count += 1
            if count >= MAX_LABELS:
                return
_TRAILING_PREFIXES = ("before", "excl", "excluding", "ex ", "ex.", "incl", "including", "inc ", "inc.", "pre",
                      "ht", "ttc", "netto", "brutto", "total ht", "total ttc")
_CLAUSE_BREAK = re.compile(r"[,;]|\.(?![0-9])")

LABEL_BEFORE_WINDOW = 60
LABEL_AFTER_WINDOW = 20
COLUMN_LOOKUP_LINES = 3
_MAX_COLUMN_LINE = 2000


@dataclass
class FieldCheck:
    field: str
    factor: float = 1.0
    reasons: list[str] = field(default_factory=list)
    spans: list[Span] = field(default_factory=list)

    def penalise(self, factor: float, reason: str) -> None:
        self.factor = max(MIN_FACTOR, min(1.0, self.factor * factor))
        if reason:
            self.reasons.append(reason)


@dataclass(frozen=True)
class _Label:
    start: int
    end: int
    role: str
    trailing: bool = False  # a phrase that usually follows its number ("before tax")


def _span(text: str, s: int, e: int) -> Span:
    return Span(start=s, end=e, text=text[s:e])


def _short(value: Any, limit: int = 80) -> str:
    s = str(value)
    return s if len(s) <= limit else s[: limit - 1] + "…"


# --- the source, analysed once --------------------------------------------------
class _Source:
    def __init__(self, text: str) -> None:
        self.text = text
        self._norm: NormalizedText | None = None
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self.date_mentions = find_date_mentions(text)
        self.amounts: list[AmountMention] = find_amounts(text, date_mentions=self.date_mentions)
        self.labels: list[_Label] = []
        for m in _iter_labels(text):
            key = _WS_RE.sub(" ", m.group().casefold())
            role = _PHRASE_ROLE.get(key) or _PHRASE_ROLE.get(key.rstrip("."))
            if role:
                self.labels.append(_Label(m.start(), m.end(), role, key.startswith(_TRAILING_PREFIXES)))
        self.label_starts = [lb.start for lb in self.labels]
        self.roles: list[str | None] = self._assign_roles()

    @property
    def norm(self) -> NormalizedText:
        if self._norm is None:
            self._norm = NormalizedText(self.text)
        return self._norm

    def line_of(self, pos: int) -> int:
        return bisect_right(self.line_starts, pos) - 1

    def line_bounds(self, idx: int) -> tuple[int, int]:
        s = self.line_starts[idx]
        e = self.line_starts[idx + 1] - 1 if idx + 1 < len(self.line_starts) else len(self.text)
        return s, e

    def _col(self, line_start: int, pos: int) -> int:
        seg = self.text[line_start:pos]
        return len(seg.expandtabs(8)) if "\t" in seg else len(seg)

    def _assign_roles(self) -> list[str | None]:
        text = self.text
        amounts, labels = self.amounts, self.labels
        n = len(amounts)
        roles: list[str | None] = [None] * n

        # candidates: (a) nearest label before on the same line, within the window,
        # no other amount between; (b) a label right after the number.
        pre: list[int] = [-1] * n
        post: list[int] = [-1] * n
        li = 0
        last_label = -1
        amount_since = False
        for ai, am in enumerate(amounts):
            while li < len(labels) and labels[li].end <= am.start:
                last_label = li
                amount_since = False
                li += 1
            if last_label >= 0 and not amount_since:
                lb = labels[last_label]
                if am.start - lb.end <= LABEL_BEFORE_WINDOW and "\n" not in text[lb.end : am.start]:
                    pre[ai] = last_label
            amount_since = True
            k = bisect_left(self.label_starts, am.end)
            if k < len(labels):
                gap = text[am.end : labels[k].start]
                if len(gap) <= LABEL_AFTER_WINDOW and "\n" not in gap and not any(c.isdigit() for c in gap):
                    post[ai] = k
        pre_of = {k: ai for ai, k in enumerate(pre) if k >= 0}

        # A label between two numbers goes to the number before it when it is a
        # trailing phrase ("540.00 before tax"), when a clause break separates it
        # from the next number ("43.20 VAT, so 583.20"), or when nothing follows.
        owned_after: dict[int, int] = {}
        for ai in range(n):
            has_pre = pre[ai] >= 0 and pre[ai] not in owned_after
            k = post[ai]
            if has_pre or k < 0:
                continue
            nxt = pre_of.get(k)
            lb = labels[k]
            if nxt is None or lb.trailing or _CLAUSE_BREAK.search(text, lb.end, amounts[nxt].start):
                owned_after[k] = ai

        used: set[int] = set()
        for ai in range(n):
            if pre[ai] >= 0 and pre[ai] not in owned_after:
                roles[ai] = labels[pre[ai]].role
                used.add(pre[ai])
            elif post[ai] >= 0 and owned_after.get(post[ai]) == ai:
                roles[ai] = labels[post[ai]].role
                used.add(post[ai])

        # (c) column layouts: a label above whose columns overlap the number's
        for ai, am in enumerate(amounts):
            if roles[ai] is None:
                roles[ai] = self._column_role(am, used)
        return roles

    def _column_role(self, am: AmountMention, used: set[int]) -> str | None:
        li = self.line_of(am.start)
        ls, le = self.line_bounds(li)
        if le - ls > _MAX_COLUMN_LINE:
            return None
        c0, c1 = self._col(ls, am.start), self._col(ls, am.end)
        checked = 0
        j = li - 1
        while j >= 0 and checked < COLUMN_LOOKUP_LINES:
            s, e = self.line_bounds(j)
            j -= 1
            if not self.text[s:e].strip():
                continue
            checked += 1
            if e - s > _MAX_COLUMN_LINE:
                continue
            k0 = bisect_left(self.label_starts, s)
            k1 = bisect_left(self.label_starts, e)
            best: tuple[int, str] | None = None
            for k in range(k0, k1):
                if k in used:
                    continue
                lb = self.labels[k]
                l0, l1 = self._col(s, lb.start), self._col(s, lb.end)
                overlap = min(c1, l1) - max(c0, l0)
                if overlap > -2 and (best is None or overlap > best[0]):
                    best = (overlap, lb.role)
            if best is not None:
                return best[1]
        return None


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
    role_numbers = [am.raw for am, r in zip(src.amounts, src.roles) if r == name]
    if role_numbers:
        listed = ", ".join(dict.fromkeys(role_numbers[:3]))
        fc.penalise(
            ROLE_MISMATCH_FACTOR,
            f"{shown} appears in the source but not as a labelled {name} (labelled {name}: {listed})",
        )
    else:
        fc.penalise(NO_ROLE_LABEL_FACTOR, f"{shown} appears in the source, but the source labels no amount as {name}")
    return fc, st


def _check_arithmetic(checks: dict[str, FieldCheck], status: dict[str, _AmountStatus], data_values: dict[str, Any]) -> None:
    if not all(f in status and status[f].value is not None for f in AMOUNT_FIELDS):
        return
    sub, tax, tot = (status[f].value for f in AMOUNT_FIELDS)
    assert sub is not None and tax is not None and tot is not None
    try:
        total_sum = sub + tax
        diff = tot - total_sum
        if abs(diff) <= Decimal("0.01"):
            return
        summary = f"subtotal + tax = {sub:.2f} + {tax:.2f} = {total_sum:.2f}"
    except (InvalidOperation, ValueError, OverflowError):
        return
    weak = [f for f in AMOUNT_FIELDS if not (status[f].grounded and status[f].role_grounded)]
    if not weak:
        checks["total"].penalise(
            EXTRA_CHARGE_FACTOR,
            f"{summary}, but total is {_as_given(data_values['total'])}; the difference {diff:.2f} "
            "may be an extra charge (shipping, fees) or a discount",
        )
        return
    reason = f"arithmetic: {summary}, not total {_as_given(data_values['total'])}"
    for f in weak:
        checks[f].penalise(ARITHMETIC_FACTOR, reason)


_SYMBOLS: dict[str, str | None] = {**{sym: c for sym, c in UNAMBIGUOUS_SYMBOLS.items()},
                                   **{sym: None for sym in AMBIGUOUS_SYMBOLS}}
_SYMBOL_RE = re.compile("|".join(re.escape(x) for x in sorted(_SYMBOLS, key=len, reverse=True)))
_CUR_WORDS: dict[str, str | None] = {**CURRENCY_WORDS, "dollar": None, "dollars": None}
_CUR_WORD_RE = re.compile(
    r"(?<![^\W\d_])(?:" + "|".join(_phrase_rx(w) for w in sorted(_CUR_WORDS, key=len, reverse=True)) + r")(?![^\W\d_])",
    re.IGNORECASE,
)
_CAPS3_RE = re.compile(r"[A-Z]{3}")
_CUR_FIRST_WORDS = frozenset(_WORD_RE.match(w).group() for w in _CUR_WORDS)  # type: ignore[union-attr]
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
    for w in _WORD_RE.finditer(text):
        if w.end() - w.start() > 12 or w.group().casefold() not in first_words:
            continue
        m = _CUR_WORD_RE.match(text, w.start())
        if m is None:
            continue
        key = _WS_RE.sub(" ", m.group().casefold())
        code = _CUR_WORDS.get(key)
        if code is not None:
            hits.append(_CurrencyHit(m.start(), m.end(), frozenset({code}), True))
        elif key in ("dollar", "dollars"):
            hits.append(_CurrencyHit(m.start(), m.end(), AMBIGUOUS_SYMBOLS["$"], False))
        if len(hits) >= 3 * _MAX_CURRENCY_HITS:
            break
    hits.sort(key=lambda h: h.start)
    return hits


def _check_currency(src: _Source, value: Any) -> FieldCheck:
    fc = FieldCheck("currency")
    code = str(value).strip().upper()
    hits = _currency_hits(src.text)
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


def _guard(name: str, fn: Any, *args: Any) -> FieldCheck:
    try:
        return fn(*args)
    except Exception as exc:  # never let a heuristic crash the pipeline
        fc = FieldCheck(name)
        fc.penalise(INTERNAL_ERROR_FACTOR, f"the {name} check could not run ({type(exc).__name__})")
        return fc


def run_heuristics(text: str, data: InvoiceData) -> dict[str, FieldCheck]:
    """One FieldCheck per COMMITTED (non-null) field of data, keyed by field name.
    Null fields are absent."""
    if not isinstance(text, str):
        text = "" if text is None else str(text)
    values = {name: getattr(data, name, None) for name in FIELD_NAMES}
    committed = {k: v for k, v in values.items() if v is not None}
    if not committed:
        return {}
    try:
        src = _Source(text)
    except Exception as exc:  # pragma: no cover - defensive
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
            try:
                checks[name], status[name] = _check_amount(src, name, value)
            except Exception as exc:
                fc = FieldCheck(name)
                fc.penalise(INTERNAL_ERROR_FACTOR, f"the {name} check could not run ({type(exc).__name__})")
                checks[name] = fc
        elif name == "currency":
            checks[name] = _guard(name, _check_currency, src, value)
    try:
        _check_arithmetic(checks, status, values)
    except Exception:  # pragma: no cover - defensive
        pass
    return {name: checks[name] for name in FIELD_NAMES if name in checks}
