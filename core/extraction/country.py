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
    word: bool = False  # a word of the country's own (its tax's name), not a script


# (name, its letters, the currency, dates day first, Latin letters itself). Only scripts of one country, or of
# countries sharing one currency (Greek: Greece and Cyprus); not Arabic, Cyrillic, Chinese
# characters or Devanagari, which many countries write. Vietnamese is Latin with letters no
# other language has (a hook above or a dot below a vowel; "ơ", "ư").
_SCRIPTS = (
    ("Hangul", "\uac00-\ud7a3\u1100-\u11ff\u3130-\u318f", "KRW", False, False),
    ("Japanese kana", "\u3041-\u3096\u30a1-\u30fa", "JPY", False, False),
    ("Thai script", "\u0e01-\u0e5b", "THB", True, False),
    ("Hebrew script", "\u05d0-\u05ea", "ILS", True, False),
    ("Greek script", "\u0386-\u03ce", "EUR", True, False),
    ("Georgian script", "\u10d0-\u10fa", "GEL", True, False),
    ("Armenian script", "\u0531-\u0556\u0561-\u0587", "AMD", True, False),
    (
        "Vietnamese",
        "ơưƠƯạảấầẩẫậắằẳẵặẹẻẽếềểễệỉịọỏốồổỗộớờởỡợụủứừửữựỳỵỷỹẠẢẤẦẨẪẬẮẰẲẴẶẸẺẼẾỀỂỄỆỈỊỌỎỐỒỔỖỘỚỜỞỠỢỤỦỨỪỬỮỰỲỴỶỸ",
        "VND",
        True,
        True,
    ),
)
# a script's words: two of its letters or more together (not a unit's "Ω", "μF", "β-"); a
# Latin script's own letters one by one
_LETTERS = [
    (name, re.compile(f"[{letters}]" if latin else f"[{letters}]{{2,}}"), currency, day_first, latin)
    for name, letters, currency, day_first, latin in _SCRIPTS
]
# Letters enough that the document is written in it, not a word or a symbol quoted; and,
# but for Vietnamese (Latin letters itself), a share of its letters enough that it is not
# a shop abroad's bilingual menu ("ΣΠΑΝΑΚΟΠΙΤΑ Spanakopita" in Toronto)
_MIN_LETTERS = 12
_MIN_SHARE = 0.2
_LATIN = re.compile(r"[A-Za-z]")


def country_tell(text: str, lexicon: Lexicon) -> CountryTell | None:
    """The script most of `text`'s words in these scripts are in, when it holds enough of
    them, else the first of the lexicon's country words it prints, with that country's
    currency and date order; None when nothing tells or a script and a word tell two."""
    best: tuple[int, CountryTell] | None = None
    latin = len(_LATIN.findall(text))
    for name, letters, currency, day_first, itself_latin in _LETTERS:
        count = sum(len(word) for word in letters.findall(text))
        if count < _MIN_LETTERS or (not itself_latin and count < _MIN_SHARE * (count + latin)):
            continue
        if best is None or count > best[0]:
            best = (count, CountryTell(name, currency, day_first))
    found = lexicon.country_words_re.search(text)
    said = None
    if found is not None:
        currency, day_first = lexicon.country_of_word[found.group().casefold()]
        said = CountryTell(f"'{found.group()}'", currency, day_first, word=True)
    if best is not None and said is not None and best[1].currency != said.currency:
        return None  # a script and a word of two countries (a Greek bakery in Toronto, "HST")
    return best[1] if best is not None else said
