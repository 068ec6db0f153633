"""A worker's Redis pools and many jobs in flight (issue 16): a job thread waits for a
connection rather than failing, the pools are sized to the worker's concurrency, and
running out of connections is never read as a Redis outage (whose requeue would pay
for the job's calls again)."""

from __future__ import annotations

import json
import re
import threading
import time
from collections import Counter
from typing import Any

import pytest
import redis

from tests.conftest import GLOBEX, Service, answer_like_a_model, model_settings, serving_fake_provider
from vetq.core.errors import ErrorCode
from vetq.core.llm.errors import LLMError
from vetq.core.llm.scripted import ScriptedLLMClient
from vetq.core.llm.types import LLMRequest, LLMResponse, Message, Usage
from vetq.workers.redis_pool import RedisPoolExhaustedError, WorkerConnectionPool

OUTAGE_EVENTS = {"redis_unavailable_retrying_job", "gate_state_unavailable", "redis_pool_exhausted", "job_retry"}


class Recorder:
    """Stands in for a module's logger: records each event's name, then logs it."""

    def __init__(self, inner: Any, events: list[str]) -> None:
        self._inner = inner
        self._events = events

    def __getattr__(self, level: str) -> Any:
        def emit(event: str, *args: Any, **fields: Any) -> Any:
            self._events.append(event)
            return getattr(self._inner, level)(event, *args, **fields)

        return emit


def record_events(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    from vetq.workers import call_gate, redis_pool, tasks

    events: list[str] = []
    for module in (call_gate, redis_pool, tasks):
        monkeypatch.setattr(module, "log", Recorder(module.log, events))
    return events


def request() -> LLMRequest:
    return LLMRequest(system="You answer in JSON.", messages=(Message(role="user", content="hello"),), max_tokens=10)


# --------------------------------------------------------------------------- no processes


class ExhaustedRedis:
    """A Redis client whose pool has no connection to give (redis-py's own pool raises
    MaxConnectionsError, a ConnectionError, the moment it is full)."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    def __getattr__(self, command: str) -> Any:
        def run(*args: Any, **kwargs: Any) -> Any:
            raise self.error

        return run


@pytest.mark.parametrize(
    "error",
    [redis.exceptions.MaxConnectionsError("Too many connections"), RedisPoolExhaustedError(2, 30.0)],
    ids=["redis-py pool", "worker pool"],
)
def test_a_gate_out_of_connections_ends_the_job_and_is_not_retried_as_an_outage(monkeypatch, error):
    from vetq.workers.call_gate import GateStateUnavailableError, RedisCallGate
    from vetq.workers.response_cache import RedisResponseCache

    events = record_events(monkeypatch)
    client = ExhaustedRedis(error)
    gate = RedisCallGate(client, limiter=None, ledger=None, cache=RedisResponseCache(client, 60))
    model = ScriptedLLMClient([LLMResponse(text="{}", usage=Usage.of(5, 5))])
    with pytest.raises(LLMError) as raised:
        gate.call(model, request(), stage="generator")
    assert not isinstance(raised.value, GateStateUnavailableError), "read as a Redis outage: the job would be requeued"
    assert raised.value.retryable is False
    assert raised.value.code == ErrorCode.INTERNAL_ERROR
    assert "ran out of Redis connections" in str(raised.value)
    assert model.requests == []  # nothing was sent: the cache could not be read
    assert "gate_state_unavailable" not in events
    # The worker's pool logs when it raises (below); redis-py's does not, so the gate does.
    assert ("redis_pool_exhausted" in events) is not isinstance(error, RedisPoolExhaustedError)


def test_a_job_out_of_connections_before_its_calls_ends_with_an_envelope_not_a_requeue(monkeypatch, tmp_path):
    from vetq.core.queue import TASK_EXTRACT
    from vetq.core.settings import load_settings
    from vetq.workers import tasks
    from vetq.workers.app import create_app

    events = record_events(monkeypatch)
    requeued: list[BaseException] = []
    monkeypatch.setattr(tasks, "raise_for_redis_outage", lambda task, exc, settings: requeued.append(exc))
    app = create_app(load_settings(home=tmp_path), "redis://127.0.0.1:1/0")
    context = app.conf.vetq_context

    def no_connection(task: Any, *, job_tokens: int) -> Any:
        raise redis.exceptions.MaxConnectionsError("Too many connections")

    monkeypatch.setattr(context, "gate_for", no_connection)
    # An eager run has no STARTED write to read the cancel mark in; this test is about the gate.
    monkeypatch.setattr(context, "canceled_at_start", lambda task: False)
    eager = app.tasks[TASK_EXTRACT].apply(args=[{"text": GLOBEX}])
    assert requeued == []
    result = eager.result  # an EagerResult (get() refuses to run where a worker ran before)
    assert result["status"] == "error" and result["error"]["code"] == "INTERNAL_ERROR", result
    assert "ran out of Redis connections" in result["error"]["message"]
    assert "redis_unavailable_retrying_job" not in events and "redis_pool_exhausted" in events


def test_a_worker_sizes_every_redis_pool_to_its_concurrency(tmp_path):
    from vetq.core.settings import load_settings
    from vetq.workers.app import create_app
    from vetq.workers.runner import ThreadWorker

    app = create_app(load_settings(home=tmp_path), "redis://127.0.0.1:1/0")
    ThreadWorker(app, concurrency=300)  # sized when built; never started here
    pool = app.conf.vetq_context.redis.connection_pool
    assert isinstance(pool, redis.BlockingConnectionPool)  # a thread waits rather than fails
    assert pool.max_connections >= 300
    assert app.conf.redis_max_connections >= 300  # Celery's result backend
    assert app.conf.broker_transport_options["max_connections"] >= 300  # kombu's channels: the acks


# --------------------------------------------------------------------------- a real Redis


def test_the_worker_pool_waits_then_raises_its_own_error_and_grows(monkeypatch, redis_url):
    events = record_events(monkeypatch)
    pool = WorkerConnectionPool.from_url(redis_url, max_connections=1, timeout=30)
    held = pool.get_connection()
    freed = threading.Timer(0.05, pool.release, args=[held])
    freed.start()
    again = pool.get_connection()  # waited for the connection another thread gave back
    freed.join()
    pool.timeout = 0.1
    with pytest.raises(RedisPoolExhaustedError) as exhausted:
        pool.get_connection()
    assert not isinstance(exhausted.value, redis.RedisError)  # no outage handler can catch it
    assert events == ["redis_pool_exhausted"]
    pool.grow(2)
    second = pool.get_connection()
    for connection in (again, second):
        pool.release(connection)
    assert redis.Redis(connection_pool=pool).ping()
    pool.disconnect()


def test_more_job_threads_than_redis_connections_answer_every_call_once(monkeypatch, redis_url, queue_settings):
    """Eight job threads share two connections of the worker's pool while their model
    calls overlap: every job ends ok, every call is answered once (the response cache
    off, so a job put back would pay again), and nothing reads as a Redis outage."""
    jobs, threads, connections = 24, 8, 2
    answered: Counter[tuple[str, str]] = Counter()
    copy = re.compile(r"\(copy (\d+)\)")
    lock = threading.Lock()

    def counting(path: str, body: dict[str, Any]) -> str:
        found = copy.search(json.dumps(body))
        if found:
            with lock:
                answered[(found.group(1), str(body.get("model")))] += 1
        return answer_like_a_model(path, body)

    events = record_events(monkeypatch)
    with serving_fake_provider(monkeypatch, counting, latency_ms=400) as fake:
        svc = Service(model_settings(queue_settings, cache_ttl_s=0), redis_url, concurrency=threads)
        try:
            context = svc.app.conf.vetq_context
            # Before any job: the worker's pool (gate, dead letters) shrunk below its threads.
            context.redis.connection_pool = WorkerConnectionPool.from_url(redis_url, max_connections=connections)
            documents = [GLOBEX.replace("Thanks!", f"Thanks! (copy {i})") for i in range(jobs)]
            results = svc.client.submit_batch({"kind": "extract", "text": d} for d in documents).results(timeout=180)
        finally:
            svc.close()
        most_at_once = fake.max_in_flight
    assert [r["status"] for r in results] == ["ok"] * jobs, [r.get("error") for r in results]
    assert most_at_once > connections  # the calls overlapped: more jobs at once than connections
    assert sorted(answered.values()) == [1] * (2 * jobs), answered  # a Generator and a Critic call each, once
    assert not OUTAGE_EVENTS & set(events), Counter(events)


def test_the_fake_provider_counts_calls_in_flight(monkeypatch):
    from openai import OpenAI

    together = threading.Barrier(3)

    def when_all_three_are_in(path: str, body: dict[str, Any]) -> str:
        together.wait(timeout=60)  # answered only once all three are in flight at once
        return "{}"

    with serving_fake_provider(monkeypatch, when_all_three_are_in) as fake:
        client = OpenAI(base_url=fake.base_url_openai, api_key="x", max_retries=0)
        calls = [
            threading.Thread(
                target=client.chat.completions.create,
                kwargs={"model": "m", "messages": [{"role": "user", "content": "hi"}]},
            )
            for _ in range(3)
        ]
        for call in calls:
            call.start()
        for call in calls:
            call.join()
        assert [e["outcome"] for e in fake.log] == ["ok"] * 3
        # A call leaves the count once its handler has written the answer, just after the
        # client has read it: wait (bounded) for the last handler to finish.
        deadline = time.monotonic() + 30
        while fake.in_flight and time.monotonic() < deadline:
            time.sleep(0.01)
        assert fake.max_in_flight == 3 and fake.in_flight == 0
        fake.reset()
        assert fake.max_in_flight == 0
