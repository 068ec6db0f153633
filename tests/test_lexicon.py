"""The label lexicon is data: the shipped file is well-formed, the loader refuses a
phrase the matcher could never find, and a label added only to the data changes
which role an amount gets."""

from __future__ import annotations

import copy
import json
from collections import Counter
from importlib import resources

import pytest

from vetq.core.extraction import heuristics as H
from vetq.core.extraction.amounts import find_amounts
from vetq.core.extraction.heuristics import run_heuristics
from vetq.core.extraction.lexicon import (
    ADJUSTMENT_KINDS,
    INVOICE_LEXICON_FILE,
    MAX_FIRST_WORD_CHARS,
    LexiconError,
    first_word,
    lexicon_from_data,
    normalise_phrase,
)
from vetq.core.extraction.roles import Lines, assign_roles, find_labels
from vetq.core.extraction.schema import AMOUNT_FIELDS, InvoiceData


def _shipped() -> dict:
    text = resources.files("vetq.core.extraction").joinpath(INVOICE_LEXICON_FILE).read_text(encoding="utf-8")
    return json.loads(text)


DATA = _shipped()
LABELS: dict[str, list[str]] = DATA["role_labels"]["labels"]
ADJUSTMENTS: dict[str, list[str]] = DATA["adjustments"]["phrases"]


def test_every_amount_field_has_labels_and_no_role_is_unknown():
    assert set(LABELS) == set(AMOUNT_FIELDS)
    assert all(LABELS[role] for role in AMOUNT_FIELDS)


def test_no_label_is_listed_twice_or_under_two_roles():
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
        found = find_labels(f"{written} 10.00")
        assert [(lb.start, lb.role) for lb in found] == [(0, role)], written


@pytest.mark.parametrize(
    "change,names",
    [
        (lambda d: d["role_labels"]["labels"]["total"].append("Grand  Total"), "'Grand  Total' is not normalised"),
        (lambda d: d["role_labels"]["labels"]["tax"].append("amount due"), "both 'total' and 'tax'"),
        (lambda d: d["role_labels"]["labels"]["total"].append("2nd total"), "'2nd total' does not start with a letter"),
        (lambda d: d["role_labels"]["labels"].update(tax=[]), "role_labels.labels.tax must be a non-empty list"),
        (lambda d: d["adjustments"]["phrases"].update(bonus=["bonus"]), "unknown kind 'bonus'"),
        (lambda d: d["page_words"].update(words=["Page"]), "'Page' must be one casefolded word"),
        (lambda d: d.pop("rate_base_words"), "rate_base_words.words is missing"),
    ],
)
def test_the_loader_refuses_data_the_matcher_would_misread(change, names):
    data = copy.deepcopy(DATA)
    change(data)
    with pytest.raises(LexiconError, match=names.replace("(", r"\(")):
        lexicon_from_data(data)


def test_a_label_added_only_to_the_data_is_picked_up_by_the_role_assignment():
    text = "Slutbelopp 583.20"
    assert "slutbelopp" not in {label for labels in LABELS.values() for label in labels}
    extended = copy.deepcopy(DATA)
    extended["role_labels"]["labels"]["total"].append("slutbelopp")
    lexicon = lexicon_from_data(extended)
    amounts = find_amounts(text)

    assert assign_roles(text, amounts, Lines(text)).roles == [None]
    assert assign_roles(text, amounts, Lines(text), lexicon).roles == ["total"]

    record = InvoiceData(total=583.2)
    assert run_heuristics(text, record)["total"].factor == H.NO_ROLE_LABEL_FACTOR
    labelled = run_heuristics(text, record, lexicon=lexicon)["total"]
    assert (labelled.factor, labelled.reasons) == (1.0, [])
