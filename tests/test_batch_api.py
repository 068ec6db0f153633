"""core.llm.batch_api through the real SDKs over HTTP to the fake provider's Batch APIs:
every request of a batch comes back as one of four outcomes, refusals are typed, and a
request the results leave out is never dropped."""

from __future__ import annotations

import json
import time

import pytest

from vetq.core.errors import ConfigError
from vetq.core.llm.batch_api import (
    BatchAPI,
    BatchTooLargeError,
    SubmitAbandonedError,
    batch_api_for,
    created_nothing,
)
from vetq.core.llm.errors import (
    ProviderHTTPError,
    ProviderNetworkError,
    ProviderTimeoutError,
    RateLimitedError,
)
from vetq.core.llm.providers import AnthropicClient, OpenAIClient
from vetq.core.llm.scripted import ScriptedLLMClient
from vetq.core.llm.types import LLMRequest, Message
from vetq.eval.fake_provider import FakeProvider


@pytest.fixture
def fake():
    provider = FakeProvider(seed=3).start()
    yield provider
    provider.stop()


def api_of(fake: FakeProvider, provider: str) -> BatchAPI:
    if provider == "anthropic":
        client = AnthropicClient("claude-x", base_url=fake.base_url_anthropic, api_key="sk-ant-not-real")
    else:
        client = OpenAIClient("gpt-x", base_url=fake.base_url_openai, api_key="sk-not-real")
    return batch_api_for(client)


def request(text: str, max_tokens: int = 64) -> LLMRequest:
    return LLMRequest(system="Answer in JSON.", messages=(Message(role="user", content=text),), max_tokens=max_tokens)


def wait_ended(api: BatchAPI, batch_id: str, timeout: float = 10.0):
    deadline = time.monotonic() + timeout
    while True:
        state = api.retrieve(batch_id)
        if state.ended:
            return state
        assert time.monotonic() < deadline, f"batch {batch_id} did not end"
        time.sleep(0.05)


def results_when_ready(api: BatchAPI, batch_id: str, ids: list[str], timeout: float = 10.0):
    deadline = time.monotonic() + timeout
    while True:
        try:
            return {o.custom_id: o for o in api.results(batch_id, ids)}
        except ProviderHTTPError:
            assert time.monotonic() < deadline
            time.sleep(0.05)


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_every_request_ends_in_one_of_four_outcomes(fake, provider):
    api = api_of(fake, provider)
    fake.set_responder(lambda path, body: json.dumps({"echo": json.dumps(body)[-40:]}))
    fake.configure_batches(batch_delay=0.2, batch_error_ids={"c-err": None}, batch_expire_ids=["c-exp"])
    ids = ["c-ok-1", "c-ok-2", "c-err", "c-exp"]
    lines = [api.line(custom_id, request(f"document {custom_id}")) for custom_id in ids]
    batch_id = api.submit(lines)
    state = wait_ended(api, batch_id)
    assert not state.failed
    assert sum(state.counts.values()) == len(ids)
    outcomes = results_when_ready(api, batch_id, ids)
    assert {k: v.kind for k, v in outcomes.items()} == {
        "c-ok-1": "succeeded",
        "c-ok-2": "succeeded",
        "c-err": "errored",
        "c-exp": "expired",
    }
    answer = outcomes["c-ok-1"].response
    assert answer is not None and json.loads(answer.text)["echo"]
    assert answer.usage.prompt_tokens > 0 and answer.usage.completion_tokens > 0
    assert not answer.cached
    error = outcomes["c-err"].error
    assert isinstance(error, ProviderHTTPError) and error.status == 400 and not error.retryable


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_request_the_results_leave_out_reads_as_expired(fake, provider):
    api = api_of(fake, provider)
    batch_id = api.submit([api.line("c-1", request("one"))])
    wait_ended(api, batch_id)
    outcomes = results_when_ready(api, batch_id, ["c-1", "c-never-sent"])
    assert outcomes["c-1"].kind == "succeeded"
    assert outcomes["c-never-sent"].kind == "expired"


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_canceled_batch_reports_its_unrun_requests_canceled(fake, provider):
    api = api_of(fake, provider)
    fake.configure_batches(batch_delay=30.0)
    ids = ["c-1", "c-2"]
    batch_id = api.submit([api.line(i, request(i)) for i in ids])
    assert not api.retrieve(batch_id).ended
    api.cancel(batch_id)
    wait_ended(api, batch_id)
    outcomes = results_when_ready(api, batch_id, ids)
    assert {o.kind for o in outcomes.values()} == {"canceled"}


@pytest.mark.parametrize(
    ("provider", "knobs"),
    [
        ("anthropic", {"max_batch_requests": 2}),
        ("anthropic", {"max_batch_bytes": 600}),
        ("openai", {"max_batch_requests": 2}),
        ("openai", {"max_batch_bytes": 600}),
    ],
)
def test_a_submission_over_the_limits_is_refused_as_too_large(fake, provider, knobs):
    api = api_of(fake, provider)
    fake.configure_batches(**knobs)
    lines = [api.line(f"c-{i}", request("x" * 200)) for i in range(3)]
    with pytest.raises(BatchTooLargeError):
        api.submit(lines)


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_the_queued_token_cap_is_a_rate_limit_with_a_wait(fake, provider):
    api = api_of(fake, provider)
    fake.configure_batches(batch_delay=30.0, max_queued_tokens=100)
    api.submit([api.line("c-1", request("first", max_tokens=80))])
    with pytest.raises(RateLimitedError) as refused:
        api.submit([api.line("c-2", request("second", max_tokens=80))])
    assert refused.value.retry_after_s is not None and refused.value.retry_after_s > 0


def test_openai_failing_a_batch_says_whether_for_capacity_or_size(fake):
    api = api_of(fake, "openai")
    fake.configure_batches(openai_limit_style="failed_batch", max_batch_requests=1)
    too_many = api.submit([api.line(f"c-{i}", request("x")) for i in range(2)])
    state = wait_ended(api, too_many)
    assert state.failed and state.refused_for_size and not state.refused_for_capacity
    fake.configure_batches(max_batch_requests=None, max_queued_tokens=10, batch_delay=30.0)
    capped = api.submit([api.line("c-9", request("x", max_tokens=64))])
    state = wait_ended(api, capped)
    assert state.failed and state.refused_for_capacity and "token_limit_exceeded" in (state.reason or "")


def test_a_client_without_a_batch_api_is_a_config_error():
    with pytest.raises(ConfigError, match="no batch API"):
        batch_api_for(ScriptedLLMClient([]))


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_the_provider_receives_the_same_body_on_either_lane(fake, provider):
    api = api_of(fake, provider)
    seen: list[dict] = []
    fake.set_responder(lambda path, body: seen.append(body) or '{"ok": true}')
    ask = request("same question")
    realtime = api._llm.complete(ask)
    batch_id = api.submit([api.line("c-1", ask)])
    wait_ended(api, batch_id)
    bulk = results_when_ready(api, batch_id, ["c-1"])["c-1"].response
    assert len(seen) == 2 and seen[0] == seen[1]
    assert bulk is not None and bulk.text == realtime.text and bulk.usage == realtime.usage


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_submitted_batch_is_found_by_its_marker_and_size(fake, provider):
    api = api_of(fake, provider)
    start = time.time()
    mine = api.submit([api.line(f"m-{i}", request(f"mine {i}")) for i in range(2)], marker="sub-mine")
    other = api.submit([api.line(f"o-{i}", request(f"other {i}")) for i in range(3)], marker="sub-other")
    window = (start - 60, time.time() + 60)
    assert api.find("sub-mine", 2, *window) == [mine]
    assert api.find("sub-other", 3, *window) == [other]
    assert api.find("sub-mine", 2, window[1], window[1] + 60) == []  # created before the window
    # OpenAI matches the marker; Anthropic, without metadata, the size.
    assert api.find("sub-none", 2, *window) == ([] if provider == "openai" else [mine])


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_submit_told_not_to_proceed_creates_nothing(fake, provider):
    api = api_of(fake, provider)
    with pytest.raises(SubmitAbandonedError) as raised:
        api.submit([api.line("c-1", request("one"))], marker="sub-1", proceed=lambda: False)
    assert created_nothing(raised.value)
    assert [e for e in fake.batch_log if e["op"] == "create"] == []


def test_only_a_refused_create_is_certain_to_have_created_nothing():
    assert created_nothing(RateLimitedError("queued tokens"))
    assert created_nothing(BatchTooLargeError(413, "too large"))
    assert created_nothing(ProviderHTTPError(400, "bad request"))
    for uncertain in (
        ProviderTimeoutError("no answer in time"),
        ProviderNetworkError("connection reset"),
        ProviderHTTPError(500, "internal"),
        ProviderHTTPError(408, "timeout"),
    ):
        assert not created_nothing(uncertain), uncertain
