"""Every Lua script is called with keys that hash to one Redis Cluster slot (CRC16, as
a cluster computes it), or Redis Cluster refuses it with CROSSSLOT. No cluster runs
here, so the keys the real call paths pass are captured and hashed.

The response cache uses single-key commands only (GET, SET), so it needs no tag."""

from __future__ import annotations

from typing import Any

import pytest
import redis
from redis.crc import key_slot

from vetq.core.llm.errors import RateLimitedError
from vetq.core.llm.limits import Limit
from vetq.core.llm.scripted import ScriptedLLMClient
from vetq.core.llm.types import LLMRequest, Message, Usage
from vetq.core.redis_keys import BULK_LOCK_KEY, rate_limit_keys, rate_limit_sum_key, rate_limit_waiting_keys
from vetq.workers.budget_ledger import RedisBudgetLedger
from vetq.workers.bulk_store import BulkStore
from vetq.workers.call_gate import RedisCallGate
from vetq.workers.lua_scripts import SCRIPTS, source
from vetq.workers.rate_limiter import RedisRateLimiter
from vetq.workers.response_cache import RedisResponseCache

SCRIPT_NAMES = {source(name): name for name in SCRIPTS}
# The delivery script of workers/reliable_transport.py works on kombu's own keys (the
# queues, `unacked`), named by kombu; kombu's Redis transport does not run on a Redis
# Cluster at all (its restores are MULTI over those keys), so the rule cannot apply.
KOMBU_TRANSPORT_SCRIPTS = {"reliable_pop"}


class ScriptRecorder:
    """A Redis client whose registered scripts note the KEYS of every call."""

    def __init__(self, client: redis.Redis) -> None:
        self._client = client
        self.calls: list[tuple[str, list[str]]] = []

    def register_script(self, text: str) -> Any:
        script = self._client.register_script(text)
        name = SCRIPT_NAMES[text]
        calls = self.calls

        def recorded(keys=None, args=None, client=None):
            calls.append((name, [k.decode() if isinstance(k, bytes) else str(k) for k in keys or []]))
            return script(keys=keys, args=args, client=client)

        return recorded

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


@pytest.fixture
def recorder(redis_url):
    client = redis.Redis.from_url(redis_url)
    yield ScriptRecorder(client)
    client.close()


def request(text: str) -> LLMRequest:
    return LLMRequest(system="You answer in JSON.", messages=(Message(role="user", content=text),), max_tokens=64)


def exercise_every_script(r: ScriptRecorder) -> None:
    """The call gate's own paths (job and batch scopes, a 429 then an answer), and the
    ledger and limiter calls it does not make itself."""
    # Models whose names hold a colon and a brace, scopes with braces of their own.
    limits = {"scripted:gpt-5-mini": Limit(rpm=100, tpm=100_000), "scripted:odd}name": Limit(rpm=100)}
    limiter = RedisRateLimiter(r, limits)
    ledger = RedisBudgetLedger(r)
    ledger.set_limit("batch:{b1}", 100_000, 600)
    for model in ("gpt-5-mini", "odd}name"):
        gate = RedisCallGate(
            r,
            limiter=limiter,
            ledger=ledger,
            cache=RedisResponseCache(r, 60),
            budget_scopes=[f"job:{model}", "batch:{b1}"],
            job_scope_tokens=50_000,
            attempt_key=f"job:{model}",
            max_sleep_s=1.0,
        )
        client = ScriptedLLMClient([RateLimitedError("slow down", retry_after_s=0.0), '{"ok": true}'], model=model)
        assert gate.call(client, request(model), stage="generator").text == '{"ok": true}'
    ledger.charge(["job:direct", "batch:{b1}"], Usage.of(10, 5).total_tokens)
    reservation = ledger.reserve(["job:renewed", "batch:{b1}"], 100)
    assert reservation is not None and ledger.renew(reservation)
    assert ledger.release(reservation)
    direct = RedisCallGate(r, limiter=None, ledger=ledger, cache=None, budget_scopes=["job:direct", "batch:{b1}"])
    assert (direct.tokens_left() or 0) < 100_000
    bulk = BulkStore(r, resolved_ttl_s=60)
    for model_key in ("openai:gpt-5-mini", "openai:odd}name"):
        created = bulk.park(
            job_id=f"job-{model_key}",
            digest=model_key,
            model_key=model_key,
            new_request={"request": "{}", "stage": "generator"},
            deadline=None,
            fallback=False,
            job={"task": "vetq.extract"},
        )
        assert created == "created"
        assert bulk.resolve(model_key, "done", response="{}") == 1
    # The coordinator's submissions: claim (fenced by the lock), record, release.
    lock = r.lock(BULK_LOCK_KEY, timeout=30, blocking=False, thread_local=False)
    assert lock.acquire()
    for submission, digest in (("s-recorded", "d-recorded"), ("s-released", "d-released")):
        bulk.park(
            job_id=f"job-{digest}",
            digest=digest,
            model_key="openai:gpt-5-mini",
            new_request={"request": "{}", "stage": "generator", "vbatch": "vb1"},
            deadline=None,
            fallback=False,
            job={"task": "vetq.extract"},
        )
        times = {"marked": 1.0, "create_by": 2.0, "settled_by": 3.0}
        claimed = bulk.claim(
            lock.local.token, submission, "openai:gpt-5-mini", [digest], vetq_batches=["vb1"], check_in_s=1, **times
        )
        assert claimed == [digest]
    assert bulk.record_batch("b1", "openai:gpt-5-mini", ["d-recorded"], ["vb1"], 1.0, submission="s-recorded") == (
        "recorded"
    )
    released = bulk.submission("s-released")
    assert released is not None and bulk.release(released) == 1
    lock.release()
    # A canceled job taken off its request (withdrawn: no other job waits on it).
    bulk.park(
        job_id="job-canceled",
        digest="d-canceled",
        model_key="openai:gpt-5-mini",
        new_request={"request": "{}", "stage": "generator"},
        deadline=None,
        fallback=False,
        job={"task": "vetq.extract"},
    )
    assert bulk.withdraw("job-canceled").outcome == "withdrawn"
    orphan = bulk.get("d-recorded")
    assert orphan is not None and bulk.withdraw_orphan(orphan).outcome == "shared"
    # The worker's result backend, through its own client (here the recorder).
    from celery import Celery

    from vetq.workers.result_backend import backend_url

    app = Celery("slots", backend=backend_url("redis://127.0.0.1:1/0"), set_as_current=False)
    try:
        app.backend.client = r
        # STARTED reads the job's cancel mark too, in the same script.
        app.backend.store_result("job-slots", {"pid": 1}, "STARTED")
        app.backend.store_result("job-slots", {"status": "ok"}, "SUCCESS")
    finally:
        app.close()
    # The inbox's one path that replaces a final result with the reviewed one.
    from vetq.workers.result_backend import store_reviewed

    reviewed = {"format": 2, "status": "reviewed", "review": {"id": "review-slots"}}
    assert store_reviewed(r, "job-slots", reviewed, replaces_status="ok", date_done="2026-03-01", expires_s=60) == (
        "stored"
    )


def test_every_script_is_called_with_keys_of_one_cluster_slot(recorder):
    exercise_every_script(recorder)
    called = {name for name, _ in recorder.calls}
    # A new script must be exercised here too.
    assert called == set(SCRIPT_NAMES.values()) - KOMBU_TRANSPORT_SCRIPTS
    for name, keys in recorder.calls:
        assert keys, name
        slots = {key_slot(key.encode()) for key in keys}
        assert len(slots) == 1, f"{name} touches keys in {len(slots)} cluster slots: {keys}"


def test_the_limiter_scripts_are_passed_every_key_of_their_model(recorder):
    """The limiter's running sum (`:sum`) and its waiting calls and tenants (`:wq`, `:wp`)
    are keys of their own, passed with the window and tokens keys under the model's hash
    tag (the scripts touch no key they are not passed)."""
    exercise_every_script(recorder)
    passed: dict[str, list[list[str]]] = {"rl_acquire": [], "rl_settle": []}
    for name, keys in recorder.calls:
        passed.get(name, []).append(keys)
    for model_key in ("scripted:gpt-5-mini", "scripted:odd}name"):
        window, tokens, cooldown = rate_limit_keys(model_key)
        running_sum = rate_limit_sum_key(model_key)
        waiting = list(rate_limit_waiting_keys(model_key))
        assert [window, tokens, cooldown, running_sum, *waiting] in passed["rl_acquire"]
        assert [window, tokens, running_sum] in passed["rl_settle"]
        for key in (running_sum, *waiting):
            assert key_slot(key.encode()) == key_slot(window.encode())
