"""The model boundary's offline clients and contract types: scripted, replay,
recording, rate-limit header parsing, and `provider:model` specs."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from vetq.core.errors import ConfigError, ErrorCode
from vetq.core.llm.client import LLMClient, ModelSpec
from vetq.core.llm.errors import RateLimitedError
from vetq.core.llm.factory import build_client
from vetq.core.llm.replay import FIXTURE_VERSION, MissingRecordingError, RecordingClient, ReplayClient
from vetq.core.llm.scripted import ScriptedLLMClient, ScriptExhaustedError
from vetq.core.llm.types import LLMRequest, LLMResponse, Message, RateLimitInfo, Usage

NOW = datetime(2025, 1, 1, 12, 0, 0, tzinfo=UTC)


def req(text: str = "hello", system: str = "You extract invoices.\nAnswer in JSON.") -> LLMRequest:
    return LLMRequest(system=system, messages=(Message(role="user", content=text),))


# --------------------------------------------------------------------------- scripted


def test_scripted_answers_in_order_and_records_requests():
    canned = LLMResponse(text="canned", finish_reason="max_tokens", model="m", usage=Usage.of(5, 7))
    client = ScriptedLLMClient(["first answer", canned])
    assert isinstance(client, LLMClient)
    assert client.remaining == 2

    first = client.complete(req("a"))
    assert first.text == "first answer"
    assert first.finish_reason == "stop"
    assert first.model == "scripted-model"
    assert first.usage.completion_tokens == len("first answer") // 4
    assert first.usage.total_tokens == first.usage.prompt_tokens + first.usage.completion_tokens

    assert client.complete(req("b")) is canned
    assert client.remaining == 0
    assert [r.messages[0].content for r in client.requests] == ["a", "b"]


def test_scripted_raises_scripted_exceptions():
    boom = RateLimitedError("slow down", retry_after_s=2)
    client = ScriptedLLMClient([boom, "ok"], provider="openai", model="gpt-x")
    assert (client.provider, client.model) == ("openai", "gpt-x")
    with pytest.raises(RateLimitedError) as info:
        client.complete(req())
    assert info.value is boom
    assert client.complete(req()).text == "ok"


def test_scripted_exhaustion_is_loud_and_counts():
    client = ScriptedLLMClient(["only one"])
    client.complete(req())
    with pytest.raises(ScriptExhaustedError, match="held 1 answer") as info:
        client.complete(req())
    assert isinstance(info.value, AssertionError)
    assert len(client.requests) == 2  # the extra call is still recorded
    assert client.remaining == 0

    with pytest.raises(ScriptExhaustedError, match="held 0 answers"):
        ScriptedLLMClient([]).complete(req())


def test_scripted_rejects_nonsense_answers():
    with pytest.raises(TypeError):
        ScriptedLLMClient([42])  # type: ignore[list-item]


# --------------------------------------------------------------------------- replay / record


def test_replay_hit_from_dict_and_file(tmp_path):
    request = req("invoice text")
    recording = {
        "text": '{"total": 3}',
        "finish_reason": "end_turn",
        "model": "claude-x",
        "usage": {"prompt_tokens": 10, "completion_tokens": 4, "total_tokens": 14},
    }
    client = ReplayClient({request.fingerprint(): recording})
    answer = client.complete(request)
    assert answer.text == '{"total": 3}'
    assert answer.finish_reason == "end_turn"
    assert answer.model == "claude-x"
    assert answer.usage == Usage(prompt_tokens=10, completion_tokens=4, total_tokens=14)

    path = tmp_path / "fixture.json"
    path.write_text(json.dumps({"version": 1, "recordings": {request.fingerprint(): recording}}))
    from_file = ReplayClient(path)
    assert from_file.complete(request).text == '{"total": 3}'
    assert (from_file.provider, from_file.model) == ("replay", "replay-model")
    assert isinstance(from_file, LLMClient)


def test_replay_miss_names_fingerprint_and_system_line_but_not_the_document():
    client = ReplayClient({})
    request = req("SECRET DOCUMENT BODY 4111-1111", system="You extract invoices.\nSecond line stays out.")
    with pytest.raises(MissingRecordingError) as info:
        client.complete(request)
    message = str(info.value)
    assert isinstance(info.value, ConfigError)
    assert info.value.code is ErrorCode.CONFIG_ERROR
    assert request.fingerprint() in message
    assert "You extract invoices." in message
    assert "SECRET" not in message and "4111" not in message
    assert "Second line" not in message


def test_replay_missing_or_broken_fixture_is_config_error(tmp_path):
    with pytest.raises(ConfigError, match="does not exist"):
        ReplayClient(tmp_path / "nope.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ConfigError):
        ReplayClient(bad)
    wrong_version = tmp_path / "v2.json"
    wrong_version.write_text(json.dumps({"version": 2, "recordings": {}}))
    with pytest.raises(ConfigError, match="version"):
        ReplayClient(wrong_version)


def test_recording_round_trip_merges_and_replays(tmp_path):
    path = tmp_path / "sub" / "fixture.json"
    inner = ScriptedLLMClient(
        [
            LLMResponse(text="one", finish_reason="stop", model="gpt-x", usage=Usage.of(3, 1)),
            "two",
        ],
        provider="openai",
        model="gpt-x",
    )
    recorder = RecordingClient(inner, path)
    assert (recorder.provider, recorder.model) == ("openai", "gpt-x")
    r1, r2 = req("first"), req("second")
    assert recorder.complete(r1).text == "one"

    # a second recorder (a later --record run) merges into the same file
    RecordingClient(ScriptedLLMClient(["two"]), path).complete(r2)

    data = json.loads(path.read_text())
    assert data["version"] == FIXTURE_VERSION
    assert set(data["recordings"]) == {r1.fingerprint(), r2.fingerprint()}
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]

    replay = ReplayClient(path)
    one = replay.complete(r1)
    assert (one.text, one.finish_reason, one.model) == ("one", "stop", "gpt-x")
    assert one.usage == Usage.of(3, 1)
    assert replay.complete(r2).text == "two"
    with pytest.raises(MissingRecordingError):
        replay.complete(req("third"))


def test_recording_does_not_record_failures(tmp_path):
    path = tmp_path / "fixture.json"
    recorder = RecordingClient(ScriptedLLMClient([RateLimitedError("no", retry_after_s=1)]), path)
    with pytest.raises(RateLimitedError):
        recorder.complete(req())
    assert not path.exists()


def test_fingerprint_ignores_nothing_that_shapes_the_answer():
    base = req("x")
    assert base.fingerprint() == req("x").fingerprint()
    assert base.fingerprint() != req("y").fingerprint()
    assert base.fingerprint() != base.model_copy(update={"max_tokens": 9}).fingerprint()
    assert base.fingerprint() != base.model_copy(update={"json_mode": True}).fingerprint()


# --------------------------------------------------------------------------- rate-limit headers


def test_openai_rate_limit_headers_with_duration_strings():
    info = RateLimitInfo.from_headers(
        {
            "x-ratelimit-limit-requests": "500",
            "x-ratelimit-remaining-requests": "0",
            "x-ratelimit-reset-requests": "6m0s",
            "x-ratelimit-limit-tokens": "30000",
            "x-ratelimit-remaining-tokens": "29000",
            "x-ratelimit-reset-tokens": "20ms",
        },
        now=NOW,
    )
    assert (info.limit_requests, info.remaining_requests) == (500, 0)
    assert (info.limit_tokens, info.remaining_tokens) == (30000, 29000)
    assert info.reset_requests_s == pytest.approx(360.0)
    assert info.reset_tokens_s == pytest.approx(0.02)
    assert info.retry_after_s is None
    assert info.wait_hint_s() == pytest.approx(360.0)  # the exhausted budget's reset


@pytest.mark.parametrize("value, seconds", [("1s", 1.0), ("1.5s", 1.5), ("1h2m3.5s", 3723.5), ("250ms", 0.25)])
def test_openai_duration_spellings(value, seconds):
    info = RateLimitInfo.from_headers({"x-ratelimit-reset-tokens": value}, now=NOW)
    assert info.reset_tokens_s == pytest.approx(seconds)


def test_anthropic_rate_limit_headers_with_rfc3339_resets():
    reset = (NOW + timedelta(seconds=42)).isoformat().replace("+00:00", "Z")
    info = RateLimitInfo.from_headers(
        {
            "Anthropic-RateLimit-Requests-Limit": "50",
            "anthropic-ratelimit-requests-remaining": "0",
            "anthropic-ratelimit-requests-reset": reset,
            "anthropic-ratelimit-tokens-limit": "40000",
            "anthropic-ratelimit-tokens-remaining": "12",
            "anthropic-ratelimit-tokens-reset": "2025-01-01T12:00:10+00:00",
            "retry-after": "7",
        },
        now=NOW,
    )
    assert (info.limit_requests, info.remaining_requests) == (50, 0)
    assert (info.limit_tokens, info.remaining_tokens) == (40000, 12)
    assert info.reset_requests_s == pytest.approx(42.0)
    assert info.reset_tokens_s == pytest.approx(10.0)
    assert info.retry_after_s == 7.0
    assert info.wait_hint_s() == 7.0  # Retry-After wins


def test_rate_limit_headers_edge_cases():
    assert RateLimitInfo.from_headers(None) == RateLimitInfo()
    assert RateLimitInfo.from_headers({"retry-after-ms": "1500", "retry-after": "9"}).retry_after_s == 1.5
    past = RateLimitInfo.from_headers({"anthropic-ratelimit-requests-reset": "2024-12-31T00:00:00Z"}, now=NOW)
    assert past.reset_requests_s == 0.0
    junk = RateLimitInfo.from_headers({"x-ratelimit-remaining-requests": "lots", "retry-after": "soon"}, now=NOW)
    assert junk.remaining_requests is None and junk.retry_after_s is None
    http_date = RateLimitInfo.from_headers({"retry-after": "Wed, 01 Jan 2025 12:00:30 GMT"}, now=NOW)
    assert http_date.retry_after_s == pytest.approx(30.0)


# --------------------------------------------------------------------------- model specs


def test_model_spec_parse():
    spec = ModelSpec.parse("anthropic:claude-sonnet-4-5")
    assert (spec.provider, spec.model, str(spec)) == ("anthropic", "claude-sonnet-4-5", "anthropic:claude-sonnet-4-5")
    # Bedrock model ids carry a colon of their own
    assert ModelSpec.parse("bedrock:anthropic.claude-3-5-sonnet-20240620-v1:0").model == (
        "anthropic.claude-3-5-sonnet-20240620-v1:0"
    )


@pytest.mark.parametrize("bad", ["", "claude", "anthropic:", ":claude", "nope:model", None])
def test_model_spec_parse_errors(bad):
    with pytest.raises(ConfigError) as info:
        ModelSpec.parse(bad, variable="VETQ_EXTRACT_MODEL")  # type: ignore[arg-type]
    assert "VETQ_EXTRACT_MODEL" in str(info.value)
    assert info.value.code is ErrorCode.CONFIG_ERROR


# --------------------------------------------------------------------------- build_client config errors


def test_build_client_missing_keys_name_the_variable(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="ANTHROPIC_API_KEY"):
        build_client(ModelSpec.parse("anthropic:claude-x"))
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        build_client("openai:gpt-x")


def test_build_client_replay_and_scripted(tmp_path):
    path = tmp_path / "f.json"
    request = req()
    path.write_text(json.dumps({"version": 1, "recordings": {request.fingerprint(): {"text": "r"}}}))
    client = build_client(f"replay:{path}")
    assert client.complete(request).text == "r"
    with pytest.raises(ConfigError):
        build_client("scripted:x")


def test_build_client_bedrock_without_region_or_sdk_is_config_error(monkeypatch):
    monkeypatch.delenv("AWS_REGION", raising=False)
    monkeypatch.delenv("AWS_DEFAULT_REGION", raising=False)
    monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", "bedrock-dummy-token")  # skips the botocore requirement
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    with pytest.raises(ConfigError) as info:
        build_client("bedrock:anthropic.claude-x-v1:0")
    assert "bedrock-dummy-token" not in str(info.value)


def test_bedrock_builds_with_region(monkeypatch):
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", "bedrock-dummy-token")
    client = build_client("bedrock:anthropic.claude-x-v1:0")
    assert (client.provider, client.model) == ("bedrock", "anthropic.claude-x-v1:0")
    assert "bedrock-dummy-token" not in repr(client)


# --------------------------------------------------------------------------- model profiles


def test_model_profiles_declare_what_a_known_model_accepts():
    from vetq.core.llm.profiles import DEFAULT_PROFILE, declared_profile, profile_for

    for model in ("o1", "o3-mini", "o4-mini", "gpt-5", "gpt-5-mini"):
        profile = profile_for("openai", model)
        assert (profile.token_field, profile.temperature, profile.reasoning_effort) == (
            "max_completion_tokens",
            False,
            True,
        ), model
    assert profile_for("openai", "o1-mini").json_mode is False
    assert profile_for("openai", "gpt-5-chat-latest").temperature is True  # the chat model does not reason
    assert profile_for("openai", "gpt-4o").reasoning_effort is False and profile_for("openai", "gpt-4o").temperature
    assert profile_for("bedrock", "us.anthropic.claude-sonnet-4-5-v1:0") == profile_for("anthropic", "claude-x")
    assert declared_profile("openai", "my-local-llama") is None
    assert profile_for("openai", "my-local-llama") == DEFAULT_PROFILE
    shaped = profile_for("openai", "o3").shape(req().model_copy(update={"temperature": 0.2, "json_mode": True}))
    assert (shaped.temperature, shaped.max_tokens_field, shaped.json_mode) == (None, "max_completion_tokens", True)


# --------------------------------------------------------------------------- token estimate


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", 0),
        ("abcd", 2),  # ceil(4 / 3)
        ("abc", 1),
        ("é", 1),  # one per non-ASCII character
        ("prix: 12 €, façade", 6 + 2),  # 16 ASCII -> 6, "€" and "ç" one each
        ("\x7f\x80", 1 + 1),  # the last ASCII character and the first beyond it
        ("日本語 ok 😀", 2 + 4),  # " ok " -> 2, four CJK/emoji characters
    ],
)
def test_token_estimate_counts_ascii_by_three_and_every_other_character_as_one(text, expected):
    from vetq.core.llm.tokens import estimate_text_tokens

    assert estimate_text_tokens(text) == expected
