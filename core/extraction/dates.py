"""Finding dates in messy text in the forms people write them.

``find_date_mentions`` returns every date-looking mention with the set of real
dates it can mean (an ambiguous ``03/04/2026`` means both 3 April and 4 March).
``find_date_spans`` filters those for one date.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import date, datetime

__all__ = [
    "MONTHS",
    "DateMention",
    "find_date_mentions",
    "find_date_spans",
    "is_real_iso_date",
    "shows_the_month_first",
]

_ISO_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def is_real_iso_date(s: object) -> bool:
    """True for a string ``YYYY-MM-DD`` naming a real calendar date."""
    if not isinstance(s, str) or not _ISO_RE.fullmatch(s):
        return False
    try:
        date.fromisoformat(s)
    except ValueError:
        return False
    return True


MONTHS: dict[str, int] = {}


def _add(month: int, *names: str) -> None:
    for n in names:
        MONTHS[n] = month


# English (full and abbreviated), German, French, Spanish, Italian, Dutch; Polish and Swedish below.
_add(1, "january", "jan", "januar", "jänner", "jaenner", "janvier", "janv", "enero", "ene", "gennaio", "januari")
_add(
    2,
    "february",
    "feb",
    "febr",
    "februar",
    "feber",
    "février",
    "fevrier",
    "févr",
    "fevr",
    "febrero",
    "febbraio",
    "februari",
)
_add(3, "march", "mar", "märz", "maerz", "mars", "marzo", "maart", "mrt")
_add(4, "april", "apr", "avril", "avr", "abril", "abr", "aprile")
_add(5, "may", "mai", "mayo", "maggio", "mei")
_add(6, "june", "jun", "juni", "juin", "junio", "giugno")
_add(7, "july", "jul", "juli", "juillet", "juil", "julio", "luglio")
_add(8, "august", "aug", "août", "aout", "agosto", "ago", "augustus")
_add(9, "september", "sep", "sept", "septembre", "septiembre", "setiembre", "settembre")
_add(10, "october", "oct", "oktober", "okt", "octobre", "octubre", "ottobre", "ott")
_add(11, "november", "nov", "novembre", "noviembre")
_add(12, "december", "dec", "dezember", "dez", "décembre", "decembre", "diciembre", "dic", "dicembre")
# Polish, nominative and genitive ("5 marca 2026"), and the Swedish forms not above.
_add(1, "styczeń", "stycznia", "sty")
_add(2, "luty", "lutego", "lut")
_add(3, "marzec", "marca")
_add(4, "kwiecień", "kwietnia", "kwi")
_add(5, "maj", "maja")
_add(6, "czerwiec", "czerwca", "cze")
_add(7, "lipiec", "lipca", "lip")
_add(8, "sierpień", "sierpnia", "sie", "augusti")
_add(9, "wrzesień", "września", "wrz")
_add(10, "październik", "października", "paź")
_add(11, "listopad", "listopada", "lis")
_add(12, "grudzień", "grudnia", "gru")
# Portuguese, Romanian, Czech and Slovak (nominative and genitive: "18. září 2025"),
# Hungarian, Finnish (nominative and partitive: "18. syyskuuta 2025"), Turkish, Norwegian /
# Danish, Serbian (Latin), Russian and Ukrainian (genitive and nominative), Greek
# (genitive). Abbreviations that are common words elsewhere ("set", "out", "noi") are left out.
_add(1, "janeiro", "ianuarie", "ian", "leden", "ledna", "január", "januára", "tammikuu", "tammikuuta", "ocak")
_add(1, "января", "январь", "січня", "січень", "ιανουαρίου")
_add(2, "fevereiro", "fev", "februarie", "únor", "února", "február", "februára", "helmikuu", "helmikuuta", "şubat")
_add(2, "февраля", "февраль", "лютого", "лютий", "φεβρουαρίου")
_add(3, "março", "marco", "martie", "březen", "března", "marec", "március", "márc", "maaliskuu", "maaliskuuta")
_add(3, "mart", "марта", "март", "березня", "березень", "μαρτίου")
_add(4, "aprilie", "duben", "dubna", "apríl", "apríla", "április", "ápr", "huhtikuu", "huhtikuuta", "nisan")
_add(4, "апреля", "апрель", "квітня", "квітень", "απριλίου")
_add(5, "maio", "květen", "května", "máj", "mája", "május", "toukokuu", "toukokuuta", "mayıs", "мая", "май")
_add(5, "травня", "травень", "μαΐου")
_add(6, "junho", "iunie", "červen", "června", "jún", "júna", "június", "kesäkuu", "kesäkuuta", "haziran")
_add(6, "июня", "июнь", "червня", "червень", "ιουνίου")
_add(7, "julho", "iulie", "červenec", "července", "júl", "júla", "július", "heinäkuu", "heinäkuuta", "temmuz")
_add(7, "июля", "июль", "липня", "липень", "ιουλίου")
_add(8, "augusta", "srpen", "srpna", "augusztus", "elokuu", "elokuuta", "ağustos", "avgust", "августа", "август")
_add(8, "серпня", "серпень", "αυγούστου")
_add(9, "setembro", "septembrie", "září", "septembra", "szeptember", "szept", "syyskuu", "syyskuuta", "eylül")
_add(9, "septembar", "сентября", "сентябрь", "вересня", "вересень", "σεπτεμβρίου")
_add(10, "outubro", "octombrie", "říjen", "října", "október", "októbra", "lokakuu", "lokakuuta", "ekim")
_add(10, "oktobar", "октября", "октябрь", "жовтня", "жовтень", "οκτωβρίου")
_add(11, "novembro", "noiembrie", "listopadu", "novembra", "marraskuu", "marraskuuta", "kasım", "novembar")
_add(11, "ноября", "ноябрь", "листопада", "листопад", "νοεμβρίου")
_add(12, "dezembro", "decembrie", "prosinec", "prosince", "decembra", "joulukuu", "joulukuuta", "aralık")
_add(12, "desember", "decembar", "декабря", "декабрь", "грудня", "грудень", "δεκεμβρίου")
# Estonian, Slovenian, Croatian (nominative and genitive: "15. siječnja 2025"), Bulgarian,
# Macedonian and Icelandic forms not above. Croatian "listopad" (October) is left out:
# in Polish it is November.
_add(1, "jaanuar", "siječanj", "siječnja", "януари", "јануари", "janúar")
_add(2, "veebruar", "veljača", "veljače", "февруари", "febrúar")
_add(3, "märts", "ožujak", "ožujka", "marts")
_add(4, "aprill", "travanj", "travnja", "април", "apríl")
_add(5, "svibanj", "svibnja", "мај", "maí")
_add(6, "juuni", "junij", "lipanj", "lipnja", "юни", "јуни", "júní")
_add(7, "juuli", "julij", "srpanj", "srpnja", "юли", "јули", "júlí")
_add(8, "kolovoz", "kolovoza", "ágúst")
_add(9, "rujan", "rujna", "септември")
_add(10, "oktoober", "октомври")
_add(11, "studeni", "studenoga", "studenog", "ноември", "nóvember")
_add(12, "detsember", "prosinac", "prosinca", "декември")
# Indonesian and Malay ("12 Maret 2025", "12 Ogos 2025"); "mac" only between a day and a year
_add(2, "pebruari")
_add(3, "maret", "mac")
_add(7, "julai")
_add(8, "agustus", "ogos")
_add(11, "nopember")
_add(12, "disember")
# Greek written in capitals ("5 ΜΑΡΤΙΟΥ 2024") drops its accents
for _month in range(1, 13):
    for _name in [n for n, m in MONTHS.items() if m == _month and any("\u0370" <= c <= "\u03ff" for c in n)]:
        _add(_month, "".join(c for c in unicodedata.normalize("NFD", _name) if not unicodedata.combining(c)))
# Lithuanian (nominative and genitive: "2024 m. kovo 5 d."), Latvian (nominative, genitive
# and locative: "2024. gada 5. martā") and Maltese. Latvian "marta" and "maija" are also
# given names: like every month name, they make a date only between a day and a year.
_add(1, "sausis", "sausio", "janvāris", "janvāra", "janvārī", "jannar")
_add(2, "vasaris", "vasario", "februāris", "februāra", "februārī", "frar")
_add(3, "kovas", "kovo", "marta", "martā", "marzu")
_add(4, "balandis", "balandžio", "aprīlis", "aprīļa", "aprīlī")
_add(5, "gegužė", "gegužės", "maijs", "maija", "maijā", "mejju")
_add(6, "birželis", "birželio", "jūnijs", "jūnija", "jūnijā", "ġunju", "gunju")
_add(7, "liepa", "liepos", "jūlijs", "jūlija", "jūlijā", "lulju")
_add(8, "rugpjūtis", "rugpjūčio", "augusts", "augustā", "awwissu")
_add(9, "rugsėjis", "rugsėjo", "septembris", "septembrī", "settembru")
_add(10, "spalis", "spalio", "oktobris", "oktobra", "oktobrī", "ottubru")
_add(11, "lapkritis", "lapkričio", "novembris", "novembrī", "novembru")
_add(12, "gruodis", "gruodžio", "decembris", "decembrī", "diċembru", "dicembru")
# Turkish written in capitals ("ŞUBAT", "KASIM") casefolds to dotless forms
_add(2, "subat")
_add(5, "mayis")
_add(8, "agustos")
_add(9, "eylul")
_add(11, "kasim")
_add(12, "aralik")
_LONGEST_MONTH = max(len(name) for name in MONTHS)
# month names that are words of their own elsewhere ("Mac 12"): a date only with the day before
_DAY_FIRST_ONLY = frozenset({"mac"})

_MONTH_ALT = "|".join(re.escape(n) for n in sorted(MONTHS, key=len, reverse=True))
_MON = rf"(?<![^\W\d_])(?P<mon>{_MONTH_ALT})(?![^\W\d_])\.?"
_GAP = r"[ \t\u00a0\u202f,./\-]{0,4}"
_ORD = r"(?:st|nd|rd|th|er|º|°)?"

# 28 February 2026, 28th Feb 2026, 28. Februar 2026, 28-Feb-2026, 1er mars 2026, 28 de febrero de 2026,
# 28 ta' Frar 2026 (Maltese)
_DMY_NAMED = re.compile(
    rf"(?<![0-9])(?P<d>[0-9]{{1,2}}){_ORD}{_GAP}(?:(?:of|de|ta['’])[ \t]{{1,3}})?{_MON}{_GAP}"
    rf"(?:(?:de|del)[ \t]{{1,3}})?(?P<y>[0-9]{{4}}|'?[0-9]{{2}})(?![0-9])",
    re.IGNORECASE,
)
# Feb 28, 2026 / February 28th, 2026 / Feb. 28 2026 / Mar 09/26 (a Canadian till's two-digit
# year after a slash; not a range of days before the year, "May 15/16 2026")
_MDY_NAMED = re.compile(
    rf"{_MON}{_GAP}(?P<d>[0-9]{{1,2}})(?![0-9]){_ORD}{_GAP}(?P<y>[0-9]{{4}}|'[0-9]{{2}}|(?<=[0-9]/)[0-9]{{2}}(?![0-9]|[ \t,]{{1,3}}[0-9]{{4}}))(?![0-9])",
    re.IGNORECASE,
)
# 2026-02-28, 2026/02/28, 28.02.2026, 02/28/2026, 28-02-2026, 28.02.26, 3/7/2026, 2026/2/8
_NUMERIC = re.compile(
    r"(?<![0-9.,/\-])(?P<a>[0-9]{1,4})(?P<sep>[./\-])(?P<b>[0-9]{1,2})(?P=sep)(?P<c>[0-9]{4}|[0-9]{1,2})"
    # not part of a longer number, but a time may be joined on ("15.03.24-19:42", as
    # Indonesian tills print it)
    r"(?![0-9]|[.,/][0-9]|-(?![0-9]{1,2}:[0-9]{2}(?![0-9]))[0-9])"
)

# OCR of a day-first date mixes its separators: 02.03,2020 / 23,03.20 / 20 05.2020
_OCR_NUMERIC = re.compile(
    r"(?<![0-9.,/\-])(?P<a>[0-9]{1,2})(?P<s1>[.,]| )(?P<b>[0-9]{1,2})(?P<s2>[.,])(?P<c>[0-9]{4}|[0-9]{2})"
    r"(?![0-9]|[.,/\-][0-9])"
)

# A space after each dot: 18. 9. 2025 (Czech, Slovak, German), 2025. 09. 18. (Hungarian);
# the year written in full, so a list's "1. 2." before a figure is no date
_SPACED_DMY = re.compile(
    r"(?<![0-9.,/\-])(?P<d>[0-9]{1,2})\.[ \t\u00a0]{1,2}(?P<m>[0-9]{1,2})\.[ \t\u00a0]{1,2}(?P<y>[0-9]{4})"
    r"(?![0-9]|[.,][0-9])"
)
_SPACED_YMD = re.compile(
    r"(?<![0-9.,/\-])(?P<y>[0-9]{4})\.[ \t\u00a0]{1,2}(?P<m>[0-9]{1,2})\.[ \t\u00a0]{1,2}(?P<d>[0-9]{1,2})\.(?![0-9])"
)

# 2025. szeptember 18. (Hungarian), 2025 m. rugsėjo 18 d. (Lithuanian): the year's dot or
# "m." is written, so "2025 may 3" is no date
_YMD_NAMED = re.compile(
    rf"(?<![0-9])(?P<y>[0-9]{{4}})(?:\.|[ \t\u00a0]m\.)[ \t\u00a0]{{1,2}}{_MON}(?:[ \t\u00a0]mėn\.)?"
    rf"[ \t\u00a0]{{1,2}}(?P<d>[0-9]{{1,2}})(?![0-9])(?:\.|[ \t\u00a0]d\.)?",
    re.IGNORECASE,
)
# 2025. gada 18. septembrī (Latvian: the year, "gada", then the day and the month)
_YEAR_GADA_DMY = re.compile(
    rf"(?<![0-9])(?P<y>[0-9]{{4}})\.?[ \t\u00a0]{{1,2}}gada[ \t\u00a0]{{1,2}}(?P<d>[0-9]{{1,2}})\.[ \t\u00a0]{{1,2}}{_MON}",
    re.IGNORECASE,
)
_YEAR_BEFORE = re.compile(r"(?<![0-9])[0-9]{4}")

# Chinese, Japanese and Korean: 2025年12月5日, 2025 年 12 月 05 日, 2025년 12월 5일
_CJK_YMD = re.compile(
    r"(?<![0-9])(?P<y>[0-9]{4})[ \t]*[年년][ \t]*(?P<m>[0-9]{1,2})[ \t]*[月월][ \t]*(?P<d>[0-9]{1,2})[ \t]*[日일]"
)

# Japanese era years: 令和6年3月5日 (Reiwa 6 is 2024; its first year is written 元)
_ERA_START = {"令和": 2018, "平成": 1988}
_JA_ERA_YMD = re.compile(
    r"(?P<era>令和|平成)[ \t]*(?P<ey>[0-9]{1,2}|元)[ \t]*年[ \t]*(?P<m>[0-9]{1,2})[ \t]*月[ \t]*(?P<d>[0-9]{1,2})[ \t]*日"
)

# Thai: 5 มีนาคม 2567 or 5 มี.ค. 2567, the year in the Buddhist era (543 years ahead) or
# the common one
_THAI_MONTHS = {
    name: month
    for month, names in enumerate(
        [
            ("มกราคม", "ม.ค."),
            ("กุมภาพันธ์", "ก.พ."),
            ("มีนาคม", "มี.ค."),
            ("เมษายน", "เม.ย."),
            ("พฤษภาคม", "พ.ค."),
            ("มิถุนายน", "มิ.ย."),
            ("กรกฎาคม", "ก.ค."),
            ("สิงหาคม", "ส.ค."),
            ("กันยายน", "ก.ย."),
            ("ตุลาคม", "ต.ค."),
            ("พฤศจิกายน", "พ.ย."),
            ("ธันวาคม", "ธ.ค."),
        ],
        start=1,
    )
    for name in names
}
_BUDDHIST_ERA_OFFSET = 543
_BUDDHIST_ERA_FROM = 2400  # no document of the common era is dated this late
_TH_DMY = re.compile(
    r"(?<![0-9])(?P<d>[0-9]{1,2})[ \t\u00a0]*(?P<mon>"
    + "|".join(re.escape(n) for n in sorted(_THAI_MONTHS, key=len, reverse=True))
    + r")[ \t\u00a0]*(?:พ\.ศ\.[ \t\u00a0]*)?(?P<y>[0-9]{4})(?![0-9])"
)

# Vietnamese: ngày 15 tháng 03 năm 2025 (day, month, year, each after its word, which
# a bilingual e-invoice glosses: "Ngày (Date) 05 tháng (month) 11 năm (year) 2026")
_VI_GLOSS = r"[ \t\u00a0]{1,3}(?:\([A-Za-z ]{1,12}\)[ \t\u00a0]{1,3})?"
_VI_DMY = re.compile(
    rf"(?<![^\W\d_])ngày{_VI_GLOSS}(?P<d>[0-9]{{1,2}})[ \t\u00a0]{{1,3}}tháng{_VI_GLOSS}(?P<m>[0-9]{{1,2}})"
    rf"[ \t\u00a0]{{1,3}}năm{_VI_GLOSS}(?P<y>[0-9]{{4}})(?![0-9])",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class DateMention:
    start: int
    end: int
    dates: frozenset[date]
    # a numeric date with its year in full the document's other dates leave in either
    # order ("03/04/2026"): its day-first reading, which its conventions may still decide
    day_first: date | None = None


def _mk(y: int, m: int, d: int) -> date | None:
    try:
        return date(y, m, d)
    except (ValueError, OverflowError):
        return None


def _year(s: str) -> int:
    s = s.lstrip("'")
    y = int(s)
    if len(s) == 2:
        y += 2000 if y < 70 else 1900
    return _common_era(y)


def _common_era(year: int) -> int:
    """A year of the Buddhist era (Thai documents' "18/03/2567") in the common one."""
    return year - _BUDDHIST_ERA_OFFSET if year >= _BUDDHIST_ERA_FROM else year


def _named_dates(m: re.Match[str]) -> frozenset[date]:
    mon = MONTHS.get(m.group("mon").casefold())
    if mon is None:
        return frozenset()
    got = _mk(_year(m.group("y")), mon, int(m.group("d")))
    return frozenset({got}) if got else frozenset()


def _ymd_dates(m: re.Match[str]) -> frozenset[date]:
    got = _mk(int(m.group("y")), int(m.group("m")), int(m.group("d")))
    return frozenset({got}) if got else frozenset()


def _era_dates(m: re.Match[str]) -> frozenset[date]:
    year = _ERA_START[m.group("era")] + (1 if m.group("ey") == "元" else int(m.group("ey")))
    got = _mk(year, int(m.group("m")), int(m.group("d")))
    return frozenset({got}) if got else frozenset()


def _thai_dates(m: re.Match[str]) -> frozenset[date]:
    got = _mk(_common_era(int(m.group("y"))), _THAI_MONTHS[m.group("mon")], int(m.group("d")))
    return frozenset({got}) if got else frozenset()


def _numeric_dates(m: re.Match[str]) -> frozenset[date]:
    a, b, c, sep = m.group("a"), m.group("b"), m.group("c"), m.group("sep")
    out: set[date | None] = set()
    if len(a) == 4:
        if len(c) <= 2:
            out.add(_mk(int(a), int(b), int(c)))
    elif len(a) <= 2 and len(c) != 1:
        y = _year(c)
        day_first = _mk(y, int(b), int(a))  # day-month-year
        out.add(day_first)
        if sep != "." or day_first is None:
            # month/day/year; dotted only where no day comes first ("03.20.15", as
            # software set to a US date format writes it)
            out.add(_mk(y, int(a), int(b)))
    out.discard(None)
    return frozenset(d for d in out if d is not None)


def _reading(m: re.Match[str], order: str) -> date | None:
    """A numeric mention with its day and month in ``order`` ("dm" or "md")."""
    first, second = int(m.group("a")), int(m.group("b"))
    day, month = (first, second) if order == "dm" else (second, first)
    return _mk(_year(m.group("c")), month, day)


def _only_order(m: re.Match[str]) -> str | None:
    """The one order ("dm", "md") in which a numeric match names a real date, or None
    where both do ("03/04/2026", "05/05/2026") or neither does."""
    day_first, month_first = _reading(m, "dm"), _reading(m, "md")
    if (day_first is None) == (month_first is None):
        return None
    return "dm" if day_first is not None else "md"


def _orders_shown(numeric: list[tuple[re.Match[str], frozenset[date]]]) -> dict[int, set[str]]:
    """The orders ("dm", "md") a document's slashed and dashed dates show, by year: a date
    only one order can read ("23/04/2026", "04/23/2026", a till's "11/21/25") shows its
    order. Not a dotted date (day-first already), nor a run with a two-digit year where the
    document writes years in full or the run is dashed (a part's or a lot's code: "Tyre
    14/03/25 batch", "Part 31-12-26"); a terminal's year-first stamp ("26/03/04") reads as
    a year far from the document's, which `_order_near` passes over."""
    shown: dict[int, set[str]] = {}
    full_years = any(len(m.group("c")) == 4 for m, _ in numeric)
    for m, ds in numeric:
        if len(ds) != 1 or len(m.group("a")) > 2 or m.group("sep") == ".":
            continue
        if len(m.group("c")) != 4 and (m.group("sep") != "/" or full_years):
            continue
        order = _only_order(m)
        if order is not None:
            (only,) = ds
            shown.setdefault(only.year, set()).add(order)
    return shown


def _order_near(shown: dict[int, set[str]], year: int) -> str | None:
    """The one order the document's dates within a year of `year` show, or None where they
    show both or neither (a date of birth or a membership's start is another calendar's
    matter). A model reading "03/04/2026" in the other order names a date the document
    never meant."""
    near: set[str] = set()
    for y in (year - 1, year, year + 1):
        near |= shown.get(y, set())
    return near.pop() if len(near) == 1 else None


# A document saying its dates' format ("Date (MM/DD/YYYY):"), and a day of a month
# written without its year, both with two digits, that only the month first reads
# ("week ending 02/27", "02/16 – 02/20"): a fraction or a page is not zero-padded
_MONTH_FIRST_FORMAT_RE = re.compile(r"(?<![^\W\d_])mm[/.\-]dd(?![^\W\d_])", re.IGNORECASE)
_MONTH_AND_DAY_RE = re.compile(r"(?<![0-9/.,\-])(0[1-9]|1[0-2])/(1[3-9]|2[0-9]|3[01])(?![0-9]|/[0-9])")


def written_month_first(text: str) -> str | None:
    """A date with its year that `text` writes so that only a month-first reading reads it
    ("02/28/2026", "March 4, 2026"), as written; None where none is, or where another
    reads only day first. Not a month and day alone ("08/27" is a medicine's expiry month
    and year as often as a day)."""
    orders = {
        m.group(): order
        for m in _NUMERIC.finditer(text)
        if len(m.group("a")) <= 2 and len(m.group("c")) in (2, 4) and (order := _only_order(m)) is not None
    }
    if "dm" in orders.values():
        return None  # it writes dates both ways ("17/03/2026 to 03/17/2026"): no order it keeps
    for written, order in orders.items():
        if order == "md":
            return written
    for w in _WORD.finditer(text):
        name = w.group().casefold()
        if name in MONTHS and name not in _DAY_FIRST_ONLY and (named := _MDY_NAMED.match(text, w.start())):
            return named.group()
    return None


def shows_the_month_first(text: str) -> bool:
    """Whether any numeric date in `text`, of any year and however separated, is one only
    a month-first reading can read ("02/28/26", "02-28-2019", "Client since 08/23/2019",
    "week ending 02/27"), any date is written with its month's name first ("March 4,
    2026"), or the text names the format ("MM/DD/YYYY"): the writer's software writes the
    month first, whatever else the document suggests."""
    if _MONTH_FIRST_FORMAT_RE.search(text) or _MONTH_AND_DAY_RE.search(text):
        return True
    for w in _WORD.finditer(text):
        # a date written with its month's name first ("March 4, 2026"), as American English
        # writes it
        name = w.group().casefold()
        if name in MONTHS and name not in _DAY_FIRST_ONLY and _MDY_NAMED.match(text, w.start()):
            return True
    return any(
        len(m.group("a")) <= 2 and len(m.group("c")) != 1 and _only_order(m) == "md" for m in _NUMERIC.finditer(text)
    )


# A day of the week right before a numeric date ("Wed 03/04/2026", "Friday, 03/04/2026")
_WEEKDAYS = {
    name: day
    for day, names in enumerate(
        (
            ("mon", "monday"),
            ("tue", "tues", "tuesday"),
            ("wed", "wednesday"),
            ("thu", "thur", "thurs", "thursday"),
            ("fri", "friday"),
            ("sat", "saturday"),
            ("sun", "sunday"),
        )
    )
    for name in names
}
_WEEKDAY_REACH = 12
_WEEKDAY_BEFORE = re.compile(
    rf"(?<![^\W\d_])({'|'.join(sorted(_WEEKDAYS, key=len, reverse=True))})\.?,?[ \t]{{1,2}}$", re.IGNORECASE
)
_WORD = re.compile(r"[^\W\d_]+")
_DAY_BEFORE = re.compile(r"(?<![0-9])[0-9]")


def find_date_mentions(text: str) -> list[DateMention]:
    """Every date-like mention in ``text`` with the real dates it can mean (mentions
    that name no real date are left out). Sorted by position."""
    if not isinstance(text, str) or not text:
        return []
    found: dict[tuple[int, int], set[date]] = {}
    day_first_readings: dict[tuple[int, int], date] = {}

    def add(m: re.Match[str] | None, ds: frozenset[date]) -> None:
        if m is not None and ds:
            found.setdefault((m.start(), m.end()), set()).update(ds)

    numeric = [(m, _numeric_dates(m)) for m in _NUMERIC.finditer(text)]
    shown = _orders_shown(numeric)
    for m, ds in numeric:
        weekday = _WEEKDAY_BEFORE.search(text, max(0, m.start() - _WEEKDAY_REACH), m.start()) if len(ds) == 2 else None
        if weekday is not None:
            # "Wed 03/04/2026": the reading that falls on that day of the week
            on_it = frozenset(d for d in ds if d.weekday() == _WEEKDAYS[weekday.group(1).casefold()])
            ds = on_it if len(on_it) == 1 else ds
        if len(ds) == 2 and m.group("sep") != ".":
            order = _order_near(shown, next(iter(ds)).year)
            if order is not None:
                ds = frozenset(d for d in ds if d == _reading(m, order))
            elif len(m.group("c")) == 4:
                # a short year's order no convention decides: a shop's "%m/%d/%y" template
                # prints it whatever the shop's money looks like
                reading = _reading(m, "dm")
                if reading is not None:
                    day_first_readings[m.start(), m.end()] = reading
        add(m, ds)
    for m in _OCR_NUMERIC.finditer(text):
        if m.group("s1") != m.group("s2") and "." in (m.group("s1"), m.group("s2")):
            day_first = _mk(_year(m.group("c")), int(m.group("b")), int(m.group("a")))
            if day_first is not None:
                add(m, frozenset({day_first}))
    ymd_patterns: list[re.Pattern[str]] = []
    if ". " in text or ".\u00a0" in text or ".\t" in text:
        ymd_patterns += [_SPACED_DMY, _SPACED_YMD]
    if "年" in text or "년" in text:
        ymd_patterns.append(_CJK_YMD)
    if "tháng" in text or "THÁNG" in text or "Tháng" in text:
        ymd_patterns.append(_VI_DMY)
    for pattern in ymd_patterns:
        for m in pattern.finditer(text):
            add(m, _ymd_dates(m))
    if "年" in text:
        for m in _JA_ERA_YMD.finditer(text):
            add(m, _era_dates(m))
    if any("\u0e00" <= c <= "\u0e7f" for c in text):
        for m in _TH_DMY.finditer(text):
            add(m, _thai_dates(m))
    # month names: find candidate words first (cheap), then match anchored around them
    for w in _WORD.finditer(text):
        if w.end() - w.start() > _LONGEST_MONTH or w.group().casefold() not in MONTHS:
            continue
        ws = w.start()
        named = None if w.group().casefold() in _DAY_FIRST_ONLY else _MDY_NAMED.match(text, ws)
        if named is not None:
            add(named, _named_dates(named))
        # a year ("2025. szeptember 18.") or a day ("18. září 2025") written before the month
        for before, pattern, reach in (
            (_YEAR_BEFORE, _YMD_NAMED, 8),
            (_DAY_BEFORE, _DMY_NAMED, 14),
            (_YEAR_BEFORE, _YEAR_GADA_DMY, 18),
        ):
            for number in before.finditer(text, max(0, ws - reach), ws):
                named = pattern.match(text, number.start())
                if named is not None and named.start("mon") == ws:
                    add(named, _named_dates(named))
                    break
    return [
        DateMention(s, e, frozenset(ds), day_first_readings.get((s, e)) if len(ds) == 2 else None)
        for (s, e), ds in sorted(found.items())
    ]


def compact_date_spans(text: str, value: date) -> list[tuple[int, int]]:
    """Spans where `value` is written in ISO 8601's basic form ("20240305", as tills,
    Japanese and e-invoice prints write it), each a whole run of eight digits. Not a
    mention of its own: a run of eight digits is as often an identifier, so it only
    grounds the one date a record gives, never makes a date elsewhere."""
    needle = f"{value.year:04d}{value.month:02d}{value.day:02d}"
    return [(m.start(), m.end()) for m in re.finditer(rf"(?<![0-9A-Za-z]){needle}(?![0-9])", text)]


def find_date_spans(text: str, value: date) -> list[tuple[int, int]]:
    """Spans of every written form of ``value`` in ``text``."""
    if isinstance(value, datetime):
        value = value.date()
    if not isinstance(value, date):
        if is_real_iso_date(value):
            value = date.fromisoformat(value)
        else:
            return []
    return [(m.start, m.end) for m in find_date_mentions(text) if value in m.dates]
