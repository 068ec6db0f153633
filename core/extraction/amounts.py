"""Parsing and finding money amounts written the ways people write them.

Separator rules: when both ``.`` and ``,`` appear, the last one is the decimal
separator. A single separator followed by exactly three digits (and an integer part
of one to three digits) is a thousands separator (``1,234`` = ``1.234`` = 1234);
followed by one or two digits it is decimal. Spaces (also NBSP U+00A0, narrow NBSP
U+202F, thin space U+2009) and apostrophes (``1'234.56``) group thousands.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

from vetq.core.extraction.currencies import ISO_4217, SYMBOLS_LONGEST_FIRST
from vetq.core.extraction.dates import DateMention, find_date_mentions

__all__ = [
    "CENT",
    "CENTS_RE",
    "GLUED_LETTER_SIGNS",
    "GLUED_UNITS",
    "AmountMention",
    "currency_beside",
    "find_amounts",
    "parse_amount",
    "to_cents",
]

CENT = Decimal("0.01")
# A figure written with cents, as its text ends ("12,50", "(30,600.00)")
CENTS_RE = re.compile(r"[.,][0-9]{2}\)?$")
_GROUP_CHARS = " \u00a0\u202f\u2009'\u2019"
_ALL_SEPS = ".," + _GROUP_CHARS
_CORE_RE = re.compile(r"[0-9][0-9.,'\u2019 \u00a0\u202f\u2009]*[0-9]|[0-9]")
_GROUP_SPLIT = re.compile(r"[.,'\u2019 \u00a0\u202f\u2009]")
_MINUS = "-\u2212"
# letters glued to a number that still leave it an amount ("1.234,56EUR", "100zł",
# "400,000원", "1,000円", "58元": Korean, Japanese and Chinese prints glue their unit)
GLUED_UNITS = frozenset(
    {"zł", "kr", "fr", "kč", "ft", "lei", "lv", "kn", "rm", "rs", "rp", "tl", "sfr", "chf", "đ", "원", "円", "元"}
)
# One capital glued to a sum with cents, as the rand, the naira and the peso of the
# Philippines (or Botswana's pula) are written where a print lacks the sign ("R79.97",
# "N1,162.50", "P1,250.00"): the sum is an amount, the capital its currency.
GLUED_LETTER_SIGNS = {"R": frozenset({"ZAR"}), "N": frozenset({"NGN"}), "P": frozenset({"PHP", "BWP"})}
# A letter sign set apart by one blank, only before a sum in thousands ("R 19,538.50", "R
# 19 538,50"): no regular size costs that much
SPACED_LETTER_SIGN_RE = re.compile(
    r"(?<![^\W\d_])(?<![^\W\d_] )(["
    + "".join(GLUED_LETTER_SIGNS)
    + r"]) (?=[0-9]{1,3}(?:[, ][0-9]{3})+[.,][0-9]{2}(?![0-9]))"
)
_MAX_TOKEN = 40
_SYMBOL_ALT = "|".join(re.escape(x) for x in SYMBOLS_LONGEST_FIRST)
# A sign or an opening bracket before the currency written before a figure: "-$10.00",
# "− € 5,00", "($10.00)".
_SIGN_BEFORE_SYMBOL = re.compile(rf"(?:^|(?<=[^\w\-\u2212]))(?P<mark>[-\u2212(])[ \t]?(?:{_SYMBOL_ALT})[ \t]?$")
# A document with more numbers than this is not an invoice; stop looking.
MAX_MENTIONS = 100_000
_SIMPLE = re.compile(r"[0-9]{1,15}(?:\.[0-9]{1,2})?")
_DECIMALS = re.compile(r"[.,][0-9]{2}$")
_TIME_WORD = re.compile(r"[ \t]*(?:uhr|h)(?![^\W\d_])", re.IGNORECASE)
# A tax rate written without its percent sign, before the base it applies to ("CA TAX
# 7.250 on $4.97", "TAX 8.8750 of 12.00", as US tills print it): three or four decimals,
# then "on" or "of" and a figure. The lexicon's rate_base_re reads the base after it.
RATE_WITHOUT_SIGN = r"[0-9]{1,2}\.[0-9]{3,4}"
_RATE_DIGITS = re.compile(RATE_WITHOUT_SIGN)
_BASE_AFTER = re.compile(r"[ \t]+(?:on|of)[ \t]+(?:[A-Z]{3}[ \t]?)?[$€£]?[ \t]?[0-9]", re.IGNORECASE)
# The side of the books written after a figure with cents, as ledgers, statements and
# credit notes print it ("1,234.56CR", "25.00 Cr", "10.00DR"): a credit is the figure
# taken away, a debit the figure as it is.
_BOOKING_SIDE = re.compile(r"[ \t]?(?P<side>CR|Cr|DR|Dr)(?![^\W\d_])")
# "Only", written after a whole amount in India ("Rs. 1,180/-") and East Africa
# ("KSh 2,500/="): no cents follow.
_NO_CENTS_MARK = re.compile(r"/[-=](?![\w\-=])")


@dataclass(frozen=True)
class AmountMention:
    value: Decimal
    start: int
    end: int
    raw: str


def to_cents(value: Decimal) -> Decimal | None:
    """``value`` rounded to cents, or None when it cannot be (huge / NaN)."""
    try:
        if not value.is_finite():
            return None
        return value.quantize(CENT, rounding=ROUND_HALF_UP)
    except (InvalidOperation, ValueError, OverflowError):
        return None


def _valid_groups(int_part: str) -> bool:
    groups = _GROUP_SPLIT.split(int_part)
    if len(groups) == 1:
        return bool(groups[0])
    first, rest = groups[0], groups[1:]
    if not (1 <= len(first) <= 3) or not first.isdigit():
        return False
    if all(len(g) == 3 and g.isdigit() for g in rest):
        return True
    # Indian grouping: 1,23,45,678
    return (
        len(first) <= 2
        and len(rest[-1]) == 3
        and all(len(g) == 2 and g.isdigit() for g in rest[:-1])
        and rest[-1].isdigit()
    )


def _parse_core(s: str) -> Decimal | None:
    """Parse digits with separators (no sign, no currency)."""
    if not s or not _CORE_RE.fullmatch(s):
        return None
    dot, comma = s.rfind("."), s.rfind(",")
    has_grouping = any(c in _GROUP_CHARS for c in s)
    dec: int = -1  # index of the decimal separator
    if dot >= 0 and comma >= 0:
        dec = max(dot, comma)
        thou = "," if dec == dot else "."
        if s.count(s[dec]) != 1 or s.find(thou) > dec:
            return None
    elif dot >= 0 or comma >= 0:
        sep = "." if dot >= 0 else ","
        pos = max(dot, comma)
        if s.count(sep) == 1:
            before, after = s[:pos], s[pos + 1 :]
            if len(after) == 3 and not has_grouping and 1 <= len(before) <= 3 and before.isdigit() and before[0] != "0":
                dec = -1  # thousands separator
            else:
                dec = pos
        else:
            dec = -1  # repeated: thousands separators
    int_part = s if dec < 0 else s[:dec]
    frac = "" if dec < 0 else s[dec + 1 :]
    if frac and not frac.isdigit():
        return None
    if not int_part or not _valid_groups(int_part):
        return None
    digits = "".join(c for c in int_part if c.isdigit())
    if not digits.isascii():
        return None
    try:
        return Decimal(digits + ("." + frac if frac else ""))
    except InvalidOperation:  # pragma: no cover - defensive
        return None


def _affix_ok(a: str) -> bool:
    for ch in a:
        if ch.isalpha() or ch in " .\u00a0\u202f\u2009:" or ch in _MINUS or ch == "+":
            continue
        try:
            if unicodedata.category(ch) == "Sc":
                continue
        except (TypeError, ValueError):  # pragma: no cover
            pass
        return False
    return True


_PARSE_RE = re.compile(
    r"(?P<pre>[^0-9]*?)(?P<core>[0-9][0-9.,'\u2019 \u00a0\u202f\u2009]*[0-9]|[0-9])(?P<post>[^0-9]*)"
)


def parse_amount(s: str) -> Decimal | None:
    """Parse one written amount (``€1.234,56``, ``1 234,56 zł``, ``(12.50)``,
    ``USD 1,234.56``...). None when ``s`` is not an amount."""
    if not isinstance(s, str):
        return None
    s = s.strip()
    if len(s) > 200:
        return None
    neg = False
    if len(s) >= 2 and s[0] == "(" and s[-1] == ")":
        neg = True
        s = s[1:-1].strip()
    m = _PARSE_RE.fullmatch(s)
    if not m:
        return None
    pre, core, post = m.group("pre"), m.group("core"), m.group("post")
    if not _affix_ok(pre) or not _affix_ok(post):
        return None
    signs = sum(pre.count(c) + post.count(c) for c in _MINUS)
    if signs > 1:
        return None
    if signs == 1:
        if neg:
            return None
        neg = True
    value = _parse_core(core)
    if value is None:
        return None
    return -value if neg else value


_NUM_RE = re.compile(
    r"(?<![0-9'\u2019])(?<![0-9][.,])"
    r"(?P<sign>[-\u2212](?=[0-9]))?"
    r"(?P<num>"
    r"[1-9][0-9]{0,2}(?:,[0-9]{3})+(?:\.[0-9]+)?"
    r"|[1-9][0-9]{0,2}(?:\.[0-9]{3})+(?:,[0-9]+)?"
    r"|[1-9][0-9]?(?:,[0-9]{2})+,[0-9]{3}(?:\.[0-9]+)?"
    r"|[1-9][0-9]{0,2}(?:[\u00a0\u202f\u2009][0-9]{3})+(?:[.,][0-9]+)?"
    r"|[1-9][0-9]{0,2}(?: [0-9]{3})+(?:,[0-9]+)?(?![.][0-9])"
    r"|[1-9][0-9]{0,2}(?:['\u2019][0-9]{3})+(?:[.,][0-9]+)?"
    r"|[0-9]+(?:[.,][0-9]+)?"
    # cents alone, as US tills print a sum under a dollar (".69", "$.69"): a cell of its own
    # (".00" is no sum: a zero balance reads as written nowhere)
    r"|(?<![^\s$])\.(?!00)[0-9]{2}(?=[ \t]*(?:\n|$)|[ \t]{2}|[ \t]?[A-Z]\b)"
    r")"
    r"(?![0-9]|[.,'\u2019][0-9])"
)
# "1 234.56": thousands set apart by a plain space, cents by a dot (Swiss, South African,
# ISO-style prints). A quantity before a price in a tight row ("4 285.00") is written the
# same way, so the figure is read whole only where a currency marks it or it stands as a
# cell of its own (two blanks, a colon or a line's edge before it, two blanks or a line's
# end after it), and never in a print that groups thousands with commas ("1,140.00") or
# writes a figure of a thousand or more with no grouping ("4300.00"): a print writes its
# figures one way.
_SPACE_GROUPED = re.compile(
    r"(?<![0-9'\u2019.,])(?P<sign>[-\u2212](?=[0-9]))?(?P<num>[1-9][0-9]{0,2}(?: [0-9]{3})+\.[0-9]{2})"
    r"(?![0-9]|[.,'\u2019][0-9])"
)
_COMMA_GROUPED = re.compile(r"(?<![0-9.,])[1-9][0-9]{0,2}(?:,[0-9]{3})+\.[0-9]{2}(?![0-9])")
_UNGROUPED = re.compile(r"(?<![0-9.,'\u2019])(?<![0-9] )[1-9][0-9]{3,}\.[0-9]{2}(?![0-9])")
_SYMBOL_BEFORE = re.compile(rf"(?:{_SYMBOL_ALT})$")
_SYMBOL_AFTER = re.compile(rf"(?:{_SYMBOL_ALT})")
_BLANKS = " \t\u00a0"
_NEXT_FIGURE_RE = re.compile(r"[0-9](?:[0-9.,]*[0-9])?")
_RATE_AFTER_RE = re.compile(r"[ \t\u00a0]{0,3}%")
_CURRENCY_REACH = 3  # blanks between a figure and its currency
_CELL_BEFORE = re.compile(r"(?:^|\n|[ \t]{2}|:[ \t]*)$")
_CELL_AFTER = re.compile(r"[ \t]*(?:\n|$)|[ \t]{2}")


def _inside_a_word(text: str, sign: re.Match[str]) -> bool:
    """A sign written in letters ("kr", "원") that is part of a word ("Bankr", "회원", "원래")."""
    s, e = sign.span()
    return (text[s].isalpha() and s > 0 and text[s - 1].isalpha()) or (
        text[e - 1].isalpha() and e < len(text) and text[e].isalpha()
    )


def currency_beside(text: str, s: int, e: int) -> bool:
    """A currency sign or code written right before s or right after e, a few blanks apart
    ("$4555.00", "CHF 12 760.00", "-€ 59 926.13", "12,50 EUR"); not one farther off, and
    not one after the figure that stands before the next one ("55.00   $4555.00")."""
    before = s
    while before > 0 and s - before < _CURRENCY_REACH and text[before - 1] in _BLANKS:
        before -= 1
    after = e
    while after < len(text) and after - e < _CURRENCY_REACH and text[after] in _BLANKS:
        after += 1
    sign = _SYMBOL_BEFORE.search(text, max(0, before - 4), before)
    if (sign is not None and not _inside_a_word(text, sign)) or _is_unit(_letters_before(text, before)):
        return True
    sign = _SYMBOL_AFTER.match(text, after)
    if sign is not None and _inside_a_word(text, sign):
        sign = None
    unit = _letters_after(text, after)
    end = sign.end() if sign is not None else after + len(unit) if _is_unit(unit) else None
    if end is None:
        return False
    # a currency after the figure that stands before the next one is the next one's, unless
    # the next one is a rate ("100.00 €  19 %  19.00 €")
    nxt = end
    while nxt < len(text) and nxt - end <= _CURRENCY_REACH and text[nxt] in _BLANKS:
        nxt += 1
    figure = _NEXT_FIGURE_RE.match(text, nxt)
    if figure is None or nxt - end > _CURRENCY_REACH:
        return True
    return _RATE_AFTER_RE.match(text, figure.end()) is not None


def _whole_space_grouped(text: str, m: re.Match[str]) -> bool:
    s, e = m.start(), m.end()
    if currency_beside(text, s, e):
        return True
    # a letter sign glued on or one blank before starts the cell ("TOTAL DUE   R1 145.83",
    # "VAT @ 15%   R 15 382.50")
    cell_start = s - 1 if s > 0 and _glued_letter_sign(text, s, e) else s
    if s >= 2 and SPACED_LETTER_SIGN_RE.match(text, s - 2):
        cell_start = s - 2
    return (
        _CELL_BEFORE.search(text[max(0, cell_start - 12) : cell_start]) is not None
        and _CELL_AFTER.match(text, e) is not None
    )


def _number_matches(text: str) -> list[re.Match[str]]:
    """The figures of `text` in order: _NUM_RE's, with a space-grouped figure read whole
    where _whole_space_grouped says so."""
    matches = list(_NUM_RE.finditer(text))
    if " " not in text or _COMMA_GROUPED.search(text) or _UNGROUPED.search(text):
        return matches
    whole = [m for m in _SPACE_GROUPED.finditer(text) if _whole_space_grouped(text, m)]
    if not whole:
        return matches
    starts = [m.start() for m in whole]
    kept = []
    for m in matches:
        k = bisect_right(starts, m.end() - 1) - 1
        if k < 0 or whole[k].end() <= m.start():
            kept.append(m)
    return sorted([*kept, *whole], key=lambda m: m.start())


_PHONE_RE = re.compile(
    r"\+[0-9][0-9 \-.()]{6,22}[0-9]"
    r"|(?i:(?<![^\W_])(?:tel|phone|telephone|fax|mobile|mob|cell|ph)(?![^\W_])\.?:?[ \t]*)"
    r"[+0-9(][0-9 \-.()/]{5,22}[0-9]"
)
# A bank account's number after its label ("Account No: 123 456 789", "Kontonummer 1234 5678",
# "Sort code 12-34-56"): its digit groups are no amounts.
_ACCOUNT_RE = re.compile(
    r"(?i:(?<![^\W_])(?:(?:account|acct|a/c|konto|compte|cuenta|conto|rekening)[ \t]*(?:no\.?|nr\.?|number|num\.?|#|n°|nº)"
    r"|kontonummer|kontonr\.?|routing[ \t]*(?:no\.?|number|#)|sort[ \t]*code|bsb)(?![^\W_])[ \t]*:?[ \t]*)"
    r"[0-9](?:[ \-]?[0-9]){2,30}(?![0-9])"
)
# An IBAN, in groups of four or not ("DE89 3704 0044 0532 0130 00"): its digit groups
# are no amounts.
_IBAN_RE = re.compile(r"(?<![A-Za-z0-9])[A-Z]{2}[0-9]{2}(?:[ ]?[A-Z0-9]{4}){2,7}(?:[ ]?[A-Z0-9]{1,3})?(?![A-Za-z0-9])")


def _letters_before(text: str, i: int) -> str:
    j = i
    while j > 0 and i - j < 12 and text[j - 1].isalpha():
        j -= 1
    return text[j:i]


def _letters_after(text: str, i: int) -> str:
    j = i
    n = len(text)
    while j < n and j - i < 12 and text[j].isalpha():
        j += 1
    return text[i:j]


def _is_unit(word: str) -> bool:
    return (word.isupper() and word in ISO_4217) or word.casefold() in GLUED_UNITS


def _glued_letter_sign(text: str, s: int, e: int) -> bool:
    """Whether the figure at text[s:e] has cents and one of GLUED_LETTER_SIGNS glued before
    it, a word of its own ("N1,162.50", not "FN1,162.50")."""
    return (
        text[s - 1] in GLUED_LETTER_SIGNS
        and (s < 2 or not text[s - 2].isalpha())
        and _DECIMALS.search(text, s, e) is not None
    )


def _merge(zones: list[tuple[int, int]]) -> tuple[list[int], list[int]]:
    zones.sort()
    starts: list[int] = []
    ends: list[int] = []
    for s, e in zones:
        if ends and s <= ends[-1]:
            ends[-1] = max(ends[-1], e)
        else:
            starts.append(s)
            ends.append(e)
    return starts, ends


def _in_zone(starts: list[int], ends: list[int], s: int, e: int) -> bool:
    k = bisect_right(starts, e - 1) - 1
    return k >= 0 and ends[k] > s


def _signed_plus(text: str, s: int, e: int) -> bool:
    """A plus sign written before a figure with cents ("+60,00 €") and after no letter or
    digit: the figure's sign, as a charge or surcharge is printed (a phone number's "+49"
    has no cents, and is a zone of its own)."""
    return text[s - 1] == "+" and _DECIMALS.search(text, s, e) is not None and (s < 2 or not text[s - 2].isalnum())


# Currency signs written with a slash ("S/1,234.56", "B/.50.00"), which may be glued to
# the figure that the slash would otherwise make part of a reference
_SLASHED_SIGNS = tuple(sign for sign in SYMBOLS_LONGEST_FIRST if "/" in sign)


def _booking_side(text: str, s: int, e: int) -> str | None:
    """The side of the books ("C" or "D") marked after the figure at text[s:e] when it
    has cents, else None."""
    mark = _BOOKING_SIDE.match(text, e) if _DECIMALS.search(text, s, e) else None
    return None if mark is None else mark.group("side")[0]


def _keep(text: str, s: int, e: int) -> bool:
    """Context filter: drop numbers glued to words, slashes, times, percents..."""
    n = len(text)
    if s > 0:
        p = text[s - 1]
        if p in "/." and text.endswith(_SLASHED_SIGNS, 0, s):
            pass  # "S/1,234.56": the Peruvian sol's sign
        elif p.isalpha():
            if not _is_unit(_letters_before(text, s)) and not _glued_letter_sign(text, s, e):
                return False
        elif _signed_plus(text, s, e):
            pass  # "Charges +60,00 €": a charge written with its sign
        elif (
            p in "/\\#@_+&%"  # "%20": a rate as Turkish writes it, or URL-escaped text
            or p in _MINUS
            or (p in ".:" and s > 1 and (text[s - 2].isdigit()))
            or (p == "." and (s == 1 or not (text[s - 2].isalpha() or text[s - 2] == ".")))
            or p.isdigit()
        ):
            return False
    if e < n:
        q = text[e]
        if q.isalpha():
            if not (_is_unit(_letters_after(text, e)) or _booking_side(text, s, e) is not None):
                return False
        elif q == "/" and _NO_CENTS_MARK.match(text, e):
            pass  # "Rs. 1,180/-"
        elif q in "/\\@_%\u2030" or q.isdigit() or (q in _MINUS + ":" and e + 1 < n and text[e + 1].isdigit()):
            return False
        else:
            rest = text[e : e + 3].lstrip(" \u00a0\u202f\u2009")
            if rest.startswith("%"):
                return False
    return True


# What may follow a till's trailing minus: no letter or digit, or one capital alone (a tax flag)
_TRAILING_MINUS_END = re.compile(r"(?![^\W_])|[A-Z](?![^\W_])")


# A figure with cents after a bracket closes on its line: the line's amount
_CENTS_AFTER = re.compile(r"[^\n]*?[0-9][.,][0-9]{2}(?![0-9])")


def _in_a_labels_brackets(text: str, s: int, e: int) -> bool:
    """Whether the whole number at text[s:e] stands inside brackets with words, on a line
    whose figure with cents comes after them: a label's own words ("Total de plată (col.
    5 + col. 6)  13.744,50", "(esclusa art. 15 DPR 633/72)  48,00")."""
    line_start = text.rfind("\n", 0, s) + 1
    line_end = text.find("\n", e)
    line_end = len(text) if line_end < 0 else line_end
    opening = text.rfind("(", line_start, s)
    closing = text.find(")", e, line_end)
    if opening < 0 or closing < 0 or ")" in text[opening:s] or "(" in text[e:closing]:
        return False
    inside = text[opening + 1 : closing]
    return any(c.isalpha() for c in inside) and _CENTS_AFTER.match(text, closing + 1, line_end) is not None


# An article or paragraph of a law right before a whole number ("art. 15", "§ 14 Abs. 4"):
# its abbreviation with its full stop ("Wall Art 120", "Sensor ABS 850.000" are items; a
# German till's "Artikel 3" an item's number)
_LAW_BEFORE = re.compile(
    r"(?i)(?:(?<![^\W\d_])(?:(?:art|artt|abs)\.|article|articolo|artículo|articulo|artigo|comma)|§§?)[ \t]*\Z"
)
_LAW_REACH = 12


def find_amounts(text: str, *, date_mentions: list[DateMention] | None = None) -> list[AmountMention]:
    """Every amount written in ``text``, in order. Numbers that are part of dates,
    phone numbers, bank accounts, identifiers (``GLX/2026/778``), ordinals, times and
    percentages are left out."""
    if not isinstance(text, str) or not text:
        return []
    if date_mentions is None:
        date_mentions = find_date_mentions(text)
    zones = [(d.start, d.end) for d in date_mentions]
    zones.extend(m.span() for m in _PHONE_RE.finditer(text))
    zones.extend(m.span() for m in _IBAN_RE.finditer(text))
    zones.extend(m.span() for m in _ACCOUNT_RE.finditer(text))
    zstarts, zends = _merge(zones)
    out: list[AmountMention] = []
    for m in _number_matches(text):
        num = m.group("num")
        if len(num) > _MAX_TOKEN:
            continue
        if len(num) > 1 and num[0] == "0" and num.isdigit():
            continue  # "00000 Berlin", "0123": a code's or a postal number's leading zero, no amount
        s, e = m.start(), m.end()
        if not _keep(text, s, e):
            continue
        if zstarts and _in_zone(zstarts, zends, s, e):
            continue
        value = Decimal("0" + num) if num[0] == "." else Decimal(num) if _SIMPLE.fullmatch(num) else _parse_core(num)
        if value is None:
            continue
        bracketed = s > 0 and e < len(text) and text[s - 1] + text[e] in ("()", "[]")
        if bracketed and not _DECIMALS.search(num):
            continue  # "SUMME [3]", "Artikel (1)": a count, not an amount
        if not _DECIMALS.search(num) and _in_a_labels_brackets(text, s, e):
            continue  # "Shipping (Royal Mail Tracked 48)  £3.95": the label's words, not its figure
        if _TIME_WORD.match(text, e):
            continue  # "9.00 Uhr": a time
        if not _DECIMALS.search(num) and _LAW_BEFORE.search(text, max(0, s - _LAW_REACH), s):
            continue  # "escluse art. 15 DPR 633/72", "gemäß § 35a EStG": a law's article
        if _RATE_DIGITS.fullmatch(num) and _BASE_AFTER.match(text, e):
            continue  # "7.250 on $4.97": a rate, no amount
        marked = None if m.group("sign") or s == 0 else _SIGN_BEFORE_SYMBOL.search(text, max(0, s - 8), s)
        if m.group("sign"):
            value = -value
        elif bracketed and text[s - 1] == "(":
            value = -value
            s, e = s - 1, e + 1
        elif marked is not None and (marked.group("mark") != "(" or text[e : e + 1] == ")"):
            value = -value  # "-$10.00", "($10.00)": the sign is the figure's
        elif _DECIMALS.search(num) and e < len(text) and text[e] in _MINUS and _TRAILING_MINUS_END.match(text, e + 1):
            value = -value  # "0,25-", "2.00-X" (its tax flag after): a deduction as tills print it
        elif _booking_side(text, s, e) == "C":
            value = -value  # "1,234.56CR": a credit
        out.append(AmountMention(value=value, start=s, end=e, raw=text[s:e]))
        if len(out) >= MAX_MENTIONS:
            break
    return out
