"""Formats and checksums of identifiers, e-mail addresses, phone numbers and URLs, and where such a value stands in a document.

The validators say whether a value is well formed (and, where a checksum exists and is
cheap, whether it adds up); the ``find_*_spans`` functions say where in a document's text
the value is written, so a heuristic can ground an extracted value in its source. All of
it is pure and deterministic, and every pattern is compiled once and scans in linear time
on long texts: no pattern repeats a group whose characters its neighbours could also take.
"""

from __future__ import annotations

import re

__all__ = [
    "IBAN_LENGTHS",
    "email_valid",
    "find_email_spans",
    "find_identifier_spans",
    "find_phone_spans",
    "find_url_spans",
    "iban_valid",
    "luhn_valid",
    "phone_digits",
    "url_valid",
    "vat_country",
    "vat_valid",
]

# --- IBAN ------------------------------------------------------------------------------

# Total IBAN length per country (SWIFT IBAN registry): every SEPA country, and the other
# registered countries an invoice is likely to name. The length is what catches a dropped
# or doubled character that the mod-97 check would miss only by luck.
IBAN_LENGTHS: dict[str, int] = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22,
    "BH": 22, "BI": 27, "BR": 29, "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24,
    "DE": 22, "DJ": 27, "DK": 18, "DO": 28, "EE": 20, "EG": 29, "ES": 24, "FI": 18,
    "FK": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23, "GL": 18, "GR": 27,
    "GT": 28, "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26, "IT": 27,
    "JO": 30, "KW": 30, "KZ": 20, "LB": 28, "LC": 32, "LI": 21, "LT": 20, "LU": 20,
    "LV": 21, "LY": 25, "MC": 27, "MD": 24, "ME": 22, "MK": 19, "MN": 20, "MR": 27,
    "MT": 31, "MU": 30, "NL": 18, "NO": 15, "OM": 23, "PK": 24, "PL": 28, "PS": 29,
    "PT": 25, "QA": 29, "RO": 24, "RS": 22, "RU": 33, "SA": 24, "SC": 31, "SD": 18,
    "SE": 24, "SI": 19, "SK": 24, "SM": 27, "SO": 23, "ST": 25, "SV": 28, "TL": 23,
    "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20, "YE": 30,
}  # fmt: skip

_SPACES_HYPHENS = re.compile(r"[\s\-]+")
_IBAN_SHAPE = re.compile(r"[A-Z]{2}[0-9]{2}[A-Z0-9]+")
# Check digits are computed as 98 - (n mod 97), i.e. 02..98; 00, 01 and 99 are the
# aliases of 97, 98 and 02 that the mod-97 test alone would let through.
_IBAN_ALIAS_CHECKS = frozenset({"00", "01", "99"})


def _mod97(alnum: str) -> int:
    # letters count as two digits, A=10 .. Z=35 (int(c, 36) does exactly that for [0-9A-Z])
    return int("".join(str(int(c, 36)) for c in alnum)) % 97


def iban_valid(value: str) -> bool:
    """ISO 13616: country, check digits, the country's length, and mod 97 == 1."""
    iban = _SPACES_HYPHENS.sub("", value).upper()
    if not _IBAN_SHAPE.fullmatch(iban) or IBAN_LENGTHS.get(iban[:2]) != len(iban):
        return False
    if iban[2:4] in _IBAN_ALIAS_CHECKS:
        return False
    return _mod97(iban[4:] + iban[:4]) == 1


# --- Luhn --------------------------------------------------------------------------------

_ASCII_DIGITS = re.compile(r"[0-9]+")


def _luhn_sum_ok(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def luhn_valid(value: str) -> bool:
    """The Luhn checksum of a number of at least two digits (spaces and hyphens allowed)."""
    digits = _SPACES_HYPHENS.sub("", value)
    # [0-9], not \d or isdigit(): other scripts' digits are not card numbers
    return len(digits) >= 2 and _ASCII_DIGITS.fullmatch(digits) is not None and _luhn_sum_ok(digits)


# --- VAT numbers ------------------------------------------------------------------------

_GB_BODY = r"[0-9]{9}|[0-9]{12}|GD[0-4][0-9]{2}|HA[5-9][0-9]{2}"

# The part after the two-letter prefix, per country (the VIES formats). Greece is EL in
# VIES; GR, the ISO code people also print, is read as EL. Switzerland's prefix is CHE,
# so its body starts with the E.
_VAT_BODIES: dict[str, re.Pattern[str]] = {
    prefix: re.compile(body)
    for prefix, body in {
        "AT": r"U[0-9]{8}",
        "BE": r"[01][0-9]{9}",
        "BG": r"[0-9]{9,10}",
        "CY": r"[0-9]{8}[A-Z]",
        "CZ": r"[0-9]{8,10}",
        "DE": r"[1-9][0-9]{8}",
        "DK": r"[0-9]{8}",
        "EE": r"[0-9]{9}",
        "EL": r"[0-9]{9}",
        "ES": r"[A-Z][0-9]{7}[A-Z]|[0-9]{8}[A-Z]|[A-Z][0-9]{8}",
        "FI": r"[0-9]{8}",
        # the two-character key never uses I or O, which read as 1 and 0
        "FR": r"[0-9A-HJ-NP-Z]{2}[0-9]{9}",
        "HR": r"[0-9]{11}",
        "HU": r"[0-9]{8}",
        # old form (digit, letter or + or *, five digits, check letter) and the 8/9 character forms
        "IE": r"[0-9]{7}[A-W][A-IW]?|[0-9][A-Z+*][0-9]{5}[A-W]",
        "IT": r"[0-9]{11}",
        "LT": r"[0-9]{9}|[0-9]{12}",
        "LU": r"[0-9]{8}",
        "LV": r"[0-9]{11}",
        "MT": r"[0-9]{8}",
        "NL": r"[0-9]{9}B[0-9]{2}",
        "PL": r"[0-9]{10}",
        "PT": r"[0-9]{9}",
        "RO": r"[1-9][0-9]{1,9}",
        "SE": r"[0-9]{10}01",
        "SI": r"[1-9][0-9]{7}",
        "SK": r"[1-9][0-9]{9}",
        "GB": _GB_BODY,
        # Northern Ireland trades in goods under EU VAT rules with GB's number formats
        "XI": _GB_BODY,
        "CH": r"E[0-9]{9}(?:MWST|TVA|IVA|TPV)?",
        # the MVA suffix marks VAT registration; the bare organisation number is often written alone
        "NO": r"[0-9]{9}(?:MVA)?",
    }.items()
}
_VAT_ALIASES = {"GR": "EL"}
_VAT_SEPARATORS = re.compile(r"[\s.\-]+")


def _de_vat_check(body: str) -> bool:
    # ISO 7064 MOD 11,10 over the first eight digits gives the ninth
    product = 10
    for ch in body[:8]:
        total = (int(ch) + product) % 10 or 10
        product = (2 * total) % 11
    return (11 - product) % 10 == int(body[8])


def _it_vat_check(body: str) -> bool:
    # Partita IVA: seven digits of company number (never all zero), three of tax office, a Luhn check digit
    return body[:7] != "0000000" and _luhn_sum_ok(body)


_VAT_CHECKS = {"DE": _de_vat_check, "IT": _it_vat_check}


def _vat_parse(value: str) -> str | None:
    vat = _VAT_SEPARATORS.sub("", value).upper()
    prefix = _VAT_ALIASES.get(vat[:2], vat[:2])
    body_pattern = _VAT_BODIES.get(prefix)
    if body_pattern is None or not body_pattern.fullmatch(vat[2:]):
        return None
    check = _VAT_CHECKS.get(prefix)
    if check is not None and not check(vat[2:]):
        return None
    return prefix


def vat_valid(value: str) -> bool:
    """A VAT number in its country's format (all EU members, GB/XI, CH, NO), with the
    check digit for DE and IT. Spaces, dots and hyphens are ignored; an unknown prefix is
    invalid."""
    return _vat_parse(value) is not None


def vat_country(value: str) -> str | None:
    """The normalised prefix (EL for Greece, CH for CHE-) of a valid VAT number, else None."""
    return _vat_parse(value)


# --- E-mail addresses and URLs -----------------------------------------------------------

_LOCAL_CHARS = r"\w!#$%&'*+/=?^`{|}~\-"
_EMAIL_LOCAL = re.compile(rf"[{_LOCAL_CHARS}]+(?:\.[{_LOCAL_CHARS}]+)*")
# letters and digits of any script, hyphens only inside: [^\W_] is \w without the underscore
_DOMAIN_LABEL = re.compile(r"[^\W_]+(?:-+[^\W_]+)*")
_ALPHA_TLD = re.compile(r"[^\W\d_]{2,}")
_PUNYCODE_TLD = re.compile(r"xn--[a-z0-9\-]+", re.IGNORECASE)
_IPV4 = re.compile(
    r"(?:(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])\.){3}(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])"
)


def _domain_ok(host: str) -> bool:
    if len(host) > 253:
        return False
    labels = host.split(".")
    if len(labels) < 2:
        return False
    for label in labels:
        if len(label) > 63 or not _DOMAIN_LABEL.fullmatch(label):
            return False
    tld = labels[-1]
    return bool(_ALPHA_TLD.fullmatch(tld) or _PUNYCODE_TLD.fullmatch(tld))


def email_valid(value: str) -> bool:
    """A pragmatic address check: one @, a dot-separated local part, a dotted domain whose
    labels are letters (any script), digits and inner hyphens, a TLD of 2+ letters."""
    value = value.strip()
    if len(value) > 254 or value.count("@") != 1:
        return False
    local, domain = value.split("@")
    return len(local) <= 64 and _EMAIL_LOCAL.fullmatch(local) is not None and _domain_ok(domain)


_URL_SCHEME = re.compile(r"https?://", re.IGNORECASE)
_URL_HOST_END = re.compile(r"[/?#]")
_PORT = re.compile(r"[0-9]{1,5}")
# characters no URL carries unescaped, beyond whitespace
_URL_FORBIDDEN = re.compile(r"[\s<>\"\\\x00-\x1f\x7f]")


def url_valid(value: str) -> bool:
    """An http(s) URL, or a bare domain with an optional path ("www.dhl.de/track?id=1").

    With a scheme the host may be a dotted IPv4 address; a bare value needs a letter TLD,
    so that "1.5" or "v2.3" is not a URL. A file name such as "invoice.pdf" still passes:
    telling it from a domain would take the list of TLDs."""
    value = value.strip()
    if not value or _URL_FORBIDDEN.search(value):
        return False
    scheme = _URL_SCHEME.match(value)
    rest = value[scheme.end() :] if scheme else value
    if not scheme and "://" in value:
        return False
    end = _URL_HOST_END.search(rest)
    host = rest[: end.start()] if end else rest
    if "@" in host:  # user info in a URL is a phishing pattern, not an address on an invoice
        return False
    name, colon, port = host.partition(":")
    if colon and not _PORT.fullmatch(port):
        return False
    if scheme and _IPV4.fullmatch(name):
        return True
    return _domain_ok(name)


# --- Phone numbers ----------------------------------------------------------------------

# "ext. 23", "x23" at the end: the extension is not part of the number
_EXTENSION = re.compile(r"(?<![^\W\d_])(?:ext|x)[.:]?\s*[0-9]{1,6}\s*\Z", re.IGNORECASE)
# "+44 (0)20 ...": the bracketed trunk 0 is dialled only from inside the country
_BRACKETED_TRUNK = re.compile(r"\(\s*0\s*\)")
_MIN_PHONE_DIGITS = 6
_MAX_PHONE_DIGITS = 15  # E.164


def phone_digits(value: str) -> str | None:
    """The digits of a phone number, with "+" kept in front of an international one.

    None for fewer than 6 or more than 15 digits, letters other than a trailing extension
    marker ("ext", "x"), a "+" anywhere but in front, or digits of another script."""
    number = value.strip()
    ext = _EXTENSION.search(number)
    if ext:
        number = number[: ext.start()]
    if any(c.isalpha() for c in number):
        return None
    lead = number.lstrip(" (\u00a0")
    international = lead.startswith("+")
    if international:
        number = _BRACKETED_TRUNK.sub("", lead[1:])
    if "+" in number:
        return None
    if any(c.isdigit() and not "0" <= c <= "9" for c in number):
        return None
    digits = "".join(_ASCII_DIGITS.findall(number))
    if not _MIN_PHONE_DIGITS <= len(digits) <= _MAX_PHONE_DIGITS:
        return None
    return "+" + digits if international else digits


def _international_form(key: str) -> str:
    # 00 is the international access code nearly everywhere a trunk 0 is used
    return "+" + key[2:] if key.startswith("00") else key


def _phone_keys_match(a: str, b: str) -> bool:
    a, b = _international_form(a), _international_form(b)
    if a == b:
        return True
    if a.startswith("+") == b.startswith("+"):
        return False
    intl, nat = (a[1:], b) if a.startswith("+") else (b[1:], a)
    if not nat.startswith("0"):
        # NANP has no trunk prefix: +1 412 555 0199 is (412) 555-0199 at home. Only that
        # case: a national number without a 0 would otherwise match any international
        # number's tail.
        return len(nat) == 10 and nat[0] in "23456789" and intl == "1" + nat
    for cc_len in (1, 2, 3):
        rest = intl[cc_len:]
        # nat == rest: Italy keeps its leading 0 after +39
        if len(rest) >= 7 and rest in (nat[1:], nat):
            return True
    return False


# A run of digits joined by single separators (one space, or a dot, hyphen, slash or dash
# with at most one space either side), parentheses, and a leading "+". Each repetition
# takes either digits/parentheses or a separator that must be followed by a digit or "(",
# and the two never share a character, so the run is matched without backtracking.
_PHONE_RUN = re.compile(
    r"(?<![^\W_])\(?\+?\(?[0-9](?:[0-9()]|(?:[ \u00a0]?[\-./\u2013][ \u00a0]?|[ \u00a0])(?=[0-9(]))*"
)


def find_phone_spans(text: str, value: str) -> list[tuple[int, int]]:
    """Spans of phone-number-like runs whose digits are the value's digits.

    An international and a national writing of the same number match ("+44 20 7946 0958"
    and "020 7946 0958"). A run may hold several numbers ("020 7946 0958 / 020 7946 0959"),
    so a match may be part of a run, but only where the rest of the run is itself number
    sized (6+ digits): "555-0199" is never found inside "(412) 555-0199", and no match ever
    splits a run of adjacent digits."""
    key = phone_digits(value)
    if key is None:
        return []
    # Every way two writings can match keeps the last six digits, so only windows ending
    # where the run's digits end in the value's last six are worth comparing: that keeps a
    # text that is one enormous run of digits as cheap as any other.
    tail = key[-_MIN_PHONE_DIGITS:]
    spans: list[tuple[int, int]] = []
    verdicts: dict[str, bool] = {}
    for run in _PHONE_RUN.finditer(text):
        run_start, run_text = run.start(), run.group()
        groups = list(_ASCII_DIGITS.finditer(run_text))
        run_digits = "".join(g.group() for g in groups)
        tail_ends: set[int] = set()
        at = run_digits.find(tail)
        while at >= 0:
            tail_ends.add(at + len(tail))
            at = run_digits.find(tail, at + 1)
        if not tail_ends:
            continue
        ends: list[int] = []  # digits in the run up to the end of each group
        for g in groups:
            ends.append((ends[-1] if ends else 0) + g.end() - g.start())
        window = _RunWindow(run_text, groups, ends, tail_ends, "+" in run_text[: groups[0].start()], verdicts)
        i = 0
        while i < len(groups):
            before = ends[i - 1] if i else 0
            # a window may leave digits before it only if they can be a number of their own
            j = window.match(i, key) if before == 0 or before >= _MIN_PHONE_DIGITS else None
            if j is None:
                i += 1
                continue
            spans.append(_window_span(text, run_start, run.end(), groups, i, j))
            i = j + 1
    return spans


class _RunWindow:
    """The digit groups of one phone-like run, searched for windows of consecutive groups."""

    def __init__(
        self,
        run_text: str,
        groups: list[re.Match[str]],
        ends: list[int],
        tail_ends: set[int],
        international: bool,
        verdicts: dict[str, bool],
    ) -> None:
        self.run_text = run_text
        self.groups = groups
        self.ends = ends
        self.tail_ends = tail_ends
        self.international = international
        # a document repeats its numbers (and a hostile one repeats one run of digits)
        self.verdicts = verdicts

    def _bracketed_zero(self, g: re.Match[str]) -> bool:
        text = self.run_text
        return g.group() == "0" and text[g.start() - 1 : g.start()] == "(" and text[g.end() : g.end() + 1] == ")"

    def match(self, i: int, key: str) -> int | None:
        """The last group of the window starting at group i whose digits match ``key``."""
        ends, total = self.ends, self.ends[-1]
        before = ends[i - 1] if i else 0
        international = self.international and i == 0
        digits = "+" if international else ""
        for j in range(i, len(self.groups)):
            if ends[j] - before > _MAX_PHONE_DIGITS + 1:  # +1: a "(0)" that is dropped
                return None
            g = self.groups[j]
            # "+44 (0)20 ...": the bracketed trunk 0 is not part of the international number
            if not (international and j > i and self._bracketed_zero(g)):
                digits += g.group()
            after = total - ends[j]
            if ends[j] not in self.tail_ends or 0 < after < _MIN_PHONE_DIGITS:
                continue
            if not _MIN_PHONE_DIGITS <= len(digits) - international <= _MAX_PHONE_DIGITS:
                continue
            verdict = self.verdicts.get(digits)
            if verdict is None:
                verdict = self.verdicts[digits] = _phone_keys_match(key, digits)
            if verdict:
                return j
        return None


def _window_span(
    text: str, run_start: int, run_end: int, groups: list[re.Match[str]], i: int, j: int
) -> tuple[int, int]:
    start = run_start + groups[i].start()
    # take the "+" and opening parentheses written in front of the first group
    while start > run_start and text[start - 1] in "(+":
        start -= 1
    end = run_start + groups[j].end()
    written = text[start:end]
    if end < run_end and text[end] == ")" and written.count("(") > written.count(")"):
        end += 1
    return start, end


# --- Finding e-mail addresses, URLs and identifiers ------------------------------------

# What may continue an address on the right: a word character or hyphen, or a dot that
# leads into another domain label ("ann@x.com.au"); a sentence's full stop does not.
_EMAIL_RIGHT = r"(?![\w\-]|\.[^\W_])"
_EMAIL_LEFT = rf"(?<![{_LOCAL_CHARS}.])"


def find_email_spans(text: str, value: str) -> list[tuple[int, int]]:
    """Spans where the address stands, case-insensitively, never inside a longer address
    ("ann@x.com" is not found in "joann@x.com" nor in "ann@x.com.au")."""
    address = value.strip()
    if "@" not in address or any(c.isspace() for c in address):
        return []
    pattern = re.compile(_EMAIL_LEFT + re.escape(address) + _EMAIL_RIGHT, re.IGNORECASE)
    return [m.span() for m in pattern.finditer(text)]


_URL_LEAD = re.compile(r"(?:https?://)?(?:www\.)?", re.IGNORECASE)
_URL_CONTINUES = r"\w\-~/?#@$&*+=%"
# not inside a longer host ("mydhl.de", "mail.dhl.de", "ann@dhl.de") or path
_URL_LEFT = r"(?<![\w.@/\-])"
# not followed by more URL: a URL character, or punctuation that leads into one
# ("dhl.de.evil.com", "dhl.de:8080"); a sentence's full stop or comma is not more URL
_URL_RIGHT = rf"(?![{_URL_CONTINUES}]|[.,:;!')\]](?=[{_URL_CONTINUES}]))"


def find_url_spans(text: str, value: str) -> list[tuple[int, int]]:
    """Spans where the URL stands: the host compared case-insensitively, a leading
    "http(s)://" and "www." and a trailing "/" ignored on either side, the path and query
    compared exactly."""
    url = value.strip()
    lead = _URL_LEAD.match(url)  # always matches, if only the empty string
    url = (url[lead.end() :] if lead else url).rstrip("/")
    if not url or any(c.isspace() for c in url):
        return []
    end = _URL_HOST_END.search(url)
    host, path = (url[: end.start()], url[end.start() :]) if end else (url, "")
    if not host:
        return []
    pattern = re.compile(
        _URL_LEFT + r"(?i:https?://)?(?i:www\.)?" + "(?i:" + re.escape(host) + ")" + re.escape(path) + "/?" + _URL_RIGHT
    )
    return [m.span() for m in pattern.finditer(text)]


# What the text may put between an identifier's characters: grouping spaces, hyphens
# and the dashes a typesetter makes of them ("INV–2024–17"), underscores, dots and
# slashes ("DE89 3704 0044 ...", "GLX/2026/778"), at most three in a row.
_IDENTIFIER_SEPARATORS = r"[ \u00a0\u202f\-\u2010-\u2015\u2212_./,:#]{0,3}"


def find_identifier_spans(text: str, value: str) -> list[tuple[int, int]]:
    """Spans where the identifier stands: its letters and digits, casefolded, in order,
    with separators allowed between them in the text, and no letter or digit touching
    either end (so "12345" is not found in "A12345" or "123456")."""
    chars = [c for c in value.casefold() if c.isalnum()]
    if not chars:
        return []
    # separators and the identifier's characters never overlap, so each step is determined
    # by the next character and the match runs in time linear in the text
    pattern = re.compile(
        r"(?<![^\W_])" + _IDENTIFIER_SEPARATORS.join(re.escape(c) for c in chars) + r"(?![^\W_])",
        re.IGNORECASE,
    )
    return [m.span() for m in pattern.finditer(text)]
