"""One deterministic check per field kind: is the value where the document says it,
in the form its kind is written? Each check can only LOWER a score: it returns a
factor in (0, 1] (1.0 = no concern), the reasons for anything lower, and the spans
where the value stands in the source."""

from __future__ import annotations

import dataclasses
import re
from bisect import bisect_left
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal, InvalidOperation
from typing import Any, TypeVar

from vetq.core.extraction import formats
from vetq.core.extraction.amounts import CENT, CENTS_RE, parse_amount, to_cents
from vetq.core.extraction.clock import clock_value, parse_time_value, same_time
from vetq.core.extraction.dates import DateMention, compact_date_spans, is_real_iso_date
from vetq.core.extraction.lexicon import DATE_SET_ENDINGS, DELIVERY, PARTIES, VALUE_LABEL_SETS, normalise_phrase
from vetq.core.extraction.parties import OTHER_PARTY, is_label_cell, written_only_after_a_platform, written_only_as
from vetq.core.extraction.roles import (
    BARE_GAP,
    DATE_WORDS,
    DATING_WORDS,
    GENERIC_LABEL_BEFORE,
    NUMBER_WORDS,
    PERCENT_FIRST_RATE_RE,
    RATE_RE,
    Label,
    LabelIndex,
    cell_before,
)
from vetq.core.extraction.schema import Span
from vetq.core.extraction.source import CurrencyHit, Source
from vetq.core.extraction.text_match import ASCII_FORMS, UNSPACED_SCRIPTS, alnum_key
from vetq.core.schemas.records import Leaf
from vetq.core.schemas.rules import EACH
from vetq.core.schemas.spec import LABELLED_VALUE_KINDS

__all__ = [
    "AMBIGUOUS_CURRENCY_FACTOR",
    "CHECKS",
    "CONTRADICTED_FACTOR",
    "FOREIGN_LABEL_FACTOR",
    "INTERNAL_ERROR_FACTOR",
    "INVALID_DATE_FACTOR",
    "INVALID_FORMAT_FACTOR",
    "NEAR_MATCH_FACTOR",
    "NO_CUE_FACTOR",
    "NO_ROLE_LABEL_FACTOR",
    "NO_UNIT_FACTOR",
    "OTHER_ORDER_FACTOR",
    "ROLE_MISMATCH_FACTOR",
    "UNGROUNDED_FACTOR",
    "FieldCheck",
    "as_decimal",
    "as_given",
]

# --- penalties (multiplicative) ------------------------------------------------
UNGROUNDED_FACTOR = 0.35  # value not in the source at all
ROLE_MISMATCH_FACTOR = 0.6  # amount present, but another number carries this field's label
NO_ROLE_LABEL_FACTOR = 0.85  # amount present, the source labels no number for this field
FOREIGN_LABEL_FACTOR = 0.6  # a labelled date / identifier / text written only under other values' labels
AMBIGUOUS_CURRENCY_FACTOR = 0.85  # only a shared symbol ("$") supports the code
COUNTRY_CURRENCY_FACTOR = 0.9  # no currency written; the code of the one country its script or words tell
INVALID_DATE_FACTOR = 0.1  # not a real date
OTHER_ORDER_FACTOR = 0.6  # a numeric date read in the order the document's other dates or conventions do not write
INVALID_FORMAT_FACTOR = 0.3  # fails its pattern, checksum or format (an OCR slip, a swapped digit)
CONTRADICTED_FACTOR = 0.35  # the source has the words of another value, none of this one's
NO_CUE_FACTOR = 0.6  # none of the words the schema lists for this value appears
NO_UNIT_FACTOR = 0.9  # the number is there, but never with one of the field's units
NEAR_MATCH_FACTOR = 0.85  # text found within a few edits of the value (OCR noise), never exactly
INTERNAL_ERROR_FACTOR = 0.5  # a check itself failed: treat the field as unverified
OCR_LOW_CONFIDENCE_FACTOR = 0.6  # every place the value stands was read by OCR from a doubtful word
MIN_FACTOR = 0.01


@dataclass
class FieldCheck:
    field: str  # the value's path: line_items[2].amount
    factor: float = 1.0
    reasons: list[str] = dataclasses.field(default_factory=list)
    spans: list[Span] = dataclasses.field(default_factory=list)
    # Found where it belongs (in the source; under its own label, for a labelled
    # amount). A rule that fails blames the values not verified first.
    verified: bool = False
    number: Decimal | None = None  # a numeric value, for the rules
    unlabelled: bool = False  # a labelled field whose labels the document never writes

    def penalise(self, factor: float, reason: str) -> None:
        self.factor = max(MIN_FACTOR, min(1.0, self.factor * factor))
        if reason:
            self.reasons.append(reason)


def short(value: Any, limit: int = 80) -> str:
    s = str(value)
    return s if len(s) <= limit else s[: limit - 1] + "…"


def as_given(value: Any) -> str:
    """A value as the record gave it (583.2 stays 583.2: the reason names what was sent)."""
    return short(repr(value) if isinstance(value, float) else value, 40)


def as_decimal(value: Any) -> Decimal | None:
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


def spans_in(text: str, found: list[tuple[int, int]]) -> list[Span]:
    return [Span(start=s, end=e, text=text[s:e]) for s, e in found]


def _grounded(check: FieldCheck, src: Source, found: list[tuple[int, int]], missing: str) -> FieldCheck:
    if found:
        check.spans, check.verified = spans_in(src.text, found), True
    else:
        check.penalise(UNGROUNDED_FACTOR, missing)
    return check


# --- text-like kinds ----------------------------------------------------------------
def check_text(src: Source, leaf: Leaf) -> FieldCheck:
    check = FieldCheck(leaf.path)
    value = str(leaf.value)
    found = src.norm.find(value) or _wrapped(src, value)
    near = None if found else src.norm.near(value)
    if near is not None:
        # OCR noise ("SDN BND" read for "SDN BHD"): grounded where it stands, but lower
        check.spans, check.verified = spans_in(src.text, [(near.start, near.end)]), True
        seen = src.text[near.start : near.end]
        check.penalise(
            NEAR_MATCH_FACTOR,
            f"'{short(value)}' is not in the source as written; '{short(seen)}' differs by {near.edits} character(s)",
        )
    else:
        _grounded(check, src, found, f"'{short(value)}' not found in the source")
    _pattern(check, leaf, value)
    party = leaf.field.party
    if party is not None and check.spans:
        other = OTHER_PARTY[party]
        spans = [(span.start, span.end) for span in check.spans]
        # "deniz.kaya@example.com" is an address the name is read in, not a writing of it
        spans = [span for span in spans if not _in_a_mail_or_web_address(src.text, *span)] or spans
        placed = written_only_as(src.text, src.lines, spans, other, src.value_labels)
        if placed is not None:
            check.verified = False
            where = (
                f"as the recipient a letter addresses ('{short(placed.written, 40)}')"
                if placed.addressed
                else f"under '{short(placed.written, 40)}', where the {other} is named"
            )
            check.penalise(FOREIGN_LABEL_FACTOR, f"'{short(value)}' stands in the source only {where}, not the {party}")
        elif party == "seller" and (platform := written_only_after_a_platform(src.text, src.lines, spans)) is not None:
            check.verified = False
            check.penalise(
                FOREIGN_LABEL_FACTOR,
                f"'{short(value)}' stands in the source only after '{short(platform, 30)}': the software, marketplace "
                "or payment service the document came through, not the seller",
            )
    return check


_ADDRESS_TOKEN = re.compile(r"\S*(?:@|://|www\.)\S*", re.IGNORECASE)


def _in_a_mail_or_web_address(text: str, start: int, end: int) -> bool:
    """Whether `start:end` lies inside an e-mail or web address ("deniz.kaya@...")."""
    left = max(text.rfind(" ", 0, start), text.rfind("\n", 0, start), text.rfind("\t", 0, start)) + 1
    token = _ADDRESS_TOKEN.match(text, left)
    return token is not None and token.end() >= end


# Where a wrapped cell's first part may end: blanks to its line's end, or a column's gap.
_CELL_ENDS = re.compile(r"[ \t]*(?:\n|\Z)|[ \t]{2,}")
_MAX_WRAPPED_WORDS = 40
_MAX_WRAPPED_PARTS = 120
# Where a wrapped text may break: between its words, and between any two characters of a
# script written with no spaces ("whole flat 全屋重" over "新佈線")
_UNSPACED_CHAR = re.compile(f"[{UNSPACED_SCRIPTS}]")
_WRAP_POINTS = re.compile(f"[{UNSPACED_SCRIPTS}]|[^\\s{UNSPACED_SCRIPTS}]+")
# A run of characters between blanks: the words of a cell, read one by one.
_TOKEN_IN_CELL = re.compile(r"\S+")


def _wrapped(src: Source, value: str) -> list[tuple[int, int]]:
    """Where a text stands wrapped over its cell's lines, as a converter that keeps the
    layout writes a long description: its first words ending a cell (the row's figures
    after them), the rest the first cell of the next line ("Consulting services for the
    data      10   150.00   1,500.00" over "migration project (phase 2)"), or of the
    lines after, wrapped again. The parts' spans, or none."""
    words = _WRAP_POINTS.findall(value)
    if not 2 <= len(words) <= _MAX_WRAPPED_PARTS or len(value.split()) > _MAX_WRAPPED_WORDS:
        return []
    keys = [alnum_key(word) for word in words]
    # one search for the first word (for one in an unspaced script, for each of its
    # beginnings: its line may break inside it), then the value's words read along its
    # cell: a search per way of cutting the value costs a scan of the text each
    first = value.split()[0]
    beginnings = [first] + [
        first[:n]
        for n in range(len(first) - 1, 0, -1)
        if _UNSPACED_CHAR.match(first, n - 1) and _UNSPACED_CHAR.match(first, n)
    ]
    for start in sorted({start for beginning in beginnings for start, _ in src.norm.find(beginning)}):
        line_end = src.lines.bounds(src.lines.line_of(start))[1]
        k, end = 0, start
        for token in _TOKEN_IN_CELL.finditer(src.text, start, line_end):
            if k == len(keys):
                break
            written, joined, j = alnum_key(token.group()), keys[k], k + 1
            while (
                len(joined) < len(written)
                and j < len(words)
                and _UNSPACED_CHAR.fullmatch(words[j - 1])
                and _UNSPACED_CHAR.fullmatch(words[j])
            ):
                joined, j = joined + keys[j], j + 1  # one token, several characters of an unspaced script
            if joined != written:
                break
            k, end = j, token.end()
            if _CELL_ENDS.match(src.text, end):
                break
        if 0 < k < len(words) and _CELL_ENDS.match(src.text, end):
            line = src.lines.line_of(end)
            line_start, line_end = src.lines.bounds(line)
            alone = not _has_figure(src.text, line_start, start) and not _has_figure(src.text, end, line_end)
            rest = _continued(src, words[k:], line, start - line_start, row_pending=alone)
            if rest:
                return [(start, end), *rest]
    return []


def _has_figure(text: str, start: int, end: int) -> bool:
    return any(c.isdigit() for c in text[start:end])


def _continued(
    src: Source, words: list[str], line: int, column: int, *, row_pending: bool = False, aligned_only: bool = False
) -> list[tuple[int, int]]:
    """The spans of `words` as the cells of the lines after `line`, one cell a line, each
    the whole of its cell: the cell that starts in the first part's `column` (a block
    beside another, as a converter that keeps the layout writes "Ship To:" over an
    address in the right column and the vendor's in the left), unless its line reads as
    a table's row (a price, or figures alone in their cells) or it starts the next
    block's label beside another ("Vendor: ..."); or the first cell with no figure beside
    it (a description wrapped in its table row); none where they are not.

    `row_pending`: the parts so far stand alone on their lines, with no figure, as the top
    of a table row whose other cells are centred on its height (a browser's print): the
    row's figures come on a later line, beside the next part ("General" over "01
    Conditions  148,000.00"), or on a line of their own between two parts (which is then
    passed over, the rest starting in the same column)."""
    if line + 1 >= len(src.lines.starts):
        return []
    cells = src.lines.cells(line + 1)
    if not cells:
        return []  # a blank line
    line_start = src.lines.starts[line + 1]
    beside: list[tuple[int, int]] = []
    aligned = src.lines.cell_in_column(line + 1, column)
    if row_pending and _figures_alone(src, line + 1, column):
        # the row's figures centred between its description's lines
        return _continued(src, words, line + 1, column, aligned_only=True)
    if (
        aligned_only
        and _figures_alone(src, line + 2, column)
        and _a_rows_figures_under_it(src, line + 2, column)
        and not _labelled_line(src, line + 2)
    ):
        # the next row's first line over its own figures ("Travel expenses" over "1  250.00"),
        # not over the table's sums ("Razem:  4 206,00  X  967,38  5 173,38")
        return []
    if aligned is not None:
        start, end = aligned
        beside = [cell for cell in cells if cell != aligned]
        rows_figures = any(_PRICE_IN_CELL.search(src.text, s, e) for s, e in beside) or _a_rows_figures(src, cells)
        # a year alone on the last line ("services - backend, April" over "2026") ends the text
        ends_it = not beside and alnum_key(src.text[start:end]) == alnum_key(" ".join(words))
        if rows_figures and not row_pending and not ends_it:
            return []  # a table's next row, with its prices or counts
        if beside and _LABELLED_CELL.match(src.text, start, end):
            return []  # the next block's label ("Vendor: ..."), not this block's line
        row_pending = row_pending and not rows_figures
    elif aligned_only or any(c.isdigit() for s, e in cells[1:] for c in src.text[s:e]):
        return []  # a row of its own with its figures
    else:
        start, end = cells[0]
    written = alnum_key(src.text[start:end])
    for k in range(len(words), 0, -1):
        if alnum_key(" ".join(words[:k])) != written:
            continue
        if k == len(words):
            return [(start, end)]
        rest = _continued(src, words[k:], line + 1, start - line_start, row_pending=row_pending)
        return [(start, end), *rest] if rest else []
    return []


def _labelled_line(src: Source, line: int) -> bool:
    """Whether a line holds a label of the sums ("Razem:", "Total")."""
    start, end = src.lines.bounds(line)
    starts = src.assignment.label_starts
    return bisect_left(starts, end) > bisect_left(starts, start)


def _figures_alone(src: Source, line: int, column: int) -> bool:
    """Whether a line holds a row's figures, a price among them, and no text in a
    description's `column` (a figure may stand there: a quantity)."""
    if line >= len(src.lines.starts):
        return False
    aligned = src.lines.cell_in_column(line, column)
    if aligned is not None and _MONEY_CELL.fullmatch(src.text, *aligned) is None:
        return False
    return any(_PRICE_IN_CELL.search(src.text, s, e) for s, e in src.lines.cells(line))


def _a_rows_figures_under_it(src: Source, line: int, column: int) -> bool:
    """Whether `line` holds a row's figures read as a table's (`_a_rows_figures`), or a
    price with its sign in a description's `column`, as a list printed name over price
    gives each item's ("Oat milk 1L" over "€3.20")."""
    if _a_rows_figures(src, src.lines.cells(line)):
        return True
    cell = src.lines.cell_in_column(line, column)
    return cell is not None and _MONEY_CELL.fullmatch(src.text, *cell) is not None


# A price in a cell: a figure with cents ("1,500.00", "12,50 €"), not a date ("18.03.2026");
# a cell that is a figure alone ("500", "1,450", "1'450", "290,000", a row's "3."): a row's
# count or amount; a length in feet ("8'", a wrapped description's end) is none
_PRICE_IN_CELL = re.compile(r"[0-9][.,][0-9]{2}(?![0-9]|[.,/][0-9])")
_FIGURE_CELL = re.compile(r"[0-9](?:[0-9.,' ]*[0-9.,])?")
# A figure in a cell with its currency's sign or code ("1.800,00 €", "₹ 45,000.00", "USD 12.50")
_MONEY_CELL = re.compile(r"(?:(?:[^\w\s]{1,3}|[A-Z]{3}) ?)?[0-9][0-9.,' ]*(?: ?(?:[^\w\s]{1,3}|[A-Z]{3}))?")
# A cell that starts with a label and its colon ("Vendor: Acme", "Service: Next Day"), not
# an address's own ("Attn: Receiving", "z. Hd. Einkauf")
_LABELLED_CELL = re.compile(
    r"(?!(?i:attn|attention|z\. ?hd|zu händen|c/o|care of|à l'attention))"
    r"[^\W\d_][^\W\d_ .'/-]*(?:[ .'/-][^\W\d_]+){0,3}[ \t]*:"
)


def _a_rows_figures(src: Source, cells: list[tuple[int, int]]) -> bool:
    """Whether a line's cells read as a table's row: a figure alone starting the line (its
    row number) or right after another figure ("200   1,450"); a label's figure ("Kunden-Nr.
    200711", "Datum  18.03.2026" beside an address block) is none."""
    figures = [_FIGURE_CELL.fullmatch(src.text, s, e) is not None for s, e in cells]
    return any(figure and (k == 0 or figures[k - 1]) for k, figure in enumerate(figures))


def check_identifier(src: Source, leaf: Leaf) -> FieldCheck:
    check = FieldCheck(leaf.path)
    value = str(leaf.value)
    # the source's digits are read as ASCII ones (Source), so are the value's
    found = formats.find_identifier_spans(src.text, value.translate(ASCII_FORMS)) or _series_and_number(src, value)
    if not found and leaf.field.validator == "vat" and value[:2].isalpha() and len(value) > 6:
        # a domestic document prints its VAT id without the country's prefix ("NIP: 551-23-44-987"),
        # under a tax id's label ("Ihr Zeichen: 811907980" is no VAT id)
        found = [
            (s, e)
            for s, e in formats.find_identifier_spans(src.text, value[2:].translate(ASCII_FORMS))
            if _under_a_tax_id_label(src, s, e)
        ]
    _grounded(check, src, found, f"'{short(value)}' not found in the source")
    _pattern(check, leaf, value)
    validator = leaf.field.validator
    if validator is not None and not _VALIDATORS[validator](value):
        check.penalise(INVALID_FORMAT_FACTOR, f"'{short(value)}' is not a valid {_VALIDATOR_NAMES[validator]}")
    return check


def _under_a_tax_id_label(src: Source, start: int, end: int) -> bool:
    index = src.value_labels
    label = None if index is None else index.label_of(start, end)
    return label is not None and normalise_phrase(src.text[label.start : label.end]) in _TAX_ID_LABELS


_TAX_ID_LABELS = frozenset(VALUE_LABEL_SETS["tax_id"])


def _series_and_number(src: Source, value: str) -> list[tuple[int, int]]:
    """Where the identifier stands as a series and a number, each after its own word
    ("Serie: A  Folio: 1542", "Seria EPL nr. 0004521"): its letters and digits are the
    series' then the number's."""
    chars = [c for c in value.translate(ASCII_FORMS).casefold() if c.isalnum()]
    found: list[tuple[int, int]] = []
    for m in src.lexicon.series_number_re.finditer(src.text):
        if chars == [c for c in (m.group("series") + m.group("number")).casefold() if c.isalnum()]:
            found += [m.span("series"), m.span("number")]
    return found


_VALIDATORS: dict[str, Callable[[str], bool]] = {
    "iban": formats.iban_valid,
    "luhn": formats.luhn_valid,
    "vat": formats.vat_valid,
}
_VALIDATOR_NAMES = {
    "iban": "IBAN (its mod-97 check fails)",
    "luhn": "number (its Luhn check digit fails)",
    "vat": "VAT number",
}


def _pattern(check: FieldCheck, leaf: Leaf, value: str) -> None:
    pattern = leaf.field.pattern
    if pattern is not None and pattern.fullmatch(value) is None:
        check.penalise(INVALID_FORMAT_FACTOR, f"'{short(value)}' does not match the pattern {pattern.pattern}")


def _written_and_well_formed(
    src: Source, leaf: Leaf, find: Callable[[str, str], list[tuple[int, int]]], valid: Callable[[str], bool], what: str
) -> FieldCheck:
    check = FieldCheck(leaf.path)
    value = str(leaf.value)
    _grounded(check, src, find(src.text, value), f"'{short(value)}' not found in the source")
    if not valid(value):
        check.penalise(INVALID_FORMAT_FACTOR, f"'{short(value)}' is not {what}")
    return check


def check_email(src: Source, leaf: Leaf) -> FieldCheck:
    return _written_and_well_formed(src, leaf, formats.find_email_spans, formats.email_valid, "an e-mail address")


def check_phone(src: Source, leaf: Leaf) -> FieldCheck:
    check = FieldCheck(leaf.path)
    value = str(leaf.value)
    if formats.phone_digits(value) is None:
        check.penalise(INVALID_FORMAT_FACTOR, f"'{short(value)}' is not a phone number")
        return check
    return _grounded(
        check, src, formats.find_phone_spans(src.text, value), f"phone {short(value)} not found in the source"
    )


def check_url(src: Source, leaf: Leaf) -> FieldCheck:
    return _written_and_well_formed(src, leaf, formats.find_url_spans, formats.url_valid, "a URL")


# --- numbers ----------------------------------------------------------------------
_THOUSANDS_RE = re.compile(r"[0-9]{1,3}[ ,.'\u2019\u00a0\u202f][0-9]{3}")
_ZERO_RATE_RE = re.compile(r"(?<![0-9.,])0(?:[.,]0{1,3})?[ \t]*%")


def _zero_rate_labelled(src: Source, role: str) -> bool:
    """Whether a label of this role has a rate of 0 % after it on its line ("Tax: 0.00%",
    "IVA 0 %"): a zero amount of a rate, which the document need not print as a figure."""
    for label in src.labels:
        if label.role != role:
            continue
        _, line_end = src.lines.bounds(src.lines.line_of(label.start))
        rate = _ZERO_RATE_RE.search(src.text, label.end, line_end)
        if rate is not None and not any(c.isdigit() for c in src.text[label.end : rate.start()]):
            return True
    return False


# A word naming a net's category between its label and its figure
_CATEGORY_WORD = re.compile(r"[^\W\d_]{2,}")


def _distinct_tax_parts(src: Source, role: str) -> list[int]:
    """The money figures that labels of the tax's role (or the goods' sum's) name on their
    own lines (no rate's base, no page's part), when no two share their label and rate
    (the rate after the label, or before it on its line; a net's category words where it
    has no rate): the parts of a tax or a net printed per kind or per rate. Empty when two
    figures share a label and rate (the same sum restated, whose sum is none of the
    document's)."""
    parts: list[int] = []
    seen: list[tuple[str, str, Decimal | None]] = []  # each part's label, rate and worth
    for i, amount in enumerate(src.amounts):
        own = src.assignment.role_label[i]
        if src.roles[i] != role or own < 0:
            continue
        context = src.context(i)
        if context.rate_base or context.partial:
            continue
        label = src.assignment.labels[own]
        rate = RATE_RE.search(src.text, label.end, amount.start) or PERCENT_FIRST_RATE_RE.search(
            src.text, label.end, amount.start
        )
        if rate is None:  # its rate before its label on the line ("(8%対象 ¥278 内消費税 ¥20)")
            line_start = src.lines.bounds(src.lines.line_of(label.start))[0]
            rate = next(reversed([*RATE_RE.finditer(src.text, line_start, label.start)]), None)
        if rate is None:  # or alone on the line above, with the base it applies to ("（10%対象 ¥663）")
            rate = _rate_of_the_base_above(src, label, abs(amount.value))
        # a whole number is a tax per rate's where no figure has cents ("B 18% ÁFA 145", in
        # forints), not a count under a tax's words ("ÁFA tételek száma 2")
        if not (_money(src, i) or (rate is not None and not src.writes_cents)):
            continue
        if rate is None and role == src.lexicon.goods_role:
            # a net per category, named by its words ("Subtotal gravado tasa mínima")
            category = " ".join(_CATEGORY_WORD.findall(src.text, label.end, amount.start))
            kind = (normalise_phrase(src.text[label.start : label.end]), normalise_phrase(category))
        else:
            kind = (
                normalise_phrase(src.text[label.start : label.end]),
                rate.group(1).replace(",", ".") if rate else "",
            )
        cents = to_cents(abs(amount.value))
        if any(
            (label_as, rate_as) == kind
            # the same figure under the same label, its rate written once ("19% MwSt 0,95", "MwSt 0,95")
            or (label_as == kind[0] and worth == cents and "" in (rate_as, kind[1]))
            for label_as, rate_as, worth in seen
        ):
            return []
        seen.append((*kind, cents))
        parts.append(i)
    rates = [rate for _, rate, _ in seen]
    if (
        len(parts) > 2
        and rates[-1] == ""
        and all(rates[:-1])
        and sum(worth or 0 for _, _, worth in seen[:-1]) == seen[-1][2]
    ):
        # the last, with no rate, is the others' sum ("VAT 0% 0.00", "VAT 20% 1.00", "TOTAL
        # VAT 1.00"): their total printed, no part of its own
        parts.pop()
    return parts


def _rate_of_the_base_above(src: Source, label: Label, tax: Decimal) -> re.Match[str] | None:
    """The one rate on the line right above a tax's label, where that line holds no label
    of the tax and a figure the tax is that rate of, the tax on it or in it: the base that
    tax is of ("（10%対象 ¥663）" over "（内消費税等 ¥60）"; not "Svc Chrg 10%  S$1.07" over
    "GST  S$1.06", a charge at its own rate)."""
    line = src.lines.line_of(label.start)
    if line == 0:
        return None
    start, end = src.lines.bounds(line - 1)
    rates = [*RATE_RE.finditer(src.text, start, end)]
    if len(rates) != 1 or any(start <= other.start < end and other.role == label.role for other in src.labels):
        return None
    rate = parse_amount(rates[0].group(1))
    if rate is None or not rate:
        return None
    near = max(_BASE_TAX_CLOSE, tax * _BASE_TAX_SHARE)  # a till rounds the tax down to the unit
    for am in src.amounts:
        if start <= am.start < end and am.start >= rates[0].end():
            base = abs(am.value)
            if min(abs(base * rate / 100 - tax), abs(base * rate / (100 + rate) - tax)) <= near:
                return rates[0]
    return None


_BASE_TAX_CLOSE = Decimal("0.02")
_BASE_TAX_SHARE = Decimal("0.015")


def _money(src: Source, i: int) -> bool:
    """Whether figure i is written as money (with cents, or beside its currency: "800円"),
    not a count or a rate."""
    return CENTS_RE.search(src.amounts[i].raw) is not None or bool(src.context(i).currencies)


def _printed_parts(src: Source, role: str, cents: Decimal | None) -> tuple[list[int], str] | None:
    """The figures a value not printed itself is the sum of, and where they stand: the tax's
    parts, each under its own label ("CGST 9% 900.00 / SGST 9% 900.00", "GST 25.00 / PST
    35.00"), or a column under a header of the role ("MwSt" over each line's or each rate's
    tax); the net's parts per rate or category, each under a label of the goods' sum
    ("Subtotal gravado tasa mínima 10.140,00 / ... tasa básica 27.700,00"). None when no
    such figures add up to it to the cent, and for the total: a total left unprinted is no
    sum a reviewer could trust unseen (the lines' amounts add up to the net, which a record
    missing its tax would give as the total)."""
    if cents is None or role not in (src.lexicon.tax_sum_role, src.lexicon.goods_role):
        return None
    tax_parts = _distinct_tax_parts(src, role)
    if len(tax_parts) > 1 and sum((src.amounts[i].value for i in tax_parts), Decimal(0)) == cents:
        return tax_parts, "labelled " + role
    if role != src.lexicon.tax_sum_role:
        return None
    assignment = src.assignment
    for k, column in assignment.columns.items():
        figures = [i for i in column if _money(src, i)]
        if (
            assignment.labels[k].role == role
            and len(figures) > 1
            and sum((src.amounts[i].value for i in figures), Decimal(0)) == cents
        ):
            header = assignment.labels[k]
            return figures, f"in the column under '{src.text[header.start : header.end]}'"
    return None


def check_amount(src: Source, leaf: Leaf) -> FieldCheck:
    """Money: found to the cent in any written form, and, for a labelled field, found
    where the document's labels give it this field's role."""
    check = FieldCheck(leaf.path)
    value = leaf.value
    d = as_decimal(value)
    check.number = d
    if d is None:
        check.penalise(UNGROUNDED_FACTOR, f"{as_given(value)} is not a finite number")
        return check
    cents = to_cents(d)
    hits = src.amounts_of(cents) if cents is not None else []
    unlabelled = not leaf.field.labels or leaf.path not in src.lexicon.role_of_label.values()
    if not hits and (unlabelled or cents != d):
        # A price with sub-cent digits ("1.879 /l") or one written where no amount is
        # looked for ("2 @13.50"): the number as written is all there is to find.
        return _grounded(check, src, src.numbers_of(d), f"{as_given(value)} not found in the source")
    if not hits:
        # Only a figure written with its groups or cents counts here, and no rate.
        found = [
            (s, e)
            for s, e in src.numbers_of(d)
            if any(c in src.text[s:e] for c in " .,'") and not src.text[e : e + 2].lstrip().startswith("%")
        ]
        if not found and d == 0 and not unlabelled and _zero_rate_labelled(src, leaf.path):
            check.verified = True  # "Tax: 0.00%": a zero tax, printed as its rate
            return check
        printed_parts = _printed_parts(src, leaf.path, cents) if not found and not unlabelled else None
        if printed_parts is not None:
            summed, where = printed_parts
            check.spans = spans_in(src.text, [(src.amounts[i].start, src.amounts[i].end) for i in summed])
            check.penalise(
                NO_ROLE_LABEL_FACTOR,
                f"{as_given(value)} is not printed; it is the sum of the figures {where} "
                f"({', '.join(src.amounts[i].raw for i in summed[:4])}{', …' if len(summed) > 4 else ''})",
            )
            return check
        if not found:
            check.penalise(UNGROUNDED_FACTOR, f"{as_given(value)} not found in the source")
            return check
        # Written in a form no amount is read in ("123 949.75"): there, but under no label.
        check.spans = spans_in(src.text, found)
        check.penalise(
            NO_ROLE_LABEL_FACTOR, f"{as_given(value)} appears in the source only as a bare number, under no label"
        )
        check.unlabelled = True
        return check
    role = leaf.path
    labelled = [i for i in hits if src.roles[i] == role]
    others = [i for i in hits if src.roles[i] != role]
    check.spans = spans_in(src.text, [(src.amounts[i].start, src.amounts[i].end) for i in labelled + others])
    if unlabelled:
        check.verified = True  # nothing says which number is this field's: being there is all
        return check
    if labelled:
        check.verified = True
        return check
    shown = src.amounts[hits[0]].raw
    name = leaf.field.name
    charges = [src.charge_label(i) for i in others] if leaf.path == src.lexicon.tax_sum_role else []
    if charges and all(charges):
        # wherever it stands, a charge's phrase labels it ("Delivery 200.00"): a reader takes
        # it for that charge, never for the tax (a net or a total may be a fee's alone:
        # "Consulting fee 1,000.00" billed by itself)
        check.penalise(
            ROLE_MISMATCH_FACTOR, f"{shown} appears in the source only as a charge ('{charges[0]}'), not as a {name}"
        )
        return check
    # a net figure of one tax rate, or a part's figure (a page's, an instalment's), is no
    # rival for the document's
    role_figures = [
        i
        for i in range(len(src.amounts))
        if src.roles[i] == role and not src.context(i).rate_base and not src.context(i).partial
    ]
    if any(CENTS_RE.search(src.amounts[i].raw) for i in hits):
        # a figure in cents is no rival for a count or a rate under the label ("MwSt-% 19,0"),
        # but one in whole units beside its own label is money when its thousands are set
        # apart ("Montant dû  7 600 €") or its currency is written with it ("ogółem: 2051 PLN")
        role_figures = [
            i
            for i in role_figures
            if CENTS_RE.search(src.amounts[i].raw)
            or (
                src.assignment.role_label[i] >= 0
                and (_THOUSANDS_RE.fullmatch(src.amounts[i].raw) or src.context(i).currencies)
            )
        ]
    role_numbers = [src.amounts[i].raw for i in role_figures]
    listed = ", ".join(dict.fromkeys(role_numbers[:3]))
    parts = sorted({abs(src.amounts[i].value) for i in role_figures})
    if role == src.lexicon.tax_sum_role:
        by_kind = [abs(src.amounts[i].value) for i in _distinct_tax_parts(src, role)]
        if len(by_kind) > len(parts):
            parts = by_kind  # equal parts, each under its own label ("CGST 9% 1,530.00 / SGST 9% 1,530.00")
    if len(parts) >= 2 and sum(parts) <= abs(d) + CENT:
        # several figures under the label that together make no more than the value: its
        # parts (each line's net, each rate's base or tax), no rival for the document's
        check.penalise(
            NO_ROLE_LABEL_FACTOR,
            f"{shown} appears in the source under no {name} label; the amounts labelled {name} "
            f"({listed}) add up to less: parts of it, not the document's {name}",
        )
        check.unlabelled = True
    elif role_numbers:
        check.penalise(
            ROLE_MISMATCH_FACTOR,
            f"{shown} appears in the source but not as a labelled {name} (labelled {name}: {listed})",
        )
    else:
        check.penalise(
            NO_ROLE_LABEL_FACTOR, f"{shown} appears in the source, but the source labels no amount as {name}"
        )
        check.unlabelled = True
    return check


def check_number(src: Source, leaf: Leaf) -> FieldCheck:
    """A count or measure: the same number written in the source, with one of the
    field's units where it declares some."""
    check = FieldCheck(leaf.path)
    d = as_decimal(leaf.value)
    check.number = d
    if d is None:
        check.penalise(UNGROUNDED_FACTOR, f"{as_given(leaf.value)} is not a finite number")
        return check
    found = src.numbers_of(d)
    _grounded(check, src, found, f"{as_given(leaf.value)} not found in the source")
    units = leaf.field.units
    if found and units and not any(_unit_beside(src.text, s, e, units) for s, e in found):
        other = _other_measure(src, found, units) if EACH not in leaf.field.path else None
        if other is not None:
            # "412 kg" given as the package count, "24 cartons" as the weight
            check.verified = False
            check.penalise(
                FOREIGN_LABEL_FACTOR,
                f"{as_given(leaf.value)} is written only as {other}, not with a unit of {leaf.field.name}",
            )
        else:
            check.penalise(
                NO_UNIT_FACTOR, f"{as_given(leaf.value)} is never written with a unit ({', '.join(units[:5])})"
            )
    return check


def _other_measure(src: Source, found: list[tuple[int, int]], units: tuple[str, ...]) -> str | None:
    """The number with another measure's unit, as written, where every place it stands
    has one beside it; None where one has none, or the field's units name no measure."""
    # (Outside lists only: an item's own quantity may be in any unit its row prints.)
    measure_of = src.lexicon.measure_of_unit
    own = {measure_of[u] for u in (unit.casefold() for unit in units) if u in measure_of}
    if not own:
        return None
    mine = tuple(unit for unit, measure in measure_of.items() if measure in own)
    others = tuple(unit for unit, measure in measure_of.items() if measure not in own)
    if any(_unit_beside(src.text, s, e, mine) for s, e in found):
        return None  # "PCS 3   KGS 86": a count's unit before it, a weight's after
    if not all(_unit_beside(src.text, s, e, others) for s, e in found):
        return None
    s, e = found[0]
    unit = next(u for u in others if _unit_beside(src.text, s, e, (u,)))
    return f"{src.text[s:e]} {unit}"


def _unit_beside(text: str, start: int, end: int, units: tuple[str, ...]) -> bool:
    after = text[end : end + 24].lstrip(" \t\u00a0").casefold()
    before = text[max(0, start - 24) : start].rstrip(" \t\u00a0").casefold()
    for unit in units:
        if after.startswith(unit) and not after[len(unit) : len(unit) + 1].isalpha():
            return True
        if before.endswith(unit) and not before[-len(unit) - 1 : -len(unit)].isalpha():
            return True
    return False


# --- dates, currencies, closed sets -----------------------------------------------------
def check_date(src: Source, leaf: Leaf) -> FieldCheck:
    check = FieldCheck(leaf.path)
    value = leaf.value
    if isinstance(value, datetime):
        value = value.date()
    if isinstance(value, str):
        if not is_real_iso_date(value.strip()):
            check.penalise(INVALID_DATE_FACTOR, f"'{short(value)}' is not a real date (YYYY-MM-DD)")
            return check
        value = date.fromisoformat(value.strip())
    if not isinstance(value, date):
        check.penalise(INVALID_DATE_FACTOR, f"{short(value)!r} is not a date")
        return check
    mentions = [m for m in src.date_mentions if value in m.dates]
    found = [(m.start, m.end) for m in mentions] or compact_date_spans(src.text, value)
    _grounded(check, src, found, f"date {value.isoformat()} not found in the source in any written form")
    if not mentions or any(len(m.dates) != 2 for m in mentions):
        return check  # written so that it means this date only
    written = src.text[mentions[0].start : mentions[0].end]
    others = {d for m in mentions for d in m.dates} - {value}
    # the other reading written where it means one date ("Date of issue 03/05/2025" and
    # "Period: Mar 5, 2025 – Apr 4, 2025"): the document repeats its date; not where a
    # deadline's label names it (invoiced 03/04/2026, due "April 3, 2026": thirty days on)
    repeated = next(
        (m for m in src.date_mentions if len(m.dates) == 1 and m.dates <= others and not _a_deadline(src, m)), None
    )
    day_first = [m.day_first for m in mentions if m.day_first is not None]
    if repeated is not None:
        (other,) = repeated.dates
        check.penalise(
            OTHER_ORDER_FACTOR,
            f"'{written}' is written elsewhere as '{src.text[repeated.start : repeated.end]}' ({other.isoformat()});"
            f" {value.isoformat()} is its other reading",
        )
    elif day_first and value not in day_first and (why := src.day_first_convention):
        check.penalise(
            OTHER_ORDER_FACTOR,
            f"'{written}' reads {min(day_first).isoformat()} day first, as this document writes dates ({why});"
            f" {value.isoformat()} is its month-first reading",
        )
    elif day_first and value in day_first and (why := src.month_first_convention):
        check.penalise(
            OTHER_ORDER_FACTOR,
            f"'{written}' reads {min(others).isoformat()} month first, as this document writes dates ({why});"
            f" {value.isoformat()} is its day-first reading",
        )
    return check


# the labels of a deadline: a due date's, a validity's
_DEADLINE_LABELS = frozenset(VALUE_LABEL_SETS["due_date"]) | frozenset(VALUE_LABEL_SETS["valid_until"])


def _a_deadline(src: Source, mention: DateMention) -> bool:
    """Whether a deadline's label names the date at `mention`, whatever field the schema
    gives its labels to."""
    index = src.value_labels
    label = None if index is None else index.label_of(mention.start, mention.end)
    return label is not None and normalise_phrase(src.text[label.start : label.end]) in _DEADLINE_LABELS


def check_time(src: Source, leaf: Leaf) -> FieldCheck:
    """A time of day: its hour and minute printed in any form a time is ("17:31" is
    "05:31 PM", "17h31" or "17.31 Uhr"), never a 12-hour print without its PM for 17:31."""
    check = FieldCheck(leaf.path)
    parsed = parse_time_value(leaf.value)
    if parsed is None:
        check.penalise(INVALID_FORMAT_FACTOR, f"{as_given(leaf.value)} is not a time of day (HH:MM, 24-hour)")
        return check
    found = [(p.start, p.end) for p in src.printed_times if same_time(p, parsed)]
    return _grounded(check, src, found, f"time {clock_value(parsed)} not found in the source in any written form")


def check_currency(src: Source, leaf: Leaf) -> FieldCheck:
    check = FieldCheck(leaf.path)
    code = str(leaf.value).strip().upper()
    hits = src.currency_hits
    strong = [h for h in hits if h.strong and code in h.codes]
    if strong:
        check.spans, check.verified = spans_in(src.text, [(h.start, h.end) for h in strong]), True
        return check
    ambiguous = [h for h in hits if not h.strong and code in h.codes]
    if ambiguous:
        sym = src.text[ambiguous[0].start : ambiguous[0].end]
        named = sorted({c for h in ambiguous for c in _code_of_symbol(src, h)})[:2]
        if named:
            check.penalise(
                UNGROUNDED_FACTOR, f"the source names {', '.join(named)}, which its '{sym}' is, not {short(code, 10)}"
            )
            return check
        check.spans = spans_in(src.text, [(h.start, h.end) for h in ambiguous])
        check.penalise(
            AMBIGUOUS_CURRENCY_FACTOR,
            f"only the ambiguous symbol '{sym}' supports {short(code, 10)} (no ISO code or unambiguous symbol)",
        )
        return check
    others = list(dict.fromkeys(c for h in hits if h.strong for c in h.codes))[:4]
    tell = src.country_tell
    if others:
        check.penalise(UNGROUNDED_FACTOR, f"the source names {', '.join(others)}, not {short(code, 10)}")
    elif not hits and tell is not None and tell.currency == code:
        # a Korean till's "33,900" with no "원": the won, as only Korea writes Hangul
        check.penalise(
            COUNTRY_CURRENCY_FACTOR,
            f"no currency is written; {code} is the currency of the one country whose documents show {tell.shown}",
        )
    else:
        check.penalise(
            UNGROUNDED_FACTOR, f"currency {short(code, 10)} not found in the source (no code, symbol or name)"
        )
    return check


# A shared symbol's code written with it: in brackets on its line ("Amount Due (CAD):
# $1,497.25"), right before it ("CAD $12.00") or right after its figure ("$1,200.00 HKD").
# A code with a figure of its own ("(approx. CAD 1,350.00)", "USD 1 = $950") or anywhere
# else on the line ("USD cash accepted") is another amount's or a remark's.
_CODE_BEFORE_SYMBOL = re.compile(r"(?<![^\W\d_])([A-Z]{3})[ \t]?$")
_CODE_AFTER_FIGURE = re.compile(r"[ \t]?[0-9][0-9.,' \u00a0]*?[0-9][ \t]?([A-Z]{3})(?![^\W\d_])")
_CODE_IN_BRACKETS = re.compile(r"\(([A-Z]{3})\)")


def _code_of_symbol(src: Source, hit: CurrencyHit) -> set[str]:
    """The codes among a shared symbol's currencies its own print names beside it."""
    line_start = src.lines.bounds(src.lines.line_of(hit.start))[0]
    written = {m.group(1) for m in _CODE_IN_BRACKETS.finditer(src.text, line_start, hit.start)}
    before = _CODE_BEFORE_SYMBOL.search(src.text, max(line_start, hit.start - 4), hit.start)
    after = _CODE_AFTER_FIGURE.match(src.text, hit.end)
    written |= {m.group(1) for m in (before, after) if m is not None}
    return written & hit.codes


def check_enum(src: Source, leaf: Leaf) -> FieldCheck:
    """One of a closed set: grounded by the words the schema lists for the value; where
    another value's words stand on a line with an amount and its own only on lines
    without one, contradicted."""
    check = FieldCheck(leaf.path)
    value = str(leaf.value)
    found = _enum_cues(src, leaf.field.values)
    mine = found.get(value, [])
    # a word on a line with an amount in cents after the total ("CASH 10.00") says more
    # than one on a line without ("We accept NETS & PayNow", "EFTPOS available - min $10");
    # an item's line before the total ("KITKAT CHUNKY BAR 1.20") pays nothing
    total_at = next(
        (am.start for am, role in zip(src.amounts, src.roles, strict=True) if role in src.lexicon.grand_roles), None
    )
    figured = {
        src.lines.line_of(am.start)
        for am in src.amounts
        if total_at is not None and am.start > total_at and CENTS_RE.search(am.raw) and am.value
    }  # ("Pagamento contante 0,00" beside "Pagamento elettronico 13,10": paid by card)
    beside = [other for other, spans in found.items() if any(src.lines.line_of(s) in figured for s, _ in spans)]
    if mine and (value in beside or not beside):
        check.spans, check.verified = spans_in(src.text, mine), True
        return check
    if mine:
        check.penalise(
            CONTRADICTED_FACTOR,
            f"the source pays with the words of {', '.join(beside[:3])}; {short(value, 40)}'s stand only "
            "on lines without an amount",
        )
        return check
    rivals = [other for other in leaf.field.values if other != value and found.get(other)]
    if rivals:
        check.penalise(
            CONTRADICTED_FACTOR, f"the source has the words of {', '.join(rivals[:3])}, none of {short(value, 40)}'s"
        )
    else:
        check.penalise(NO_CUE_FACTOR, f"none of the words for {short(value, 40)} appears in the source")
    return check


# A form's answer of no after a question's words ("Hazmat: NO", "ADR: Nein", "Merci
# pericolose: no", "Dangerous goods - none")
# (not "N° ONU 1263", "No. DGD-0042", "Non-flammable", "N.O.S.": a number's or a word's start)
_NO_WORDS = (
    r"(?:no(?![.°º])|n(?![.°º])|none|nil|not applicable|nein|keine?|non(?!-)|nee|nej|nei|ei|nie|não|nao|ne|false|n/a)"
    r"(?![^\W\d_])"
)
_ANSWERED_NO = re.compile(
    rf"(?i)(?:[ \t]*[:=\-\u2013?][ \t]*|[ \t]{{2,}}){_NO_WORDS}"
    rf"|(?:[ \t]+[^\W\d_]+){{1,2}}(?:[ \t]*[:=?][ \t]*|[ \t]{{2,}}){_NO_WORDS}"
)
# "No" starting its line, cell or clause ("No hazardous materials", not "Pkg No  Hazardous");
# the other words anywhere before ("Die Ware ist kein Gefahrgut")
_NEGATION_BEFORE = re.compile(
    r"(?i)(?:(?:^|[ \t]{2}|\t|[:(,;])[ \t]*no|(?<![^\W\d_])(?:not|non|kein|keine|nicht|sans|sin|senza|geen|ingen|nie))"
    r"[ \t-]*$"
)


_Value = TypeVar("_Value", str, bool)  # an enum's value, or a boolean's


def check_boolean(src: Source, leaf: Leaf) -> FieldCheck:
    """True or false, grounded by the schema's cue words for each (none declared: the
    value cannot be checked here, and the Critic judges it alone)."""
    check = FieldCheck(leaf.path)
    cues = leaf.field.cues
    if not cues:
        return check
    value = bool(leaf.value)
    found = _enum_cues(src, {True: cues.get(True, ()), False: cues.get(False, ())})
    # "Dangerous goods: No", "Hazardous material: none", "No hazardous materials", a true
    # word within a false one's words ("Not dangerous goods"): they say false
    negated = [
        (s, e)
        for s, e in found[True]
        if _ANSWERED_NO.match(src.text, e)
        or _NEGATION_BEFORE.search(_before_on_its_line(src, s))
        or any(fs < e and s < fe for fs, fe in found[False])
    ]
    found = {True: [span for span in found[True] if span not in negated], False: found[False] + negated}
    mine = found[value]
    if mine:
        check.spans, check.verified = spans_in(src.text, mine), True
        return check
    if found[not value]:
        check.penalise(
            CONTRADICTED_FACTOR, f"the source has words for {str(not value).lower()}, none for {str(value).lower()}"
        )
    else:
        check.penalise(NO_CUE_FACTOR, f"none of the words for {str(value).lower()} appears in the source")
    return check


def _enum_cues(src: Source, values: Mapping[_Value, tuple[str, ...]]) -> dict[_Value, list[tuple[int, int]]]:
    """Where each value's words stand, but for a word inside another value's longer words
    ("Cash" in "EC-Cash", a card; "card" in "gift card", a voucher): those say the other."""
    found = {value: _cue_spans(src, words) for value, words in values.items()}
    return {
        value: [
            (s, e)
            for s, e in spans
            if not any(
                os <= s and e <= oe and oe - os > e - s
                for other, others in found.items()
                if other != value
                for os, oe in others
            )
        ]
        for value, spans in found.items()
    }


def _cue_spans(src: Source, words: tuple[str, ...]) -> list[tuple[int, int]]:
    if not words:
        return []
    return src.phrase_spans(words)


# --- role labels of dates, identifiers and text -------------------------------------------
# A receipt or an order confirmation with no invoice-number label names its own number
# "Order #", and its date the day it was paid or sold: on such a document, and only there,
# the seller's order number is a fair reading of the invoice number, and the payment or
# supply date of the invoice date. A buyer's purchase-order number never is.
_BUYER_ORDER_WORDS = (
    "po",
    "p.o.",
    "purchase",
    "your",
    "customer",
    "pedido cliente",
    "su pedido",
    "bon de commande",
    "n° bon de commande",
)
_GENERIC_DOCUMENT_NUMBERS = frozenset(
    phrase
    for phrase in (*VALUE_LABEL_SETS["invoice_number"], *VALUE_LABEL_SETS["receipt_number"])
    if re.match(r"document|numero documento|numerodocumento|beleg", phrase)
)
_TRACKED_BY = re.compile(r"bill of lading|bol|b/l|pro|lr|cmr")
# The words of the invoice date's labels that say only "issued": any document's date
_ISSUE_WORDS = re.compile(
    r"issue|ausstellung|[ée]mission|emisi[oó]n|emiss[ãa]o|emissione|wystawienia|vystaven|izdavanja|izdaje|documento|"
    r"発行日|발행일|작성일자"
)
_A_TRANSACTION = re.compile(r"seq|op\b|op #|operación|nº operación|n° operación|num\. operación|trx")
_STAND_IN_LABELS = {
    "invoice_number": frozenset(
        phrase for phrase in VALUE_LABEL_SETS["order_number"] if not phrase.startswith(_BUYER_ORDER_WORDS)
    )
    | frozenset(VALUE_LABEL_SETS["quote_number"])
    # a ride's or a stay's booking, where no document's number is printed
    | frozenset(VALUE_LABEL_SETS["booking_number"])
    # an Indian restaurant's kitchen ticket ("KOT No"), where its bill prints no number
    | frozenset(phrase for phrase in VALUE_LABEL_SETS["till_number"] if phrase.startswith("kot "))
    # a tradesman's job or work order, where the invoice prints no number of its own; a
    # till's transaction ("SEQ 4412", "Nº operación"), where the receipt prints none
    | frozenset(VALUE_LABEL_SETS["job_number"])
    | frozenset(phrase for phrase in VALUE_LABEL_SETS["till_number"] if _A_TRANSACTION.match(phrase)),
    # an ERP's "Document No.", "Belegnummer" is a delivery note's or an order's number too
    "delivery_note_number": _GENERIC_DOCUMENT_NUMBERS,
    "order_number": _GENERIC_DOCUMENT_NUMBERS,
    # a receipt's date is the day it was paid ("Date paid: March 1, 2026") or the sale's;
    # a UK invoice's, its tax point; a quote's, its own ("Quote date"); a hotel folio's,
    # the day of departure it is printed at
    "invoice_date": frozenset(VALUE_LABEL_SETS["payment_date"])
    | frozenset(VALUE_LABEL_SETS["supply_date"])
    | frozenset(VALUE_LABEL_SETS["quote_date"])
    | frozenset(VALUE_LABEL_SETS["departure_date"]),
    # an order's date is the day it was issued ("Datum vystavení", "発行日", "Issue date")
    "order_date": frozenset(phrase for phrase in VALUE_LABEL_SETS["invoice_date"] if _ISSUE_WORDS.search(phrase)),
    # a freight carrier's PRO, a bill of lading's or a lorry receipt's number is what its
    # shipment is tracked by where no tracking number is labelled
    "tracking_number": frozenset(
        phrase for phrase in VALUE_LABEL_SETS["freight_document_number"] if _TRACKED_BY.match(phrase)
    ),
}
# A paid invoice's receipt prints its own number beside the invoice's ("Receipt number
# 1923-2093", "Invoice number 2ABC1234-20923"): either is a fair reading of the
# document's number, whatever else the document labels.
_ALSO_ITS_LABELS = {"invoice_number": frozenset(VALUE_LABEL_SETS["receipt_number"])}


def _stands_in(field_labels: tuple[str, ...], written: list[str], *, beside_own: bool) -> bool:
    """Whether every label a value stands under may stand in for a field's own labels:
    the document having none of them, or (`beside_own`) having some."""
    stand_ins = frozenset().union(
        *(
            phrases
            for table in ((_ALSO_ITS_LABELS,) if beside_own else (_STAND_IN_LABELS, _ALSO_ITS_LABELS))
            for name, phrases in table.items()
            if not set(field_labels).isdisjoint(VALUE_LABEL_SETS[name])
        )
    )
    return bool(stand_ins) and all(normalise_phrase(label) in stand_ins for label in written)


def check_label(check: FieldCheck, src: Source, leaf: Leaf) -> FieldCheck:
    """A field that declares labels, whose value the source writes only under the
    labels of other values ("Delivery date", "Customer no."), is most likely one of
    those values: lowered, naming the labels found. A value under its own label is not;
    nor is one under no label at one place at least, unless the field's own label names
    another value outright (`_named_otherwise`)."""
    index = src.value_labels
    if index is None or not check.spans or not leaf.field.labels or EACH in leaf.field.path:
        return check
    role = leaf.field.path
    others: list[str] = []
    wholes: list[str] = []  # the other values it is written only as part of
    unlabelled: list[Span] = []
    spans = check.spans
    if leaf.field.kind == "identifier":
        # digits inside a figure are no writing of a number where it is written elsewhere
        spans = [span for span in spans if _figure_around(src, span) is None] or spans
    for span in spans:
        label = index.label_of(span.start, span.end)
        if label is not None and leaf.field.kind not in _label_kinds(label.role, index.kind_of_role):
            label = None  # "T-Mobile" over a date, "Incoterms: CIF" before a number: no label of it
        elif (
            label is not None
            and _under_a_tax_id_label(src, span.start, span.end)
            and _too_short_for_a_tax_id(src.text[span.start : span.end])
        ):
            label = None  # "Trn 5512": a till's transaction, no tax registration's (UAE "TRN")
        if label is None:
            whole = _part_of_another(src, leaf, span)
            if whole is not None:
                wholes.append(whole)
            else:
                unlabelled.append(span)
            continue
        for joined in index.joined(label):
            if joined.role == role:
                return check
            written = src.text[joined.start : joined.end]
            if any(normalise_phrase(written).startswith(own + " ") for own in leaf.field.labels):
                return check  # "Invoice number" to a field labelled "Invoice": a longer form of its own
        if not index.sharing_its_tail(label).isdisjoint(leaf.field.labels):
            return check  # "Rechnungs-/Lieferdatum": its own label too, written in short
        others.append(src.text[label.start : label.end])
    if unlabelled:
        # under no label at one place: unless its own label names another value (a
        # receipt's number is a fair reading of the document's whatever else is labelled)
        if others and _stands_in(leaf.field.labels, others, beside_own=True):
            return check
        return _named_otherwise(check, src, leaf, unlabelled)
    # a title ("RECEIPT", "LIEFERSCHEIN") or a word in a sentence names nothing
    own_written = [
        src.text[lb.start : lb.end]
        for lb in index.labels
        if lb.role == role and index.names_a_value(lb) and not _names_a_count(src, lb)
    ]
    if not own_written and _a_documents_number(leaf):
        # "INVOICE 10461": its title names its number, so a quote's or an order's stands in
        # for none; nor where a fiscal series and its number name it ("Seria CSS nr. 0457")
        own_written = [src.text[s:e] for s, e in _title_numbers(src)][:1] or _fiscal_series(src)[:1]
    if others and _stands_in(leaf.field.labels, others, beside_own=bool(own_written)):
        return check  # under a label that may stand in for its own at one place at least
    listed = ", ".join(
        [f"'{short(label, 40)}'" for label in dict.fromkeys(others[:3])] + list(dict.fromkeys(wholes))[:2]
    )
    where = f"; its own label '{short(own_written[0], 40)}' stands elsewhere" if own_written else ""
    check.verified = False
    check.penalise(
        FOREIGN_LABEL_FACTOR,
        f"{as_given(leaf.value)} stands in the source only under {listed}, "
        f"not under a label of {leaf.field.name}{where}",
    )
    return check


# Between the two dates of a period written as one ("1. September 2020 – 2. Oktober 2020",
# "06.10.2026 bis 21.10.2026", "du 27/09/2023 au 28/09/2023", "2022-02-01 to 2022-02-28").
_PERIOD_JOIN = re.compile(
    r"[ \t]?(?:[-\u2010-\u2015~\u301c\uff5e]|(?i:bis|to|through|thru|till|until|au|al|a|à|até|ate|do|tot|t/m|tm))[ \t]?"
)


_TAX_ID_DIGITS = 6  # the shortest tax registrations run to eight or nine digits


def _too_short_for_a_tax_id(written: str) -> bool:
    return sum(c.isdigit() for c in written) < _TAX_ID_DIGITS


def _names_a_count(src: Source, label: Label) -> bool:
    """Whether what a label names is a count or a page's number, no document's ("RECEIPT
    1/2", "Check 2", "Bon 1/1"): it says nothing of the document's own number."""
    gap = _BARE_GAP_RE.match(src.text, label.end)
    written = _WRITTEN_RE.match(src.text, gap.end() if gap is not None else label.end)
    if written is None:
        return False
    return _NO_DOCUMENT_NUMBER.fullmatch(written.group().rstrip(".,")) is not None


def _label_kinds(role: str, kind_of_role: Mapping[str, str]) -> frozenset[str]:
    """The kinds of value a label names: a standard set's by its name ("@due_date": a
    date, "@tax_id": an identifier, "@fax_number": an identifier or a phone number), a
    field's (its role is its path) its field's kind."""
    if not role.startswith("@"):
        kind = kind_of_role.get(role)
        return _ANY_KIND if kind is None else frozenset({kind})
    if role.endswith(DATE_SET_ENDINGS):
        return _DATE_KIND
    return _PHONE_KINDS if role in ("@phone_number", "@fax_number") else _IDENTIFIER_KIND


_ANY_KIND = frozenset(LABELLED_VALUE_KINDS)
_DATE_KIND, _IDENTIFIER_KIND = frozenset({"date"}), frozenset({"identifier"})
_PHONE_KINDS = frozenset({"identifier", "phone"})


# A long number printed in groups of digits, one blank between them: an access key, an
# account, a card or a barcode's line ("3520 0159 5943 1500 0157", "DE18 9289 0020 9201").
_DIGIT_GROUP = r"(?:[A-Z]{2}[0-9]{2}|[0-9]{3,6})"
_GROUPED_NUMBER = re.compile(rf"(?<![^\s])(?:{_DIGIT_GROUP} ){{3,}}{_DIGIT_GROUP}(?![^\s])")


def _grouped_number_around(src: Source, span: Span) -> str | None:
    """The number of four or more digit groups an identifier at `span` is one group (or
    a few) of, or None."""
    return _written_around(src, span, _GROUPED_NUMBER)


def _written_around(src: Source, span: Span, shape: re.Pattern[str]) -> str | None:
    """The run of `shape` on its line that `span` is a part of, and not the whole, or None."""
    line_start, line_end = src.lines.bounds(src.lines.line_of(span.start))
    for m in shape.finditer(src.text, line_start, line_end):
        if m.start() <= span.start and span.end <= m.end() and (m.start(), m.end()) != (span.start, span.end):
            return m.group()
    return None


_GENERIC_REACH = 24  # how far before a date a generic word naming it is read
# "Date", "Datum" right before a date: not "vom", "du", "del", which start periods too
_DATE_WORD_BEFORE = re.compile(rf"(?i)(?<![^\W\d_])(?:{DATE_WORDS}|dated){BARE_GAP}$")


def _period_around(src: Source, span: Span) -> str | None:
    """The period, two dates joined on one line, a date at `span` starts or ends, or None."""
    mentions, text = src.date_mentions, src.text
    k = bisect_left(mentions, span.start, key=lambda m: m.start)
    if k == len(mentions) or mentions[k].start != span.start:
        return None  # a compact date ("20240315"), no mention of its own
    if _DATE_WORD_BEFORE.search(text, max(0, span.start - _GENERIC_REACH), span.start):
        return None  # "Date 01.06.2024 - 30.06.2024": the document's date, beside its period
    for a, b in ((k - 1, k), (k, k + 1)):
        if a < 0 or b >= len(mentions):
            continue
        gap = text[mentions[a].end : mentions[b].start]
        if "\n" not in gap and _PERIOD_JOIN.fullmatch(gap):
            return text[mentions[a].start : mentions[b].end]
    return None


# A postal code: five or four digits, a Brazilian or ZIP+4 one ("01001-000", "97994-6400"),
# a Polish ("00-950"), a Czech or Slovak one ("120 00").
_POSTAL_CODE = re.compile(r"[0-9]{4,5}|[0-9]{5}-[0-9]{3,4}|[0-9]{2}-[0-9]{3}|[0-9]{3} [0-9]{2}")
# Before it: the start of its line or cell, a comma or a dash after the street, a country
# code ("D-", "CH "); or a town and its state ("San Francisco, CA ", "City, State ").
_BEFORE_POSTAL_CODE = re.compile(r"(?:^[ \t]*|  |\t|, |[\u2013\u2014\u00b7\u2022|] |(?<![^\W_])[A-Z]{1,2}[- ])$")
# Without the comma ("Chicago IL 60618"), only a US state's own code.
_US_STATES = (
    "AL|AK|AZ|AR|CA|CO|CT|DE|DC|FL|GA|HI|ID|IL|IN|IA|KS|KY|LA|ME|MD|MA|MI|MN|MS|MO|MT|NE|NV|NH|NJ|NM|NY|NC|ND|"
    "OH|OK|OR|PA|RI|SC|SD|TN|TX|UT|VT|VA|WA|WV|WI|WY|PR"
)
_STATE_BEFORE_POSTAL_CODE = re.compile(r"(?:[^\W\d_]+ ){0,2}[^\W\d_]{3,}, (?!N[OR]\b)[A-Z]{2},? $")
# the states whose codes are words too ("Bill ID 48213", "DINE IN 1047" under an address)
_WORD_LIKE_STATES = frozenset({"ID", "IN", "OR", "ME", "OK", "HI"})
_US_STATE_BEFORE_POSTAL_CODE = re.compile(rf"(?:[^\W\d_]+ ){{0,2}}[^\W\d_]{{3,}} (?:{_US_STATES}) $")
_ADDRESS_REACH = 80  # what the address patterns read before a code: its line's last characters
# After it: its town, one capitalised word after one blank ("75000 Paris", "00-000 Dreamcity").
_TOWN_AFTER_POSTAL_CODE = re.compile(r" ([^\W\d_]{2,})")


# A telephone number's characters ("+1 (555) 555-5555", "+56 9 1234 5678"), single blanks
# between its groups (two end its cell).
_PHONE_CHARACTERS = re.compile(r"(?:[0-9()+\-./]| (?! ))*")
_PHONE_LABELS = frozenset(VALUE_LABEL_SETS["phone_number"]) | frozenset(VALUE_LABEL_SETS["fax_number"])


def _telephone_number_around(src: Source, span: Span) -> str | None:
    """The telephone number, from its label, an identifier at `span` is a group of the
    digits of ("Phone: (520) 318-9486"), or None. (A number right after the label is
    under it: `LabelIndex`.)"""
    index, text = src.value_labels, src.text
    if index is None:
        return None
    line_start, line_end = src.lines.bounds(src.lines.line_of(span.start))
    k = bisect_left(index.starts, span.start) - 1
    if k < 0 or index.labels[k].start < line_start:
        return None
    label = index.labels[k]
    if normalise_phrase(text[label.start : label.end]) not in _PHONE_LABELS:
        return None
    gap = _BARE_GAP_RE.match(text, label.end)
    at = gap.end() if gap is not None else label.end
    if _PHONE_CHARACTERS.fullmatch(text, at, span.start) is None:
        return None
    end = _PHONE_CHARACTERS.match(text, span.end, line_end)
    return text[label.start : end.end() if end is not None else span.end].rstrip(" -./")


# A telephone number by its own shape, with no label: an area code in brackets ("(503)
# 555-0142", "(02) 9876 5432") or a country code after "+" ("+44 20 7946 0958").
_TELEPHONE_SHAPE = re.compile(
    r"(?<![\w+(])(?:\([0-9]{2,4}\) ?[0-9]{3,4}[-. ][0-9]{4}|\+[0-9]{1,3}(?:[ .-]\(?[0-9]{1,4}\)?){2,5})(?![\w])"
)


def _telephone_shape_around(src: Source, span: Span) -> str | None:
    """The telephone number, written in a telephone number's own shape, an identifier at
    `span` is a part of, or None."""
    return _written_around(src, span, _TELEPHONE_SHAPE)


def _figure_around(src: Source, span: Span) -> str | None:
    """The amount with cents, or the rate, an identifier at `span` is only the digits of a
    part of ("2" in "2,49", "12" in "Service 12%": "Kassa 2" and "Table: 12" are what the
    record's "2" and "12" stand under), or None."""
    for m in src.amounts:
        if m.start > span.start:
            break
        if span.end <= m.end and (m.start, m.end) != (span.start, span.end) and CENTS_RE.search(m.raw):
            return m.raw
    line_start, line_end = src.lines.bounds(src.lines.line_of(span.start))
    for rate in RATE_RE.finditer(src.text, line_start, line_end):
        if rate.span(1) == (span.start, span.end):
            return rate.group()
    return None


def _street_above(src: Source, line_start: int) -> bool:
    """Whether the line above is an address's street, with its number ("2, rue de la Paix",
    "Musterstraße 17"): what makes "75000 Paris" starting its line a postal code, and
    "4711 Paid" under "INVOICE" none."""
    li = src.lines.line_of(line_start)
    if li == 0:
        return False
    above = src.text[slice(*src.lines.bounds(li - 1))]
    return any(c.isdigit() for c in above) and any(c.isalpha() for c in above)


def _postal_address_around(src: Source, span: Span) -> str | None:
    """The postal code and town, or state and postal code, an identifier at `span` is the
    code of, or None."""
    text = src.text
    if not _POSTAL_CODE.fullmatch(text, span.start, span.end):
        return None
    line_start, line_end = src.lines.bounds(src.lines.line_of(span.start))
    line_start = max(line_start, span.start - _ADDRESS_REACH)
    before, after = text[line_start : span.start], text[span.end : min(line_end, span.end + _ADDRESS_REACH)]
    town = _TOWN_AFTER_POSTAL_CODE.match(after)
    lead = _BEFORE_POSTAL_CODE.search(before)
    if town and town.group(1)[0].isupper() and lead and (lead.group().strip() or _street_above(src, line_start)):
        return f"{text[span.start : span.end]} {town.group(1)}"
    state = _STATE_BEFORE_POSTAL_CODE.search(before)
    if state is None:
        # without the comma, on an address's line: a street's number or a comma before the
        # town, or a street above ("Bill ID 48213", "DINE IN 1047" are none)
        state = _US_STATE_BEFORE_POSTAL_CODE.search(before)
        if state is not None and not (
            (any(c.isdigit() or c == "," for c in before[: state.start()]) or _street_above(src, line_start))
            if state.group().split()[-1] not in _WORD_LIKE_STATES
            else "," in before[: state.start()]
        ):
            state = None
    if state and (not after.strip() or after.startswith(("  ", "\t", ","))):
        return text[line_start + state.start() : span.end]
    return None


# The other values a date or identifier may be written only as a part of, each with the
# value label set that makes a field that value itself (its parts then its own).
_WHOLES: dict[str, tuple[tuple[str | None, Callable[[Source, Span], str | None], str], ...]] = {
    "date": (("billing_period", _period_around, "the period"),),
    "identifier": (
        ("postal_code", _postal_address_around, "the postal address"),
        ("phone_number", _telephone_number_around, "the telephone number"),
        ("phone_number", _telephone_shape_around, "the telephone number"),
        (None, _grouped_number_around, "the grouped number"),
    ),
}


def _part_of_another(src: Source, leaf: Leaf, span: Span) -> str | None:
    """What a value written under no label at `span` is only a part of, described, when
    that is another value: for a date, a period written as two dates joined on one line;
    for an identifier, a postal address (its code before the town or after the state),
    a telephone number (a group of its digits after its label) or a longer number printed
    in groups. A period's bound is no document's own date (its issue, due or delivery
    date), nor is such a part any document's number. None otherwise, or where the field
    is labelled as that other value."""
    for own_set, find, what in _WHOLES.get(leaf.field.kind, ()):
        if own_set is not None and not set(leaf.field.labels).isdisjoint(VALUE_LABEL_SETS[own_set]):
            continue
        whole = find(src, span)
        if whole is not None:
            return f"{what} '{short(whole, 50)}'"
    return None


# A till receipt prints several fair readings of its number (the till's bill, the card
# slip's "Beleg-Nr.", the transaction's): one of them under its label says nothing of
# another written under a word no set knows ("BonNr 00600" beside "Beleg-Nr 7609"), so a
# field labelled as a receipt's number is lowered only where another value's label stands.
_RECEIPT_NUMBER_LABELS = frozenset(VALUE_LABEL_SETS["receipt_number"])
# A token an identifier's label may name: letters, digits and their joiners, with a digit.
_TOKEN_RE = re.compile(r"[^\s:;,()\[\]]*[0-9][^\s:;,()\[\]]*")
_WRITTEN_RE = re.compile(r"[^\s;()\[\]]+")


# The word "Date" alone starting its line or cell ("Date: 12.03.2024", not "Quote date:",
# a label of another date no set knows), or a dating word after a number ("Nr. 471113 vom
# 13.06.2018"): how a document prints its own date.
_DOCUMENT_DATE_BEFORE = re.compile(
    rf"(?i)(?:(?:^|[ \t]{{2}}|\t)[ \t]*{DATE_WORDS}|(?<![^\W\d_]){DATING_WORDS}){BARE_GAP}$"
)
# The date fields that are a document's own date (its issue, order, shipping, supply,
# payment or print date), which a bare "Date:" may name; a delivery or due date it never does.
_DOCUMENT_DATE_LABELS = frozenset().union(
    *(
        VALUE_LABEL_SETS[name]
        for name in ("invoice_date", "order_date", "ship_date", "supply_date", "payment_date", "print_date")
    )
)


def _a_documents_date(leaf: Leaf) -> bool:
    return not _DOCUMENT_DATE_LABELS.isdisjoint(leaf.field.labels)


def _named_otherwise(check: FieldCheck, src: Source, leaf: Leaf, spans: list[Span]) -> FieldCheck:
    """A date or identifier the source writes under no label (at `spans`), where the
    field's own label names one other value outright ("Rechnungsdatum 13.06.2018" when
    the record's date is the delivery date written elsewhere under no label): that value
    is most likely the field's. Lowered, naming it. Not where the value stands after a
    word any date or number is written after ("Date: 12.03.2024", "Credit note no.
    CN-17", "Nr. 471113 vom 13.06.2018": the document's own, beside another document's
    number or date its labels name), nor where its labels name several values (a
    statement's rows)."""
    index = src.value_labels
    kind = leaf.field.kind
    if index is None or kind not in ("date", "identifier") or not _RECEIPT_NUMBER_LABELS.isdisjoint(leaf.field.labels):
        return check
    excuse = _DOCUMENT_DATE_BEFORE if kind == "date" else GENERIC_LABEL_BEFORE[kind]
    if (kind == "identifier" or _a_documents_date(leaf)) and any(
        excuse.search(_before_on_its_line(src, span.start)) for span in spans
    ):
        return check
    named = _named_outright(src, index, leaf, kind)
    values = {alnum_key(src.text[s:e]) for s, e in named}
    if len(values) != 1:
        return check
    given, written = alnum_key(str(leaf.value)), next(iter(values))
    if kind == "identifier" and (written in given or (given in written and 2 * len(given) >= len(written))):
        return check  # a longer or shorter form of the value its label names
    check.verified = False
    check.penalise(
        FOREIGN_LABEL_FACTOR,
        f"{as_given(leaf.value)} stands in the source under no label of {leaf.field.name}, "
        f"which names '{short(src.text[named[0][0] : named[0][1]], 30)}'",
    )
    return check


_BARE_GAP_RE = re.compile(BARE_GAP)
# The word "Date:" alone before the first date a document writes, on its line: the
# document's own date, which the field labelled as the document's date names ("Date:
# 31/01/2026" above a delivery date).
_DATE_WORD_LABEL = re.compile(rf"(?i)[ \t]*{DATE_WORDS}[ \t]*:[ \t]*")


def _before_on_its_line(src: Source, start: int) -> str:
    line_start, _ = src.lines.bounds(src.lines.line_of(start))
    return src.text[line_start:start]


def _named_outright(src: Source, index: LabelIndex, leaf: Leaf, kind: str) -> list[tuple[int, int]]:
    """The values the field's own labels name outright: a label starting its line or
    cell, the value right after it with no word between, or starting the next line when
    the label ends its own ("Invoice date: 13.06.2018", "Invoice date:" over "13.06.2018";
    not "Date de facture associée : 01/01/2026", nor "Personal business ID issue date:
    January 3, 2011"). A date where the field is one, else a token with a digit. For the
    document's date, where no own label names one, so does the word "Date:" alone before
    the first date; for its number, its title ("Handelsrechnung (380) Nr. 471113")."""
    text, found = src.text, []
    starts = [m.start for m in src.date_mentions]
    field_labels = set(leaf.field.labels)
    document_date = not field_labels.isdisjoint(VALUE_LABEL_SETS["invoice_date"])
    document_number = _a_documents_number(leaf)
    for label in index.labels:
        if label.role != leaf.field.path or (kind == "date" and _under_a_permit(src, index, label)):
            continue
        before = _before_on_its_line(src, label.start)
        if before.strip() and not before.endswith(("  ", "\t")):
            continue
        gap = _BARE_GAP_RE.match(text, label.end)
        at_value = gap.end() if gap is not None else label.end
        if text.startswith("\n", at_value):  # the label ends its line: the value starts the next
            at_value += 1
            while text.startswith((" ", "\t"), at_value):
                at_value += 1
        if kind == "date":
            k = bisect_left(starts, at_value)
            span = (starts[k], src.date_mentions[k].end) if k < len(starts) and starts[k] == at_value else None
        else:
            token = _TOKEN_RE.match(text, at_value)
            span = token.span() if token is not None else None
        if span is not None and index.label_of(*span) is label:
            found.append(span)
        elif kind == "identifier":
            found.extend(_under_its_header(src, index, label))
    if found:
        return found  # its own labels say; the words below only where none does
    # "Date:" names the document's date when it is the first date the text writes: further
    # down it is a delivery note's, a payment's or a signature's
    if kind == "date" and document_date and starts and _DATE_WORD_LABEL.fullmatch(_before_on_its_line(src, starts[0])):
        found.append((starts[0], src.date_mentions[0].end))
    if kind == "identifier" and document_number:
        found.extend(_title_numbers(src))
    return found


def _under_a_permit(src: Source, index: LabelIndex, label: Label) -> bool:
    """Whether a date's label that says only "issued" or "date" stands on the line right
    under a permit's number, in its column (a till's permit block: "PTU No. FP0720..." /
    "Date Issued: 07/15/2025"): the permit's date; not a header's other column ("Permit
    No: BP-1173    Invoice #: 1042" over "Permit issued: 03/02/2025    Invoice Date:
    07/21/2025"), nor the invoice's own date label under it."""
    line = src.lines.line_of(label.start)
    written = normalise_phrase(src.text[label.start : label.end])
    if line == 0 or not (_ISSUE_WORDS.search(written) or written in _BARE_DATE_LABELS):
        return False  # "Invoice Date:" under it is the invoice's, a permit's block or not
    start, end = src.lines.bounds(line - 1)
    column = src.lines.column(src.lines.starts[line], label.start)
    return any(
        start <= other.start < end
        and other.role == _PERMIT_ROLE
        and abs(src.lines.column(start, other.start) - column) <= _PERMIT_COLUMN_SLACK
        for other in index.labels[bisect_left(index.starts, start) :]
        if other.start < end
    )


_PERMIT_ROLE = "@permit_number"
_BARE_DATE_LABELS = frozenset(("date", "datum", "fecha", "data"))
_PERMIT_COLUMN_SLACK = 8  # a till centres its lines: the block's labels start near each other


def _under_its_header(src: Source, index: LabelIndex, label: Label) -> list[tuple[int, int]]:
    """The number in the cell under `label` as a column's header, in a row of headers
    ("Invoice No.  Invoice/Tax Date  Order No." over "10452  03/03/2026  FOC/118"): the
    first token with a digit of the cell on the next line (a blank line between or none)
    that starts in the label's column, when the index reads the label as naming it."""
    line = src.lines.line_of(label.start)
    column = label.start - src.lines.starts[line]
    for below in (line + 1, line + 2):
        if below >= len(src.lines.starts):
            return []
        cells = src.lines.cells(below)
        if not cells:
            continue
        cell = src.lines.cell_in_column(below, column)
        if cell is None:
            return []
        token = _TOKEN_RE.match(src.text, cell[0], cell[1])
        return [token.span()] if token is not None and index.label_of(*token.span()) is label else []
    return []


def _fiscal_series(src: Source) -> list[str]:
    """A document's series and number as its own label writes them, the series' word
    starting its line or cell (or after its title) and the number with a digit ("Seria CSS nr. 0457",
    "Serija LTV Nr. 004512"); not a product's series in a line's words ("Xbox Series X
    Console - No Disc Drive", "Свидетельство серия 77 № 012345678")."""
    found = []
    for m in src.lexicon.series_number_re.finditer(src.text):
        before = cell_before(src.text, m.start()).strip()
        # the series' word starts its cell, or follows the title in capitals ("FACTURA
        # FISCALA seria CDS nr. 0457", "PVM SĄSKAITA FAKTŪRA Serija BP Nr. 004512")
        title = not any(c.isdigit() for c in before) and (before.isupper() or _TITLE_WORD.search(before) is not None)
        if any(c.isdigit() for c in m.group("number")) and (not before or title):
            found.append(m.group())
    return found


def _a_documents_number(leaf: Leaf) -> bool:
    return not set(leaf.field.labels).isdisjoint(VALUE_LABEL_SETS["invoice_number"])


def _title_numbers(src: Source) -> list[tuple[int, int]]:
    """The numbers a document's title names ("Handelsrechnung (380) Nr. 471113", "INVOICE
    10461", "FACTURA ELECTRÓNICA" over "N° 4518"): not a count ("Factuur 40 uur"), a month,
    a year, an amount or a date after it."""
    text, found = src.text, []
    for at in (*(m.end() for m in _TITLE_NUMBER_LABEL.finditer(text)), *_numbers_under_a_title(src)):
        token = _TOKEN_RE.match(text, at)
        written = _WRITTEN_RE.match(text, at)  # with its commas: an amount's cents
        if token is None or written is None or _NO_DOCUMENT_NUMBER.fullmatch(written.group().rstrip(".,")):
            continue
        if _A_COUNT_OF_UNITS.match(text, token.start()):
            continue  # "Factuur 12 maanden abonnement": a count and its unit
        if not any(d.start < token.end() and token.start() < d.end for d in src.date_mentions):
            found.append(token.span())
    return found


# A document's title starting its line or cell, then its number: right after it ("Facture
# FA-2017-0010"), or after a code and its number's abbreviation ("Handelsrechnung (380)
# Nr. 471113", "Rechnung # RE-1"). Not a compound meaning something else ("Rechnungsbetrag",
# "Abrechnung", "Umrechnungskurs"), nor a title about another document ("Rechnung zu
# Auftrag Nr. 12345").
_DOCUMENT_TITLES = (
    r"(?:(?:handels|teil|schluss|bau|miet|abschlags|sammel|gesamt|proforma|pro-forma|end)?rechnung|invoice|"
    r"facture|factura|fattura|faktura|fatura|factuur|rēķins|gutschrift|avoir)"
)
_TITLE_NUMBER_LABEL = re.compile(
    r"(?im)(?:^[ \t]*|(?<=  )(?=[^ \t])|(?<=[^ \t]\t))" + _DOCUMENT_TITLES + r"(?![^\W\d_])"
    rf"(?:(?: {{1,2}}\([0-9]{{3}}\))?(?: {{1,2}}{NUMBER_WORDS}\.?)(?: ?:)?|(?: ?:)?)"
    r" ?(?<=[ :#.])(?=[^\s:;,()\[\]]*[0-9])"
)


def _numbers_under_a_title(src: Source) -> Iterator[int]:
    """Where the numbers start that a title alone in its cell has under it, in a cell of
    the next line starting under the title (or where it ends) with a number's word (a Chilean tax
    office's box: "FACTURA ELECTRÓNICA" over "N° 4518")."""
    lines = sorted({src.lines.line_of(m.start()) for m in _TITLE_WORD.finditer(src.text)})
    for line in (line for line in lines if line + 1 < len(src.lines.starts)):
        title_cells = [(s, e) for s, e in src.lines.cells(line) if _TITLE_CELL.fullmatch(src.text, s, e)]
        if not title_cells:
            continue
        line_start, next_start = src.lines.starts[line], src.lines.starts[line + 1]
        for start, end in title_cells:
            if any(is_label_cell(src.text[start:end], kind) for kind in (*PARTIES, DELIVERY)):
                continue  # "INVOICE TO" over "No. 15, Jalan SS2/24": the buyer's address
            left, right = src.lines.column(line_start, start), src.lines.column(line_start, end)
            for cell_start, cell_end in src.lines.cells(line + 1):
                column = src.lines.column(next_start, cell_start)
                number = _NUMBER_CELL.match(src.text, cell_start, cell_end)
                if (
                    left - _UNDER_SLACK <= column <= right + _UNDER_SLACK
                    and number is not None
                    and _AN_ADDRESS_NUMBER.match(src.text, number.end()) is None  # not "No. 12, Jalan Ampang"
                ):
                    yield number.end()


_A_COUNT_OF_UNITS = re.compile(r"[0-9]{1,3} [^\W\d_]")
_AN_ADDRESS_NUMBER = re.compile(r"[0-9][^\s,]*,[ \t]+[^\W\d_]")
_UNDER_SLACK = 2  # a box's lines centred or aligned right: the number may start where the title ends
# A title alone in its cell, a word before or after it at most ("TAX INVOICE", "FACTURA
# ELECTRÓNICA", "FATURA-RECIBO"), and a number's word starting a cell ("N° 4518", "Nr. 118",
# a Portuguese series before it: "N.º FR 2026A/1843")
_TITLE_CELL = re.compile(rf"(?i)(?:[^\W\d_]+ )?{_DOCUMENT_TITLES}(?:[ -][^\W\d_]+)?")
_NUMBER_CELL = re.compile(rf"(?i){NUMBER_WORDS}\.?(?: ?:)? ?(?:(?-i:[A-Z]{{1,4}}) )?(?=[^\s:;,()\[\]]*[0-9])")
# A document's title before its series ("Factura seria CDS nr. 0457"; the Lithuanian
# "faktūra", the Croatian and Serbian "račun")
_TITLE_WORD = re.compile(r"(?i)(?<![^\W\d_])(?:" + _DOCUMENT_TITLES + r"|faktūra|račun)(?![^\W\d_])")
# What follows a title and is no document's number: a count ("1 of 2", "1/2"), a month
# or year ("03/2024", "2024-03", "2024"), an amount ("1.190,00").
_MONTH = r"(?:0?[1-9]|1[0-2])"
_NO_DOCUMENT_NUMBER = re.compile(
    rf"[0-9]|[0-9]{{1,3}}/[0-9]{{1,3}}|{_MONTH}[/.\-](?:19|20)?[0-9]{{2}}|(?:19|20)[0-9]{{2}}(?:[/.\-]{_MONTH})?"
    r"|[0-9]{1,3}(?:[.,'][0-9]{3})*[.,][0-9]{1,2}"
    # an ordinal, a quarter, a share, a count ("Factuur 2e termijn", "Q3", "50%", "2x")
    r"|(?i:[0-9]{1,2}(?:e|de|ste|st|nd|rd|th|er|ère|ème|º|ª|x|%)|q[1-4])"
)


def _labelled(check: Callable[[Source, Leaf], FieldCheck]) -> Callable[[Source, Leaf], FieldCheck]:
    def run(src: Source, leaf: Leaf) -> FieldCheck:
        return check_label(check(src, leaf), src, leaf)

    run.__doc__ = check.__doc__
    return run


CHECKS: dict[str, Callable[[Source, Leaf], FieldCheck]] = {
    "text": check_text,
    "identifier": check_identifier,
    "email": check_email,
    "phone": check_phone,
    "url": check_url,
    "amount": check_amount,
    "number": check_number,
    "quantity": check_number,
    "date": check_date,
    "time": check_time,
    "currency": check_currency,
    "enum": check_enum,
    "boolean": check_boolean,
}
# Where the value is written is where its label stands (the kinds of LABELLED_VALUE_KINDS).
CHECKS.update({kind: _labelled(CHECKS[kind]) for kind in LABELLED_VALUE_KINDS})
