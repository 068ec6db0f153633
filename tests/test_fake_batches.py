"""The fake provider's Batch APIs, driven by the real `anthropic` and `openai` SDKs over
HTTP on 127.0.0.1 (no mocks): Anthropic's Message Batches and OpenAI's Files + Batch API
answer like the vendors do, with the same scripted answers as realtime calls, per-request
errors, expiry, cancellation, size refusals and the queued-token cap."""

from __future__ import annotations

import json
import math
import threading
import time
import urllib.request

import anthropic
import openai
import pytest
from conftest import wait_until

from vetq.eval.fake_provider import BatchSettings, FakeProvider

SYSTEM = "You extract invoices. Answer in JSON."
OPENAI_ENDED = ("completed", "expired", "cancelled", "failed")


# --------------------------------------------------------------------------- helpers


@pytest.fixture
def make_fake():
    """FakeProvider(**options), started, stopped after the test."""
    started: list[FakeProvider] = []

    def make(**options) -> FakeProvider:
        options.setdefault("seed", 7)
        provider = FakeProvider(**options).start()
        started.append(provider)
        return provider

    yield make
    for provider in started:
        provider.stop()


def claude(fake: FakeProvider) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key="sk-ant-test-not-real", base_url=fake.base_url_anthropic, max_retries=0)


def gpt(fake: FakeProvider) -> openai.OpenAI:
    return openai.OpenAI(api_key="sk-test-not-real", base_url=fake.base_url_openai, max_retries=0)


def params(model: str, content: str, max_tokens: int = 64) -> dict:
    return {
        "model": model,
        "max_tokens": max_tokens,
        "system": SYSTEM,
        "messages": [{"role": "user", "content": content}],
    }


def line(custom_id: str, content: str, model: str = "gpt-x", max_tokens: int = 64) -> dict:
    body = {"model": model, "max_tokens": max_tokens, "messages": [{"role": "user", "content": content}]}
    return {"custom_id": custom_id, "method": "POST", "url": "/v1/chat/completions", "body": body}


def expected_usage(body: dict, text: str) -> tuple[int, int]:
    """The fake's estimate, the same for realtime and batch answers."""
    prompt = json.dumps([body.get("system"), body.get("messages")])
    return math.ceil(len(prompt) / 4), math.ceil(len(text) / 4)


def submit_openai(client: openai.OpenAI, lines: list[dict]):
    data = "".join(json.dumps(item) + "\n" for item in lines).encode()
    upload = client.files.create(file=("requests.jsonl", data), purpose="batch")
    return client.batches.create(input_file_id=upload.id, endpoint="/v1/chat/completions", completion_window="24h")


def wait_anthropic(client: anthropic.Anthropic, batch_id: str, timeout: float = 5.0):
    deadline = time.monotonic() + timeout
    while True:
        batch = client.messages.batches.retrieve(batch_id)
        if batch.processing_status == "ended" or time.monotonic() > deadline:
            return batch
        time.sleep(0.05)


def wait_openai(client: openai.OpenAI, batch_id: str, until=OPENAI_ENDED, timeout: float = 5.0):
    deadline = time.monotonic() + timeout
    while True:
        batch = client.batches.retrieve(batch_id)
        if batch.status in until or time.monotonic() > deadline:
            return batch
        time.sleep(0.05)


def file_lines(client: openai.OpenAI, file_id: str | None) -> list[dict]:
    if file_id is None:
        return []
    return [json.loads(raw) for raw in client.files.content(file_id).text.splitlines() if raw.strip()]


def answers(fake: FakeProvider, batch_id: str) -> dict[str, str]:
    return {e["custom_id"]: e["outcome"] for e in fake.batch_log if e["op"] == "answer" and e["batch_id"] == batch_id}


# --------------------------------------------------------------------------- end to end


def test_anthropic_batch_answers_each_request_with_its_scripted_answer(make_fake):
    fake = make_fake(batch_delay=0.3)
    fake.script(["A0", "A1", "A2"], model="claude-a")
    fake.script(["B0", "B1"], model="claude-b")
    client = claude(fake)
    models = ["claude-a", "claude-b", "claude-a", "claude-b", "claude-a"]
    requests = [{"custom_id": f"r{i}", "params": params(model, f"doc {i}")} for i, model in enumerate(models)]

    batch = client.messages.batches.create(requests=requests)
    assert batch.id.startswith("msgbatch_") and batch.type == "message_batch"
    assert batch.processing_status == "in_progress" and batch.results_url is None
    assert batch.request_counts.processing == 5 and batch.request_counts.succeeded == 0
    assert batch.expires_at > batch.created_at

    polled = client.messages.batches.retrieve(batch.id)  # still within batch_delay
    assert polled.processing_status == "in_progress" and polled.request_counts.processing == 5
    ended = wait_anthropic(client, batch.id)
    assert ended.processing_status == "ended" and ended.ended_at is not None
    assert ended.request_counts.model_dump() == {
        "processing": 0,
        "succeeded": 5,
        "errored": 0,
        "canceled": 0,
        "expired": 0,
    }
    assert ended.results_url == f"{fake.url}/v1/messages/batches/{batch.id}/results"

    results = list(client.messages.batches.results(batch.id))
    # the SDK retrieves the batch itself, then GETs its absolute results_url
    assert [e["op"] for e in fake.batch_log if e["op"] != "answer"][-2:] == ["retrieve", "results"]
    expected = {"r0": "A0", "r1": "B0", "r2": "A1", "r3": "B1", "r4": "A2"}  # per model, in submission order
    by_id = {r.custom_id: r for r in results}
    assert sorted(by_id) == sorted(expected)
    for custom_id, text in expected.items():
        result = by_id[custom_id].result
        assert result.type == "succeeded"
        message = result.message
        assert message.content[0].text == text and message.model == models[int(custom_id[1:])]
        assert message.stop_reason == "end_turn" and message.usage.service_tier == "batch"
        assert (message.usage.input_tokens, message.usage.output_tokens) == expected_usage(
            requests[int(custom_id[1:])]["params"], text
        )
    assert [r.custom_id for r in results] != [r["custom_id"] for r in requests]  # any order: never submission's

    (create,) = [e for e in fake.batch_log if e["op"] == "create"]
    assert (create["provider"], create["status"], create["outcome"], create["batch_id"]) == (
        "anthropic",
        200,
        "ok",
        batch.id,
    )
    assert create["requests"] == 5 and create["custom_ids"] == ["r0", "r1", "r2", "r3", "r4"]
    assert create["models"] == ["claude-a", "claude-b"] and create["max_tokens"] == 5 * 64
    assert answers(fake, batch.id) == dict.fromkeys(expected, "succeeded")
    assert fake.log == []  # batch traffic stays out of the realtime log


def test_openai_batch_answers_through_the_responder_with_usage(make_fake):
    fake = make_fake(batch_delay=0.4)
    seen: list[tuple[str, dict]] = []

    def responder(path: str, body: dict) -> str:
        seen.append((path, body))
        return f"answer to {body['messages'][0]['content']}"

    fake.set_responder(responder)
    client = gpt(fake)
    lines = [line(f"q{i}", f"doc {i}") for i in range(6)]

    created = submit_openai(client, lines)
    assert created.id.startswith("batch_") and created.object == "batch"
    assert created.status == "validating" and created.endpoint == "/v1/chat/completions"
    assert created.completion_window == "24h" and created.output_file_id is None
    assert created.input_file_id.startswith("file-") and created.model == "gpt-x"

    time.sleep(0.15)
    polled = client.batches.retrieve(created.id)
    assert polled.status == "in_progress" and polled.in_progress_at is not None
    assert polled.request_counts.total == 6 and 0 < polled.request_counts.completed < 6  # progress shows

    done = wait_openai(client, created.id)
    assert done.status == "completed" and done.completed_at is not None and done.finalizing_at is not None
    assert done.request_counts.model_dump() == {"total": 6, "completed": 6, "failed": 0}
    assert done.error_file_id is None and done.output_file_id is not None
    output = file_lines(client, done.output_file_id)
    assert [o["custom_id"] for o in output] != [item["custom_id"] for item in lines]
    input_tokens = output_tokens = 0
    for entry in output:
        index = int(entry["custom_id"][1:])
        assert entry["id"].startswith("batch_req_") and entry["error"] is None
        response = entry["response"]
        assert response["status_code"] == 200 and response["request_id"].startswith("req_")
        completion = response["body"]
        assert completion["object"] == "chat.completion" and completion["model"] == "gpt-x"
        text = completion["choices"][0]["message"]["content"]
        assert text == f"answer to doc {index}" and completion["choices"][0]["finish_reason"] == "stop"
        usage = completion["usage"]
        assert (usage["prompt_tokens"], usage["completion_tokens"]) == expected_usage(lines[index]["body"], text)
        input_tokens += usage["prompt_tokens"]
        output_tokens += usage["completion_tokens"]
    assert done.usage.input_tokens == input_tokens and done.usage.output_tokens == output_tokens
    assert done.usage.total_tokens == input_tokens + output_tokens
    # the responder saw each request once, in submission order, on the realtime path
    assert [(path, body["messages"][0]["content"]) for path, body in seen] == [
        ("/v1/chat/completions", f"doc {i}") for i in range(6)
    ]
    ops = [e["op"] for e in fake.batch_log if e["op"] != "answer"]
    assert ops[:2] == ["file_upload", "create"] and ops[-1] == "file_content"


# --------------------------------------------------------------------------- errors and expiry


def test_anthropic_per_request_errors_and_expiry_have_the_vendor_shape(make_fake):
    fake = make_fake(
        batch_delay=0.2, batch_error_ids={"r1": "api_error"}, batch_expire_ids={"r3"}, batch_error_type="api_error"
    )
    called: list[str] = []
    fake.set_responder(lambda path, body: called.append(body["messages"][0]["content"]) or "fine")
    client = claude(fake)
    requests = [{"custom_id": f"r{i}", "params": params("claude-a", f"doc {i}")} for i in range(5)]
    del requests[4]["params"]["max_tokens"]  # an invalid request errors alone, when processed

    batch = client.messages.batches.create(requests=requests)
    ended = wait_anthropic(client, batch.id)
    counts = ended.request_counts
    assert (counts.succeeded, counts.errored, counts.expired, counts.canceled) == (2, 2, 1, 0)

    results = {r.custom_id: r.result for r in client.messages.batches.results(batch.id)}
    assert results["r0"].type == results["r2"].type == "succeeded"
    assert results["r1"].type == "errored"
    assert results["r1"].error.type == "error" and results["r1"].error.error.type == "api_error"
    assert results["r4"].type == "errored" and results["r4"].error.error.type == "invalid_request_error"
    assert "max_tokens" in results["r4"].error.error.message
    assert results["r3"].type == "expired"
    assert called == ["doc 0", "doc 2"]  # only the requests that ran were answered
    assert answers(fake, batch.id) == {
        "r0": "succeeded",
        "r1": "errored",
        "r2": "succeeded",
        "r3": "expired",
        "r4": "errored",
    }


def test_openai_per_request_errors_and_expiry_land_in_the_error_file(make_fake):
    fake = make_fake(batch_delay=0.2, batch_error_ids=["q1"], batch_expire_ids={"q3"})
    client = gpt(fake)
    fake.set_responder(lambda path, body: "fine")
    created = submit_openai(client, [line(f"q{i}", f"doc {i}") for i in range(5)])

    done = wait_openai(client, created.id)
    assert done.status == "expired" and done.expired_at is not None and done.completed_at is None
    # progress counters: the expired request ran neither to completion nor to failure
    assert done.request_counts.model_dump() == {"total": 5, "completed": 3, "failed": 1}
    assert sorted(o["custom_id"] for o in file_lines(client, done.output_file_id)) == ["q0", "q2", "q4"]
    errors = {e["custom_id"]: e for e in file_lines(client, done.error_file_id)}
    assert sorted(errors) == ["q1", "q3"]
    errored = errors["q1"]
    assert errored["error"] is None and errored["response"]["status_code"] == 400
    assert errored["response"]["body"]["error"]["type"] == "invalid_request_error"
    expired = errors["q3"]
    assert expired["response"] is None and expired["error"]["code"] == "batch_expired"
    assert "completion window" in expired["error"]["message"]


def test_expire_batch_expires_every_request(make_fake):
    fake = make_fake(batch_delay=0.15, expire_batch=True)
    fake.set_responder(lambda path, body: pytest.fail("nothing runs in an expired batch"))
    a, o = claude(fake), gpt(fake)
    batch = a.messages.batches.create(requests=[{"custom_id": f"r{i}", "params": params("c", "x")} for i in range(3)])
    created = submit_openai(o, [line(f"q{i}", "x") for i in range(3)])

    ended = wait_anthropic(a, batch.id)
    assert ended.request_counts.expired == 3 and ended.request_counts.succeeded == 0
    assert {r.result.type for r in a.messages.batches.results(batch.id)} == {"expired"}
    done = wait_openai(o, created.id)
    assert done.status == "expired" and done.output_file_id is None
    assert {e["error"]["code"] for e in file_lines(o, done.error_file_id)} == {"batch_expired"}


def test_error_rate_is_seeded(make_fake):
    def outcomes(seed: int) -> dict[str, str | None]:
        fake = make_fake(seed=seed, batch_error_rate=0.5, batch_error_type="overloaded_error")
        client = claude(fake)
        batch = client.messages.batches.create(
            requests=[{"custom_id": f"r{i}", "params": params("c", "x")} for i in range(12)]
        )
        wait_anthropic(client, batch.id)
        kinds = {r.custom_id: r.result for r in client.messages.batches.results(batch.id)}
        assert {k.error.error.type for k in kinds.values() if k.type == "errored"} == {"overloaded_error"}
        return {custom_id: result.type for custom_id, result in kinds.items()}

    first = outcomes(seed=5)
    assert first == outcomes(seed=5)
    assert 0 < list(first.values()).count("errored") < 12


def test_results_are_shuffled_the_same_way_for_a_seed(make_fake):
    def order(seed: int) -> list[str]:
        fake = make_fake(seed=seed)
        client = gpt(fake)
        done = wait_openai(client, submit_openai(client, [line(f"q{i}", "x") for i in range(6)]).id)
        listed = [o["custom_id"] for o in file_lines(client, done.output_file_id)]
        assert fake.batches[0]["results_order"] == listed
        return listed

    first = order(seed=11)
    assert first != [f"q{i}" for i in range(6)] and sorted(first) == [f"q{i}" for i in range(6)]
    assert order(seed=11) == first


# --------------------------------------------------------------------------- cancel


def test_anthropic_cancel_cancels_the_unfinished_requests(make_fake):
    # r0 finishes at 2 s, r4 at 10 s (Anthropic shows no progress before the end): the
    # cancel at 2.5 s has 7.5 s to arrive on a slow host
    fake = make_fake(batch_delay=10.0, cancel_delay=0.2)
    fake.set_responder(lambda path, body: "done")
    client = claude(fake)
    batch = client.messages.batches.create(
        requests=[{"custom_id": f"r{i}", "params": params("c", "x")} for i in range(5)]
    )
    time.sleep(2.5)

    canceling = client.messages.batches.cancel(batch.id)
    assert canceling.processing_status == "canceling" and canceling.cancel_initiated_at is not None
    assert client.messages.batches.retrieve(batch.id).processing_status == "canceling"
    ended = wait_anthropic(client, batch.id)
    counts = ended.request_counts
    assert counts.succeeded >= 1 and counts.canceled >= 1 and counts.succeeded + counts.canceled == 5
    results = {r.custom_id: r.result.type for r in client.messages.batches.results(batch.id)}
    assert results["r0"] == "succeeded" and results["r4"] == "canceled"
    assert list(results.values()).count("canceled") == counts.canceled

    with pytest.raises(anthropic.BadRequestError):
        client.messages.batches.cancel(batch.id)  # it has ended
    client.messages.batches.delete(batch.id)
    with pytest.raises(anthropic.NotFoundError):
        client.messages.batches.retrieve(batch.id)


def test_openai_cancel_keeps_finished_answers_and_cancels_the_rest(make_fake):
    fake = make_fake(batch_delay=20.0)  # q0 finishes at 4 s, the rest later
    client = gpt(fake)
    created = submit_openai(client, [line(f"q{i}", "x") for i in range(5)])
    wait_until(lambda: client.batches.retrieve(created.id).request_counts.completed >= 1, "q0 answered")

    cancelling = client.batches.cancel(created.id)
    assert cancelling.status == "cancelling" and cancelling.cancelling_at is not None
    done = wait_openai(client, created.id)
    assert done.status == "cancelled" and done.cancelled_at is not None
    finished = [o["custom_id"] for o in file_lines(client, done.output_file_id)]
    cancelled = file_lines(client, done.error_file_id)
    assert "q0" in finished and len(finished) + len(cancelled) == 5 and cancelled
    assert {e["error"]["code"] for e in cancelled} == {"batch_cancelled"}
    assert all(e["response"] is None for e in cancelled)
    assert done.request_counts.model_dump() == {"total": 5, "completed": len(finished), "failed": 0}
    with pytest.raises(openai.BadRequestError):
        client.batches.cancel(created.id)


# --------------------------------------------------------------------------- refusals


def test_size_refusals_arrive_as_the_sdks_own_errors(make_fake):
    fake = make_fake(max_batch_requests=3, max_batch_bytes=2_000)
    a, o = claude(fake), gpt(fake)

    with pytest.raises(anthropic.BadRequestError) as too_many:
        a.messages.batches.create(requests=[{"custom_id": f"r{i}", "params": params("c", "x")} for i in range(4)])
    assert too_many.value.status_code == 400
    assert too_many.value.body["error"]["type"] == "invalid_request_error"
    assert "at most 3 items" in too_many.value.body["error"]["message"]
    # Anthropic refuses an oversized request body with 413 request_too_large, as documented.
    with pytest.raises(anthropic.ContentTooLargeError) as too_big:
        a.messages.batches.create(requests=[{"custom_id": "big", "params": params("c", "x" * 3_000)}])
    assert too_big.value.status_code == 413 and too_big.value.body["error"]["type"] == "request_too_large"

    with pytest.raises(openai.BadRequestError) as too_many_lines:
        submit_openai(o, [line(f"q{i}", "x") for i in range(4)])
    assert too_many_lines.value.code == "too_many_tasks"
    with pytest.raises(openai.BadRequestError) as too_large:
        o.files.create(file=("big.jsonl", json.dumps(line("q0", "x" * 3_000)).encode()), purpose="batch")
    assert "File is too large" in str(too_large.value)
    with pytest.raises(openai.BadRequestError) as not_jsonl:
        o.files.create(file=("requests.txt", b"{}"), purpose="batch")
    assert "Must be .jsonl" in str(not_jsonl.value)

    assert fake.batches == []
    refused = [(e["provider"], e["op"], e["status"], e["outcome"]) for e in fake.batch_log if e["status"] != 200]
    assert refused == [
        ("anthropic", "create", 400, "too_many_requests"),
        ("anthropic", "create", 413, "too_large"),
        ("openai", "create", 400, "too_many_requests"),
        ("openai", "file_upload", 400, "refused"),
        ("openai", "file_upload", 400, "refused"),
    ]


def test_queued_token_cap_is_a_429_until_a_batch_ends(make_fake):
    fake = make_fake(batch_delay=0.6, max_queued_tokens={"claude-a": 100, "gpt-x": 100})
    a, o = claude(fake), gpt(fake)
    first = a.messages.batches.create(
        requests=[{"custom_id": f"r{i}", "params": params("claude-a", "x", max_tokens=40)} for i in range(2)]
    )
    one_more = [{"custom_id": "r9", "params": params("claude-a", "x", max_tokens=40)}]
    with pytest.raises(anthropic.RateLimitError) as limited:
        a.messages.batches.create(requests=one_more)
    assert limited.value.body["error"]["type"] == "rate_limit_error"
    assert limited.value.response.headers["retry-after"] == "1"  # until the first batch ends
    # another model has its own cap
    a.messages.batches.create(requests=[{"custom_id": "z", "params": params("claude-b", "x", max_tokens=500)}])

    o_first = submit_openai(o, [line("q0", "x", max_tokens=60)])
    with pytest.raises(openai.RateLimitError) as enqueued:
        submit_openai(o, [line("q1", "x", max_tokens=60)])
    assert enqueued.value.code == "token_limit_exceeded"
    assert "Enqueued token limit reached for gpt-x" in enqueued.value.message

    wait_anthropic(a, first.id)
    wait_openai(o, o_first.id)
    assert a.messages.batches.create(requests=one_more).processing_status == "in_progress"  # room again
    assert submit_openai(o, [line("q1", "x", max_tokens=60)]).status == "validating"
    assert [e["outcome"] for e in fake.batch_log if e["op"] == "create"] == [
        "ok",
        "queued_tokens",
        "ok",
        "ok",
        "queued_tokens",
        "ok",
        "ok",
    ]


def test_openai_failed_batch_style_reports_limits_as_a_failed_batch(make_fake):
    # the first batch must still be queued when the second is sent, however slow the host
    fake = make_fake(batch_delay=30, openai_limit_style="failed_batch", max_queued_tokens=100, max_batch_requests=3)
    client = gpt(fake)
    submit_openai(client, [line("q0", "x", max_tokens=80)])

    over_cap = submit_openai(client, [line("q1", "x", max_tokens=80)])
    assert over_cap.status == "validating"  # accepted, then failed, as OpenAI does
    failed = client.batches.retrieve(over_cap.id)
    assert failed.status == "failed" and failed.failed_at is not None
    assert [e.code for e in failed.errors.data] == ["token_limit_exceeded"]
    assert "Enqueued token limit reached" in failed.errors.data[0].message
    assert failed.request_counts.total == 0 and failed.output_file_id is None

    too_many = client.batches.retrieve(submit_openai(client, [line(f"q{i}", "x", max_tokens=1) for i in range(4)]).id)
    assert too_many.status == "failed" and [e.code for e in too_many.errors.data] == ["too_many_tasks"]


def test_openai_input_file_problems_fail_the_batch_with_line_numbers(make_fake):
    fake = make_fake()
    client = gpt(fake)
    bad = [line("q0", "x"), line("q0", "y"), {**line("q2", "x"), "url": "/v1/embeddings"}, line("q3", "x", "gpt-y")]
    failed = client.batches.retrieve(submit_openai(client, bad).id)
    assert failed.status == "failed"
    assert [(e.code, e.line) for e in failed.errors.data] == [
        ("duplicate_custom_id", 2),
        ("url_mismatch", 3),
        ("model_mismatch", 4),
    ]
    upload = client.files.create(file=("broken.jsonl", b'{"custom_id": "q0"\n'), purpose="batch")
    created = client.batches.create(input_file_id=upload.id, endpoint="/v1/chat/completions", completion_window="24h")
    assert [e.code for e in client.batches.retrieve(created.id).errors.data] == ["invalid_json_line"]
    assert fake.batch_log[-1]["op"] == "retrieve"


# --------------------------------------------------------------------------- results_delay, list, control


def test_results_delay_holds_the_results_back(make_fake):
    # the results are held back long enough that a loaded machine still sees them held
    fake = make_fake(batch_delay=0.1, results_delay=3.0)
    a, o = claude(fake), gpt(fake)
    batch = a.messages.batches.create(requests=[{"custom_id": "r0", "params": params("c", "x")}])
    created = submit_openai(o, [line("q0", "x")])

    assert wait_anthropic(a, batch.id).processing_status == "ended"
    with pytest.raises(anthropic.NotFoundError):
        list(a.messages.batches.results(batch.id))
    finalizing = wait_openai(o, created.id, until=("finalizing", *OPENAI_ENDED))
    assert finalizing.status == "finalizing" and finalizing.output_file_id is None
    assert finalizing.request_counts.completed == 1

    done = wait_openai(o, created.id, timeout=30.0)
    assert done.status == "completed" and len(file_lines(o, done.output_file_id)) == 1
    assert [r.result.type for r in a.messages.batches.results(batch.id)] == ["succeeded"]


def test_list_pages_newest_first(make_fake):
    fake = make_fake()
    a, o = claude(fake), gpt(fake)
    ids = [a.messages.batches.create(requests=[{"custom_id": "r", "params": params("c", "x")}]).id for _ in range(3)]
    page = a.messages.batches.list(limit=2)
    assert [b.id for b in page.data] == ids[::-1][:2] and page.has_more
    assert [b.id for b in a.messages.batches.list()] == ids[::-1]
    assert [b.id for b in a.messages.batches.list(limit=1)] == ids[::-1]  # the SDK pages on after_id
    openai_ids = [submit_openai(o, [line("q", "x")]).id for _ in range(2)]
    assert [b.id for b in o.batches.list()] == openai_ids[::-1]
    assert {b.status for b in o.batches.list()} == {"completed"}


def test_concurrent_polling_answers_each_request_once(make_fake):
    fake = make_fake(batch_delay=0.3)
    calls: list[str] = []
    lock = threading.Lock()

    def responder(path: str, body: dict) -> str:
        with lock:
            calls.append(body["messages"][0]["content"])
        time.sleep(0.01)
        return "ok"

    fake.set_responder(responder)
    client = claude(fake)
    batch = client.messages.batches.create(
        requests=[{"custom_id": f"r{i}", "params": params("c", f"doc {i}")} for i in range(8)]
    )
    errors: list[BaseException] = []

    def poll() -> None:
        try:
            wait_anthropic(claude(fake), batch.id)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=poll) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    assert not errors
    assert sorted(calls) == sorted(f"doc {i}" for i in range(8))
    assert len([e for e in fake.batch_log if e["op"] == "answer"]) == 8


def test_http_control_and_batch_log(make_fake):
    fake = make_fake()

    def post(payload: dict) -> tuple[int, dict]:
        request = urllib.request.Request(
            fake.url + "/_control",
            data=json.dumps(payload).encode(),
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=5) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read())

    status, _ = post({"batches": {"batch_delay": 0.25, "batch_expire_ids": ["r1"]}, "seed": 3})
    assert status == 200 and fake.seed == 3
    assert fake.batch_settings.batch_delay == 0.25 and fake.batch_settings.batch_expire_ids == frozenset({"r1"})
    assert post({"batches": {"no_such_knob": 1}})[0] == 400
    assert post({"batches": {"batch_error_rate": 2}})[0] == 400

    client = claude(fake)
    client.messages.batches.create(requests=[{"custom_id": f"r{i}", "params": params("c", "x")} for i in range(2)])
    with urllib.request.urlopen(fake.url + "/_batch_log", timeout=5) as response:
        log = json.loads(response.read())
    assert log == fake.batch_log and log[0]["op"] == "create"
    post({"reset": True})
    assert fake.batch_log == [] and fake.batches == []
    assert fake.batch_settings.batch_delay == 0.25  # settings survive a reset


def test_batch_settings_validate():
    with pytest.raises(TypeError, match="no_such_knob"):
        FakeProvider(no_such_knob=1)
    with pytest.raises(ValueError):
        BatchSettings().changed(batch_error_type="meteor")
    with pytest.raises(ValueError):
        BatchSettings().changed(openai_limit_style="sometimes")
    settings = BatchSettings().changed(batch_error_ids=["a"], batch_error_type="server_error")
    assert settings.batch_error_ids == {"a": None} and settings.batch_error_type == "api_error"


def test_held_creates_wait_while_lists_answer_and_submissions_are_counted(make_fake):
    fake = make_fake()
    client = claude(fake)
    fake.hold_batch_creates()
    created = []
    creating = threading.Thread(
        target=lambda: created.append(
            client.messages.batches.create(requests=[{"custom_id": "r0", "params": params("claude-a", "doc")}])
        )
    )
    creating.start()
    deadline = time.monotonic() + 5
    while fake.batch_creates_waiting < 1:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert client.messages.batches.list().data == []  # the stalled create is not in yet
    assert not created and fake.batch_submissions() == {}
    fake.release_batch_creates()
    creating.join(timeout=5)
    assert len(created) == 1 and fake.batch_creates_waiting == 0
    submit_openai(gpt(fake), [line("r0", "doc"), line("r1", "doc")])
    submit_openai(gpt(fake), [line("r1", "doc")])
    assert fake.batch_submissions() == {("anthropic", "r0"): 1, ("openai", "r0"): 1, ("openai", "r1"): 2}
