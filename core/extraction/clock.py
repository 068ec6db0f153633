"""Times of day: a record's value read as one (24-hour "14:32" or "14:32:05", or a
12-hour time with its AM or PM), and the times a document prints, in the forms tills,
e-receipts and invoices print them ("14:32", "2:32 PM", "02:32P", "5.31pm", "14h32",
"17 h 31", "14.32 Uhr", "kl. 14.32", "TIME 1432", "14時32分", "오후 2:32", "2:32 μ.μ.").
One parser for both, so a value and the print it came from compare as times, not as
strings ("05:31 PM" is 17:31; "9:05" is 09:05)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import time

from vetq.core.extraction.dates import DateMention, find_date_mentions

__all__ = ["PrintedTime", "clock_value", "find_printed_times", "parse_time_value", "same_time"]

# Which half of the day a 12-hour time is in, as written after it ("PM", "p.m.", "(PM)",
# one letter as in "02:32P" or "5:31 p", Greek "μ.μ.", Arabic "م" or "مساءً", Persian
# "ب.ظ", Vietnamese "CH", German "nachm.") or before it ("PM 05:31", Korean "오후",
# Chinese "下午", Japanese "午後"); the first character tells which.
_AFTERNOON = frozenset("pPμΜمبCn")
_FULL_HALF = (
    r"[AaPp]\.?[ \t]?[Mm]\.?|[πΠμΜ]\.?[ \t]?[μΜ]\.?|مساءً|مساءا|مساء|صباحاً|صباحا|صباح|[صم]|[بق]\.ظ|CH|SA"
    r"|nachm\.?|vorm\.?"
)
_AFTER_FULL_HALF = rf"[ \t\u00a0]{{0,2}}\(?(?P<half>{_FULL_HALF})\)?(?![^\W\d_])"
# one letter only after a colon's time, and with nothing glued on ("05:31 P1", "05:31 P/N"
# are a register's or a part's)
_AFTER_HALF = rf"(?:{_AFTER_FULL_HALF}|[ \t]?(?P<glued>[AaPp])(?![\w/]))"
_BEFORE_HALF = r"(?:(?P<half_before>오전|오후|上午|下午|午前|午後|AM|PM|A\.M\.|P\.M\.)[ \t]?)?"
_MORNING_BEFORE = frozenset({"오전", "上午", "午前", "AM", "A.M."})
_HOUR = r"(?P<hour>[01]?[0-9]|2[0-3])"
_MINUTE = r"(?P<minute>[0-5][0-9])"
_SECOND = r"(?P<second>[0-5][0-9])"
# Not inside a longer number, a decimal or a date's digits, and not a UTC offset ("+01:00");
# after a label's colon or an abbreviation's dot it may be ("Uhrzeit:17:36:12", "kl.17.31").
_NOT_AFTER = r"(?<![0-9,+])(?<![0-9][.:])"
_NOT_BEFORE = r"(?![0-9]|[:.,][0-9])"
# a colon's time may follow a date's last digit and a comma or dot ("09/03/2026,17:31")
_WITH_COLON = re.compile(
    rf"(?<![0-9+])(?<![0-9]:){_BEFORE_HALF}{_HOUR}:{_MINUTE}(?::{_SECOND})?{_NOT_BEFORE}(?:{_AFTER_HALF})?"
)
# "17h31", "17 h 31": no letter before the hour ("X12H45" is a code's)
_WITH_H = re.compile(rf"{_NOT_AFTER}(?<![^\W\d_]){_HOUR}[ \t]?[hH][ \t]?{_MINUTE}(?![0-9])")
_CJK = re.compile(rf"{_NOT_AFTER}{_BEFORE_HALF}{_HOUR}[ \t]?[時时點点시][ \t]?(?P<minute>[0-5]?[0-9])[ \t]?[分분]")
_UNIT_AFTER = r"(?P<unit>[ \t]?(?:Uhr|h|hrs|น\.?)(?![^\W\d_]))"
# "14.32" or "1432" is a time only where the document says so (an amount, a number or a
# date, "14.05.20", is written the same way): with "Uhr", "h", "hrs" or Thai "น." after it,
# with its AM or PM written out, or after a time's word or a date (as dates.py reads one:
# "15.03.2024 14.32").
_WITH_DOT = re.compile(
    rf"{_NOT_AFTER}{_HOUR}\.{_MINUTE}(?:\.{_SECOND})?{_NOT_BEFORE}(?:{_UNIT_AFTER}|{_AFTER_FULL_HALF})?"
)
_COMPACT = re.compile(
    r"(?<![0-9.,+:])(?P<hour>[01][0-9]|2[0-3])(?P<minute>[0-5][0-9])(?P<second>[0-5][0-9])?(?![0-9]|[.,:][0-9])"
    rf"{_UNIT_AFTER}?"
)
_TIME_WORD_BEFORE = re.compile(
    r"(?i)(?<![^\W\d_])(?:kl|klo|klokken|godz|time|zeit|uhrzeit|um|heure|hora|ora|ore|alle|tijd|tid|aika|saat"
    r"|jam|pukul|waktu|čas|idő|ώρα|ωρα|время|час|เวลา)\.?:?[ \t]*$"
)
# How far before a dotted or compact time its word may stand.
_TIME_WORD_REACH = 24
# What may stand between a date and the time printed after it ("15.03.2024 14.32",
# "9 Mar 2026 at 17.31", "03/09/26  1731").
_AFTER_A_DATE = re.compile(r",?(?:[ \t]at)?[ \t]{1,2}")
_VALUE = re.compile(rf"{_BEFORE_HALF}{_HOUR}[:.hH]{_MINUTE}(?:[:.]{_SECOND})?(?:{_AFTER_HALF})?")


@dataclass(frozen=True)
class PrintedTime:
    start: int
    end: int
    value: time
    seconds: bool  # whether the print gives its seconds


def _from_match(m: re.Match[str]) -> tuple[time, bool]:
    hour, minute = int(m.group("hour")), int(m.group("minute"))
    groups = m.groupdict()
    second = groups.get("second")
    after = groups.get("half") or groups.get("glued")
    before = groups.get("half_before")
    if (after or before) and 1 <= hour <= 12:  # else a 24-hour time a till marks anyway ("14:32 PM")
        afternoon = after[0] in _AFTERNOON if after else before not in _MORNING_BEFORE
        hour = hour % 12 + (12 if afternoon else 0)
    return time(hour, minute, int(second or 0)), second is not None


def parse_time_value(value: object) -> tuple[time, bool] | None:
    """A record's time of day, and whether it gives seconds; None for anything else."""
    if isinstance(value, time):
        return value.replace(microsecond=0, tzinfo=None), bool(value.second)
    if not isinstance(value, str):
        return None
    m = _VALUE.fullmatch(value.strip())
    return _from_match(m) if m else None


def clock_value(parsed: tuple[time, bool]) -> str:
    """A time as a record holds it: "HH:MM", or "HH:MM:SS" when it gives seconds."""
    value, seconds = parsed
    return value.strftime("%H:%M:%S" if seconds else "%H:%M")


def _said_to_be_a_time(text: str, m: re.Match[str], date_ends: set[int]) -> bool:
    groups = m.groupdict()
    if groups.get("unit") or groups.get("half"):
        return True
    if any(_AFTER_A_DATE.fullmatch(text, end, m.start()) for end in date_ends if m.start() - 8 <= end < m.start()):
        return True
    return _TIME_WORD_BEFORE.search(text, max(0, m.start() - _TIME_WORD_REACH), m.start()) is not None


def find_printed_times(text: str, dates: Sequence[DateMention] | None = None) -> list[PrintedTime]:
    """Every time of day `text` prints, in order; `dates` are its date mentions, read here
    when not given (a dotted or compact time counts as one after a date)."""
    if dates is None:
        dates = find_date_mentions(text)
    date_ends = {d.end for d in dates}
    found: list[PrintedTime] = []
    for pattern in (_WITH_COLON, _WITH_H, _CJK, _WITH_DOT, _COMPACT):
        for m in pattern.finditer(text):
            if pattern in (_WITH_DOT, _COMPACT) and not _said_to_be_a_time(text, m, date_ends):
                continue
            found.append(PrintedTime(m.start(), m.end(), *_from_match(m)))
    return sorted(found, key=lambda p: p.start)


def same_time(printed: PrintedTime, value: tuple[time, bool]) -> bool:
    """Whether a printed time is the value: the same hour and minute, and the same
    second where the value gives one (":00" also matches a print without seconds)."""
    wanted, with_seconds = value
    if (printed.value.hour, printed.value.minute) != (wanted.hour, wanted.minute):
        return False
    if not with_seconds:
        return True
    return printed.value.second == wanted.second if printed.seconds else wanted.second == 0
