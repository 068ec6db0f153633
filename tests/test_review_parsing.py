"""JSON extraction and the normalisation of loose model spellings."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from vetq.core.llm.json_extract import (
    NoJSONObjectError,
    extract_json_object,
    first_balanced_object,
    normalize_confidence,
)
from vetq.core.review.parsing import normalize_optional_text, normalize_verdict
from vetq.core.review.schema import VerdictAnswer


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("KEEP", "KEEP"),
        ("keep", "KEEP"),
        (" Modify ", "MODIFY"),
        ("replace", "REPLACE"),
        ("insufficient evidence", "INSUFFICIENT_EVIDENCE"),
        ("INSUFFICIENT-EVIDENCE", "INSUFFICIENT_EVIDENCE"),
        ("Insufficient_Evidence", "INSUFFICIENT_EVIDENCE"),
        ("  insufficient   evidence ", "INSUFFICIENT_EVIDENCE"),
    ],
)
def test_verdict_normalisation(raw: str, expected: str) -> None:
    assert normalize_verdict(raw) == expected


@pytest.mark.parametrize("raw", ["ok", "", "KEEPING", None, 1, "reject"])
def test_unknown_verdicts_are_refused(raw: object) -> None:
    with pytest.raises(ValueError):
        normalize_verdict(raw)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [(0.8, 0.8), ("0.8", 0.8), ("80%", 0.8), (80, 0.8), ("80", 0.8), (1, 1.0), (0, 0.0), ("100%", 1.0), ("5 %", 0.05)],
)
def test_confidence_normalisation(raw: object, expected: float) -> None:
    assert normalize_confidence(raw) == pytest.approx(expected)


@pytest.mark.parametrize("raw", [-0.1, 101, "high", None, True, "nan", float("inf"), "150%"])
def test_bad_confidences_are_refused(raw: object) -> None:
    with pytest.raises(ValueError):
        normalize_confidence(raw)


@pytest.mark.parametrize("raw", ["n/a", "N/A", "none", "None", "null", "", "   ", None, "n/a."])
def test_empty_better_alternative_becomes_none(raw: object) -> None:
    assert normalize_optional_text(raw) is None


def test_real_alternative_is_kept() -> None:
    assert normalize_optional_text("  Use an outbox table.  ") == "Use an outbox table."


def _answer(**overrides: object) -> dict:
    data = {
        "verdict": " keep ",
        "recommendation": "Go ahead.",
        "critical_assumptions": [f"a{i}" for i in range(14)],
        "material_risks": [f"r{i}" for i in range(11)],
        "better_alternative": "N/A",
        "falsification_probe": {"description": "load test", "expected_signal": "p99 above 200ms"},
        "confidence": "80%",
        "extra_chatter": "ignored",
    }
    data.update(overrides)
    return data


def test_verdict_answer_normalises_and_truncates() -> None:
    answer = VerdictAnswer.model_validate(_answer())
    assert answer.verdict == "KEEP"
    assert answer.confidence == pytest.approx(0.8)
    assert answer.better_alternative is None
    assert answer.critical_assumptions == [f"a{i}" for i in range(10)]
    assert len(answer.material_risks) == 10


def test_verdict_answer_needs_a_probe() -> None:
    data = _answer()
    del data["falsification_probe"]
    with pytest.raises(ValidationError):
        VerdictAnswer.model_validate(data)


def test_the_repair_turn_names_each_broken_field_and_counts_the_rest() -> None:
    import json

    from tests.test_review_service import POS, VER, review

    broken = _answer(verdict="MAYBE", recommendation=None, critical_assumptions=7, material_risks=5, confidence="x")
    _outcome, client = review([POS, json.dumps(broken), VER])
    repair = client.requests[2].messages[-1].content
    assert "the JSON did not match the required shape: verdict: verdict must be one of" in repair
    assert "recommendation: Input should be a valid string" in repair
    assert "and 1 more problem(s)" in repair  # five problems, four named


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1}',
        '  {"a": 1}  ',
        '```json\n{"a": 1}\n```',
        '```\n{"a": 1}\n```',
        '<think>I should answer {"a": 2}? no.</think>{"a": 1}',
        '<think>\nlong reasoning with { braces\n</think>\n```json\n{"a": 1}\n```',
        '<think>unclosed reasoning goes on and on\n{"a": 1}',
        'reasoning without an opening tag</think>{"a": 1}',
        'Sure! Here is my review:\n{"a": 1}\nHope this helps.',
        'Here: ```json\n{"a": 1}\n``` done',
        'prose {not json} then {"a": 1}',
    ],
)
def test_json_extraction(text: str) -> None:
    assert extract_json_object(text) == {"a": 1}


def test_braces_inside_strings_do_not_confuse_matching() -> None:
    text = 'Answer: {"s": "a } tricky { string \\" with quote", "n": {"k": [1, 2]}} trailing } junk'
    assert extract_json_object(text) == {"s": 'a } tricky { string " with quote', "n": {"k": [1, 2]}}
    assert first_balanced_object('x {"a": "}"} y') == '{"a": "}"}'


@pytest.mark.parametrize(
    "text", ["", "no json here", "<think>only thinking", '{"unterminated": ', "[1, 2, 3]", "```\n```"]
)
def test_no_json_object(text: str) -> None:
    with pytest.raises(NoJSONObjectError):
        extract_json_object(text)


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3),
    max_leaves=10,
)


@given(
    obj=st.dictionaries(st.text(max_size=10), _json_values, max_size=4),
    prefix=st.sampled_from(["", "Here you go:\n", "<think>a { b</think>", "```json\n"]),
    suffix=st.sampled_from(["", "\n```", " -- done } ", "\nThanks!"]),
)
def test_extraction_roundtrip(obj: dict, prefix: str, suffix: str) -> None:
    import json

    assert extract_json_object(prefix + json.dumps(obj) + suffix) == obj


def test_fences_inside_json_strings_survive() -> None:
    assert extract_json_object('```json\n{"a": "use ```code``` here"}\n```') == {"a": "use ```code``` here"}
    assert extract_json_object('{"a": "```"}') == {"a": "```"}
