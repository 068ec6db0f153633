"""Identifier, e-mail, phone and URL formats and checksums, and finding such values in a text."""

from __future__ import annotations

import re
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vetq.core.extraction.formats import (
    IBAN_LENGTHS,
    email_valid,
    find_email_spans,
    find_identifier_spans,
    find_phone_spans,
    find_url_spans,
    iban_valid,
    luhn_valid,
    phone_digits,
    url_valid,
    vat_country,
    vat_valid,
)

# --- IBAN -------------------------------------------------------------------------------

# The SWIFT IBAN registry's example IBANs.
REGISTRY_IBANS = [
    "DE89370400440532013000",
    "GB29NWBK60161331926819",
    "FR1420041010050500013M02606",
    "NL91ABNA0417164300",
    "AT611904300234573201",
    "BE68539007547034",
    "CH9300762011623852957",
    "ES9121000418450200051332",
    "IT60X0542811101000000123456",
    "PL61109010140000071219812874",
    "SE4550000000058398257466",
    "NO9386011117947",
    "DK5000400440116243",
    "FI2112345600000785",
    "IE29AIBK93115212345678",
    "PT50000201231234567890154",
    "LU280019400644750000",
    "GR1601101250000000012300695",
    "CZ6508000000192000145399",
    "HU42117730161111101800000000",
    "SK3112000000198742637541",
    "SI56263300012039086",
    "HR1210010051863000160",
    "RO49AAAA1B31007593840000",
    "BG80BNBG96611020345678",
    "EE382200221020145685",
    "LT121000011101001000",
    "LV80BANK0000435195001",
    "MT84MALT011000012345MTLCAST001S",
    "CY17002001280000001200527600",
    "IS140159260076545510730339",
    "LI21088100002324013AA",
    "MC5811222000010123456789030",
    "SM86U0322509800000000270100",
    "GI75NWBK000000007099453",
    "AD1200012030200359100100",
    "TR330006100519786457841326",
    "SA0380000000608010167519",
    "BR9700360305000010009795493P1",
]


@pytest.mark.parametrize("iban", REGISTRY_IBANS)
def test_registry_example_ibans_are_valid(iban: str) -> None:
    assert iban_valid(iban)
    assert len(iban) == IBAN_LENGTHS[iban[:2]]


@pytest.mark.parametrize(
    "written",
    [
        "DE89 3704 0044 0532 0130 00",
        "de89-3704-0044-0532-0130-00",
        "gb29 nwbk 6016 1331 9268 19",
        " NL91ABNA0417164300 ",
    ],
)
def test_iban_ignores_spaces_hyphens_and_case(written: str) -> None:
    assert iban_valid(written)


def _check_digits(country: str, bban: str) -> str:
    rearranged = bban + country + "00"
    number = int("".join(str(int(c, 36)) for c in rearranged))
    return f"{98 - number % 97:02d}"


@pytest.mark.parametrize(
    ("iban", "why"),
    [
        ("DE89370400440532013001", "last digit changed"),
        ("DE88370400440532013000", "check digit changed"),
        ("GB29NWBK60161331926818", "last digit changed"),
        ("FR1420041010050500013M02607", "last digit changed"),
        ("NL91ABNA0417164301", "last digit changed"),
        ("NL91ABNB0417164300", "bank code letter changed"),
        ("DE8937040044053201300", "one digit short"),
        ("DE893704004405320130000", "one digit long"),
        ("XX89370400440532013000", "unknown country"),
        ("DE89370400440532O13000", "letter O for a zero in the BBAN"),
        ("DEAB370400440532013000", "letters as check digits"),
        ("", "empty"),
        ("DE", "country only"),
    ],
)
def test_corrupted_ibans_are_invalid(iban: str, why: str) -> None:
    assert not iban_valid(iban), why


def test_iban_length_is_checked_apart_from_the_checksum() -> None:
    # a correct mod-97 over a BBAN one digit too short for Germany (and too long for Norway)
    short_bban = "37040044053201300"
    long_bban = "860111179470"
    de_short = "DE" + _check_digits("DE", short_bban) + short_bban
    no_long = "NO" + _check_digits("NO", long_bban) + long_bban
    assert not iban_valid(de_short)
    assert not iban_valid(no_long)
    # the same construction at the right length passes, so only the length failed above
    right = "370400440532013000"
    assert iban_valid("DE" + _check_digits("DE", right) + right)


def test_alias_check_digits_are_refused() -> None:
    # 99 = 02 + 97 passes mod 97 but is never issued
    bban = next(f"{n:018d}" for n in range(10**17, 10**17 + 1000) if _check_digits("DE", f"{n:018d}") == "02")
    assert iban_valid("DE02" + bban)
    assert not iban_valid("DE99" + bban)


_BBAN_SHAPES = {
    # country: (letters in front, digits after) of an IBAN of the registered length
    "DE": (0, 18),
    "GB": (4, 14),
    "NL": (4, 10),
    "NO": (0, 11),
    "FR": (0, 23),
    "IT": (1, 22),
}


@st.composite
def _ibans(draw: st.DrawFn) -> str:
    country = draw(st.sampled_from(sorted(_BBAN_SHAPES)))
    letters, digits = _BBAN_SHAPES[country]
    bban = draw(st.text(string.ascii_uppercase, min_size=letters, max_size=letters)) + draw(
        st.text(string.digits, min_size=digits, max_size=digits)
    )
    return country + _check_digits(country, bban) + bban


@settings(max_examples=150, deadline=None)
@given(_ibans())
def test_property_computed_ibans_are_valid_and_every_digit_matters(iban: str) -> None:
    assert len(iban) == IBAN_LENGTHS[iban[:2]]
    assert iban_valid(iban)
    for i, ch in enumerate(iban):
        if not ch.isdigit():
            continue
        for other in string.digits:
            if other != ch:
                corrupted = iban[:i] + other + iban[i + 1 :]
                assert not iban_valid(corrupted), corrupted


# --- Luhn ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("number", "valid"),
    [
        ("79927398713", True),
        ("79927398710", False),
        ("79927398711", False),
        ("4111 1111 1111 1111", True),
        ("4111-1111-1111-1112", False),
        ("5500 0000 0000 0004", True),
        ("378282246310005", True),
        ("378282246310006", False),
        ("18", True),
        ("0", False),  # a single digit, though its Luhn sum is 0
        ("", False),
        ("7992739871a", False),
        ("7992739871\u0663", False),  # an Arabic-Indic three is not a digit here
    ],
)
def test_luhn(number: str, valid: bool) -> None:
    assert luhn_valid(number) is valid


# --- VAT numbers --------------------------------------------------------------------------

# Real numbers as printed (python-stdnum's collection of numbers found online), plus
# format examples for GB, CH and NO.
VALID_VAT = [
    ("ATU 142 43 102", "AT"),
    ("ATU13585627", "AT"),
    ("BE 0202.239.951", "BE"),
    ("BE0428759497", "BE"),
    ("BG 175074752", "BG"),
    ("BG7523169263", "BG"),
    ("CY-10189098G", "CY"),
    ("CZ 25123891", "CZ"),
    ("CZ6011270177", "CZ"),
    ("DE 136 695 976", "DE"),
    ("DE 221.304.969", "DE"),
    ("DE812847601", "DE"),
    ("DK 25 18 63 11", "DK"),
    ("EE 100 931 558", "EE"),
    ("EL 094012834", "EL"),
    ("GR094012834", "EL"),
    ("el-082857563", "EL"),
    ("ES A08370314", "ES"),
    ("ES X5277343Q", "ES"),
    ("ES 54362315K", "ES"),
    ("ES-B18889204", "ES"),
    ("FI 20774740", "FI"),
    ("FR 40 303 265 045", "FR"),
    ("FR K 7399859412", "FR"),
    ("HR12345678901", "HR"),
    ("HU 12723650", "HU"),
    ("IE 6433435F", "IE"),
    ("IE6433435OA", "IE"),
    ("IE8D79739I", "IE"),
    ("IT 00743110157", "IT"),
    ("IT 00 595 000 217", "IT"),
    ("IT-01626160210", "IT"),
    ("LT 100001354118", "LT"),
    ("LT 119511515", "LT"),
    ("LU 20981643", "LU"),
    ("LV 40003189718", "LV"),
    ("MT 1039-6417", "MT"),
    ("NL 806753742B01", "NL"),
    ("NL.8143.26.584.B.01", "NL"),
    ("PL 584-030-44-72", "PL"),
    ("PT 502448911", "PT"),
    ("RO 1822964", "RO"),
    ("RO16241790", "RO"),
    ("SE 556058115801", "SE"),
    ("SE-556666-4438-01", "SE"),
    ("SI 26808498", "SI"),
    ("SK 2020 237 945", "SK"),
    ("GB 980 7806 84", "GB"),
    ("GB123456789012", "GB"),
    ("GBGD001", "GB"),
    ("GBHA599", "GB"),
    ("XI 980780684", "XI"),
    ("CHE-123.456.789 MWST", "CH"),
    ("CHE-116.281.710 TVA", "CH"),
    ("CHE116281710", "CH"),
    ("NO123456789MVA", "NO"),
    ("NO 923 609 016 MVA", "NO"),
]


@pytest.mark.parametrize(("number", "country"), VALID_VAT)
def test_valid_vat_numbers_and_their_country(number: str, country: str) -> None:
    assert vat_valid(number)
    assert vat_country(number) == country


INVALID_VAT = [
    ("ATU1358562", "AT needs 8 digits after U"),
    ("AT13585627", "AT without the U"),
    ("BE2428759497", "BE starts with 0 or 1"),
    ("BE042875949", "BE too short"),
    ("BG12345678", "BG 8 digits"),
    ("CY102590331", "CY ends with a letter"),
    ("CZ1234567", "CZ 7 digits"),
    ("DE12345678", "DE 8 digits"),
    ("DE0136695976", "DE 10 digits"),
    ("DK1234567", "DK 7 digits"),
    ("EL12345678", "EL 8 digits"),
    ("ES123456789", "ES needs a letter"),
    ("ESAB1234567", "ES two letters in front"),
    ("FI1234567", "FI 7 digits"),
    ("FRIO303265045", "FR key with I and O"),
    ("FR4030326504", "FR 10 digits"),
    ("HR1234567890", "HR 10 digits"),
    ("HU1234567", "HU 7 digits"),
    ("IE6433435", "IE without its check letter"),
    ("IT0074311015", "IT 10 digits"),
    ("LT1234567890", "LT 10 digits"),
    ("LV4000318971", "LV 10 digits"),
    ("NL806753742B1", "NL one digit after B"),
    ("NL806753742C01", "NL C instead of B"),
    ("NL80675374B01", "NL 8 digits before B"),
    ("PL521135511", "PL 9 digits"),
    ("PT50244891", "PT 8 digits"),
    ("RO0123456", "RO leading zero"),
    ("RO12345678901", "RO 11 digits"),
    ("SE556058115802", "SE must end in 01"),
    ("SI06808498", "SI leading zero"),
    ("SK0020237945", "SK leading zero"),
    ("GB12345678", "GB 8 digits"),
    ("GBGD500", "GB government department above 499"),
    ("CHE-123.456.789 XYZ", "CH unknown suffix"),
    ("CH123456789", "CH without E"),
    ("NO123456789MV", "NO truncated MVA"),
    ("XX123456789", "unknown prefix"),
    ("US123456789", "not a VAT country"),
    ("123456789", "no prefix"),
    ("", "empty"),
]


@pytest.mark.parametrize(("number", "why"), INVALID_VAT)
def test_invalid_vat_formats(number: str, why: str) -> None:
    assert not vat_valid(number), why
    assert vat_country(number) is None, why


# The German check digit (ISO 7064 MOD 11,10): real numbers pass, one-digit changes fail.
@pytest.mark.parametrize(
    "number", ["DE136695976", "DE 118619592", "DE 811 363 057", "DE 813 11 38 75", "DE129390950", "DE - 113866163"]
)
def test_de_vat_check_digit_accepts_real_numbers(number: str) -> None:
    assert vat_valid(number)


@pytest.mark.parametrize(
    "number", ["DE136695978", "DE 125014855", "DE 246 495 415", "DE 813 91 38 75", "DE - 266297673"]
)
def test_de_vat_check_digit_refuses_corruptions(number: str) -> None:
    assert re.fullmatch(r"DE[0-9]{9}", re.sub(r"[\s.\-]", "", number))  # the format alone would pass
    assert not vat_valid(number)


@pytest.mark.parametrize(
    "number", ["IT00743110157", "IT 00118439991", "IT 00193180932", "IT 12920760159", "IT02087050155"]
)
def test_it_vat_check_digit_accepts_real_numbers(number: str) -> None:
    assert vat_valid(number)


@pytest.mark.parametrize(
    ("number", "why"),
    [
        ("IT00743110158", "last digit changed"),
        ("IT00743110167", "a middle digit changed"),
        ("IT00000000000", "all zero: Luhn-valid but no company"),
    ],
)
def test_it_vat_check_refuses(number: str, why: str) -> None:
    assert not vat_valid(number), why


# --- E-mail and URLs ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "address",
    [
        "ann@example.com",
        "first.last+invoices@sub.example.co.uk",
        "o'brien@example.ie",
        "billing-team@my-company.de",
        "jörg@müller.de",
        "info@xn--mller-kva.de",
        "user@example.xn--p1ai",
        "a@b.io",
    ],
)
def test_valid_emails(address: str) -> None:
    assert email_valid(address)


@pytest.mark.parametrize(
    "address",
    [
        "ann@example",
        "ann@@example.com",
        "a@b@example.com",
        "@example.com",
        "ann@",
        "ann@.com",
        "ann@example.c",
        "ann@example.123",
        "ann@exa_mple.com",
        "ann@-example.com",
        "ann@example-.com",
        "ann example@x.com",
        ".ann@example.com",
        "ann.@example.com",
        "ann..b@example.com",
        "ann@example..com",
        "a" * 65 + "@example.com",
        "ann@" + "a" * 64 + ".com",
        "ann@" + ("abcdefghi." * 25) + "com",
    ],
)
def test_invalid_emails(address: str) -> None:
    assert not email_valid(address)


@pytest.mark.parametrize(
    "url",
    [
        "https://www.dhl.de/track?id=1",
        "http://example.com",
        "HTTPS://Example.COM/Path",
        "www.dhl.de/track?id=1",
        "dhl.de",
        "shop.example.co.uk/a/b#frag",
        "https://192.168.1.10:8080/status",
        "https://example.com:443",
        "https://münchen.de/",
    ],
)
def test_valid_urls(url: str) -> None:
    assert url_valid(url)


@pytest.mark.parametrize(
    "url",
    [
        "ftp://example.com",
        "https://localhost",
        "http://exa mple.com",
        "www.dhl.de/track id",
        "example",
        "https://",
        "ann@example.com",
        "https://user@example.com",
        "1.5",
        "v2.3",
        "192.168.1.10/status",
        "https://ex_ample.com",
        "https://example.com:port",
        "https://example.com/<script>",
        "",
    ],
)
def test_invalid_urls(url: str) -> None:
    assert not url_valid(url)


def test_find_email_spans_whole_addresses_only() -> None:
    text = "Write to Ann@X.com, not joann@x.com, ann@x.com.au or mr.ann@x.com; or ann@x.com."
    spans = find_email_spans(text, "ann@x.com")
    assert [text[s:e] for s, e in spans] == ["Ann@X.com", "ann@x.com"]
    assert spans[-1] == (len(text) - len("ann@x.com."), len(text) - 1)


def test_find_email_spans_not_followed_by_more_address() -> None:
    assert find_email_spans("ann@x.comx and ann@x.com-b", "ann@x.com") == []
    assert find_email_spans("(ann@x.com)", "ann@x.com") == [(1, 10)]
    assert find_email_spans("no address here", "not-an-address") == []


def test_find_url_spans_host_case_scheme_www_and_trailing_slash() -> None:
    text = (
        "Track at https://WWW.DHL.de/track?id=1. Not dhl.de/track?id=12, mydhl.de/track?id=1, "
        "dhl.de/Track?id=1 or dhl.de.evil.com. Also http://dhl.de/track?id=1/ here."
    )
    found = [text[s:e] for s, e in find_url_spans(text, "dhl.de/track?id=1")]
    assert found == ["https://WWW.DHL.de/track?id=1", "http://dhl.de/track?id=1/"]
    # the value's own scheme, www. and trailing slash do not matter either
    assert [text[s:e] for s, e in find_url_spans(text, "HTTPS://www.dhl.DE/track?id=1/")] == found


def test_find_url_spans_bare_host() -> None:
    text = "See dhl.de, www.dhl.de/ and mail.dhl.de or dhl.de:8080 or ann@dhl.de."
    found = [text[s:e] for s, e in find_url_spans(text, "https://dhl.de")]
    assert found == ["dhl.de", "www.dhl.de/"]


# --- Phone numbers ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("written", "digits"),
    [
        ("+44 20 7946 0958", "+442079460958"),
        ("(412) 555-0199", "4125550199"),
        ("+44 (0)20 7946 0958", "+442079460958"),
        ("(+49) 30 1234567", "+49301234567"),
        ("030/1234567", "0301234567"),
        ("+1 412 555 0199 ext. 23", "+14125550199"),
        ("412.555.0199 x23", "4125550199"),
        ("412-555-0199 EXT 7", "4125550199"),
        ("123456", "123456"),
        ("123 456 789 012 345", "123456789012345"),
    ],
)
def test_phone_digits(written: str, digits: str) -> None:
    assert phone_digits(written) == digits


@pytest.mark.parametrize(
    ("written", "why"),
    [
        ("12345", "five digits"),
        ("1234 5678 9012 3456", "sixteen digits"),
        ("Tel 020 7946 0958", "letters"),
        ("0800-FLOWERS", "a vanity number has letters"),
        ("020 7946 0958 ext", "a marker without an extension"),
        ("+44 20 +7946 0958", "a + in the middle"),
        ("\u0660\u0662\u0660 7946 0958", "Arabic-Indic digits"),
        ("", "empty"),
    ],
)
def test_phone_digits_refuses(written: str, why: str) -> None:
    assert phone_digits(written) is None, why


def _found(text: str, value: str) -> list[str]:
    return [text[s:e] for s, e in find_phone_spans(text, value)]


def test_phone_span_same_writing() -> None:
    text = "Call (412) 555-0199 today."
    assert find_phone_spans(text, "412.555.0199") == [(5, 19)]
    assert text[5:19] == "(412) 555-0199"


def test_phone_span_international_value_national_text() -> None:
    assert _found("Tel: 020 7946 0958.", "+44 20 7946 0958") == ["020 7946 0958"]
    assert _found("Tel. 030 1234567", "+49 30 1234567") == ["030 1234567"]
    assert _found("Tel. 030/1234567", "+49 30 1234567") == ["030/1234567"]


def test_phone_span_national_value_international_text() -> None:
    assert _found("Phone +44 20 7946 0958", "020 7946 0958") == ["+44 20 7946 0958"]
    assert _found("Fon +49 (0)30 1234567", "030 1234567") == ["+49 (0)30 1234567"]
    assert _found("Tel 0044 20 7946 0958", "+44 20 7946 0958") == ["0044 20 7946 0958"]
    # Italy keeps its 0 after the country code
    assert _found("Tel. 02 1234 5678", "+39 02 1234 5678") == ["02 1234 5678"]


def test_phone_span_nanp_without_trunk_prefix() -> None:
    assert _found("Phone: (412) 555-0199", "+1 412 555 0199") == ["(412) 555-0199"]
    assert _found("Phone: +1 412-555-0199", "(412) 555-0199") == ["+1 412-555-0199"]


def test_phone_span_needs_seven_digits_after_the_country_code() -> None:
    # +49 123456 against 0123456: six digits left, too few to call them the same number
    assert find_phone_spans("Tel 0123456", "+49 123456") == []


def test_phone_span_refuses_different_numbers() -> None:
    assert find_phone_spans("Tel +49 20 7946 0958", "+44 20 7946 0958") == []
    # a national number without a 0 does not match the tail of an international one
    assert find_phone_spans("Tel 1234567", "+49 30 1234567") == []
    assert find_phone_spans("Tel 020 7946 0959", "020 7946 0958") == []


def test_phone_span_never_inside_a_longer_digit_run() -> None:
    assert find_phone_spans("Ref 94125550199", "4125550199") == []
    assert find_phone_spans("Ref 41255501990", "4125550199") == []
    assert find_phone_spans("IBAN DE89370400440532013000", "370400440532") == []
    assert find_phone_spans("ID12345678", "12345678") == []
    # part of a grouped number is not the number either
    assert find_phone_spans("Call (412) 555-0199", "555-0199") == []
    assert find_phone_spans("Call +44 20 7946 0958", "20 7946 0958") == []


def test_phone_span_one_of_two_numbers_in_a_run() -> None:
    text = "Tel/Fax: 020 7946 0958 / 020 7946 0959"
    assert _found(text, "020 7946 0959") == ["020 7946 0959"]
    assert _found(text, "+44 20 7946 0958") == ["020 7946 0958"]
    assert find_phone_spans("Tel 020 7946 0958 12", "020 7946 0958") == []  # 12 is too short to be a number


def test_phone_span_invalid_value() -> None:
    assert find_phone_spans("Call 12345", "12345") == []
    assert find_phone_spans("Call 020 7946 0958", "Tel 020 7946 0958") == []


# --- Identifiers ---------------------------------------------------------------------------


def test_identifier_span_with_grouping_spaces() -> None:
    text = "IBAN: DE89 3704 0044 0532 0130 00. BIC: COBADEFFXXX"
    (span,) = find_identifier_spans(text, "DE89370400440532013000")
    assert text[span[0] : span[1]] == "DE89 3704 0044 0532 0130 00"
    assert find_identifier_spans(text, "de89-3704-0044-0532-0130-00") == [span]


@pytest.mark.parametrize(
    ("text", "value", "found"),
    [
        ("Order GLX/2026/778 shipped", "GLX-2026-778", ["GLX/2026/778"]),
        ("Invoice no. 12345.", "12345", ["12345"]),
        ("Ref: ab.cd-12 / x", "ABCD12", ["ab.cd-12"]),
        ("Ref A12345 and 123456", "12345", []),
        ("INV-123456", "INV-12345", []),
        ("XDE89370400440532013000", "DE89370400440532013000", []),
        ("12 - - - 34", "1234", []),  # more than three separators in a row
        ("12 -/34 and 1234", "1234", ["12 -/34", "1234"]),
        ("anything", "--", []),
        # a typesetter's dashes for the hyphens, and underscores
        ("Invoice INV–2024–17 paid", "INV-2024-17", ["INV–2024–17"]),
        ("Invoice INV—2024‑17", "INV-2024-17", ["INV—2024‑17"]),
        ("Ref INV_2024_17", "INV_2024_17", ["INV_2024_17"]),
    ],
)
def test_identifier_spans(text: str, value: str, found: list[str]) -> None:
    assert [text[s:e] for s, e in find_identifier_spans(text, value)] == found


_SEPARATOR_CHARS = " -./"


@st.composite
def _identifier_in_text(draw: st.DrawFn) -> tuple[str, str, int, int]:
    identifier = draw(st.text(string.ascii_letters + string.digits, min_size=1, max_size=24))
    written = ""
    for k, ch in enumerate(identifier):
        if k:
            written += draw(st.text(_SEPARATOR_CHARS, max_size=3))
        written += ch.swapcase() if draw(st.booleans()) else ch
    filler = st.text(string.ascii_letters + string.digits + " ,;:-./\n", max_size=60)
    before, after = draw(filler), draw(filler)
    # brackets keep the filler's letters and separators from running into the identifier
    text = before + "(" + written + ")" + after
    start = len(before) + 1
    return text, identifier, start, start + len(written)


@settings(max_examples=300, deadline=None)
@given(_identifier_in_text())
def test_property_identifier_found_where_inserted(case: tuple[str, str, int, int]) -> None:
    text, identifier, start, end = case
    spans = find_identifier_spans(text, identifier)
    assert (start, end) in spans
    for s, e in spans:
        assert re.sub(r"[ \-./]", "", text[s:e]).casefold() == identifier.casefold()


# --- Long texts -------------------------------------------------------------------------


def test_finders_are_fast_on_long_adversarial_texts() -> None:
    n = 200_000
    texts = [
        ("1 " * (n // 2))[:n],  # one enormous phone-like run
        ("1-" * (n // 2))[:n],
        ("a" * n),
        ("a@" * (n // 2))[:n],
        ("a." * (n // 2))[:n],
        ("DE89 " * (n // 5))[:n],
        ("www.dhl.de/" * (n // 11))[:n],
    ]
    values = {
        find_phone_spans: "+44 20 7946 0958",
        find_email_spans: "a@a.aa",
        find_url_spans: "dhl.de/track?id=1",
        find_identifier_spans: "DE89370400440532013000",
    }
    for text in texts:
        for finder, value in values.items():
            finder(text, value)  # completes: no backtracking blow-up (its cost is eval's to measure)
    # digits that match the value's tail everywhere, so every window of the run is weighed
    assert find_phone_spans(texts[0], "+11 111 1111") == []
    assert len(find_phone_spans(texts[0], "111 111")) == n // 12
    for validator in (email_valid, url_valid, iban_valid, luhn_valid, vat_valid, phone_digits):
        validator("a" * 5000 + "-" * 5000 + "@" + "b." * 5000)
        validator("1 " * 10_000)
