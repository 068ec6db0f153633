"""The limiter's running sum (issue 16): an acquire reads the tokens in its window from
a sum the scripts keep (`vetq:rl:{provider:model}:sum`) instead of the whole window,
and decides exactly as a read of the whole window did.

Some tests run the shipped scripts with two edits made to their text, and only these:
Redis's clock (`redis.call('TIME')`) is read from a test key, so that time is the
test's to move, and every `redis.call` goes through a wrapper that counts the elements
the script reads and its reads of the whole window (HGETALL, ZRANGE to -1)."""

from __future__ import annotations

import math
import random
import uuid
from typing import Any

import pytest
import redis

from vetq.core.llm.limits import Limit
from vetq.core.redis_keys import rate_limit_keys, rate_limit_sum_key
from vetq.workers import rate_limiter as rate_limiter_module
from vetq.workers.lua_scripts import source
from vetq.workers.rate_limiter import RedisRateLimiter

CLOCK_KEY = "test:clock"
READ_KEY = "test:elements-read"
FULL_READS_KEY = "test:full-reads"
WINDOW_S = 60.0
WINDOW_MS = 60_000

COUNTED_CALL = f"""local function rl_test_call(...)
  local args = {{...}}
  if args[1] == 'HGETALL' or (args[1] == 'ZRANGE' and tostring(args[4]) == '-1') then
    redis.call('INCR', '{FULL_READS_KEY}')
  end
  local reply = redis.call(...)
  if type(reply) == 'table' then
    redis.call('INCRBY', '{READ_KEY}', #reply)
  end
  return reply
end
"""


def instrumented(name: str) -> str:
    """The script `name` as shipped, on the test's clock and counting what it reads."""
    text = source(name)
    if "redis.call('TIME')" in text:
        assert text.count("redis.call('TIME')") == 1, name
        text = text.replace("redis.call('TIME')", f"redis.call('HMGET', '{CLOCK_KEY}', 'sec', 'usec')")
    return COUNTED_CALL + text.replace("redis.call(", "rl_test_call(")


@pytest.fixture
def r(redis_url: str):
    client = redis.Redis.from_url(redis_url)
    yield client
    client.close()


@pytest.fixture
def instrumented_limiters(monkeypatch):
    """Limiters built inside the test run the instrumented scripts."""

    def register(client: Any, *names: str) -> list[Any]:
        return [client.register_script(instrumented(name)) for name in names]

    monkeypatch.setattr(rate_limiter_module, "register", register)


class Clock:
    """The test's Redis clock, in whole microseconds, kept ahead of the real one so the
    keys' expiry times (absolute, from this clock) are never in the past."""

    def __init__(self, r: redis.Redis) -> None:
        self.r = r
        sec, usec = r.time()
        self.us = (sec + 30) * 1_000_000 + usec
        self._store()

    def _store(self) -> None:
        self.r.hset(CLOCK_KEY, mapping={"sec": self.us // 1_000_000, "usec": self.us % 1_000_000})

    def advance_us(self, us: int) -> None:
        self.us += us
        self._store()

    @property
    def now_ms(self) -> float:
        # as the scripts compute it: seconds * 1000 + microseconds / 1000
        return self.us // 1_000_000 * 1000 + (self.us % 1_000_000) / 1000


class WindowModel:
    """The limiter as it was before the running sum: every decision reads the whole
    window (the scripts' text before issue 16, in Python)."""

    def __init__(self, window_ms: int) -> None:
        self.window = window_ms
        self.w: dict[str, float] = {}  # entry id -> score (ms)
        self.t: dict[str, int] = {}  # entry id -> tokens (ids outside the window are ignored)

    def used(self) -> int:
        return sum(self.t.get(m, 0) for m in self.w)

    def acquire(self, now: float, rpm: int, tpm: int, est: int, entry: str) -> int:
        if rpm <= 0 and tpm <= 0:
            return 0
        cutoff = now - self.window
        for m in [m for m, score in self.w.items() if score <= cutoff]:
            del self.w[m]
            self.t.pop(m, None)
        order = sorted(self.w.items(), key=lambda item: (item[1], item[0]))
        wait = 0.0
        if rpm > 0 and len(order) >= rpm:
            wait = max(wait, order[len(order) - rpm][1] + self.window - now)
        if tpm > 0:
            if est > tpm:
                wait = max(wait, self.window)
            else:
                used = self.used()
                if used + est > tpm:
                    for m, score in order:
                        used -= self.t.get(m, 0)
                        if used + est <= tpm:
                            wait = max(wait, score + self.window - now)
                            break
        if wait > 0:
            return max(1, math.ceil(wait))
        self.w[entry] = now
        self.t[entry] = est
        return 0

    def settle(self, now: float, entry: str, tokens: int) -> bool:
        if entry not in self.w:
            return False
        self.w[entry] = now
        self.t[entry] = tokens
        return True


def window_state(r: redis.Redis, model: str) -> tuple[dict[str, float], dict[str, int], list[bytes | None]]:
    w_key, t_key, _ = rate_limit_keys(model)
    window = {m.decode(): score for m, score in r.zrange(w_key, 0, -1, withscores=True)}
    held = {k.decode(): v for k, v in r.hgetall(t_key).items()}
    tokens = {m: int(float(held[m])) if m in held else 0 for m in window}
    saved = r.hmget(rate_limit_sum_key(model), "tokens", "entries")
    return window, tokens, saved


def counter(r: redis.Redis, key: str) -> int:
    return int(r.get(key) or 0)


def every_key_expires(r: redis.Redis, model: str) -> bool:
    keys = [*rate_limit_keys(model)[:2], rate_limit_sum_key(model)]
    return all(r.pttl(key) > 0 for key in keys if r.exists(key))


# --------------------------------------------------------------------------- the model


@pytest.mark.parametrize("seed", [16, 1616])
def test_random_acquires_settles_expiry_and_lost_keys_decide_as_reading_the_window(r, instrumented_limiters, seed):
    """A fixed-seed random run against the model: every answer, the window, its tokens
    and the running sum agree after every step; the whole window is read only in the
    step after a key was lost (evicted) on its own."""
    rng = random.Random(seed)
    model_key = "test:sum-model"
    clock = Clock(r)
    model = WindowModel(WINDOW_MS)
    configs = [(0, 0), (5, 0), (0, 1000), (8, 1500), (3, 400), (0, 300), (0, 5000)]
    limiters = {
        (rpm, tpm): RedisRateLimiter(r, {model_key: Limit(rpm=rpm or None, tpm=tpm or None)}, window_s=WINDOW_S)
        for rpm, tpm in configs
    }
    pool = [f"e{i:02d}" for i in range(40)]
    w_key, t_key, _ = rate_limit_keys(model_key)
    lost_keys = recounted_after_loss = admitted = refused = late_settles = 0
    pending_loss = False
    for step in range(1500):
        roll = rng.random()
        full_reads = counter(r, FULL_READS_KEY)
        synced = False
        if roll < 0.55:
            rpm, tpm = rng.choice(configs)
            est = rng.randint(0, 300) if rng.random() < 0.9 else rng.randint(301, 6000)
            entry = rng.choice(pool) if rng.random() < 0.7 else uuid.uuid4().hex
            want = model.acquire(clock.now_ms, rpm, tpm, est, entry)
            got = limiters[(rpm, tpm)].acquire(model_key, est, entry_id=entry)
            assert got == want / 1000.0, (step, rpm, tpm, est)
            admitted += got == 0.0 and (rpm, tpm) != (0, 0)
            refused += got > 0
            synced = (rpm, tpm) != (0, 0)
        elif roll < 0.80:
            entry = rng.choice(pool) if rng.random() < 0.9 else "never-admitted"
            actual = rng.randint(0, 400)
            want_settled = model.settle(clock.now_ms, entry, actual)
            assert limiters[(0, 1000)].settle(model_key, entry, actual) is want_settled, step
            late_settles += not want_settled
            synced = want_settled
        elif roll < 0.96:
            clock.advance_us(
                rng.choice(
                    [
                        rng.randint(0, 3_000),
                        rng.randint(100_000, 5_000_000),
                        rng.randint(10_000_000, 30_000_000),
                        WINDOW_MS * 1000 + rng.randint(0, 10_000_000),
                    ]
                )
            )
            continue
        else:
            # Redis evicts (or expires) one of the keys on its own.
            lost = rng.choice([w_key, t_key, rate_limit_sum_key(model_key)])
            lost_keys += bool(r.delete(lost))
            if lost == w_key:
                model.w.clear()
            elif lost == t_key:
                model.t.clear()
            pending_loss = True
            continue

        window, tokens, saved = window_state(r, model_key)
        assert window == model.w, step
        assert tokens == {m: model.t.get(m, 0) for m in model.w}, step
        assert every_key_expires(r, model_key), step
        full_now = counter(r, FULL_READS_KEY) - full_reads
        if pending_loss and synced:
            assert full_now in (0, 2), step  # at most one count of the window: its ZRANGE and HGETALL
            recounted_after_loss += full_now > 0
            pending_loss = False
        else:
            assert full_now == 0, f"step {step} read the whole window"
        if not pending_loss:
            if model.w:
                assert [int(float(v or 0)) for v in saved] == [model.used(), len(model.w)], step
            else:
                assert not r.exists(rate_limit_sum_key(model_key)), step
    # the run went where it should have
    assert admitted > 200 and refused > 100 and late_settles > 50
    assert lost_keys > 10 and recounted_after_loss > 5


# --------------------------------------------------------------------------- what an acquire reads


def fill(limiter: RedisRateLimiter, model_key: str, entries: int, est: int) -> None:
    for i in range(entries):
        assert limiter.acquire(model_key, est, entry_id=f"fill-{i:06d}") == 0.0


def elements_read(r: redis.Redis, call: Any) -> tuple[Any, int]:
    before = counter(r, READ_KEY)
    result = call()
    return result, counter(r, READ_KEY) - before


@pytest.mark.parametrize("entries", [300, 3000])
def test_what_an_acquire_reads_does_not_grow_with_the_window(r, instrumented_limiters, entries):
    """Admitted, settled or refused, a call reads a bounded number of elements whatever
    the window holds (a refusal for tokens: the oldest entries that must leave, one page
    here); before the running sum every tokens-limited acquire read all of them, twice."""
    model_key = f"test:reads-{entries}"
    Clock(r)
    roomy = RedisRateLimiter(r, {model_key: Limit(tpm=10**9)}, window_s=WINDOW_S)
    fill(roomy, model_key, entries, est=10)
    full_reads = counter(r, FULL_READS_KEY)

    admitted, read_admitted = elements_read(r, lambda: roomy.acquire(model_key, 10, entry_id="new"))
    settled, read_settle = elements_read(r, lambda: roomy.settle(model_key, "new", 7))
    full = RedisRateLimiter(r, {model_key: Limit(tpm=entries * 10 + 7)}, window_s=WINDOW_S)
    refused, read_refused = elements_read(r, lambda: full.acquire(model_key, 10))
    # 100 entries of 10 tokens must leave before 1000 more fit: 100 read, in pages of 16, 32, 64
    long_wait, read_long_wait = elements_read(r, lambda: full.acquire(model_key, 1000))

    assert admitted == 0.0 and settled and refused > 0 and long_wait > 0
    assert counter(r, FULL_READS_KEY) == full_reads
    assert read_admitted <= 10 and read_settle <= 10
    assert read_refused <= 16 * 3 + 10
    assert read_long_wait <= (16 + 32 + 64) * 3 + 10
    assert roomy.window_sum(model_key) == {"tokens": entries * 10 + 7, "entries": entries + 1, "recounts": 0}


def test_admitting_and_settling_run_no_full_read_of_the_window_commandstats(r):
    """The shipped scripts, unedited: Redis's own command counts show no HGETALL and no
    ZRANGE at all while calls are admitted and settled on a tokens-limited window."""
    model_key = "test:commandstats"
    limiter = RedisRateLimiter(r, {model_key: Limit(rpm=100_000, tpm=10**9)}, window_s=WINDOW_S)
    fill(limiter, model_key, 2000, est=10)

    def calls(name: str) -> int:
        return int(r.info("commandstats").get(f"cmdstat_{name}", {}).get("calls", 0))

    before = {name: calls(name) for name in ("hgetall", "zrange", "evalsha")}
    for i in range(50):
        assert limiter.acquire(model_key, 10, entry_id=f"late-{i}") == 0.0
        assert limiter.settle(model_key, f"late-{i}", 12)
    after = {name: calls(name) for name in before}
    assert after["evalsha"] - before["evalsha"] >= 100  # the scripts ran (and were counted)
    assert after["hgetall"] == before["hgetall"]
    assert after["zrange"] == before["zrange"]
    assert limiter.window_sum(model_key) == {"tokens": 2000 * 10 + 50 * 12, "entries": 2050, "recounts": 0}


# --------------------------------------------------------------------------- every path of the sum


def test_a_settle_after_its_entry_was_trimmed_changes_nothing(r, instrumented_limiters):
    model_key = "test:late-settle"
    clock = Clock(r)
    limiter = RedisRateLimiter(r, {model_key: Limit(tpm=1000)}, window_s=WINDOW_S)
    assert limiter.acquire(model_key, 400, entry_id="old") == 0.0
    clock.advance_us(WINDOW_MS * 1000 + 1)
    # expired but not trimmed yet: the settle re-dates it, as it always did, and counts it
    assert limiter.settle(model_key, "old", 300)
    assert limiter.window_sum(model_key)["tokens"] == 300
    clock.advance_us(WINDOW_MS * 1000 + 1)
    assert limiter.acquire(model_key, 900, entry_id="new") == 0.0  # trims "old"
    assert not limiter.settle(model_key, "old", 999)  # too late: nothing to correct
    assert limiter.window_sum(model_key) == {"tokens": 900, "entries": 1, "recounts": 0}
    assert limiter.acquire(model_key, 101) > 0
    assert limiter.acquire(model_key, 100) == 0.0


def test_an_id_admitted_again_replaces_its_tokens(r, instrumented_limiters):
    model_key = "test:again"
    Clock(r)
    limiter = RedisRateLimiter(r, {model_key: Limit(tpm=1000)}, window_s=WINDOW_S)
    assert limiter.acquire(model_key, 600, entry_id="same") == 0.0
    assert limiter.acquire(model_key, 300, entry_id="same") == 0.0
    assert limiter.window_sum(model_key) == {"tokens": 300, "entries": 1, "recounts": 0}


@pytest.mark.parametrize("lost", ["window", "tokens", "sum"])
def test_a_key_lost_on_its_own_is_noticed_and_counted_again(r, lost):
    """Eviction (or a key expiring apart from the others): the next script counts the
    window again, so no phantom tokens hold calls back and no lost ones let too many
    through, and it leaves every key with an expiry."""
    model_key = f"test:lost-{lost}"
    w_key, t_key, _ = rate_limit_keys(model_key)
    key = {"window": w_key, "tokens": t_key, "sum": rate_limit_sum_key(model_key)}[lost]
    limiter = RedisRateLimiter(r, {model_key: Limit(tpm=1000)}, window_s=WINDOW_S)
    for i in range(3):
        assert limiter.acquire(model_key, 300, entry_id=f"e{i}") == 0.0
    assert limiter.acquire(model_key, 300) > 0
    r.delete(key)
    # what reading the whole window would say: entries without tokens count 0
    fits = {"window": 1000, "tokens": 1000, "sum": 100}[lost]
    assert limiter.acquire(model_key, fits, entry_id="after") == 0.0
    window, tokens, saved = window_state(r, model_key)
    assert [int(float(v or 0)) for v in saved] == [sum(tokens.values()), len(window)]
    assert limiter.window_sum(model_key)["recounts"] == 1
    assert every_key_expires(r, model_key)
    assert limiter.acquire(model_key, 1) > 0


def test_writes_of_the_previous_release_during_an_upgrade_are_noticed(r):
    """Workers of the release before the running sum share the window during a rolling
    upgrade: their scripts add, trim and settle entries in w and t and never touch the
    sum. An add or a trim changes the window's size; a settle changes no size, but it
    sets w's expiry later than the sum's: either way the next script counts the window
    again."""
    model_key = "test:upgrade"
    w_key, t_key, _ = rate_limit_keys(model_key)
    limiter = RedisRateLimiter(r, {model_key: Limit(tpm=1000)}, window_s=WINDOW_S)
    life_ms = WINDOW_MS + 1000

    def old_release_write(entry: str, tokens: int, *, settle: bool) -> None:
        sec, usec = r.time()
        pipe = r.pipeline()  # MULTI: one step, as their script was
        if settle:
            pipe.zadd(w_key, {entry: sec * 1000 + usec / 1000}, xx=True)
        else:
            pipe.zadd(w_key, {entry: sec * 1000 + usec / 1000})
        pipe.hset(t_key, entry, tokens)
        pipe.pexpire(w_key, life_ms)
        pipe.pexpire(t_key, life_ms)
        pipe.execute()

    assert limiter.acquire(model_key, 300, entry_id="new-a") == 0.0
    old_release_write("old-x", 500, settle=False)
    assert limiter.acquire(model_key, 100, entry_id="new-b") == 0.0  # 900 of 1000
    assert limiter.window_sum(model_key) == {"tokens": 900, "entries": 3, "recounts": 1}
    old_release_write("old-x", 50, settle=True)  # the provider counted 50, not 500
    # 450 in the window: 500 more fit, as a read of the whole window says
    assert limiter.acquire(model_key, 500, entry_id="new-c") == 0.0
    assert limiter.window_sum(model_key) == {"tokens": 950, "entries": 4, "recounts": 2}
    # their refused acquire trims what expired (here: "new-a"), and sets no expiry
    r.pipeline().zrem(w_key, "new-a").hdel(t_key, "new-a").execute()
    assert limiter.acquire(model_key, 300, entry_id="new-d") == 0.0  # 650 + 300
    assert limiter.window_sum(model_key) == {"tokens": 950, "entries": 4, "recounts": 3}
    assert every_key_expires(r, model_key)


def ttls_at_once(r: redis.Redis, keys: list[str]) -> list[int]:
    """The keys' remaining lives read in one transaction: Redis runs them back to back,
    so a busy host's scheduling between the reads does not show as a difference."""
    with r.pipeline(transaction=True) as pipe:
        for key in keys:
            pipe.pttl(key)
        return pipe.execute()


def test_the_keys_expire_together_about_a_window_after_the_last_write(r):
    model_key = "test:expiry"
    keys = [*rate_limit_keys(model_key)[:2], rate_limit_sum_key(model_key)]
    limiter = RedisRateLimiter(r, {model_key: Limit(tpm=1000)}, window_s=WINDOW_S)
    assert limiter.acquire(model_key, 10, entry_id="a") == 0.0
    ttls = ttls_at_once(r, keys)
    assert all(WINDOW_MS < ttl <= WINDOW_MS + 1000 for ttl in ttls), ttls
    assert max(ttls) - min(ttls) <= 1  # one expiry time (a millisecond may turn between reads)
    assert limiter.settle(model_key, "a", 5)
    ttls = ttls_at_once(r, keys)
    assert all(WINDOW_MS < ttl <= WINDOW_MS + 1000 for ttl in ttls) and max(ttls) - min(ttls) <= 1, ttls
