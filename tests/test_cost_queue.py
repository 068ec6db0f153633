"""Cost in dollars inside real jobs (a Redis, a worker, the fake provider): results
carry what their calls cost, a cache hit costs nothing, and dollar budgets, per job and
per batch, hold across workers as token budgets do."""

from __future__ import annotations

import json

import pytest
import redis

from tests.conftest import GLOBEX, Service, model_settings
from tests.test_cost import FAKE_PRICES, expected_cost, price_file
from tests.test_review_service import POS, VER, make_request
from vetq.core.llm.prices import MICRO_USD, micro_usd
from vetq.core.llm.scripted import ScriptedLLMClient
from vetq.workers.budget_ledger import RedisBudgetLedger

pytestmark = pytest.mark.processes

PRICE_OF = FAKE_PRICES["models"]


def copies(n: int) -> list[str]:
    return [GLOBEX.replace("Thanks!", f"Thanks! (copy {i})") for i in range(n)]


def stage_model(stage: str) -> str:
    return "openai:fake-generator" if stage.startswith("generator") else "openai:fake-critic"


def test_every_stage_and_the_job_cost_tokens_times_prices_and_the_batch_adds_them_up(
    fake, redis_url, queue_settings, tmp_path
):
    svc = Service(model_settings(queue_settings, prices=price_file(tmp_path)), redis_url)
    try:
        batch = svc.client.submit_batch({"kind": "extract", "text": d} for d in copies(3))
        results = batch.results(timeout=60)
        spent = batch.spent()
    finally:
        svc.close()
    assert [r["status"] for r in results] == ["ok"] * 3, results
    for result in results:
        stages = result["usage"]
        assert set(stages) == {"generator", "critic"}
        for stage, usage in stages.items():
            assert usage["cost_usd"] == expected_cost(usage, PRICE_OF[stage_model(stage)]) > 0
        assert result["cost_usd"] == round(sum(u["cost_usd"] for u in stages.values()), 6)
    assert spent["cost_usd"] == round(sum(r["cost_usd"] for r in results), 6)
    assert spent["total_tokens"] == sum(u["total_tokens"] for r in results for u in r["usage"].values())
    assert (spent["results"], spent["total"]) == (3, 3)


def test_an_answer_from_the_response_cache_costs_nothing(fake, redis_url, queue_settings, tmp_path):
    svc = Service(model_settings(queue_settings, prices=price_file(tmp_path)), redis_url)
    try:
        first = svc.client.submit_extraction(GLOBEX).result(timeout=60)
        again = svc.client.submit_extraction(GLOBEX).result(timeout=60)
    finally:
        svc.close()
    assert first["status"] == again["status"] == "ok"
    assert len(fake.log) == 2  # one Generator and one Critic call, for both jobs
    assert first["cost_usd"] > 0 and again["cost_usd"] == 0.0
    for stage, usage in again["usage"].items():
        assert usage["cost_usd"] == 0.0
        assert usage["total_tokens"] == first["usage"][stage]["total_tokens"] > 0  # its tokens still counted


def test_batch_dollar_budget_is_never_passed_and_nothing_is_charged_twice(fake, redis_url, queue_settings, tmp_path):
    # At $1 per million tokens either way a micro-dollar is a token: the token budget's
    # test in dollars. A call reserves its prompt and max_tokens (4,096 for the
    # Generator, 8,192 for the Critic) and is charged what it used (~700).
    one_per_token = {"models": {m: {"input": 1.0, "output": 1.0} for m in PRICE_OF}}
    budget_usd = 0.02
    settings = model_settings(queue_settings, cache_ttl_s=0, prices=price_file(tmp_path, one_per_token))
    svc = Service(settings, redis_url, concurrency=4)
    try:
        batch = svc.client.submit_batch(({"kind": "extract", "text": d} for d in copies(20)), budget_usd=budget_usd)
        results = batch.results(timeout=120)
    finally:
        svc.close()
    ledger = RedisBudgetLedger(redis.Redis.from_url(redis_url))
    scope = f"batch:{batch.id}:usd"
    spent, reserved = ledger.spent(scope), ledger.reserved(scope)
    statuses = [r["status"] for r in results]
    codes = {r["error"]["code"] for r in results if r["status"] == "error"}
    assert "ok" in statuses and "error" in statuses
    assert codes == {"BUDGET_EXCEEDED"}
    assert ledger.limit(scope) == budget_usd * MICRO_USD
    assert spent <= budget_usd * MICRO_USD and reserved == 0
    charged = sum(micro_usd(u["cost_usd"]) for r in results for u in r["usage"].values())
    assert charged == spent  # every micro-dollar the results report was charged exactly once
    assert len(fake.log) == sum(len(r["usage"]) for r in results)  # no call was made that was not accounted
    assert batch.spent()["cost_usd"] == round(spent / MICRO_USD, 6)
    assert ledger.limit(f"batch:{batch.id}") is None  # no token budget was asked for


def test_a_jobs_own_dollar_budget_travels_in_its_headers(fake, redis_url, queue_settings, tmp_path):
    svc = Service(model_settings(queue_settings, prices=price_file(tmp_path)), redis_url)
    try:
        fits = svc.client.submit_extraction(GLOBEX, budget_usd=1.0)
        fitted = fits.result(timeout=60)
        calls = len(fake.log)
        tiny = svc.client.submit_extraction(GLOBEX.replace("Thanks!", "Thanks again!"), budget_usd=0.001)
        refused = tiny.result(timeout=60)
    finally:
        svc.close()
    ledger = RedisBudgetLedger(redis.Redis.from_url(redis_url))
    assert fitted["status"] == "ok"
    assert ledger.limit(f"job:{fits.id}:usd") == 1_000_000
    assert ledger.spent(f"job:{fits.id}:usd") == micro_usd(fitted["cost_usd"]) > 0
    # The Generator's call may cost up to 4,096 x $8/M > $0.001: refused, nothing sent.
    assert refused["status"] == "error" and refused["error"]["code"] == "BUDGET_EXCEEDED"
    assert "dollar budget" in refused["error"]["message"]
    assert refused["cost_usd"] == 0.0 and len(fake.log) == calls


def test_a_dollar_budget_on_an_unpriced_model_is_a_config_error_before_any_call(fake, redis_url, queue_settings):
    svc = Service(model_settings(queue_settings), redis_url)  # the fake's models are in no price table
    try:
        refused = svc.client.submit_extraction(GLOBEX, budget_usd=5).result(timeout=60)
        unbudgeted = svc.client.submit_extraction(GLOBEX).result(timeout=60)
    finally:
        svc.close()
    assert refused["status"] == "error" and refused["error"]["code"] == "CONFIG_ERROR"
    assert refused["error"]["message"] == (
        "no price for openai:fake-generator; set VETQ_PRICES or drop the dollar budget"
    )
    assert unbudgeted["status"] == "ok" and unbudgeted["cost_usd"] is None
    assert len(fake.log) == 2  # only the unbudgeted job's calls


def test_a_reviews_cost_and_dollar_budget_through_the_queue(redis_url, queue_settings, tmp_path):
    prices = price_file(tmp_path, {"models": {"scripted:priced": {"input": 3.0, "output": 15.0}}})
    svc = Service(queue_settings.model_copy(update={"prices": prices}), redis_url)
    try:
        svc.app.conf.vetq_context.replace_reviewer(ScriptedLLMClient([POS, VER], model="priced"))
        request = make_request().model_dump(mode="json", exclude_none=True)
        job = svc.client.submit_review(request, budget_usd=0.5)
        result = job.result(timeout=30)
        starved = ScriptedLLMClient([POS, VER], model="priced")
        svc.app.conf.vetq_context.replace_reviewer(starved)
        other = {**request, "objective": request["objective"] + " Also keep it cheap."}  # not in the cache
        refused = svc.client.submit_review(other, budget_usd=0.000001).result(timeout=30)
    finally:
        svc.close()
    usage = result["meta"]["usage"]
    assert result["status"] == "ok"
    assert result["meta"]["cost_usd"] == usage["cost_usd"] == expected_cost(usage, {"input": 3.0, "output": 15.0})
    ledger = RedisBudgetLedger(redis.Redis.from_url(redis_url))
    assert ledger.spent(f"job:{job.id}:usd") == micro_usd(usage["cost_usd"])
    assert refused["error"]["code"] == "BUDGET_EXCEEDED" and starved.requests == []
    assert json.loads(json.dumps(refused))["meta"]["cost_usd"] == 0.0
