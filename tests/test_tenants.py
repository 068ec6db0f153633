"""Tenants (issue 18): VETQ_TENANT_LIMITS, the fair share of a model's limit in the
limiter's acquire, and the queue's fair pop. The limiter runs its shipped scripts on the
test's clock (tests/test_rate_limiter_sum.py's instrumented scripts), so time is the
test's to move and no test sleeps; the pop runs the shipped script on a real Redis."""

from __future__ import annotations

import json
import random
import time
import uuid
from typing import Any

import pytest
import redis

from tests import test_rate_limiter_sum as running_sum
from tests.test_rate_limiter_sum import Clock
from vetq.core.errors import ConfigError
from vetq.core.llm.limits import Limit
from vetq.core.redis_keys import fair_queue_keys, rate_limit_keys, rate_limit_sum_key, rate_limit_waiting_keys
from vetq.core.settings import load_settings
from vetq.core.tenants import TenantLimit, parse_tenant_limits, window_start
from vetq.workers.lua_scripts import source
from vetq.workers.rate_limiter import RedisRateLimiter, entry_id_for

# --------------------------------------------------------------------------- VETQ_TENANT_LIMITS


def test_tenant_limits_parse_with_a_default_entry_and_weights():
    table = parse_tenant_limits(" acme = 200000tokens, 5usd, weight=3 ; globex=0.25usd;; *=50000tokens ")
    assert table.of("acme") == TenantLimit(tokens=200_000, usd=5.0, weight=3.0)
    assert table.of("globex") == TenantLimit(usd=0.25)
    assert table.of("initech") == TenantLimit(tokens=50_000)  # `*`: each unnamed tenant its own budget
    assert table.of(None) == TenantLimit()  # no tenant: no tenant budget, weight 1
    assert table.weights() == {"acme": 3.0}
    assert parse_tenant_limits("").of("acme") == TenantLimit()
    assert window_start(86_400 * 3 + 5, 86_400) == 86_400 * 3


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("acme", "missing '='"),
        ("Acme=10tokens", "tenant must be"),
        ("acme=", "no limit"),
        ("acme=10", "a part is"),
        ("acme=10tokens,20tokens", "tokens is given twice"),
        ("acme=0tokens", "greater than 0"),
        ("acme=weight=0", "greater than 0"),
        ("acme=weight=5000", "at most 1000"),
        ("acme=0.0000001usd", "micro-dollar"),
        ("acme=1tokens;acme=2tokens", "given twice"),
    ],
)
def test_a_bad_tenant_limit_stops_the_process_naming_the_variable_and_the_part(text, named):
    with pytest.raises(ConfigError) as parsed:
        parse_tenant_limits(text)
    assert parsed.value.message.startswith("VETQ_TENANT_LIMITS: ") and named in parsed.value.message
    with pytest.raises(ConfigError) as loaded:
        load_settings(tenant_limits=text)
    assert "VETQ_TENANT_LIMITS" in loaded.value.message and named in loaded.value.message


def test_the_tenant_keys_are_pinned():
    """Deployed data, like every key (tests/test_redis_keys.py)."""
    from vetq.core.redis_keys import tenant_scope, tenant_usage_key, usd_scope

    assert tenant_scope("acme", 1_799_884_800) == "tenant:acme:1799884800"
    assert usd_scope(tenant_scope("acme", 0)) == "tenant:acme:0:usd"
    assert tenant_usage_key(86_400, 1_799_884_800) == "vetq:usage:86400:1799884800"
    assert rate_limit_waiting_keys("openai:m") == ("vetq:rl:{openai:m}:wq", "vetq:rl:{openai:m}:wp")
    assert fair_queue_keys("extract") == ("vetq:fq:extract:active", "vetq:fq:extract:state", "vetq:fq:extract:t:")


# --------------------------------------------------------------------------- the limiter's fair share

WINDOW_MS = 1000
MODEL = "test:shared-model"


# The running-sum tests' fixtures: a Redis client, and limiters that run the shipped
# scripts on the test's clock.
r = running_sum.r
instrumented_limiters = running_sum.instrumented_limiters

HOLD_S = 100.0  # the callers sleep every wait in place, so every refusal registers


def limiter(client: redis.Redis, **limit: int) -> RedisRateLimiter:
    return RedisRateLimiter(client, {MODEL: Limit(**limit)}, window_s=WINDOW_MS / 1000)


def ask(lim: RedisRateLimiter, entry: str, *, weight: float = 1.0, est: int = 10) -> float:
    return lim.acquire(MODEL, est, entry_id=entry, weight=weight, waits_in_place_s=HOLD_S)


def test_a_tenant_alone_has_the_whole_limit(r, instrumented_limiters):
    clock = Clock(r)
    lim = limiter(r, rpm=10)
    for _ in range(10):
        assert ask(lim, entry_id_for("acme")) == 0.0
        clock.advance_us(1000)
    assert ask(lim, entry_id_for("acme")) > 0
    assert lim.tenants_in_window(MODEL) == {"acme": (10, 100)}


def test_a_waiting_tenant_under_its_share_gets_freed_capacity_before_a_flooding_one(r, instrumented_limiters):
    clock = Clock(r)
    lim = limiter(r, rpm=10)
    for _ in range(10):  # acme alone fills the window
        assert ask(lim, entry_id_for("acme")) == 0.0
        clock.advance_us(1000)
    quiet, flood = entry_id_for("globex"), entry_id_for("acme")
    assert ask(lim, quiet) > 0 and ask(lim, flood) > 0  # both wait, and say so
    assert set(lim.waiting_tenants(MODEL)) == {"acme", "globex"}
    clock.advance_us((WINDOW_MS - 10) * 1000)  # acme's first entry has left: one call fits
    assert ask(lim, flood) > 0  # acme asks first, but is over its share while globex waits
    assert ask(lim, quiet) == 0.0
    assert set(lim.waiting_tenants(MODEL)) == {"acme"}
    assert ask(lim, flood) > 0  # the window is full again
    clock.advance_us(1000)
    assert ask(lim, flood) == 0.0  # nobody else waits: acme takes what frees up
    assert lim.tenants_in_window(MODEL) == {"acme": (9, 90), "globex": (1, 10)}
    assert lim.waiting_tenants(MODEL) == {}


def test_capacity_is_held_for_a_waiting_call_only_until_its_time_has_passed(r, instrumented_limiters):
    clock = Clock(r)
    lim = limiter(r, rpm=2)
    assert ask(lim, entry_id_for("acme")) == 0.0 and ask(lim, entry_id_for("acme")) == 0.0
    clock.advance_us(1000)
    assert ask(lim, entry_id_for("globex")) > 0  # registers; its worker never asks again
    clock.advance_us(WINDOW_MS * 1000)
    assert ask(lim, entry_id_for("acme")) == 0.0  # within acme's share (1 of 2)
    assert ask(lim, entry_id_for("acme")) > 0  # the other one is owed to globex, which still may ask
    clock.advance_us(3 * WINDOW_MS * 1000)  # past globex's wait and its grace
    assert ask(lim, entry_id_for("acme")) == 0.0 and ask(lim, entry_id_for("acme")) == 0.0
    assert lim.waiting_tenants(MODEL) == {}


def run_contention(clock: Clock, lim: RedisRateLimiter, weights: dict[str, float], windows: int) -> dict[str, int]:
    """Six callers per tenant ask again exactly when told, the first tenant's first (the
    worst order for the others: without the fair share it would take 6 calls of every 8),
    and start their next call as soon as one is admitted; returns the admissions per
    tenant over the last `windows - 2` windows."""
    callers = [(tenant, i) for tenant in weights for i in range(6)]
    entry = {caller: entry_id_for(caller[0]) for caller in callers}
    due = dict.fromkeys(callers, 0.0)
    admitted = {tenant: 0 for tenant in weights}
    now = 0.0
    while now < windows * WINDOW_MS:
        for caller in callers:  # in order: the first tenant's callers first
            if due[caller] > now:
                continue
            wait = ask(lim, entry[caller], weight=weights[caller[0]])
            if wait == 0.0:
                admitted[caller[0]] += now >= 2 * WINDOW_MS
                entry[caller] = entry_id_for(caller[0])
                due[caller] = now + 1  # its next call
            else:
                due[caller] = now + wait * 1000
        step = max(1.0, min(due.values()) - now)
        clock.advance_us(int(step * 1000))
        now += step
    return admitted


@pytest.mark.parametrize(("flood_weight", "quiet_weight"), [(1.0, 1.0), (1.0, 3.0)])
def test_tenants_busy_together_share_the_limit_by_weight_and_use_all_of_it(
    r, instrumented_limiters, flood_weight, quiet_weight
):
    clock = Clock(r)
    lim = limiter(r, rpm=8)
    windows = 12
    admitted = run_contention(clock, lim, {"acme": flood_weight, "globex": quiet_weight}, windows)
    total = sum(admitted.values())
    assert total >= 0.95 * 8 * (windows - 2)  # no capacity held back
    assert admitted["globex"] / total == pytest.approx(quiet_weight / (flood_weight + quiet_weight), abs=0.05)


def test_tenants_share_a_token_limit_too(r, instrumented_limiters):
    clock = Clock(r)
    lim = limiter(r, tpm=80)  # 8 calls of 10 tokens a window
    admitted = run_contention(clock, lim, {"acme": 1.0, "globex": 1.0}, 12)
    total = sum(admitted.values())
    assert total >= 0.95 * 8 * 10
    assert admitted["globex"] / total == pytest.approx(0.5, abs=0.05)


def window_by_tenant(client: redis.Redis, model: str) -> dict[str, tuple[int, int]]:
    """Each tenant's entries and tokens, counted from the window itself."""
    w_key, t_key, _ = rate_limit_keys(model)
    held = {k.decode(): int(float(v)) for k, v in client.hgetall(t_key).items()}
    counted: dict[str, tuple[int, int]] = {}
    for member in client.zrange(w_key, 0, -1):
        name = member.decode()
        tenant = name.split(":", 1)[0] if ":" in name else ""
        n, k = counted.get(tenant, (0, 0))
        counted[tenant] = (n + 1, k + held.get(name, 0))
    return counted


def test_the_tenants_sums_follow_admits_settles_trims_and_lost_keys(r, instrumented_limiters):
    """A fixed-seed random run: after every step each tenant's entries and tokens as the
    scripts keep them equal a count of the window (calls without a tenant: ``)."""
    rng = random.Random(18)
    model = "test:tenant-sums"
    clock = Clock(r)
    lim = RedisRateLimiter(r, {model: Limit(rpm=12, tpm=3000)}, window_s=WINDOW_MS / 1000)
    admitted: list[str] = []
    for step in range(400):
        roll = rng.random()
        if roll < 0.5:
            entry = entry_id_for(rng.choice(["acme", "globex", "initech", None]))
            if lim.acquire(model, rng.randint(1, 400), entry_id=entry, waits_in_place_s=rng.choice([0, 5])) == 0:
                admitted.append(entry)
        elif roll < 0.75 and admitted:
            lim.settle(model, rng.choice(admitted), rng.randint(0, 500))
        elif roll < 0.97:
            clock.advance_us(rng.randint(1_000, 400_000))
        else:
            r.delete(rate_limit_sum_key(model))  # lost on its own: counted again from the window
            lim.acquire(model, 1, entry_id=entry_id_for("acme"))
        assert lim.tenants_in_window(model) == window_by_tenant(r, model), step


def test_a_fleet_without_tenants_keeps_nothing_more(r):
    model = "test:no-tenants"
    lim = RedisRateLimiter(r, {model: Limit(rpm=2, tpm=1000)}, window_s=60)
    entries = [uuid.uuid4().hex for _ in range(3)]
    assert lim.acquire(model, 10, entry_id=entries[0], waits_in_place_s=5) == 0.0
    assert lim.settle(model, entries[0], 12)
    assert lim.acquire(model, 10, entry_id=entries[1], waits_in_place_s=5) == 0.0
    assert lim.acquire(model, 10, entry_id=entries[2], waits_in_place_s=100) > 0
    assert not any(r.exists(key) for key in rate_limit_waiting_keys(model))
    assert set(r.hkeys(rate_limit_sum_key(model))) == {b"tokens", b"entries"}


# --------------------------------------------------------------------------- the queue's fair pop

QUEUE = "test-fair-queue"


def message(index: int, tenant: str | None) -> str:
    headers: dict[str, object] = {"id": f"job-{index}", "trace_id": "t"}
    if tenant:
        headers["vetq_tenant"] = tenant
    return json.dumps(
        {
            "body": "eyJ0ZXh0IjogInRlbmFudCJ9",  # base64, as kombu's Redis transport sends a body
            "headers": headers,
            "properties": {"delivery_tag": f"tag-{index}", "delivery_info": {"exchange": "", "routing_key": QUEUE}},
        }
    )


def pop_once(client: redis.Redis, queue: str, weights: dict[str, float], set_aside: int) -> Any:
    """One reliable pop of `queue` (its three priority lists), as a worker's channel sends it."""
    from vetq.core.queue import priority_keys
    from vetq.core.redis_keys import priority_turn_key
    from vetq.workers.reliable_transport import _SCHEDULE

    pop = client.register_script(source("reliable_pop"))
    keys = ["test-unacked", "test-unacked-index", priority_turn_key(queue), *priority_keys(queue)]
    return pop(keys=keys, args=[time.time(), _SCHEDULE, "vetq:fq:", "vetq_tenant", json.dumps(weights), set_aside])


def pop_all(client: redis.Redis, weights: dict[str, float]) -> list[tuple[int, str]]:
    served = []
    for _ in range(10_000):
        out = pop_once(client, QUEUE, weights, 64)
        if out is None:
            return served
        headers = json.loads(out[1])["headers"]
        served.append((int(headers["id"].split("-")[1]), headers.get("vetq_tenant", "")))
    raise AssertionError("the queue never emptied")


def test_a_flood_does_not_hold_back_another_tenants_jobs_and_weights_count(redis_url):
    client = redis.Redis.from_url(redis_url)
    sent = [(i, "acme") for i in range(300)] + [(300 + i, "globex") for i in range(10)]
    sent += [(310 + i, "") for i in range(3)]  # jobs without a tenant: one tenant more
    for index, tenant in sent:
        client.lpush(QUEUE, message(index, tenant or None))  # as kombu publishes: LPUSH, popped from the right
    served = pop_all(client, {"acme": 3})
    assert sorted(served) == sorted(sent)  # each once
    assert client.hlen("test-unacked") == len(sent)  # and recorded as unacked, as before
    for tenant in ("acme", "globex", ""):
        mine = [index for index, who in served if who == tenant]
        assert mine == sorted(mine)  # a tenant's jobs stay in order
    globex = [position for position, (_, who) in enumerate(served) if who == "globex"]
    assert globex[-1] < 60  # not after acme's 300: one in about four while both wait (weights 3:1, and ``)
    first_40 = [who for _, who in served[:40]]
    assert first_40.count("acme") >= 2.5 * first_40.count("globex")
    assert not client.exists(fair_queue_keys(QUEUE)[0])  # nothing is left aside


def test_a_queue_without_tenants_pops_first_come_first_served_and_keeps_nothing_aside(redis_url):
    client = redis.Redis.from_url(redis_url)
    for index in range(5):
        client.lpush(QUEUE, message(index, None))
    assert pop_all(client, {}) == [(index, "") for index in range(5)]
    assert not client.keys("vetq:fq:*")


def test_the_queue_depth_counts_the_messages_set_aside(redis_url):
    from vetq.api_client.fleet_metrics import FleetCollector

    client = redis.Redis.from_url(redis_url)
    for index in range(20):
        client.lpush("extract", message(index, None if index % 2 else "acme"))
    assert pop_once(client, "extract", {}, 8)
    assert client.llen("extract") == 12  # 8 set aside, one of them served
    depth: dict[str, float] = {}
    for family in FleetCollector(client, lambda timeout: {}).collect():
        for sample in family.samples:
            if sample.name == "vetq_queue_depth":
                queue = sample.labels["queue"]
                depth[queue] = depth.get(queue, 0) + sample.value
    assert depth["extract"] == 19


def test_the_fair_pop_keeps_priorities_in_order(redis_url):
    """Fairness is per priority list: set-aside tenants' messages count as their level's
    work, and the levels still take the weighted turn (h n h h ...)."""
    from vetq.core.queue import priority_keys

    client = redis.Redis.from_url(redis_url)
    high, normal, _low = priority_keys(QUEUE)
    for index in range(3):
        client.lpush(normal, message(index, "acme"))
    for index in range(3, 6):
        client.lpush(high, message(index, "globex"))
    served = []
    while out := pop_once(client, QUEUE, {}, 64):
        served.append(out[0].decode())
    assert served == [high, normal, high, high, normal, normal]
