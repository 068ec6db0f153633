"""Times of day: a record's value read as one (24-hour "14:32" or "14:32:05", or a
12-hour time with its AM or PM), and the times a document prints, in the forms tills,
e-receipts and invoices print them ("14:32", "2:32 PM", "02:32P", "14h32", "14.32 Uhr",
"kl. 14.32", "14時32分"). One parser for both, so a value and the print it came from
compare as times, not as strings ("05:31 PM" is 17:31; "9:05" is 09:05)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import time

__all__ = ["PrintedTime", "clock_value", "find_printed_times", "parse_time_value", "same_time"]

# AM / PM after the minutes (or seconds): "PM", "p.m.", "pm", or one letter glued on ("02:32P").
_MERIDIEM = r"(?:[ \t\u00a0]?(?P<half>[AaPp])\.?[ \t]?[Mm]\.?|(?P<glued>[AaPp]))(?![^\W\d_])"
_HOUR = r"(?P<hour>[01]?[0-9]|2[0-3])"
_MINUTE = r"(?P<minute>[0-5][0-9])"
# Not inside a longer number, a decimal or a date's digits, and not a UTC offset ("+01:00");
# after a label's colon it may be ("Uhrzeit:17:36:12").
_NOT_AFTER = r"(?<![0-9.,+])(?<![0-9]:)"
_NOT_BEFORE = r"(?![0-9]|[:.,][0-9])"
_WITH_COLON = re.compile(rf"{_NOT_AFTER}{_HOUR}:{_MINUTE}(?::(?P<second>[0-5][0-9]))?{_NOT_BEFORE}(?:{_MERIDIEM})?")
_WITH_H = re.compile(rf"{_NOT_AFTER}{_HOUR}[hH]{_MINUTE}(?![0-9])")
_CJK = re.compile(rf"{_NOT_AFTER}{_HOUR}[ \t]?[時时시][ \t]?(?P<minute>[0-5]?[0-9])[ \t]?[分분]")
# "14.32" is a time only where the document says so (an amount is written the same way):
# with its seconds, with "Uhr" or "h" after it, after a time's word, or after a date.
_WITH_DOT = re.compile(
    rf"{_NOT_AFTER}{_HOUR}\.{_MINUTE}(?:\.(?P<second>[0-5][0-9]))?{_NOT_BEFORE}(?P<unit>[ \t]?(?:Uhr|h)(?![^\W\d_]))?"
)
_TIME_WORD_BEFORE = re.compile(
    r"(?i)(?:(?<![^\W\d_])(?:kl|klo|godz|time|zeit|uhrzeit|heure|hora|ora|tijd|tid|aika|saat|время|час)\.?:?[ \t]*"
    r"|(?<![0-9])[0-9]{1,4}[./-][0-9]{1,2}[./-][0-9]{2,4},?[ \t]?)$"
)
# How far before a dotted time its word or date may stand.
_TIME_WORD_REACH = 24
_VALUE = re.compile(
    rf"{_HOUR}[:.hH]{_MINUTE}(?:[:.](?P<second>[0-5][0-9]))?(?:{_MERIDIEM})?",
)


@dataclass(frozen=True)
class PrintedTime:
    start: int
    end: int
    value: time
    seconds: bool  # whether the print gives its seconds


def _from_match(m: re.Match[str]) -> tuple[time, bool] | None:
    hour, minute = int(m.group("hour")), int(m.group("minute"))
    groups = m.groupdict()
    second = groups.get("second")
    half = groups.get("half") or groups.get("glued")
    if half and 1 <= hour <= 12:
        hour = hour % 12 + (12 if half in "Pp" else 0)  # else a 24-hour time a till marks anyway ("14:32 PM")
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


def find_printed_times(text: str) -> list[PrintedTime]:
    found: list[PrintedTime] = []
    for pattern in (_WITH_COLON, _WITH_H, _CJK, _WITH_DOT):
        for m in pattern.finditer(text):
            if pattern is _WITH_DOT and not (
                m.group("second")
                or m.group("unit")
                or _TIME_WORD_BEFORE.search(text, max(0, m.start() - _TIME_WORD_REACH), m.start())
            ):
                continue
            parsed = _from_match(m)
            if parsed is not None:
                found.append(PrintedTime(m.start(), m.end(), *parsed))
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
