"""Tenants in real jobs (a Redis, a worker, the fake provider through the openai SDK):
a tenant's budgets per window refuse what does not fit, its use is counted for `vetq
usage`, and the rate-limit benchmark's two tenants, one flooding, at a tiny scale."""

from __future__ import annotations

import json

import pytest
import redis

from tests.conftest import GLOBEX, Service, answer_like_a_model, model_settings, serving_fake_provider
from tests.test_cost import price_file
from vetq.api_client.admin import Admin
from vetq.core.errors import InvalidInputError
from vetq.core.settings import load_settings
from vetq.workers import metrics

pytestmark = pytest.mark.processes

TENANT_LIMITS = "acme=100000tokens,1usd,weight=2;tight=100tokens;broke=0.000001usd"


@pytest.fixture(scope="module")
def tenants(redis_server, tmp_path_factory):
    """One worker for the module: tenant budgets as TENANT_LIMITS, the fake models priced."""
    patch = pytest.MonkeyPatch()
    home = tmp_path_factory.mktemp("tenants")
    with serving_fake_provider(patch, answer_like_a_model) as fake:
        redis.Redis.from_url(redis_server.url).flushall()
        settings = model_settings(
            load_settings(home=home / "home"), prices=price_file(home), cache_ttl_s=0, tenant_limits=TENANT_LIMITS
        )
        service = Service(settings, redis_server.url)
        try:
            yield service, fake
        finally:
            service.close()
    patch.undo()


def copy(n: int) -> str:
    return GLOBEX.replace("Thanks!", f"Thanks! (copy {n})")


def test_a_tenants_calls_are_counted_per_window_and_vetq_usage_prints_them(tenants, redis_server, monkeypatch, capsys):
    service, _ = tenants
    jobs = [service.client.submit_extraction(copy(i), tenant="acme") for i in range(2)]
    jobs.append(service.client.submit_extraction(copy(2)))  # no tenant: not counted
    assert [job.result(timeout=60)["status"] for job in jobs] == ["ok"] * 3
    results = [job.result(timeout=1) for job in jobs[:2]]

    admin = Admin.of(service.client)
    (row,) = admin.usage("acme")
    assert [r["tenant"] for r in admin.usage()] == ["acme"]
    usage = [u for result in results for u in result["usage"].values()]
    assert row["calls"] == 4
    assert row["input_tokens"] == sum(u["prompt_tokens"] for u in usage) > 0
    assert row["output_tokens"] == sum(u["completion_tokens"] for u in usage) > 0
    assert row["tokens"] == sum(u["total_tokens"] for u in usage)
    assert row["cost_usd"] == pytest.approx(sum(r["cost_usd"] for r in results), abs=2e-6)
    assert row["unpriced_calls"] == 0
    assert row["budget"] == {
        "tokens": 100_000,
        "usd": 1.0,
        "weight": 2.0,
        "tokens_left": 100_000 - row["tokens"],
        "usd_left": pytest.approx(1.0 - row["cost_usd"], abs=2e-6),
    }
    assert row["window"]["seconds"] == 86_400 and row["window"]["start"].endswith("T00:00:00Z")
    with pytest.raises(InvalidInputError):
        admin.usage("Not A Tenant")

    from vetq.api_client.cli import EXIT_OK, main

    monkeypatch.setenv("VETQ_REDIS_URL", redis_server.url)
    monkeypatch.setenv("VETQ_TENANT_LIMITS", TENANT_LIMITS)
    assert main(["usage", "--tenant", "acme", "--windows", "2"]) == EXIT_OK
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(line["tenant"], line["calls"]) for line in lines] == [("acme", 4), ("acme", 0)]  # this window, the last
    assert lines[0]["budget"]["tokens_left"] == row["budget"]["tokens_left"]


@pytest.mark.parametrize(("tenant", "unit", "wording"), [("tight", "tokens", "token"), ("broke", "usd", "dollar")])
def test_a_call_that_does_not_fit_its_tenants_budget_is_budget_exceeded(tenants, tenant, unit, wording):
    service, fake = tenants

    def refusals() -> float:
        return metrics.registry().get_sample_value("vetq_budget_refusals_total", {"scope": "tenant", "unit": unit}) or 0

    before, calls = refusals(), len(fake.log)
    result = service.client.submit_extraction(copy(10), tenant=tenant).result(timeout=60)
    assert result["status"] == "error" and result["error"]["code"] == "BUDGET_EXCEEDED", result
    assert f"{wording} budget" in result["error"]["message"] and f"tenant:{tenant}:" in result["error"]["message"]
    assert len(fake.log) == calls  # nothing was sent
    assert refusals() - before == 1


def test_the_benchmark_at_a_tiny_scale_serves_the_quiet_tenant_beside_the_flood():
    """Two tenants through one limit, one flooding: the quiet tenant's jobs are run while
    the flood's backlog is still queued (first come, first served would run them after
    every flood job), and every job of both ends."""
    from vetq.eval.bench_ratelimit import run_tenants

    figures = run_tenants(
        tenants=True,
        flood=30,
        quiet=3,
        quiet_after_s=0.3,
        workers=1,
        concurrency=4,
        rpm=30,
        latency_ms=20,
        window_s=1.0,
        timeout_s=60,
    )
    assert (figures["flood_jobs_completed"], figures["quiet_jobs_completed"]) == (30, 3)
    assert figures["model_calls"] == {"flood": 60, "quiet": 6}
    assert figures["flood_calls_after_quiet_finished"] >= 0.25, figures
