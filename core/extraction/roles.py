"""Which role (an amount field: total, subtotal, tax) each amount in a source plays,
read from the labels a lexicon lists: the nearest label before it on its line, a
label right after it that no later number owns, or a column header above it. The
same labels, read for a date or an identifier, say which value it is (LabelIndex)."""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from decimal import Decimal

from vetq.core.extraction.amounts import CENT, CENTS_RE, AmountMention, currency_beside
from vetq.core.extraction.currencies import CURRENCY_WORDS, ISO_4217, SYMBOLS_LONGEST_FIRST
from vetq.core.extraction.lexicon import (
    MAX_FIRST_WORD_CHARS,
    NUMBERS_DATED_AFTER,
    VALUE_LABEL_SETS,
    WORD_RE,
    Lexicon,
    normalise_phrase,
)

__all__ = [
    "CLAUSE_BREAK_RE",
    "COLUMN_LOOKUP_LINES",
    "FILL_RUN_RE",
    "LABEL_AFTER_WINDOW",
    "LABEL_BEFORE_WINDOW",
    "MAX_LABELS",
    "RATE_RE",
    "Label",
    "LabelIndex",
    "Lines",
    "RoleAssignment",
    "assign_roles",
    "find_labels",
    "laid_out_length",
    "only_currencies",
    "reach_start",
]

LABEL_BEFORE_WINDOW = 60
LABEL_AFTER_WINDOW = 20
COLUMN_LOOKUP_LINES = 3
_MAX_STACK = 12  # the most cells of a row written one per line that are paired in order
MAX_LABELS = 100_000
_MAX_COLUMN_LINE = 2000
_LONG_LINE_REACH = 120  # on a line longer than that, how far before a label its context is read
CLAUSE_BREAK_RE = re.compile(r"[,;]|\.(?![0-9])")
_BLANK_RUN_RE = re.compile(r"[ \t]{2,}")
# what fills the room between a label and its right-aligned figure: blanks, or leader dots
# ("Gesamtsumme ........ 675,00")
FILL_RUN_RE = re.compile(r"[ \t]{2,}|(?:[ \t]*\.){3,}[ \t]*")
_CELL_RE = re.compile(r"\S+(?:[ \t]\S+)*")


def _cells(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """A line's cells: its text between runs of two blanks or more."""
    if end - start > _MAX_COLUMN_LINE:
        return []
    return [m.span() for m in _CELL_RE.finditer(text, start, end)]


def _shows_columns(text: str, start: int, end: int) -> bool:
    """Whether the line's positions mean columns: it has two cells or more, or its one cell
    stands indented (`_indented_alone`)."""
    return len(_cells(text, start, end)) > 1 or _indented_alone(text, start, end)


def _indented_alone(text: str, start: int, end: int) -> bool:
    """Whether the line holds one cell set in from the margin, as a converter that keeps
    the page's layout places a lone label or figure under its column ("VALOR TOTAL DO
    SERVIÇO" far right over "R$ 47,00"); text without a layout starts at the margin."""
    cells = _cells(text, start, end)
    return len(cells) == 1 and cells[0][0] - start >= 2


# Between a label and the value it names outright: its abbreviation's full stop, blanks and
# a colon, a number sign or a dash.
BARE_GAP = r"\.?[ \t]*[:#\-–]?[ \t]*"
# The words any date or number may be written after, labelling it as the document's own
# without saying what it is ("Date:", "No.", "Nr.", "vom", "del"), ending the text before it.
DATE_WORDS = r"(?:date|datum|fecha|data|dato|日付|дата)"
NUMBER_WORDS = r"(?:(?<![^\W\d_])(?:no|nr|nro|num|number|nummer|numero|número|numer|n\.?[°º])|[#№])"
# The words that date a number before them ("Nr. 471113 vom 13.06.2018", "PO 4500123 dated")
DATING_WORDS = r"(?:dated|vom|del|du|dd|от|від|z[ \t]+dnia|ze[ \t]+dne)"
GENERIC_LABEL_BEFORE = {
    "date": re.compile(rf"(?i)(?<![^\W\d_])(?:{DATE_WORDS}|{DATING_WORDS}){BARE_GAP}$"),
    "identifier": re.compile(rf"(?i){NUMBER_WORDS}{BARE_GAP}$"),
}
# A label's colon with a value after it on its line ("VAT no.: DE XXX XXX XXX", "Tel :
# test@test.in", "Company Number / Trade License Number: X.XXX"): the label names that
# value, even one with no digit, and heads no column; nor, where a cell ends after it
# ("Terms: Due upon receipt    ", "Fälligkeit: sofort   "), one further along its line.
# The colon is the label's own: after words of its cell, or blanks alone ("Invoice Date
# : 01/02"), not another cell's ("Issue date      Invoice currency: EUR").
_COLON_VALUE = r"(?:[^:\s]|[ \t](?![ \t]))*[ \t]*:[ \t]*[^\s:]"
_NAMED_AFTER_COLON = re.compile(_COLON_VALUE)
_OWN_VALUE_THEN_CELL = re.compile(_COLON_VALUE + r"[^\n]*?(?:  |\t)")
# Between two labels naming one value: "Invoice Date (Tax Point)", "Datum vystavení /
# DUZP", "Invoice date and tax point", "Data wystawienia i data sprzedaży".
_LABEL_JOIN = re.compile(r"[ \t]*(?:[/(&=+]|(?i:and|und|et|y|e|i|a|og|och|en))[ \t]*")
# Between a number's label and a date: the number, then a word that dates it
# ("Lieferschein Nr. LS-4471 vom ", "Your PO 4500123 dated ").
_NUMBER_THEN_DATING = re.compile(rf"(?i){BARE_GAP}[^\s]*[0-9][^\s]*[ \t]+{DATING_WORDS}{BARE_GAP}")
# A word joined before a label that shares the label's last part ("Rechnungs-/Lieferdatum",
# "Rechnungs- und Lieferschein-Nr.", "Invoice / Delivery date"): the word, its hyphen. One
# blank at most on either side of the join, a word joining with blanks around it: a
# column's gap or a word's last letter ("DATE OF ISSUE  DUE DATE") joins nothing.
_SHARED_TAIL_WORD = re.compile(
    r"(?<![\w-])(\w+)(-?)(?:[ \t]?[/&+]|[ \t](?i:and|und|u\.|et|y|e|i|og|och|en)(?=[ \t]))[ \t]?\Z"
)


def _within_label_reach(gap: str) -> bool:
    """Whether a label reaches a value `gap` after it on its line: a run of blanks or of
    leader dots counts as one, so a right-aligned figure is as near its label as a close
    one ("Summe Umsatzsteuer" and, across the page, "2.382,00")."""
    return laid_out_length(gap) <= LABEL_BEFORE_WINDOW


def laid_out_length(text: str) -> int:
    """How long `text` reads, a run of blanks or of leader dots counting as one character:
    a layout's widths say where a cell stands, not how far apart its words are."""
    return len(FILL_RUN_RE.sub(" ", text))


def reach_start(text: str, lo: int, end: int) -> int:
    """Where the words a label may stand in before `end` begin, no earlier than `lo`: the
    label window, a run of blanks or of leader dots counting as one character, as in
    `_within_label_reach` (a converter that keeps the page's widths sets a figure 75 blanks
    right of its phrase: "Offene Zahlungen" ... "220,00")."""
    if end - lo <= LABEL_BEFORE_WINDOW:
        return lo
    # read back from `end` over a stretch a few windows long, longer only while the runs
    # of blanks in it leave the window reaching its start: linear on a long line
    span = 4 * LABEL_BEFORE_WINDOW
    while True:
        start = max(lo, end - span)
        budget, pos, found = LABEL_BEFORE_WINDOW, end, None
        for run in reversed(list(FILL_RUN_RE.finditer(text, start, end))):
            if pos - run.end() >= budget:
                found = pos - budget
                break
            budget -= pos - run.end() + 1
            if budget == 0:
                found = run.start()
                break
            pos = run.start()
        if found is None:
            found = max(start, pos - budget)
        if found > start or start == lo:
            return found
        span *= 4


@dataclass(frozen=True)
class Label:
    start: int
    end: int
    role: str
    trailing: bool = False  # a phrase that usually follows its number ("before tax")
    grand: bool = False  # names the document's grand total ("Total TTC", "VALOR TOTAL DA NOTA")


class Lines:
    """A text's line index: the line a position is on, a line's bounds and cells, a column."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def line_of(self, pos: int) -> int:
        return bisect_right(self.starts, pos) - 1

    def bounds(self, idx: int) -> tuple[int, int]:
        s = self.starts[idx]
        e = self.starts[idx + 1] - 1 if idx + 1 < len(self.starts) else len(self.text)
        return s, e

    def column(self, line_start: int, pos: int) -> int:
        seg = self.text[line_start:pos]
        return len(seg.expandtabs(8)) if "\t" in seg else len(seg)

    def cells(self, idx: int) -> list[tuple[int, int]]:
        """Line idx's cells: its text between runs of two blanks or more."""
        return _cells(self.text, *self.bounds(idx))

    def cell_in_column(self, idx: int, column: int) -> tuple[int, int] | None:
        """The first cell of line idx that starts in `column` (characters from the line's
        start, one either way), or None; None for a line the text does not have."""
        if not 0 <= idx < len(self.starts):
            return None
        return next((cell for cell in self.cells(idx) if abs(cell[0] - self.starts[idx] - column) <= 1), None)


def label_matches(text: str, lexicon: Lexicon) -> Iterator[re.Match[str]]:
    """Label matches, found by scanning words and matching anchored (fast on big text)."""
    pos = 0
    count = 0
    for w in WORD_RE.finditer(text):
        if (
            w.start() < pos
            or w.end() - w.start() > MAX_FIRST_WORD_CHARS
            or w.group().casefold() not in lexicon.label_first_words
        ):
            continue
        m = lexicon.label_re.match(text, w.start())
        if m is not None:
            yield m
            pos = m.end()
            count += 1
            if count >= MAX_LABELS:
                return


# The rate an Indian GST part's name carries glued ("CGST9", "SGST2.5": Zoho's tax groups).
_GLUED_GST_RATE = re.compile(r"(?<=gst)[0-9]{1,2}(?:\.[0-9])?$")


def label_key(match: re.Match[str], lexicon: Lexicon) -> str:
    """The lexicon's phrase a label match is ("MwSt." is "mwst" where only that is listed)."""
    key = normalise_phrase(match.group())
    return key if key in lexicon.role_of_label else _GLUED_GST_RATE.sub("", key).rstrip(".")


# A legal reference before a word ("art. 106na ust. 1", "art. 43 ust. 1 pkt 37"): the word
# is the reference's paragraph ("ust." is Polish "ustęp"), not an amount's label.
_LEGAL_REFERENCE_BEFORE = re.compile(
    r"(?<![^\W_])(?:art|artt|artículo|articolo|artigo|article)\.?[ \t]*[0-9]+[^\W\d_]{0,3}[ \t,]*$", re.IGNORECASE
)


def find_labels(text: str, lexicon: Lexicon) -> list[Label]:
    """Every role label in text, in order. A total label qualified as the goods' sum
    ("VALOR TOTAL DOS PRODUTOS", "Merchandise total") takes the goods' role (the
    subtotal's), or is none; one qualified as the document's ("TOTAL DA NOTA") is grand."""
    labels: list[Label] = []
    in_its_own_cell: list[Label] = []
    after_the_tax: list[int] = []  # goods' sums right under the tax's line, as total labels
    line_start, line_end, seen = 0, -1, 0
    for m in label_matches(text, lexicon):
        # the label's line, found once per line (a text flattened to one long line would
        # cost a scan of it per label)
        newline = text.rfind("\n", seen, m.start())
        seen = m.start()
        if newline >= 0 or line_end < 0:
            line_start = newline + 1 if newline >= 0 else 0
            found = text.find("\n", m.start())
            line_end = len(text) if found < 0 else found
        # what is read before the label: its line, or on a line too long for columns the
        # last characters before it
        before = (
            line_start if line_end - line_start <= _MAX_COLUMN_LINE else max(line_start, m.start() - _LONG_LINE_REACH)
        )
        column_word = lexicon.column_word_before_re.search(text, before, m.start())
        own_cell = column_word is not None and _ends_the_label_before(text, column_word, m.end(), labels)
        if (
            _in_address(text, m.start())
            or (column_word is not None and not own_cell)
            or _LEGAL_REFERENCE_BEFORE.search(text, before, m.start())
            # "Single price: €84.03 net / €100.00 gross": a unit price's net and gross
            or (_unit_price_line(text, line_start, lexicon) and any(c.isdigit() for c in text[before : m.start()]))
        ):
            continue
        key = label_key(m, lexicon)
        role = lexicon.role_of_label.get(key)
        if not role:
            continue
        if role in lexicon.grand_roles and _in_a_tip_guide(text, line_start, m.start(), lexicon):
            continue
        grand = key in lexicon.grand_total_labels
        if key in lexicon.goods_sum_labels and _qualified_as_goods(text, m.start(), m.end(), lexicon):
            if not own_cell and _right_under_a_tax_label(text, labels, m.start(), lexicon):
                # "IVA 22%  440,00" over "Totale compensi  2.440,00": the sum after the
                # tax, unless a total's label comes after it ("Merchandise total" before
                # "Shipping" and "Total")
                after_the_tax.append(len(labels))
            elif lexicon.goods_role is None:
                continue
            else:
                role, grand = lexicon.goods_role, False
        elif key in lexicon.tax_sum_labels and lexicon.tax_sum_after_re.match(text, m.end()):
            if lexicon.tax_sum_role is None:
                continue
            role = lexicon.tax_sum_role  # "VALOR TOTAL DO IPI": the tax's sum
        elif key in lexicon.net_labels and (rounded := _rounded_total_role(text, line_start, key, lexicon)):
            role, grand = rounded, True  # "Rounding Adj -0.02" / "NET TOTAL (RM) 83.70": the rounded total
        elif role == lexicon.tax_sum_role and lexicon.tax_free_after_re.match(text, m.end()):
            continue  # "GST-free supplies", "MwSt-frei": a category free of the tax, no tax
        elif role in lexicon.grand_roles and lexicon.deduction_sum_after_re.match(text, m.end()):
            continue  # "Total das Retenções", "Total Deduções": deductions' sum, no total
        elif lexicon.tax_sum_role is not None and included_tax_at_its_rate(text, m, key, lexicon):
            role, grand = lexicon.tax_sum_role, False  # "Including VAT 20%  £22.19": the tax within the figures
        elif key in lexicon.grand_qualified_labels and lexicon.grand_after_re.match(text, m.end()):
            grand = True
        elif role == lexicon.tax_sum_role and lexicon.tax_inclusive_after_re.match(
            text[m.end() : m.end() + QUALIFIER_REACH]
        ):
            total_role = _total_word_role(key, lexicon)
            if total_role is not None:
                # "Total IVA incluido 1.210,00", "Toplam KDV Dahil": a total of the tax
                # said to include it is the document's total, not the tax's sum
                role, grand = total_role, True
        elif (
            role == lexicon.tax_sum_role
            and lexicon.tax_inclusive_re.search(text, max(line_start, m.start() - QUALIFIER_REACH), m.start())
            # "davon MwSt. gesamt", "Varav moms totalt": of which, the tax's total
            and not lexicon.cell_qualifier_re.search(text, max(line_start, m.start() - QUALIFIER_REACH), m.start())
        ):
            total_role = _total_word_role(key, lexicon, last=True)
            if total_role is not None:
                role, grand = total_role, True  # "Incl. GST Total  110.00": the total including the tax
        label = Label(m.start(), m.end(), role, key.startswith(lexicon.trailing_label_prefixes), grand)
        (in_its_own_cell if own_cell else labels).append(label)
    goods_sums = [k for k in after_the_tax if any(lb.role in lexicon.grand_roles for lb in labels[k + 1 :])]
    for k in goods_sums:
        if lexicon.goods_role is not None:
            labels[k] = replace(labels[k], role=lexicon.goods_role, grand=False)
    if lexicon.goods_role is None and goods_sums:
        dropped = set(goods_sums)
        labels = [lb for k, lb in enumerate(labels) if k not in dropped]
    # a label in its own cell after a column word stands only for a role no other label
    # names ("TOTAL BASE IMPONIBLE  TOTAL IVA REEMBOLSADO" in an annex, where the
    # invoice's "IVA 15%" names its tax)
    named = {lb.role for lb in labels}
    return sorted(labels + [lb for lb in in_its_own_cell if lb.role not in named], key=lambda lb: lb.start)


def _right_under_a_tax_label(text: str, labels: list[Label], start: int, lexicon: Lexicon) -> bool:
    """Whether the last label before `start` is the tax's, on its line or one of the two
    above: a total after the tax ("IVA 22%  440,00" over "Totale compensi  2.440,00") sums
    it in, whatever it is said to be the sum of."""
    return bool(labels) and labels[-1].role == lexicon.tax_sum_role and text.count("\n", labels[-1].end, start) <= 2


def _ends_the_label_before(text: str, column_word: re.Match[str], label_end: int, labels: list[Label]) -> bool:
    """Whether a column word before a label ending at `label_end` ends the label found
    before it, a cell of its own two blanks away ("Totale imponibile  Totale IVA" heading a
    row of sums): then it heads its own column, not the label's ("Imponibile IVA", "Taux
    TVA"). Not a label that runs across a column's gap itself ("IVA  Total")."""
    word_end = column_word.start() + len(column_word.group().rstrip(" \t:-("))
    return (
        bool(labels)
        and labels[-1].end == word_end
        and text.startswith("  ", word_end)
        and _BLANK_RUN_RE.search(text, column_word.end(), label_end) is None
    )


# A rate right after a label ("Including VAT 20%", "incl. GST (10%)")
_A_RATE_NEXT = re.compile(r"[ \t]*\(?[ \t]*[0-9]{1,2}(?:[.,][0-9]{1,3})?[ \t]?%")


def included_tax_at_its_rate(text: str, match: re.Match[str], key: str, lexicon: Lexicon) -> bool:
    """Whether a total's label that is an inclusion word and a tax's ("Including VAT",
    "incl. GST"), starting its line or its cell, has a rate right after it: it then names
    the tax within the figures at that rate ("Including VAT 20%  £22.19"), not the total
    including it."""
    inclusion = lexicon.tax_inclusive_after_re.match(key)
    return (
        inclusion is not None
        and lexicon.role_of_label.get(key) in lexicon.grand_roles
        and lexicon.role_of_label.get(key[inclusion.end() :].strip()) == lexicon.tax_sum_role
        and _A_RATE_NEXT.match(text, match.end()) is not None
        # starting its line or its cell: after a total's label it qualifies that total
        # ("Total payable incl. VAT 20%  1,200.00", "Total (incl. VAT 20%)")
        and not cell_before(text, match.start()).strip(" \t(*-\u2013")
    )


def cell_before(text: str, pos: int) -> str:
    """The words of the cell that `pos` ends or stands in, from its line's start or the last
    run of blanks before it (empty where `pos` starts a cell)."""
    return FILL_RUN_RE.split(text[text.rfind("\n", 0, pos) + 1 : pos])[-1]


# A tip guide's row carries its rate before its total ("18%: Tip $7.37, Total $51.70",
# "Add 20% tip ($8.10): total with tip $52.43"); a guide runs a few rows under its word.
_RATE_IN_ROW = re.compile(r"(?<![0-9.,])[0-9]{1,2}(?:[.,][0-9]{1,2})?[ \t]?%")
_TIP_GUIDE_LINES = 6


def _in_a_tip_guide(text: str, line_start: int, start: int, lexicon: Lexicon) -> bool:
    """Whether a label at `start` stands on a tip guide's row: a rate before it on its line,
    and a tip's word before it there or on the lines just above ("Suggested tip / 20%
    ($8.10)   Total $52.43": a suggestion, not the bill's total)."""
    if not _RATE_IN_ROW.search(text, line_start, start):
        return False
    above = line_start
    for _ in range(_TIP_GUIDE_LINES):
        if above == 0:
            break
        above = text.rfind("\n", 0, above - 1) + 1
    return lexicon.tip_guide_re.search(text, above, start) is not None


def _total_word_role(key: str, lexicon: Lexicon, *, last: bool = False) -> str | None:
    """The grand total's role when the label `key` starts (or, `last`, ends) with a word
    that is a total label of its own ("total iva", "toplam kdv"; "gst total"), else None."""
    word = key.rsplit(" ", 1)[-1] if last else key.split(" ", 1)[0]
    role = lexicon.role_of_label.get(word)
    return role if word != key and role in lexicon.grand_roles else None


def _rounded_total_role(text: str, line_start: int, key: str, lexicon: Lexicon) -> str | None:
    """The grand total's role for a net label with a total's word ("net total") on the line
    right under one that starts with a phrase rounding the total and holds its figure
    ("Rounding Adj  -0.02"), with no tax's label on the lines after it (a net before its
    tax: "Rounding -0.71" / "Net total 3,818.00" / "VAT 20%"), else None."""
    if line_start == 0:
        return None
    above = text.rfind("\n", 0, line_start - 1) + 1
    rounding = lexicon.rounding_re.match(
        text, above + len(text[above:line_start]) - len(text[above:line_start].lstrip())
    )
    if rounding is None or not any(c.isdigit() for c in text[rounding.end() : line_start]):
        return None
    role = next((r for w in key.split(" ") if (r := lexicon.role_of_label.get(w)) in lexicon.grand_roles), None)
    after = text.find("\n", line_start)
    following = text[after : after + _ROUNDED_TOTAL_REACH] if after >= 0 else ""
    if role is None or any(
        lexicon.role_of_label.get(label_key(m, lexicon)) == lexicon.tax_sum_role
        for m in label_matches(following, lexicon)
    ):
        return None
    return role


_ROUNDED_TOTAL_REACH = 240  # the lines after a rounded total where a tax's label would say it is a net


def _unit_price_line(text: str, line_start: int, lexicon: Lexicon) -> bool:
    """Whether the line starting at `line_start` gives a unit price ("Single price:",
    "Einzelpreis"): its figures and role words name no sum of the document."""
    return lexicon.unit_price_line_re.match(text, line_start) is not None


def _in_address(text: str, start: int) -> bool:
    """Whether a word is part of an e-mail or web address ("arivera@cargotek.net",
    "www.total.fr", "shop.example.com/total"): joined to the word before it by a dot or
    "@", or by "/" after a word with a dot (not two labels: "OCR-nr/Fakturanr")."""
    if start < 2 or not text[start - 2].isalnum() or text[start - 1] not in ".@/":
        return False
    if text[start - 1] != "/":
        return True
    token = _TOKEN_BEFORE_RE.search(text, max(0, start - _MAX_ADDRESS_CHARS), start - 1)
    return token is not None and "." in token.group()


_TOKEN_BEFORE_RE = re.compile(r"\S+$")
_MAX_ADDRESS_CHARS = 80


_GOODS_BEFORE_REACH = 24


def _qualified_as_goods(text: str, start: int, end: int, lexicon: Lexicon) -> bool:
    line_start = text.rfind("\n", 0, start) + 1
    return lexicon.goods_after_re.match(text, end) or lexicon.goods_before_re.search(
        text, max(line_start, start - _GOODS_BEFORE_REACH), start
    )


@dataclass(frozen=True)
class RoleAssignment:
    labels: list[Label]
    label_starts: list[int]
    # roles[i]: amount i's role, or None
    roles: list[str | None]
    # role_label[i]: the label on amount i's own line that gave it its role, -1 when
    # the role came from a column header (or there is none)
    role_label: list[int]
    # role_header[i]: the column header that gave amount i its role, else -1
    role_header: list[int]
    # per_rate[i]: amount i is a net figure of one tax rate ("TVA 20 %" over "Base HT
    # 60,00"; "20% Base HT 60,00"): the base of that rate, no rival for the document's
    per_rate: list[bool]
    # columns[k]: the figures a table's column header k stands over that took no role
    # from it (each row's figure: "MwSt" over each line's tax), in order
    columns: dict[int, tuple[int, ...]] = field(default_factory=dict)

    def label_of(self, ai: int) -> Label | None:
        """The label (own line or column header) that gave amount ai its role."""
        k = self.role_label[ai] if self.role_label[ai] >= 0 else self.role_header[ai]
        return self.labels[k] if k >= 0 and self.roles[ai] is not None else None


def _without_qualifiers(text: str, labels: list[Label], amounts: list[AmountMention], lexicon: Lexicon) -> list[Label]:
    """Labels less those that only qualify the label before them: "Total sales
    (inclusive of GST) 106.00" is one total label, not a total and a tax; and less a
    net label qualified as including the tax ("Subtotaal incl. BTW"), and a tax label with
    its rate right after a net label ("Subtotal IVA 15%": that rate's base). A label of a
    grand total's role right after it ("Gesamtsumme  brutto") is grand too."""
    starts = [am.start for am in amounts]
    kept: list[Label] = []
    for label in labels:
        if kept:
            before = kept[-1]
            gap = text[before.end : label.start]
            figure_between = bisect_left(starts, label.start) > bisect_left(starts, before.end)
            reach = text[max(before.end, label.start - QUALIFIER_REACH) : label.start]
            after = text[label.end : label.end + QUALIFIER_REACH]
            # in one cell ("Net (VAT 20%)"), not a header's next column ("Net   20% VAT   Total")
            rate_between = FILL_RUN_RE.search(gap) is None and RATE_RE.fullmatch(gap.strip(" \t("))
            # two columns of a header row ("Exkl. moms  Moms 25 %" over the figures), not one
            # cell ("Netto  BTW 9%      10,00": the net of that rate, its figure beside)
            next_column = FILL_RUN_RE.search(gap) is not None and not _figure_after_on_its_line(text, label.end, starts)
            if (
                label.role == lexicon.tax_sum_role
                and ((not gap.strip(" \t(") and not next_column) or rate_between)
                and not figure_between
                and normalise_phrase(text[before.start : before.end]) in lexicon.net_labels
                and (rate_between or RATE_RE.match(after.lstrip(" \t")))
            ):
                # "Subtotal IVA 15%  0.65", "Net (VAT 20%)", "Netto 19% MwSt": the tax names
                # the rate the net is the base of
                continue
            if (
                "\n" not in gap
                and _within_label_reach(gap)
                and not figure_between
                and (lexicon.inclusion_re.search(reach) or lexicon.inclusion_after_re.search(after))
                and not (FILL_RUN_RE.search(gap) and lexicon.cell_qualifier_re.search(reach))
            ):
                including = lexicon.tax_inclusive_re.search(reach) or lexicon.tax_inclusive_after_re.search(after)
                before_key = normalise_phrase(text[before.start : before.end])
                if including and before.role == lexicon.tax_sum_role and label.role in lexicon.grand_roles:
                    # "GST inclusive total 110.00", "KDV Dahil Toplam": the tax qualifies the
                    # total after it, which names the figure
                    kept[-1] = label
                elif before_key in lexicon.net_labels and including:
                    # "Subtotaal incl. BTW 121,00": a figure before tax said to include
                    # the tax is a gross figure; it labels no subtotal (as "Subtotal incl.
                    # VAT" does not, where "incl. vat" is a total label of its own).
                    kept.pop()
                elif (
                    (lexicon.tax_exclusive_re.search(reach) or lexicon.tax_exclusive_after_re.search(after))
                    and label.role == lexicon.tax_sum_role
                    and before_key in lexicon.goods_sum_labels
                ):
                    # "Totale senza IVA", "Total before GST", "Celkem bez DPH": a total said
                    # to leave the tax out is the goods' sum, as "Total des produits" is
                    if lexicon.goods_role is None:
                        kept.pop()
                    else:
                        kept[-1] = replace(before, role=lexicon.goods_role, grand=False)
                continue
            if (
                before.role == lexicon.tax_sum_role
                and label.role in lexicon.grand_roles
                and not label.grand
                and gap in (" ", "\t")
                and not figure_between
                # its figure right after it: not a row of headers run together ("netto VAT
                # brutto  Zapłacono: 0.00 zł")
                and (nxt := bisect_left(starts, label.end)) < len(starts)
                and "\n" not in text[label.end : starts[nxt]]
                and only_currencies(text[label.end : starts[nxt]].strip(" \t:"))
                and not (
                    lexicon.tax_inclusive_re.search(text, max(0, before.start - QUALIFIER_REACH), before.start)
                    or lexicon.tax_exclusive_re.search(text, max(0, before.start - QUALIFIER_REACH), before.start)
                )
            ):
                continue  # "VSK samtals 48.627", "PDV ukupno": the tax's total, not the document's
            if (
                before.grand
                and before.role == label.role
                and "\n" not in gap
                and not figure_between
                and _within_label_reach(gap)
            ):
                # "Gesamtsumme      brutto  8.410,00": a label of the same role after a
                # grand total's, in its own column, says the same of the same figure
                label = replace(label, grand=True)
            if before.role == label.role and label.trailing and not figure_between and not gap.strip(" \t"):
                # "Total Net HT 207,55": a trailing phrase right after a label of its
                # role qualifies that label, and names no figure before them
                kept[-1] = replace(before, grand=before.grand or label.grand)
                continue
        if label.role == lexicon.tax_sum_role and _bracketed_inclusion(text, label, lexicon):
            continue  # "työn osuus (sis. alv): 512,04 €": a gross figure of what comes before
        if label.role == lexicon.tax_sum_role and _tax_left_out(text, label.start, lexicon):
            # "Amount before VAT  5,000.00", "Importe sin IVA": the tax said to be left
            # out of the figure, with no label before it to qualify, names the goods' sum
            if lexicon.goods_role is None:
                continue
            label = replace(label, role=lexicon.goods_role, grand=False)
        kept.append(label)
    return kept


QUALIFIER_REACH = 20
# An opening bracket and blanks before a qualifying word; a rate and the closing bracket
# after the label it qualifies
_OPENING_BRACKET_RE = re.compile(r"\([ \t]*$")


def _bracketed_inclusion(text: str, label: Label, lexicon: Lexicon) -> bool:
    """Whether a tax's label stands alone in brackets after an inclusion word, after words
    of its cell ("työn osuus (sis. alv): 512,04 €"): the brackets say the figure holds the
    tax, not that it is the tax."""
    reach_start = max(0, label.start - QUALIFIER_REACH)
    reach = text[reach_start : label.start]
    word = lexicon.inclusion_re.search(reach)
    bracket = None if word is None else _OPENING_BRACKET_RE.search(reach, 0, word.start())
    if bracket is None or _RATE_AND_CLOSING_BRACKET_RE.match(text, label.end) is None:
        return False
    # words before the bracket in its cell, which it qualifies ("työn osuus (sis. alv)");
    # a bracket starting its line or cell is the label of the figure after it
    # ("(inkl. 19 % MwSt.)  19,00 €")
    opening = reach_start + bracket.start()
    return bool(cell_before(text, opening).strip())


def _figure_after_on_its_line(text: str, start: int, amount_starts: list[int]) -> bool:
    """Whether an amount (of those starting at `amount_starts`) follows `start` on its line."""
    line_end = text.find("\n", start)
    k = bisect_left(amount_starts, start)
    return k < len(amount_starts) and (line_end < 0 or amount_starts[k] < line_end)


def _tax_left_out(text: str, start: int, lexicon: Lexicon) -> bool:
    """Whether a word that leaves the tax out stands right before a tax label at `start`
    ("Amount before VAT"), within QUALIFIER_REACH on its line: across a run of blanks only
    as the whole of its own cell ("Summa   exkl.    moms", as a converter spaces words
    out), not at the end of another cell's words ("... 14 Tagen ohne      MwSt 19 %",
    wrapped terms beside a totals column)."""
    line_start = text.rfind("\n", 0, start) + 1
    m = lexicon.tax_left_out_re.search(text, max(line_start, start - QUALIFIER_REACH), start)
    if m is None:
        return False
    if FILL_RUN_RE.search(text, m.start(), start) is None:
        return True
    runs = [run.end() for run in FILL_RUN_RE.finditer(text, line_start, m.start())]
    return not text[runs[-1] if runs else line_start : m.start()].strip()


# A tax rate as written ("19 %", "7,5%"); its figure is group 1.
RATE_RE = re.compile(r"(?<![0-9.,])([0-9]{1,2}(?:[.,][0-9]{1,3})?)[ \t]*%")
# A rate with its sign first, as Turkish prints it ("KDV(%10)")
PERCENT_FIRST_RATE_RE = re.compile(r"%[ \t]?([0-9]{1,2}(?:[.,][0-9]{1,3})?)(?![0-9])")
# A rate, then the closing bracket of a label it qualifies ("(sis. alv 24 %)")
_RATE_AND_CLOSING_BRACKET_RE = re.compile(rf"[ \t]*(?:{RATE_RE.pattern}[ \t]*)?\)")
# What may follow a label or a charge's phrase alone on its line over its figure: a colon,
# or its rate ("Tax (7.5%)", "Discount 10%", "Discount %").
RATE_TAIL_RE = re.compile(r"[ \t:]*(?:\(?[ \t]*(?:[0-9]{1,2}(?:[.,][0-9]{1,3})?)?[ \t]*%[ \t]*\)?)?[ \t:]*")


def assign_roles(text: str, amounts: list[AmountMention], lines: Lines, lexicon: Lexicon) -> RoleAssignment:
    found = find_labels(text, lexicon)
    labels = _without_qualifiers(text, found, amounts, lexicon)
    kept_spans = {(lb.start, lb.end) for lb in labels}
    qualifying = [lb for lb in found if (lb.start, lb.end) not in kept_spans]
    label_starts = [lb.start for lb in labels]
    transparent = _transparent(text, amounts, lines, lexicon, labels, label_starts)
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
        if transparent[ai]:
            continue  # a rate's base, a rate, a payment term: the label is the next figure's
        if last_label >= 0 and not amount_since:
            lb = labels[last_label]
            if (
                text.find("\n", lb.end, am.start) < 0
                and _within_label_reach(text[lb.end : am.start])
                and not _ends_a_sentence(text, lb)
                and not _adjustment_between(text, lb.end, am.start, lexicon)
                and not _cells_of_words_between(text, lb.end, am.start)
            ):
                pre[ai] = last_label
        amount_since = True
        k = bisect_left(label_starts, am.end)
        if k < len(labels):
            gap = text[am.end : labels[k].start]
            if (
                len(gap) <= LABEL_AFTER_WINDOW
                and "\n" not in gap
                and not any(c.isdigit() for c in gap)
                and not lexicon.term_unit_re.search(gap)  # "30 jours net": a payment term
                and not _COLON_AFTER_RE.match(text, labels[k].end)  # "Menge 7,00  Umsatzsteuer: S"
                # "(S$5,386.78 incl. GST)": a sum with the tax in it, not the tax
                and not (labels[k].role == lexicon.tax_sum_role and lexicon.tax_inclusive_re.search(gap))
            ):
                post[ai] = k
    pre_of = {k: ai for ai, k in enumerate(pre) if k >= 0}

    # A label between two numbers goes to the number before it when it is a
    # trailing phrase ("540.00 before tax"), when a clause break separates it
    # from the next number ("43.20 VAT, so 583.20"), or when nothing follows.
    below = _figures_below(text, labels, amounts, lines, qualifying, lexicon)
    owned_after: dict[int, int] = {}
    for ai in range(n):
        has_pre = pre[ai] >= 0 and pre[ai] not in owned_after
        k = post[ai]
        if has_pre or k < 0 or k in below:
            continue
        nxt = pre_of.get(k)
        lb = labels[k]
        if (
            nxt is None
            and k + 1 < len(labels)
            and labels[k + 1].role == lb.role
            and _IN_TWO_LANGUAGES.fullmatch(text, lb.end, labels[k + 1].start)
        ):
            nxt = pre_of.get(k + 1)  # "BTW / TVA  315,45": one label in two languages, the next figure's
        trailing = lb.trailing and not _words_between(text, amounts[ai].end, lb.start)
        if (
            nxt is None
            or trailing
            # not the dot of a currency's sign ("NET PAYABLE   Rs. 1,679.00"), unless the
            # next figure has a label after it too ("Fr. 25.42 netto  Fr. 2.08 MwSt  Fr.
            # 27.50 brutto": each label after its figure)
            or (
                CLAUSE_BREAK_RE.search(text, lb.end, amounts[nxt].start)
                and (post[nxt] >= 0 or not _currency_at_most(text[lb.end : amounts[nxt].start]))
            )
            # each sum written with its currency, then what it is ("1.162,00 € netto zzgl.
            # 220,78 € MwSt. = 1.382,78 € brutto"): the next figure has its own label
            # or the sum it makes after "=" ("1.162,00 € netto zzgl. 220,78 € MwSt. = 1.382,78 €")
            or (
                _sign_then_label(text, amounts[ai].end, lb.start)
                and _EQUALS_AFTER.match(text, lb.end)
                and _sums_the_two_before(amounts, ai, nxt)
            )
            or (
                _sign_then_label(text, amounts[ai].end, lb.start)
                and _in_a_chain_of_trailing_labels(text, amounts, labels, ai, pre[ai], owned_after)
                and post[nxt] >= 0
                and _sign_then_label(text, amounts[nxt].end, labels[post[nxt]].start)
            )
        ):
            owned_after[k] = ai

    _to_the_money(text, amounts, lines, pre, labels, label_starts, lexicon)
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

    for ai, k in _continued_tax_rows(text, amounts, lines, lexicon, labels, roles, role_label, transparent).items():
        roles[ai], role_label[ai] = labels[k].role, k

    sum_row = _sum_row_columns(labels, label_starts, amounts, lines, pre, text)
    for ai, k in sum_row.items():
        roles[ai], role_label[ai] = (labels[k].role if k >= 0 else None), -1

    # (c) column layouts: a label above whose columns overlap the number's. A header
    # over one figure labels it ("Subtotal  VAT  Total" over one row); a header over
    # several is a table's column ("Unit price  Total" over line items) and labels none.
    # Only a table is read by columns: a header line with two labels or more, or a row
    # with two figures or more. (A list of one token per line, as OCR of a receipt
    # gives, has everything in column 0 and no columns at all.)
    figures_on_line: dict[int, list[int]] = {}
    for ai, am in enumerate(amounts):
        figures_on_line.setdefault(lines.line_of(am.start), []).append(ai)
    labels_on_line: dict[int, int] = {}
    for lb in labels:
        labels_on_line[lines.line_of(lb.start)] = labels_on_line.get(lines.line_of(lb.start), 0) + 1
    by_column: dict[int, list[int]] = {}
    # a base or rate a label reaches across takes no role, but is one of its column's
    # figures: "Base" over two rows' bases names neither ("€-1.620,00" led to its tax,
    # "€-10,00" in the next row)
    reached_across: set[int] = set()
    for ai, am in enumerate(amounts):
        if transparent[ai] and roles[ai] is None and ai not in sum_row:
            header = _column_label(am.start, am.end, used, labels, label_starts, lines)
            if header is not None:
                reached_across.add(header)
    for ai, am in enumerate(amounts):
        if roles[ai] is None and not transparent[ai] and ai not in sum_row:
            header = _column_label(am.start, am.end, used, labels, label_starts, lines)
            line = lines.line_of(am.start)
            if header is None and len(figures_on_line[line]) == 1:
                header = _ranked_header(am.start, used, labels, label_starts, lines)
                if header is not None:
                    by_column.setdefault(header, []).append(ai)
                continue
            if header is None:
                continue
            if (
                labels_on_line[lines.line_of(labels[header].start)] < 2
                and len(figures_on_line[line]) < 2
                and not _set_apart(lines, labels[header], am)
            ):
                continue
            by_column.setdefault(header, []).append(ai)
    role_header: list[int] = [-1] * n
    for ai, k in sum_row.items():
        role_header[ai] = k
    # two figures of one line under one label of a header with as many labels as the
    # line has figures: the columns do not pair them (a row written narrower than its
    # header, "Imponibile  Totale IVA  Totale documento" over "161,90  35,62  197,52");
    # the order does (`_header_rows`)
    pairs_seen: set[tuple[int, int]] = set()
    unpaired_lines: set[int] = set()
    for k, column in by_column.items():
        for ai in column:
            pair = (lines.line_of(amounts[ai].start), k)
            if pair in pairs_seen and len(figures_on_line[pair[0]]) == labels_on_line[lines.line_of(labels[k].start)]:
                unpaired_lines.add(pair[0])
            pairs_seen.add(pair)
    for k, column in by_column.items():
        if (
            len(column) == 1
            and lines.line_of(amounts[column[0]].start) not in unpaired_lines
            and k not in reached_across
            and not _column_goes_on(text, amounts, lines, figures_on_line, column[0])
        ):
            roles[column[0]] = labels[k].role
            role_header[column[0]] = k
    for ks, row in _header_rows(text, labels, amounts, lines, role_label, transparent, used):
        # the order fills what the columns left out, and never contradicts them
        if all(role_header[ai] in (-1, k) for k, ai in zip(ks, row, strict=True)):
            for k, ai in zip(ks, row, strict=True):
                roles[ai], role_header[ai] = labels[k].role, k
    for k, ai in {**_figures_above(text, labels, amounts, lines), **below}.items():
        if k not in used and roles[ai] is None:
            roles[ai] = labels[k].role
            role_label[ai] = k
    for ai in _line_amounts(amounts, lines, roles, role_label, lexicon.tax_sum_role):
        # "1,0000  1.318,67  1.318,67" under "QUANT  VALOR UNIT  VALOR TOTAL": a line's
        # amount, whatever its header or its own label cell says
        roles[ai], role_label[ai], role_header[ai] = None, -1, -1
    for ai in _totals_before_tax(amounts, roles, labels, role_label, role_header, lexicon):
        roles[ai] = lexicon.goods_role
    columns = {k: tuple(ai for ai in column if roles[ai] is None) for k, column in by_column.items() if len(column) > 1}
    assignment = RoleAssignment(labels, label_starts, roles, role_label, role_header, [False] * n, columns)
    return replace(assignment, per_rate=_per_rate(text, amounts, lines, assignment, lexicon))


# The most a tax is of its base: no VAT, GST or sales tax rate is above it.
_MAX_TAX_RATE = Decimal("0.3")


def a_tax_rate_of(base: Decimal, tax: Decimal) -> bool:
    """Whether `tax` is some tax rate's worth of `base`, the same sign, at most the highest rate."""
    return bool(base and tax) and (base > 0) == (tax > 0) and abs(tax) <= abs(base) * _MAX_TAX_RATE


def _a_rate_of(base: AmountMention, tax: AmountMention) -> bool:
    return a_tax_rate_of(base.value, tax.value)


_WORD_RE = re.compile(r"[^\W\d_]{3,}")
# The currency signs written in letters ("zł", "Kč", "Ft", "lei", "руб.", "đ", "円"), as much
# a currency as its code or name; not the letters of a sign with another mark ("R$", "S/").
_LETTER_SIGNS = frozenset(
    sign.rstrip(".")
    for sign in SYMBOLS_LONGEST_FIRST
    if sign.rstrip(".").isalpha() and (len(sign.rstrip(".")) > 1 or not sign.isascii())
)
_CURRENCY_NAMES = frozenset(ISO_4217) | frozenset(CURRENCY_WORDS) | _LETTER_SIGNS


# A label with a colon names what follows it, never a figure before it.
_COLON_AFTER_RE = re.compile(r"[ \t]*:")
_PROSE_BEFORE_RE = re.compile(r"(?<![^\W\d_])[^\W\d_]{2,}[ \t]$")


def _adjustment_between(text: str, start: int, end: int, lexicon: Lexicon) -> bool:
    """Whether a charge's or a deduction's phrase stands between a label and a figure,
    apart from the label ("Tax 19%  Discount: -5.00": the discount's figure). A phrase
    right after the label is part of it ("Total Charges  $710.00"), and so is one the label
    says it comes after ("Subtotal after discount  19,000.00") or names with it ("Taxes
    and fees  $52.47")."""
    found = lexicon.adjustment_re.search(text, start, end)
    if found is None:
        return False
    between = text[start : found.start()]
    return bool(between.strip(" \t:.-")) and lexicon.adjustment_in_label_re.fullmatch(between) is None


def _ends_a_sentence(text: str, label: Label) -> bool:
    """A label word ending a sentence, a word before it ("Amount added in Total."), names
    nothing: prose, as a line item's description is."""
    return (
        text[label.end : label.end + 1] == "."
        and text[label.end + 1 : label.end + 2] in (" ", "\t", "\n", "")
        and _PROSE_BEFORE_RE.search(text, max(0, label.start - 24), label.start) is not None
    )


def _continued_tax_rows(
    text: str,
    amounts: list[AmountMention],
    lines: Lines,
    lexicon: Lexicon,
    labels: list[Label],
    roles: list[str | None],
    role_label: list[int],
    transparent: list[bool],
) -> dict[int, int]:
    """The rows a tax breakdown's label heads without repeating itself: under "VAT  1 800,00
    zł  23,0%  414,00 zł", the next line's "10,00 zł  8,0%  0,80 zł" with nothing before its
    base, its base and tax under the row's, is the same tax at another rate (its base leads
    to its tax, as the labelled row's does). amount index -> the label's index; `transparent`
    gains each such base."""
    out: dict[int, int] = {}
    for ai in range(1, len(amounts)):
        k = role_label[ai]
        if k < 0 or roles[ai] != lexicon.tax_sum_role or not transparent[ai - 1]:
            continue
        base, tax = amounts[ai - 1], amounts[ai]
        line = lines.line_of(tax.start)
        if lines.line_of(base.start) != line or labels[k].start > base.start:
            continue
        nxt = ai + 1
        while True:
            line += 1
            if line + 1 < len(lines.starts) and not text[slice(*lines.bounds(line))].strip():
                line += 1  # a converter that keeps the page's heights leaves a blank line between rows
            while nxt < len(amounts) and lines.line_of(amounts[nxt].start) < line:
                nxt += 1
            if nxt + 1 >= len(amounts) or lines.line_of(amounts[nxt + 1].start) != line:
                break
            base2, tax2 = amounts[nxt], amounts[nxt + 1]
            between = text[base2.end : tax2.start]
            rate = RATE_RE.search(between)
            if not (
                rate is not None
                and _currency_at_most(text[lines.bounds(line)[0] : base2.start])
                and only_currencies(between[: rate.start()] + between[rate.end() :])
                and _WITH_CENTS.search(base2.raw)
                and _WITH_CENTS.search(tax2.raw)
                and _overlap(lines, base, base2)
                and _overlap(lines, tax, tax2)
            ):
                break
            transparent[nxt] = True
            out[nxt + 1] = k
    return out


def _column_goes_on(
    text: str, amounts: list[AmountMention], lines: Lines, figures_on_line: dict[int, list[int]], ai: int
) -> bool:
    """Whether figure ai is a table's first row: its line holds two figures or more, and
    so does the next line (or the one after a blank line), one of them in ai's column.
    A header over it is then over several figures, however far down the others stand
    from it ("Total incl. VAT" stacked over three lines, then the rates' rows and a
    "Totals" row). A lone figure under its label (a totals box) is no table's row,
    whatever the next line holds (a payment, a restatement in another currency).
    `figures_on_line`: each line's figures."""
    line = lines.line_of(amounts[ai].start)
    if len(figures_on_line[line]) < 2:
        return False
    line += 1
    if line < len(lines.starts) and not text[slice(*lines.bounds(line))].strip():
        line += 1
    if line >= len(lines.starts):
        return False
    below = figures_on_line.get(line, [])
    return len(below) >= 2 and any(_overlap(lines, amounts[ai], amounts[j]) for j in below)


def _overlap(lines: Lines, above: AmountMention, below: AmountMention) -> bool:
    """Whether two figures on different lines share a column."""
    a_start = lines.bounds(lines.line_of(above.start))[0]
    b_start = lines.bounds(lines.line_of(below.start))[0]
    return (
        min(lines.column(a_start, above.end), lines.column(b_start, below.end))
        - max(lines.column(a_start, above.start), lines.column(b_start, below.start))
        > 0
    )


def _cells_of_words_between(text: str, start: int, end: int) -> bool:
    """Whether two cells of words or more stand between a label and a figure on its line
    (set apart from the label's own words and from each other by runs of blanks): a
    header's other columns, or another table beside it ("Tax   Base   Rate  Amount  Sum
    €90,00"), not a label's qualifier ("Total   (incl. VAT)   €90,00")."""
    pieces = _BLANK_RUN_RE.split(text[start:end])[1:]
    return sum(1 for piece in pieces if _WORD_RE.search(piece) and not only_currencies(piece)) >= 2


def _to_the_money(
    text: str,
    amounts: list[AmountMention],
    lines: Lines,
    pre: list[int],
    labels: list[Label],
    label_starts: list[int],
    lexicon: Lexicon,
) -> None:
    """A label over a row of sums names the one written as money: "TOTAL  55.00  $4555.00"
    (hours, then the amount), "Total  3  12,50 €" (items, then the amount). The row is
    the figures after the label on its line with no word between them; when exactly one
    of them carries a currency, the label moves to it from the first. A total's label
    before a row of net, tax (at most a tax rate of the net) and their sum names the sum
    when the line shows no columns to read it by ("Total 150.00 19.50 169.50", a table's
    sum row once its layout is gone), or in cells of their own that no header's labels
    stand over (OCR keeps the row's cells and loses where they stand)."""
    n = len(amounts)
    read_by_columns: dict[int, int] | None = None
    for ai in range(n):
        if pre[ai] < 0:
            continue
        row = _row_of(text, amounts, lines, ai)
        marked = [j for j in row if currency_beside(text, amounts[j].start, amounts[j].end)]
        if len(row) >= 2 and len(marked) == 1 and marked[0] != ai:
            pre[marked[0]], pre[ai] = pre[ai], -1
        elif (
            len(row) == 3
            and labels[pre[ai]].role in lexicon.grand_roles
            and _a_rate_of(amounts[row[0]], amounts[row[1]])  # not "80.00 120.00 200.00": a balance brought forward
            and abs(amounts[row[0]].value + amounts[row[1]].value - amounts[row[2]].value) < CENT
        ):
            cells = _cells(text, *lines.bounds(lines.line_of(amounts[ai].start)))
            if len(cells) >= 2:
                apart = len({next(c for c in cells if c[0] <= amounts[j].start < c[1]) for j in row}) == len(row)
                if not apart:
                    continue
                if read_by_columns is None:
                    read_by_columns = _sum_row_columns(labels, label_starts, amounts, lines, pre, text)
                if any(j in read_by_columns for j in row):
                    continue  # a table's total row, its figures under the header's columns
            pre[row[2]], pre[ai] = pre[ai], -1


_SUM_ROW_REACH = 40  # lines from a table's total row up to its header


def _row_of(text: str, amounts: list[AmountMention], lines: Lines, ai: int) -> list[int]:
    """Amount ai and the figures after it on its line with no word between them."""
    line_end = lines.bounds(lines.line_of(amounts[ai].start))[1]
    row = [ai]
    while (
        row[-1] + 1 < len(amounts)
        and amounts[row[-1] + 1].start < line_end
        and not _words_between(text, amounts[row[-1]].end, amounts[row[-1] + 1].start)
    ):
        row.append(row[-1] + 1)
    return row


def _sum_row_columns(
    labels: list[Label], label_starts: list[int], amounts: list[AmountMention], lines: Lines, pre: list[int], text: str
) -> dict[int, int]:
    """A table's total row ("Razem  10 033,00  2 307,59  12 340,59") under the table's
    header of labels ("Wartość netto  Kwota VAT  Wartość brutto"), however many item
    rows stand between: each figure is its column's, and the row's label only says the
    row sums the table. Read so when two figures or more of the row stand under labels
    of the nearest line above with two labels or more, each of another role, one of them
    the row label's; or when every figure of the row stands under a label of one role on
    the line right above (a grid of taxes and their sum, "TVA 9%  TVA 19%  TVA TOTAL" over
    "TOTAL  1.49  17.56  19.05"). amount index -> header label index, or -1 for a figure
    under no label."""
    out: dict[int, int] = {}
    for ai in range(len(amounts)):
        if pre[ai] < 0 or ai in out:
            continue
        row = _row_of(text, amounts, lines, ai)
        if len(row) < 2:
            continue
        line = lines.line_of(amounts[ai].start)
        row_start = lines.bounds(line)[0]
        spans = [(lines.column(row_start, amounts[j].start), lines.column(row_start, amounts[j].end)) for j in row]
        for up in range(line - 1, max(-1, line - 1 - _SUM_ROW_REACH), -1):
            s, e = lines.bounds(up)
            header = range(bisect_left(label_starts, s), bisect_left(label_starts, e))
            if len(header) == 1 and len(row) == 2:
                taken = _one_labelled_column(labels, label_starts, lines, text, header[0], pre[ai], row, spans, s, e)
                if taken is not None:
                    out.update(taken)
                    break
            if len(header) < 2:
                continue
            under: dict[int, int] = {}
            for j, (c0, c1) in zip(row, spans, strict=True):
                k = _label_over(c0, c1, s, e, labels, label_starts, lines, min_overlap=1)
                if k is not None:
                    under[j] = k
            if len(under) < len(row) or len(set(under.values())) < len(under):
                in_order = _under_in_order(row, spans, s, e, labels, label_starts, lines)
                if in_order is not None and len(in_order) > len(under):
                    under = in_order
            roles_under = {labels[k].role for k in under.values()}
            sums_the_table = len(roles_under) == len(under) and labels[pre[ai]].role in roles_under
            # a grid of one role's parts and their sum right under its header ("TVA 9%  TVA 19%
            # TVA TOTAL" over "TOTAL  1.49  17.56  19.05"): the row label sums the grid
            sums_the_grid = up == line - 1 and len(roles_under) == 1 and len(under) == len(row)
            # a table of rates, one row each, over its total row ("BTW  OVER  BTW" over
            # "9%  10,06  0,90" and "TOTAAL  24,93  4,02"): the row sums the rates' columns
            sums_the_rates = (
                bool(under)
                and labels[pre[ai]].role not in roles_under
                and all(
                    _RATE_ROW.match(text, *lines.bounds(between))
                    and len(_figures_after_the_rate(text, lines, between)) == len(row)
                    for between in range(up + 1, line)
                )
            )
            if (len(under) >= 2 and (sums_the_table or sums_the_grid)) or (line > up + 1 and sums_the_rates):
                out.update({j: under.get(j, -1) for j in row})
            break  # the nearest line of labels is the header, or there is none
    return out


# A row of a table of tax rates: its rate first, a code letter before it at most ("9%",
# "B 8,00 %"), a figure after it
_RATE_ROW = re.compile(r"[ \t]*(?:[A-Z][ \t]+)?[0-9]{1,2}(?:[.,][0-9]{1,2})?[ \t]?%[ \t]+[^\n]*[0-9]")
_FIGURE_RE = re.compile(r"-?[0-9][0-9.,' ]*[0-9]|[0-9]")


def _figures_after_the_rate(text: str, lines: Lines, line: int) -> list[str]:
    """The figures of a rate row after its rate, one per cell ("9%  10,06  0,90": two),
    so that its total row, as many figures, sums its columns one to one. Cells, not
    amounts: figures one blank apart ("3,94 0,35") are one cell, their columns not to be
    read one to one."""
    start, end = lines.bounds(line)
    rate = _RATE_ROW.match(text, start, end)
    after = text.find("%", start, end) + 1 if rate is not None else start
    return [text[s:e] for s, e in _cells(text, after, end) if _FIGURE_RE.fullmatch(text, s, e)]


def _under_in_order(
    row: list[int],
    spans: list[tuple[int, int]],
    s: int,
    e: int,
    labels: list[Label],
    label_starts: list[int],
    lines: Lines,
) -> dict[int, int] | None:
    """The labels over a row's figures where the columns do not pair them one to one
    (figures set right under headers set left: "Wartość netto  Kwota VAT  Wartość brutto"
    over "3 344,00  262,60  3 606,60", the first figure nearer the second header): each
    figure under a cell of the header line s..e, in order, the cells' centres nearest the
    figures' in sum; a figure's label is the one its cell holds. None where the header
    has fewer cells than the row has figures."""
    cells = _cells(lines.text, s, e)
    if len(cells) < len(row):
        return None
    centres = [(lines.column(s, cs) + lines.column(s, ce)) / 2 for cs, ce in cells]
    wanted = [(c0 + c1) / 2 for c0, c1 in spans]
    # best[i][c]: the least cost of the first i figures under cells before c
    n, m = len(wanted), len(cells)
    best = [[0.0] * (m + 1)] + [[float("inf")] * (m + 1) for _ in range(n)]
    for i in range(1, n + 1):
        for c in range(i, m + 1):
            best[i][c] = min(best[i][c - 1], best[i - 1][c - 1] + abs(wanted[i - 1] - centres[c - 1]))
    under: dict[int, int] = {}
    c = m
    for i in range(n, 0, -1):
        while best[i][c] == best[i][c - 1]:
            c -= 1
        cs, ce = cells[c - 1]
        inside = [k for k in range(bisect_left(label_starts, cs), bisect_left(label_starts, ce)) if labels[k].end <= ce]
        if len(inside) == 1:
            under[row[i - 1]] = inside[0]
        c -= 1
    return under


def _one_labelled_column(
    labels: list[Label],
    label_starts: list[int],
    lines: Lines,
    text: str,
    k: int,
    row_label: int,
    row: list[int],
    spans: list[tuple[int, int]],
    s: int,
    e: int,
) -> dict[int, int] | None:
    """A sum row of two figures under a table's header that names one of its columns by
    another role ("Sub Total  1500.00  38000.00" under "Item  Qty  Rate  VAT  Amount", as
    Zoho prints it): the figure under that column is its sum, the other the row label's.
    Where the column's label is of the row label's role ("Total  7.00  320.00" under "Date
    Description  Hours  Rate  Total"), the figure under it is the row's, the other a sum
    of another column (the hours), provided the row label starts its line: an item row
    with a word of that role in it ("1  2  item  Subtotal 2.000,00  8 %  1.840,00") sums
    nothing. None when the line s..e is no header (a digit, fewer than three cells) or
    not one figure of the row stands under the label."""
    if labels[k].role is None or any(c.isdigit() for c in text[s:e]):
        return None
    same_role = labels[k].role == labels[row_label].role
    row_start = lines.bounds(lines.line_of(labels[row_label].start))[0]
    if same_role and text[row_start : labels[row_label].start].strip():
        return None
    if len(_cells(text, s, e)) < 3:
        return None
    under = [
        j
        for j, (c0, c1) in zip(row, spans, strict=True)
        if _label_over(c0, c1, s, e, labels, label_starts, lines, min_overlap=1) == k
    ]
    if len(under) != 1:
        return None
    other = -1 if same_role else row_label
    return {j: k if j in under else other for j in row}


def _header_rows(
    text: str,
    labels: list[Label],
    amounts: list[AmountMention],
    lines: Lines,
    role_label: list[int],
    transparent: list[bool],
    used: set[int],
) -> Iterator[tuple[list[int], list[int]]]:
    """(e) A header line of labels alone over the one row of as many figures below it
    ("TOTAL HT  TOTAL TVA  TOTAL TTC" over "100,00  10,00  110,00"), paired in order:
    what the columns say when the spacing no longer does (text taken without its
    layout, a proportional font's drift). The header must be its labels alone (a column
    the lexicon does not name, "Kwota podatku", would shift the order), but for a first
    column over a first cell that is no figure ("Stawka VAT" over "23%", "Opis" over a
    name); the row the only
    one of its width below it (not a table's), with no word among or after its figures
    but a currency's. Yields the header's label indices and the row's amount indices."""
    figure_lines: dict[int, list[int]] = {}
    for ai, am in enumerate(amounts):
        figure_lines.setdefault(lines.line_of(am.start), []).append(ai)
    label_lines: dict[int, list[int]] = {}
    for k, lb in enumerate(labels):
        label_lines.setdefault(lines.line_of(lb.start), []).append(k)
    for line, ks in label_lines.items():
        if len(ks) < 2 or line in figure_lines or any(k in used for k in ks):
            continue
        s, e = lines.bounds(line)
        gaps = zip([labels[k].end for k in ks], [labels[k].start for k in ks[1:]] + [e], strict=True)
        if any(_words_between(text, a, b) for a, b in gaps):
            continue
        leading_column = _words_between(text, s, labels[ks[0]].start)
        rows = []
        j, checked = line + 1, 0
        while j < len(lines.starts) and checked <= COLUMN_LOOKUP_LINES:
            s, e = lines.bounds(j)
            if text[s:e].strip():
                checked += 1
                if j in label_lines and j not in figure_lines:
                    break  # another header
                if len(figure_lines.get(j, ())) == len(ks):
                    rows.append(j)
            j += 1
        if len(rows) != 1:
            continue
        row = figure_lines[rows[0]]
        hs = lines.bounds(line)[0]
        s, e = lines.bounds(rows[0])
        if leading_column and (
            _currency_at_most(text[s : amounts[row[0]].start])
            # as many columns before the labels as cells before the figures, or a figure
            # stands under a column the lexicon does not name ("Unit price" over "450.00")
            or len(_cells(text, hs, labels[ks[0]].start)) != len(_cells(text, s, amounts[row[0]].start))
        ):
            continue  # a column the lexicon does not name ("Stawka VAT") over a figure: the order shifts
        # words may stand before the row (another column's text), not among its figures
        gaps = zip([amounts[ai].end for ai in row], [amounts[ai].start for ai in row[1:]] + [e], strict=True)
        if any(role_label[ai] >= 0 or transparent[ai] for ai in row) or any(
            _words_between(text, a, b) for a, b in gaps
        ):
            continue
        yield ks, row


_LETTERS_RE = re.compile(r"[^\W\d_]+")
_SIGN_WORD_RE = re.compile(r"[^\W\d_]+\.?")  # a sign written in letters, with its dot ("Rs.")


def only_currencies(between: str) -> bool:
    """Whether every word in `between` is a currency's name or code ("EUR", "zł")."""
    return all(
        w.group() in _CURRENCY_NAMES or w.group().casefold() in _CURRENCY_NAMES for w in _LETTERS_RE.finditer(between)
    )


def _currency_at_most(between: str) -> bool:
    """Whether `between` holds nothing but blanks and a currency's sign or name ("$ ",
    "EUR ", "Rs. "): no cell of its own before a figure."""
    rest = _SIGN_WORD_RE.sub(lambda w: "" if only_currencies(w.group()) else w.group(), between)
    return all(c.isspace() or unicodedata.category(c) == "Sc" for c in rest)


def _in_a_chain_of_trailing_labels(
    text: str, amounts: list[AmountMention], labels: list[Label], figure: int, own_pre: int, owned_after: dict[int, int]
) -> bool:
    """Whether the label before a figure went to a sum before it, as a trailing phrase does
    ("1.162,00 € netto zzgl. 220,78 €"): the line writes each label after its figure. Not
    where the label before names the figure ("Items 3  Subtotal 130.00  Tax 10.40")."""
    owner = owned_after.get(own_pre) if own_pre >= 0 else None
    return (
        owner is not None
        and CENTS_RE.search(amounts[owner].raw) is not None
        # a word between that label and the figure ("netto zzgl. 220,78 €"), not a label
        # right before it, which names it ("Total HT 100,00 €")
        and _words_between(text, labels[own_pre].end, amounts[figure].start)
    )


# A label's end, then an equals sign: the figure after it is a sum, not the label's
_EQUALS_AFTER = re.compile(r"[ \t.:]*=")
# An invoice's title and a word joining another document's title to it, right before that
# title ("Invoice & Delivery Note", "FACTURA / AVIZ", "DODACÍ LIST A FAKTURA" is the other
# way round and starts the line: its own title's number is the invoice's)
_AN_INVOICE_AND = re.compile(
    r"(?i)(?<![^\W\d_])(?:invoice|rechnung|faktura|factura|factură|fattura|fatura|facture|faktúra|račun)"
    r"(?:[ \t]*[-–][ \t]*daňový doklad)?[ \t]*(?:/|&|\+|-|–|,|\band\b|\bund\b|\bși\b|\bsi\b|\ba\b|\bi\b|\by\b|\be\b|\bet\b)[ \t]*\Z"
)


def _sums_the_two_before(amounts: list[AmountMention], ai: int, nxt: int) -> bool:
    """Whether the figure at `nxt` is the figure at `ai` and the one before it added up:
    an equation's result ("1.162,00 € ... 220,78 € MwSt. = 1.382,78 €"), not the value a
    label and its "=" give ("Wohnzimmer 1.162,00 € MwSt = 220,78 €")."""
    return ai > 0 and abs(amounts[ai - 1].value + amounts[ai].value - amounts[nxt].value) <= CENT


# Between a label's two languages ("BTW / TVA", "Te betalen / À payer")
_IN_TWO_LANGUAGES = re.compile(r"[ \t]*/[ \t]*")


def _sign_then_label(text: str, figure_end: int, label_start: int) -> bool:
    """Whether only a currency's sign or name stands between a figure and the label after it
    ("220,78 € MwSt."): a figure written with its currency, then what it is."""
    between = text[figure_end:label_start]
    return not _words_between(text, figure_end, label_start) and (
        any(unicodedata.category(c) == "Sc" for c in between)
        or any(w.group() in _CURRENCY_NAMES for w in _WORD_RE.finditer(between))
    )


def _words_between(text: str, start: int, end: int) -> bool:
    """Whether a word other than a currency's name stands between a figure and the
    phrase after it: "226,49 €  Remise HT  0,00 €" (the "HT" is the discount's, a
    trailing phrase only right after its figure: "540,00 € HT")."""
    return any(
        w.group() not in _CURRENCY_NAMES and w.group().casefold() not in _CURRENCY_NAMES
        for w in _WORD_RE.finditer(text, start, end)
    )


_MAX_ROW_FIGURES = 24


def _line_amounts(
    amounts: list[AmountMention], lines: Lines, roles: list[str | None], role_label: list[int], tax_role: str | None
) -> list[int]:
    """The labelled amounts that are a line item's figures: on a row where two figures no
    label on the row names, a quantity and a unit price, multiply to a third, that third
    and every figure only a column's header names ("1.0  70.0  70.0  14.0" under
    "Qté.  Prix unitaire HT  Montant HT  Montant TVA": the line's amount and its tax)."""
    by_line: dict[int, list[int]] = {}
    for ai, am in enumerate(amounts):
        by_line.setdefault(lines.line_of(am.start), []).append(ai)
    out: list[int] = []
    for row in by_line.values():
        if len(row) < 3 or len(row) > _MAX_ROW_FIGURES:
            continue
        items: list[int] = []
        factors: set[int] = set()
        for ai in row:
            value = abs(amounts[ai].value)
            if not value:
                continue
            # a quantity and a unit price are under no label of their own, one under no
            # header either ("Netto  MwSt  Brutto" over "1,00  0,19  1,19" is no item);
            # or one of them is named by a tax code's cell beside it ("24,00  TVA 5,5%
            # 240,00", "120,00  IVA 21%, Ret. IRPF 15%  360,00"), the other by nothing
            others = [j for j in row if j != ai and amounts[j].value]
            for i, q in enumerate(others):
                for p in others[i + 1 :]:
                    if abs(abs(amounts[q].value) * abs(amounts[p].value) - value) >= CENT:
                        continue
                    named = [j for j in (q, p) if role_label[j] >= 0]
                    if len(named) == 2 or not any(roles[j] is None for j in (q, p)):
                        continue
                    if named and (role_label[ai] >= 0 or tax_role is None or roles[named[0]] != tax_role):
                        continue
                    items.append(ai)
                    factors.update(named)
        if items:
            out.extend(
                ai for ai in row if roles[ai] is not None and (ai in items or ai in factors or role_label[ai] < 0)
            )
    return out


def _totals_before_tax(
    amounts: list[AmountMention],
    roles: list[str | None],
    labels: list[Label],
    role_label: list[int],
    role_header: list[int],
    lexicon: Lexicon,
) -> list[int]:
    """Figures a plain total label names that the next labelled figure, the tax, turns
    into the one after it, a total: "Gesamtsumme 873,00", "Summe Umsatzsteuer 84,87",
    "Gesamtsumme 957,87" (KoSIT's prints head the sums before and after tax alike). The
    first is the sum before tax, the subtotal's figure."""
    if lexicon.goods_role is None or lexicon.tax_sum_role is None:
        return []
    named = [ai for ai in range(len(amounts)) if roles[ai] is not None and amounts[ai].value]
    out: list[int] = []
    for first, tax, then in zip(named, named[1:], named[2:], strict=False):
        if (
            roles[first] in lexicon.grand_roles
            and roles[tax] == lexicon.tax_sum_role
            and roles[then] == roles[first]
            # a grand total label before a plain one names the grand total ("Grand total
            # 100.00", "VAT 20.00", "Balance 120.00"); the same kind of label twice, the sums
            and (
                not _names_grand_total(first, labels, role_label, role_header)
                or _names_grand_total(then, labels, role_label, role_header)
            )
            and 0 < amounts[first].value < amounts[then].value
            and abs(amounts[first].value + amounts[tax].value - amounts[then].value) < CENT
        ):
            out.append(first)
    return out


def _names_grand_total(ai: int, labels: list[Label], role_label: list[int], role_header: list[int]) -> bool:
    k = role_label[ai] if role_label[ai] >= 0 else role_header[ai]
    return k >= 0 and labels[k].grand


def _per_rate(
    text: str, amounts: list[AmountMention], lines: Lines, assignment: RoleAssignment, lexicon: Lexicon
) -> list[bool]:
    """Net figures of one tax rate: a net label's figure with a rate ("20 %") in its own
    cell (since the figure before it on its line) or in the column above its cell, when
    two or more such figures differ (with one rate, its base is the subtotal)."""
    out = [False] * len(amounts)
    for ai, am in enumerate(amounts):
        label = assignment.label_of(ai)
        if label is None or normalise_phrase(text[label.start : label.end]) not in lexicon.net_labels:
            continue
        line = lines.line_of(am.start)
        line_start, _ = lines.bounds(line)
        own = assignment.role_label[ai] >= 0
        cell_start = label.start if own else am.start
        previous = amounts[ai - 1].end if ai > 0 and amounts[ai - 1].end > line_start else line_start
        if RATE_RE.search(text, min(previous, cell_start), am.start):
            out[ai] = True
            continue
        c0, c1 = lines.column(line_start, cell_start), lines.column(line_start, am.end)
        j, checked = line - 1, 0
        while j >= 0 and checked < COLUMN_LOOKUP_LINES and not out[ai]:
            s, e = lines.bounds(j)
            j -= 1
            if not text[s:e].strip() or e - s > _MAX_COLUMN_LINE:
                continue
            checked += 1
            out[ai] = any(
                min(c1, lines.column(s, m.end())) - max(c0, lines.column(s, m.start())) > 0
                for m in RATE_RE.finditer(text, s, e)
            )
    if len({amounts[ai].value for ai, per in enumerate(out) if per}) < 2:
        out = [False] * len(amounts)
    for ai in _stacked_bases(text, amounts, lines, assignment, lexicon):
        out[ai] = True
    return out


def _stacked_bases(
    text: str, amounts: list[AmountMention], lines: Lines, assignment: RoleAssignment, lexicon: Lexicon
) -> list[int]:
    """Figures over a line that gives a rate and a line whose figure is that rate of them:
    a tax category's block written down the page ("Total TVA 972,00", "Taux de TVA 20%",
    "Montant TVA par taux 194,40"; KoSIT's "Gesamtsumme 198,00", "Umsatzsteuersatz 19,00%",
    "Umsatzsteuerbetrag 37,62"). Each is the rate's base, whatever its own label says; a net
    label's figure keeps its role's standing (with one rate, its base is the subtotal)."""
    by_line: dict[int, list[int]] = {}
    for ai, am in enumerate(amounts):
        by_line.setdefault(lines.line_of(am.start), []).append(ai)
    out: list[int] = []
    for ai, am in enumerate(amounts):
        role = assignment.roles[ai]
        if role is None or role == lexicon.goods_role or not am.value:
            continue
        line = lines.line_of(am.start)
        if by_line[line][-1] != ai:
            continue
        below = [j for j in range(line + 1, min(line + 4, len(lines.starts))) if text[slice(*lines.bounds(j))].strip()]
        if len(below) < 2:
            continue
        rate_line, tax_line = below[0], below[1]
        rates = list(RATE_RE.finditer(text, *lines.bounds(rate_line)))
        taxed = by_line.get(tax_line, [])
        if len(rates) != 1 or len(taxed) != 1:
            continue
        if any(not rates[0].start() <= amounts[j].start < rates[0].end() for j in by_line.get(rate_line, [])):
            continue  # the rate's line holds no figure but the rate
        rate = Decimal(rates[0].group(1).replace(",", ".")) / 100
        if abs(abs(am.value) * rate - abs(amounts[taxed[0]].value)) <= CENT:
            out.append(ai)
    return out


_LONE_FIGURE_EXTRA = 4  # what may stand beside a figure alone on its line: "C", "EUR", "€"


def _figures_below(
    text: str,
    labels: list[Label],
    amounts: list[AmountMention],
    lines: Lines,
    qualifying: list[Label],
    lexicon: Lexicon,
) -> dict[int, int]:
    """(d) One token per line, as OCR of a receipt gives: a label that ends its line, or
    ends it with the tax it includes ("Gesamtbetrag inkl. USt", `_qualified_end`), names
    the figure alone on the next line ("ZU ZAHLEN EURO" / "24,20", "33,07 EUR
    BRUTTO" / "39,35 EUR"), unless that figure starts a run of figures (a table's row
    split into lines: "Summe" / "1,61" / "14,08"), or it restates in another currency
    the figure alone on the line before the label (`_restated_under`). label index ->
    amount index."""
    amount_lines: dict[int, list[int]] = {}
    for ai, am in enumerate(amounts):
        amount_lines.setdefault(lines.line_of(am.start), []).append(ai)
    label_lines = {lines.line_of(lb.start) for lb in labels}
    out: dict[int, int] = {}
    for k, lb in enumerate(labels):
        line = lines.line_of(lb.start)
        _, line_end = lines.bounds(line)
        label_end = _qualified_end(text, lb, line_end, qualifying, lexicon)
        ending = (
            len(text[label_end:line_end].strip()) <= _LONE_FIGURE_EXTRA
            or RATE_TAIL_RE.fullmatch(text, label_end, line_end)
            or _words_of_the_label(text, labels, k, label_end, line_end, lexicon)
        )
        if not ending or line + 1 not in amount_lines:
            continue  # the label must end its line ("SUMME EUR" does; "Tax (7.5%)" too)
        if line + 2 in amount_lines:
            continue
        (ai, *others) = amount_lines[line + 1]
        rest = _beside_lone(text, amounts[ai], lines)
        if others or len(rest) > _LONE_FIGURE_EXTRA:
            continue
        above = amount_lines.get(line - 1, [])
        if (
            len(above) == 1
            and not {line - 2} & (label_lines | amount_lines.keys())  # no label's, no row's end
            and _restated_under(text, amounts[above[0]], rest, lines)
        ):
            out[k] = above[0]
        else:
            out[k] = ai
    return out


_LABEL_TAIL = 24  # the most of a label's own words after its phrase ("Net Total Amount")


def _words_of_the_label(
    text: str, labels: list[Label], k: int, label_end: int, line_end: int, lexicon: Lexicon
) -> bool:
    """Whether the rest of label k's line is words that go with it, as they would before
    its figure on the line ("Gross Total Amount" / "€990.00" as "Gross Total Amount
    €990.00"): the label starts its line and a few words follow in its cell, with no
    figure, no other label and no clause: the amount's own nouns (the lexicon's
    `label_tail_words`), after a charge's or deduction's phrase that goes with the label
    ("Total Charges", "Subtotal after discount") or alone. "Net Contract Value", "Total
    Volume" and "VAT Percentage" name something else."""
    rest = text[label_end:line_end]
    line_start = text.rfind("\n", 0, labels[k].start) + 1
    if not (
        0 < len(rest.strip()) <= _LABEL_TAIL
        and not text[line_start : labels[k].start].strip()  # not a phrase's end ("Produs cu TVA redus")
        and not any(c.isdigit() for c in rest)
        and _BLANK_RUN_RE.search(rest.strip()) is None
        and not (k + 1 < len(labels) and labels[k + 1].start < line_end)
        and CLAUSE_BREAK_RE.search(rest) is None
        and not _ends_a_sentence(text, labels[k])
    ):
        return False
    phrase = lexicon.adjustment_re.search(rest)
    if phrase is not None:  # "Total Charges", "Subtotal setelah diskon": the label's own adjustment
        before = rest[: phrase.start()]
        if before.strip(" \t:.-") and lexicon.adjustment_in_label_re.fullmatch(before) is None:
            return False
        rest = rest[phrase.end() :]
    return all(w.group().casefold() in lexicon.label_tail_words for w in _LETTERS_RE.finditer(rest))


def _qualified_end(text: str, lb: Label, line_end: int, qualifying: list[Label], lexicon: Lexicon) -> int:
    """Where a label ends with the words that qualify it on its line: the tax it includes
    or leaves out, before ("Fakturatotal incl moms", "Gesamtbetrag inkl. USt") or after
    ("Total (IVA incluido)") that tax's label."""
    for q in qualifying:
        if not lb.end <= q.start < line_end:
            continue
        between, after = text[lb.end : q.start], text[q.end : line_end]
        if any(c.isdigit() for c in between):
            break
        if lexicon.inclusion_re.search(between):
            return q.end
        included = lexicon.inclusion_after_re.match(after)
        if included and not between.strip(" \t(:"):
            return q.end + included.end()
        break
    return lb.end


def _beside_lone(text: str, am: AmountMention, lines: Lines) -> str:
    """What stands beside a figure on its line."""
    start, end = lines.bounds(lines.line_of(am.start))
    return (text[start : am.start] + text[am.end : end]).strip()


def _restated_under(text: str, above: AmountMention, rest_below: str, lines: Lines) -> bool:
    """Whether a label between two lone figures stands in a stacked cell, the figure then
    its worth in another currency written under the label ("19 120" / "Nettó összesen" /
    "5 927 200 HUF", an invoice in EUR reporting its HUF equivalents): the one above is
    the label's."""
    rest_above = _beside_lone(text, above, lines)
    return (
        bool(rest_below)
        and _currency_at_most(rest_below)
        and len(rest_above) <= _LONE_FIGURE_EXTRA
        and _currency_at_most(rest_above)
        and rest_above.casefold() != rest_below.casefold()
    )


_CAPTION_INDENT = 8


def caption_line(text: str, amounts: list[AmountMention], lines: Lines, ai: int) -> int | None:
    """The line under amount ai that captions it, as bilingual and card layouts print
    them ("285 SAR" / "VAT Total Amount" / the Arabic label / "2,185 SAR"), or None: the
    figure stands alone on its line, set out on the page (not one token per line at the
    margin as OCR of a till receipt gives: "3,49 E" / "SUMME" / "EUR" / "26,42"), with no
    figure on the line before it, and none on the two lines after it (a figure right
    under a caption would be the caption's)."""
    am = amounts[ai]
    line = lines.line_of(am.start)
    start, _ = lines.bounds(line)
    if line + 1 >= len(lines.starts) or lines.column(start, am.start) < _CAPTION_INDENT:
        return None
    if len(_beside_lone(text, am, lines)) > _LONE_FIGURE_EXTRA:
        return None
    before = lines.line_of(amounts[ai - 1].start) if ai > 0 else -2
    after = {lines.line_of(amounts[j].start) for j in range(ai + 1, min(ai + 3, len(amounts)))}
    if before >= line - 1 or after & {line, line + 1, line + 2}:
        return None
    caption_start, caption_end = lines.bounds(line + 1)
    return line + 1 if text[caption_start:caption_end].strip() else None


def _figures_above(text: str, labels: list[Label], amounts: list[AmountMention], lines: Lines) -> dict[int, int]:
    """(f) A label in the caption line under a figure names it (`caption_line`).
    label index -> amount index."""
    label_starts = [lb.start for lb in labels]
    out: dict[int, int] = {}
    for ai in range(len(amounts)):
        line = caption_line(text, amounts, lines, ai)
        if line is None:
            continue
        s, e = lines.bounds(line)
        k = bisect_left(label_starts, s)
        if k < len(labels) and labels[k].start < e:
            out[k] = ai
    return out


_RATE_BASE_BEFORE = 24
_MAX_RATE = 30  # a VAT rate written without "%" ("7", "19,0") is at most this
_WITH_CENTS = re.compile(r"[.,][0-9]{2}\)?$")
_PERCENT_BEFORE = re.compile(r"[0-9]{1,2}(?:[.,][0-9]{1,2})?[ \t]*%[ \t]*(?:[^\w\s]{0,2})[ \t]*$")


def _transparent(
    text: str,
    amounts: list[AmountMention],
    lines: Lines,
    lexicon: Lexicon,
    labels: list[Label],
    label_starts: list[int],
) -> list[bool]:
    """The numbers a label reaches across to the figure after them: the base a rate
    applies to ("15% on 112.90  16.94"), a payment term ("netto ... 10 Tagen"), the
    base and rate of a tax breakdown row ("Umsatzsteuer (S)  113,03  7  7,91", "VAT
    15.24 €  19 %  2.90 €"), and a unit price ("Single price: €84.03 net / €100.00
    gross"), which no label or column names as a sum."""
    out = [False] * len(amounts)
    for ai, am in enumerate(amounts):
        if _label_index(text, am, amounts[ai + 1 : ai + 3], lines, labels, label_starts):
            out[ai] = True
            continue
        before = text[max(0, am.start - _RATE_BASE_BEFORE) : am.start]
        ends = [match.end() for match in lexicon.rate_base_re.finditer(before)]
        if (
            (ends and not any(c.isdigit() for c in before[ends[-1] :]))
            or _unit_price_line(text, lines.bounds(lines.line_of(am.start))[0], lexicon)
            or lexicon.term_unit_re.match(text, am.end, min(len(text), am.end + 12)) is not None
            or _term_after(text, am, lexicon)
            or _a_measured_count(text, am, amounts[ai + 1 : ai + 2], lines, lexicon)
        ):
            out[ai] = True
    for ai in range(len(amounts) - 1):
        base, tax = amounts[ai], amounts[ai + 1]
        # "TVA 20,0%  81,90 €  16,38 €": a rate after its label, then the base, then the tax (a
        # rate opening its row, "23%  24 500,00  5 635,00", is a column of a table with a header)
        rate_before = _PERCENT_BEFORE.search(text, max(0, base.start - _RATE_BASE_BEFORE), base.start)
        if (
            rate_before is not None
            and _WORD_RE.search(text, lines.bounds(lines.line_of(base.start))[0], rate_before.start()) is not None
            and lines.line_of(tax.start) == lines.line_of(base.start)
            and _WITH_CENTS.search(base.raw)
            and _WITH_CENTS.search(tax.raw)
            and "=" not in text[base.end : tax.start]  # not "66,00 € = Totale 366,00"
            and "(" not in text[base.end : tax.start]  # not "Alv 22 % : 22,00 euroa (100,00 euroa)": a base after
            and only_currencies(text[base.end : tax.start])  # "Btw 0 % (4.655,00 EUR)  0,00 EUR"
        ):
            out[ai] = True
    # A tax's row of base, rate and tax ("VAT  15.24 €  19 %  2.90 €"), or of base and tax
    # where the rate is not written beside them ("[1] Tax  €400.00  €40.00", a tax rate's
    # worth of the base): the base, its rate and nothing but currencies after it, leads to
    # the tax its tax label names.
    for ai in range(len(amounts) - 1):
        base, tax = amounts[ai], amounts[ai + 1]
        line_start = lines.bounds(lines.line_of(base.start))[0]
        between = text[base.end : tax.start]
        rate_at = RATE_RE.search(between)
        k = bisect_left(label_starts, base.start) - 1
        if (
            (rate_at is None and not _a_rate_of(base, tax))
            or "\n" in between
            or not only_currencies(
                between if rate_at is None else between[: rate_at.start()] + between[rate_at.end() :]
            )
            or not (_WITH_CENTS.search(base.raw) and _WITH_CENTS.search(tax.raw))
            or k < 0
            or labels[k].start < line_start
            or labels[k].role != lexicon.tax_sum_role
            or (ai > 0 and amounts[ai - 1].end > labels[k].end)  # the label is an earlier figure's
        ):
            continue
        out[ai] = True
    # A tax breakdown row ("Umsatzsteuer (S)  410,10  -6,55  403,55  19  76,67"): every
    # figure before the rate (value, discounts, base) and the rate itself lead to the tax.
    for ai in range(1, len(amounts) - 1):
        first, rate, tax = amounts[ai - 1], amounts[ai], amounts[ai + 1]
        line = lines.line_of(rate.start)
        if lines.line_of(first.start) != line or lines.line_of(tax.start) != line or not _rate_like(rate):
            continue
        if not (_WITH_CENTS.search(first.raw) and _WITH_CENTS.search(tax.raw)):
            continue  # "2 x 10 m  5  71,25": counts, not a base, a rate and a tax
        k = ai
        while k >= 0 and lines.line_of(amounts[k].start) == line:
            out[k] = True
            k -= 1
    return out


_UNIT_WORD = re.compile(r"[ \t]?([^\W\d_][^\W\d_.]*\.?|m[23³])(?![^\W_])")


def _a_measured_count(
    text: str, am: AmountMention, following: list[AmountMention], lines: Lines, lexicon: Lexicon
) -> bool:
    """Whether a whole figure is a count or weight with its unit after it, a figure for
    money following it on its line ("Total  120 Pcs  58,590.00"): the label is the money's."""
    if _WITH_CENTS.search(am.raw) or not following or lines.line_of(following[0].start) != lines.line_of(am.start):
        return False
    unit = _UNIT_WORD.match(text, am.end)
    return unit is not None and unit.group(1).rstrip(".").casefold() in lexicon.measure_of_unit


def _label_index(
    text: str,
    am: AmountMention,
    following: list[AmountMention],
    lines: Lines,
    labels: list[Label],
    label_starts: list[int],
) -> bool:
    """Whether the number is its label's index, one digit right after it with one figure
    in cents after it on the line, the line's last, and no word between ("TAX 1   6.500 %
    1.49", "TAX 2  0.10": a till's taxes numbered): the label names the figure, not its
    number. Not a breakdown row's ("VAT 2  3,315.00 €  0%  0.00 €": its base, then its
    tax) nor "Total 2 items 28.02"."""
    k = bisect_left(label_starts, am.start) - 1
    line = lines.line_of(am.start)
    return (
        len(am.raw) == 1
        and k >= 0
        and text[labels[k].end : am.start] in ("", " ")
        and bool(following)
        and lines.line_of(following[0].start) == line
        and not (len(following) > 1 and lines.line_of(following[1].start) == line)
        and _WITH_CENTS.search(following[0].raw) is not None
        and _WORD_RE.search(text, am.end, following[0].start) is None
    )


def _term_after(text: str, am: AmountMention, lexicon: Lexicon) -> bool:
    gap = text[am.end : am.end + 3]
    start = am.end + len(gap) - len(gap.lstrip(" \t"))
    return lexicon.term_unit_re.match(text, start, min(len(text), start + 12)) is not None


def _rate_like(am: AmountMention) -> bool:
    """A VAT rate: a whole number or one decimal, not above _MAX_RATE ("7", "19,0")."""
    digits_after = (
        len(am.raw) - max(am.raw.rfind(","), am.raw.rfind(".")) - 1 if ("," in am.raw or "." in am.raw) else 0
    )
    return 0 < am.value <= _MAX_RATE and digits_after <= 1


def _column_label(
    start: int,
    end: int,
    used: set[int] | frozenset[int],
    labels: list[Label],
    label_starts: list[int],
    lines: Lines,
    *,
    words_stop: bool = True,
) -> int | None:
    """The label heading the column of the value at start:end, up to
    COLUMN_LOOKUP_LINES lines of text above it, or None. With `words_stop` (an amount),
    a figure's own header of words under a row of figures names none of the labels over
    that row (`_words_over`); a header's words wrapped onto its next line still let it
    name the figure, and a date or a number may have words over it that head nothing
    (weekdays over dates)."""
    li = lines.line_of(start)
    ls, le = lines.bounds(li)
    if le - ls > _MAX_COLUMN_LINE:
        return None
    text = lines.text
    c0, c1 = lines.column(ls, start), lines.column(ls, end)
    row_shows_columns = _shows_columns(text, ls, le)
    row_of_cells = len(_cells(text, ls, le)) > 1  # a table's row, not a lone figure under a caption
    row_is_the_value = not any(c.isdigit() for c in text[ls:start] + text[end:le])
    checked = 0
    own_header = False  # a cell of words over the figure, its own header or a wrapped label's
    j = li - 1
    while j >= 0 and checked < COLUMN_LOOKUP_LINES:
        s, e = lines.bounds(j)
        j -= 1
        if not text[s:e].strip():
            continue
        checked += 1
        if e - s > _MAX_COLUMN_LINE:
            continue
        best = _label_over(c0, c1, s, e, labels, label_starts, lines, used, min_overlap=-1)
        if best is None:
            if _rate_over(c0, c1, s, e, lines) or (own_header and any(c.isdigit() for c in text[s:e])):
                return None  # the label further up heads the row of figures between
            own_header = own_header or (
                words_stop and row_of_cells and (_words_over(c0, c1, s, e, lines) or _a_row_of_headings(text, s, e))
            )
            continue
        if row_shows_columns or _shows_columns(text, s, e):
            return None if _unlabelled_cell_over(c0, c1, s, e, ls, le, best, labels, label_starts, lines) else best
        # Neither line shows columns (OCR, a converter without layout, blanks run
        # together): a position there says nothing, so only a line's last label names a
        # value, the only figure of the next line with text ("Summe Umsatzsteuer" over
        # "21,31"; not "Invoice Number Invoice Date" over "34278587 6/18/2017", nor a
        # label over every value below it).
        last = bisect_left(label_starts, e) - 1
        header = _labels_among_words(text, labels, bisect_left(label_starts, s), last, s, e)
        return last if checked == 1 and row_is_the_value and not header and last not in used else None
    return None


def _set_apart(lines: Lines, label: Label, am: AmountMention) -> bool:
    """Whether a lone label and the lone figure under it both stand indented
    (`_indented_alone`), with nothing between them under the figure: a box's caption and
    its value ("VALOR TOTAL A RECEBER" over, four lines down, "R$ 47,00"), not a caption
    over an item's name and its amount ("Subtotal" / "Shipping" / "15.00")."""
    text = lines.text
    if not all(_indented_alone(text, *lines.bounds(lines.line_of(pos))) for pos in (label.start, am.start)):
        return False
    li = lines.line_of(am.start)
    c0, c1 = lines.column(lines.starts[li], am.start), lines.column(lines.starts[li], am.end)
    for j in range(lines.line_of(label.start) + 1, li):
        s, _ = lines.bounds(j)
        for a, b in _cells(text, *lines.bounds(j)):
            if lines.column(s, a) < c1 and lines.column(s, b) > c0:
                return False
    return True


def _labels_among_words(text: str, labels: list[Label], first: int, last: int, s: int, e: int) -> bool:
    """Whether the line s..e holds labels first..last, two or more, among other words: a
    table's header run together ("Price Tax VAT"), not one label's words ("Razem do
    zapłaty", "Tax VAT")."""
    if last <= first:
        return False
    rest = text[s : labels[first].start] + "".join(
        text[labels[k].end : labels[k + 1].start if k < last else e] for k in range(first, last + 1)
    )
    return any(not only_currencies(w.group()) for w in _LETTERS_RE.finditer(rest))


def _rate_over(c0: int, c1: int, s: int, e: int, lines: Lines) -> bool:
    """Whether a rate ("24%") on line s..e stands over columns c0..c1: a column of rates
    holds no amount, so a header further up is another table's ("24%" of an item row
    between the items' "VAT" and a totals box's "Sum  €90,00")."""
    text = lines.text
    return any(
        "%" in text[cs:ce] for cs, ce in _cells(text, s, e) if lines.column(s, cs) < c1 and lines.column(s, ce) > c0
    )


def _words_over(c0: int, c1: int, s: int, e: int, lines: Lines) -> bool:
    """Whether a cell of words with no figure in it (and, as the caller found, no label
    over the figure) stands over columns c0..c1 on line s..e: the figure's own header ("Retido na Fonte (ISSQN / Federais)  Valor
    Líquido" over "R$ 700,00  R$ 4.300,00"), so a label further up heads another row. A
    row of a table (its cells hold figures) is no header."""
    text = lines.text
    return any(
        _WORD_RE.search(text, cs, ce) and not only_currencies(text[cs:ce]) and not any(c.isdigit() for c in text[cs:ce])
        for cs, ce in _cells(text, s, e)
        if lines.column(s, cs) < c1 and lines.column(s, ce) > c0
    )


# A row of headings has three cells or more, each of a few words (a wrapped description's
# line has one or two: "Projekt Nord      vor Ort").
_HEADINGS_IN_A_ROW = 3
_HEADING_WORDS = 3


def _a_row_of_headings(text: str, s: int, e: int) -> bool:
    """Whether line s..e is a row of three cells of words or more with no figure: another
    table's header ("Adress  Telefon  Bankgiro" in a footer), whose own rows stand under
    it, however far its cells stand from the figure's column. A label over the row of
    figures above it heads that row, not the figures under this one."""
    cells = _cells(text, s, e)
    return (
        len(cells) >= _HEADINGS_IN_A_ROW
        and all(_WORD_RE.search(text, cs, ce) and len(text[cs:ce].split()) <= _HEADING_WORDS for cs, ce in cells)
        and not any(c.isdigit() for c in text[s:e])
    )


def _unlabelled_cell_over(
    c0: int,
    c1: int,
    s: int,
    e: int,
    ls: int,
    le: int,
    k: int,
    labels: list[Label],
    label_starts: list[int],
    lines: Lines,
) -> bool:
    """Whether a cell of the header line s..e that holds no label stands over columns
    c0..c1 more than label k's cell does ("Price" over "$ 1,000.00", "Tax" over the rate
    beside it), where the header and the value's row ls..le have not as many cells: then
    the label's column is another. With as many cells, rank pairs them (`header_cell_over`)."""
    text = lines.text
    header = _cells(text, s, e)
    if len(header) == len(_cells(text, ls, le)):
        return False

    def over(cell: tuple[int, int]) -> int:
        return min(c1, lines.column(s, cell[1])) - max(c0, lines.column(s, cell[0]))

    own = next((over(cell) for cell in header if cell[0] <= labels[k].start < cell[1]), None)
    first, last = bisect_left(label_starts, s), bisect_left(label_starts, e)
    return own is not None and any(
        bisect_left(label_starts, cs, first, last) == bisect_left(label_starts, ce, first, last)
        and over((cs, ce)) > own
        for cs, ce in header
    )


def _label_over(
    c0: int,
    c1: int,
    s: int,
    e: int,
    labels: list[Label],
    label_starts: list[int],
    lines: Lines,
    used: set[int] | frozenset[int] = frozenset(),
    *,
    min_overlap: int,
) -> int | None:
    """The label on the line s..e whose columns overlap columns c0..c1 the most, by at
    least `min_overlap` (negative: a gap that narrow still counts), not one of `used`."""
    best: tuple[int, int] | None = None
    for k in range(bisect_left(label_starts, s), bisect_left(label_starts, e)):
        if k in used:
            continue
        overlap = min(c1, lines.column(s, labels[k].end)) - max(c0, lines.column(s, labels[k].start))
        if overlap >= min_overlap and (best is None or overlap > best[0]):
            best = (overlap, k)
    return None if best is None else best[1]


def _ranked_header(
    start: int, used: set[int] | frozenset[int], labels: list[Label], label_starts: list[int], lines: Lines
) -> int | None:
    """The lone figure of a row of cells under a header line of words with as many cells
    ("Bank Info  Due By  Total Due" over "Account No: 123 456 789  10 Jan 2018  $8000"), read
    by rank where the columns no longer say it (a proportional font's drift): the one label
    in the header's cell of the figure's rank (`header_cell_over`), when the figure's own
    cell names nothing before it."""
    text = lines.text
    cell = header_cell_over(text, lines, labels, label_starts, start)
    own = next((c for c in _cells(text, *lines.bounds(lines.line_of(start))) if c[0] <= start < c[1]), None)
    if cell is None or own is None or bisect_left(label_starts, own[0]) < bisect_left(label_starts, start):
        return None
    h0, h1 = cell
    inside = [k for k in range(bisect_left(label_starts, h0), bisect_left(label_starts, h1)) if labels[k].end <= h1]
    return inside[0] if len(inside) == 1 and inside[0] not in used else None


def _header_line_above(text: str, lines: Lines, li: int) -> int | None:
    """The first line above line li with text, within a header's reach of it."""
    j = li - 1
    while j >= 0 and not text[slice(*lines.bounds(j))].strip():
        j -= 1
    return j if j >= 0 and li - j <= COLUMN_LOOKUP_LINES else None


def header_cell_over(
    text: str, lines: Lines, labels: list[Label], label_starts: list[int], start: int
) -> tuple[int, int] | None:
    """The header's cell over the value at `start`, read by order ("Invoice Number  Invoice
    Date  Charges" over "34278587  6/18/2017  $56,651.49", the row narrower than its header):
    when the first line above with text holds a label, no digit but a rate's ("VAT 21%") and
    as many cells (split at runs of blanks) as the value's line, two or more, the header's
    cell of the value's rank. None when the lines do not pair so."""
    li = lines.line_of(start)
    row = _cells(text, *lines.bounds(li))
    j = _header_line_above(text, lines, li)
    if len(row) < 2 or j is None:
        return None
    hs, he = lines.bounds(j)
    header = _cells(text, hs, he)
    first = bisect_left(label_starts, hs)
    if (
        len(header) != len(row)
        or any(c.isdigit() for c in RATE_RE.sub("", text[hs:he]))
        or not (first < len(labels) and labels[first].start < he)  # no label: no header
    ):
        return None
    return header[next((i for i, (_, e) in enumerate(row) if start < e), len(row) - 1)]


def header_cell_overlapping(text: str, lines: Lines, start: int) -> tuple[int, int] | None:
    """The one cell of the first line above with text whose columns overlap those of the
    value's cell at `start`, where that line has more cells than the value's (a column
    left empty: "Importo bollo  Sconto/Maggiorazione" over "2,00"); None when no cell or
    more than one stands over it, or the line above holds a digit but a rate's."""
    li = lines.line_of(start)
    ls, le = lines.bounds(li)
    row = _cells(text, ls, le)
    j = _header_line_above(text, lines, li)
    own = next(((s, e) for s, e in row if s <= start < e), None)
    if own is None or j is None:
        return None
    hs, he = lines.bounds(j)
    header = _cells(text, hs, he)
    if len(header) <= len(row) or any(c.isdigit() for c in RATE_RE.sub("", text[hs:he])):
        return None
    c0, c1 = lines.column(ls, own[0]), lines.column(ls, own[1])
    over = [cell for cell in header if lines.column(hs, cell[0]) < c1 and c0 < lines.column(hs, cell[1])]
    return over[0] if len(over) == 1 else None


# A label that ends a sentence: a full stop and the next sentence's first word after it
# (not "Invoice Nr. INV-7781": a number's abbreviation, and a code in capitals)
_SENTENCE_ENDS = re.compile(r"(?<!(?i:\bno))(?<!(?i:\bnr))(?<!(?i:\bnum))(?<!\bn°)[.!?][ \t]+[A-Z][a-z]")


def _another_names(gap: str) -> bool:
    """Whether something between a label and a value names the value instead: a generic
    word right before it, after other words ("Due on receipt    Date: 06/01/2024"), or
    the label's own value after its colon, then a cell's end ("Fälligkeit: sofort   ")."""
    for generic in GENERIC_LABEL_BEFORE.values():
        m = generic.search(gap)
        if m is not None and gap[: m.start()].strip(" \t:.-/"):
            return True
    return _OWN_VALUE_THEN_CELL.match(gap) is not None


def _dating_roles(lexicon: Lexicon) -> dict[str, str]:
    """The role of the date each number label's role names after a dating word, by the
    lexicon's roles of the standard sets (NUMBERS_DATED_AFTER); a role two sets of numbers
    share dates nothing."""

    def roles(name: str) -> set[str]:
        return {lexicon.role_of_label[p] for p in VALUE_LABEL_SETS[name] if p in lexicon.role_of_label}

    numbers = {number: roles(number) for number in NUMBERS_DATED_AFTER}
    owners = [role for found in numbers.values() for role in found]
    dated: dict[str, str] = {}
    for number, date_set in NUMBERS_DATED_AFTER.items():
        dates = roles(date_set)
        for role in numbers[number]:
            if len(dates) == 1 and owners.count(role) == 1:
                dated[role] = next(iter(dates))
    return dated


_COLON_ENDS_LINE = re.compile(r"[ \t]*:[ \t]*")
# A till's words name the number right after them on their line ("Table 12", "PUMP# 06",
# "Cashier: 1042"), with no word between and never a column: otherwise they are more
# often an address's ("12 Mill Lane" over "Receipt 4471", "Store Street Sale 20931") or a
# bank's name ("Caja Rural  Op. 004471").
_INLINE_ONLY_ROLES = frozenset({"@till_number"})
_DELIVERY_NOTE_ROLE = "@delivery_note_number"


class LabelIndex:
    """The labels of a text's dates and identifiers ("Invoice date", "Order no."), and
    which one names the value written at a place: the nearest label before it on its
    line, with no digit between (else that label is an earlier value's), or, when no
    label stands before it on its line, the column header above it ("Invoice date" over
    "28.02.2026", "Invoice date:" ending the line before). A label with a figure after it
    on its own line, or a colon and a value, names that and heads no column. A document's
    number label, its number and a dating word name the date after them as that
    document's ("Lieferschein Nr. LS-4471 vom 08.03.2024": the delivery date)."""

    def __init__(self, text: str, lines: Lines, lexicon: Lexicon) -> None:
        self.text = text
        self.lines = lines
        # not another document's title joined to the invoice's ("FACTURĂ ȘI AVIZ DE
        # ÎNSOȚIRE", "Faktura / dodací list č. 2026117"): one document, its number the invoice's
        self.labels = [
            lb
            for lb in find_labels(text, lexicon)
            if lb.role != _DELIVERY_NOTE_ROLE
            or not _AN_INVOICE_AND.search(text, lines.starts[lines.line_of(lb.start)], lb.start)
        ]
        self.starts = [lb.start for lb in self.labels]
        inline = set()
        for k, lb in enumerate(self.labels):
            _, line_end = lines.bounds(lines.line_of(lb.start))
            stop = min(line_end, self.starts[k + 1]) if k + 1 < len(self.labels) else line_end
            after = text[lb.end : stop]
            if _SENTENCE_ENDS.match(text, lb.end, stop):
                continue  # "This email serves as your VAT receipt. Prices include VAT at 20%."
            if any(c.isdigit() for c in after) or _NAMED_AFTER_COLON.match(after):
                inline.add(k)
        self._inline = frozenset(inline)
        self._dated = _dating_roles(lexicon)
        self._role_of = lexicon.role_of_label
        self.kind_of_role = lexicon.kind_of_role

    def label_of(self, start: int, end: int) -> Label | None:
        """The label that names the value at start:end, or None."""
        k = bisect_right(self.starts, start) - 1
        while k >= 0 and self.labels[k].end > start:
            k -= 1  # a label inside the value ("Delivery Date Services Ltd") names nothing of it
        line_start, _ = self.lines.bounds(self.lines.line_of(start))
        if k >= 0 and self.labels[k].start >= line_start:
            lb = self.labels[k]
            gap = self.text[lb.end : start]
            if (
                _within_label_reach(gap)
                and not any(c.isdigit() for c in gap)
                and not _another_names(gap)
                and not (lb.role in _INLINE_ONLY_ROLES and any(c.isalpha() for c in gap))
            ):
                return lb
            dated = self._dated.get(lb.role)
            if dated is not None and _NUMBER_THEN_DATING.fullmatch(gap):
                # "Lieferschein Nr. LS-4471 vom 08.03.2024": its document's date; where a word
                # joined before shares the label ("Rechnung / Lieferschein Nr."), that
                # document's, named first
                first = (self._dated.get(self._role_of.get(form, "")) for form in self.sharing_its_tail(lb))
                return replace(lb, role=next((role for role in first if role is not None), dated))
            return None  # its line has a label, which names an earlier value
        paired = self._header_cell(start) or self._stacked_cell(start, end)
        if paired is not None:
            above: Label | None = paired[0]
        else:
            header = _column_label(start, end, self._inline, self.labels, self.starts, self.lines, words_stop=False)
            above = None if header is None else self.labels[header]
        return None if above is None or above.role in _INLINE_ONLY_ROLES else above

    def names_a_value(self, label: Label) -> bool:
        """Whether `label` names a value: one after it on its line (a figure, or any after
        its colon), one below it where its colon ends its line, or a column's (a label of
        two words or more, "Invoice Date" over its date; one word that is a cell of a row
        of cells, "Rechnungsnummer    Rechnungsdatum", or alone over a figure); a title
        ("RECEIPT", "LIEFERSCHEIN" over a name) or a word inside a sentence ("Keep this
        receipt") names none."""
        if bisect_left(self.starts, label.start) in self._inline:
            return True
        line = self.lines.line_of(label.end)
        _, line_end = self.lines.bounds(line)
        if _COLON_ENDS_LINE.fullmatch(self.text, label.end, line_end) is not None:
            return True
        if len(self.text[label.start : label.end].split()) > 1:
            return True
        cells = self.lines.cells(line)
        cell = next(((s, e) for s, e in cells if s <= label.start < e), None)
        if cell is None or self.text[cell[0] : cell[1]].rstrip(" :#.") != self.text[label.start : label.end]:
            return False  # a word among others in its cell: a sentence's or a name's
        below = self.lines.cells(line + 1) if line + 1 < len(self.lines.starts) else []
        if len(cells) > 1:
            # a cell of a row of header cells, over its value ("Rechnungsnummer
            # Rechnungsdatum" over "RE-25-00412  14.03.2025", a blank line between or
            # none); not a title beside a name ("Bramble    Receipt") with nothing under it
            c0, c1 = label.start - self.lines.starts[line], label.end - self.lines.starts[line]
            # past a blank line only in a row of labels ("RECEIPT   DATE   ORDER ID"), not
            # under a title beside a name ("BLUE FIN DINER    RECEIPT")
            line_start, line_end = self.lines.bounds(line)
            row_of_labels = bisect_left(self.starts, line_end) - bisect_left(self.starts, line_start) > 1
            for under in range(line + 1, min(line + (3 if row_of_labels else 2), len(self.lines.starts))):
                under_cells, under_start = self.lines.cells(under), self.lines.starts[under]
                if under_cells:
                    return any(s - under_start < c1 and e - under_start > c0 for s, e in under_cells)
            return False
        first = self.text[below[0][0] : below[0][1]] if below else ""
        return " " not in first and any(c.isdigit() for c in first)  # "RE-25-00412", a value alone

    def sharing_its_tail(self, label: Label) -> set[str]:
        """The labels written in short before `label` (and the labels joined to it): a
        word joined to it that takes its last part ("Rechnungs-/Lieferdatum" is
        "Rechnungsdatum" and "Lieferdatum", "Rechnung / Lieferschein-Nr." "Rechnung Nr"
        too, "Invoice / Delivery date" "Invoice date"), as the phrases a field's labels
        are compared in. Every way of taking the part is given: the caller keeps those
        that are a label it knows."""
        first = self.joined(label)[0]
        line_start, _ = self.lines.bounds(self.lines.line_of(first.start))
        m = _SHARED_TAIL_WORD.search(self.text, line_start, first.start)
        if m is None or not m.group(1)[:1].isalpha():
            return set()
        word = normalise_phrase(m.group(1))
        written = normalise_phrase(self.text[label.start : label.end])
        joiners = ("", "-") if m.group(2) else (" ", "-", "")
        return {word + joiner + written[k:].lstrip(" -") for k in range(1, len(written) - 1) for joiner in joiners}

    def joined(self, label: Label) -> list[Label]:
        """The labels naming one value with `label`, joined to it before it on its line
        ("Invoice Date (Tax Point)": both), `label` last."""
        k = bisect_left(self.starts, label.start)
        chain = [label]
        while k > 0 and _LABEL_JOIN.fullmatch(self.text, self.labels[k - 1].end, self.labels[k].start):
            k -= 1
            chain.insert(0, self.labels[k])
        return chain

    def _stacked_cell(self, start: int, end: int) -> tuple[Label | None] | None:
        """The header of a row written one cell per line, as OCR and some converters give a
        table ("Invoice Number", "Invoice Date", "Charges" on lines of their own, then
        "34278587", "6/18/2017", "$56,651.49"): the value is the whole of the i-th of the
        lines of one cell under a run of at least as many lines of one cell, no digit and
        at most one label each (some of them one); the label ending the i-th such line names
        it, or none does. None when the lines do not stack so."""
        lines, text = self.lines, self.text

        def cell(j: int) -> tuple[int, int] | None:
            cells = _cells(text, *lines.bounds(j))
            return cells[0] if len(cells) == 1 else None

        def header_label(j: int) -> int | None:
            """The label ending line j's one cell, when the line could head a column."""
            span = cell(j)
            if span is None or any(c.isdigit() for c in text[span[0] : span[1]]):
                return None
            inside = range(bisect_left(self.starts, span[0]), bisect_left(self.starts, span[1]))
            if len(inside) > 1:
                return None  # a line of labels is a header read across, not down
            if inside and not text[self.labels[inside[0]].end : span[1]].strip(" \t:#"):
                return inside[0]
            return -1  # a header cell with no label (or one ending in other words)

        li = lines.line_of(start)
        if cell(li) != (start, end):
            return None
        top = li
        while top > 0 and li - top < _MAX_STACK and cell(top - 1) is not None and header_label(top - 1) is None:
            top -= 1
        j = top - 1
        if j >= 0 and not text[slice(*lines.bounds(j))].strip():
            j -= 1  # one blank line between the header and its row
        header: list[int] = []
        while j >= 0 and len(header) <= _MAX_STACK and (k := header_label(j)) is not None:
            header.append(k)
            j -= 1
        header.reverse()
        rank = li - top
        if len(header) < 2 or rank >= len(header) or all(k < 0 for k in header):
            return None
        return (self.labels[header[rank]] if header[rank] >= 0 else None,)

    def _header_cell(self, start: int) -> tuple[Label | None] | None:
        """The header of a row read by order (`header_cell_over`): the label in the header's
        cell of the value's rank, or none; None when the lines do not pair so."""
        cell = header_cell_over(self.text, self.lines, self.labels, self.starts, start)
        if cell is None:
            return None
        k = bisect_left(self.starts, cell[0])
        return (self.labels[k] if k < len(self.labels) and self.labels[k].start < cell[1] else None,)
