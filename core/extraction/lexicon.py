"""The words a document uses for its amounts, compiled into the matchers the role
assignment and the heuristics use.

Two sources: a schema's amount fields name their labels (core.schemas; "@total" takes
a standard set), and ``amount_lexicon.json`` holds the standard label sets and the
words that say a number is something else (a charge, a page figure, a rate's base).
The data file's phrases are checked as written, because a phrase not written as the
matcher compares it would silently never match; a schema's labels are normalised.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from dataclasses import field as dataclass_field
from importlib import resources
from typing import Any

from vetq.core.extraction.amounts import RATE_WITHOUT_SIGN

__all__ = [
    "ADJUSTMENT_KINDS",
    "AMOUNT_LEXICON_FILE",
    "STANDARD_LABEL_SETS",
    "VALUE_LABEL_SETS",
    "WORD_RE",
    "Lexicon",
    "LexiconError",
    "compile_lexicon",
    "compile_value_lexicon",
    "first_word",
    "label_sets_from_data",
    "lexicon_from_data",
    "normalise_label",
    "normalise_phrase",
    "phrase_pattern",
]

AMOUNT_LEXICON_FILE = "amount_lexicon.json"
ADJUSTMENT_KINDS = ("charge", "deduction", "either")

# A run of letters. The first one of a phrase indexes it: the label scan tries the
# full pattern only at words that can start a phrase, which keeps it fast on big text.
WORD_RE = re.compile(r"[^\W\d_]+")
# A first word longer than this is never tried (see the scan in core/extraction/roles.py).
MAX_FIRST_WORD_CHARS = 20
_WS_RE = re.compile(r"\s+")
_SPACE = r"[ \t\u00a0\u202f]{1,2}"
_SPACE_OR_NONE = r"[ \t\u00a0\u202f]{0,2}"
_GLUED_NUMBER_SIGN_RE = re.compile(r"(?<=[^\W\d_]|\.)#")
# Chinese and Japanese write a word's characters together, and a till or a form spaces a
# short label's out ("小　計", "合   計"): blanks between two of them are no word's end.
_HAN_KANA = "\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff"
_HAN_KANA_GAP_RE = re.compile(rf"(?<=[{_HAN_KANA}])[ \t\u3000]+(?=[{_HAN_KANA}])")
_HAN_KANA_WORD_RE = re.compile(rf"[{_HAN_KANA}]{{2,}}")
_LETTER_SPACING = r"[ \t\u3000]{0,4}"


class LexiconError(ValueError):
    """A lexicon's data is malformed; the message names the entry."""


def normalise_phrase(text: str) -> str:
    """A matched phrase as the lexicon writes it: casefolded, whitespace runs as one space
    (none between two Chinese or Japanese characters), a number sign glued to the word
    before it set apart ("AUTH#" is "auth #")."""
    return _HAN_KANA_GAP_RE.sub("", _WS_RE.sub(" ", _GLUED_NUMBER_SIGN_RE.sub(" #", text.casefold())))


def phrase_pattern(phrase: str) -> str:
    """The regex for a phrase: its words with one or two spaces or tabs between them (a
    number sign may be glued to the word before it: "AUTH#", "Order#"); a Chinese or
    Japanese word's characters with blanks between them or none."""
    words = phrase.split(" ")
    return _word_pattern(words[0]) + "".join(
        (_SPACE_OR_NONE if word == "#" else _SPACE) + _word_pattern(word) for word in words[1:]
    )


def _word_pattern(word: str) -> str:
    if _HAN_KANA_WORD_RE.fullmatch(word) is None:
        return re.escape(word)
    return _LETTER_SPACING.join(re.escape(c) for c in word)


def first_letters(phrase: str) -> set[str]:
    """What the label scan may meet first of a phrase: its first word, or the first
    character of a Chinese or Japanese one (spaced out: "小　計")."""
    word = first_word(phrase)
    return {word, word[0]} if _HAN_KANA_WORD_RE.match(word) else {word}


def normalise_label(label: str) -> str:
    """A label as a schema author wrote it, in the form the matcher compares; refused
    (LexiconError) when the matcher could never find it."""
    phrase = normalise_phrase(label.strip())
    if not phrase:
        raise LexiconError("a label must not be empty")
    if len(first_word(phrase)) > MAX_FIRST_WORD_CHARS:
        raise LexiconError(f"{label!r} starts with a word longer than {MAX_FIRST_WORD_CHARS} letters")
    return phrase


def first_word(phrase: str) -> str:
    m = WORD_RE.match(phrase)
    if m is None:
        raise LexiconError(f"{phrase!r} does not start with a letter (a label is found from its first word)")
    return m.group()


def _alternation(phrases: Any) -> str:
    # longest first, so a phrase wins over a shorter one it starts with ("total due" over "total")
    return "|".join(phrase_pattern(p) for p in sorted(phrases, key=len, reverse=True))


@dataclass(frozen=True)
class Lexicon:
    """A lexicon compiled. ``role_of_label`` and ``adjustment_kind`` map a normalised
    phrase to its role / kind; the patterns match in the document's own text."""

    role_of_label: Mapping[str, str]
    label_first_words: frozenset[str]
    label_re: re.Pattern[str]
    # "Taux TVA", "Tipo de IVA", "P.U. HT": a role word after one of these heads a column
    # of rates or of unit prices
    column_word_before_re: re.Pattern[str]
    # "Single price:", "Einzelpreis": a line of a unit price, whose role words name no sum
    unit_price_line_re: re.Pattern[str]
    # "after", "nach", "setelah" alone between a label and an adjustment's phrase, or "and",
    # "&", "/" (and a word at most): the phrase is part of the label ("Subtotal after
    # discount", "Taxes and fees", "Tax/Fees"), not the figure's
    adjustment_in_label_re: re.Pattern[str]
    trailing_label_prefixes: tuple[str, ...]
    tax_included_prefixes: tuple[str, ...]
    tax_included_labels: frozenset[str]  # "内消費税等": a tax label that says the figures hold the tax
    adjustment_kind: Mapping[str, str]
    adjustment_re: re.Pattern[str]
    # deductions that are a tax withheld for the state ("IRPF", "Tax withheld"): the total
    # after them is the invoice's
    withholdings: frozenset[str]
    # deductions that pay the total, or part of it ("Payment received", "Anzahlung", "Gift
    # card"): what they leave is still owed, the total stays the sum before them
    payments: frozenset[str]
    # words of an insurer paying for the buyer on a payment's line ("Tiers payant", "Ins.
    # paid", "Von Krankenkasse bezahlt"): what is left after it is what the buyer paid
    paid_by_others_re: re.Pattern[str]
    # payments that may be a reduction of the price instead ("Credits", a trade-in's credit)
    payments_maybe_discounts: frozenset[str]
    # one of them, or a word for deductions, after a total label ("Total das Retenções",
    # "Total Deduções/Reduções", "Total discounts"): their sum, a deduction, not a total
    deduction_sum_after_re: QualifierAfter
    partial_re: re.Pattern[str]
    page_mark_re: re.Pattern[str]
    tip_guide_re: re.Pattern[str]
    tender_re: re.Pattern[str]  # "Bargeld", "Change": cash handed over and what it left
    # a word only one currency's country prints ("NPWP"): its currency, its dates day first
    country_of_word: Mapping[str, tuple[str, bool]]
    country_words_re: re.Pattern[str]
    discount_column_re: re.Pattern[str]  # "Disc", "Dto": a discount written short (a column, a figure off)
    rate_base_re: re.Pattern[str]
    term_unit_re: re.Pattern[str]  # "days", "Tage", "jours": the number before it is a payment term
    label_tail_words: frozenset[str]  # "amount", "Betrag": a label's own words after it ("Gross Total Amount")
    # "Serie: A  Folio: 1542": an identifier's series and number, each after its own word
    series_number_re: re.Pattern[str]
    inclusion_re: re.Pattern[str]  # "incl.", "excl." right before a label: it qualifies the one before
    inclusion_after_re: re.Pattern[str]  # "(IVA incluido)", "(IVA 10% incl.)": the same, written after
    # Labels of a figure before tax ("subtotaal") and the qualifying words that put the tax
    # in the figure ("incl."): "Subtotaal incl. BTW 121,00" is a gross figure, no subtotal.
    net_labels: frozenset[str]
    tax_inclusive_re: re.Pattern[str]
    tax_inclusive_after_re: re.Pattern[str]
    # The qualifying words that leave the tax out ("senza", "before", "bez"): a total label
    # they qualify with a tax label names the goods' sum ("Totale senza IVA").
    tax_exclusive_re: re.Pattern[str]
    tax_exclusive_after_re: re.Pattern[str]
    # A line that rounds the total ("Rounding Adj -0.02"): a net total's label right under
    # it names the rounded total ("NET TOTAL (RM) 83.70")
    rounding_re: re.Pattern[str]
    # After a tax label: a category free of that tax ("GST-free supplies", "MwSt-frei")
    tax_free_after_re: re.Pattern[str]
    # Those words less the ones that add the tax ("zzgl."), right before a tax label with
    # no label before it: the label names the goods' sum ("Amount before VAT").
    tax_left_out_re: re.Pattern[str]
    # Qualifying words that qualify the label before only in its cell ("dont TVA"): across
    # a run of blanks they start a column of their own ("Total TTC     dont TVA")
    cell_qualifier_re: re.Pattern[str]
    # Total labels qualified as the goods' sum ("VALOR TOTAL DOS PRODUTOS", "Merchandise
    # total") name a figure before charges and taxes: `goods_role` (the schema's subtotal
    # field, None when it has none) is its role, not the total's.
    goods_sum_labels: frozenset[str]
    goods_after_re: QualifierAfter
    goods_before_re: WordBefore
    goods_role: str | None
    # Total labels qualified as a tax's sum ("VALOR TOTAL DO IPI") name that tax:
    # `tax_sum_role` (the schema's tax field, None when it has none) is their role.
    tax_sum_labels: frozenset[str]
    tax_sum_after_re: QualifierAfter
    tax_sum_role: str | None
    # Labels of the document's grand total ("Total TTC", "Gesamtbetrag"), and the words
    # that make a total label one ("VALOR TOTAL DA NOTA"): they outrank plain total labels.
    grand_total_labels: frozenset[str]
    grand_qualified_labels: frozenset[str]
    grand_roles: frozenset[str]  # the roles some of whose labels can name a grand total
    grand_after_re: QualifierAfter
    # the value lexicon's: each labelled field's kind by its path, the kind of value its
    # labels name ("Bestellnummer / Datum" over "4500123456 / 03.02.2026" names no date)
    kind_of_role: Mapping[str, str] = dataclass_field(default_factory=dict)
    # each unit of measure's measure ("kg": weight, "pcs": count): a number written only
    # with another measure's unit is that measure's figure ("412 kg" as a package count)
    measure_of_unit: Mapping[str, str] = dataclass_field(default_factory=dict)


def _section(data: Mapping[str, Any], name: str, key: str) -> Any:
    section = data.get(name)
    if not isinstance(section, Mapping) or key not in section:
        raise LexiconError(f"{name}.{key} is missing")
    return section[key]


def _strings(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
        raise LexiconError(f"{where} must be a non-empty list of non-empty strings")
    if len(set(value)) != len(value):
        raise LexiconError(f"{where} lists a phrase twice")
    return tuple(value)


def _phrases(value: Any, where: str) -> tuple[str, ...]:
    phrases = _strings(value, where)
    for p in phrases:
        if normalise_phrase(p) != p or p != p.strip():
            raise LexiconError(f"{where}: {p!r} is not normalised (write it casefolded, single-spaced, trimmed)")
        if len(first_word(p)) > MAX_FIRST_WORD_CHARS:
            raise LexiconError(f"{where}: {p!r} starts with a word longer than {MAX_FIRST_WORD_CHARS} letters")
    return phrases


def _deductions(
    data: Mapping[str, Any],
    key: str,
    kinds: Mapping[str, str],
    read: Callable[[Any, str], tuple[str, ...]],
    kind: str = "deduction",
) -> tuple[str, ...]:
    """A list of adjustments' phrases of one kind (adjustments.<key>), each one of them."""
    phrases = read(_section(data, "adjustments", key), f"adjustments.{key}")
    stray = [p for p in phrases if kinds.get(p) != kind]
    if stray:
        raise LexiconError(f"adjustments.{key}: {stray[0]!r} is not one of the {kind} phrases")
    return phrases


def _country_words_re(printed: tuple[str, ...]) -> re.Pattern[str]:
    """The country words as printed: an abbreviation as the lexicon writes it or in
    capitals only ("RFC", "KvK": not a cashier's "Dian"), not joined to a ticket's number
    ("RFC-2291"); a longer word in any case."""
    forms = []
    for word in sorted(printed, key=len, reverse=True):
        if word.isascii() and word.isalpha() and len(word) <= 5:
            forms.append("(?-i:" + "|".join(map(re.escape, dict.fromkeys((word, word.upper())))) + ")(?!-)")
        else:
            forms.append(re.escape(word))
    return re.compile(r"(?i)(?<![^\W_])(?:" + "|".join(forms) + r")(?![^\W_])")


def _country_words(value: Any) -> tuple[tuple[str, ...], dict[str, tuple[str, bool]]]:
    """country_words.countries: the words as printed, and each word, casefolded, to its
    country's currency and whether its numeric dates read day first."""
    where = "country_words.countries"
    if not isinstance(value, list):
        raise LexiconError(f"{where} must be a list")
    out: dict[str, tuple[str, bool]] = {}
    printed: list[str] = []
    for country in value:
        if not isinstance(country, dict) or set(country) != {"currency", "day_first", "words"}:
            raise LexiconError(f"{where}: each country has its currency, day_first and words")
        currency, day_first = country["currency"], country["day_first"]
        if not (isinstance(currency, str) and len(currency) == 3 and currency.isupper()) or not isinstance(
            day_first, bool
        ):
            raise LexiconError(f"{where}: {currency!r} is no currency code, or day_first no true/false")
        for word in _strings(country["words"], f"{where}.words"):
            if word.casefold() in out:
                raise LexiconError(f"{where}: {word!r} is listed twice")
            out[word.casefold()] = (currency, day_first)
            printed.append(word)
    return tuple(printed), out


def _words(value: Any, where: str) -> tuple[str, ...]:
    words = _strings(value, where)
    for w in words:
        if w != w.casefold() or any(c.isspace() for c in w):
            raise LexiconError(f"{where}: {w!r} must be one casefolded word")
    return words


def _prefixes(value: Any, where: str) -> tuple[str, ...]:
    prefixes = _strings(value, where)
    for p in prefixes:
        if p != p.casefold():
            raise LexiconError(f"{where}: {p!r} must be casefolded")
    return prefixes


def _kinds(value: Any, where: str, allowed: tuple[str, ...] | None = None) -> dict[str, str]:
    """phrase -> kind from {kind: [phrases]}; a phrase under two kinds is refused."""
    if not isinstance(value, Mapping) or not value:
        raise LexiconError(f"{where} must map each name to its phrases")
    kind_of: dict[str, str] = {}
    for kind, phrases in value.items():
        if allowed is not None and kind not in allowed:
            raise LexiconError(f"{where}: unknown kind {kind!r} (one of {', '.join(allowed)})")
        for p in _phrases(phrases, f"{where}.{kind}"):
            if p in kind_of:
                raise LexiconError(f"{where}: {p!r} is listed under both {kind_of[p]!r} and {kind!r}")
            kind_of[p] = kind
    return kind_of


def lexicon_from_data(data: Mapping[str, Any], role_labels: Mapping[str, Any], *, amounts: bool = True) -> Lexicon:
    """Compile the words of a lexicon's data (the form of ``amount_lexicon.json``) with
    the labels of each role (a schema's labelled amount fields, by path). With
    amounts=False the labels are those of dates and identifiers, which the words that
    make an amount's label something else ("VAT No.", "Net 30 days") must not hide."""
    role_of_label = _kinds(role_labels, "labels") if role_labels else {}
    not_labels = _words(_section(data, "not_a_label_when_followed_by", "words"), "not_a_label_when_followed_by")
    term_units = _words(_section(data, "payment_term_units", "words"), "payment_term_units")
    # With no labelled field, no text is a label: (?!) never matches.
    alternation = _alternation(role_of_label) if role_of_label else "(?!)"
    # Atomic: the longest label that ends on a word's end is the label there, so when the
    # words after it make it no label ("KDV Matrahı (%)"), a shorter one it starts with
    # ("KDV") is not read in its place.
    # a label ending in a sign may have its value glued after it ("Order #100009733", "PO#4471");
    # an Indian GST part its rate ("CGST9 (9%)", "SGST2.5", as Zoho names a tax group); any
    # label a rate with its sign
    label_pattern = (
        r"(?<![^\W_])(?>(?:"
        + alternation
        + r")(?:(?<![^\W_])|(?![^\W_])|(?<=gst)[0-9]{1,2}(?:\.[0-9])?(?![^\W_])"
        # a rate glued after it ("外税8%  ¥115", "MwSt19%")
        + r"|(?=[0-9]{1,2}(?:[.,][0-9]{1,2})?[ \t]*%)))"
    )
    if not amounts:
        # payment terms in words: "Due on receipt", "Fälligkeit: sofort"
        terms = _phrases(_section(data, "value_label_not_followed_by", "words"), "value_label_not_followed_by")
        label_pattern += r"(?![ \t]*[:.]?[ \t]*(?:" + "|".join(map(re.escape, terms)) + r")(?![^\W_]))"
    if amounts:
        # a column of rates: "%IVA", "%Contr." (a percent sign with no figure before it)
        label_pattern = r"(?<![^0-9]%)" + label_pattern
        label_pattern += (
            # not a tax id / rate / quantity: "VAT No.", "Tax ID", "USt-IdNr", "Tax rate", "Total items"
            r"(?![ \t]*[:.#\-]{0,2}[ \t]*(?:" + "|".join(map(re.escape, not_labels)) + r")(?![^\W_]))"
            # an id or a rate: "Tax #", "CGST% : 1.12", "VAT %", "ALV-%", "IVA (%): 22.00";
            # not a rate written sign first ("KDV %20": the tax at that rate)
            r"(?![ \t]*(?:#|[-.]?[ \t]*%(?![0-9])|\([ \t]*%[ \t]*\)))"
            # a tax category's code as e-invoice prints write it ("VAT:S (10%)", "VAT:Z"):
            # the category a figure is in, not the tax
            r"(?!:(?-i:S|Z|E|AE|K|G|O|L|M|B)(?![^\W_]))"
            # payment terms: "Net 30 days"
            r"(?![ \t]+[0-9]{1,3}[ \t]*(?:" + "|".join(map(re.escape, term_units)) + r")(?![^\W_]))"
        )
    label_re = re.compile(label_pattern, re.IGNORECASE)
    before_words = _section(data, "not_a_label_when_preceded_by", "words")
    before_connectors = _section(data, "not_a_label_when_preceded_by", "connectors")
    column_word_before = (
        r"(?<![^\W_])(?:"
        + "|".join(map(phrase_pattern, _phrases(before_words, "not_a_label_when_preceded_by.words")))
        + r")(?:[ \t](?:"
        + "|".join(map(re.escape, _words(before_connectors, "not_a_label_when_preceded_by.connectors")))
        + r"))?[ \t]?[:\-(]?[ \t]?$"
        if amounts
        else "(?!)"
    )
    adjustment_kind = _kinds(_section(data, "adjustments", "phrases"), "adjustments.phrases", ADJUSTMENT_KINDS)
    withholdings = _deductions(data, "withholdings", adjustment_kind, _phrases)
    rounding = _deductions(data, "rounding", adjustment_kind, _phrases, "either")
    summed = _deductions(data, "summed_after_total", adjustment_kind, _words)
    payments = _deductions(data, "payments", adjustment_kind, _phrases)
    paid_by_others = _phrases(_section(data, "adjustments", "paid_by_others"), "adjustments.paid_by_others")
    maybe_discounts = _deductions(data, "payments_maybe_discounts", adjustment_kind, _phrases)
    if stray := [p for p in maybe_discounts if p not in payments]:
        raise LexiconError(f"adjustments.payments_maybe_discounts: {stray[0]!r} is not one of the payments")
    inclusion = _strings(_section(data, "qualifying_words", "words"), "qualifying_words")
    exclusion = _qualifying_subset(data, "qualifying_words", "excluding", inclusion)
    adding = _qualifying_subset(data, "qualifying_words", "adding", exclusion, "excluding words")
    in_its_cell = _qualifying_subset(data, "qualifying_words", "in_its_cell", inclusion)
    partial = _words(_section(data, "partial_figure_words", "words"), "partial_figure_words")
    pages = _words(_section(data, "page_words", "words"), "page_words")
    tip_guide = _phrases(_section(data, "tip_guide_words", "words"), "tip_guide_words")
    tender = _words(_section(data, "tender_words", "words"), "tender_words")
    printed_country_words, country_of_word = _country_words(_section(data, "country_words", "countries"))
    rate_base = _words(_section(data, "rate_base_words", "words"), "rate_base_words")
    net_labels, tax_inclusive = _tax_included_net_labels(data, inclusion)
    goods = _GoodsSums.from_data(data, role_of_label)
    tax_sums = _GoodsSums.from_data(data, role_of_label, "tax_sum_labels", goods.connectors)
    grand_labels, grand_qualified, grand_words = _grand_total_labels(data)
    return Lexicon(
        measure_of_unit=_kinds(_section(data, "measure_units", "groups"), "measure_units.groups"),
        role_of_label=role_of_label,
        label_first_words=frozenset(letters for p in role_of_label for letters in first_letters(p)),
        label_re=label_re,
        column_word_before_re=re.compile(column_word_before, re.IGNORECASE),
        unit_price_line_re=re.compile(
            r"[ \t]*(?:" + _listed(data, "unit_price_lines", "phrases") + r")(?![^\W_])", re.IGNORECASE
        ),
        adjustment_in_label_re=re.compile(
            r"[ \t]*(?:"
            + _listed(data, "after_adjustment_words", "words")
            + r"|(?:"
            + _listed(data, "after_adjustment_words", "joining")
            # a whole word ("e", "i", "y" do not start "Extra", "Item"), then one more at most
            + r")(?![^\W_])(?:[ \t]+[^\W\d_]+)?)[ \t]*$",
            re.IGNORECASE,
        ),
        trailing_label_prefixes=_prefixes(
            _section(data, "trailing_label_prefixes", "prefixes"), "trailing_label_prefixes"
        ),
        tax_included_prefixes=_prefixes(_section(data, "tax_included_prefixes", "prefixes"), "tax_included_prefixes"),
        tax_included_labels=frozenset(_phrases(_section(data, "tax_included_labels", "labels"), "tax_included_labels")),
        adjustment_kind=adjustment_kind,
        withholdings=frozenset(withholdings),
        payments=frozenset(payments),
        payments_maybe_discounts=frozenset(maybe_discounts),
        paid_by_others_re=re.compile(
            r"(?<![^\W_])(?:" + "|".join(map(re.escape, paid_by_others)) + r")(?![^\W_])", re.IGNORECASE
        ),
        deduction_sum_after_re=_qualifier_after(
            (*(p for p in withholdings if " " not in p), *summed), goods.connectors
        ),
        adjustment_re=re.compile(
            r"(?<![^\W_])" + _not_after(data) + r"(?:" + _alternation(adjustment_kind) + r")(?![^\W_])", re.IGNORECASE
        ),
        partial_re=re.compile(r"(?<![^\W_])(?:" + "|".join(map(re.escape, partial)) + r")(?![^\W_])", re.IGNORECASE),
        # a form feed, or a page word with its number
        country_of_word=country_of_word,
        country_words_re=_country_words_re(printed_country_words),
        tender_re=re.compile(r"(?<![^\W_])(?:" + "|".join(map(re.escape, tender)) + r")(?![^\W_])", re.IGNORECASE),
        discount_column_re=re.compile(
            r"(?<![^\W_])(?:" + _listed(data, "discount_column_words", "words") + r")(?![^\W_])", re.IGNORECASE
        ),
        tip_guide_re=re.compile(
            r"(?<![^\W_])(?:" + "|".join(map(phrase_pattern, tip_guide)) + r")(?![^\W_])", re.IGNORECASE
        ),
        page_mark_re=re.compile(
            r"\f|(?<![^\W_])(?:" + "|".join(map(re.escape, pages)) + r")[ \t]*[0-9]{1,4}(?![0-9])", re.IGNORECASE
        ),
        # after a percent sign, or a rate written without one ("7.250 on $4.97")
        rate_base_re=re.compile(
            rf"(?:%|(?<![0-9.,]){RATE_WITHOUT_SIGN})[ \t]*\(?[ \t]*(?:"
            + "|".join(map(re.escape, rate_base))
            + r")(?![^\W_])",
            re.IGNORECASE,
        ),
        inclusion_re=_ending_phrase(inclusion),
        inclusion_after_re=_starting_phrase(inclusion),
        net_labels=net_labels,
        tax_inclusive_re=_ending_phrase(tax_inclusive),
        tax_inclusive_after_re=_starting_phrase(tax_inclusive),
        tax_exclusive_re=_ending_phrase(exclusion),
        tax_exclusive_after_re=_starting_phrase(exclusion),
        tax_left_out_re=_ending_phrase(tuple(word for word in exclusion if word not in adding)),
        cell_qualifier_re=_ending_phrase(in_its_cell),
        rounding_re=re.compile(
            r"(?<![^\W_])(?:" + _alternation(rounding) + r")(?![^\W_])",
            re.IGNORECASE,
        ),
        tax_free_after_re=re.compile(
            r"[ \t]*-?[ \t]*(?:" + _listed(data, "not_a_label_when_followed_by", "tax_words") + r")(?![^\W_])",
            re.IGNORECASE,
        ),
        goods_sum_labels=goods.labels,
        goods_after_re=_qualifier_after(goods.words, goods.connectors),
        goods_before_re=WordBefore(frozenset(goods.words)),
        goods_role=goods.role,
        tax_sum_labels=tax_sums.labels,
        tax_sum_after_re=_qualifier_after(tax_sums.words, goods.connectors),
        tax_sum_role=tax_sums.role,
        grand_total_labels=grand_labels,
        grand_qualified_labels=grand_qualified,
        grand_roles=frozenset(role for phrase, role in role_of_label.items() if phrase in grand_qualified),
        grand_after_re=_qualifier_after(grand_words, goods.connectors),
        term_unit_re=re.compile(
            r"(?<![^\W_])(?:" + "|".join(map(re.escape, term_units)) + r")(?![^\W_])", re.IGNORECASE
        ),
        label_tail_words=frozenset(_words(_section(data, "label_tail_words", "words"), "label_tail_words")),
        series_number_re=re.compile(
            r"(?<![^\W_])(?:"
            + _listed(data, "identifier_series", "series_words")
            + r")(?![^\W_])[ \t]*[:.]?[ \t]*(?P<series>[^\W_]{1,8})(?![^\W_])[^\n]{0,40}?(?<![^\W_])(?:"
            + _listed(data, "identifier_series", "number_words")
            + r")(?![^\W\d_])[ \t]*[:.#]?[ \t]*(?P<number>[^\W_](?:[\w./-]*[^\W_])?)(?![^\W_])",
            re.IGNORECASE,
        ),
    )


def _tax_included_net_labels(
    data: Mapping[str, Any], inclusion: tuple[str, ...]
) -> tuple[frozenset[str], tuple[str, ...]]:
    """(the phrases of the net label sets, the qualifying words that include the tax)."""
    net_labels = _set_phrases(data, "tax_included_net_labels")
    return net_labels, _qualifying_subset(data, "tax_included_net_labels", "words", inclusion)


def _not_after(data: Mapping[str, Any]) -> str:
    """Lookbehinds that keep an adjustment's phrase after one of `adjustments.not_after_words`
    from being one ("reverse charge" is the VAT's mechanism, no charge)."""
    words = _words(_section(data, "adjustments", "not_after_words"), "adjustments.not_after_words")
    return "".join(rf"(?<!{re.escape(word)}[ \-])" for word in words)


def _listed(data: Mapping[str, Any], section: str, key: str) -> str:
    """`section.key`'s phrases as a regular expression's alternation, each as written."""
    return "|".join(map(re.escape, _strings(_section(data, section, key), section)))


def _qualifying_subset(
    data: Mapping[str, Any], section: str, key: str, inclusion: tuple[str, ...], of: str = "qualifying_words"
) -> tuple[str, ...]:
    """`section.key`'s words, each of which must be a qualifying word (one of `of`): only a
    label a qualifying word drops is read by what they say (the tax included or left out)."""
    words = _strings(_section(data, section, key), f"{section}.{key}")
    stray = [word for word in words if word not in inclusion]
    if stray:
        raise LexiconError(f"{section}.{key}: {stray[0]!r} is not one of the {of}")
    return words


def _set_phrases(data: Mapping[str, Any], section: str) -> frozenset[str]:
    """The phrases of the label sets `section` names."""
    sets = _strings(_section(data, section, "sets"), f"{section}.sets")
    known = label_sets_from_data(data)
    unknown = [name for name in sets if name not in known]
    if unknown:
        raise LexiconError(f"{section}.sets: unknown label set {unknown[0]!r}")
    return frozenset(phrase for name in sets for phrase in known[name])


@dataclass(frozen=True)
class _GoodsSums:
    labels: frozenset[str]
    words: tuple[str, ...]
    connectors: tuple[str, ...]
    role: str | None

    @classmethod
    def from_data(
        cls,
        data: Mapping[str, Any],
        role_of_label: Mapping[str, str],
        section: str = "goods_sum_labels",
        connectors: tuple[str, ...] | None = None,
    ) -> _GoodsSums:
        role_set = _section(data, section, "role_set")
        known = label_sets_from_data(data)
        if role_set not in known:
            raise LexiconError(f"{section}.role_set: unknown label set {role_set!r}")
        # the schema's field that draws most on the role set's phrases (its subtotal)
        roles = [role_of_label[p] for p in known[role_set] if p in role_of_label]
        return cls(
            labels=_set_phrases(data, section),
            words=_words(_section(data, section, "words"), f"{section}.words"),
            connectors=(
                connectors
                if connectors is not None
                else _words(_section(data, section, "connectors"), f"{section}.connectors")
            ),
            role=max(dict.fromkeys(roles), key=roles.count) if roles else None,
        )


def _grand_total_labels(data: Mapping[str, Any]) -> tuple[frozenset[str], frozenset[str], tuple[str, ...]]:
    """(the grand total labels, the labels its words qualify, the words)."""
    section = "grand_total_labels"
    phrases = _phrases(_section(data, section, "phrases"), f"{section}.phrases")
    within = _set_phrases(data, section)
    stray = [p for p in phrases if p not in within]
    if stray:
        raise LexiconError(f"{section}.phrases: {stray[0]!r} is in none of its label sets")
    return frozenset(phrases), within, _words(_section(data, section, "words"), f"{section}.words")


# The (up to three) words right after a label in its cell, and the word right before a
# position in its cell: one blank apart at most, since two start another cell ("Total"
# and "Taxes" a gap apart are two columns' headers).
_FOLLOWING_WORDS_RE = re.compile(r"[ \t]?[:\-]?[ \t]?([^\W_]+)(?:[ \t]([^\W_]+))?(?:[ \t]([^\W_]+))?")
_LAST_WORD_RE = re.compile(r"(?<![^\W_])([^\W_]+)[ \t]?$")


@dataclass(frozen=True)
class QualifierAfter:
    """One of `words` right after a label, after at most two `connectors` ("dos", "of
    the"). Looked up word by word in sets: one regular expression alternating every word
    tried each word at each label, and made the checks' text analysis three times slower."""

    words: frozenset[str]
    connectors: frozenset[str]

    def match(self, text: str, pos: int) -> bool:
        following = _FOLLOWING_WORDS_RE.match(text, pos)
        if following is None:
            return False
        for word in following.groups():
            if word is None:
                return False
            word = word.casefold()
            if word in self.words:
                return True
            if word not in self.connectors:
                return False
        return False


@dataclass(frozen=True)
class WordBefore:
    """One of `words` right before a position in its cell, one blank between at most."""

    words: frozenset[str]

    def search(self, text: str, start: int, end: int) -> bool:
        before = _LAST_WORD_RE.search(text, start, end)
        return before is not None and before.group(1).casefold() in self.words


def _qualifier_after(words: tuple[str, ...], connectors: tuple[str, ...]) -> QualifierAfter:
    return QualifierAfter(frozenset(words), frozenset(connectors))


def _inclusion_alternation(words: tuple[str, ...]) -> str:
    for word in words:
        if word != word.casefold() or word != word.strip():
            raise LexiconError(f"qualifying_words: {word!r} must be casefolded and trimmed")
    return "|".join(
        r"[ \t]+".join(re.escape(part) for part in word.split()) for word in sorted(words, key=len, reverse=True)
    )


# a tax rate as a qualifying word may stand with it ("10%", "19 %")
_RATE = r"[0-9]{1,2}(?:[.,][0-9]{1,2})?[ \t]*%"


def _ending_phrase(words: tuple[str, ...]) -> re.Pattern[str]:
    """One of `words` (any case, spaces free) ending the searched text, before at most
    a rate ("inkl. 19% MwSt.") and some spaces, a bracket or a colon."""
    return re.compile(
        r"(?<![^\W_])(?:" + _inclusion_alternation(words) + r")(?:[ \t]*" + _RATE + r")?[ \t(:,\-]*$", re.IGNORECASE
    )


def _starting_phrase(words: tuple[str, ...]) -> re.Pattern[str]:
    """One of `words` starting the searched text, after at most a rate ("10%"). The text
    starts after a label, which may be matched without its abbreviation's dot ("MwSt"
    of "Gesamt MwSt. inkl."): the dot is the label's, not a word between."""
    return re.compile(
        r"^\.?[ \t]*(?:" + _RATE + r"[ \t]*)?(?:" + _inclusion_alternation(words) + r")(?![^\W_])",
        re.IGNORECASE,
    )


def _load_data(name: str = AMOUNT_LEXICON_FILE) -> Mapping[str, Any]:
    text = resources.files("vetq.core.extraction").joinpath(name).read_text(encoding="utf-8")
    data = json.loads(text)
    if not isinstance(data, Mapping):
        raise LexiconError(f"{name} must hold a JSON object")
    return data


def label_sets_from_data(data: Mapping[str, Any], section: str = "label_sets") -> Mapping[str, tuple[str, ...]]:
    """The standard label sets of a lexicon's data, each checked as written, and each
    phrase also without its accents (`unaccented`) where it still reads as itself
    (`_still_itself`), and with its words run together (`glued`), where no set writes
    that already."""
    sets = _section(data, section, "sets")
    if not isinstance(sets, Mapping) or not sets:
        raise LexiconError(f"{section}.sets must map each set's name to its phrases")
    written = {name: _phrases(phrases, f"{section}.sets.{name}") for name, phrases in sets.items()}
    seen = {p for phrases in written.values() for p in phrases}
    out = {}
    for name, phrases in written.items():
        variants = []
        for p in phrases:
            plain = unaccented(p)
            readings = (p, plain) if _still_itself(p, plain) else (p,)
            for v in (*readings[1:], *(glued(r) for r in readings)):
                if v is not None and v not in seen:
                    seen.add(v)
                    variants.append(v)
        out[name] = phrases + tuple(variants)
    return out


# A phrase run together shorter than this, or with a word of one letter, is too often
# another word ("a pagar" is Spanish "apagar", to switch off).
_GLUED_MIN_CHARS = 7


def glued(phrase: str) -> str | None:
    """The phrase with its words run together ("totalttc", "totaltopay", "amountdue"), as
    OCR and some converters join words set close; None for a phrase of one word, or of a
    word that is not all letters or is one letter, or too short or too long to read so."""
    words = phrase.split(" ")
    if len(words) < 2 or any(len(w) < 2 or not w.isalpha() for w in words):
        return None
    joined = "".join(words)
    return joined if _GLUED_MIN_CHARS <= len(joined) <= MAX_FIRST_WORD_CHARS else None


def _still_itself(phrase: str, plain: str) -> bool:
    """Whether a phrase without its accents still reads as that phrase: each word that
    lost an accent keeps four letters or more. A short word is often another word once its
    accent goes ("daň" is Indonesian "dan", and; "montant dû" is "montant du", the amount
    of; "DIČ" is "dic", December)."""
    return all(a == b or len(b) >= 4 for a, b in zip(phrase.split(" "), plain.split(" "), strict=True))


def unaccented(phrase: str) -> str:
    """The phrase with the accents of its Latin letters taken off ("lasku yhteensa",
    "numero de factura"), as text typed without them, or read by OCR without the
    language's data, writes it; letters with no accent to take off ("ł", "ø", "ß") and
    other scripts' marks (kana's voicing, "й") stay."""
    out: list[str] = []
    for c in unicodedata.normalize("NFD", phrase):
        if unicodedata.combining(c) and out and out[-1] < "\u0250":
            continue
        out.append(c)
    return unicodedata.normalize("NFC", "".join(out))


def _value_label_sets(data: Mapping[str, Any]) -> Mapping[str, tuple[str, ...]]:
    """The label sets of dates and identifiers; a phrase in two would name two roles."""
    sets = label_sets_from_data(data, "value_label_sets")
    _kinds({name: list(phrases) for name, phrases in sets.items()}, "value_label_sets.sets")  # a phrase in two: refused
    return sets


_AMOUNT_WORDS = _load_data()
# A set of value labels whose name ends so labels dates; any other, numbers.
DATE_SET_ENDINGS = ("_date", "_period", "_until")
# The standard label sets of dates and identifiers ("@invoice_date", "@order_number"):
# what a schema's value field may take, and the labels that say a value is another one.
VALUE_LABEL_SETS = _value_label_sets(_AMOUNT_WORDS)
# The parties a text field may name (its `party`), each with the labels a document writes
# over or before its name ("Bill to", "Nabywca"; "Seller", "Sprzedawca"); a delivery's
# labels ("Ship to") head a block of either party's (goods collected at the seller's store).
PARTIES = ("seller", "buyer")
DELIVERY = "delivery"  # labels of where goods go, which name neither party
_PARTY_LABEL_KINDS = (*PARTIES, DELIVERY)


def _party_labels(data: Mapping[str, Any]) -> Mapping[str, tuple[str, ...]]:
    kinds = _section(data, "party_labels", "parties")
    kind_of = _kinds(kinds, "party_labels.parties", _PARTY_LABEL_KINDS)
    return {kind: tuple(p for p, of in kind_of.items() if of == kind) for kind in _PARTY_LABEL_KINDS}


PARTY_LABELS = _party_labels(_AMOUNT_WORDS)
# The labels of a party's name inside the block its label heads ("RECEPTOR" over "Nombre:
# ...", "Cessionario/committente" over "Denominazione: ...").
PARTY_NAME_LABELS = _phrases(_section(_AMOUNT_WORDS, "party_labels", "name_labels"), "party_labels.name_labels")
# The words a letter addresses its recipient with: a salutation alone over the name
# ("Herr", "Madame"), the words only an address starts a name with ("Herrn", "M. et
# Mme", "Spett.le"), and an attention line's first words ("Attn", "z. Hd.", "t.a.v.").
SALUTATIONS = _phrases(_section(_AMOUNT_WORDS, "party_labels", "salutations"), "party_labels.salutations")
ADDRESSING_WORDS = _phrases(_section(_AMOUNT_WORDS, "party_labels", "addressing"), "party_labels.addressing")
ATTENTION_WORDS = _phrases(_section(_AMOUNT_WORDS, "party_labels", "attention"), "party_labels.attention")
# the words before the name of the software, marketplace or payment service a document
# came through ("Powered by Square", "Paiement traité par ...")
PLATFORM_BEFORE = _phrases(_section(_AMOUNT_WORDS, "party_labels", "platform_before"), "party_labels.platform_before")
# the honorific a Japanese or Korean address closes the recipient's name with ("御中", "様")
ADDRESSING_AFTER = _phrases(
    _section(_AMOUNT_WORDS, "party_labels", "addressing_after"), "party_labels.addressing_after"
)


def numbers_dated_after_from_data(data: Mapping[str, Any]) -> Mapping[str, str]:
    """Which set of dates a set of numbers' label names after a dating word ("Lieferschein
    Nr. LS-4471 vom 08.03.2024": the delivery date), each set checked."""
    pairs = _section(data, "numbers_dated_after", "pairs")
    if not isinstance(pairs, Mapping):
        raise LexiconError("numbers_dated_after.pairs must map a set of numbers to a set of dates")
    for number, dated in pairs.items():
        if number not in VALUE_LABEL_SETS or dated not in VALUE_LABEL_SETS:
            raise LexiconError(f"numbers_dated_after.pairs: {number!r} -> {dated!r} names an unknown set")
        if number.endswith(DATE_SET_ENDINGS) or not dated.endswith(DATE_SET_ENDINGS):
            raise LexiconError(f"numbers_dated_after.pairs: {number!r} -> {dated!r} is not a number's to a date's")
    return dict(pairs)


NUMBERS_DATED_AFTER = numbers_dated_after_from_data(_AMOUNT_WORDS)


def _standard_label_sets(data: Mapping[str, Any]) -> Mapping[str, tuple[str, ...]]:
    amounts = label_sets_from_data(data)
    both = set(amounts) & set(VALUE_LABEL_SETS)
    if both:
        raise LexiconError(f"label sets {', '.join(sorted(both))} are named both for amounts and for values")
    return {**amounts, **VALUE_LABEL_SETS}


# The standard label sets a schema's field takes as "@total": {"total": (...), ...}.
STANDARD_LABEL_SETS = _standard_label_sets(_AMOUNT_WORDS)


def compile_lexicon(role_labels: Mapping[str, Any], data: Mapping[str, Any] | None = None) -> Lexicon:
    """The lexicon of a schema: its labelled fields' (normalised) labels with the
    standard words of ``amount_lexicon.json`` (or `data`)."""
    return lexicon_from_data(_AMOUNT_WORDS if data is None else data, role_labels)


def compile_value_lexicon(field_labels: Mapping[str, Any], field_kinds: Mapping[str, str] | None = None) -> Lexicon:
    """The lexicon that reads which value a date, identifier or text label names: each
    labelled field's labels (by path), and the standard value label sets. A set one
    field declares a phrase of is that field's in every language ("Rechnungsdatum" for a
    field labelled "Invoice date"); a set no field declares keeps its own role "@<set>",
    what its labels say a value is when the schema has no field of that meaning."""
    roles: dict[str, list[str]] = {path: list(phrases) for path, phrases in field_labels.items()}
    claimed = {phrase for phrases in roles.values() for phrase in phrases}
    for name, phrases in VALUE_LABEL_SETS.items():
        owners = [path for path, own in field_labels.items() if not set(own).isdisjoint(phrases)]
        rest = [phrase for phrase in phrases if phrase not in claimed]
        if not owners:
            roles["@" + name] = rest
        elif len(owners) == 1:
            roles[owners[0]].extend(rest)
        # a set two fields draw on names neither alone: its other phrases label nothing
    lexicon = lexicon_from_data(
        _AMOUNT_WORDS, {role: phrases for role, phrases in roles.items() if phrases}, amounts=False
    )
    return replace(lexicon, kind_of_role=dict(field_kinds or {}))
