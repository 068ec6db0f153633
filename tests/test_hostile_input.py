"""Hostile input: arbitrary Unicode, control characters, huge documents, deep nesting,
NaN and infinities, duplicate keys. Everything ends as a result or an INVALID_INPUT
envelope; nothing raises, nothing hangs."""

from __future__ import annotations

import json
import math
from decimal import Decimal

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vetq.api_client.batch import parse_batch_line
from vetq.core.errors import ConfigError, InvalidInputError
from vetq.core.extraction.amounts import find_amounts, parse_amount
from vetq.core.extraction.dates import find_date_spans
from vetq.core.extraction.heuristics import run_heuristics
from vetq.core.extraction.pipeline import ExtractionPipeline
from vetq.core.llm.json_extract import NoJSONObjectError, extract_json_object
from vetq.core.review.schema import ReviewRequest
from vetq.core.schemas import builtin
from vetq.core.settings import load_settings
from vetq.core.validation import parse_model

HOSTILE_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=400) | st.text(
    st.sampled_from(list("0123456789.,' \u00a0\u202f-/€$£:\n\t\x00\x1b\u200bTotalVATtax")), max_size=200
)
JSON_LEAF = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True, allow_infinity=True) | HOSTILE_TEXT
JSON_VALUE = st.recursive(
    JSON_LEAF,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(HOSTILE_TEXT, inner, max_size=4),
    max_leaves=20,
)
FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def no_provider(spec):
    # A payload that gets as far as needing a model ends as CONFIG_ERROR: no provider here.
    raise ConfigError(f"no provider in these tests ({spec})")


PIPELINE = ExtractionPipeline(load_settings(), client_factory=no_provider)


@FAST
@given(HOSTILE_TEXT)
def test_amount_parser_and_finder_never_raise(text):
    value = parse_amount(text)
    assert value is None or isinstance(value, Decimal)
    for mention in find_amounts(text):
        assert text[mention.start : mention.end] == mention.raw


@FAST
@given(HOSTILE_TEXT, st.dates())
def test_date_grounding_never_raises(text, day):
    for start, end in find_date_spans(text, day):
        assert 0 <= start < end <= len(text)


@FAST
@given(
    HOSTILE_TEXT,
    st.fixed_dictionaries(
        {},
        optional={
            "vendor_name": HOSTILE_TEXT,
            "invoice_number": HOSTILE_TEXT,
            "invoice_date": st.dates(),
            "subtotal": st.floats(allow_nan=False, allow_infinity=False, min_value=-1e12, max_value=1e12),
            "tax": st.floats(allow_nan=False, allow_infinity=False, min_value=-1e12, max_value=1e12),
            "total": st.floats(allow_nan=False, allow_infinity=False, min_value=-1e12, max_value=1e12),
            "currency": st.sampled_from(["EUR", "USD", "GBP", "JPY", "CHF"]),
        },
    ),
)
def test_heuristics_never_raise_and_only_lower(text, fields):
    invoice = builtin("invoice")
    data = invoice.validate_data(fields)
    for path, check in run_heuristics(text, data, invoice).items():
        assert path in invoice.by_path
        assert 0 < check.factor <= 1
        for span in check.spans:
            assert text[span.start : span.end] == span.text


AMOUNT = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e9, max_value=1e9)


@FAST
@given(
    HOSTILE_TEXT,
    st.lists(
        st.fixed_dictionaries(
            {},
            optional={"description": HOSTILE_TEXT, "quantity": AMOUNT, "unit_price": AMOUNT, "amount": AMOUNT},
        ),
        max_size=6,
    ),
    st.fixed_dictionaries({}, optional={"subtotal": AMOUNT, "tax": AMOUNT, "tip": AMOUNT, "total": AMOUNT}),
)
def test_heuristics_on_line_items_never_raise_and_only_lower(text, items, amounts):
    receipt = builtin("receipt")
    data = receipt.validate_data({"items": items, **amounts})
    for path, check in run_heuristics(text, data, receipt).items():
        assert path.split("[")[0] in receipt.by_path
        assert 0 < check.factor <= 1


@FAST
@given(HOSTILE_TEXT | JSON_VALUE.map(lambda v: json.dumps(v, allow_nan=True)))
def test_json_extraction_returns_an_object_or_says_there_is_none(answer):
    try:
        assert isinstance(extract_json_object(answer), dict)
    except NoJSONObjectError:
        pass


@FAST
@given(
    st.dictionaries(
        st.sampled_from(
            ["kind", "text", "data", "field_threshold", "overall_threshold", "heuristics_only", "trace_id", "extra"]
        ),
        JSON_VALUE,
        max_size=6,
    )
    | JSON_VALUE
)
def test_any_payload_ends_as_a_result_or_invalid_input(payload):
    outcome = PIPELINE.run(payload)
    if outcome.status == "error":
        assert outcome.error.code in ("INVALID_INPUT", "CONFIG_ERROR"), outcome
    else:
        assert outcome.status in ("ok", "needs_review")


@FAST
@given(st.dictionaries(HOSTILE_TEXT, JSON_VALUE, max_size=8) | JSON_VALUE)
def test_review_request_model_accepts_or_refuses_cleanly(payload):
    try:
        parse_model(ReviewRequest, payload, what="review request")
    except InvalidInputError as exc:
        assert exc.message.startswith(("invalid review request", "the review request"))


@FAST
@given(HOSTILE_TEXT | JSON_VALUE.map(lambda v: json.dumps(v, allow_nan=True)), st.sampled_from(["extract", "validate"]))
def test_batch_line_parser_never_raises(line, kind):
    _line_id, parsed = parse_batch_line(line, kind=kind, number=7)
    if parsed.get("status") == "error":
        assert parsed["error"]["code"] == "INVALID_INPUT" and "line 7" in parsed["error"]["message"]
    else:
        assert parsed["kind"] == kind and isinstance(parsed["text"], str)


def test_nan_and_infinity_in_a_batch_line_are_refused():
    for token in ("NaN", "Infinity", "-Infinity"):
        _, parsed = parse_batch_line('{"text": "x", "field_threshold": ' + token + "}", kind="extract", number=1)
        assert parsed["status"] == "error"


def test_duplicate_keys_resolve_to_the_last_like_every_json_parser():
    _, parsed = parse_batch_line('{"text": "first", "text": "second"}', kind="extract", number=1)
    assert parsed["text"] == "second"


def test_ten_megabyte_document_is_refused_fast_with_what_to_do():
    outcome = PIPELINE.run({"kind": "extract", "text": "Total 1.00 EUR\n" * 700_000})
    assert outcome.error.code == "INVALID_INPUT"
    assert "VETQ_MAX_DOCUMENT_CHARS" in outcome.error.message


def test_deeply_nested_data_is_invalid_input():
    nested: dict = {}
    node = nested
    for _ in range(5_000):
        node["x"] = {}
        node = node["x"]
    outcome = PIPELINE.run({"kind": "validate", "text": "Total 1.00", "data": nested})
    assert outcome.error.code == "INVALID_INPUT"


def test_nan_and_infinite_thresholds_are_invalid_input():
    for bad in (math.nan, math.inf, -math.inf):
        assert PIPELINE.run({"kind": "extract", "text": "x", "overall_threshold": bad}).error.code == "INVALID_INPUT"


def test_control_characters_in_a_document_are_data(globex):
    text, data = globex
    hostile = "\x00\x1b[31m" + text.replace(" ", "\u200b ") + "\x07"
    outcome = PIPELINE.validate(hostile, data, heuristics_only=True)
    assert outcome.status in ("ok", "needs_review")


@FAST
@given(
    HOSTILE_TEXT
    | JSON_VALUE.map(lambda v: json.dumps(v, allow_nan=True))
    | st.binary(max_size=200)
    | st.integers(1, 3000).map(lambda depth: "[" * depth + "]" * depth)
)
def test_the_strict_json_reader_returns_plain_finite_json_or_says_why(raw):
    from vetq.core.validation import MAX_JSON_DEPTH, json_problem, load_json

    try:
        value = load_json(raw, what="input")
    except InvalidInputError as exc:
        assert exc.message.startswith("input")
        return
    assert json_problem(value) is None
    json.dumps(value, allow_nan=False)  # nothing non-finite survived
    depth, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, (dict, list)):
            depth = max(depth, level)
            stack.extend((child, level + 1) for child in (item.values() if isinstance(item, dict) else item))
    assert depth <= MAX_JSON_DEPTH
