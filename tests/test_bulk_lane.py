"""The bulk lane end to end: a real Redis, a real Celery worker with its coordinator,
the real SDKs over HTTP to the fake provider's Batch APIs. The Generator is an OpenAI
model (a JSONL batch) and the Critic an Anthropic one (a Message Batch), so every job
crosses both providers' APIs."""

from __future__ import annotations

import json
import re
import threading
import time
from datetime import UTC, datetime, timedelta

import pytest
import redis
from conftest import wait_until

from tests.conftest import GLOBEX, GLOBEX_DATA, Service, critic_answer
from tests.test_review_service import POS, VER, make_request
from vetq.core.errors import ConfigError, InvalidInputError
from vetq.core.llm.prices import shipped_prices
from vetq.core.redis_keys import BULK_LOCK_KEY, BULK_OPEN_KEY, BULK_WAKE_KEY
from vetq.eval.fake_provider import FakeProvider
from vetq.workers.bulk_coordinator import BulkCoordinator, LeaseLostError
from vetq.workers.bulk_store import BulkStore

GENERATOR = "openai:gpt-4.1-mini"
CRITIC = "anthropic:claude-haiku-4-5"
FAST_LANE = {
    "bulk_tick_s": 0.1,
    "bulk_flush_age_s": 0.0,
    "bulk_flush_requests": 1,
    "bulk_poll_s": 0.1,
    "bulk_poll_max_s": 0.3,
}


class Answers:
    """Generator and Critic answers for the Globex document; `fail` makes the calls of
    one role raise in the fake (an errored batch request) a number of times."""

    def __init__(self) -> None:
        self.failures = {"generator": 0, "critic": 0}
        self.calls = {"generator": 0, "critic": 0}
        self.lock = threading.Lock()

    def __call__(self, path: str, body: dict) -> str:
        role = "critic" if str(body.get("model", "")).startswith("claude") else "generator"
        with self.lock:
            self.calls[role] += 1
            if self.failures[role] > 0:
                self.failures[role] -= 1
                raise RuntimeError(f"{role} refused")
        return critic_answer() if role == "critic" else json.dumps(GLOBEX_DATA)


@pytest.fixture
def fake(monkeypatch):
    provider = FakeProvider(seed=11).start()
    answers = Answers()
    provider.set_responder(answers)
    provider.answers = answers
    monkeypatch.setenv("OPENAI_BASE_URL", provider.base_url_openai)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-real")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", provider.base_url_anthropic)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-not-real")
    yield provider
    provider.stop()


@pytest.fixture
def make_service(redis_url, queue_settings, fake):
    services = []

    def make(concurrency: int = 2, **settings):
        merged = queue_settings.model_copy(update={"generator": GENERATOR, "critic": CRITIC, **FAST_LANE, **settings})
        service = Service(merged, redis_url, concurrency=concurrency)
        services.append(service)
        return service

    yield make
    for service in services:
        service.close()


def realtime_calls(fake: FakeProvider) -> list[dict]:
    return [e for e in fake.log if e.get("path") in ("/v1/chat/completions", "/v1/messages")]


def answered(fake: FakeProvider) -> list[dict]:
    return [e for e in fake.batch_log if e.get("op") == "answer"]


def creates(fake: FakeProvider) -> list[dict]:
    return [e for e in fake.batch_log if e.get("op") == "create" and e.get("status") == 200]


def comparable(result: dict) -> dict:
    return {k: result.get(k) for k in ("status", "data", "field_confidence", "flagged_fields", "overall_confidence")}


def test_a_bulk_job_gives_the_realtime_result_at_the_batch_price(fake, make_service):
    service = make_service()
    bulk = service.client.submit_extraction(GLOBEX, lane="bulk").result(timeout=60)
    assert realtime_calls(fake) == []  # every call went in a batch
    assert {e["provider"] for e in creates(fake)} == {"openai", "anthropic"}
    realtime = service.client.submit_extraction(GLOBEX + "\n").result(timeout=60)
    assert bulk["status"] == "ok"
    assert comparable(bulk) == comparable(realtime)
    for stage, model in (("generator", GENERATOR), ("critic", CRITIC)):
        usage = bulk["usage"][stage]
        price = shipped_prices().lookup(model)
        expected = price.cost(usage["prompt_tokens"], usage["completion_tokens"], lane="bulk")
        assert usage["cost_usd"] == pytest.approx(expected, abs=1e-6)
        assert usage["cost_usd"] == pytest.approx(realtime["usage"][stage]["cost_usd"] / 2, rel=0.02)
    assert bulk["cost_usd"] == pytest.approx(
        bulk["usage"]["generator"]["cost_usd"] + bulk["usage"]["critic"]["cost_usd"]
    )


def test_a_bulk_jobs_calls_and_runs_are_in_the_metrics(fake, make_service):
    """Each answer from a batch is one model call (ok) with its tokens on the bulk lane,
    and every run of the job, the woken ones included, has its time in the queue."""
    from vetq.workers import metrics

    def value(name: str, **labels: str) -> float:
        return metrics.registry().get_sample_value(name, labels) or 0.0

    def snapshot() -> dict[str, float]:
        return {
            "generator": value("vetq_model_calls_total", model=GENERATOR, stage="generator", outcome="ok"),
            "critic": value("vetq_model_calls_total", model=CRITIC, stage="critic", outcome="ok"),
            "bulk_tokens": value("vetq_model_tokens_total", model=GENERATOR, lane="bulk", type="input"),
            "parked": value("vetq_jobs_total", queue="extract", kind="extract", outcome="parked"),
            "queued": value("vetq_job_queued_seconds_count", queue="extract", kind="extract"),
        }

    service = make_service()
    before = snapshot()
    result = service.client.submit_extraction(GLOBEX + "\nMetered.", lane="bulk").result(timeout=60)
    assert result["status"] == "ok"
    moved = {key: now - before[key] for key, now in snapshot().items()}
    assert moved["generator"] == 1 and moved["critic"] == 1
    assert moved["bulk_tokens"] == result["usage"]["generator"]["prompt_tokens"]
    # Parked on the Generator's batch, then on the Critic's: three runs, each timed in the queue.
    assert moved["parked"] == 2
    assert moved["queued"] == 3


def test_a_job_waiting_on_a_batch_holds_no_worker(fake, make_service):
    fake.configure_batches(batch_delay=3.0)
    service = make_service(concurrency=1)
    waiting = [service.client.submit_extraction(f"{GLOBEX}\nCopy {i}.", lane="bulk") for i in range(3)]
    deadline = time.monotonic() + 20
    while any(job.status() != "waiting" for job in waiting):
        assert time.monotonic() < deadline, [job.status() for job in waiting]
        time.sleep(0.05)
    # One worker slot, three jobs parked on batches: a realtime job still runs now.
    quick = service.client.submit_validation(GLOBEX, dict(GLOBEX_DATA), heuristics_only=True).result(timeout=10)
    assert quick["status"] == "ok"
    assert all(job.status() == "waiting" for job in waiting)
    results = [job.result(timeout=60) for job in waiting]
    assert [r["status"] for r in results] == ["ok"] * 3


def test_two_jobs_asking_the_same_thing_pay_for_one_request(fake, make_service):
    service = make_service()
    batch = service.client.submit_batch([{"kind": "extract", "text": GLOBEX}] * 2, lane="bulk")
    results = batch.results(timeout=60)
    assert [r["status"] for r in results] == ["ok", "ok"]
    assert len(answered(fake)) == 2  # one Generator and one Critic request, not four
    for stage in ("generator", "critic"):
        # One job paid for each request; the other read its answer (from the cache: 0).
        costs = sorted(r["usage"][stage]["cost_usd"] for r in results)
        assert costs[0] == 0.0 and costs[1] > 0, stage
    paid = sum(max(r["usage"][stage]["cost_usd"] for r in results) for stage in ("generator", "critic"))
    assert batch.spent()["cost_usd"] == pytest.approx(paid)


def test_an_errored_request_is_retried_once_on_the_bulk_lane(fake, make_service):
    fake.answers.failures["critic"] = 1
    service = make_service()
    result = service.client.submit_extraction(GLOBEX, lane="bulk").result(timeout=60)
    assert result["status"] == "ok"
    outcomes = [e["outcome"] for e in answered(fake) if e.get("provider") == "anthropic"]
    assert outcomes == ["errored", "succeeded"]
    assert realtime_calls(fake) == []


def test_a_request_that_errors_twice_is_the_jobs_error(fake, make_service):
    fake.answers.failures["critic"] = 2
    service = make_service()
    result = service.client.submit_extraction(GLOBEX, lane="bulk").result(timeout=60)
    assert result["status"] == "error"
    assert result["error"]["code"] == "PROVIDER_HTTP_ERROR"
    assert "batch request errored" in result["error"]["message"]
    assert [e["outcome"] for e in answered(fake) if e.get("provider") == "anthropic"] == ["errored", "errored"]
    assert result["usage"]["generator"]["cost_usd"] > 0  # the stage that answered is still accounted for


def _flip_after_first_batch(fake: FakeProvider, **knobs) -> threading.Thread:
    """Change the batch knobs once the first batch exists (they apply to later batches)."""

    def flip() -> None:
        deadline = time.monotonic() + 30
        while not creates(fake) and time.monotonic() < deadline:
            time.sleep(0.01)
        fake.configure_batches(**knobs)

    thread = threading.Thread(target=flip, daemon=True)
    thread.start()
    return thread


def test_an_expired_request_is_submitted_again(fake, make_service):
    fake.configure_batches(expire_batch=True, batch_delay=0.3)
    flipper = _flip_after_first_batch(fake, expire_batch=False, batch_delay=0.0)
    service = make_service()
    result = service.client.submit_extraction(GLOBEX, lane="bulk").result(timeout=60)
    flipper.join()
    assert result["status"] == "ok"
    generator = [e["outcome"] for e in answered(fake) if e.get("provider") == "openai"]
    assert generator == ["expired", "succeeded"]
    assert realtime_calls(fake) == []


def test_past_the_deadline_a_job_that_allows_it_goes_realtime(fake, make_service):
    fake.configure_batches(batch_delay=120.0)
    service = make_service()
    job = service.client.submit_extraction(GLOBEX, lane="bulk", bulk_deadline="2s", realtime_fallback=True)
    result = job.result(timeout=60)
    assert result["status"] == "ok"
    canceled = [e for e in fake.batch_log if e.get("op") == "cancel" and e.get("status") == 200]
    assert canceled, "the batch past the deadline was canceled"
    assert [e["outcome"] for e in answered(fake)] == ["canceled"]  # nothing paid on the bulk lane
    assert {e["path"] for e in realtime_calls(fake)} == {"/v1/chat/completions", "/v1/messages"}
    price = shipped_prices().lookup(GENERATOR)
    usage = result["usage"]["generator"]
    assert usage["cost_usd"] == pytest.approx(
        price.cost(usage["prompt_tokens"], usage["completion_tokens"], lane="realtime"), abs=1e-6
    )


def test_past_the_deadline_without_fallback_the_job_times_out(fake, make_service):
    fake.configure_batches(batch_delay=120.0)
    service = make_service()
    result = service.client.submit_extraction(GLOBEX, lane="bulk", bulk_deadline="2s").result(timeout=60)
    assert result["status"] == "error" and result["error"]["code"] == "TIMEOUT"
    assert "bulk" in result["error"]["message"]
    assert realtime_calls(fake) == []


def test_a_refusal_for_queued_tokens_waits_and_never_fails_the_job(fake, make_service):
    # Room for one Generator request at a time: a batch of both is refused (429), then
    # one request goes alone and the other is refused until that batch ends.
    fake.configure_batches(batch_delay=1.0, max_queued_tokens={"gpt-4.1-mini": 6000})
    service = make_service(generator_max_tokens=4096)
    jobs = [service.client.submit_extraction(f"{GLOBEX}\nCopy {i}.", lane="bulk") for i in range(2)]
    assert [job.result(timeout=90)["status"] for job in jobs] == ["ok", "ok"]
    refusals = [e for e in fake.batch_log if e.get("op") == "create" and e.get("outcome") == "queued_tokens"]
    assert refusals
    generator_batches = [e["requests"] for e in creates(fake) if e["provider"] == "openai"]
    assert generator_batches == [1, 1]


def test_a_batch_refused_for_its_size_is_sent_in_smaller_ones(fake, make_service):
    fake.configure_batches(max_batch_requests=1, batch_delay=0.2)
    service = make_service(bulk_flush_requests=3, bulk_flush_age_s=1.0)
    batch = service.client.submit_batch(
        [{"kind": "extract", "text": f"{GLOBEX}\nCopy {i}."} for i in range(3)], lane="bulk"
    )
    assert [r["status"] for r in batch.results(timeout=90)] == ["ok"] * 3
    assert [e.get("requests") for e in creates(fake)] == [1] * 6
    refused = [e for e in fake.batch_log if e.get("op") == "create" and e.get("outcome") == "too_many_requests"]
    assert refused


def test_batch_status_counts_jobs_and_provider_batches(fake, make_service):
    fake.configure_batches(batch_delay=1.0)
    service = make_service()
    batch = service.client.submit_batch(
        [{"kind": "extract", "text": f"{GLOBEX}\nCopy {i}."} for i in range(3)] + [{"kind": "extract"}], lane="bulk"
    )
    deadline = time.monotonic() + 20
    while service.client.batch_status(batch.id)["waiting_for_provider"] < 3:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    waiting = service.client.batch_status(batch.id)
    assert waiting["lane"] == "bulk" and waiting["total"] == 4 and waiting["failed"] == 1  # the line without text
    assert waiting["waiting"] == 3 and waiting["done"] == 0
    batch.results(timeout=60)
    status = service.client.batch_status(batch.id)
    assert (status["done"], status["failed"], status["waiting"]) == (3, 1, 0)
    assert status["spent"]["cost_usd"] == pytest.approx(batch.spent()["cost_usd"])
    by_provider = {}
    for provider_batch in status["provider_batches"]:
        assert provider_batch["state"] == "ended"
        by_provider.setdefault(provider_batch["provider"], 0)
        by_provider[provider_batch["provider"]] += provider_batch["counts"]["succeeded"]
    assert by_provider == {"openai": 3, "anthropic": 3}
    again = service.client.batch(batch.id)
    assert [r["status"] for r in again.results(timeout=10)] == ["ok"] * 3


def test_a_review_runs_on_the_bulk_lane(fake, make_service):
    fake.script([POS, VER])  # the blind pass, then the comparison
    service = make_service(reviewer=CRITIC)
    request = make_request().model_dump(mode="json", exclude_none=True)
    result = service.client.submit_review(request, lane="bulk").result(timeout=60)
    assert result["status"] == "ok" and result["verdict"], result
    assert realtime_calls(fake) == [] and len(creates(fake)) == 2  # one Message Batch per pass
    assert result["meta"]["cost_usd"] > 0


def test_the_dollar_budget_is_kept_at_the_batch_price(fake, make_service):
    service = make_service()
    priced = service.client.submit_extraction(GLOBEX, lane="bulk").result(timeout=60)
    # Enough for the job at the batch price only if nothing is charged twice; far too
    # little for a Generator call at all: refused before anything is queued.
    refused = service.client.submit_extraction(GLOBEX + "\n", lane="bulk", budget_usd=0.000001).result(timeout=30)
    assert refused["status"] == "error" and refused["error"]["code"] == "BUDGET_EXCEEDED"
    assert len(answered(fake)) == 2  # the first job's two requests, nothing for the refused one
    assert priced["cost_usd"] > 0


def test_nothing_is_left_behind_in_redis(fake, make_service, redis_url):
    service = make_service()
    service.client.submit_extraction(GLOBEX, lane="bulk").result(timeout=60)
    r = redis.Redis.from_url(redis_url)
    deadline = time.monotonic() + 5
    while r.zcard(BULK_OPEN_KEY) or r.llen(BULK_WAKE_KEY):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert not r.keys("{vetq:bulk}:job:*") and not r.keys("{vetq:bulk}:waiters:*")
    assert not r.keys("{vetq:bulk}:pending:*")
    for key in r.keys("{vetq:bulk}:req:*"):
        assert r.hget(key, "state") == b"done" and not r.hexists(key, "request")
        assert 0 < r.ttl(key) <= service.settings.result_ttl_s


# --------------------------------------------------------------------------- refused at submission


def test_bad_lane_arguments_are_invalid_input_naming_them(redis_url, queue_settings):
    from vetq.api_client.client import Client

    settings = queue_settings.model_copy(update={"generator": GENERATOR, "critic": CRITIC})
    with Client(redis_url, settings=settings) as client:
        cases = {
            "lane": {"lane": "fast"},
            "in the past": {"lane": "bulk", "bulk_deadline": datetime.now(UTC) - timedelta(minutes=1)},
            "batch window": {"lane": "bulk", "bulk_deadline": "30h"},
            "bulk_deadline": {"lane": "bulk", "bulk_deadline": "tomorrow-ish"},
            "belong to lane 'bulk'": {"bulk_deadline": "2h"},
            "realtime_fallback": {"lane": "bulk", "realtime_fallback": "yes"},
            "budget_usd": {"lane": "bulk", "budget_usd": -1},
        }
        for expected, arguments in cases.items():
            with pytest.raises(InvalidInputError, match=expected):
                client.submit_extraction(GLOBEX, **arguments)
        with pytest.raises(InvalidInputError, match="lane"):
            client.submit_batch([{"kind": "extract", "text": GLOBEX}], lane="slow")
        assert not redis.Redis.from_url(redis_url).keys("vetq:submitted:*")  # nothing was sent


def test_a_model_without_a_batch_api_is_a_config_error_at_submission(redis_url, queue_settings):
    from vetq.api_client.client import Client

    settings = queue_settings.model_copy(update={"generator": "bedrock:anthropic.claude-x", "critic": CRITIC})
    with Client(redis_url, settings=settings) as client:
        with pytest.raises(ConfigError, match=re.escape("bedrock:anthropic.claude-x")):
            client.submit_extraction(GLOBEX, lane="bulk")
        # Validation calls the Critic only: that one has a batch API.
        assert client.submit_validation(GLOBEX, dict(GLOBEX_DATA), lane="bulk").id
        batch = client.submit_batch([{"kind": "extract", "text": GLOBEX}], lane="bulk")
        assert batch.entries[0]["error"]["code"] == "CONFIG_ERROR"


# --------------------------------------------------------------------------- the CLI


def test_the_cli_submits_a_bulk_batch_and_reports_on_it(fake, make_service, redis_url, tmp_path):
    from tests.test_cli import vetq

    make_service()
    env = {"VETQ_REDIS_URL": redis_url, "VETQ_HOME": str(tmp_path), "VETQ_GENERATOR": GENERATOR, "VETQ_CRITIC": CRITIC}
    lines = "".join(json.dumps({"text": f"{GLOBEX}\nCopy {i}."}) + "\n" for i in range(2)) + "{broken\n"
    submitted = vetq("extract", "--batch", "--bulk", "--no-wait", input=lines, env=env)
    printed = [json.loads(line) for line in submitted.stdout.splitlines()]
    assert printed[0]["status"] == "error" and printed[0]["error"]["code"] == "INVALID_INPUT"  # the broken line
    assert printed[1]["lane"] == "bulk" and printed[1]["jobs"] == 2, submitted.stdout + submitted.stderr
    batch_id = printed[1]["batch_id"]

    status = vetq("batch", "status", batch_id, env=env)
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["total"] == 2 and json.loads(status.stdout)["lane"] == "bulk"

    results = vetq("batch", "results", batch_id, "--timeout", "60", env=env)
    assert results.returncode == 0, results.stderr
    assert [json.loads(line)["status"] for line in results.stdout.splitlines()] == ["ok", "ok"]
    final = json.loads(vetq("batch", "status", batch_id, env=env).stdout)
    assert (final["done"], final["waiting"], final["failed"]) == (2, 0, 0)
    assert {b["provider"] for b in final["provider_batches"]} == {"openai", "anthropic"}
    assert realtime_calls(fake) == []


def test_the_cli_refuses_bad_lane_flags_and_unknown_batches(redis_url, tmp_path):
    from tests.test_cli import vetq

    env = {"VETQ_REDIS_URL": redis_url, "VETQ_HOME": str(tmp_path), "VETQ_GENERATOR": GENERATOR, "VETQ_CRITIC": CRITIC}
    for flags, expected in (
        (["--bulk-deadline", "2h"], "--bulk"),
        (["--bulk", "--bulk-deadline", "3 days"], "bulk_deadline"),
        (["--bulk", "--bulk-deadline", "30h"], "batch window"),
    ):
        done = vetq("extract", *flags, input=GLOBEX, env=env)
        assert done.returncode == 2, (flags, done.stdout, done.stderr)
        error = json.loads(done.stdout)["error"]
        assert error["code"] == "INVALID_INPUT" and expected in error["message"], (flags, error)
    unknown = vetq("batch", "status", "no-such-batch", env=env)
    assert unknown.returncode != 0 and json.loads(unknown.stdout)["error"]["code"] == "NOT_FOUND"


# --------------------------------------------------------------------------- coordinator failover


class CoordinatorDied(Exception):
    """Stands for the coordinator's process dying at the point it is raised."""


def coordinator_of(service: Service, *, lease_s: float | None = None):
    """A coordinator of the service's fleet, run by the test (the service runs none)."""
    return service.app.conf.vetq_context.bulk_coordinator(service.app, lease_s=lease_s)


def run_coordinator(coordinator) -> tuple[threading.Event, threading.Thread]:
    stop = threading.Event()
    thread = threading.Thread(target=coordinator.run, args=(stop,), daemon=True)
    thread.start()
    return stop, thread


def paid_twice(fake: FakeProvider) -> dict:
    return {key: n for key, n in fake.batch_submissions().items() if n > 1}


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_coordinator_dying_between_submit_and_record_is_recovered_without_paying_again(
    fake, make_service, redis_url, monkeypatch, provider
):
    service = make_service(bulk_coordinator=False)
    jobs = [service.client.submit_extraction(f"{GLOBEX}\nCopy {i}.", lane="bulk") for i in range(3)]
    died_with: list[str] = []
    record_batch = BulkStore.record_batch

    def dies_once(self, batch_id, model_key, *args, **kwargs):
        if model_key.startswith(provider) and not died_with:
            died_with.append(batch_id)
            raise CoordinatorDied(f"after creating {batch_id}, before recording it")
        return record_batch(self, batch_id, model_key, *args, **kwargs)

    monkeypatch.setattr(BulkStore, "record_batch", dies_once)
    # A short lease: what the dead coordinator left open falls due for recovery within
    # seconds rather than the default 30 s (its lock is deleted below, as its expiry would).
    first = coordinator_of(service, lease_s=2.0)
    assert first._hold_lock()
    deadline = time.monotonic() + 60
    with pytest.raises(CoordinatorDied):
        while True:  # the Generator's batches end and the Critic's are sent before it dies with anthropic
            first.tick()
            assert time.monotonic() < deadline, "the coordinator never submitted a batch"
            time.sleep(0.05)
    # Dead, it never releases its lock: the lease runs out and another worker's takes over.
    redis.Redis.from_url(redis_url).delete(BULK_LOCK_KEY)
    stop, thread = run_coordinator(coordinator_of(service))
    try:
        results = [job.result(timeout=60) for job in jobs]
    finally:
        stop.set()
        thread.join(timeout=30)
    assert [r["status"] for r in results] == ["ok"] * 3
    assert paid_twice(fake) == {}
    assert len(fake.batch_submissions()) == 6  # three Generator and three Critic requests, each sent once
    assert service.app.conf.vetq_context.bulk_store.batch(died_with[0]) is not None  # the orphan was adopted
    assert realtime_calls(fake) == []


def test_a_coordinator_stalled_past_its_lease_does_not_have_its_requests_sent_again(fake, make_service, redis_url):
    service = make_service(bulk_coordinator=False)
    store = service.app.conf.vetq_context.bulk_store
    jobs = [service.client.submit_extraction(f"{GLOBEX}\nCopy {i}.", lane="bulk") for i in range(3)]
    wait_until(lambda: store.pending_count(GENERATOR) == 3, "the three jobs parked")
    fake.hold_batch_creates()
    stalled = coordinator_of(service)
    assert stalled._hold_lock()

    def tick(coordinator) -> threading.Thread:
        def run() -> None:
            try:
                coordinator.tick()
            except LeaseLostError:
                pass  # the stalled one, back from its create, finds its lease gone and stops

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        return thread

    first = tick(stalled)
    wait_until(lambda: fake.batch_creates_waiting == 1, "the first coordinator is inside its create call")
    # Its lease runs out while it waits on the provider; another worker's coordinator takes over.
    redis.Redis.from_url(redis_url).delete(BULK_LOCK_KEY)
    successor = coordinator_of(service)
    assert successor._hold_lock()
    second = tick(successor)
    wait_until(
        lambda: not second.is_alive() or fake.batch_creates_waiting > 1, "the second coordinator's tick", timeout=60
    )
    fake.release_batch_creates()
    first.join(timeout=60)
    second.join(timeout=60)
    assert not first.is_alive() and not second.is_alive()
    stop, thread = run_coordinator(successor)
    try:
        results = [job.result(timeout=60) for job in jobs]
    finally:
        stop.set()
        thread.join(timeout=30)
    assert [r["status"] for r in results] == ["ok"] * 3
    assert paid_twice(fake) == {}
    assert len(fake.batch_submissions()) == 6


def test_a_create_that_times_out_but_lands_is_adopted_not_sent_again(fake, make_service):
    service = make_service(bulk_coordinator=False, provider_timeout_s=1.0)
    store = service.app.conf.vetq_context.bulk_store
    jobs = [service.client.submit_extraction(f"{GLOBEX}\nCopy {i}.", lane="bulk") for i in range(2)]
    wait_until(lambda: store.pending_count(GENERATOR) == 2, "the jobs parked")
    fake.hold_batch_creates()
    coordinator = coordinator_of(service)
    assert coordinator._hold_lock()
    assert coordinator.tick()["submitted"] == 0  # the create timed out: it may have landed
    fake.release_batch_creates()  # ...and it does, after the client gave up on it
    wait_until(lambda: len(creates(fake)) == 1, "the timed-out create landed")
    stop, thread = run_coordinator(coordinator)
    try:
        results = [job.result(timeout=60) for job in jobs]
    finally:
        stop.set()
        thread.join(timeout=30)
    assert [r["status"] for r in results] == ["ok"] * 2
    assert paid_twice(fake) == {} and len(fake.batch_submissions()) == 4


def test_a_claim_whose_create_never_happened_is_released_only_once_no_create_can_land(fake, make_service):
    service = make_service(bulk_coordinator=False)
    store = service.app.conf.vetq_context.bulk_store
    job = service.client.submit_extraction(GLOBEX, lane="bulk")
    wait_until(lambda: store.pending_count(GENERATOR) == 1, "the job parked")
    now = [time.time()]
    coordinator = BulkCoordinator(
        service.app.conf.vetq_context.redis,
        service.settings,
        store=store,
        cache=None,
        ledger=None,
        publish=lambda parked: None,
        clock=lambda: now[0],
    )
    assert coordinator._hold_lock()
    # A coordinator that died right after claiming, before its create call.
    [(digest, _age)] = store.pending(GENERATOR, 10)
    token = service.app.conf.vetq_context.redis.get(BULK_LOCK_KEY)
    times = {"marked": now[0], "create_by": now[0] + 60, "settled_by": now[0] + 180}
    assert store.claim(token, "orphan", GENERATOR, [digest], vetq_batches=[], check_in_s=0, **times) == [digest]
    assert coordinator.tick().get("unsettled") == 1  # its create could still land: left claimed
    assert store.get(digest).state == "submitting" and creates(fake) == []
    now[0] += 181
    store.check_submission_in("orphan", 0)
    done = coordinator.tick()
    assert done.get("released") == 1 and done["submitted"] == 1
    assert len(creates(fake)) == 1
    coordinator.release()
    stop, thread = run_coordinator(coordinator_of(service))
    try:
        assert job.result(timeout=60)["status"] == "ok"
    finally:
        stop.set()
        thread.join(timeout=30)
    assert paid_twice(fake) == {}
