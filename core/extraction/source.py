"""A document's text analysed once for every check of a record: its lines, dates,
amounts and the roles their labels give them, what qualifies each amount (a charge, a
page figure, a rate's base), and where currencies are named."""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache
from itertools import combinations, product

from vetq.core.extraction.amounts import (
    CENT,
    CENTS_RE,
    GLUED_LETTER_SIGNS,
    SPACED_LETTER_SIGN_RE,
    AmountMention,
    find_amounts,
    parse_amount,
    to_cents,
)
from vetq.core.extraction.clock import PrintedTime, find_printed_times
from vetq.core.extraction.country import CountryTell, country_tell
from vetq.core.extraction.currencies import (
    AMBIGUOUS_SYMBOLS,
    CURRENCY_WORDS,
    CURRENCY_WORDS_AFTER_A_SUM,
    ISO_4217,
    SYMBOLS_LONGEST_FIRST,
    UNAMBIGUOUS_SYMBOLS,
)
from vetq.core.extraction.dates import find_date_mentions, shows_the_month_first, written_month_first
from vetq.core.extraction.lexicon import DELIVERY, WORD_RE, Lexicon, first_word, normalise_phrase, phrase_pattern
from vetq.core.extraction.parties import is_label_cell
from vetq.core.extraction.roles import (
    CLAUSE_BREAK_RE,
    FILL_RUN_RE,
    LABEL_AFTER_WINDOW,
    LABEL_BEFORE_WINDOW,
    QUALIFIER_REACH,
    RATE_TAIL_RE,
    LabelIndex,
    Lines,
    assign_roles,
    caption_line,
    header_cell_over,
    header_cell_overlapping,
    included_tax_at_its_rate,
    label_key,
    label_matches,
    laid_out_length,
    only_currencies,
    reach_start,
)
from vetq.core.extraction.text_match import ASCII_FORMS, UNSPACED_SCRIPTS, NormalizedText

__all__ = ["AmountContext", "CurrencyHit", "Source", "currency_hits"]

# An amount written with cents ("583.20", "(12,50)"): a figure, not a count.
_MAX_ADJUSTMENTS = 8


# A document whose sums are mostly written as in continental Europe or Latin America
# writes dates day first: with a decimal comma ("12,50") or with thousands grouped by
# dots ("2.118.557" pesos, "13.014.000" đồng); two such sums at least, and four for each
# with a decimal point (a weight's "0.75" on a German receipt)
_CONTINENTAL_SUMS = 2
_CONTINENTAL_MAJORITY = 4
_DOT_GROUPED_RE = re.compile(r"[0-9]\.[0-9]{3}\.[0-9]{3}(?![0-9])")
# The currencies of countries that write a numeric date day first and a sum with a
# decimal point: a sum in euros written "1,234.56" is software set to English (as often
# the United States' dates as not), but one in pounds or rupees is written as at home
# (not the Gulf's: its tills print American software's dates as often as not)
_DAY_FIRST_WITH_A_DECIMAL_POINT = frozenset(
    {
        *("GBP", "AUD", "NZD", "SGD", "HKD", "MYR", "THB", "IDR", "VND", "INR", "PKR", "LKR", "NPR", "BDT"),
        *("ILS", "JOD", "EGP", "KES", "NGN", "GHS", "ZAR", "MXN"),
        *("PEN", "CLP", "COP", "ARS", "UYU", "BOB", "PYG", "GTQ", "CRC"),
    }
)
# A United States address ("Pittsburgh, PA 15222", "Austin, Texas 78701"), employer
# number ("EIN: 12-3456789") or telephone: a party whose software likely writes the month
# first, whatever currency it bills in
_US_STATE_CODES = (
    "AL|AK|AZ|AR|CA|CO|CT|DE|DC|FL|GA|HI|ID|IL|IN|IA|KS|KY|LA|ME|MD|MA|MI|MN|MS|MO|MT|NE|NV|NH|NJ|NM|NY|NC|ND|OH|"
    "OK|OR|PA|RI|SC|SD|TN|TX|UT|VT|VA|WA|WV|WI|WY|PR"
)
_US_STATE_NAMES = (
    "Alabama|Alaska|Arizona|Arkansas|California|Colorado|Connecticut|Delaware|Florida|Georgia|Hawaii|Idaho|"
    "Illinois|Indiana|Iowa|Kansas|Kentucky|Louisiana|Maine|Maryland|Massachusetts|Michigan|Minnesota|"
    "Mississippi|Missouri|Montana|Nebraska|Nevada|New Hampshire|New Jersey|New Mexico|New York|North Carolina|"
    "North Dakota|Ohio|Oklahoma|Oregon|Pennsylvania|Rhode Island|South Carolina|South Dakota|Tennessee|Texas|"
    "Utah|Vermont|Virginia|Washington|West Virginia|Wisconsin|Wyoming"
)
# the codes no word or label abbreviates ("Customer ID 48213", "Order IN 12345", "DE")
_UNWORDLY_STATE_CODES = "|".join(
    sorted(set(_US_STATE_CODES.split("|")) - {"ID", "IN", "OR", "ME", "OK", "HI", "DE", "CO", "MA", "LA", "AL", "OH"})
)
# A Canadian address's province and postal code ("Toronto ON M4K 1R1")
_CANADIAN_RE = re.compile(
    r"(?<![^\W\d_])(?:AB|BC|MB|NB|NL|NS|NT|NU|ON|PE|QC|SK|YT)[ \t,]+[A-Z][0-9][A-Z][ \t]?[0-9][A-Z][0-9](?![^\W_])"
)
_AMERICAN_STRIP = " ,\t\n"  # the comma and blanks around an American address's state and code
_AMERICAN_ADDRESS = (
    # a state's code after its city's comma (not "Customer ID 48213"), or its name
    rf"(?:,[ \t]*(?:{_US_STATE_CODES}|D\.C\.|N\.Y\.)|(?<![^\W\d_])(?:{_US_STATE_NAMES})),?[ \t\n]+[0-9]{{5}}"
    r"(?:-[0-9]{4})?(?![0-9])"
    # a code with no comma after a city's capitalised word, the code ending its line or
    # followed by the country ("San Francisco CA 94103", "SAN FRANCISCO  CA  94103 USA")
    rf"|(?<=[A-Za-z])[ \t]{{1,2}}(?:{_UNWORDLY_STATE_CODES})[ \t]{{1,2}}[0-9]{{5}}(?:-[0-9]{{4}})?"
    r"(?=[ \t]*(?:\n|$|USA|U\.S\.A\.))"
    r"|(?<![^\W\d_])EIN[ \t:#.]*[0-9]{2}-[0-9]{7}(?![0-9])"
)
# an American address or employer number where the issuer's letterhead stands (a buyer's
# address lower down is no word of how the document's software writes dates)
_AMERICAN_ISSUER_RE = re.compile(_AMERICAN_ADDRESS)
_LETTERHEAD_LINES = 8
_OTHER_PARTIES = ("buyer", DELIVERY)
_AMERICAN_RE = re.compile(
    _AMERICAN_ADDRESS
    # or a North American telephone number ("+1 (415) 555-0182")
    + r"|\+1[ \t.\-]?\(?[2-9][0-9]{2}\)?[ \t.\-]?[0-9]{3}[ \t.\-][0-9]{4}(?![0-9])"
)
# the currencies of countries writing the month first or either way, named anywhere
_MONTH_FIRST_CURRENCIES = frozenset({"USD", "CAD", "PHP"})


@dataclass(frozen=True)
class AmountContext:
    """What the words around one amount, on its own line, say it is."""

    adjustment: str | None  # the charge or deduction phrase that qualifies it ("shipping", "paid")
    partial: bool  # a page, carried-forward or instalment figure
    rate_base: bool  # the base a tax rate applies to ("20% on 540.00", "TVA 20 %" over "Base HT 60,00")
    currencies: frozenset[str]  # currencies named right next to it


class Source:
    def __init__(self, text: str, lexicon: Lexicon, value_lexicon: Lexicon | None = None) -> None:
        # A page break ends a line: the converter joins pages with a form feed alone, which
        # would otherwise join a page's last line and the next page's first into one (a
        # table's header at the foot of a page and its row at the head of the next). One
        # character for one, so every offset still points into the text as given, which
        # still marks the pages (page_of) and gives the spans their text (heuristics). So
        # are other scripts' digits read as ASCII ones ("١٢٣٤٫٥٦").
        self.given = text
        text = text.replace("\f", "\n").translate(ASCII_FORMS)
        self.text = text
        self.lexicon = lexicon
        self.value_lexicon = value_lexicon
        self._value_labels: LabelIndex | None = None
        self._norm: NormalizedText | None = None
        self.lines = Lines(text)
        self.date_mentions = find_date_mentions(text)
        self.amounts: list[AmountMention] = find_amounts(text, date_mentions=self.date_mentions)
        assignment = assign_roles(text, self.amounts, self.lines, lexicon)
        self.labels = assignment.labels
        self.roles = assignment.roles
        self.role_label = assignment.role_label
        self.assignment = assignment
        self._currency: list[CurrencyHit] | None = None
        self._currency_starts: list[int] = []
        self._context: dict[int, AmountContext] = {}
        self._phrases: dict[int, tuple[str | None, bool]] = {}
        self._adjustments: list[tuple[Decimal, str, str]] | None = None
        self._date_starts: list[int] | None = None
        self._page_starts: list[int] | None = None
        self._adjustment_sums: dict[bool, dict[Decimal, list[str]]] = {}
        self._numbers: dict[Decimal, list[tuple[int, int]]] | None = None
        self._phrase_hits: dict[tuple[str, ...], list[tuple[int, int]]] = {}
        self._amount_index: dict[Decimal, list[int]] | None = None
        self._writes_cents: bool | None = None
        self._day_first_convention: tuple[str | None] | None = None
        self._country_tell: tuple[CountryTell | None] | None = None
        self._own_country_tell: tuple[CountryTell | None] | None = None
        self._month_first_convention: tuple[str | None] | None = None
        self._printed_times: list[PrintedTime] | None = None
        self._totals_before_deductions()

    def amounts_of(self, cents: Decimal) -> list[int]:
        """The indices of the amounts worth `cents` (a negative amount counts by its size)."""
        if self._amount_index is None:
            index: dict[Decimal, list[int]] = {}
            for i, am in enumerate(self.amounts):
                c = to_cents(am.value)
                if c is not None:
                    index.setdefault(c, []).append(i)
                    if am.value < 0:
                        index.setdefault(-c, []).append(i)
            self._amount_index = index
        return self._amount_index.get(cents, [])

    @property
    def printed_times(self) -> list[PrintedTime]:
        """The times of day the text prints, read once, when a time field asks."""
        if self._printed_times is None:
            self._printed_times = find_printed_times(self.text, self.date_mentions)
        return self._printed_times

    @property
    def writes_cents(self) -> bool:
        """Whether any figure is written with cents: where none is (a forint's, a won's
        or a yen's document), a whole number is how money is written."""
        if self._writes_cents is None:
            self._writes_cents = any(CENTS_RE.search(am.raw) for am in self.amounts)
        return self._writes_cents

    @property
    def day_first_convention(self) -> str | None:
        """Why the numeric dates this document's other dates leave in either order
        ("03/04/2026") read day first, or None: its sums are written with a decimal comma,
        as nowhere that writes the month first writes them, or are in currencies only of
        countries that write the day first and a decimal point, or, naming no other currency
        beside them, it shows such a country's script or word (`country_tell`); None wherever it shows the
        month first (`dates.shows_the_month_first`), an American party, or names dollars.
        Asked by a date field, once."""
        if self._day_first_convention is None:
            self._day_first_convention = (self._day_first_reason(),)
        return self._day_first_convention[0]

    def _day_first_reason(self) -> str | None:
        text = self.text
        if (
            shows_the_month_first(text)
            or _AMERICAN_RE.search(text)
            or _CANADIAN_RE.search(text)
            or any(hit.strong and hit.codes & _MONTH_FIRST_CURRENCIES for hit in self.currency_hits)
        ):
            return None  # the month first elsewhere, an American party's software, dollars
        cents = [(am, m.group()[0]) for am in self.amounts if (m := CENTS_RE.search(am.raw)) is not None]
        separators = [separator for _, separator in cents]
        points = separators.count(".")
        for count, why in (
            (separators.count(","), "its sums are written with a decimal comma"),
            (sum(1 for am in self.amounts if _DOT_GROUPED_RE.search(am.raw)), "its sums group thousands with dots"),
        ):
            if count >= _CONTINENTAL_SUMS and count >= _CONTINENTAL_MAJORITY * points:
                return why
        # the currencies of its sums with cents, a shared sign's every currency ("$"), and
        # a column's or a label's code ("Total Amount Due (AED)")
        hits = [
            hit
            for am, _ in cents
            for hit in self._currencies_next_to(am, *self.lines.bounds(self.lines.line_of(am.start)))
        ] + [
            hit
            for hit in self.currency_hits
            if hit.strong and text[hit.start - 1 : hit.start] == "(" and text[hit.end : hit.end + 1] == ")"
        ]
        # a shared sign is the currency the document names outright ("$" beside "NZD 49.87")
        named = frozenset(code for hit in self.currency_hits if hit.strong for code in hit.codes)
        if hits and all((hit.codes & named or hit.codes) <= _DAY_FIRST_WITH_A_DECIMAL_POINT for hit in hits):
            written = dict.fromkeys(text[hit.start : hit.end] for hit in hits)
            return f"its sums are in {', '.join(written)}"
        tell = self.country_tell
        # (or its sums' signs may be its currency: "$" beside "RFC" is a peso's)
        if tell is not None and tell.day_first and all(tell.currency in hit.codes for hit in hits):
            return f"it shows {tell.shown}, as only a country that writes the day first does"
        return None

    @property
    def month_first_convention(self) -> str | None:
        """Why the numeric dates this document leaves in either order read month first, or
        None: another of its dates with its year reads only month first ("02/28/2026",
        "March 4, 2026"; `dates.written_month_first`), or its issuer's letterhead has an
        American address or employer number; and its sums are written with a decimal point
        in dollars or no currency, and no day-first country tells. Asked by a date field."""
        if self._month_first_convention is None:
            self._month_first_convention = (self._month_first_reason(),)
        return self._month_first_convention[0]

    def _in_the_letterhead(self, pattern: re.Pattern[str]) -> re.Match[str] | None:
        """`pattern`'s first match in the document's first lines, where the issuer's
        letterhead stands: before a buyer's or a delivery's heading, and on no line of a key
        and its value ("Guest: Sarah Kim, 3300 Wilshire Blvd, Los Angeles, CA 90010")."""
        last = min(_LETTERHEAD_LINES, len(self.lines.starts))
        for line in range(last):
            # the letterhead ends where a buyer's or a delivery's heading starts ("Bill To")
            if any(is_label_cell(self.text[s:e], party) for s, e in self.lines.cells(line) for party in _OTHER_PARTIES):
                last = line
                break
        end = self.lines.bounds(last - 1)[1] if last else 0
        for found in pattern.finditer(self.text, 0, end):
            line_start = self.lines.bounds(self.lines.line_of(found.start()))[0]
            if ":" not in self.text[line_start : found.start()]:
                return found
        return None

    def _month_first_reason(self) -> str | None:
        text = self.text
        separators = [m.group()[0] for am in self.amounts if (m := CENTS_RE.search(am.raw)) is not None]
        strong = {code for hit in self.currency_hits if hit.strong for code in hit.codes}
        own = self.own_country_tell
        if (
            separators.count(",") > separators.count(".")
            or not strong <= {"USD"}
            or self.day_first_convention is not None
            or (own is not None and own.word and own.day_first)
        ):
            return None  # sums of continental Europe's or another currency's, or a day-first country's
        written = written_month_first(text)
        if written is not None:
            return f"'{written}' reads only month first"
        american = self._in_the_letterhead(_AMERICAN_ISSUER_RE)
        if american is None:
            return None
        return f"its issuer's American '{american.group().strip(_AMERICAN_STRIP)}' stands on it"

    @property
    def own_country_tell(self) -> CountryTell | None:
        """What the document's script or words tell of its country (`country.country_tell`),
        its issuer's address left aside; read once."""
        if self._own_country_tell is None:
            self._own_country_tell = (country_tell(self.text, self.lexicon),)
        return self._own_country_tell[0]

    @property
    def country_tell(self) -> CountryTell | None:
        """What tells the document's country (`country.country_tell`), read once."""
        if self._country_tell is None:
            # the issuer's American or Canadian address tells first: a shop there may write
            # another country's script ("ΣΠΑΝΑΚΟΠΙΤΑ Spanakopita", Toronto ON M4K 1R1)
            american = self._in_the_letterhead(_AMERICAN_ISSUER_RE)
            canadian = self._in_the_letterhead(_CANADIAN_RE)
            address = american or canadian
            own = self.own_country_tell
            told = (
                None
                if address is None
                else CountryTell(f"'{address.group().strip(_AMERICAN_STRIP)}'", "USD" if american else "CAD", False)
            )
            if told is not None and own is not None and own.word and own.currency != told.currency:
                told = own = None  # a Mexican till's "RFC" beside a buyer's Texan address: neither tells
            self._country_tell = (told or own,)  # an address before a script (a Greek bakery in Toronto)
        return self._country_tell[0]

    def phrase_spans(self, phrases: tuple[str, ...]) -> list[tuple[int, int]]:
        """Where any of `phrases` (normalised, as a schema's cue words are) stands, on
        word boundaries, case-insensitively. Kept per phrase set: every item of a list
        asks for its enum's words again."""
        found = self._phrase_hits.get(phrases)
        if found is None:
            found = [m.span() for m in _phrases_re(phrases).finditer(self.text)][:_MAX_PHRASE_HITS]
            self._phrase_hits[phrases] = found
        return found

    def numbers_of(self, value: Decimal) -> list[tuple[int, int]]:
        """Spans of every number written in the text that reads as `value`: counts,
        quantities and measures, glued to a unit or not ("12 pcs", "x12", "2,5kg")."""
        if self._numbers is None:
            self._numbers = _number_index(self.text, [(m.start, m.end) for m in self.date_mentions])
        try:
            if value < 0:
                # a credit's or a return's count: the number with its minus glued before it
                # ("-2"), not a part number's hyphen ("7781-2")
                return [
                    (s - 1, e)
                    for s, e in self._numbers.get(-value.normalize(), [])
                    if self.text[s - 1 : s] in _MINUS and not self.text[max(0, s - 2) : s - 1].isalnum()
                ]
            return self._numbers.get(value.normalize(), [])
        except ArithmeticError:
            return []

    @property
    def value_labels(self) -> LabelIndex | None:
        """The labels of the text's dates and identifiers (None: the schema labels none),
        read once, when a labelled value field asks."""
        if self._value_labels is None and self.value_lexicon is not None:
            self._value_labels = LabelIndex(self.text, self.lines, self.value_lexicon)
        return self._value_labels

    @property
    def norm(self) -> NormalizedText:
        if self._norm is None:
            self._norm = NormalizedText(self.text)
        return self._norm

    @property
    def currency_hits(self) -> list[CurrencyHit]:
        if self._currency is None:
            self._currency = currency_hits(self.text)
            self._currency_starts = [h.start for h in self._currency]
        return self._currency

    def context(self, ai: int) -> AmountContext:
        """Amount ai's qualifiers, read from its own line: the words since the previous
        amount (and, for an unlabelled number, the words right after it)."""
        cached = self._context.get(ai)
        if cached is not None:
            return cached
        text, am = self.text, self.amounts[ai]
        ls, le = self.lines.bounds(self.lines.line_of(am.start))
        prev_end, start = self._words_before(ai)
        next_start = self.amounts[ai + 1].start if ai + 1 < len(self.amounts) else len(text)
        after_end = min(le, next_start, am.end + LABEL_AFTER_WINDOW)
        after = text[am.end : after_end]
        adjustment, rate_base = self._phrase_before(ai)
        if adjustment is not None and rate_base and self._hands_phrase_on(ai):
            adjustment = None
        elif adjustment is None and ai > 0 and self._hands_phrase_on(ai - 1):
            adjustment = self._phrase_before(ai - 1)[0]
        heading = self._heading(ai) if prev_end == ls else ""
        alone_under = prev_end == ls and self._named_from_above(ai) and len(text[am.end : le].strip()) <= 4
        if adjustment is None and heading and alone_under:
            # one token per line, as OCR gives: a charge's phrase alone over its figure, or
            # with its rate ("Discount 10%", "Discounts (5%)", "Discount %") or whether the
            # tax is in it ("Ennakkomaksu  verollinen"), or phrases written together
            # ("Prepaid credits"), the last of them nearest the figure; also when a label
            # there names the figure ("Total discount" over "0.20 €"), as on its line
            found = None
            for phrase in self.lexicon.adjustment_re.finditer(heading):
                if found is not None and heading[found.end() : phrase.start()].strip():
                    break
                found = phrase
            if found is not None:
                tail = heading[found.end() :].strip()
                qualified = self.lexicon.inclusion_after_re.match(tail)
                if RATE_TAIL_RE.fullmatch(tail, qualified.end() if qualified is not None else 0):
                    adjustment = normalise_phrase(found.group())
        if adjustment is None and alone_under:
            # a charge's kind and its name over its figure, as e-invoice prints give them
            # ("Nachlass: Loyalty Program Discount" / "- 14,00 €"): the kind names it; or a
            # long phrase that is the whole line ("abzüglich Ihrer Vorauszahlungen")
            named = self._heading(ai, _MAX_NAMED_HEADING)
            kind = self.lexicon.adjustment_re.match(named)
            if (
                kind is not None
                and (named[kind.end() :].lstrip(" \t").startswith(":") or kind.end() == len(named))
                and not any(c.isdigit() for c in named)
            ):
                adjustment = normalise_phrase(kind.group())
        if adjustment is None and self.roles[ai] is None:
            # a caption under its figure ("100 SAR" / "Discount at Document Level")
            found = self.lexicon.adjustment_re.match(self._footing(ai))
            if found is not None:
                adjustment = normalise_phrase(found.group())
        if adjustment is None and self.roles[ai] is None:
            # a charge's column in a header over one row of sums ("Total  VAT 21%  Shipping
            # costs  Total due" over "$9,460.00  $1,986.60  $5,400.00  $16,846.60")
            a = self.assignment
            cell = header_cell_over(text, self.lines, a.labels, a.label_starts, am.start)
            if cell is None and self._among_sums(ai):
                # a row of sums under a header with a column left empty ("Importo bollo
                # Sconto/Maggiorazione  Valuta" over "2,00  EUR"): the cell over it
                cell = header_cell_overlapping(text, self.lines, am.start)
            found = None if cell is None else self.lexicon.adjustment_re.match(text, *cell)
            if found is not None:
                adjustment = normalise_phrase(found.group())
        if adjustment is None and self.roles[ai] is None:
            adjustment = self._wrapped_phrase(ai, prev_end)
        if adjustment is None and self.roles[ai] is None:
            after_phrase = self.lexicon.adjustment_re.match(after.lstrip(" \t\u00a0:"))
            rest = text[am.end + len(after) : min(le, next_start)]
            if after_phrase is not None and (
                next_start >= le or CLAUSE_BREAK_RE.search(rest) or CLAUSE_BREAK_RE.search(after)
            ):
                adjustment = normalise_phrase(after_phrase.group())
        # partial qualifiers may stand before a page number ("Page 1 subtotal 300.00"),
        # so they are read back to the last amount written with cents
        partial_start = self._reach(ls, am.start)
        k = ai - 1
        while k >= 0 and self.amounts[k].end > partial_start:
            if CENTS_RE.search(self.amounts[k].raw):
                partial_start = self.amounts[k].end
                break
            k -= 1
        own = self.assignment.role_label[ai]
        if own >= 0 and ls <= self.assignment.labels[own].start < partial_start:
            # the words from the figure's own label on qualify it, however far across the
            # page ("Summe Umsatzsteuer in Abrechnungswährung" ... "249,00")
            partial_start = self.assignment.labels[own].start
        partial = self.lexicon.partial_re.search(text, partial_start, am.start) is not None or (
            # a heading as written, not as laid out: a payment block's words far across
            # the line above ("Zahlung per Lastschrift ……… EUR") make no figure partial
            heading != "" and len(heading) <= _MAX_HEADING and self.lexicon.partial_re.search(heading) is not None
        )
        hits = self._currencies_next_to(am, start, am.end + len(after)) or self._currencies_after_its_label(ai)
        codes = frozenset(c for h in hits for c in h.codes)
        ctx = AmountContext(adjustment, partial, rate_base, codes)
        self._context[ai] = ctx
        return ctx

    def _currencies_next_to(self, am: AmountMention, start: int, end: int) -> list[CurrencyHit]:
        """The currencies between `start` and `end` written right next to `am`, with
        nothing alphanumeric between ("EUR 12,00", "12,00 €", "$ -5.00")."""
        text, found = self.text, []
        for h in self.currency_hits[bisect_left(self._currency_starts, start) :]:
            if h.start >= end:
                break
            between = (
                text[h.end : am.start] if h.end <= am.start else text[am.end : h.start] if h.start >= am.end else "x"
            )
            if any(c.isalnum() for c in between):
                continue
            if ")" in between and h.end <= am.start:
                # a rate's in brackets before the figure ("TOTAL EUR (Kurs 1 EUR = 0.9400
                # CHF) 199.36"), not a column's ("Amount (CAD) 12.00")
                opened = text.rfind("(", start, h.start)
                if opened >= 0 and any(c.isdigit() for c in text[opened : h.start]):
                    continue
            found.append(h)
        return found

    def _currencies_after_its_label(self, ai: int) -> list[CurrencyHit]:
        """The currency written right after amount ai's own label on its line, where the
        figure stands farther off: "TOTAL EUR (Kurs 1 EUR = 0.9400 CHF)  199.36"."""
        own = self.assignment.role_label[ai]
        if own < 0:
            return []
        label, am = self.labels[own], self.amounts[ai]
        if not label.end <= am.start or self.lines.line_of(label.start) != self.lines.line_of(am.start):
            return []
        hits = self.currency_hits  # read first: it sets the starts searched
        i = bisect_left(self._currency_starts, label.end)
        if i < len(hits) and hits[i].end <= am.start and not self.text[label.end : hits[i].start].strip(" \t"):
            return [hits[i]]
        return []

    def _words_before(self, ai: int) -> tuple[int, int]:
        """Where the words before amount ai begin on its line: the end of the previous
        amount on it (or the line's start), and that or the label window's start."""
        am = self.amounts[ai]
        ls = self.lines.starts[self.lines.line_of(am.start)]
        prev_end = self.amounts[ai - 1].end if ai > 0 and self.amounts[ai - 1].end > ls else ls
        return prev_end, self._reach(prev_end, am.start)

    def _reach(self, lo: int, end: int) -> int:
        """Where the words that may qualify the figure at `end` begin, no earlier than `lo`:
        the label window as laid out (`reach_start`: "Offene Zahlungen" 75 blanks left of
        "220,00"), but past the window as written no further than the nearest amount
        label before the figure, whose cell it is ("Zahlung per Lastschrift … MwSt. 19%
        95,00": the payment block's words are not the tax's)."""
        start = reach_start(self.text, lo, end)
        window = max(lo, end - LABEL_BEFORE_WINDOW)
        if start < window:
            starts = self.assignment.label_starts
            k = bisect_left(starts, end) - 1
            if k >= 0 and starts[k] >= start:
                return max(start, min(window, starts[k]))
        return start

    def _among_sums(self, ai: int) -> bool:
        """Whether amount ai's line holds two other figures with a sum's role: a row of
        sums, not an item's row (whose figures head no role)."""
        ls, le = self.lines.bounds(self.lines.line_of(self.amounts[ai].start))
        sums = 0
        for step in (-1, 1):
            k = ai + step
            while 0 <= k < len(self.amounts) and ls <= self.amounts[k].start < le:
                sums += self.roles[k] is not None
                k += step
        return sums >= 2

    def _wrapped_phrase(self, ai: int, prev_end: int) -> str | None:
        """A charge's or discount's label wrapped in a narrow column, its figure beside its
        last part: the line above is one short cell that starts with the phrase and breaks off
        mid-label (an open bracket, a joining sign: "Shipping (NZ Post" over "Courier –
        North Island)   $9.50"), and amount ai's words, with no label of their own, start
        in that cell's column. None where they do not."""
        text, am = self.text, self.amounts[ai]
        line = self.lines.line_of(am.start)
        ls = self.lines.starts[line]
        words = text[prev_end : am.start]
        starts = self.assignment.label_starts
        own_label = bisect_left(starts, am.start) > bisect_left(starts, ls)
        if line == 0 or prev_end != ls or not words.strip() or own_label:
            return None
        s, e = self.lines.bounds(line - 1)
        above = text[s:e]
        cell = above.strip()
        if not cell or len(cell) > _MAX_WRAPPED_PART or len(FILL_RUN_RE.split(words.strip())[0]) > _MAX_WRAPPED_PART:
            return None  # a long line is an item's description, not a narrow column's label
        if FILL_RUN_RE.search(cell) or any(c.isdigit() for c in cell):
            return None
        column, indent = len(above) - len(above.lstrip()), len(words) - len(words.lstrip())
        if not column <= indent <= column + _WRAP_INDENT:
            return None
        if cell.count("(") <= cell.count(")") and not cell.endswith(_JOINING_ENDS):
            return None
        found = self.lexicon.adjustment_re.match(cell)
        phrase = None if found is None else normalise_phrase(found.group())
        return None if phrase is None or phrase in self.lexicon.payments else phrase

    def _named_from_above(self, ai: int) -> bool:
        """Whether amount ai has no role, or has it from a label on the line above it ("Total
        discount" over "0.20 €"), whose phrases then qualify it as they would on its line."""
        if self.roles[ai] is None:
            return True
        k = self.assignment.role_label[ai]
        return (
            k >= 0
            and self.lines.line_of(self.assignment.labels[k].start) == self.lines.line_of(self.amounts[ai].start) - 1
        )

    def _phrase_before(self, ai: int) -> tuple[str | None, bool]:
        """The charge's or deduction's phrase nearest before amount ai on its line, since the
        previous amount, and whether amount ai is a rate's base ("10% von 147,30")."""
        cached = self._phrases.get(ai)
        if cached is not None:
            return cached
        offset = self._words_before(ai)[1]
        before = self.text[offset : self.amounts[ai].start]
        own = self.assignment.role_label[ai]
        grand = self.assignment.labels[own] if own >= 0 and self.assignment.labels[own].grand else None
        phrase = None
        for m in self.lexicon.adjustment_re.finditer(before):
            if grand is not None and grand.start <= offset + m.start() and offset + m.end() <= grand.end:
                continue  # a grand total's own words ("Total with tip"): the total, no tip
            phrase = normalise_phrase(m.group())  # the phrase nearest the number wins
        if phrase is None and self.amounts[ai].value < 0:
            # "EMPLOYEE DISC 10%  -2.00", "DESC. CLUB DIA  -1,43": a discount's short word
            # before a figure taken off (before one added it is an item's: "DISC BRAKE CLEANER")
            short = [*self.lexicon.discount_column_re.finditer(before)]
            phrase = normalise_phrase(short[-1].group()) if short else None
        rate_base = self.lexicon.rate_base_re.search(before) is not None or self.assignment.per_rate[ai]
        self._phrases[ai] = (phrase, rate_base)
        return phrase, rate_base

    def _hands_phrase_on(self, ai: int) -> bool:
        """Whether amount ai is a rate's base whose phrase is the next figure's on its line,
        that figure having no phrase of its own ("Sondernachlass 10% von 147,30  -14,73")."""
        phrase, rate_base = self._phrase_before(ai)
        return (
            phrase is not None
            and rate_base
            and ai + 1 < len(self.amounts)
            and self.lines.line_of(self.amounts[ai + 1].start) == self.lines.line_of(self.amounts[ai].start)
            and self._phrase_before(ai + 1)[0] is None
        )

    def _heading(self, ai: int, longest: int = 0) -> str:
        """The line before amount ai's (the first on its line) when it holds no figure and
        is short (`longest` characters at most, _MAX_HEADING unless given, a layout's run of
        blanks counting as one: `laid_out_length`): a word alone
        over its figure ("Übertrag" over "2 900,00", "DISCOUNT" over "4"), as a label alone
        on its line names the figure below it. Else ""."""
        line = self.lines.line_of(self.amounts[ai].start)
        if line == 0 or (ai > 0 and self.lines.line_of(self.amounts[ai - 1].start) == line - 1):
            return ""
        s, e = self.lines.bounds(line - 1)
        e = self._before_closing_date(s, e)
        heading = self.text[s:e].strip()
        return heading if laid_out_length(heading) <= (longest or _MAX_HEADING) else ""

    def _before_closing_date(self, s: int, e: int) -> int:
        """Where the line [s, e) ends once a date closing it is cut off: a payment's date
        beside its phrase ("Advance : 2022-01-15" over the figure paid) dates the figure
        below, it does not lengthen the heading."""
        if self._date_starts is None:
            self._date_starts = [d.start for d in self.date_mentions]
        k = bisect_right(self._date_starts, e) - 1
        if k >= 0:
            mention = self.date_mentions[k]
            if mention.start > s and not self.text[mention.end : e].strip():
                return s + len(self.text[s : mention.start].rstrip(" \t:"))
        return e

    def _footing(self, ai: int) -> str:
        """The line that captions amount ai (`caption_line`) when it is short. Else ""."""
        line = caption_line(self.text, self.amounts, self.lines, ai)
        if line is None:
            return ""
        s, e = self.lines.bounds(line)
        footing = self.text[s:e].strip()
        return footing if laid_out_length(footing) <= _MAX_HEADING else ""

    def page_of(self, pos: int) -> int:
        """Which page pos is on (0 when the text marks no pages)."""
        if self._page_starts is None:
            lines = self.lines
            self._page_starts = [
                lines.starts[lines.line_of(m.start())] for m in self.lexicon.page_mark_re.finditer(self.given)
            ]
        return bisect_right(self._page_starts, pos)

    def says_tax_included(self) -> bool:
        """Whether a tax label is said to be included in the figures ("IVA incluido",
        "(tax included)", "inkl. MwSt"): then a gross subtotal may equal the total. A total's
        own label ("Total incl. VAT") says nothing of the other figures."""
        role, text, lexicon = self.lexicon.tax_sum_role, self.text, self.lexicon
        for m in label_matches(text, lexicon):  # as written: "com IVA incluido" names no tax, but says it
            if included_tax_at_its_rate(text, m, label_key(m, lexicon), lexicon):
                return True  # "Including VAT 20%  £22.19"
            if lexicon.role_of_label.get(label_key(m, lexicon)) != role:
                continue
            line_start = self.lines.bounds(self.lines.line_of(m.start()))[0]
            before = text[max(line_start, m.start() - QUALIFIER_REACH) : m.start()]
            after = text[m.end() : m.end() + QUALIFIER_REACH]
            if lexicon.tax_inclusive_re.search(before) or lexicon.tax_inclusive_after_re.match(after):
                return True
            if label_key(m, lexicon) in lexicon.tax_included_labels and _FIGURE_AFTER.match(text, m.end()):
                return True  # "(内消費税等 ¥75)": the tax within the figures (not an item's "(※ 内税)")
        return False

    def charge_label(self, ai: int) -> str | None:
        """The charge's phrase that labels amount ai outright, its line's words before it
        ending with the phrase (a colon or a currency may follow: "Delivery: € 200.00"), or
        None. Not a phrase read in prose ("Carriage paid by the seller.  70,00"), nor a
        deduction's (a paid or withheld sum may be the total or the tax as well)."""
        before = self.text[self._words_before(ai)[1] : self.amounts[ai].start]
        found = [*self.lexicon.adjustment_re.finditer(before)]
        if not found:
            return None
        phrase = normalise_phrase(found[-1].group())  # the nearest, as `_phrase_before` reads it
        tail = FILL_RUN_RE.sub(" ", before[found[-1].end() :])
        if (
            self.lexicon.adjustment_kind.get(phrase) != "charge"
            or CLAUSE_BREAK_RE.search(tail)
            or not only_currencies(tail.strip(" \t:="))
        ):
            return None  # not "free of charge.  200.00"
        return phrase

    def a_payment(self, ai: int) -> bool:
        """Whether the adjustment at amount ai is a payment: every adjustment phrase before
        it on its line is one of the lexicon's payments ("Discount card -1.50" is a
        discount; a phrase that may go either way says nothing: "Deposit paid" is paid), or,
        with none there (its phrase over it), its own phrase is."""
        start = self.lines.bounds(self.lines.line_of(self.amounts[ai].start))[0]
        said = [
            phrase
            for m in self.lexicon.adjustment_re.finditer(self.text, start, self.amounts[ai].start)
            # "less" says the phrase after it is deducted ("Less Amount Paid"), no more
            if not self.lexicon.adjustment_in_label_re.fullmatch(phrase := normalise_phrase(m.group()))
            and self.lexicon.adjustment_kind.get(phrase) != "either"
        ] or [self.context(ai).adjustment or ""]
        return all(phrase in self.lexicon.payments for phrase in said)

    def _a_discount(self, ai: int) -> bool:
        """Whether amount ai is a labelled discount off the price: a deduction, neither a
        payment nor a tax withheld."""
        phrase = self.context(ai).adjustment
        return (
            phrase is not None
            and self.lexicon.adjustment_kind.get(phrase) == "deduction"
            and phrase not in self.lexicon.withholdings
            and not self.a_payment(ai)
        )

    def _totals_before_deductions(self) -> None:
        """A figure a total's label names, then labelled discounts, then the figure they
        leave under a total's or a net's label, with nothing labelled after it but that
        figure again ("Gross Amount 3,298.00", "Discount -329.80", "Net Amount 2,968.20", as South
        Asian tills print them; "Gross Total" / "Discount" / "Total"): the first is the sum
        before its discounts, no total (nor a subtotal: one may stand before it, "Subtotal"
        / "VAT" / "Total" / "Discount" / "Amount payable"), and the last is the document's
        total. Not a payment's line, a change's or a figure of nothing left ("CREDIT CARD
        20.00", "CHANGE 0.00"), and no charge (a late payment's surcharge is owed only
        after the due date)."""
        lexicon, roles, amounts = self.lexicon, self.roles, self.amounts
        for first, am in enumerate(amounts):
            role = roles[first]
            if role not in lexicon.grand_roles or am.value <= 0 or not CENTS_RE.search(am.raw):
                continue
            then, discounts = first + 1, Decimal(0)
            while then < len(amounts) and roles[then] is None and self._a_discount(then):
                discounts += abs(amounts[then].value)
                then += 1
            if not discounts or then >= len(amounts):
                continue
            left = amounts[then]
            if (
                roles[then] not in (role, lexicon.goods_role)
                or left.value <= 0
                or not CENTS_RE.search(left.raw)
                or self.lines.line_of(left.start) == self.lines.line_of(amounts[then - 1].start)
                or abs(am.value - discounts - left.value) >= CENT
                # nothing labelled after it but the same figure again: no tax or charge on
                # top of it ("Taxable Amount 900.00 / CGST / SGST / Bill Amount")
                or any(
                    roles[k] is not None and (roles[k] != role or amounts[k].value != left.value)
                    for k in range(then + 1, len(amounts))
                )
            ):
                continue
            roles[first], roles[then] = None, role
            return

    def _listing(self, ai: int, phrase: str) -> str:
        """Amount ai, labelled by an adjustment's phrase, as the adjustments list it
        ("discount -1.50")."""
        return f"{phrase} {self.amounts[ai].raw}"

    def adjustments_listed(self, listed: list[str]) -> list[int]:
        """The amounts of the adjustments `listed` names, as adjustments and
        difference_made_of list them, wherever each stands."""
        return [
            ai
            for ai in range(len(self.amounts))
            if (phrase := self.context(ai).adjustment) is not None and self._listing(ai, phrase) in listed
        ]

    def adjustment_figures(self) -> Iterator[tuple[int, Decimal, str, str]]:
        """(amount index, worth, kind, phrase) of each figure a charge's or deduction's
        phrase labels, in the text's order."""
        for ai, am in enumerate(self.amounts):
            phrase = self.context(ai).adjustment
            cents = to_cents(abs(am.value))
            if phrase is not None and cents is not None and cents != 0:
                yield ai, cents, self.lexicon.adjustment_kind.get(phrase, "either"), phrase

    def adjustments(self) -> list[tuple[Decimal, str, str]]:
        """(amount, kind, phrase) of every labelled charge or deduction, each once."""
        if self._adjustments is not None:
            return self._adjustments
        seen: dict[tuple[Decimal, str], tuple[Decimal, str, str]] = {}
        for ai, cents, kind, phrase in self.adjustment_figures():
            seen.setdefault((cents, kind), (cents, kind, self._listing(ai, phrase)))
            if len(seen) >= _MAX_ADJUSTMENTS:
                break
        self._adjustments = list(seen.values())
        return self._adjustments

    def adjustment_sums(self, either_way: bool) -> dict[Decimal, list[str]]:
        if either_way not in self._adjustment_sums:
            self._adjustment_sums[either_way] = adjustment_sums(self.adjustments(), either_way=either_way)
        return self._adjustment_sums[either_way]


_MAX_PHRASE_HITS = 100
# A label's wrapped part: its own cell, no more than a few blanks right of the first part's
_WRAP_INDENT = 4
_MAX_WRAPPED_PART = 32
# Where a label breaks off mid-phrase at its line's end ("Shipping &", "Fees -")
_JOINING_ENDS = ("&", "+", "/", "-", "\u2013", ",")
_MINUS = frozenset("-\u2212\u2013")
# A figure right after a label on its line: "内消費税等 ¥75", "内税：¥1,000"
_FIGURE_AFTER = re.compile(r"[ \t]*[:：]?[ \t]*[¥￥$€£]?[ \t]*[0-9]")
_MAX_HEADING = 30
_MAX_NAMED_HEADING = 60  # a charge's kind with its name ("Zuschlag: Standard Shipping Fee")


# A letter or digit of a script written with spaces between words. A phrase in such a
# script ends where none follows: Chinese, Japanese, Korean and Thai write their words
# together, so "PayPay支払" holds "paypay". A phrase in one of those scripts ends at any
# letter ("非现金支付", non-cash, holds no "现金").
_SPACED_WORD_CHAR = rf"[^\W_{UNSPACED_SCRIPTS}]"
_SPACED_WORD_CHAR_RE = re.compile(_SPACED_WORD_CHAR)


def _edge(char: str) -> str:
    """What may not stand beside a phrase's end that is `char`."""
    return _SPACED_WORD_CHAR if _SPACED_WORD_CHAR_RE.match(char) else r"[^\W_]"


@lru_cache(maxsize=1024)
def _phrases_re(phrases: tuple[str, ...]) -> re.Pattern[str]:
    alternation = "|".join(
        rf"(?<!{_edge(p[0])}){phrase_pattern(p)}(?!{_edge(p[-1])})" for p in sorted(phrases, key=len, reverse=True)
    )
    return re.compile(rf"(?:{alternation})", re.IGNORECASE)


# A number as written: digits, with dots, commas, apostrophes or no-break spaces
# between groups (a plain space would join two numbers of a table row).
_NUMBER_RE = re.compile(r"(?<![0-9])[0-9]{1,15}(?:[.,'\u2019\u00a0\u202f][0-9]{1,3})*(?![0-9])")
_MAX_NUMBERS = 100_000
_BARE_FRACTION_RE = re.compile(r"(?<![^\s$])\.[0-9]{1,3}(?![0-9.,])")
_SPACED_THOUSANDS_RE = re.compile(r"(?<![0-9.,])[1-9][0-9]{0,2}(?: [0-9]{3})+(?:[.,][0-9]{1,2})?(?![0-9]|[.,][0-9])")


def _number_index(text: str, dates: list[tuple[int, int]]) -> dict[Decimal, list[tuple[int, int]]]:
    """Every number in the text by its value, but those inside a date and codes with a
    leading zero ("02"). A lone comma or dot may be a decimal separator or group
    thousands ("1.500"), so such a number is indexed both ways."""
    index: dict[Decimal, list[tuple[int, int]]] = {}
    date_starts = [s for s, _ in dates]
    for count, m in enumerate(_NUMBER_RE.finditer(text)):
        if count >= _MAX_NUMBERS:
            break
        token = m.group()
        if len(token) > 1 and token[0] == "0" and token[1].isdigit():
            continue
        k = bisect_right(date_starts, m.start()) - 1
        if k >= 0 and dates[k][1] > m.start():
            continue
        readings = set()
        parsed = parse_amount(token)
        if parsed is not None:
            readings.add(parsed)
        if token.count(",") + token.count(".") == 1 and not any(c in token for c in "'\u2019\u00a0\u202f"):
            try:
                readings.add(Decimal(token.replace(",", ".")))
            except ArithmeticError:
                pass
        for value in readings:
            index.setdefault(value.normalize(), []).append(m.span())
    # "12 000": thousands grouped by plain spaces, read whole as well as digit by digit
    for m in _SPACED_THOUSANDS_RE.finditer(text):
        index.setdefault(Decimal(m.group().replace(" ", "").replace(",", ".")).normalize(), []).append(m.span())
    # ".75": a fraction as US prints write it, with no zero before its point
    for m in _BARE_FRACTION_RE.finditer(text):
        index.setdefault(Decimal("0" + m.group()).normalize(), []).append(m.span())
    return index


def adjustment_sums(adjustments: list[tuple[Decimal, str, str]], *, either_way: bool) -> dict[Decimal, list[str]]:
    """Every sum some of the labelled charges / deductions make (a charge adds, a
    deduction subtracts), each with the fewest phrases. either_way, for a difference
    whose direction is unknown, keys each sum by its size, and also takes them all as
    adding up: a discount less a charge ("Nachlass -14,00", "Zuschlag 0,50": 13,50
    between the net of the lines and the net after them) as well as the two together."""
    sums: dict[Decimal, list[str]] = {}
    for size in range(1, len(adjustments) + 1):
        for combo in combinations(adjustments, size):
            options = [
                (value,) if kind == "charge" else (-value,) if kind == "deduction" else (value, -value)
                for value, kind, _ in combo
            ]
            totals = [sum(signs, Decimal(0)) for signs in product(*options)]
            if either_way:
                totals = [abs(total) for total in totals] + [sum((value for value, _, _ in combo), Decimal(0))]
            for total in totals:
                sums.setdefault(total, [phrase for _, _, phrase in combo])
    return sums


def difference_made_of(src: Source, diff: Decimal, *, either_way: bool, kind: str | None = None) -> list[str] | None:
    """The labelled charges / deductions (only those of `kind`, when given) that make up
    diff, or None."""
    target = to_cents(abs(diff) if either_way else diff)
    if target is None:
        return None
    sums = (
        src.adjustment_sums(either_way)
        if kind is None
        else adjustment_sums([a for a in src.adjustments() if a[1] == kind], either_way=either_way)
    )
    for near in (target, target - CENT, target + CENT):
        if near in sums:
            return sums[near]
    return None


_SYMBOLS: dict[str, str | None] = {
    **{sym: c for sym, c in UNAMBIGUOUS_SYMBOLS.items()},
    **{sym: None for sym in AMBIGUOUS_SYMBOLS},
}
_SYMBOL_RE = re.compile("|".join(re.escape(x) for x in SYMBOLS_LONGEST_FIRST))
# What may not follow a sign with a slash ("S/", "B/."): a letter, or digits and a slash
_SLASHED_SYMBOL_TAIL_RE = re.compile(r"[^\W\d_]|[0-9]+/")
_CUR_WORDS: dict[str, str | None] = {**CURRENCY_WORDS, "dollar": None, "dollars": None}
_CUR_WORD_RE = re.compile(
    r"(?<![^\W\d_])(?:"
    + "|".join(phrase_pattern(w) for w in sorted(_CUR_WORDS, key=len, reverse=True))
    + r")(?![^\W\d_])",
    re.IGNORECASE,
)
_CAPS3_RE = re.compile(r"[A-Z]{3}")
_CUR_WORD_AFTER_A_SUM_RE = re.compile(
    r"[0-9][.,][0-9]{2}[ \t\u00a0]?((?i:" + "|".join(map(re.escape, CURRENCY_WORDS_AFTER_A_SUM)) + r"))(?![^\W\d_])"
)
_MALAYSIAN_COMPANY_BEFORE = re.compile(r"(?i)(?<![^\W\d_])sdn\.?[ \t]*$")
# "MODA CAD. NO:45", "ATATÜRK CAD. 12": a Turkish street's "Caddesi" before its number
_STREET_NUMBER_AFTER = re.compile(r"\.[ \t]*N[Oo][:.]?[ \t]*[0-9]")
# A code not in capitals ("Eur", "usd") is a currency only right next to a sum with
# cents ("12,50 Eur", "usd 40.00"): elsewhere it may be a word ("all 3", "try 2").
_CODE_WORD_RE = re.compile(
    r"(?<=[0-9][.,][0-9]{2})[ \t]?([A-Za-z]{3})(?![^\W\d_])|(?<![^\W\d_])([A-Za-z]{3})(?=[ \t]?[0-9])"
)
_CENTS_AFTER_RE = re.compile(r"[ \t]?[0-9][0-9.,' ]{0,15}?[.,][0-9]{2}(?![0-9])")
# A currency written as one capital glued to a sum with cents: the rand ("R79.97", "R6
# 450.00"), the naira where a till's font lacks "₦" ("N1,162.50"), the peso of the
# Philippines (or Botswana's pula) for "₱" ("P1,250.00"); set apart ("Latte R 4.25", a
# regular size) or anywhere else it is a letter (amounts.GLUED_LETTER_SIGNS)
_GLUED_LETTER_RE = re.compile(
    r"(?<![^\W\d_])([" + "".join(GLUED_LETTER_SIGNS) + r"])(?=[0-9])(?=" + _CENTS_AFTER_RE.pattern + ")"
)
_CUR_FIRST_WORDS = frozenset(first_word(w) for w in _CUR_WORDS)
_MAX_CURRENCY_HITS = 1000


def _letter(text: str, i: int) -> bool:
    return 0 <= i < len(text) and text[i].isalpha()


@dataclass
class CurrencyHit:
    start: int
    end: int
    codes: frozenset[str]
    strong: bool  # names exactly one currency


# A shared symbol whose one currency the document's own script or tax word names: "¥"
# beside kana or Japanese invoice words (請求, 消費税) is the yen, beside Chinese tax words
# (发票, 增值税) the yuan; "kr" beside Norway's "MVA",
# beside "moms" and Danish (æ, ø, "at betale") or Swedish (ä, ö, "att betala") writing,
# beside Iceland's "VSK".
_JAPANESE_RE = re.compile(r"[\u3040-\u30ff]|消費税|請求|領収|税込|税抜|御中")
_CHINESE_TAX_RE = re.compile(r"人民币|发票|增值税|税额|价税合计|元")
_NORWEGIAN_TAX_RE = _phrases_re(("mva", "merverdiavgift"))
_ICELANDIC_TAX_RE = _phrases_re(("vsk",))
_MOMS_RE = _phrases_re(("moms",))
_DANISH_WRITING = (re.compile("[æøÆØ]"), _phrases_re(("at betale", "i alt")))
_SWEDISH_WRITING = (re.compile("[äöÄÖ]"), _phrases_re(("att betala",)))
# "DH" beside French tax words is Morocco's dirham, beside the Emirates' tax number theirs
# (Morocco's company number "ICE" in capitals before its digits: "Ice cream" is no tax word)
_MOROCCAN_TAX_RE = re.compile(
    r"(?i:(?<![^\W_])(?:tva|ttc)(?![^\W_]))|(?<![^\W_])ICE[ \t]*(?:N[°º]|No\.?)?[ \t]*:?[ \t]*[0-9]"
)
_EMIRATI_TAX_RE = _phrases_re(("trn", "vat"))


def _named_by_script(text: str, codes: frozenset[str]) -> str | None:
    if codes == AMBIGUOUS_SYMBOLS["¥"]:
        if _JAPANESE_RE.search(text):
            return "JPY"
        return "CNY" if _CHINESE_TAX_RE.search(text) else None
    if codes == AMBIGUOUS_SYMBOLS["kr"]:
        if _NORWEGIAN_TAX_RE.search(text):
            return "NOK"
        if _ICELANDIC_TAX_RE.search(text):
            return "ISK"
        if _MOMS_RE.search(text):
            danish, swedish = (any(r.search(text) for r in writing) for writing in (_DANISH_WRITING, _SWEDISH_WRITING))
            if danish != swedish:
                return "DKK" if danish else "SEK"
    if codes == AMBIGUOUS_SYMBOLS["DH"]:
        moroccan, emirati = _MOROCCAN_TAX_RE.search(text) is not None, _EMIRATI_TAX_RE.search(text) is not None
        if moroccan != emirati:
            return "MAD" if moroccan else "AED"
    return None


def currency_hits(text: str) -> list[CurrencyHit]:
    hits: list[CurrencyHit] = []
    for m in _CAPS3_RE.finditer(text):
        if m.group() == "BHD" and _MALAYSIAN_COMPANY_BEFORE.search(text, max(0, m.start() - 8), m.start()):
            continue  # "SDN. BHD.": a Malaysian company's "Berhad", not Bahrain's dinar
        if m.group() == "CAD" and _STREET_NUMBER_AFTER.match(text, m.end()):
            continue
        if m.group() in ISO_4217 and not _letter(text, m.start() - 1) and not _letter(text, m.end()):
            hits.append(CurrencyHit(m.start(), m.end(), frozenset({m.group()}), True))
            if len(hits) >= _MAX_CURRENCY_HITS:
                break
    for m in _CODE_WORD_RE.finditer(text):
        group = 1 if m.group(1) else 2
        written = m.group(group)
        if (
            not written.isupper()
            and written.upper() in ISO_4217
            and (group == 1 or _CENTS_AFTER_RE.match(text, m.end(group)))
        ):
            hits.append(CurrencyHit(m.start(group), m.end(group), frozenset({written.upper()}), True))
            if len(hits) >= 2 * _MAX_CURRENCY_HITS:
                break
    for m in (*_GLUED_LETTER_RE.finditer(text), *SPACED_LETTER_SIGN_RE.finditer(text)):
        codes = GLUED_LETTER_SIGNS[m.group(1)]
        hits.append(CurrencyHit(m.start(1), m.end(1), codes, len(codes) == 1))
    named_by_script: dict[str, str | None] = {}
    for m in _SYMBOL_RE.finditer(text):
        sym = m.group()
        if sym[0].isalpha() and _letter(text, m.start() - 1):
            continue
        if sym[-1].isalpha() and _letter(text, m.end()):
            continue
        if "/" in sym and _SLASHED_SYMBOL_TAIL_RE.match(text, m.end()):
            continue  # "S/N 12345", "S/2024/17": a serial number's or a reference's slash
        code = _SYMBOLS[sym]
        if code is None and sym not in named_by_script:
            named_by_script[sym] = _named_by_script(text, AMBIGUOUS_SYMBOLS[sym])
        code = code or named_by_script[sym]
        if code is not None:
            hits.append(CurrencyHit(m.start(), m.end(), frozenset({code}), True))
        else:
            hits.append(CurrencyHit(m.start(), m.end(), AMBIGUOUS_SYMBOLS[sym], False))
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
            hits.append(CurrencyHit(word.start(), word.end(), frozenset({code}), True))
        elif key in ("dollar", "dollars"):
            hits.append(CurrencyHit(word.start(), word.end(), AMBIGUOUS_SYMBOLS["$"], False))
        if len(hits) >= 3 * _MAX_CURRENCY_HITS:
            break
    for m in _CUR_WORD_AFTER_A_SUM_RE.finditer(text):
        hits.append(
            CurrencyHit(m.start(1), m.end(1), frozenset({CURRENCY_WORDS_AFTER_A_SUM[m.group(1).casefold()]}), True)
        )
    hits.sort(key=lambda h: h.start)
    return hits
