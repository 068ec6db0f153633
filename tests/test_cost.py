"""Cost in dollars (issue 15): the price table and its lookup, the VETQ_PRICES override,
what a call costs through a gate, results and telemetry carrying it, dollar budgets in
a process, and budget_usd checked at submit. Nothing here starts a process."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from tests.conftest import GLOBEX, model_settings
from tests.test_review_service import POS, VER, make_request
from vetq.core.errors import ConfigError, ErrorCode, InvalidInputError
from vetq.core.extraction.pipeline import ExtractionPipeline
from vetq.core.extraction.schema import ExtractionError, ExtractionResult
from vetq.core.llm.client import ModelSpec
from vetq.core.llm.errors import BudgetExceededError
from vetq.core.llm.gate import DirectGate
from vetq.core.llm.prices import (
    ModelPrice,
    PriceTable,
    check_budget_usd,
    cost_usd,
    load_prices,
    micro_usd,
    shipped_prices,
)
from vetq.core.llm.scripted import ScriptedLLMClient
from vetq.core.llm.types import LLMRequest, LLMResponse, Message, Usage
from vetq.core.results import spent_of
from vetq.core.review.schema import ReviewConfig, ReviewError, ReviewResult
from vetq.core.review.service import run_review
from vetq.core.review.telemetry import REVIEW_RECORD_FIELDS, ListSink
from vetq.core.settings import load_settings

# The fake provider's models, priced by a VETQ_PRICES file in the tests that need them.
FAKE_PRICES = {
    "models": {
        "openai:fake-generator": {"input": 2.0, "output": 8.0},
        "openai:fake-critic": {"input": 0.5, "output": 1.5, "batch_discount": 0.5},
    }
}


def price_file(tmp_path: Path, data: object = FAKE_PRICES, name: str = "prices.json") -> Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def expected_cost(usage: dict, price: dict) -> float:
    return round((usage["prompt_tokens"] * price["input"] + usage["completion_tokens"] * price["output"]) / 1e6, 6)


# ---------------------------------------------------------------- the table and its lookup


def test_the_shipped_table_is_dated_sourced_and_prices_the_models_vetq_names():
    table = shipped_prices()
    assert table.as_of == "2026-12-02"
    assert any("anthropic.com/pricing" in s for s in table.sources)
    assert any("openai.com/api/pricing" in s for s in table.sources)
    for model in (
        "anthropic:claude-sonnet-4-5",
        "anthropic:claude-haiku-4-5",
        "anthropic:claude-opus-4-5",
        "anthropic:claude-opus-4-1",
        "openai:gpt-5",
        "openai:gpt-5-mini",
        "openai:gpt-4.1",
        "openai:gpt-4o",
        "openai:gpt-4o-mini",
    ):
        price = table.lookup(model)
        assert price is not None and price.output >= price.input > 0, model
        assert price.batch_discount == 0.5, model  # both providers' Batch APIs are half price
    # The defaults of VETQ_GENERATOR, VETQ_CRITIC and VETQ_REVIEWER are priced.
    settings = load_settings()
    assert all(table.lookup(settings.spec(role)) is not None for role in ("generator", "critic", "reviewer"))


def test_a_key_prices_its_models_snapshots_and_the_longest_key_wins():
    table = shipped_prices()
    sonnet = table.lookup("anthropic:claude-sonnet-4-5")
    assert table.lookup("anthropic:claude-sonnet-4-5-20250929") == sonnet
    assert table.lookup(ModelSpec(provider="anthropic", model="claude-sonnet-4-5-20250929")) == sonnet
    assert table.lookup("openai:gpt-5-2025-08-07") == table.lookup("openai:gpt-5")
    # gpt-5-mini starts with gpt-5, but its own, longer key wins.
    assert table.lookup("openai:gpt-5-mini-2025-08-07") == table.lookup("openai:gpt-5-mini")
    assert table.lookup("openai:gpt-5-mini") != table.lookup("openai:gpt-5")
    assert table.lookup("openai:gpt-4o-mini") != table.lookup("openai:gpt-4o")


def test_an_unknown_model_has_no_price_and_costs_null_never_zero():
    table = shipped_prices()
    usage = Usage.of(1000, 100)
    for model in ("openai:gpt-5.4", "openai:fake-generator", "bedrock:anthropic.claude-x", "scripted:scripted-model"):
        assert table.lookup(model) is None, model
        assert cost_usd(model, usage, lane="realtime") is None, model
    assert table.lookup("anthropic:claude") is None  # a key is not a prefix of a model's name


def test_cost_is_tokens_times_prices_for_the_lane_rounded_to_micro_dollars():
    usage = Usage.of(1_234, 567)
    realtime = cost_usd("anthropic:claude-sonnet-4-5", usage, lane="realtime")
    assert realtime == round((1_234 * 3.0 + 567 * 15.0) / 1e6, 6)
    assert cost_usd("anthropic:claude-sonnet-4-5", usage, lane="bulk") == round(realtime * 0.5, 6)
    price = ModelPrice(input=1.0, output=2.0, cache_read=0.1, cache_write=1.25, batch_discount=0.5)
    assert price.cost(0, 0, lane="realtime", cache_read_tokens=1_000_000, cache_write_tokens=1_000_000) == 1.35
    assert price.estimate_micro_usd(1_000, 500, lane="realtime") == 2_000  # 1000 x $1/M + 500 x $2/M
    with pytest.raises(ValueError, match="lane"):
        price.factor("overnight")
    assert micro_usd(0.000001) == 1 and micro_usd(50) == 50_000_000


def test_usage_sums_are_null_aware_and_a_null_cost_survives_a_dump_without_nulls():
    assert Usage().cost_usd == 0.0  # no call, no cost
    priced = Usage(prompt_tokens=10, total_tokens=10, cost_usd=0.1) + Usage(cost_usd=0.2)
    assert priced.cost_usd == 0.3  # rounded, not 0.30000000000000004
    unknown = priced + Usage(prompt_tokens=5, total_tokens=5, cost_usd=None)
    assert unknown.cost_usd is None and unknown.total_tokens == 15
    assert (unknown + priced).cost_usd is None
    assert unknown.model_dump(exclude_none=True)["cost_usd"] is None
    assert "cost_usd" not in unknown.model_dump(exclude={"cost_usd"}, exclude_none=True)


# ---------------------------------------------------------------- VETQ_PRICES


def test_an_override_file_replaces_and_adds_entries(tmp_path):
    path = price_file(
        tmp_path,
        {"models": {"anthropic:claude-sonnet-4-5": {"input": 9.0, "output": 9.0}, **FAKE_PRICES["models"]}},
    )
    table = load_prices(path)
    assert table.lookup("anthropic:claude-sonnet-4-5-20250929") == ModelPrice(9.0, 9.0, 9.0, 9.0, 1.0)
    assert table.lookup("openai:fake-generator") == ModelPrice(2.0, 8.0, 2.0, 2.0, 1.0)
    assert table.lookup("anthropic:claude-haiku-4-5") == shipped_prices().lookup("anthropic:claude-haiku-4-5")
    assert shipped_prices().lookup("openai:fake-generator") is None  # the shipped table is untouched


def test_the_override_is_read_through_the_settings_in_json_or_yaml(tmp_path, monkeypatch):
    yaml_file = price_file(
        tmp_path,
        "as_of: 2027-01-15\nmodels:\n  openai:fake-critic: {input: 0.5, output: 1.5, batch_discount: 0.5}\n",
        "prices.yaml",
    )
    monkeypatch.setenv("VETQ_PRICES", str(yaml_file))
    table = load_settings().price_table()
    assert table.lookup("openai:fake-critic") == ModelPrice(0.5, 1.5, 0.5, 0.5, 0.5)
    assert table.as_of == "2027-01-15"
    monkeypatch.setenv("VETQ_PRICES", "")
    assert load_settings().price_table() is shipped_prices()


@pytest.mark.parametrize(
    ("content", "name", "problem"),
    [
        ('{"models": {"openai:x": {"input": 1', "prices.json", "not valid JSON"),
        ("models: [", "prices.yaml", "not valid YAML"),
        ('{"models": {"openai:x": {"input": -1, "output": 1}}}', "prices.json", "greater than or equal to 0"),
        ('{"models": {"openai:x": {"input": NaN, "output": 1}}}', "prices.json", "not valid JSON"),
        ("models:\n  openai:x: {input: .nan, output: 1}\n", "prices.yaml", "finite"),
        ('{"models": {"openai:x": {"input": 1, "output": 1, "inptu": 2}}}', "prices.json", "unknown field"),
        ('{"models": {"openai:x": {"input": 1, "output": 1, "batch_discount": 2}}}', "prices.json", "less than"),
        ('{"models": {"nowhere:x": {"input": 1, "output": 1}}}', "prices.json", "unknown provider"),
        ('{"models": {"gpt-5": {"input": 1, "output": 1}}}', "prices.json", "provider:model"),
        ('{"prices": {}}', "prices.json", "models"),
        ("[]", "prices.yaml", "the file"),
    ],
)
def test_a_malformed_price_file_is_a_config_error_naming_vetq_prices(tmp_path, monkeypatch, content, name, problem):
    monkeypatch.setenv("VETQ_PRICES", str(price_file(tmp_path, content, name)))
    with pytest.raises(ConfigError) as caught:
        load_settings()
    assert caught.value.code is ErrorCode.CONFIG_ERROR
    assert "VETQ_PRICES" in caught.value.message and problem in caught.value.message, caught.value.message


def test_a_missing_price_file_is_a_config_error_naming_vetq_prices(tmp_path, monkeypatch):
    monkeypatch.setenv("VETQ_PRICES", str(tmp_path / "nowhere.json"))
    with pytest.raises(ConfigError, match="VETQ_PRICES"):
        load_settings()


# ---------------------------------------------------------------- through a gate


def request(max_tokens: int = 300) -> LLMRequest:
    return LLMRequest(system="s", messages=(Message(role="user", content="x" * 300),), max_tokens=max_tokens)


def answer(prompt: int = 100, completion: int = 50) -> LLMResponse:
    return LLMResponse(text="{}", finish_reason="stop", usage=Usage.of(prompt, completion))


TABLE = PriceTable({"scripted:priced": ModelPrice(2.0, 8.0, 2.0, 2.0, 0.5)})


def test_a_gate_prices_every_answered_call_for_its_lane():
    client = ScriptedLLMClient([answer(), answer()], model="priced")
    assert DirectGate(prices=TABLE).call(client, request(), stage="s").usage.cost_usd == 0.0006
    assert DirectGate(prices=TABLE, lane="bulk").call(client, request(), stage="s").usage.cost_usd == 0.0003
    unpriced = ScriptedLLMClient([answer()], model="unpriced")
    assert DirectGate(prices=TABLE).call(unpriced, request(), stage="s").usage.cost_usd is None
    with pytest.raises(ValueError, match="lane"):
        DirectGate(lane="tomorrow")


def test_a_local_dollar_budget_is_reserved_settled_and_refuses_what_does_not_fit():
    # Each call reserves 109 prompt + 300 max tokens at $2/$8 per M ($0.002618) and costs $0.0006.
    gate = DirectGate(budget_usd=0.0038, prices=TABLE)
    client = ScriptedLLMClient([answer(), answer(), answer()], model="priced")
    gate.call(client, request(), stage="one")
    gate.call(client, request(), stage="two")
    assert gate.spent_usd == 0.0012
    with pytest.raises(BudgetExceededError, match="dollar budget"):
        gate.call(client, request(), stage="three")  # $0.0026 left, the call may cost $0.002618
    assert len(client.requests) == 2 and gate.spent_usd == 0.0012  # nothing sent, nothing charged


def test_a_dollar_budget_on_a_model_without_a_price_is_a_config_error_before_anything_is_sent():
    client = ScriptedLLMClient([answer()], model="unpriced")
    with pytest.raises(ConfigError, match="no price for scripted:unpriced; set VETQ_PRICES or drop the dollar budget"):
        DirectGate(budget_usd=10, prices=TABLE).call(client, request(), stage="s")
    assert client.requests == []


# ---------------------------------------------------------------- results


def test_an_extraction_through_the_fake_provider_costs_tokens_times_prices(fake, tmp_path):
    settings = model_settings(load_settings(), prices=price_file(tmp_path))
    result = ExtractionPipeline(settings).extract(GLOBEX)
    assert isinstance(result, ExtractionResult) and result.status == "ok", result
    usage = result.model_dump(mode="json")["usage"]
    assert set(usage) == {"generator", "critic"}
    generator = expected_cost(usage["generator"], FAKE_PRICES["models"]["openai:fake-generator"])
    critic = expected_cost(usage["critic"], FAKE_PRICES["models"]["openai:fake-critic"])
    assert usage["generator"]["cost_usd"] == generator > 0
    assert usage["critic"]["cost_usd"] == critic > 0
    assert result.cost_usd == round(generator + critic, 6)


def test_an_extraction_on_unpriced_models_costs_null(fake):
    result = ExtractionPipeline(model_settings(load_settings())).extract(GLOBEX)
    dumped = result.model_dump(mode="json")
    assert dumped["status"] == "ok" and dumped["cost_usd"] is None
    assert all(stage["cost_usd"] is None and stage["total_tokens"] > 0 for stage in dumped["usage"].values())


def test_a_result_without_a_model_call_costs_zero():
    result = ExtractionPipeline(load_settings()).validate(GLOBEX, {"total": 583.2}, heuristics_only=True)
    assert result.model_dump(mode="json")["cost_usd"] == 0.0
    error = ExtractionError.of(ErrorCode.INVALID_INPUT, "no")
    assert error.model_dump(mode="json")["cost_usd"] == 0.0
    partial = ExtractionError.of(
        ErrorCode.TIMEOUT, "late", usage={"generator": Usage(cost_usd=0.25), "failed_stage": Usage(cost_usd=None)}
    )
    assert partial.cost_usd is None


def test_a_reviews_meta_and_telemetry_carry_its_cost():
    sink = ListSink()
    client = ScriptedLLMClient([POS, VER], provider="scripted", model="priced")
    outcome = run_review(make_request(), client, gate=DirectGate(prices=TABLE), config=ReviewConfig(), telemetry=sink)
    assert isinstance(outcome, ReviewResult)
    expected = round((outcome.meta.usage.prompt_tokens * 2.0 + outcome.meta.usage.completion_tokens * 8.0) / 1e6, 6)
    assert outcome.meta.cost_usd == outcome.meta.usage.cost_usd == expected > 0
    assert "cost_usd" in REVIEW_RECORD_FIELDS and sink.records[0]["cost_usd"] == expected

    unpriced = run_review(make_request(), ScriptedLLMClient([POS, VER]), gate=DirectGate(prices=TABLE))
    dumped = unpriced.model_dump(mode="json", exclude_none=True)  # how a worker writes a review
    assert dumped["meta"]["cost_usd"] is None and dumped["meta"]["usage"]["cost_usd"] is None


def test_a_review_over_its_dollar_budget_is_refused_or_cut_short():
    client = ScriptedLLMClient([POS, VER], model="priced")
    outcome = run_review(make_request(), client, gate=DirectGate(budget_usd=0.000001, prices=TABLE))
    assert isinstance(outcome, ReviewError) and outcome.code is ErrorCode.BUDGET_EXCEEDED
    assert client.requests == []
    unpriced = run_review(make_request(), ScriptedLLMClient([POS, VER]), gate=DirectGate(budget_usd=1, prices=TABLE))
    assert isinstance(unpriced, ReviewError) and unpriced.code is ErrorCode.CONFIG_ERROR


def test_spent_of_adds_up_results_of_every_kind_null_aware():
    extraction = {
        "format": 2,
        "status": "ok",
        "usage": {"generator": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15, "cost_usd": 0.1}},
        "cost_usd": 0.1,
    }
    review = {"format": 2, "status": "ok", "meta": {"usage": {"prompt_tokens": 1, "total_tokens": 1}, "cost_usd": 0.2}}
    refused = {"format": 2, "status": "error", "error": {"code": "INVALID_INPUT", "message": "bad line"}}
    spent = spent_of([extraction, review, refused])
    assert spent == {"cost_usd": 0.3, "prompt_tokens": 11, "completion_tokens": 5, "total_tokens": 16}
    unpriced = {**extraction, "cost_usd": None}
    assert spent_of([extraction, unpriced])["cost_usd"] is None
    older = {"status": "ok", "usage": {"generator": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}}}
    assert spent_of([older])["cost_usd"] is None  # priced by nobody: unknown, not free
    assert spent_of([])["cost_usd"] == 0.0


# ---------------------------------------------------------------- budget_usd at submit


@pytest.mark.parametrize("bad", [0, -1, -0.5, math.nan, math.inf, True, "10", 1e-9])
def test_a_budget_usd_that_is_not_a_positive_finite_number_is_invalid_input(bad):
    with pytest.raises(InvalidInputError, match="budget_usd"):
        check_budget_usd(bad)
    assert check_budget_usd(None) is None and check_budget_usd(50) == 50.0


@pytest.mark.parametrize("bad", [0, -2, math.nan, math.inf])
def test_the_client_refuses_a_bad_budget_usd_before_sending_anything(bad):
    from vetq.api_client.client import Client

    # Nothing listens on port 1: a submit that tried to send would fail otherwise.
    client = Client("redis://127.0.0.1:1/0", settings=load_settings())
    try:
        for submit in (
            lambda: client.submit_extraction(GLOBEX, budget_usd=bad),
            lambda: client.submit_validation(GLOBEX, {"total": 583.2}, budget_usd=bad),
            lambda: client.submit_review(make_request().model_dump(), budget_usd=bad),
            lambda: client.submit_batch([{"text": GLOBEX}], budget_usd=bad),
        ):
            with pytest.raises(InvalidInputError, match="budget_usd") as caught:
                submit()
            assert caught.value.code is ErrorCode.INVALID_INPUT
    finally:
        client.app.close()


@pytest.mark.parametrize(
    "argv",
    [
        ["extract", "--budget-usd", "0"],
        ["extract", "--batch", "--budget-usd", "nan"],
        ["validate", "--data", '{"total": 583.2}', "--budget-usd", "-1"],
        ["review", "--budget-usd", "inf"],
    ],
)
def test_the_cli_refuses_a_bad_budget_usd_with_invalid_input(argv, tmp_path, capsys):
    from vetq.api_client.cli import EXIT_INPUT, main

    document = tmp_path / "doc.txt"
    document.write_text(GLOBEX)
    if argv[0] == "review":
        document.write_text(make_request().model_dump_json())
    elif "--batch" in argv:
        document.write_text(json.dumps({"text": GLOBEX}) + "\n")
    assert main([*argv, "--file", str(document)]) == EXIT_INPUT
    line = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert line["error"]["code"] == "INVALID_INPUT" and "--budget-usd" in line["error"]["message"]
