"""A review's parameter fallbacks change what reaches the provider: asserted on the
bodies the fake provider receives over HTTP from the real openai SDK."""

from __future__ import annotations

import pytest

from tests.conftest import serving_fake_provider
from tests.test_review_service import POS, VER, make_request
from vetq.core.llm.gate import DirectGate
from vetq.core.llm.providers import OpenAIClient
from vetq.core.llm.types import LLMRequest, Message
from vetq.core.review.schema import ReviewConfig, ReviewError, ReviewResult
from vetq.core.review.service import run_review

REFUSED_MAX_TOKENS = {"error": {
    "message": "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' "
               "instead.", "type": "invalid_request_error", "param": "max_tokens", "code": "unsupported_parameter",
}}  # fmt: skip
REFUSED_REASONING = {
    "error": {"message": "Unrecognized request argument supplied: reasoning_effort", "type": "invalid_request_error"}
}
REFUSED_TEMPERATURE = {
    "error": {
        "message": "Unsupported value: 'temperature' does not support 0.2 with this model.",
        "type": "invalid_request_error",
        "param": "temperature",
    }
}


def reviewer_answers(bodies: list[dict]):
    """The position for a Phase-1 conversation, the verdict once the proposal is revealed."""

    def respond(path: str, body: dict) -> str:
        bodies.append(body)
        return POS if len(body["messages"]) <= 2 else VER

    return respond


def test_the_openai_body_follows_the_request_fields(monkeypatch):
    bodies: list[dict] = []
    with serving_fake_provider(monkeypatch, lambda path, body: bodies.append(body) or "{}"):
        client = OpenAIClient("fake-reviewer")
        request = LLMRequest(
            system="s",
            messages=(Message(role="user", content="hi"),),
            max_tokens=300,
            temperature=0.2,
            reasoning_effort="low",
            max_tokens_field="max_completion_tokens",
        )
        client.complete(request)
        client.complete(request.model_copy(update={"max_tokens_field": "max_tokens", "reasoning_effort": None}))
    renamed, plain = bodies
    assert renamed["max_completion_tokens"] == 300 and "max_tokens" not in renamed
    assert renamed["reasoning_effort"] == "low" and renamed["temperature"] == 0.2
    assert plain["max_tokens"] == 300 and "max_completion_tokens" not in plain and "reasoning_effort" not in plain


@pytest.mark.parametrize(
    ("refusal", "config", "note", "check"),
    [
        (
            REFUSED_MAX_TOKENS,
            ReviewConfig(),
            "renamed max_tokens to max_completion_tokens after HTTP 400",
            lambda body: "max_tokens" not in body and body["max_completion_tokens"] > 0,
        ),
        (
            REFUSED_REASONING,
            ReviewConfig(reasoning_effort="high"),
            "dropped reasoning_effort after HTTP 400",
            lambda body: "reasoning_effort" not in body and "max_tokens" in body,
        ),
        (
            REFUSED_TEMPERATURE,
            ReviewConfig(),
            "dropped temperature after HTTP 400",
            lambda body: "temperature" not in body,
        ),
    ],
)
def test_a_review_fallback_changes_the_body_that_is_sent(monkeypatch, refusal, config, note, check):
    bodies: list[dict] = []
    with serving_fake_provider(monkeypatch, reviewer_answers(bodies)) as fake:
        fake.push_fault({"kind": "5xx", "status": 400, "body": refusal})
        outcome = run_review(make_request(), OpenAIClient("fake-reviewer"), gate=DirectGate(), config=config)
        statuses = [entry["status"] for entry in fake.log]
    assert isinstance(outcome, ReviewResult), outcome
    assert outcome.meta.fallbacks == [note]
    assert statuses == [400, 200, 200]  # the refused call, then both phases answered
    assert len(bodies) == 2 and all(check(body) for body in bodies), bodies


def test_configured_reasoning_effort_reaches_the_provider(monkeypatch):
    bodies: list[dict] = []
    with serving_fake_provider(monkeypatch, reviewer_answers(bodies)):
        outcome = run_review(
            make_request(),
            OpenAIClient("fake-reviewer"),
            gate=DirectGate(),
            config=ReviewConfig(reasoning_effort="high"),
        )
    assert isinstance(outcome, ReviewResult)
    assert [body.get("reasoning_effort") for body in bodies] == ["high", "high"]


def test_a_known_reasoning_model_is_sent_what_it_accepts_the_first_time(monkeypatch):
    bodies: list[dict] = []
    with serving_fake_provider(monkeypatch, reviewer_answers(bodies)) as fake:
        outcome = run_review(make_request(), OpenAIClient("gpt-5-mini"), gate=DirectGate(), config=ReviewConfig())
        statuses = [entry["status"] for entry in fake.log]
    assert isinstance(outcome, ReviewResult), outcome
    assert statuses == [200, 200] and outcome.meta.fallbacks == []  # no refused request to learn from
    for body in bodies:
        assert "max_tokens" not in body and body["max_completion_tokens"] > 0
        assert "temperature" not in body
        assert body["response_format"] == {"type": "json_object"}


def test_a_known_model_that_refuses_gets_no_fallback(monkeypatch):
    with serving_fake_provider(monkeypatch, reviewer_answers([])) as fake:
        fake.push_fault({"kind": "5xx", "status": 400, "body": REFUSED_TEMPERATURE})
        outcome = run_review(make_request(), OpenAIClient("gpt-4o-mini"), gate=DirectGate(), config=ReviewConfig())
        statuses = [entry["status"] for entry in fake.log]
    assert isinstance(outcome, ReviewError) and outcome.error.code == "PROVIDER_HTTP_ERROR"
    assert statuses == [400]


def test_what_an_unknown_model_refused_is_learned_for_the_process(monkeypatch):
    bodies: list[dict] = []
    with serving_fake_provider(monkeypatch, reviewer_answers(bodies)) as fake:
        fake.push_fault({"kind": "5xx", "status": 400, "body": REFUSED_MAX_TOKENS})
        first = run_review(make_request(), OpenAIClient("fake-reviewer"), gate=DirectGate(), config=ReviewConfig())
        # Another review, another client of the same model: no refusal to learn from again.
        second = run_review(make_request(), OpenAIClient("fake-reviewer"), gate=DirectGate(), config=ReviewConfig())
        statuses = [entry["status"] for entry in fake.log]
    assert isinstance(first, ReviewResult) and isinstance(second, ReviewResult)
    assert first.meta.fallbacks == ["renamed max_tokens to max_completion_tokens after HTTP 400"]
    assert second.meta.fallbacks == []
    assert statuses == [400, 200, 200, 200, 200]
    assert len(bodies) == 4 and all("max_tokens" not in b and b["max_completion_tokens"] > 0 for b in bodies)
