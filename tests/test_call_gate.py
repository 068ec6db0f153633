"""The fleet-wide call gate against a real Redis (the embedded redis-server) and the
fake provider through the real SDK clients."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import redis

from tests.conftest import starts_processes
from vetq.core.errors import ConfigError, ErrorCode
from vetq.core.llm.errors import BudgetExceededError, ProviderHTTPError, RateLimitedError
from vetq.core.llm.limits import Limit, parse_limits
from vetq.core.llm.providers import OpenAIClient
from vetq.core.llm.scripted import ScriptedLLMClient
from vetq.core.llm.types import LLMRequest, LLMResponse, Message, RateLimitInfo, Usage
from vetq.eval.fake_provider import FakeProvider
from vetq.workers.budget_ledger import UNLIMITED, RedisBudgetLedger
from vetq.workers.call_gate import (
    MAX_BACKOFF_S,
    RateLimitExhaustedError,
    RateLimitWaitError,
    RedisCallGate,
    full_jitter_backoff_s,
)
from vetq.workers.embedded_redis import EmbeddedRedis
from vetq.workers.rate_limiter import RedisRateLimiter
from vetq.workers.response_cache import RedisResponseCache

ROOT = Path(__file__).resolve().parents[1]


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
@starts_processes
def redis_url(tmp_path_factory: pytest.TempPathFactory):
    server = EmbeddedRedis(tmp_path_factory.mktemp("gate-redis")).start()
    try:
        yield server.url
    finally:
        server.stop()


@pytest.fixture()
def r(redis_url: str):
    client = redis.Redis.from_url(redis_url)
    client.flushall()
    yield client
    client.flushall()
    client.close()


@pytest.fixture()
def fake():
    provider = FakeProvider().start()
    try:
        yield provider
    finally:
        provider.stop()


def openai_client(fake: FakeProvider, model: str) -> OpenAIClient:
    return OpenAIClient(model, base_url=fake.base_url_openai, api_key="test-key", timeout_s=10)


def request(text: str = "hello", **kw) -> LLMRequest:
    return LLMRequest(system="You answer in JSON.", messages=(Message(role="user", content=text),), max_tokens=64, **kw)


def make_gate(r, *, limits=None, window_s=60.0, cache=True, **kw) -> RedisCallGate:
    return RedisCallGate(
        r,
        limiter=RedisRateLimiter(r, limits or {}, window_s=window_s),
        ledger=RedisBudgetLedger(r),
        cache=RedisResponseCache(r, 3600) if cache else None,
        **kw,
    )


def ok_entries(fake: FakeProvider, model: str) -> list[dict]:
    return [e for e in fake.log if e["model"] == model]


# --------------------------------------------------------------------------- limits


def test_parse_limits_good():
    text = " anthropic:claude-sonnet-4-5=50rpm, 40000tpm ; openai:gpt-5-mini=500rpm;openai:x=10TPM; "
    assert parse_limits(text) == {
        "anthropic:claude-sonnet-4-5": Limit(rpm=50, tpm=40000),
        "openai:gpt-5-mini": Limit(rpm=500, tpm=None),
        "openai:x": Limit(rpm=None, tpm=10),
    }
    assert parse_limits("") == {} and parse_limits(None) == {}
    # a Bedrock model id holds a colon of its own
    assert parse_limits("bedrock:anthropic.claude-v2:1=5rpm") == {"bedrock:anthropic.claude-v2:1": Limit(rpm=5)}


def test_limits_are_read_through_the_settings(monkeypatch):
    from vetq.core.settings import load_settings

    monkeypatch.setenv("VETQ_LIMITS", "openai:m=1rpm")
    assert parse_limits(load_settings().limits) == {"openai:m": Limit(rpm=1)}
    monkeypatch.delenv("VETQ_LIMITS")
    assert parse_limits(load_settings().limits) == {}


@pytest.mark.parametrize(
    "bad, part",
    [
        ("openai:gpt-5-mini", "openai:gpt-5-mini"),
        ("gpt-5-mini=5rpm", "gpt-5-mini=5rpm"),
        ("openai:m=5rps", "5rps"),
        ("openai:m=rpm", "rpm"),
        ("openai:m=0rpm", "0rpm"),
        ("openai:m=-3rpm", "-3rpm"),
        ("openai:m=5rpm,6rpm", "openai:m=5rpm,6rpm"),
        ("openai:m=", "openai:m="),
        ("openai:m=5rpm;openai:m=6rpm", "openai:m=6rpm"),
        ("nosuch:m=5rpm", "nosuch:m=5rpm"),
        ("openai:m=5 rpm 6tpm", "5 rpm 6tpm"),
    ],
)
def test_parse_limits_bad(bad: str, part: str):
    with pytest.raises(ConfigError) as info:
        parse_limits(bad)
    assert "VETQ_LIMITS" in info.value.message
    assert repr(part) in info.value.message
    assert info.value.code is ErrorCode.CONFIG_ERROR


# --------------------------------------------------------------------------- limiter


@pytest.mark.processes
def test_limiter_rpm_tpm_cooldown_and_learn(r):
    limiter = RedisRateLimiter(r, {"openai:m": Limit(rpm=3, tpm=1000)}, window_s=2)
    assert [limiter.acquire("openai:m", 100) for _ in range(3)] == [0.0, 0.0, 0.0]
    wait = limiter.acquire("openai:m", 100)
    assert 0 < wait <= 2.0
    assert limiter.in_window("openai:m") == 3

    tpm = RedisRateLimiter(r, {"openai:t": Limit(tpm=1000)}, window_s=2)
    assert tpm.acquire("openai:t", 600, entry_id="a") == 0.0
    assert tpm.acquire("openai:t", 600) > 0  # 1200 > 1000 counting the estimate
    assert tpm.settle("openai:t", "a", 300)  # the provider counted less
    assert tpm.acquire("openai:t", 600) == 0.0
    assert tpm.acquire("openai:t", 2000) == 2.0  # never fits: a full window
    assert not tpm.settle("openai:t", "gone", 5)

    # unconfigured model: no counting, but cooldowns hold, and only ever grow
    assert all(limiter.acquire("openai:free", 10**9) == 0.0 for _ in range(50))
    assert limiter.cooldown("openai:free", 1.0) == pytest.approx(1.0)
    assert limiter.cooldown("openai:free", 0.2) > 0.9
    assert 0.8 < limiter.acquire("openai:free", 1) <= 1.0

    assert limiter.learn("openai:l", RateLimitInfo(remaining_requests=5, reset_requests_s=9)) == 0.0
    assert limiter.learn("openai:l", RateLimitInfo(remaining_tokens=0, reset_tokens_s=1.5)) == pytest.approx(1.5)
    assert 1.0 < limiter.cooldown_left("openai:l") <= 1.5


# --------------------------------------------------------------------------- two processes, one limit

CHILD = r"""
import json, sys, time
import redis
from vetq.core.llm.providers import OpenAIClient
from vetq.core.llm.types import LLMRequest, Message
from vetq.workers.call_gate import RedisCallGate
from vetq.core.llm.limits import parse_limits
from vetq.workers.rate_limiter import RedisRateLimiter
from vetq.workers.budget_ledger import RedisBudgetLedger

url, base_url, name, count, start_at, window = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5]), float(sys.argv[6])
r = redis.Redis.from_url(url)
gate = RedisCallGate(r, limiter=RedisRateLimiter(r, parse_limits("openai:shared-model=5rpm"), window_s=window),
                     ledger=RedisBudgetLedger(r), cache=None, max_sleep_s=30.0)
client = OpenAIClient("shared-model", base_url=base_url, api_key="test-key", timeout_s=10)
while time.time() < start_at:
    time.sleep(0.005)
done = 0
for i in range(count):
    gate.call(client, LLMRequest(system="s", messages=(Message(role="user", content=f"{name}-{i}"),), max_tokens=16), stage="load")
    done += 1
print(json.dumps({"done": done, "stats": gate.stats}))
"""


@pytest.mark.processes
def test_two_processes_never_pass_the_shared_limit(r, redis_url, fake, monkeypatch):
    window, limit, per_process = 3.0, 5, 9
    monkeypatch.setattr(fake, "window_s", window)  # the fake counts the same window
    fake.rpm = limit
    start_at = time.time() + 2.0
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                CHILD,
                redis_url,
                fake.base_url_openai,
                name,
                str(per_process),
                str(start_at),
                str(window),
            ],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("a", "b")
    ]
    results = []
    try:
        for proc in procs:
            out, err = proc.communicate(timeout=60)
            assert proc.returncode == 0, err[-2000:]
            results.append(json.loads(out.strip().splitlines()[-1]))
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert [res["done"] for res in results] == [per_process, per_process]
    assert sum(res["stats"]["rate_limited"] for res in results) == 0
    log = sorted(fake.log, key=lambda e: e["time"])
    assert len(log) == 2 * per_process
    assert all(e["outcome"] == "ok" and not e["early"] for e in log)
    times = [e["time"] for e in log]
    for i, t in enumerate(times):
        in_span = sum(1 for u in times[i:] if u < t + window)
        assert in_span <= limit, f"{in_span} requests within {window}s from {t}"
    # both processes had to wait for each other
    assert sum(res["stats"]["waits_s"] for res in results) > 0


# --------------------------------------------------------------------------- Retry-After, shared


@pytest.mark.processes
def test_retry_after_is_honoured_by_every_gate(r, fake):
    model = "cool-model"
    gate_a, gate_b = make_gate(r, max_sleep_s=10), make_gate(r, max_sleep_s=10)
    client_a, client_b = openai_client(fake, model), openai_client(fake, model)
    fake.push_fault({"kind": "429", "retry_after": 3}, model=model)
    results: dict[str, LLMResponse] = {}

    def run(name, gate, client):
        results[name] = gate.call(client, request(f"from {name}"), stage="test")

    thread_a = threading.Thread(target=run, args=("a", gate_a, client_a))
    thread_a.start()
    deadline = time.monotonic() + 5
    while not any(e["outcome"] == "429" for e in fake.log) and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.1)  # gate A has set the shared cooldown by now
    thread_b = threading.Thread(target=run, args=("b", gate_b, client_b))
    thread_b.start()
    thread_a.join(timeout=20)
    thread_b.join(timeout=20)
    assert not thread_a.is_alive() and not thread_b.is_alive()
    assert set(results) == {"a", "b"}

    entries = ok_entries(fake, model)
    rejected = [e for e in entries if e["outcome"] == "429"]
    assert len(rejected) == 1
    t429 = rejected[0]["time"]
    later = [e for e in entries if e is not rejected[0]]
    assert len(later) == 2 and all(e["outcome"] == "ok" for e in later)
    assert all(e["time"] >= t429 + 3.0 for e in later), [e["time"] - t429 for e in later]
    assert not any(e["early"] for e in entries)
    assert gate_a.stats["rate_limited"] == 1 and gate_a.stats["waits_s"] > 2
    assert gate_b.stats["rate_limited"] == 0 and gate_b.stats["waits_s"] > 2


# --------------------------------------------------------------------------- budget


class SlowClient:
    """A thread-safe fake model that takes a while and reports a fixed usage."""

    provider = "scripted"

    def __init__(self, model="slow", usage_total=300, delay_s=0.05):
        self.model = model
        self.usage_total = usage_total
        self.delay_s = delay_s
        self.calls = 0
        self._lock = threading.Lock()

    def complete(self, req: LLMRequest) -> LLMResponse:
        with self._lock:
            self.calls += 1
        time.sleep(self.delay_s)
        return LLMResponse(
            text="{}",
            finish_reason="stop",
            model=self.model,
            usage=Usage.of(self.usage_total // 2, self.usage_total - self.usage_total // 2),
        )


def test_budget_concurrent_reservations_never_overspend(r):
    ledger = RedisBudgetLedger(r)
    ledger.set_limit("batch:b1", 10_000, 600)
    with ThreadPoolExecutor(20) as pool:
        ids = list(pool.map(lambda _: ledger.reserve(["batch:b1"], 1000), range(20)))
    granted = [i for i in ids if i is not None]
    assert len(granted) == 10
    assert ledger.remaining("batch:b1") == 0 and ledger.reserved("batch:b1") == 10_000
    for rid in granted:
        assert ledger.settle(rid, 900)
    assert ledger.spent("batch:b1") == 9000 and ledger.remaining("batch:b1") == 1000


def test_budget_through_gates_in_threads(r):
    from vetq.core.llm.tokens import estimate_prompt_tokens

    ledger = RedisBudgetLedger(r)
    req = request("x" * 300, use_cache=False)
    est = estimate_prompt_tokens(req) + req.max_tokens
    budget = 5 * est + est // 2
    ledger.set_limit("batch:b2", budget, 600)
    usage = est - 20  # the provider counts a little less than the estimate
    client = SlowClient(usage_total=usage)
    outcomes: list[object] = []

    def one(i: int):
        gate = RedisCallGate(
            r,
            limiter=RedisRateLimiter(r, {}),
            ledger=ledger,
            cache=None,
            budget_scopes=["batch:b2", f"job:{i}"],
            job_scope_tokens=100_000,
        )
        try:
            outcomes.append(gate.call(client, req, stage="test"))
        except BudgetExceededError as exc:
            outcomes.append(exc)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=20)
    ok = [o for o in outcomes if isinstance(o, LLMResponse)]
    refused = [o for o in outcomes if isinstance(o, BudgetExceededError)]
    assert len(ok) + len(refused) == 20 and refused
    assert len(ok) >= budget // est
    assert all(not e.retryable and e.code is ErrorCode.BUDGET_EXCEEDED for e in refused)
    assert ledger.spent("batch:b2") == usage * len(ok) <= budget
    assert ledger.reserved("batch:b2") == 0
    assert client.calls == len(ok)
    assert ledger.limit("job:0") == 100_000


def test_budget_settle_once_release_and_atomic_scopes(r):
    ledger = RedisBudgetLedger(r)
    assert ledger.set_limit("job:1", 1000, 600)
    assert not ledger.set_limit("job:1", 50, 600)  # re-delivery does not reset
    assert ledger.limit("job:1") == 1000
    ledger.set_limit("batch:1", 500, 600)

    rid = ledger.reserve(["job:1", "batch:1"], 400)
    assert rid is not None
    assert ledger.remaining("job:1") == 600 and ledger.remaining("batch:1") == 100
    assert ledger.reserve(["job:1", "batch:1"], 200) is None  # batch too small: nothing reserved
    assert ledger.remaining("job:1") == 600
    assert ledger.settle(rid, 450)
    assert not ledger.settle(rid, 450)  # a second settle charges nothing
    assert not ledger.release(rid)
    assert ledger.spent("job:1") == 450 and ledger.spent("batch:1") == 450
    assert ledger.remaining("batch:1") == 50 and ledger.reservation_state(rid) == "settled"

    rid2 = ledger.reserve(["job:1"], 300)
    assert ledger.remaining("job:1") == 250
    assert ledger.release(rid2)
    assert not ledger.settle(rid2, 300)
    assert ledger.remaining("job:1") == 550 and ledger.spent("job:1") == 450
    assert not ledger.settle("no-such-reservation", 5)

    # a scope without a limit is tracked, never refused
    assert ledger.remaining("job:free") == UNLIMITED
    rid3 = ledger.reserve(["job:free"], 10**9)
    assert ledger.settle(rid3, 77) and ledger.spent("job:free") == 77


def test_the_gate_tells_what_its_budget_scopes_leave_and_scopes_a_job(r):
    ledger = RedisBudgetLedger(r)
    ledger.set_limit("job:9", 1000, 600)
    ledger.set_limit("batch:9", 700, 600)
    gate = RedisCallGate(r, limiter=None, ledger=ledger, cache=None, budget_scopes=["job:9", "batch:9"])
    assert gate.tokens_left() == 700  # the tightest scope
    assert gate.job_scope(5_000) is gate and ledger.limit("job:9") == 1000  # a job keeps its limit
    client = ScriptedLLMClient([LLMResponse(text="{}", usage=Usage.of(150, 50))])
    gate.call(client, request(), stage="s")  # settled once, by the gate itself
    assert gate.tokens_left() == 500 and ledger.remaining("job:9") == 800
    assert RedisCallGate(r, limiter=None, ledger=ledger, cache=None).tokens_left() is None

    unscoped = RedisCallGate(r, limiter=None, ledger=ledger, cache=None, budget_scopes=["batch:9"])
    job = unscoped.job_scope(300)  # a gate with no job scope gets one of its own
    assert job is not unscoped and unscoped.budget_scopes == ["batch:9"]
    assert job.tokens_left() == 300
    with pytest.raises(BudgetExceededError):
        job.call(ScriptedLLMClient([]), request("x" * 2_000), stage="s")


def count_ledger_calls(ledger: RedisBudgetLedger) -> list[str]:
    """Every Lua round trip `ledger` makes from now on, by script attribute."""
    calls: list[str] = []
    for name in ("_set_limit", "_reserve", "_finish", "_renew", "_charge", "_sweep"):
        script = getattr(ledger, name)

        def counted(*args, _name=name, _script=script, **kwargs):
            calls.append(_name)
            return _script(*args, **kwargs)

        setattr(ledger, name, counted)
    return calls


def test_a_gate_gives_its_scopes_their_limits_at_the_first_call_once_and_in_one_round_trip(r):
    ledger = RedisBudgetLedger(r)
    calls = count_ledger_calls(ledger)
    limits = {"job:lazy": 5_000, "batch:lazy": 3_000}
    gate = RedisCallGate(r, limiter=None, ledger=ledger, cache=None, budget_scopes=list(limits), budget_limits=limits)
    assert gate.job_scope(9_000) is gate  # the job scope has a limit coming: it stands
    assert calls == [] and r.keys("{vetq:budget}*") == []  # a gate costs nothing until a call needs it
    answers = [LLMResponse(text="{}", usage=Usage.of(150, 50)), LLMResponse(text="{}", usage=Usage.of(150, 50))]
    client = ScriptedLLMClient(answers)
    gate.call(client, request("one", use_cache=False), stage="s")
    assert calls[0] == "_set_limit" and calls.count("_set_limit") == 1  # both scopes, one round trip
    gate.call(client, request("two", use_cache=False), stage="s")
    assert calls.count("_set_limit") == 1
    assert ledger.limit("job:lazy") == 5_000 and ledger.limit("batch:lazy") == 3_000
    assert ledger.spent("job:lazy") == 400 and ledger.spent("batch:lazy") == 400
    # The job delivered again: its new gate keeps what was spent and the limits set first.
    again = RedisCallGate(
        r, limiter=None, ledger=ledger, cache=None, budget_scopes=list(limits), budget_limits={s: 50 for s in limits}
    )
    assert again.tokens_left() == 2_600 and ledger.limit("job:lazy") == 5_000
    with pytest.raises(BudgetExceededError):
        again.call(ScriptedLLMClient([]), request("x" * 12_000, use_cache=False), stage="s")
    # A gate with no job scope of its own gets one, its limit set at its first need too.
    unscoped = RedisCallGate(r, limiter=None, ledger=ledger, cache=None, budget_scopes=["batch:lazy"])
    before = len(calls)
    job = unscoped.job_scope(300)
    assert len(calls) == before and job.tokens_left() == 300


# --------------------------------------------------------------------------- cache


def test_cache_serves_repeats_and_respects_use_cache_and_truncation(r, fake):
    gate = make_gate(r)
    client = openai_client(fake, "cache-model")
    first = gate.call(client, request("same"), stage="generator")
    second = gate.call(client, request("same"), stage="generator")
    assert not first.cached and second.cached and second.text == first.text
    assert len(ok_entries(fake, "cache-model")) == 1
    assert gate.stats["cache_hits"] == 1 and gate.stats["calls"] == 1

    bypass = gate.call(client, request("same", use_cache=False), stage="generator")
    assert not bypass.cached and len(ok_entries(fake, "cache-model")) == 2

    fake.push_fault({"kind": "truncated"}, model="cache-model")
    cut = gate.call(client, request("other"), stage="generator")
    assert cut.truncated
    again = gate.call(client, request("other"), stage="generator")
    assert not again.cached and len(ok_entries(fake, "cache-model")) == 4
    assert gate.call(client, request("other"), stage="generator").cached  # the full answer was cached


def test_cache_hit_costs_no_budget_and_logs_no_text(r, fake, capsys):
    from vetq.core.logging import configure_logging

    configure_logging("INFO", force=True)  # what it asserts is in the INFO lines
    ledger = RedisBudgetLedger(r)
    ledger.set_limit("job:c", 100_000, 600)
    gate = RedisCallGate(
        r, limiter=RedisRateLimiter(r, {}), ledger=ledger, cache=RedisResponseCache(r, 60), budget_scopes=["job:c"]
    )
    client = openai_client(fake, "cache-model")
    gate.call(client, request("secret-document-text"), stage="critic")
    spent = ledger.spent("job:c")
    assert spent > 0
    assert gate.call(client, request("secret-document-text"), stage="critic").cached
    assert ledger.spent("job:c") == spent and ledger.reserved("job:c") == 0
    captured = capsys.readouterr()
    out = captured.err
    assert "cache_hit" in out and "cache_miss" in out and "model_call" in out
    assert "secret-document-text" not in out


# --------------------------------------------------------------------------- job retry


def test_critic_429_then_job_retry_calls_generator_once(r, fake):
    gen_client, critic_client = openai_client(fake, "gen-model"), openai_client(fake, "critic-model")
    gen_req, critic_req = request("extract this"), request("check this")
    fake.push_fault({"kind": "429", "retry_after": 2}, model="critic-model")

    first_run = make_gate(r, max_sleep_s=1.0, attempt_key="job:j1")
    assert not first_run.call(gen_client, gen_req, stage="generator").cached
    with pytest.raises(RateLimitWaitError) as info:
        first_run.call(critic_client, critic_req, stage="critic")
    assert info.value.retryable and info.value.code is ErrorCode.RATE_LIMITED
    assert 1.5 <= info.value.retry_after_s <= 2.0

    time.sleep(info.value.retry_after_s)  # Celery's retry(countdown=...)
    second_run = make_gate(r, max_sleep_s=1.0, attempt_key="job:j1")
    assert second_run.call(gen_client, gen_req, stage="generator").cached
    assert not second_run.call(critic_client, critic_req, stage="critic").cached

    assert [e["outcome"] for e in ok_entries(fake, "gen-model")] == ["ok"]
    critic = ok_entries(fake, "critic-model")
    assert [e["outcome"] for e in critic] == ["429", "ok"]
    assert critic[1]["time"] >= critic[0]["time"] + 2.0 and not critic[1]["early"]


def test_limiter_wait_beyond_max_sleep_hands_the_slot_back(r):
    ledger = RedisBudgetLedger(r)
    ledger.set_limit("job:w", 10_000, 600)
    limiter = RedisRateLimiter(r, {"scripted:busy": Limit(rpm=1)}, window_s=30)
    gate = RedisCallGate(r, limiter=limiter, ledger=ledger, cache=None, budget_scopes=["job:w"], max_sleep_s=1)
    client = ScriptedLLMClient(["{}"], model="busy")
    gate.call(client, request("one"), stage="s")
    spent = ledger.spent("job:w")
    with pytest.raises(RateLimitWaitError) as info:
        gate.call(client, request("two"), stage="s")
    assert 25 < info.value.retry_after_s <= 30 and info.value.retryable
    assert ledger.reserved("job:w") == 0 and ledger.spent("job:w") == spent  # released
    assert client.remaining == 0 and len(client.requests) == 1


# --------------------------------------------------------------------------- attempts


def test_attempts_are_bounded_within_one_call(r):
    client = ScriptedLLMClient([RateLimitedError("slow down", retry_after_s=0.05) for _ in range(3)])
    gate = make_gate(r, cache=False, max_attempts=3, max_sleep_s=5)
    with pytest.raises(RateLimitExhaustedError) as info:
        gate.call(client, request(), stage="s")
    assert not info.value.retryable and info.value.code is ErrorCode.RATE_LIMITED
    assert len(client.requests) == 3 and gate.stats["rate_limited"] == 3


def test_attempts_are_counted_across_job_retries(r):
    client = ScriptedLLMClient([RateLimitedError("slow down", retry_after_s=0.3) for _ in range(3)])
    outcomes = []
    for _ in range(3):  # three runs of the job, each with its own gate
        gate = make_gate(r, cache=False, max_attempts=3, max_sleep_s=0.1, attempt_key="job:a1")
        with pytest.raises(RateLimitedError) as info:
            gate.call(client, request(), stage="s")
        outcomes.append(type(info.value))
        time.sleep(info.value.retry_after_s or 0)
    assert outcomes == [RateLimitWaitError, RateLimitWaitError, RateLimitExhaustedError]
    assert len(client.requests) == 3


def test_attempt_counter_resets_after_success(r):
    client = ScriptedLLMClient([RateLimitedError("slow", retry_after_s=0.05), "{}"])
    gate = make_gate(r, cache=False, max_attempts=2, attempt_key="job:a2")
    assert gate.call(client, request(), stage="s").text == "{}"
    assert gate.attempts_so_far(client, request()) == 0


def command_calls(r, name: str) -> int:
    return int(r.info("commandstats").get(f"cmdstat_{name}", {}).get("calls", 0))


def test_attempt_counter_is_cleared_only_when_there_is_one(r):
    # A job's earlier run met a 429 and was put back: the run that succeeds clears the count.
    first = make_gate(r, cache=False, max_attempts=3, max_sleep_s=0.01, attempt_key="job:a3")
    limited = ScriptedLLMClient([RateLimitedError("slow", retry_after_s=5)])
    with pytest.raises(RateLimitWaitError):
        first.call(limited, request("counted"), stage="s")
    again = make_gate(r, cache=False, max_attempts=3, attempt_key="job:a3")
    client = ScriptedLLMClient(["{}", "{}"])
    assert again.attempts_so_far(client, request("counted")) == 1
    assert again.call(client, request("counted"), stage="s").text == "{}"
    assert again.attempts_so_far(client, request("counted")) == 0
    # A call that met no 429 has nothing to clear, and sends no DEL (a round trip per call).
    deletes = command_calls(r, "del")
    assert again.call(client, request("never limited"), stage="s").text == "{}"
    assert command_calls(r, "del") == deletes


def test_settling_a_reservation_does_not_read_its_keys_back(r):
    ledger = RedisBudgetLedger(r)
    ledger.set_limit("job:keys", 1_000, 600)
    rid = ledger.reserve(["job:keys", "batch:keys"], 100)
    reads = command_calls(r, "hmget")
    assert ledger.settle(rid, 80)  # the ledger that reserved knows the keys
    assert command_calls(r, "hmget") == reads
    assert ledger.spent("job:keys") == 80 and ledger.spent("batch:keys") == 80
    # Another worker's ledger (a bulk call settled elsewhere) reads them from the reservation.
    rid = ledger.reserve(["job:keys", "batch:keys"], 100)
    elsewhere = RedisBudgetLedger(r)
    reads = command_calls(r, "hmget")
    assert elsewhere.settle(rid, 50) and command_calls(r, "hmget") == reads + 1
    assert not ledger.settle(rid, 50)  # settled once, wherever
    assert ledger.spent("job:keys") == 130 and ledger.remaining("job:keys") == 870


def test_backoff_without_hint_is_full_jitter(r):
    import random

    client = ScriptedLLMClient([RateLimitedError("slow")])
    gate = make_gate(r, cache=False, max_sleep_s=0.0, rng=random.Random(7))
    with pytest.raises(RateLimitWaitError) as info:
        gate.call(client, request(), stage="s")
    assert 0 < info.value.retry_after_s <= 2.0


@pytest.mark.parametrize("attempt", [6, 7, 12, 40, 1023, 1024, 100_000])
def test_backoff_never_exceeds_the_cap_at_any_attempt(attempt):
    """Past log2(MAX_BACKOFF_S) attempts the exponential term is above the cap: every
    wait stays at most MAX_BACKOFF_S (the bound a parked job's retry leans on), and the
    waits still spread over the whole [0, cap] (full jitter, not a fixed cap)."""
    import random

    rng = random.Random(attempt)
    samples = [full_jitter_backoff_s(attempt, rng) for _ in range(5000)]
    assert max(samples) <= MAX_BACKOFF_S
    assert min(samples) >= 0
    # Without the cap these would reach far above it (2**attempt seconds); with it, the
    # top decile of [0, cap] is hit and the mean sits near cap / 2.
    assert max(samples) > 0.9 * MAX_BACKOFF_S
    assert 0.4 * MAX_BACKOFF_S < sum(samples) / len(samples) < 0.6 * MAX_BACKOFF_S


def test_other_errors_release_the_reservation(r):
    ledger = RedisBudgetLedger(r)
    ledger.set_limit("job:e", 10_000, 600)
    client = ScriptedLLMClient([ProviderHTTPError(503, "down")])
    gate = RedisCallGate(
        r, limiter=RedisRateLimiter(r, {}), ledger=ledger, cache=RedisResponseCache(r, 60), budget_scopes=["job:e"]
    )
    with pytest.raises(ProviderHTTPError):
        gate.call(client, request(), stage="s")
    assert ledger.remaining("job:e") == 10_000 and ledger.spent("job:e") == 0


def test_request_larger_than_tpm_is_refused(r):
    client = ScriptedLLMClient([])
    gate = make_gate(r, limits={"scripted:scripted-model": Limit(tpm=10)}, cache=False)
    with pytest.raises(RateLimitExhaustedError):
        gate.call(client, request(), stage="s")
    assert client.requests == []


def test_the_gate_counts_its_calls_in_the_metrics(r):
    """The gate is where the model-call metrics hang: outcomes by model and stage,
    tokens and dollars by lane, cache lookups, budget refusals by scope kind."""
    from vetq.core.llm.errors import ProviderTimeoutError
    from vetq.workers import metrics

    def value(name: str, **labels: str) -> float:
        return metrics.registry().get_sample_value(name, labels) or 0.0

    model = "scripted:metrics-model"
    before = {
        "ok": value("vetq_model_calls_total", model=model, stage="m", outcome="ok"),
        "truncated": value("vetq_model_calls_total", model=model, stage="m", outcome="truncated"),
        "server_error": value("vetq_model_calls_total", model=model, stage="m", outcome="server_error"),
        "timeout": value("vetq_model_calls_total", model=model, stage="m", outcome="timeout"),
        "in": value("vetq_model_tokens_total", model=model, lane="realtime", type="input"),
        "out": value("vetq_model_tokens_total", model=model, lane="realtime", type="output"),
        "hit": value("vetq_response_cache_lookups_total", stage="m", result="hit"),
        "miss": value("vetq_response_cache_lookups_total", stage="m", result="miss"),
        "refused": value("vetq_budget_refusals_total", scope="job", unit="tokens"),
    }
    answered = LLMResponse(text='{"a": 1}', model="metrics-model", usage=Usage(prompt_tokens=11, completion_tokens=7))
    cut = LLMResponse(text='{"a": ', usage=Usage(prompt_tokens=5, completion_tokens=64), finish_reason="length")
    client = ScriptedLLMClient(
        [answered, ProviderHTTPError(503, "down"), ProviderTimeoutError("slow"), cut], model="metrics-model"
    )
    gate = make_gate(r, budget_scopes=["job:m"], budget_limits={"job:m": 10_000})
    gate.call(client, request("one"), stage="m")
    gate.call(client, request("one"), stage="m")  # the cache answers
    with pytest.raises(ProviderHTTPError):
        gate.call(client, request("two"), stage="m")
    with pytest.raises(ProviderTimeoutError):
        gate.call(client, request("three"), stage="m")
    gate.call(client, request("four"), stage="m")
    tight = make_gate(r, budget_scopes=["job:tight"], budget_limits={"job:tight": 10})
    with pytest.raises(BudgetExceededError):
        tight.call(client, request("five"), stage="m")

    assert value("vetq_model_calls_total", model=model, stage="m", outcome="ok") - before["ok"] == 1
    assert value("vetq_model_calls_total", model=model, stage="m", outcome="truncated") - before["truncated"] == 1
    assert value("vetq_model_calls_total", model=model, stage="m", outcome="server_error") - before["server_error"] == 1
    assert value("vetq_model_calls_total", model=model, stage="m", outcome="timeout") - before["timeout"] == 1
    assert value("vetq_model_tokens_total", model=model, lane="realtime", type="input") - before["in"] == 16
    assert value("vetq_model_tokens_total", model=model, lane="realtime", type="output") - before["out"] == 71
    assert value("vetq_response_cache_lookups_total", stage="m", result="hit") - before["hit"] == 1
    assert value("vetq_response_cache_lookups_total", stage="m", result="miss") - before["miss"] == 5
    assert value("vetq_budget_refusals_total", scope="job", unit="tokens") - before["refused"] == 1


def test_an_unusable_answer_is_a_malformed_call_and_never_replayed_from_the_cache(r):
    """The structured loop tells the gate which answers it could not use: the gate counts
    them as `malformed` (not `ok`) and keeps them out of the response cache, so the same
    question asked again (a job's retry) reaches the model instead of the answer that failed."""
    from vetq.core.llm.structured import ask_structured
    from vetq.workers import metrics

    def count(stage: str, outcome: str) -> float:
        labels = {"model": "scripted:malformed-model", "stage": stage, "outcome": outcome}
        return metrics.registry().get_sample_value("vetq_model_calls_total", labels) or 0.0

    before = {key: count(*key) for key in [("m", "malformed"), ("m", "ok"), ("m.repair", "ok")]}
    client = ScriptedLLMClient(["no JSON here", '{"a": 1}', '{"a": 2}'], model="malformed-model")
    gate = make_gate(r)

    def ask():
        return ask_structured(
            gate,
            client,
            stage="m",
            system="You answer in JSON.",
            messages=[Message(role="user", content="the unusable-answer question")],
            parse=lambda obj: obj["a"],
            max_tokens=64,
            repair_retries=1,
        )

    first = ask()
    assert (first.value, first.attempts) == (1, 2)
    assert count("m", "malformed") - before[("m", "malformed")] == 1
    assert count("m.repair", "ok") - before[("m.repair", "ok")] == 1
    assert count("m", "ok") == before[("m", "ok")]

    again = ask()  # the unusable first answer was not cached: the model is asked again
    assert (again.value, again.attempts) == (2, 1) and len(client.requests) == 3
    assert count("m", "ok") - before[("m", "ok")] == 1
