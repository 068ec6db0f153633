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
from itertools import combinations, product
from typing import Any

from core.extraction.amounts import CENT, AmountMention, find_amounts, parse_amount, to_cents
from core.extraction.currencies import AMBIGUOUS_SYMBOLS, CURRENCY_WORDS, ISO_4217, UNAMBIGUOUS_SYMBOLS
from core.extraction.dates import find_date_mentions, is_real_iso_date
from core.extraction.schema import AMOUNT_FIELDS, FIELD_NAMES, InvoiceData, Span
from core.extraction.text_match import NormalizedText

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

# --- role labels ------------------------------------------------------------------
_ROLE_PHRASES: dict[str, tuple[str, ...]] = {
    "total": (
        "total",
        "grand total",
        "total due",
        "total amount",
        "amount due",
        "balance due",
        "amount payable",
        "total payable",
        "total to pay",
        "amount to pay",
        "invoice total",
        "gross",
        "gross amount",
        "gross total",
        "total gross",
        "total incl. vat",
        "total incl vat",
        "total inc. vat",
        "total inc vat",
        "total including vat",
        "total incl. tax",
        "total incl tax",
        "total including tax",
        "total incl. gst",
        "total inc gst",
        "incl. vat",
        "including vat",
        "incl. tax",
        "including tax",
        "gesamtbetrag",
        "gesamtsumme",
        "rechnungsbetrag",
        "endbetrag",
        "summe",
        "bruttobetrag",
        "brutto",
        "gesamt",
        "total inkl. mwst",
        "total inkl. mwst.",
        "betrag inkl. mwst",
        "betrag inkl. mwst.",
        "total ttc",
        "montant ttc",
        "ttc",
        "montant total",
        "net à payer",
        "net a payer",
        "à payer",
        "importe total",
        "total a pagar",
        "totale",
        "importo totale",
        "totaal",
        "te betalen",
        "razem",
        "do zapłaty",
        "suma",
        "total general",
        "summa att betala",
        "att betala",
        "totalt",
        "invoice value",
        "total invoice value",
    ),
    "subtotal": (
        "subtotal",
        "sub-total",
        "sub total",
        "net",
        "net amount",
        "net total",
        "total net",
        "before tax",
        "total before tax",
        "amount before tax",
        "excl. vat",
        "excl vat",
        "excluding vat",
        "ex vat",
        "ex. vat",
        "excl. tax",
        "excl tax",
        "excluding tax",
        "ex tax",
        "excl. gst",
        "excl gst",
        "ex gst",
        "excluding gst",
        "total excl. vat",
        "total excl vat",
        "total excluding vat",
        "total ex vat",
        "total excl. tax",
        "pre-tax",
        "pre tax",
        "pretax",
        "pre-tax total",
        "pre-tax amount",
        "zwischensumme",
        "nettobetrag",
        "netto",
        "summe netto",
        "gesamt netto",
        "betrag netto",
        "total ht",
        "montant ht",
        "ht",
        "base imponible",
        "subtotale",
        "imponibile",
        "subtotaal",
        "suma netto",
        "wartość netto",
        "taxable value",
        "taxable amount",
        "exkl. moms",
        "summa exkl. moms",
    ),
    "tax": (
        "tax",
        "vat",
        "gst",
        "hst",
        "pst",
        "qst",
        "sales tax",
        "tax was",
        "vat was",
        "total tax",
        "tax total",
        "tax amount",
        "vat amount",
        "total vat",
        "amount of tax",
        "mwst",
        "mwst.",
        "ust",
        "ust.",
        "umsatzsteuer",
        "mehrwertsteuer",
        "steuer",
        "tva",
        "montant tva",
        "iva",
        "btw",
        "moms",
        "impuesto",
        "igst",
        "cgst",
        "sgst",
        "gst/hst",
        "vat/tax",
        "podatek vat",
        "kwota vat",
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
    r"(?<![^\W_])(?:" + "|".join(_phrase_rx(p) for p in sorted(_PHRASE_ROLE, key=len, reverse=True)) + r")(?![^\W_])"
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


_TRAILING_PREFIXES = (
    "before",
    "excl",
    "excluding",
    "ex ",
    "ex.",
    "incl",
    "including",
    "inc ",
    "inc.",
    "pre",
    "ht",
    "ttc",
    "netto",
    "brutto",
    "total ht",
    "total ttc",
)
_CLAUSE_BREAK = re.compile(r"[,;]|\.(?![0-9])")

LABEL_BEFORE_WINDOW = 60
LABEL_AFTER_WINDOW = 20
COLUMN_LOOKUP_LINES = 3
_MAX_COLUMN_LINE = 2000

# --- what else a number on an invoice can be -------------------------------------
# Labelled charges and deductions between subtotal + tax and the total. A difference
# in the arithmetic, or between two labelled totals, is plausible only when it is made
# of these (or is within rounding). The kind says which way each may move the total.
_ADJUSTMENT_PHRASES: dict[str, tuple[str, ...]] = {
    "charge": (
        "shipping",
        "shipping and handling",
        "shipping & handling",
        "s&h",
        "delivery",
        "delivery charge",
        "freight",
        "postage",
        "postage and packing",
        "p&p",
        "carriage",
        "handling",
        "packing",
        "packaging",
        "fee",
        "fees",
        "service charge",
        "service fee",
        "surcharge",
        "tip",
        "gratuity",
        "insurance",
        "versand",
        "versandkosten",
        "porto",
        "fracht",
        "frais de port",
        "livraison",
        "frais",
        "envío",
        "envio",
        "spedizione",
        "trasporto",
        "verzending",
        "verzendkosten",
        "frakt",
    ),
    "deduction": (
        "discount",
        "rebate",
        "credit",
        "credit note",
        "paid",
        "amount paid",
        "payment",
        "payments",
        "payment received",
        "prepaid",
        "prepayment",
        "advance",
        "voucher",
        "coupon",
        "promo",
        "less",
        "rabatt",
        "skonto",
        "nachlass",
        "gutschrift",
        "anzahlung",
        "bezahlt",
        "remise",
        "escompte",
        "acompte",
        "réduction",
        "reduction",
        "descuento",
        "sconto",
        "korting",
        "rabat",
        "savings",
        "you save",
        "you saved",
        "refund",
        "refunded",
        "credits",
        "tendered",
        "cash",
        "card",
    ),
    "either": (
        "rounding",
        "rounding adjustment",
        "adjustment",
        "deposit",
        "previous balance",
        "balance brought forward",
        "opening balance",
        "rundung",
        "avrundning",
        "öresavrundning",
        "arrondi",
        "pfand",
        "outstanding",
        "overdue",
        "past due",
        "account balance",
    ),
}
_ADJUSTMENT_KIND = {p: kind for kind, phrases in _ADJUSTMENT_PHRASES.items() for p in phrases}
_ADJUSTMENT_RE = re.compile(
    r"(?<![^\W_])(?:"
    + "|".join(_phrase_rx(p) for p in sorted(_ADJUSTMENT_KIND, key=len, reverse=True))
    + r")(?![^\W_])",
    re.IGNORECASE,
)
# A figure for part of the document: a page, a carried-forward sum, an instalment.
_PARTIAL_RE = re.compile(
    r"(?<![^\W_])(?:page|pages|seite|carried|brought|c/f|b/f|übertrag|uebertrag|reporter|running"
    r"|section|cumulative|kumuliert|minimum|instalment|installment|monthly|per|last|previous|prior)(?![^\W_])",
    re.IGNORECASE,
)
# A page break: a form feed, or a line that numbers its page ("Page 2 of 3", "Seite 2").
_PAGE_MARK_RE = re.compile(
    r"\f|(?<![^\W_])(?:page|seite|pagina|página|sida|strona|pg\.?)[ \t]*[0-9]{1,4}(?![0-9])", re.IGNORECASE
)
# "VAT 20% on 540.00": the number is the base the rate applies to, not the tax.
_RATE_BASE_RE = re.compile(r"%[ \t]*(?:of|on|auf|sur|su|de|von|from|x)(?![^\W_])", re.IGNORECASE)
_CENTS_RE = re.compile(r"[.,][0-9]{2}\)?$")
_INCLUDED_PREFIXES = ("incl", "including", "inc ", "inc.", "inkl")
ROUNDING_TOLERANCE = Decimal("0.05")  # cash rounding to 0.05, per-line tax rounding
_MAX_ADJUSTMENTS = 8


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
        # role_label[i]: the label on amount i's own line that gave it its role, -1 when
        # the role came from a column header (or there is none)
        self.roles, self.role_label = self._assign_roles()
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

    def line_of(self, pos: int) -> int:
        return bisect_right(self.line_starts, pos) - 1

    def line_bounds(self, idx: int) -> tuple[int, int]:
        s = self.line_starts[idx]
        e = self.line_starts[idx + 1] - 1 if idx + 1 < len(self.line_starts) else len(self.text)
        return s, e

    def _col(self, line_start: int, pos: int) -> int:
        seg = self.text[line_start:pos]
        return len(seg.expandtabs(8)) if "\t" in seg else len(seg)

    def _assign_roles(self) -> tuple[list[str | None], list[int]]:
        text = self.text
        amounts, labels = self.amounts, self.labels
        n = len(amounts)
        roles: list[str | None] = [None] * n
        role_label: list[int] = [-1] * n

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
                role_label[ai] = pre[ai]
                used.add(pre[ai])
            elif post[ai] >= 0 and owned_after.get(post[ai]) == ai:
                roles[ai] = labels[post[ai]].role
                role_label[ai] = post[ai]
                used.add(post[ai])

        # (c) column layouts: a label above whose columns overlap the number's
        for ai, am in enumerate(amounts):
            if roles[ai] is None:
                roles[ai] = self._column_role(am, used)
        return roles, role_label

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
        ls, le = self.line_bounds(self.line_of(am.start))
        prev_end = self.amounts[ai - 1].end if ai > 0 and self.amounts[ai - 1].end > ls else ls
        start = max(prev_end, am.start - LABEL_BEFORE_WINDOW)
        before = text[start : am.start]
        next_start = self.amounts[ai + 1].start if ai + 1 < len(self.amounts) else len(text)
        after_end = min(le, next_start, am.end + LABEL_AFTER_WINDOW)
        after = text[am.end : after_end]
        adjustment = None
        for m in _ADJUSTMENT_RE.finditer(before):
            adjustment = _WS_RE.sub(" ", m.group().casefold())  # the phrase nearest the number wins
        if adjustment is None and self.roles[ai] is None:
            m = _ADJUSTMENT_RE.match(after.lstrip(" \t\u00a0:"))
            rest = text[am.end + len(after) : min(le, next_start)]
            if m is not None and (next_start >= le or _CLAUSE_BREAK.search(rest) or _CLAUSE_BREAK.search(after)):
                adjustment = _WS_RE.sub(" ", m.group().casefold())
        # partial qualifiers may stand before a page number ("Page 1 subtotal 300.00"),
        # so they are read back to the last amount written with cents
        partial_start = max(ls, am.start - LABEL_BEFORE_WINDOW)
        k = ai - 1
        while k >= 0 and self.amounts[k].end > partial_start:
            if _CENTS_RE.search(self.amounts[k].raw):
                partial_start = self.amounts[k].end
                break
            k -= 1
        partial = _PARTIAL_RE.search(text, partial_start, am.start) is not None
        rate_base = _RATE_BASE_RE.search(before) is not None
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
            self._page_starts = [self.line_starts[self.line_of(m.start())] for m in _PAGE_MARK_RE.finditer(self.text)]
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
            kind = _ADJUSTMENT_KIND.get(ctx.adjustment, "either")
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
                total = sum(signs)
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
            _INCLUDED_PREFIXES
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
    cross_checks = (
        ("label conflict", lambda: _check_conflicts(src, checks, status, values["currency"])),
        ("arithmetic", lambda: _check_arithmetic(src, checks, status, values)),
    )
    for what, cross_check in cross_checks:
        try:
            cross_check()
        except Exception as exc:  # never let a heuristic crash the pipeline
            for name in AMOUNT_FIELDS:
                if name in checks:
                    checks[name].penalise(
                        INTERNAL_ERROR_FACTOR, f"the {what} check could not run ({type(exc).__name__})"
                    )
    return {name: checks[name] for name in FIELD_NAMES if name in checks}
