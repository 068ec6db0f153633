"""The amount lexicon is data: the shipped file is well-formed, the loader refuses a
phrase the matcher could never find, a schema's labels are normalised or refused, and
a label a schema adds changes which role an amount gets."""

from __future__ import annotations

import copy
import json
from collections import Counter
from importlib import resources

import pytest

from vetq.core.extraction import field_checks as F
from vetq.core.extraction.amounts import find_amounts
from vetq.core.extraction.heuristics import run_heuristics
from vetq.core.extraction.lexicon import (
    ADJUSTMENT_KINDS,
    AMOUNT_LEXICON_FILE,
    MAX_FIRST_WORD_CHARS,
    STANDARD_LABEL_SETS,
    LexiconError,
    compile_lexicon,
    first_word,
    glued,
    label_sets_from_data,
    lexicon_from_data,
    normalise_phrase,
    numbers_dated_after_from_data,
    unaccented,
)
from vetq.core.extraction.roles import Lines, assign_roles, find_labels
from vetq.core.schemas import SchemaInvalidError, builtin, compile_schema


def _shipped() -> dict:
    text = resources.files("vetq.core.extraction").joinpath(AMOUNT_LEXICON_FILE).read_text(encoding="utf-8")
    return json.loads(text)


DATA = _shipped()
LABELS: dict[str, list[str]] = DATA["label_sets"]["sets"]
ADJUSTMENTS: dict[str, list[str]] = DATA["adjustments"]["phrases"]
INVOICE = builtin("invoice")
RECEIPT = builtin("receipt")


def test_the_invoice_reads_its_amounts_with_the_standard_sets():
    assert set(LABELS) == {"total", "subtotal", "tax"}
    for role in LABELS:
        assert INVOICE.by_path[role].labels == STANDARD_LABEL_SETS[role]
        assert STANDARD_LABEL_SETS[role][: len(LABELS[role])] == tuple(LABELS[role])
    assert set(INVOICE.lexicon.role_of_label.values()) == set(LABELS)


def test_a_set_reads_its_phrases_also_without_their_accents():
    written = {p for phrases in LABELS.values() for p in phrases}
    for role, phrases in LABELS.items():
        added = STANDARD_LABEL_SETS[role][len(phrases) :]
        kept = [
            p
            for p in phrases
            if all(a == b or len(b) >= 4 for a, b in zip(p.split(" "), unaccented(p).split(" "), strict=True))
        ]
        plain = {unaccented(p) for p in kept} - written
        joined = {glued(r) for p in phrases for r in (p, unaccented(p))} - written - {None}
        assert plain <= set(added) <= plain | joined
    read = {p for phrases in STANDARD_LABEL_SETS.values() for p in phrases}
    assert {glued(p) for p in written} - {None} <= read  # every phrase also run together
    assert {"totalttc", "totaltopay", "totalht"} <= read and "sumåbetale" not in read  # "å", one letter
    # run together, a phrase with a one-letter word or of few letters is another word
    assert glued("total a pagar") is None and glued("net 30") is None and glued("to pay") is None
    assert "lasku yhteensa" in STANDARD_LABEL_SETS["total"]
    assert unaccented("numéro de facture") == "numero de facture" and unaccented("do zapłaty") == "do zapłaty"
    # a short word is often another word once its accent goes: not read so
    for other in ("dan", "montant du", "dic", "a payer"):
        assert all(other not in phrases for phrases in STANDARD_LABEL_SETS.values()), other
    receipt = "KOPI KENANGAN\nJl. Sudirman No. 10, Jakarta\n31/01/2024 12:30\nNo: 000123\n1 Roti bakar keju dan coklat      38.000\n2 Es kopi susu                    44.000\nSubtotal                          82.000\nPPN 11%                            9.020\nTotal                             91.020\nTunai                            100.000\nKembalian                          8.980\n"
    record = {
        "merchant_name": "KOPI KENANGAN",
        "date": "2024-01-31",
        "subtotal": 82000.0,
        "tax": 9020.0,
        "total": 91020.0,
    }
    assert _flags(receipt, record, RECEIPT) == {}
    french = "FACTURE N° INV-1\nDate : 31/01/2024\nDésignation                                  Montant\nTravaux de rénovation                       1 000,00\nTotal HT                                    1 000,00\nTVA 20 %                                      200,00\nTotal TTC                                   1 200,00\nMontant du marché initial                   5 000,00\n"
    assert _flags(french, {"subtotal": 1000.0, "tax": 200.0, "total": 1200.0}) == {}
    # a Finnish invoice read by OCR in English: its accents gone, its labels still read
    text = "ALV-erittely:   LASKU YHTEENSA: 161,96 euroa\nYhteensa veroton: 132,75 euroa\nALV yhteensa:  29,21 euroa\n"
    assert _flags(text, {"subtotal": 132.75, "tax": 29.21, "total": 161.96}) == {}


def _flags(text: str, record: dict, schema=INVOICE) -> dict[str, list[str]]:
    checks = run_heuristics(text, schema.validate_data(record), schema)
    return {path: check.reasons for path, check in checks.items() if check.reasons}


def test_no_label_is_listed_twice_or_under_two_sets():
    counts = Counter(label for labels in LABELS.values() for label in labels)
    assert [label for label, n in counts.items() if n > 1] == []


def test_adjustment_phrases_have_a_known_kind_and_one_kind_each():
    assert set(ADJUSTMENTS) == set(ADJUSTMENT_KINDS)
    counts = Counter(p for phrases in ADJUSTMENTS.values() for p in phrases)
    assert [p for p, n in counts.items() if n > 1] == []


@pytest.mark.parametrize("phrase", [p for labels in [*LABELS.values(), *ADJUSTMENTS.values()] for p in labels])
def test_phrases_are_written_as_the_matcher_compares_them(phrase):
    assert normalise_phrase(phrase) == phrase == phrase.strip()
    assert len(first_word(phrase)) <= MAX_FIRST_WORD_CHARS


@pytest.mark.parametrize("role,label", [(role, label) for role, labels in LABELS.items() for label in labels])
def test_every_label_is_found_in_a_document_however_it_is_cased(role, label):
    for written in (label, label.upper(), label.title(), label.replace(" ", "  ")):
        found = find_labels(f"{written} 10.00", INVOICE.lexicon)
        assert [(lb.start, lb.role) for lb in found] == [(0, role)], written


@pytest.mark.parametrize(
    "change,names",
    [
        (lambda d: d["label_sets"]["sets"]["total"].append("Grand  Total"), "'Grand  Total' is not normalised"),
        (lambda d: d["label_sets"]["sets"]["total"].append("2nd total"), "'2nd total' does not start with a letter"),
        (lambda d: d["label_sets"]["sets"].update(tax=[]), "label_sets.sets.tax must be a non-empty list"),
        (lambda d: d["adjustments"]["phrases"].update(bonus=["bonus"]), "unknown kind 'bonus'"),
        (lambda d: d["page_words"].update(words=["Page"]), "'Page' must be one casefolded word"),
        (lambda d: d.pop("rate_base_words"), "rate_base_words.words is missing"),
        (
            lambda d: d["tax_included_net_labels"]["words"].append("nebst"),
            "'nebst' is not one of the qualifying_words",
        ),
        (
            lambda d: d["qualifying_words"]["excluding"].append("nebst"),
            "qualifying_words.excluding: 'nebst' is not one of the qualifying_words",
        ),
        (lambda d: d.pop("unit_price_lines"), "unit_price_lines.phrases is missing"),
        (lambda d: d.pop("after_adjustment_words"), "after_adjustment_words.words is missing"),
        (lambda d: d["tax_included_net_labels"].update(sets=["net"]), "unknown label set 'net'"),
        (lambda d: d["goods_sum_labels"].update(role_set="net"), "goods_sum_labels.role_set: unknown label set"),
        (lambda d: d["goods_sum_labels"]["words"].append("Waren"), "'Waren' must be one casefolded word"),
        (lambda d: d["grand_total_labels"]["phrases"].append("netto"), "'netto' is in none of its label sets"),
    ],
)
def test_the_loader_refuses_data_the_matcher_would_misread(change, names):
    data = copy.deepcopy(DATA)
    change(data)
    with pytest.raises(LexiconError, match=names.replace("(", r"\(")):
        label_sets_from_data(data)
        lexicon_from_data(data, {})


@pytest.mark.parametrize(
    "pairs,names",
    [
        ({"order_number": "order_day"}, "'order_number' -> 'order_day' names an unknown set"),
        ({"order_date": "invoice_date"}, "is not a number's to a date's"),
        ({"order_number": "invoice_number"}, "is not a number's to a date's"),
        (["order_number"], "must map a set of numbers to a set of dates"),
    ],
)
def test_a_number_dates_only_a_date_of_a_known_set(pairs, names):
    data = copy.deepcopy(DATA)
    data["numbers_dated_after"]["pairs"] = pairs
    with pytest.raises(LexiconError, match=names):
        numbers_dated_after_from_data(data)
    assert numbers_dated_after_from_data(DATA)["delivery_note_number"] == "delivery_date"


def test_one_label_under_two_roles_is_refused():
    with pytest.raises(LexiconError, match="both 'total' and 'tax'"):
        compile_lexicon({"total": ["amount due"], "tax": ["amount due"]})


def _schema(total_labels):
    return compile_schema({"name": "bill", "fields": {"total": {"kind": "amount", "labels": total_labels}}})


def test_a_schemas_labels_are_normalised_and_a_label_the_matcher_cannot_find_is_refused():
    assert _schema(["Grand  TOTAL "]).by_path["total"].labels == ("grand total",)
    with pytest.raises(SchemaInvalidError, match=r"fields\.total\.labels\[1\].*does not start with a letter"):
        _schema(["@total", "2nd total"])
    with pytest.raises(SchemaInvalidError, match="no standard label set '@totals'"):
        _schema(["@totals"])


def test_a_label_a_schema_adds_is_picked_up_by_the_role_assignment():
    text = "Slutbelopp 583.20"
    assert "slutbelopp" not in STANDARD_LABEL_SETS["total"]
    standard, extended = _schema(["@total"]), _schema(["@total", "Slutbelopp"])
    amounts = find_amounts(text)

    assert assign_roles(text, amounts, Lines(text), standard.lexicon).roles == [None]
    assert assign_roles(text, amounts, Lines(text), extended.lexicon).roles == ["total"]

    record = {"total": 583.2}
    assert run_heuristics(text, record, standard)["total"].factor == F.NO_ROLE_LABEL_FACTOR
    labelled = run_heuristics(text, record, extended)["total"]
    assert (labelled.factor, labelled.reasons) == (1.0, [])


def test_a_label_on_a_line_too_long_for_columns_is_read_in_its_last_characters():
    # a text flattened to one line: a legal reference far before "Total" (across 500
    # blanks) says nothing of it, one right before it still unmakes it as a label; the
    # context is found once per line, not scanned from the line's start per label
    flat = "Rechnung 1042 " + "Pos 1.00 " * 250
    far = flat + "art. 12" + " " * 500 + "Total 5.00\n"
    near = flat + "art. 12 Total 5.00\n"
    assert len(far) > 2000 and [lb.role for lb in find_labels(far, INVOICE.lexicon)] == ["total"]
    assert find_labels(near, INVOICE.lexicon) == []
    # on a line of ordinary length the whole line before the label is read
    assert find_labels("art. 12" + " " * 500 + "Total 5.00\n", INVOICE.lexicon) == []
