"""One place for Redis key names (core/redis_keys.py) and one registry of the Lua
scripts (workers/lua_scripts.py).

The key strings are deployed data, so they are pinned here byte for byte; every other
module takes them from core.redis_keys, which a scan of the shipped packages checks."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from vetq.core import redis_keys
from vetq.workers import lua_scripts

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ("core", "workers", "api_client", "eval", "inbox")
KEYS_MODULE = ROOT / "core" / "redis_keys.py"
# `vetq:dead`, `{vetq:budget}`, `vetq:` before an f-string field; not `vetq: error: ...`.
KEY_LITERAL = re.compile(r"^\{?vetq:(\S|$)")


def test_the_deployed_key_names_are_unchanged():
    assert (redis_keys.EXTRACT_QUEUE, redis_keys.REVIEW_QUEUE) == ("extract", "review")
    assert redis_keys.submitted_key("j1") == "vetq:submitted:j1"
    assert redis_keys.TELEMETRY_STREAM == "vetq:telemetry"
    assert redis_keys.DEAD_LETTER_KEY == "vetq:dead"
    assert redis_keys.response_cache_key("ab12") == "vetq:cache:ab12"
    assert redis_keys.rate_limit_keys("openai:gpt-5-mini") == (
        "vetq:rl:{openai:gpt-5-mini}:w",
        "vetq:rl:{openai:gpt-5-mini}:t",
        "vetq:rl:{openai:gpt-5-mini}:cd",
    )
    scope = redis_keys.job_scope("j1")
    assert (scope, redis_keys.batch_scope("b1")) == ("job:j1", "batch:b1")
    assert redis_keys.budget_scope_key(scope) == "{vetq:budget}:scope:job:j1"
    assert redis_keys.budget_lease_key(scope) == "{vetq:budget}:lease:job:j1"
    assert redis_keys.budget_reservation_key("r1") == "{vetq:budget}:res:r1"
    assert redis_keys.attempts_key(scope, "openai:m", "fp") == "vetq:attempts:job:j1:openai:m:fp"
    assert redis_keys.idle_key("x") == "vetq:idle:x"
    assert redis_keys.priority_turn_key("extract") == "vetq:priority_turn:extract"
    assert [redis_keys.priority_queue_key("extract", step) for step in (0, 3, 9)] == [
        "extract",
        "extract\x06\x163",
        "extract\x06\x169",
    ]
    assert redis_keys.cancel_key("j1") == "vetq:cancel:{celery-task-meta-j1}"
    assert redis_keys.BULK_CANCELED_KEY == "{vetq:bulk}:canceled"


def test_the_users_write_the_pinned_keys(redis_url):
    """The ledger, the limiter and the cache write where the module says, with their defaults."""
    import redis

    from vetq.core.llm.limits import Limit
    from vetq.core.llm.types import LLMRequest, LLMResponse, Message
    from vetq.workers.budget_ledger import RedisBudgetLedger
    from vetq.workers.rate_limiter import RedisRateLimiter
    from vetq.workers.response_cache import RedisResponseCache

    client = redis.Redis.from_url(redis_url)
    scope = redis_keys.job_scope("keys-test")
    reservation = None
    try:
        ledger = RedisBudgetLedger(client)
        assert ledger.set_limit(scope, 1000, 60)
        assert client.hget("{vetq:budget}:scope:job:keys-test", "limit") == b"1000"
        reservation = ledger.reserve([scope], 10)
        assert reservation is not None and client.exists(f"{{vetq:budget}}:res:{reservation}")
        assert client.zscore("{vetq:budget}:lease:job:keys-test", reservation) is not None

        RedisRateLimiter(client, {"openai:keys-test": Limit(rpm=5)}).acquire("openai:keys-test", 1)
        assert client.zcard("vetq:rl:{openai:keys-test}:w") == 1

        cache = RedisResponseCache(client, 60)
        request = LLMRequest(system="s", messages=(Message(role="user", content="keys-test"),), max_tokens=64)
        assert cache.put("openai", "m", request, LLMResponse(text="{}"))
        assert cache.key("openai", "m", request).startswith("vetq:cache:")
        assert client.exists(cache.key("openai", "m", request))
    finally:
        client.delete(
            "{vetq:budget}:scope:job:keys-test",
            "{vetq:budget}:lease:job:keys-test",
            f"{{vetq:budget}}:res:{reservation}",
            *redis_keys.rate_limit_keys("openai:keys-test"),
        )
        client.close()


def test_the_keys_kombu_and_celery_name_are_the_installed_ones():
    from celery.backends.base import BaseKeyValueStoreBackend
    from kombu.transport.redis import Channel

    assert Channel.unacked_key == redis_keys.KOMBU_UNACKED_KEY
    assert Channel.unacked_index_key == redis_keys.KOMBU_UNACKED_INDEX_KEY
    assert Channel.unacked_mutex_key == redis_keys.KOMBU_UNACKED_MUTEX_KEY
    assert Channel.keyprefix_queue == redis_keys.KOMBU_BINDING_PREFIX + "%s"
    assert BaseKeyValueStoreBackend.task_keyprefix == redis_keys.CELERY_RESULT_PREFIX
    # A queue's priority lists: kombu's names for them (its put, restore, size and purge).
    from vetq.core.queue import PRIORITY_STEPS

    assert Channel.sep == redis_keys.KOMBU_PRIORITY_SEPARATOR
    channel = Channel.__new__(Channel)  # _q_for_pri reads only the steps and sep
    channel.priority_steps = sorted(PRIORITY_STEPS.values())
    for step in (*PRIORITY_STEPS.values(), 6):  # a step vetq does not send rounds down to one it has
        assert channel._q_for_pri("extract", step) == redis_keys.priority_queue_key("extract", channel.priority(step))
    assert channel.priority(6) == PRIORITY_STEPS["high"] and channel.priority(9) == PRIORITY_STEPS["low"]


def key_literals(source: str) -> list[str]:
    """String literals (an f-string's literal parts included) that spell a vetq key:
    `vetq:...` or the ledger's `{vetq:...}` tag. Docstrings and messages that only
    mention a key further in are not literals of one, nor are the CLI's `vetq: ...`
    messages."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and KEY_LITERAL.match(node.value):
            found.append(node.value)
    return sorted(found)


def test_key_literal_finder_sees_plain_and_formatted_keys():
    planted = 'A = "vetq:dead"\nB = f"vetq:idle:{x}"\nC = "{vetq:budget}"\n"""Docs name `vetq:dead`."""\n'
    assert key_literals(planted) == ["vetq:dead", "vetq:idle:", "{vetq:budget}"]
    assert key_literals('log = get_logger("vetq.worker")\nTASK = "vetq.extract"\nsay("vetq: error: x")\n') == []


def test_no_module_but_the_keys_module_spells_a_vetq_key():
    spelled = {}
    for package in SHIPPED:
        for path in sorted((ROOT / package).rglob("*.py")):
            if path == KEYS_MODULE:
                continue
            found = key_literals(path.read_text(encoding="utf-8"))
            if found:
                spelled[str(path.relative_to(ROOT))] = found
    assert spelled == {}, "Redis key names belong in core/redis_keys.py"


# --------------------------------------------------------------------------- scripts


def test_every_lua_file_is_in_the_registry_and_every_entry_loads():
    files = {path.stem for path in lua_scripts.LUA_DIR.glob("*.lua")}
    assert files == set(lua_scripts.SCRIPTS)
    for name in lua_scripts.SCRIPTS:
        text = lua_scripts.source(name)
        assert "redis.call" in text and not re.search(r"^-- include: \w+$", text, re.MULTILINE), name


def test_every_include_is_spliced_into_some_script():
    includes = {path.stem for path in lua_scripts.INCLUDE_DIR.glob("*.lua")}
    assert includes, "the budget scripts share the lease sweep"
    for name in includes:
        body = (lua_scripts.INCLUDE_DIR / f"{name}.lua").read_text(encoding="utf-8")
        assert any(body in lua_scripts.source(script) for script in lua_scripts.SCRIPTS), name


def test_an_unknown_script_or_include_is_refused_by_name(tmp_path, monkeypatch):
    with pytest.raises(KeyError, match="no_such_script"):
        lua_scripts.source("no_such_script")
    (tmp_path / "include").mkdir()
    (tmp_path / "broken.lua").write_text("-- include: missing_part\nreturn redis.call('PING')\n")
    monkeypatch.setattr(lua_scripts, "LUA_DIR", tmp_path)
    monkeypatch.setattr(lua_scripts, "INCLUDE_DIR", tmp_path / "include")
    monkeypatch.setitem(lua_scripts.SCRIPTS, "broken", "a script whose include is missing")
    lua_scripts.source.cache_clear()
    try:
        with pytest.raises(FileNotFoundError, match="missing_part"):
            lua_scripts.source("broken")
    finally:
        lua_scripts.source.cache_clear()


def test_registered_scripts_run_on_redis(redis_url):
    import redis

    client = redis.Redis.from_url(redis_url)
    try:
        (cooldown,) = lua_scripts.register(client, "rl_cooldown")
        key = redis_keys.rate_limit_keys("test:registry")[2]
        assert int(cooldown(keys=[key], args=[5000])) > 0
        assert client.pttl(key) > 0
    finally:
        client.delete(redis_keys.rate_limit_keys("test:registry")[2])
        client.close()
