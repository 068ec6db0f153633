"""The real `openai` and `anthropic` SDKs, through vetq's clients, against the fake
provider on 127.0.0.1: every answer and every failure maps to the right type, and
one complete() is exactly one HTTP request."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from vetq.core.errors import ConfigError, ErrorCode
from vetq.core.llm.errors import (
    MalformedResponseError,
    ProviderHTTPError,
    ProviderNetworkError,
    ProviderTimeoutError,
    RateLimitedError,
)
from vetq.core.llm.factory import build_client
from vetq.core.llm.providers import AnthropicClient, OpenAIClient
from vetq.core.llm.types import LLMRequest, Message
from vetq.eval.fake_provider import FakeProvider

ROOT = Path(__file__).resolve().parents[1]
OPENAI_KEY = "sk-test-openai-DUMMYKEY-0123456789"
ANTHROPIC_KEY = "sk-ant-test-DUMMYKEY-0123456789"

REQUEST = LLMRequest(
    system="You extract invoices. Answer in JSON.",
    messages=(Message(role="user", content="Invoice from Globex, total 583.20 GBP"),),
    max_tokens=256,
    json_mode=True,
)


@pytest.fixture
def fake():
    provider = FakeProvider().start()
    try:
        yield provider
    finally:
        provider.stop()


@pytest.fixture(params=["openai", "anthropic"])
def vendor(request, fake, monkeypatch):
    """(client, fake) for each vendor, the SDK pointed at the fake through the env."""
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url_openai)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url_anthropic)
    for name in ("ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_CUSTOM_HEADERS", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID"):
        monkeypatch.delenv(name, raising=False)
    client = build_client(f"{request.param}:fake-model-1", timeout_s=5)
    return client


def only_request(fake: FakeProvider) -> dict:
    log = fake.log
    assert len(log) == 1, f"expected exactly one request to reach the fake, got {log}"
    return log[0]


# --------------------------------------------------------------------------- success


def test_success_maps_text_usage_finish_reason_and_headers(vendor, fake):
    fake.script(['{"vendor": "Globex"}'])
    answer = vendor.complete(REQUEST)
    assert answer.text == '{"vendor": "Globex"}'
    assert answer.model == "fake-model-1"
    assert answer.finish_reason == ("end_turn" if vendor.provider == "anthropic" else "stop")
    assert not answer.truncated and not answer.has_tool_calls
    assert answer.usage.prompt_tokens > 0 and answer.usage.completion_tokens > 0
    assert answer.usage.total_tokens == answer.usage.prompt_tokens + answer.usage.completion_tokens
    rl = answer.rate_limit
    assert rl.limit_requests == 10_000 and rl.remaining_requests == 9_999
    assert rl.limit_tokens == 10_000_000 and 0 < rl.remaining_tokens < 10_000_000
    assert rl.reset_requests_s is not None and 0 <= rl.reset_requests_s <= 61
    entry = only_request(fake)
    assert (entry["outcome"], entry["status"], entry["model"]) == ("ok", 200, "fake-model-1")
    assert entry["path"] == ("/v1/messages" if vendor.provider == "anthropic" else "/v1/chat/completions")


def test_request_shape_reaches_the_provider(vendor, fake):
    seen = []
    fake.set_responder(lambda path, body: seen.append(body) or "fine")
    assert vendor.complete(REQUEST).text == "fine"
    (body,) = seen
    assert body["model"] == "fake-model-1"
    assert body["max_tokens"] == 256
    if vendor.provider == "anthropic":
        assert "temperature" not in body  # anthropic 2.x has no temperature argument
        assert body["system"] == REQUEST.system
        assert body["messages"] == [{"role": "user", "content": REQUEST.messages[0].content}]
        assert "response_format" not in body
    else:
        assert body["messages"][0] == {"role": "system", "content": REQUEST.system}
        assert body["messages"][1]["content"] == REQUEST.messages[0].content
        assert body["response_format"] == {"type": "json_object"}
        assert body["temperature"] == 0.0


def test_anthropic_can_still_send_temperature_in_the_body(fake, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    seen = []
    fake.set_responder(lambda path, body: seen.append(body) or "x")
    client = AnthropicClient("m", base_url=fake.base_url_anthropic, send_temperature=True)
    client.complete(REQUEST.model_copy(update={"temperature": 0.3}))
    assert seen[0]["temperature"] == 0.3


def test_temperature_none_is_not_sent(vendor, fake):
    seen = []
    fake.set_responder(lambda path, body: seen.append(body) or "x")
    vendor.complete(REQUEST.model_copy(update={"temperature": None, "json_mode": False}))
    assert "temperature" not in seen[0]
    assert "response_format" not in seen[0]


def test_default_answer_is_valid_json(vendor, fake):
    assert json.loads(vendor.complete(REQUEST).text) == {"ok": True}


# --------------------------------------------------------------------------- failures


def test_429_maps_to_rate_limited_with_retry_after(vendor, fake):
    fake.push_fault({"kind": "429", "retry_after": 3})
    with pytest.raises(RateLimitedError) as info:
        vendor.complete(REQUEST)
    error = info.value
    assert error.retry_after_s == 3.0
    assert error.rate_limit.retry_after_s == 3.0
    assert error.rate_limit.limit_requests == 10_000
    assert error.retryable and error.code is ErrorCode.RATE_LIMITED
    assert only_request(fake)["outcome"] == "429"


@pytest.mark.parametrize("status", [503, 500, 529])
def test_5xx_maps_to_retryable_http_error(vendor, fake, status):
    fake.push_fault({"kind": "5xx", "status": status})
    with pytest.raises(ProviderHTTPError) as info:
        vendor.complete(REQUEST)
    assert info.value.status == status
    assert info.value.retryable
    assert info.value.code is ErrorCode.PROVIDER_HTTP_ERROR
    assert len(info.value.body) <= 300
    assert only_request(fake)["outcome"] == "5xx"


def test_4xx_is_not_retryable_and_never_leaks_the_key(vendor, fake):
    key = OPENAI_KEY if vendor.provider == "openai" else ANTHROPIC_KEY
    # a (hypothetical) provider that echoes the key in a long error body
    fake_body = "x" * 50 + key + "y" * 500
    fake.push_fault({"kind": "5xx", "status": 400, "body": {"error": {"message": fake_body, "type": "invalid"}}})
    with pytest.raises(ProviderHTTPError) as info:
        vendor.complete(REQUEST)
    error = info.value
    assert error.status == 400 and not error.retryable
    assert len(error.body) <= 300
    assert key not in error.body and key not in str(error) and key not in error.message
    assert "[REDACTED]" in error.body
    assert only_request(fake)["outcome"] == "4xx"


def test_non_json_error_body_is_kept_short(vendor, fake):
    fake.push_fault({"kind": "5xx", "status": 502, "body": "<html>" + "bad gateway " * 100 + "</html>"})
    with pytest.raises(ProviderHTTPError) as info:
        vendor.complete(REQUEST)
    assert info.value.status == 502 and info.value.retryable
    assert info.value.body.startswith("<html>bad gateway") and len(info.value.body) == 300


def test_tool_calls_are_flagged(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    anthropic_answer = {
        "content": [{"type": "text", "text": "a"}, {"type": "tool_use", "id": "t", "name": "f", "input": {}}],
        "stop_reason": "tool_use",
        "model": "c",
        "usage": {"input_tokens": 1, "output_tokens": 2},
    }
    answer = AnthropicClient("c", base_url="http://127.0.0.1:9")._read(anthropic_answer, {})
    assert answer.has_tool_calls and answer.text == "a" and answer.usage.total_tokens == 3
    openai_answer = {
        "choices": [
            {
                "message": {"role": "assistant", "content": None, "tool_calls": [{"id": "t", "type": "function"}]},
                "finish_reason": "tool_calls",
            }
        ],
        "model": "g",
    }
    answer = OpenAIClient("g", base_url="http://127.0.0.1:9/v1")._read(openai_answer, {})
    assert answer.has_tool_calls and answer.text == "" and answer.finish_reason == "tool_calls"


def test_timeout_maps_to_provider_timeout(fake, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    for client in (
        OpenAIClient("slow-model", timeout_s=0.5, base_url=fake.base_url_openai),
        AnthropicClient("slow-model", timeout_s=0.5, base_url=fake.base_url_anthropic),
    ):
        fake.reset()
        fake.push_fault({"kind": "timeout", "seconds": 2})
        # The answer comes after 2 s: an error, not an answer, means the client gave up first.
        with pytest.raises(ProviderTimeoutError) as info:
            client.complete(REQUEST)
        assert info.value.retryable and info.value.code is ErrorCode.TIMEOUT
        assert only_request(fake)["outcome"] == "timeout"


@pytest.mark.parametrize("variant", ["not_json", "wrong_shape"])
def test_malformed_maps_to_malformed_response(vendor, fake, variant):
    fake.push_fault({"kind": "malformed", "variant": variant})
    with pytest.raises(MalformedResponseError) as info:
        vendor.complete(REQUEST)
    assert info.value.code is ErrorCode.MALFORMED_RESPONSE
    assert not info.value.retryable
    assert only_request(fake)["outcome"] == "malformed"


def test_truncated_is_reported_not_raised(vendor, fake):
    fake.script(["abcdefghij"])
    fake.push_fault({"kind": "truncated"})
    answer = vendor.complete(REQUEST)
    assert answer.text == "abcde"
    assert answer.finish_reason == ("max_tokens" if vendor.provider == "anthropic" else "length")
    assert answer.truncated
    assert only_request(fake)["outcome"] == "truncated"


def test_connection_refused_maps_to_network_error(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    dead = FakeProvider().start()
    port = dead.port
    dead.stop()
    for client in (
        OpenAIClient("m", timeout_s=2, base_url=f"http://127.0.0.1:{port}/v1"),
        AnthropicClient("m", timeout_s=2, base_url=f"http://127.0.0.1:{port}"),
    ):
        with pytest.raises(ProviderNetworkError) as info:
            client.complete(REQUEST)
        assert info.value.retryable
        assert OPENAI_KEY not in str(info.value) and ANTHROPIC_KEY not in str(info.value)


def test_one_request_per_call_across_a_burst_of_failures(vendor, fake):
    """SDK retries are off: every call, success or failure, is exactly one request."""
    fake.push_fault({"kind": "5xx", "status": 503})
    fake.push_fault({"kind": "429", "retry_after": 0})
    fake.push_fault({"kind": "malformed"})
    for expected in (ProviderHTTPError, RateLimitedError, MalformedResponseError):
        with pytest.raises(expected):
            vendor.complete(REQUEST)
    vendor.complete(REQUEST)
    assert [e["outcome"] for e in fake.log] == ["5xx", "429", "malformed", "ok"]


def test_per_model_faults_and_scripts(vendor, fake):
    fake.push_fault({"kind": "5xx", "status": 503}, model="some-other-model")
    fake.script(["for me"], model="fake-model-1")
    fake.script(["shared"])
    assert vendor.complete(REQUEST).text == "for me"
    assert vendor.complete(REQUEST).text == "shared"
    assert [e["outcome"] for e in fake.log] == ["ok", "ok"]


# --------------------------------------------------------------------------- the fake itself


def test_rpm_enforced_over_the_window(fake, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    fake.control({"rpm": 3})
    client = OpenAIClient("m", timeout_s=5, base_url=fake.base_url_openai)
    remaining = [client.complete(REQUEST).rate_limit.remaining_requests for _ in range(3)]
    assert remaining == [2, 1, 0]
    with pytest.raises(RateLimitedError) as info:
        client.complete(REQUEST)
    assert 55 <= info.value.retry_after_s <= 60
    assert info.value.rate_limit.remaining_requests == 0
    log = fake.log
    assert [e["outcome"] for e in log] == ["ok", "ok", "ok", "429"]
    assert log[0]["time"] <= log[1]["time"] <= log[2]["time"] <= log[3]["time"]
    # the 429 did not count: lifting the limit to 4 admits exactly one more
    fake.control({"rpm": 4})
    client.complete(REQUEST)
    with pytest.raises(RateLimitedError):
        client.complete(REQUEST)
    # ... and the retry came before retry-after: logged as early
    assert fake.log[-1]["early"] and fake.log[-2]["early"]


def test_tpm_enforced(fake, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    client = AnthropicClient("m", timeout_s=5, base_url=fake.base_url_anthropic)
    client.complete(REQUEST)
    cost = fake.log[0]["tokens"]
    assert cost > REQUEST.max_tokens  # body length / 4 + max_tokens
    fake.reset()
    fake.control({"tpm": cost * 2 + 1})
    client.complete(REQUEST)
    client.complete(REQUEST)
    with pytest.raises(RateLimitedError) as info:
        client.complete(REQUEST)
    assert info.value.retry_after_s >= 55
    assert [e["outcome"] for e in fake.log] == ["ok", "ok", "429"]


def test_cooldown_marks_early_retries(fake, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    client = OpenAIClient("m", timeout_s=5, base_url=fake.base_url_openai)
    other = OpenAIClient("other", timeout_s=5, base_url=fake.base_url_openai)
    fake.push_fault({"kind": "429", "retry_after": 0.3}, model="m")
    with pytest.raises(RateLimitedError) as info:
        client.complete(REQUEST)
    assert info.value.retry_after_s == 1.0  # integer seconds, rounded up
    client.complete(REQUEST)  # too soon
    other.complete(REQUEST)  # another model is not cooling down
    time.sleep(1.05)
    client.complete(REQUEST)  # waited long enough
    assert [(e["model"], e["early"]) for e in fake.log] == [("m", False), ("m", True), ("other", False), ("m", False)]


def test_latency(fake, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    fake.control({"latency_ms": 200})
    client = OpenAIClient("m", timeout_s=5, base_url=fake.base_url_openai)
    started = time.monotonic()
    client.complete(REQUEST)
    assert time.monotonic() - started >= 0.19


def test_http_control_and_log_endpoints(fake):
    def post(path, payload):
        request = urllib.request.Request(
            fake.url + path,
            data=json.dumps(payload).encode(),
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, json.loads(response.read())

    status, state = post(
        "/_control", {"rpm": 7, "faults": [{"kind": "5xx", "status": 502}], "script": {"texts": ["scripted"]}}
    )
    assert status == 200 and state["rpm"] == 7 and state["faults_pending"] == 1 and state["script_pending"] == 1
    assert fake.rpm == 7

    body = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]}
    with pytest.raises(urllib.error.HTTPError) as info:
        post("/v1/chat/completions", body)
    assert info.value.code == 502
    status, answer = post("/v1/chat/completions", body)
    assert answer["choices"][0]["message"]["content"] == "scripted"

    with urllib.request.urlopen(fake.url + "/_log", timeout=5) as response:
        log = json.loads(response.read())
    assert [(e["outcome"], e["status"]) for e in log] == [("5xx", 502), ("ok", 200)]
    assert log == fake.log

    status, state = post("/_control", {"reset": True, "rpm": None})
    assert state["rpm"] is None and state["faults_pending"] == 0
    assert fake.log == []

    with pytest.raises(urllib.error.HTTPError) as info:
        post("/_control", {"faults": [{"kind": "explode"}]})
    assert info.value.code == 400


def test_push_fault_validates():
    provider = FakeProvider()
    with pytest.raises(ValueError):
        provider.push_fault({"kind": "meteor"})
    with pytest.raises(RuntimeError):
        provider.port  # noqa: B018 - not started


@pytest.mark.processes
def test_cli_serves_and_stops_on_sigterm():
    proc = subprocess.Popen(
        [sys.executable, "-m", "vetq.eval.fake_provider", "--port", "0", "--rpm", "5"],
        cwd=ROOT,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stderr.readline().strip()
        assert line.startswith("fake provider listening on http://127.0.0.1:")
        url = line.rsplit(" ", 1)[1]
        with urllib.request.urlopen(url + "/_log", timeout=5) as response:
            assert json.loads(response.read()) == []
    finally:
        proc.terminate()
        assert proc.wait(timeout=5) == 0


# --------------------------------------------------------------------------- import hygiene and config


@pytest.mark.processes
def test_importing_providers_does_not_import_the_sdks():
    code = (
        "import core.llm.providers, core.llm.scripted, core.llm.replay, sys; "
        "assert 'anthropic' not in sys.modules and 'openai' not in sys.modules, "
        "[m for m in sys.modules if m.split('.')[0] in ('anthropic', 'openai')]"
    )
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, timeout=60)


def test_missing_sdk_is_a_config_error_naming_the_extra(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    monkeypatch.setitem(sys.modules, "anthropic", None)  # makes `import anthropic` fail
    monkeypatch.setitem(sys.modules, "openai", None)
    with pytest.raises(ConfigError, match=r"pip install 'vetq\[anthropic\]'"):
        build_client("anthropic:claude-x")
    with pytest.raises(ConfigError, match=r"pip install 'vetq\[openai\]'"):
        build_client("openai:gpt-x")
    with pytest.raises(ConfigError, match=r"vetq\[bedrock\]"):
        build_client("bedrock:anthropic.claude-x-v1:0")


def test_clients_never_show_their_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    for client in (build_client("openai:gpt-x"), build_client("anthropic:claude-x")):
        assert OPENAI_KEY not in repr(client) and ANTHROPIC_KEY not in repr(client)
    assert os.environ["OPENAI_API_KEY"] == OPENAI_KEY
