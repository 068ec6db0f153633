"""The call gate inside real jobs: batch budgets, and a Critic 429 retried through
the queue without paying for the Generator twice."""

from __future__ import annotations

import pytest
import redis

from tests.conftest import GLOBEX, GLOBEX_DATA, Service, model_settings
from tests.test_call_gate import count_ledger_calls
from vetq.core.redis_keys import BUDGET_PREFIX
from vetq.workers.budget_ledger import RedisBudgetLedger


def test_critic_429_is_retried_by_the_queue_and_the_generator_is_paid_once(fake, redis_url, queue_settings):
    svc = Service(model_settings(queue_settings, max_sleep_s=0.2), redis_url)
    try:
        fake.push_fault({"kind": "429", "retry_after": 2}, model="fake-critic")
        job = svc.client.submit_extraction(GLOBEX)
        result = job.result(timeout=60)
    finally:
        svc.close()
    assert result["status"] == "ok", result
    by_model = {}
    for entry in fake.log:
        by_model.setdefault(entry["model"], []).append(entry["outcome"])
    assert by_model["fake-generator"] == ["ok"]  # the retried job got it from the cache
    assert by_model["fake-critic"] == ["429", "ok"]
    critic_times = [e["time"] for e in fake.log if e["model"] == "fake-critic"]
    assert critic_times[1] - critic_times[0] >= 2.0  # nothing before Retry-After
    assert not any(e.get("early") for e in fake.log)


def test_batch_token_budget_is_never_passed_and_nothing_is_charged_twice(fake, redis_url, queue_settings):
    # A call reserves its prompt and its max_tokens (4,096 for the Generator, 8,192 for
    # the Critic) and is charged what it used (~700): some jobs fit, the rest are refused.
    budget = 20_000
    svc = Service(model_settings(queue_settings, cache_ttl_s=0), redis_url, concurrency=4)
    try:
        docs = [GLOBEX.replace("Thanks!", f"Thanks! (copy {i})") for i in range(20)]
        batch = svc.client.submit_batch(({"kind": "extract", "text": d} for d in docs), token_budget=budget)
        results = batch.results(timeout=120)
    finally:
        svc.close()
    ledger = RedisBudgetLedger(redis.Redis.from_url(redis_url))
    spent, reserved = ledger.spent(f"batch:{batch.id}"), ledger.reserved(f"batch:{batch.id}")
    statuses = [r["status"] for r in results]
    codes = {r["error"]["code"] for r in results if r["status"] == "error"}
    assert "ok" in statuses and "error" in statuses
    assert codes == {"BUDGET_EXCEEDED"}
    assert spent <= budget and reserved == 0
    charged = sum(u["total_tokens"] for r in results for u in r["usage"].values())
    assert charged == spent  # every token the results report was charged exactly once
    assert len(fake.log) == sum(len(r["usage"]) for r in results)  # no call was made that was not accounted


def test_a_heuristics_only_job_creates_no_budget_key_and_a_job_that_calls_a_model_is_held_to_its_budget(
    fake, redis_url, queue_settings
):
    # The Generator's call reserves its prompt and 4,096 tokens: more than a job has here.
    svc = Service(model_settings(queue_settings, max_job_tokens=1_000), redis_url)
    r = redis.Redis.from_url(redis_url)
    try:
        calls = count_ledger_calls(svc.app.conf.vetq_context.ledger)
        alone = svc.client.submit_validation(GLOBEX, GLOBEX_DATA, heuristics_only=True, budget_usd=1.0)
        lines = [{"kind": "validate", "text": GLOBEX, "data": GLOBEX_DATA, "heuristics_only": True}] * 3
        batch = svc.client.submit_batch(lines, token_budget=10_000)
        results = [alone.result(timeout=60), *batch.results(timeout=60)]
        assert [result["status"] for result in results] == ["ok"] * 4, results
        assert calls == []  # no limit set, nothing reserved or read
        assert r.keys(f"{{{BUDGET_PREFIX}}}*") == []
        refused = svc.client.submit_extraction(GLOBEX)
        result = refused.result(timeout=60)
    finally:
        svc.close()
    assert result["status"] == "error" and result["error"]["code"] == "BUDGET_EXCEEDED", result
    assert fake.log == []  # refused before anything was sent
    ledger = RedisBudgetLedger(r)
    assert ledger.limit(f"job:{refused.id}") == 1_000 and ledger.spent(f"job:{refused.id}") == 0


def test_bad_limits_setting_names_the_variable(monkeypatch):
    from vetq.core.errors import ConfigError
    from vetq.core.settings import load_settings

    monkeypatch.setenv("VETQ_LIMITS", "openai:gpt-5-mini=fast")
    with pytest.raises(ConfigError, match="VETQ_LIMITS"):
        load_settings()
