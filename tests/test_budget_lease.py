"""Budget reservations are leased: the reservation of a worker that died mid-call is
given back at the next reserve on its scope, and a late settle charges once."""

from __future__ import annotations

import json
import time

import pytest
import redis
from conftest import wait_until

from tests.conftest import GLOBEX, GLOBEX_DATA, answer_like_a_model, critic_answer
from vetq.api_client.admin import Admin
from vetq.api_client.client import Client
from vetq.core.extraction.pipeline import ExtractionPipeline
from vetq.core.llm.scripted import ScriptedLLMClient
from vetq.core.llm.tokens import estimate_prompt_tokens
from vetq.core.settings import VetqSettings, load_settings
from vetq.eval.chaos import kill_tree
from vetq.eval.fake_provider import FakeProvider
from vetq.workers.budget_ledger import LEASE_MARGIN_S, RedisBudgetLedger, lease_s_for
from vetq.workers.call_gate import RedisCallGate
from vetq.workers.runner import spawn_worker_process, stop_processes


@pytest.fixture
def r(redis_url):
    client = redis.Redis.from_url(redis_url)
    yield client
    client.close()


def wait_until_expired(ledger: RedisBudgetLedger, reservation_id: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while ledger.reservation_state(reservation_id) != "expired":
        assert time.monotonic() < deadline, "the lease never ran out"
        time.sleep(0.05)


# --------------------------------------------------------------------------- unit level


def test_an_expired_lease_no_longer_counts_at_the_next_reserve(r):
    ledger = RedisBudgetLedger(r, lease_s=0.5)
    ledger.set_limit("batch:lease", 1000, 600)
    dead = ledger.reserve(["job:dead", "batch:lease"], 800)  # its worker dies mid-call
    assert dead is not None
    assert ledger.reserve(["batch:lease"], 500) is None  # a live lease still holds its tokens
    wait_until_expired(ledger, dead)

    fresh = ledger.reserve(["job:next", "batch:lease"], 900)
    assert fresh is not None  # fits only because the dead reservation was given back
    assert ledger.reserved("batch:lease") == 900 and ledger.remaining("batch:lease") == 100


def test_settling_a_swept_reservation_late_charges_once_and_keeps_reserved_whole(r):
    ledger = RedisBudgetLedger(r, lease_s=0.5)
    ledger.set_limit("batch:late", 1000, 600)
    slow = ledger.reserve(["job:slow", "batch:late"], 800)
    wait_until_expired(ledger, slow)
    # Only the batch is reserved on again, so only the batch sweeps the lease; the job
    # scope (not read since) still holds the 800 tokens.
    other = ledger.reserve(["batch:late"], 300)
    assert other is not None and ledger.reserved("batch:late") == 300
    assert int(r.hget(ledger.scope_key("job:slow"), "reserved")) == 800

    assert ledger.settle(slow, 250)  # the slow call's answer arrives after all
    assert ledger.spent("batch:late") == 250 and ledger.spent("job:slow") == 250
    assert ledger.reserved("batch:late") == 300  # the sweep already gave the 800 back
    assert ledger.reserved("job:slow") == 0  # the job scope gives them back now
    assert not ledger.settle(slow, 250) and not ledger.release(slow)
    assert ledger.spent("batch:late") == 250 and ledger.reserved("batch:late") == 300

    assert ledger.settle(other, 300)
    assert ledger.reserved("batch:late") == 0 and ledger.spent("batch:late") == 550
    assert ledger.remaining("batch:late") == 450


def test_reads_do_not_count_an_expired_lease(r):
    # A review clamps its calls to what the budget leaves and may never reserve at all.
    ledger = RedisBudgetLedger(r, lease_s=0.5)
    ledger.set_limit("job:review", 1000, 600)
    ledger.set_limit("batch:review", 1000, 600)
    dead = ledger.reserve(["job:review", "batch:review"], 900)
    gate = RedisCallGate(r, limiter=None, ledger=ledger, cache=None, budget_scopes=["job:review", "batch:review"])
    assert gate.tokens_left() == 100
    wait_until_expired(ledger, dead)
    assert gate.tokens_left() == 1000
    assert ledger.reserved("batch:review") == 0
    assert ledger.settle(dead, 400)  # late: charged once, nothing more given back
    assert ledger.remaining("batch:review") == 600 and ledger.reserved("job:review") == 0


def test_releasing_a_swept_reservation_gives_nothing_back_twice(r):
    ledger = RedisBudgetLedger(r, lease_s=0.5)
    ledger.set_limit("batch:rel", 1000, 600)
    gone = ledger.reserve(["batch:rel"], 600)
    wait_until_expired(ledger, gone)
    held = ledger.reserve(["batch:rel"], 700)
    assert held is not None
    assert ledger.release(gone)
    assert ledger.reserved("batch:rel") == 700 and ledger.remaining("batch:rel") == 300
    assert ledger.reserve(["batch:rel"], 400) is None  # the release made no room it did not have


def test_renew_restarts_the_lease_and_fails_once_the_lease_was_swept(r):
    ledger = RedisBudgetLedger(r, lease_s=3.0)
    ledger.set_limit("batch:renew", 1000, 600)
    kept = ledger.reserve(["batch:renew"], 600)
    time.sleep(1.8)
    assert ledger.renew(kept)
    time.sleep(1.8)  # past the first lease, inside the renewed one
    assert ledger.reservation_state(kept) == "reserved"
    assert ledger.reserve(["batch:renew"], 500) is None  # still held
    wait_until_expired(ledger, kept)
    assert ledger.reserve(["batch:renew"], 500) is not None  # sweeps it
    assert not ledger.renew(kept)  # its tokens are back in the budget: reserve again
    assert ledger.settle(kept, 100) and not ledger.renew(kept)
    assert ledger.spent("batch:renew") == 100 and ledger.reserved("batch:renew") == 500


def test_lease_follows_the_provider_timeout_and_bad_parameters_are_refused(r):
    settings = load_settings(provider_timeout_s=7, max_sleep_s=3)
    assert lease_s_for(settings) == 7 + 3 + LEASE_MARGIN_S
    assert lease_s_for(settings, margin_s=1) == 11
    assert RedisBudgetLedger(r).lease_s == lease_s_for(
        VetqSettings.model_construct()
    )  # the default follows the settings' defaults
    for bad in (0, -1, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="lease_s"):
            RedisBudgetLedger(r, lease_s=bad)
    with pytest.raises(ValueError, match="key_prefix"):
        RedisBudgetLedger(r, key_prefix="vetq:{budget}")


# --------------------------------------------------------------------------- end to end


class EstimatingGate:
    """Runs calls directly and notes, per stage, what the call gate would reserve."""

    def __init__(self) -> None:
        self.reserves: dict[str, int] = {}

    def call(self, client, request, *, stage, usable=None):
        self.reserves[stage] = estimate_prompt_tokens(request) + request.max_tokens
        return client.complete(request)


def reserves_of_one_globex_job(settings) -> dict[str, int]:
    gate = EstimatingGate()
    pipeline = ExtractionPipeline(
        settings,
        generator_client=ScriptedLLMClient([json.dumps(GLOBEX_DATA)]),
        critic_client=ScriptedLLMClient([critic_answer()]),
        gate=gate,
    )
    assert pipeline.run({"kind": "extract", "text": GLOBEX}).status == "ok"
    return gate.reserves


def test_a_batch_completes_after_a_worker_died_holding_a_reservation(redis_url, tmp_path):
    provider_timeout_s, visibility_timeout_s = 3, 20
    settings = load_settings(
        home=tmp_path / "client-home", task_time_limit_s=10, visibility_timeout_s=visibility_timeout_s
    )
    reserves = reserves_of_one_globex_job(settings)
    # Room for one run of the job, Generator then Critic, and nothing more: the rerun's
    # Critic fits only if the dead Generator reservation was given back.
    budget = reserves["generator"] + reserves["critic"]
    lease_s = lease_s_for(load_settings(provider_timeout_s=provider_timeout_s, max_sleep_s=0))
    assert lease_s < visibility_timeout_s - 2  # the rerun comes after the lease ran out

    with FakeProvider() as fake:
        fake.set_responder(answer_like_a_model)
        fake.push_fault({"kind": "timeout", "seconds": 60}, model="fake-generator")  # holds the first call
        env = {
            "VETQ_GENERATOR": "openai:fake-generator",
            "VETQ_CRITIC": "openai:fake-critic",
            "OPENAI_BASE_URL": fake.base_url_openai,
            "OPENAI_API_KEY": "test-key-not-real",
            "VETQ_HOME": str(tmp_path / "worker-home"),
            "VETQ_LOG_LEVEL": "WARNING",
            "VETQ_PROVIDER_TIMEOUT_S": str(provider_timeout_s),
            "VETQ_MAX_SLEEP_S": "0",
            "VETQ_TASK_TIME_LIMIT_S": "10",
            "VETQ_VISIBILITY_TIMEOUT_S": str(visibility_timeout_s),
        }
        workers = [spawn_worker_process(redis_url, queues=["extract"], concurrency=1, extra_env=env)]
        try:
            with Client(redis_url, settings=settings) as client:
                wait_until(lambda: len(Admin.of(client).workers()) == 1, timeout=60)
                batch = client.submit_batch([{"kind": "extract", "text": GLOBEX}], token_budget=budget)
                wait_until(lambda: any(e["model"] == "fake-generator" for e in fake.log))
                kill_tree(workers[0])  # mid-call: the Generator reservation is never settled

                ledger = RedisBudgetLedger(redis.Redis.from_url(redis_url))
                scope = f"batch:{batch.id}"
                assert ledger.reserved(scope) == reserves["generator"]
                workers.append(spawn_worker_process(redis_url, queues=["extract"], concurrency=1, extra_env=env))

                [result] = batch.results(timeout=120)
                assert result["status"] == "ok", result
                generator_calls = [e for e in fake.log if e["model"] == "fake-generator"]
                assert len(generator_calls) == 2  # the interrupted call and the rerun's
                assert ledger.reserved(scope) == 0
                charged = sum(u["total_tokens"] for u in result["usage"].values())
                assert ledger.spent(scope) == charged <= budget
        finally:
            stop_processes(workers)


def test_a_lease_that_ran_out_during_a_rate_limit_wait_is_renewed_or_refused(r):
    """A worker that waits in place for the limiter longer than its lease has had its
    tokens given back to another reserve: it must not then spend them as well."""
    from vetq.core.llm.errors import BudgetExceededError
    from vetq.core.llm.limits import Limit
    from vetq.core.llm.types import LLMRequest, Message
    from vetq.workers.rate_limiter import RedisRateLimiter

    ledger = RedisBudgetLedger(r, lease_s=0.3)
    ledger.set_limit("batch:wait", 1000, 600)
    client = ScriptedLLMClient(["first", "second"], provider="openai", model="m")
    request = LLMRequest(system="s", messages=[Message(role="user", content="x")], max_tokens=100)
    estimate = estimate_prompt_tokens(request) + request.max_tokens
    taken: list = []

    def sleep_while_another_worker_reserves(seconds: float) -> None:
        time.sleep(max(seconds, 0.6))  # past the lease
        taken.append(ledger.reserve(["job:other", "batch:wait"], 1000 - estimate))

    gate = RedisCallGate(
        r,
        limiter=RedisRateLimiter(r, {"openai:m": Limit(rpm=1)}, window_s=0.5),
        ledger=ledger,
        cache=None,
        budget_scopes=["job:waiter", "batch:wait"],
        max_sleep_s=5,
        sleep=sleep_while_another_worker_reserves,
    )
    gate.call(client, request, stage="generator")  # takes the window's one request
    spent_before = ledger.spent("batch:wait")
    with pytest.raises(BudgetExceededError):
        gate.call(client, request, stage="generator")  # waits for the window, lease runs out
    assert taken and taken[0] is not None  # the other worker got the tokens the lease gave back
    assert len(client.requests) == 1  # so the second call was not sent
    assert ledger.spent("batch:wait") == spent_before
    assert ledger.spent("batch:wait") + ledger.reserved("batch:wait") <= 1000
