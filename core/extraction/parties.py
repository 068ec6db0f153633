"""Where a name stands as one of a document's parties: under the buyer's labels ("Bill
to", "Kunde", "Nabywca") or the seller's ("Seller", "Lieferant", "Sprzedawca"), as a
converter that keeps the layout writes them. A record's seller written only where the
buyer is named is the buyer (the most common silent wrong name in the printed rounds); only
the places the layout makes plain count, so a name the text does not place is left alone."""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from vetq.core.extraction.lexicon import (
    ADDRESSING_AFTER,
    ADDRESSING_WORDS,
    ATTENTION_WORDS,
    DELIVERY,
    PARTIES,
    PARTY_LABELS,
    PARTY_NAME_LABELS,
    PLATFORM_BEFORE,
    SALUTATIONS,
    normalise_phrase,
)
from vetq.core.extraction.roles import LabelIndex, Lines

OTHER_PARTY = {"seller": "buyer", "buyer": "seller"}


def _one_of(phrases: Iterable[str]) -> str:
    """One of `phrases`, longest first, blanks between their words."""
    return (
        "(?:"
        + "|".join(r"[ \t]+".join(map(re.escape, p.split())) for p in sorted(phrases, key=len, reverse=True))
        + ")"
    )


# A cell that is a party's label and nothing else, as `normalise_phrase` writes it: one
# label, or several in two languages ("Nabywca / Buyer", "Buyer (Bill to)", "客戶 Client"),
# its colon after them.
_LABEL_CELL = {
    party: re.compile(
        rf"{_one_of(PARTY_LABELS[party])}(?: ?/? ?{_one_of(PARTY_LABELS[party])}| ?\({_one_of(PARTY_LABELS[party])}\))* ?[:：]?"
    )
    for party in PARTY_LABELS
}
# A label letter-spaced as a heading ("B I L L E D  T O"): its letters, blanks left out.
_SPACED_LABEL = {party: frozenset(p.replace(" ", "") for p in PARTY_LABELS[party]) for party in PARTY_LABELS}
_LETTER_SPACED = re.compile(r"(?:\S ){2,}\S")
_COLONS = (":", "：")
# a delivery's site after the buyer's name in its cell ("Cascade Valley Hardware – Warehouse 2")
_A_SITE_AFTER = re.compile(r"[ \t]+[–—-][ \t]+\S")
_KEYS_REACH = 12  # the lines up and down where a key column's other keys stand (a seller's block with its bank)
_UNMARKED_KEYS = 2
_WRAP_SLACK = 2  # the columns a wrapped name's next line may start off its first line's
# What may follow a label in its cell: marks, a bracketed note ("Invoice Date (Tax Point)").
_LABEL_TAIL = re.compile(r"[ .:#]*(?:\([^()]*\))?[ .:#]*")
_MAX_HEADING_WORDS = 4
_NAME_LABELS = frozenset(PARTY_NAME_LABELS)
# The keys of a party's block that may stand between its heading and its name's label.
_MAX_BLOCK_KEYS = 4
_HEADING_DRIFT = 4  # columns a converter sets a bold heading off its block's keys
# A heading in capitals, a few words and no figure ("PROYECTO", "PROJET / PROJECT", "BILL TO").
_CAPITAL_HEADING = re.compile(r"(?=[^a-z0-9:：]*$)[^\W\d_]+[^\w\n]*(?:[ /&-]{1,3}[^\W\d_]+[^\w\n]*){0,3}")
# The blanks between two words of a letter-spaced heading ("C U S T O M E R  C O P Y").
_SPACED_WORD_GAP = 3
# What may close a name at its cell's end (a full stop, a quote, a bracket).
_CLOSING_MARKS = re.compile(r"[^\w\s]*")


def is_label_cell(cell: str, party: str) -> bool:
    """Whether a cell's text is one of `party`'s labels and nothing else."""
    written = normalise_phrase(cell.strip())
    if _LABEL_CELL[party].fullmatch(written) is not None:
        return True
    return (
        _LETTER_SPACED.fullmatch(written) is not None and written.replace(" ", "").rstrip(":：") in _SPACED_LABEL[party]
    )


@dataclass(frozen=True)
class Placement:
    """Where a document names a party: under its label ("Bill to:"), or, for the buyer,
    as a letter's addressee (`addressed`: a salutation or an attention line beside it)."""

    written: str
    addressed: bool = False


def written_only_as(
    text: str, lines: Lines, spans: Iterable[tuple[int, int]], party: str, value_labels: LabelIndex | None = None
) -> Placement | None:
    """`party`'s label, as written, when a name stands at each of `spans` under one of
    that party's labels (`label_over`), or as the buyer a letter addresses
    (`addressed_as`), or under a delivery's at some ("BILL TO" and "SHIP TO" over the same
    name); None when it stands anywhere else."""
    found = None
    for written in _occurrences(lines, spans):
        placed, delivered = None, False
        for start, end in written:
            label = label_over(text, lines, start, end, party, value_labels)
            placed = placed or (Placement(label) if label is not None else None)
            if placed is None and party == "buyer" and not _under_the_sellers_label(text, lines, start, end):
                cue = addressed_as(text, lines, start, end)
                placed = Placement(cue, addressed=True) if cue is not None else None
            delivered = delivered or label_over(text, lines, start, end, DELIVERY, value_labels) is not None
        if placed is None and not delivered:
            return None
        found = found or placed
    return found


def written_only_after_a_platform(text: str, lines: Lines, spans: Iterable[tuple[int, int]]) -> str | None:
    """The words before a name at each of `spans` that say it is the software,
    marketplace or payment service the document came through ("Powered by Square",
    "Kassensystem: SumUp Kassensystem"), as written; None when it stands anywhere
    without them."""
    found = None
    for start, _ in spans:
        line_start = lines.starts[lines.line_of(start)]
        before = _PLATFORM_BEFORE.search(text, max(line_start, start - _PLATFORM_REACH), start)
        if before is None:
            return None
        found = found or before.group().strip(" \t:")
    return found


def _occurrences(lines: Lines, spans: Iterable[tuple[int, int]]) -> list[list[tuple[int, int]]]:
    """The spans of a name grouped by where it is written: a name wrapped over its cell's
    lines is one writing of it, its parts on lines one after another, in one column."""
    out: list[list[tuple[int, int]]] = []
    for start, end in sorted(spans):
        line = lines.line_of(start)
        if out and line == lines.line_of(out[-1][-1][0]) + 1 and out[-1][-1][1] <= start:
            before = out[-1][-1][0]
            column = lines.column(lines.starts[line - 1], before)
            wrapped = abs(lines.column(lines.starts[line], start) - column) <= _WRAP_SLACK
        else:
            wrapped = False
        if wrapped:
            out[-1].append((start, end))
        else:
            out.append([(start, end)])
    return out


def _under_the_sellers_label(text: str, lines: Lines, start: int, end: int) -> bool:
    """Whether a seller's label names the name at `start:end`, or stands alone right over
    its cell ("From:" over "Brightline Design Studio" over its contact's "Attn: Sarah Kim",
    a heading over it or not)."""
    if label_over(text, lines, start, end, "seller") is not None:
        return True
    line = lines.line_of(start)
    over = lines.cell_in_column(line - 1, lines.column(lines.starts[line], start)) if line > 0 else None
    return over is not None and is_label_cell(text[over[0] : over[1]], "seller")


def addressed_as(text: str, lines: Lines, start: int, end: int) -> str | None:
    """How a letter addresses the name at `start:end` as its recipient, as written, or
    None: the name starting its cell after a word only an address starts a name with
    ("Herrn ...", "Spett.le ..."), or followed in it by a Japanese or Korean address's
    honorific ("株式会社青葉商事 御中"); or, the name the whole of its
    cell, a salutation alone in the cell over it ("Herr" over "Matthias Keller"), or an
    attention line in its column under its last line, past a line of a scan's marks only ("Attn: Ms. Teresa Solano",
    "Att: Ekonomi", "Herrn Dirk Kemper"). Not a salutation starting a shop's name
    ("Madame Tussauds", "Frau Gerolds Garten") or a couple's ("M. et Mme": a guest house's
    owners), nor one under a name (a seller's contact: "Frau Petra Lang"), nor a name in
    a sender's line ("Holzmann GmbH · Bahnhofstr. 3")."""
    line = lines.line_of(start)
    cell = next(((s, e) for s, e in lines.cells(line) if s <= start < e), None)
    if cell is None:
        return None
    addressing = _ADDRESSING.match(text, cell[0], cell[1])
    if addressing is not None and addressing.end() <= end and not text[addressing.end() : start].strip():
        return text[cell[0] : min(end, cell[1])]
    honorific = _HONORIFIC_AFTER.match(text, end, cell[1])
    if honorific is not None:
        return text[start : honorific.end()]  # "株式会社青葉商事 御中"
    last = lines.line_of(max(start, end - 1))
    if cell[0] < start or (last == line and _CLOSING_MARKS.fullmatch(text, end, cell[1]) is None):
        return None  # the name not its cell's whole: a sender's line, a footer's
    if _SEPARATOR_AFTER.match(text, cell[1]):
        return None  # "Holzmann GmbH  ·  Bahnhofstr. 3": a sender's line in cells
    column = lines.column(lines.starts[line], start)
    for up in range(line - 1, max(-1, line - 1 - _SALUTATION_REACH), -1):
        over = lines.cell_in_column(up, column)
        if over is not None and _SALUTATION_CELL.fullmatch(text, *over):
            return text[over[0] : over[1]]
        if over is not None or _written_over(text, lines, up, column, end - start):
            break  # another line of the block over it, not its salutation
    for down in range(last + 1, min(len(lines.starts), last + 1 + _ATTENTION_REACH)):
        under = lines.cell_in_column(down, column)
        if under is not None and _ATTENTION_LINE.match(text, *under):
            return text[under[0] : under[1]]
        if under is not None or not _MARKS_ONLY.fullmatch(text, *lines.bounds(down)):
            break  # another line of the block, a blank, or words: no attention line of this name
    return None


def _written_over(text: str, lines: Lines, line: int, column: int, width: int) -> bool:
    """Whether `line` writes anything over the columns `column` to `column + width`."""
    start = lines.starts[line]
    return any(
        lines.column(start, s) < column + width and lines.column(start, e) > column for s, e in lines.cells(line)
    )


_PLATFORM_REACH = 40  # characters: the words and a colon right before the name
_PLATFORM_BEFORE = re.compile(rf"(?i)(?<![^\W\d_]){_one_of(PLATFORM_BEFORE)}[ \t]*:?[ \t]*$")
# the lines up to a salutation over a name, past lines of another column only (a window's
# "Frau" over a line of the header's "Mieter-Nr.: 0147-07" beside it, then "Sabine Kranz")
_SALUTATION_REACH = 2
_HONORIFIC_AFTER = re.compile(rf"[ \t\u3000]*{_one_of(ADDRESSING_AFTER)}(?=[ \t\u3000]*$|[ \t\u3000]*\n|$)")
_ATTENTION_REACH = 2  # the lines down to an attention line, past one of a scan's marks only
_MARKS_ONLY = re.compile(r"[ \t]*[^\w\s][^\w\n]*")  # "                 ." (a speck read as a full stop)
_SEPARATOR_AFTER = re.compile(r"[ \t]*[·•|–]")
_ADDRESSING = re.compile(rf"(?i){_one_of(ADDRESSING_WORDS)}(?![^\W\d_])")
_SALUTATION_CELL = re.compile(rf"(?i){_one_of(SALUTATIONS)}[ \t]*:?")
# an attention line's words, a single word with its colon ("Att: Ekonomi"; not Swedish "Att
# betala", "attention" in a sentence), or the address's "Herrn" before a name
_ATTENTION_WORDS_AT_START = _one_of(p for p in ATTENTION_WORDS if " " in p or p.endswith("."))
_ATTENTION_WORD_WITH_COLON = _one_of(p for p in ATTENTION_WORDS if " " not in p and not p.endswith("."))
_ATTENTION_LINE = re.compile(
    rf"(?i)(?:{_ATTENTION_WORDS_AT_START}|{_one_of(ADDRESSING_WORDS)}(?![^\W\d_])|{_ATTENTION_WORD_WITH_COLON}[ \t]*:)"
    r"[ \t]*\S"
)


def label_over(
    text: str, lines: Lines, start: int, end: int, party: str, value_labels: LabelIndex | None = None
) -> str | None:
    """The label of `party` that names the name written at `start:end`, as written, or
    None. The label starts the name's cell with its colon ("Customer: Acme", "SOLD TO:
    Acme, 12 Main St"); or heads the name's column on the line right above, the name the
    whole of its cell ("Nabywca" over "Fundacja ...", "Client" over "Maison Vérel SAS"; a
    name with more in its cell, "Acme Ltd · 14 Marsh Road", is a footer's). Not a label
    with a value of its own beside it ("Customer:  Acme" over the next line's name), nor
    one of a row of headings written one a line ("Seller:" over "Buyer:" over the seller's
    name), nor a label with a blank line under it (a cash sale's empty "Customer:"); a
    label across a gap ("Bill to:      Acme") is as often two columns' heads, the name the
    other column's."""
    line = lines.line_of(start)
    cells = lines.cells(line)
    cell = next(((s, e) for s, e in cells if s <= start < e), None)
    if cell is None:
        return None  # a line too long to read as cells
    k = cells.index(cell)
    if k > 0 and not text[cell[0] : start].strip(" \t:："):
        key_column, value_column = cells[k - 1][0] - lines.starts[line], cell[0] - lines.starts[line]
        # a key's column beside its values' ("Покупець:      ПП «Галицька будова»",
        # "Señor(es)              : COMERCIAL HUANCAYO"): the key's cell with the colon
        # written on either side of the gap
        key = text[cells[k - 1][0] : cells[k - 1][1]] + text[cell[0] : start].strip()
        label = None
        if not key.endswith(_COLONS):
            # a remittance advice's keys, written without colons ("Customer      Ashcombe
            # Academy Trust" over "Invoice No.  BW-INV-104882")
            if is_label_cell(key, party) and _unmarked_keys(lines, line, key_column, value_column, value_labels):
                label = key
            elif normalise_phrase(key.strip()) in _NAME_LABELS:
                # a name's own key in a party's block of keys without colons ("ΣΤΟΙΧΕΙΑ
                # ΠΕΛΑΤΗ" / "Κωδικός   30-0412" / "Επωνυμία   ΛΟΓΙΣΤΙΚΟ ΓΡΑΦΕΙΟ ...")
                label = _heading_its_block(text, lines, line, (cells[k - 1][0], end), party, value_column)
        elif _a_keys_column(text, lines, line, key_column, value_column):
            label = (
                # a name's own key in a party's block ("Получател:" over "Име:    Витоша ООД")
                _heading_its_block(text, lines, line, (cells[k - 1][0], end), party)
                if normalise_phrase(key[:-1].strip()) in _NAME_LABELS
                else _label_with_colon(text, lines, line, cells[k - 1][0], key, party)
            )
        if label is not None:
            return label
    if cell[0] < start:
        label = text[cell[0] : start].strip()
        if label.endswith(_COLONS) and normalise_phrase(label[:-1].strip()) in _NAME_LABELS:
            return _heading_its_block(text, lines, line, (cell[0], end), party)
        return _label_with_colon(text, lines, line, cell[0], label, party)
    if line == 0 or (
        _CLOSING_MARKS.fullmatch(text, end, cell[1]) is None
        and not (party == DELIVERY and _A_SITE_AFTER.match(text, end, cell[1]))
    ):
        return None  # a name with more in its cell ("Acme Ltd · 14 Marsh Road") is a footer's or a letterhead's
    above = lines.cell_in_column(line - 1, start - lines.starts[line])
    if above is None or not is_label_cell(text[above[0] : above[1]], party):
        return None
    cells = lines.cells(line - 1)
    k = cells.index(above)
    if (
        k + 1 < len(cells)
        and not (
            _a_heading(text, above, cells[k + 1], value_labels)
            or _capital_headings(text, lines, above, cells[k + 1])
            # the last of a row of parties' headings ("BILL TO   SHIP TO   INVOICE 1047")
            or (k > 0 and _a_party_label(text[cells[k - 1][0] : cells[k - 1][1]]))
        )
    ):
        return None  # the label's value stands beside it
    return None if _under_a_heading(text, lines, line - 1) else text[above[0] : above[1]]


def _a_keys_column(text: str, lines: Lines, line: int, key_column: int, value_column: int) -> bool:
    """Whether the cell at `key_column` of `line` is one of a column of keys whose values
    stand in `value_column`: another key with its colon some lines up or down in that
    column, its value starting where the name does (" Договір:       Договір поставки №
    17/24" under "Покупець:      ПП «...»"; "Fecha de Emisión       : 21/08/2025" over
    "Señor(es)              : COMERCIAL ..."). A letterhead's name beside a party's label
    ("Bill To:        Brightside Ltd" over "Name:   Greenway Bakery") has none."""
    return any(
        # a key alone in its cell, its colon at its end or starting its value's
        text[key[0] : key[1]].endswith(_COLONS) or _colon_across_the_gap(text, lines, other, key)
        for other, key in _keys_near(lines, line, key_column, value_column)
    )


def _keys_near(lines: Lines, line: int, key_column: int, value_column: int) -> Iterator[tuple[int, tuple[int, int]]]:
    """The cells some lines up or down in `key_column` whose next cell starts in
    `value_column`, the name's (each line and its key's cell)."""
    for other in (*range(line - 1, line - 1 - _KEYS_REACH, -1), *range(line + 1, line + 1 + _KEYS_REACH)):
        key = lines.cell_in_column(other, key_column)
        if key is None:
            continue
        cells = lines.cells(other)
        k = cells.index(key)
        if k + 1 < len(cells) and abs(cells[k + 1][0] - lines.starts[other] - value_column) <= 1:
            yield other, key


def _unmarked_keys(
    lines: Lines, line: int, key_column: int, value_column: int, value_labels: LabelIndex | None
) -> bool:
    """Whether two keys or more without colons stand in the column of `line`'s key, some
    lines up or down, their values in the name's column, each key a standard value label
    ("Invoice No.", "Due Date"): a column of keys, not a block of address lines beside
    another ("City    City")."""
    if value_labels is None:
        return False
    starts = value_labels.starts
    found = sum(
        (at := bisect_left(starts, key[0])) < len(starts) and starts[at] == key[0]
        for _, key in _keys_near(lines, line, key_column, value_column)
    )
    return found >= _UNMARKED_KEYS


def _colon_across_the_gap(text: str, lines: Lines, line: int, cell: tuple[int, int]) -> bool:
    """Whether the cell after `cell` on `line` starts with a colon: a key whose colon is
    written with its value, across the key column's gap ("RUC          : 20487654321")."""
    cells = lines.cells(line)
    k = cells.index(cell)
    return k + 1 < len(cells) and text[cells[k + 1][0] : cells[k + 1][1]].startswith(_COLONS)


def _label_with_colon(text: str, lines: Lines, line: int, start: int, label: str, party: str) -> str | None:
    """`label`, written from `start` on `line` right before a name, when it is one of
    `party`'s with its colon and names that name: a line under the label in its column is
    its block, this name the next column's, its gap closed ("Bill To: Acme" over "Contoso
    Ltd"); the label names the name only with nothing but the next label under it ("SOLD
    TO: Acme" over "TIN: 009-882"), or nothing."""
    if not label.endswith(_COLONS) or not is_label_cell(label, party):
        return None
    under = lines.cell_in_column(line + 1, start - lines.starts[line])
    if under is None or any(c in text[under[0] : under[1]] for c in _COLONS):
        return label
    return label if _colon_across_the_gap(text, lines, line + 1, under) else None  # the next key


def _heading_its_block(
    text: str, lines: Lines, line: int, block: tuple[int, int], party: str, value_column: int | None = None
) -> str | None:
    """The label of `party` heading the block whose name, with its own label ("Nombre:",
    "Denominazione:"), stands at `block` (the label's start, the name's end) on `line`:
    the party's label alone in its cell in the key's column a few lines up, or alone on
    its line and over the name (a title centred over its block), with only a key and its
    value (a colon in the cell) on each line between ("RECEPTOR" / "Nombre: ..."; "Cessionario/committente
    (cliente)" / "Codice fiscale: ..." / "Denominazione: ..."; "TOMADOR DE SERVIÇOS" /
    "Nome/Razão Social: ..."). None otherwise, and for one of a row of headings written
    one a line ("Sprzedawca" over "Nabywca" over the two blocks' keys). With the values'
    `value_column`, the block's keys have no colons: each line between is a key and its
    value there, and the heading may have another block's beside it ("ΣΤΟΙΧΕΙΑ ΠΕΛΑΤΗ   ΣΤΟΙΧΕΙΑ
    ΔΙΑΚΙΝΗΣΗΣ"), standing over its own block alone."""
    column, end_column = block[0] - lines.starts[line], block[1] - lines.starts[line]
    for above in range(line - 1, max(-1, line - 1 - _MAX_BLOCK_KEYS - 1), -1):
        cell = lines.cell_in_column(above, column)
        if cell is None:
            cells = lines.cells(above)
            over = [
                (s, e) for s, e in cells if s - lines.starts[above] < end_column and e - lines.starts[above] > column
            ]
            if (len(cells) != 1 and value_column is None) or len(over) != 1:
                return None
            title_start, title_end = (c - lines.starts[above] for c in over[0])
            if value_column is not None and not _centred_over_its_block(
                lines, above, line, (title_start, title_end), (column, end_column)
            ):
                return None  # over its own block only (not centred over two, nor the next one's)
            title = text[over[0][0] : over[0][1]]
            return title.strip() if is_label_cell(title, party) and not _under_a_heading(text, lines, above) else None
        written = text[cell[0] : cell[1]]
        if is_label_cell(written, party):
            return None if _under_a_heading(text, lines, above) else written.strip()
        if value_column is not None:
            after = [s for s, _ in lines.cells(above) if s > cell[1]]
            if any(is_label_cell(written, kind) for kind in PARTIES) or not (
                after and abs(after[0] - lines.starts[above] - value_column) <= 1
            ):
                return None
            continue  # a key without its colon and its value
        # only a key and its value: another party's heading ("From:", "Proveedor:") or a
        # heading with its colon ("Datos del emisor:") starts another block
        key, colon, value = written.partition(":") if ":" in written else written.partition("：")
        if not colon or not value.strip() or any(is_label_cell(key, kind) for kind in PARTIES):
            return None  # a delivery's key and its value ("Site Address: Farm 418") is the block's
    return None


def _centred_over_its_block(
    lines: Lines, heading_line: int, line: int, title: tuple[int, int], block: tuple[int, int]
) -> bool:
    """Whether a heading (its columns `title`, on `heading_line`) stands over a block of
    keys and values without colons (its columns `block`, its name on `line`): starting
    within a few columns of its keys, or within it about its middle; and no other block's
    cell starting under the heading a few lines down (a heading aligned with the next
    block is that block's)."""
    (title_start, title_end), (column, end_column) = title, block
    left_aligned = abs(title_start - column) <= _HEADING_DRIFT
    centred = (
        column <= title_start < title_end <= end_column
        and abs((title_start + title_end) - (column + end_column)) <= (end_column - column) // 2
    )
    if not (left_aligned or centred):
        return False
    for below in range(line + 1, min(len(lines.starts), line + 2 + _MAX_BLOCK_KEYS)):
        start = lines.starts[below]
        if any(abs(s - start - title_start) <= 1 and abs(s - start - column) > 1 for s, _ in lines.cells(below)):
            return False
    return True


def _a_heading(text: str, label: tuple[int, int], beside: tuple[int, int], value_labels: LabelIndex | None) -> bool:
    """Whether the cell beside a party's label heads a column too: a label with its colon
    ("INVOICE #: ML-2026-014" as a converter joins a header's label and value), a label of
    a party or a delivery ("SHIP TO", "Delivery Address") or of a date or number the index
    reads ("Date of Issue", "Invoice Number"), or a heading's spaced letters ("I N V O I C E
    N O .") apart from the label's, not going on with them ("C U S T O M E R  C O P Y")."""
    cell = text[beside[0] : beside[1]]
    if any(c in cell for c in _COLONS) or _a_party_label(cell):
        return True
    if value_labels is not None and _a_value_label(text, beside, value_labels):
        return True
    if _LETTER_SPACED.fullmatch(cell) is None:
        return False
    return _LETTER_SPACED.fullmatch(text, *label) is None or beside[0] - label[1] > _SPACED_WORD_GAP


def _capital_headings(text: str, lines: Lines, label: tuple[int, int], beside: tuple[int, int]) -> bool:
    """Whether a party's label with no colon and the cell beside it are a row of headings
    in capitals, each over its own column ("FACTURAR A   PROYECTO" over the client's name
    and the project's): not a label with its value beside it ("CUSTOMER   WALK IN" over a
    name alone)."""
    if not (_CAPITAL_HEADING.fullmatch(text, *label) and _CAPITAL_HEADING.fullmatch(text, *beside)):
        return False
    line = lines.line_of(beside[0])
    return lines.cell_in_column(line + 1, beside[0] - lines.starts[line]) is not None


def _a_party_label(cell: str) -> bool:
    """Whether `cell` is a label of a party or a delivery ("SHIP TO", "Delivery Address")."""
    return any(is_label_cell(cell, kind) for kind in PARTY_LABELS)


def _a_value_label(text: str, cell: tuple[int, int], value_labels: LabelIndex) -> bool:
    """Whether a cell starts with a label of the index, two words or more, and has no more
    than marks or a bracketed note after it ("Invoice Date (Tax Point)", "Date of Issue")."""
    k = bisect_left(value_labels.starts, cell[0])
    if k == len(value_labels.labels) or value_labels.starts[k] != cell[0]:
        return False
    label = value_labels.labels[k]
    # one word ("Phone", "Store", "TRN") heads a column as often as it names a value beside it
    return (
        len(text[label.start : label.end].split()) > 1 and _LABEL_TAIL.fullmatch(text, label.end, cell[1]) is not None
    )


def _under_a_heading(text: str, lines: Lines, line: int) -> bool:
    """Whether `line`, a party's label alone, stands right under another heading alone in
    its column (no figure, a few words): a row of headings written one a line, whose names
    follow in their order, not each under its own ("Seller:" / "Buyer:", "Pay To:" /
    "Bill To:")."""
    if line == 0 or len(cells := lines.cells(line)) != 1 or len(lines.cells(line - 1)) != 1:
        return False
    above = lines.cell_in_column(line - 1, cells[0][0] - lines.starts[line])
    if above is None:
        return False
    heading = text[above[0] : above[1]]
    return not any(c.isdigit() for c in heading) and len(heading.split()) <= _MAX_HEADING_WORDS
