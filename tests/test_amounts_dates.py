"""Amount parsing/finding, date grounding and normalised matching."""

from __future__ import annotations

from datetime import date, timedelta
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vetq.core.extraction.amounts import find_amounts, parse_amount
from vetq.core.extraction.dates import find_date_mentions, find_date_spans, is_real_iso_date
from vetq.core.extraction.text_match import NormalizedText, find_normalized

D = Decimal

# --- parse_amount -------------------------------------------------------------------

AMOUNT_FORMS = [
    ("1,234.56", D("1234.56")),
    ("1.234,56", D("1234.56")),
    ("1 234,56", D("1234.56")),
    ("1\u202f234,56", D("1234.56")),
    ("1\u00a0234,56", D("1234.56")),
    ("1'234.56", D("1234.56")),
    ("1\u2019234.56", D("1234.56")),
    ("1234.56", D("1234.56")),
    ("1234,56", D("1234.56")),
    ("1234", D("1234")),
    ("-12.50", D("-12.50")),
    ("(12.50)", D("-12.50")),
    ("€1.234,56", D("1234.56")),
    ("1.234,56 EUR", D("1234.56")),
    ("1.234,56 €", D("1234.56")),
    ("USD 1,234.56", D("1234.56")),
    ("$1,234.56", D("1234.56")),
    ("1 234,56 zł", D("1234.56")),
    ("CHF 1'234.50", D("1234.50")),
    ("£583.20", D("583.20")),
    ("1,234", D("1234")),
    ("1.234", D("1234")),
    ("1,5", D("1.5")),
    ("12,50", D("12.50")),
    ("0.500", D("0.500")),
    ("1.234.567,89", D("1234567.89")),
    ("1,234,567.89", D("1234567.89")),
    ("12 345 678,90", D("12345678.90")),
    ("1,23,456.00", D("123456.00")),
    ("-€12.50", D("-12.50")),
    ("583.20", D("583.20")),
]


@pytest.mark.parametrize(("written", "expected"), AMOUNT_FORMS)
def test_parse_amount_forms(written: str, expected: Decimal) -> None:
    assert parse_amount(written) == expected


@pytest.mark.parametrize(
    "written",
    ["", "abc", "2026-02-28", "GLX/2026/778", "12 34", "1,2,3", "1.2.3,4.5", "--12", "12%", None, 12],
)
def test_parse_amount_rejects(written: object) -> None:
    assert parse_amount(written) is None  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Total: €1.234,56", [D("1234.56")]),
        ("Amount 1.234,56EUR due", [D("1234.56")]),
        ("Subtotal 540.00 Tax 43.20 Total 583.20", [D("540.00"), D("43.20"), D("583.20")]),
        ("Gesamt 1 234,56 zł", [D("1234.56")]),
        ("Credit (12.50) applied", [D("-12.50")]),
        ("Swiss: CHF 1'234.50.", [D("1234.50")]),
        ("Qty 3 540.00", [D("3"), D("540.00")]),
    ],
)
def test_find_amounts_values(text: str, expected: list[Decimal]) -> None:
    assert [m.value for m in find_amounts(text)] == expected
    for m in find_amounts(text):
        assert text[m.start : m.end] == m.raw


@pytest.mark.parametrize(
    "text",
    [
        "Ref: GLX/2026/778",
        "Billing date 2026-02-28.",
        "Date 28.02.2026",
        "Due 02/28/2026",
        "Paid on 28 February 2026",
        "Call +44 20 7946 0958",
        "Tel: 020 7946 0958",
        "Invoice INV-0042",
        "Invoice #12345",
        "VAT 20%",
        "MwSt 19 %",
        "the 28th item at 10:30",
        "version v1.2.3",
    ],
)
def test_find_amounts_ignores_non_amounts(text: str) -> None:
    assert find_amounts(text) == []


# --- dates ------------------------------------------------------------------------

FEB28 = date(2026, 2, 28)
DATE_FORMS = [
    ("2026-02-28", FEB28),
    ("2026/02/28", FEB28),
    ("02/28/2026", FEB28),
    ("28/02/2026", FEB28),
    ("28.02.2026", FEB28),
    ("28-02-2026", FEB28),
    ("28.02.26", FEB28),
    ("3/7/2026", date(2026, 3, 7)),
    ("3/7/2026", date(2026, 7, 3)),
    ("03/04/2026", date(2026, 3, 4)),
    ("03/04/2026", date(2026, 4, 3)),
    ("28 February 2026", FEB28),
    ("Feb 28, 2026", FEB28),
    ("February 28th, 2026", FEB28),
    ("28th Feb 2026", FEB28),
    ("Feb. 28 2026", FEB28),
    ("1st March 2026", date(2026, 3, 1)),
    ("2nd Mar 2026", date(2026, 3, 2)),
    ("March 3rd, 2026", date(2026, 3, 3)),
    ("4th of July 2026", date(2026, 7, 4)),
    ("28. Februar 2026", FEB28),
    ("3. März 2026", date(2026, 3, 3)),
    ("28 février 2026", FEB28),
    ("28 de febrero de 2026", FEB28),
    ("Sept 9, 2026", date(2026, 9, 9)),
]


@pytest.mark.parametrize(("written", "value"), DATE_FORMS)
def test_date_forms_ground_the_right_date(written: str, value: date) -> None:
    text = f"Invoice dated {written}. Thanks."
    spans = find_date_spans(text, value)
    assert spans, f"{written!r} should ground {value}"
    assert any(text[s:e] == written for s, e in spans)
    # and not a different date
    assert find_date_spans(text, value + timedelta(days=1)) == []
    assert find_date_spans(text, value.replace(year=value.year - 1)) == []


def test_dot_date_is_day_first_only() -> None:
    assert find_date_spans("03.04.2026", date(2026, 4, 3))
    assert not find_date_spans("03.04.2026", date(2026, 3, 4))


def test_impossible_dates_are_not_mentions() -> None:
    assert find_date_mentions("31/02/2026 and 2026-13-01") == []


@pytest.mark.parametrize(
    ("s", "ok"),
    [
        ("2026-02-28", True),
        ("2024-02-29", True),
        ("2026-02-29", False),
        ("2026-2-28", False),
        ("20260228", False),
        ("", False),
        ("2026-02-28T00:00", False),
        (None, False),
    ],
)
def test_is_real_iso_date(s: object, ok: bool) -> None:
    assert is_real_iso_date(s) is ok


# --- text_match -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value", "found"),
    [
        ("from Globex Ltd below", "GLOBEX LTD.", "Globex Ltd"),
        ("Ref: GLX/2026/778", "GLX-2026-778", "GLX/2026/778"),
        ("see inv no. 12 here", "Inv  No 12", "inv no. 12"),
        ("Société Générale SA", "societe generale", "Société Générale"),
        ("STRASSE 5", "Straße 5", "STRASSE 5"),
        ("Ref INV0012", "INV-0012", "INV0012"),
    ],
)
def test_normalised_match(text: str, value: str, found: str) -> None:
    spans = find_normalized(text, value)
    assert [text[s:e] for s, e in spans] == [found]


def test_match_respects_token_boundaries() -> None:
    assert find_normalized("Globex Ltd", "Ex") == []
    assert find_normalized("Globex Ltd", "Glob") == []
    assert find_normalized("Globex Ltd; globex ltd.", "globex ltd") == [(0, 10), (12, 22)]


def test_match_is_fast_on_large_text() -> None:
    text = ("lorem ipsum dolor sit amet, Société 12/34 " * 5000)[:200_000] + " Globex Ltd"
    nt = NormalizedText(text)
    spans = nt.find("GLOBEX LTD.")
    assert [text[s:e] for s, e in spans] == ["Globex Ltd"]


# --- properties -----------------------------------------------------------------------

_amounts = st.decimals(min_value=D("0"), max_value=D("999999999.99"), places=2, allow_nan=False)


def _group(int_part: str, sep: str) -> str:
    groups = []
    while len(int_part) > 3:
        groups.insert(0, int_part[-3:])
        int_part = int_part[:-3]
    groups.insert(0, int_part)
    return sep.join(groups)


def _render(value: Decimal, style: str) -> str:
    int_part, frac = f"{value:.2f}".split(".")
    if style == "us":
        return _group(int_part, ",") + "." + frac
    if style == "eu":
        return _group(int_part, ".") + "," + frac
    if style == "swiss":
        return _group(int_part, "'") + "." + frac
    if style == "space":
        return _group(int_part, " ") + "," + frac
    if style == "nnbsp":
        return _group(int_part, "\u202f") + "," + frac
    return int_part + "." + frac


@settings(max_examples=200, deadline=None)
@given(
    _amounts,
    st.sampled_from(["us", "eu", "swiss", "space", "nnbsp", "plain"]),
    st.sampled_from(["", "€", "$", "EUR ", "USD "]),
    st.sampled_from(["", " EUR", " zł", " €"]),
)
def test_parse_amount_round_trips(value: Decimal, style: str, pre: str, post: str) -> None:
    written = pre + _render(value, style) + post
    assert parse_amount(written) == value


@settings(max_examples=200, deadline=None)
@given(_amounts, st.sampled_from(["us", "eu", "swiss", "space", "nnbsp", "plain"]))
def test_find_amounts_finds_rendered_amount(value: Decimal, style: str) -> None:
    written = _render(value, style)
    text = f"Total due: {written} payable now"
    found = find_amounts(text)
    assert [m.value for m in found] == [value]
    assert found[0].raw == written


_MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]


def _ordinal(d: int) -> str:
    if 10 <= d % 100 <= 20:
        return f"{d}th"
    return f"{d}" + {1: "st", 2: "nd", 3: "rd"}.get(d % 10, "th")


def _render_date(d: date, style: str) -> str:
    m = _MONTHS[d.month - 1]
    return {
        "iso": d.isoformat(),
        "iso_slash": f"{d.year}/{d.month:02d}/{d.day:02d}",
        "us": f"{d.month:02d}/{d.day:02d}/{d.year}",
        "us_nopad": f"{d.month}/{d.day}/{d.year}",
        "eu_slash": f"{d.day:02d}/{d.month:02d}/{d.year}",
        "eu_dot": f"{d.day:02d}.{d.month:02d}.{d.year}",
        "eu_dash": f"{d.day:02d}-{d.month:02d}-{d.year}",
        "eu_dot_short": f"{d.day}.{d.month}.{d.year % 100:02d}",
        "long": f"{d.day} {m} {d.year}",
        "long_ord": f"{_ordinal(d.day)} {m[:3]} {d.year}",
        "us_long": f"{m} {d.day}, {d.year}",
        "us_long_ord": f"{m} {_ordinal(d.day)}, {d.year}",
        "us_abbr": f"{m[:3]}. {d.day} {d.year}",
    }[style]


_DATE_STYLES = [
    "iso",
    "iso_slash",
    "us",
    "us_nopad",
    "eu_slash",
    "eu_dot",
    "eu_dash",
    "eu_dot_short",
    "long",
    "long_ord",
    "us_long",
    "us_long_ord",
    "us_abbr",
]
_filler = st.text(alphabet=st.characters(blacklist_categories=("Cs", "Nd")), max_size=30)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.dates(min_value=date(1971, 1, 1), max_value=date(2068, 12, 31)), st.sampled_from(_DATE_STYLES), _filler, _filler
)
def test_find_date_spans_finds_rendered_dates(d: date, style: str, before: str, after: str) -> None:
    written = _render_date(d, style)
    text = f"{before} {written} {after}"
    spans = find_date_spans(text, d)
    assert any(text[s:e] == written for s, e in spans), (text, spans)


@settings(max_examples=200, deadline=None)
@given(st.text(), st.text(max_size=20))
def test_matching_never_raises(text: str, value: str) -> None:
    for s, e in NormalizedText(text).find(value):
        assert 0 <= s < e <= len(text)
    find_amounts(text)
    find_date_mentions(text)
