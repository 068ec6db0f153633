"""Times of day: a record's value read as one (24-hour "14:32" or "14:32:05", or a
12-hour time with its AM or PM), and the times a document prints, in the forms tills,
e-receipts and invoices print them ("14:32", "2:32 PM", "02:32P", "5.31pm", "14h32",
"17 h 31", "14.32 Uhr", "kl. 14.32", "TIME 1432", "14時32分", "오후 2:32", "2:32 μ.μ.").
One parser for both, so a value and the print it came from compare as times, not as
strings ("05:31 PM" is 17:31; "9:05" is 09:05)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import time

__all__ = ["PrintedTime", "clock_value", "find_printed_times", "parse_time_value", "same_time"]

# Which half of the day a 12-hour time is in, as written after it ("PM", "p.m.", one
# letter as in "02:32P" or "5:31 p", Greek "μ.μ.", Arabic "م") or before it (Korean "오후",
# Chinese "下午", Japanese "午後"); the first character tells which.
_AFTERNOON = frozenset("pPμΜم")
_AFTER_HALF = (
    r"(?:[ \t\u00a0]?(?P<half>[AaPp]\.?[ \t]?[Mm]\.?|[πΠμΜ]\.?[ \t]?[μΜ]\.?|[صم])(?![^\W\d_])"
    r"|[ \t]?(?P<glued>[AaPp])(?![^\W\d_]))"
)
_BEFORE_HALF = r"(?:(?P<half_before>오전|오후|上午|下午|午前|午後)[ \t]?)?"
_MORNING_BEFORE = frozenset({"오전", "上午", "午前"})
_HOUR = r"(?P<hour>[01]?[0-9]|2[0-3])"
_MINUTE = r"(?P<minute>[0-5][0-9])"
_SECOND = r"(?P<second>[0-5][0-9])"
# Not inside a longer number, a decimal or a date's digits, and not a UTC offset ("+01:00");
# after a label's colon it may be ("Uhrzeit:17:36:12").
_NOT_AFTER = r"(?<![0-9.,+])(?<![0-9]:)"
_NOT_BEFORE = r"(?![0-9]|[:.,][0-9])"
_WITH_COLON = re.compile(rf"{_NOT_AFTER}{_BEFORE_HALF}{_HOUR}:{_MINUTE}(?::{_SECOND})?{_NOT_BEFORE}(?:{_AFTER_HALF})?")
_WITH_H = re.compile(rf"{_NOT_AFTER}{_HOUR}[ \t]?[hH][ \t]?{_MINUTE}(?![0-9])")
_CJK = re.compile(rf"{_NOT_AFTER}{_BEFORE_HALF}{_HOUR}[ \t]?[時时시][ \t]?(?P<minute>[0-5]?[0-9])[ \t]?[分분]")
# "14.32" or "1432" is a time only where the document says so (an amount, a number or a
# date, "14.05.20", is written the same way): with "Uhr", "h" or Thai "น." after it, with
# its AM or PM, or after a time's word or a date ("15.03.2024 14.32").
_WITH_DOT = re.compile(
    rf"{_NOT_AFTER}{_HOUR}\.{_MINUTE}(?:\.{_SECOND})?{_NOT_BEFORE}"
    rf"(?:(?P<unit>[ \t]?(?:Uhr|h|น\.?)(?![^\W\d_]))|{_AFTER_HALF})?"
)
_COMPACT = re.compile(
    r"(?<![0-9.,+:])(?P<hour>[01][0-9]|2[0-3])(?P<minute>[0-5][0-9])(?P<second>[0-5][0-9])?(?![0-9]|[.,:][0-9])"
)
_TIME_WORD_BEFORE = re.compile(
    r"(?i)(?:(?<![^\W\d_])(?:kl|klo|godz|time|zeit|uhrzeit|heure|hora|ora|tijd|tid|aika|saat|время|час|เวลา)\.?:?[ \t]*"
    r"|(?<![0-9])[0-9]{1,4}[./-][0-9]{1,2}[./-][0-9]{2,4},?[ \t]{1,2})$"
)
# How far before a dotted or compact time its word or date may stand.
_TIME_WORD_REACH = 24
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


def _said_to_be_a_time(text: str, m: re.Match[str]) -> bool:
    groups = m.groupdict()
    if groups.get("unit") or groups.get("half") or groups.get("glued"):
        return True
    return _TIME_WORD_BEFORE.search(text, max(0, m.start() - _TIME_WORD_REACH), m.start()) is not None


def find_printed_times(text: str) -> list[PrintedTime]:
    found: list[PrintedTime] = []
    for pattern in (_WITH_COLON, _WITH_H, _CJK, _WITH_DOT, _COMPACT):
        for m in pattern.finditer(text):
            if pattern in (_WITH_DOT, _COMPACT) and not _said_to_be_a_time(text, m):
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
