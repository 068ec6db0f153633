"""What tells a document's country where it writes no currency: a script only one
currency's country writes (a Korean receipt that prints no "원" is in won, a Thai one with
no "บาท" in baht), or a word only one such country's documents print (Taiwan's "統一發票",
Indonesia's "NPWP": lexicon `country_words`). A tell for a field the document leaves
unwritten, never against what it writes; it also says how the country's numeric dates
read."""

from __future__ import annotations

import re
from dataclasses import dataclass

from vetq.core.extraction.lexicon import Lexicon


@dataclass(frozen=True)
class CountryTell:
    shown: str  # what tells it, as a reason names it ("Hangul", "'NPWP'")
    currency: str  # ISO 4217
    day_first: bool  # its numeric dates read day first ("09/03/2569")


# (name, its letters, the currency, dates day first). Only scripts of one country, or of
# countries sharing one currency (Greek: Greece and Cyprus); not Arabic, Cyrillic, Chinese
# characters or Devanagari, which many countries write. Vietnamese is Latin with letters no
# other language has (a hook above or a dot below a vowel; "ơ", "ư").
_SCRIPTS = (
    ("Hangul", "\uac00-\ud7a3\u1100-\u11ff\u3130-\u318f", "KRW", False),
    ("Japanese kana", "\u3041-\u3096\u30a1-\u30fa", "JPY", False),
    ("Thai script", "\u0e01-\u0e5b", "THB", True),
    ("Hebrew script", "\u05d0-\u05ea", "ILS", True),
    ("Greek script", "\u0386-\u03ce", "EUR", True),
    ("Georgian script", "\u10d0-\u10fa", "GEL", True),
    ("Armenian script", "\u0531-\u0556\u0561-\u0587", "AMD", True),
    (
        "Vietnamese",
        "ơưƠƯạảấầẩẫậắằẳẵặẹẻẽếềểễệỉịọỏốồổỗộớờởỡợụủứừửữựỳỵỷỹẠẢẤẦẨẪẬẮẰẲẴẶẸẺẼẾỀỂỄỆỈỊỌỎỐỒỔỖỘỚỜỞỠỢỤỦỨỪỬỮỰỲỴỶỸ",
        "VND",
        True,
    ),
)
_LETTERS = [(name, re.compile(f"[{letters}]"), currency, day_first) for name, letters, currency, day_first in _SCRIPTS]
# Letters enough that the document is written in it, not a word or a symbol quoted ("μ", "Σ")
_MIN_LETTERS = 12


def country_tell(text: str, lexicon: Lexicon) -> CountryTell | None:
    """The script most of `text`'s letters of these scripts are in, when it holds enough of
    them; else the first of the lexicon's country words it prints; with that country's
    currency and date order. None when nothing tells."""
    best: tuple[int, CountryTell] | None = None
    for name, letters, currency, day_first in _LETTERS:
        count = len(letters.findall(text))
        if count >= _MIN_LETTERS and (best is None or count > best[0]):
            best = (count, CountryTell(name, currency, day_first))
    if best is not None:
        return best[1]
    found = lexicon.country_words_re.search(text)
    if found is None:
        return None
    currency, day_first = lexicon.country_of_word[found.group().casefold()]
    return CountryTell(f"'{found.group()}'", currency, day_first)
