"""Jobs run once: a long Retry-After is waited out in steps no redelivery can catch, the
hard time limit holds on the thread pool, Redis blips do not spend provider attempts,
and a soft time limit ends a job as TIMEOUT with what it has."""

from __future__ import annotations

import socket
import threading
import time

import pytest
import redis
from celery import signals
from conftest import wait_until

from tests.conftest import GLOBEX, Service, answer_like_a_model, model_settings
from tests.test_queue_processes import worker_env
from vetq.api_client.admin import Admin
from vetq.api_client.client import Client
from vetq.eval.fake_provider import FakeProvider
from vetq.workers.runner import spawn_worker_process, stop_processes


def outcomes(fake):
    by_model: dict[str, list[str]] = {}
    for entry in fake.log:
        by_model.setdefault(entry["model"], []).append(entry["outcome"])
    return by_model


class SignalCounter:
    """How often a Celery signal fired for one job id, in this process's workers."""

    def __init__(self, signal):
        self.signal = signal
        self.job_id: str | None = None
        self.count = 0
        self.on_count = None
        self._lock = threading.Lock()
        signal.connect(self._seen, weak=False)

    def _seen(self, sender=None, **kwargs):
        request = kwargs.get("request") or getattr(sender, "request", None)
        if request is not None and getattr(request, "id", None) == self.job_id:
            with self._lock:
                self.count += 1
                count = self.count
            if self.on_count:
                self.on_count(count)

    def close(self):
        self.signal.disconnect(self._seen)


def test_retry_after_longer_than_the_visibility_timeout_runs_the_job_once(fake, redis_url, queue_settings):
    # Requeue step: 20 - 10 - 2 = 8 s; the 35 s wait is five steps, and a single 35 s
    # countdown would have been redelivered (and run a second time) after 20 s.
    # max_attempts 2: the 429 spends the one retry, so a parked step that counted as an
    # attempt would end the job RATE_LIMITED. No cache: a second run would pay again.
    settings = model_settings(
        queue_settings, task_time_limit_s=10, visibility_timeout_s=20, max_sleep_s=0.5, max_attempts=2, cache_ttl_s=0
    )
    successes = SignalCounter(signals.task_success)
    svc = Service(settings, redis_url)
    try:
        fake.push_fault({"kind": "429", "retry_after": 35}, model="fake-generator")
        job = svc.client.submit_extraction(GLOBEX)
        successes.job_id = job.id
        result = job.result(timeout=120)
        # A redelivered copy would wake at the same due time: give it the time to show.
        time.sleep(4)
    finally:
        svc.close()
        successes.close()
    assert result["status"] == "ok", result
    assert outcomes(fake) == {"fake-generator": ["429", "ok"], "fake-critic": ["ok"]}
    assert successes.count == 1
    # One budget across the steps: the job's scope was charged exactly what it used.
    from vetq.workers.budget_ledger import RedisBudgetLedger

    ledger = RedisBudgetLedger(redis.Redis.from_url(redis_url))
    scope = ledger.redis.hgetall(ledger.scope_key(f"job:{job.id}"))
    assert int(scope[b"spent"]) == sum(u["total_tokens"] for u in result["usage"].values())
    generator_times = [e["time"] for e in fake.log if e["model"] == "fake-generator"]
    assert generator_times[1] - generator_times[0] >= 35  # nothing before Retry-After
    assert not any(e.get("early") for e in fake.log)


def test_worker_refuses_settings_under_which_a_countdown_reaches_the_visibility_timeout(queue_settings, redis_url):
    from vetq.workers.app import UnsafeSettingsError, create_app

    # Longer than the time limit, but a job held for its whole 10 s leaves no room for
    # any countdown before the 12 s visibility timeout.
    settings = queue_settings.model_copy(update={"task_time_limit_s": 10, "visibility_timeout_s": 12})
    with pytest.raises(UnsafeSettingsError) as refused:
        create_app(settings, redis_url)
    assert "VETQ_VISIBILITY_TIMEOUT_S" in str(refused.value)
    assert "VETQ_TASK_TIME_LIMIT_S" in str(refused.value)
    create_app(settings.model_copy(update={"visibility_timeout_s": 13}), redis_url)  # a 1 s step is enough


def test_thread_worker_holds_the_hard_time_limit_and_keeps_the_usage(fake, redis_url, queue_settings):
    settings = model_settings(queue_settings, task_time_limit_s=10, visibility_timeout_s=25, provider_timeout_s=60)
    svc = Service(settings, redis_url)  # the thread pool: Celery enforces no time limit here
    try:
        # The Critic hangs for 40 s, well past the job's 10 s.
        fake.push_fault({"kind": "timeout", "seconds": 40}, model="fake-critic")
        job = svc.client.submit_extraction(GLOBEX)
        result = job.result(timeout=60)
    finally:
        svc.close()
    assert result["status"] == "error" and result["error"]["code"] == "TIMEOUT", result
    assert "hard time limit" in result["error"]["message"]
    assert result["usage"]["generator"]["total_tokens"] > 0  # the usage so far
    assert outcomes(fake) == {"fake-generator": ["ok"], "fake-critic": ["timeout"]}  # nothing sent past the deadline


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_redis_outage_retries_leave_the_provider_attempts_whole(fake, redis_url, queue_settings):
    from vetq.workers.budget_ledger import RedisBudgetLedger

    outages = 3
    settings = model_settings(queue_settings, max_attempts=3, max_sleep_s=0)
    svc = Service(settings, redis_url)
    context = svc.app.conf.vetq_context
    working_ledger = context.ledger
    # The job's gate state sits on a Redis that is not there (a real refused connection)
    # for its first `outages` runs, then Redis is back.
    context.ledger = RedisBudgetLedger(redis.Redis(host="127.0.0.1", port=_closed_port()))
    retries = SignalCounter(signals.task_retry)

    def redis_back(count):
        if count == outages:
            context.ledger = working_ledger

    retries.on_count = redis_back
    try:
        # Then the provider: two 429s, within the 3 attempts the job is given.
        for _ in range(2):
            fake.push_fault({"kind": "429", "retry_after": 1}, model="fake-generator")
        job = svc.client.submit_extraction(GLOBEX)
        retries.job_id = job.id
        result = job.result(timeout=90)
    finally:
        svc.close()
        retries.close()
    assert result["status"] == "ok", result
    assert retries.count == outages + 2
    assert outcomes(fake) == {"fake-generator": ["429", "429", "ok"], "fake-critic": ["ok"]}


def test_the_gates_redis_out_of_reach_mid_job_is_an_outage_not_a_provider_attempt(queue_settings):
    # Since a job's budget scopes are set at its first call, the gate's first round
    # trip is inside a call: Redis out of reach there is still counted as an outage.
    from types import SimpleNamespace

    from vetq.workers import tasks
    from vetq.workers.call_gate import GateStateUnavailableError

    class Requeued(Exception):
        pass

    class FakeTask:
        def __init__(self, headers: dict) -> None:
            self.request = SimpleNamespace(id="job-1", headers=headers)

        def retry(self, **options):
            raise Requeued(options)

    exc = GateStateUnavailableError("the call gate cannot reach Redis (ConnectionError); retrying")
    with pytest.raises(Requeued) as requeued:
        tasks.retry_or_fail(FakeTask({tasks.PROVIDER_RETRIES_HEADER: 1}), exc, queue_settings)
    headers = requeued.value.args[0]["headers"]
    assert headers[tasks.OUTAGE_RETRIES_HEADER] == 1 and headers[tasks.PROVIDER_RETRIES_HEADER] == 1
    # Once the outage retries are spent, the job ends with its error envelope.
    spent = {tasks.OUTAGE_RETRIES_HEADER: queue_settings.max_attempts + tasks.EXTRA_OUTAGE_RETRIES}
    assert tasks.retry_or_fail(FakeTask(spent), exc, queue_settings) is None


def test_soft_time_limit_ends_the_job_as_timeout_with_the_usage_so_far(redis_url, queue_settings, tmp_path):
    with FakeProvider() as slow:
        slow.set_responder(answer_like_a_model)
        slow.push_fault({"kind": "timeout", "seconds": 40}, model="fake-critic")
        env = {**worker_env(slow, tmp_path), "VETQ_TASK_TIME_LIMIT_S": "10"}  # soft limit 8 s
        workers = [spawn_worker_process(redis_url, concurrency=1, extra_env=env)]  # prefork
        try:
            with Client(redis_url, settings=queue_settings) as client:
                wait_until(lambda: len(Admin.of(client).workers()) == 1, timeout=60)
                result = client.submit_extraction(GLOBEX).result(timeout=60)
        finally:
            stop_processes(workers)
        log = list(slow.log)
    assert result["status"] == "error" and result["error"]["code"] == "TIMEOUT", result
    assert "soft time limit" in result["error"]["message"]
    assert result["usage"]["generator"]["total_tokens"] > 0
    assert [e["model"] for e in log] == ["fake-generator", "fake-critic"]  # the job ran once


# --- the gate's deadline, on its own: real Redis, real SDK, the fake provider -------


def gate_with_deadline(redis_url, left_s, **parts):
    from vetq.workers.budget_ledger import RedisBudgetLedger
    from vetq.workers.call_gate import RedisCallGate

    client = redis.Redis.from_url(redis_url)
    ledger = RedisBudgetLedger(client)
    ledger.set_limit("job:deadline-test", 10_000, 600)
    gate = RedisCallGate(
        client,
        ledger=ledger,
        cache=None,
        budget_scopes=["job:deadline-test"],
        deadline=time.monotonic() + left_s,
        max_sleep_s=100,
        **{"limiter": None, **parts},
    )
    return gate, ledger


def one_request():
    from vetq.core.llm.types import LLMRequest, Message

    return LLMRequest(system="You answer in JSON.", messages=(Message(role="user", content="hello"),), max_tokens=64)


def test_no_call_is_sent_past_the_job_deadline_and_nothing_stays_reserved(redis_url, fake):
    from vetq.core.llm.providers import OpenAIClient
    from vetq.workers.call_gate import JobTimeoutError

    gate, ledger = gate_with_deadline(redis_url, left_s=-1)
    with pytest.raises(JobTimeoutError):
        gate.call(OpenAIClient("fake-generator"), one_request(), stage="generator")
    assert fake.log == []
    assert ledger.remaining("job:deadline-test") == 10_000


def test_a_rate_limit_wait_that_would_cross_the_deadline_requeues_instead_of_sleeping(redis_url, fake):
    from vetq.core.llm.limits import Limit
    from vetq.core.llm.providers import OpenAIClient
    from vetq.workers.call_gate import RateLimitWaitError
    from vetq.workers.rate_limiter import RedisRateLimiter

    slept = []
    limiter = RedisRateLimiter(redis.Redis.from_url(redis_url), {"openai:fake-generator": Limit(rpm=1)}, window_s=30)
    gate, _ = gate_with_deadline(redis_url, left_s=5, limiter=limiter, sleep=slept.append)
    client = OpenAIClient("fake-generator")
    gate.call(client, one_request(), stage="generator")
    with pytest.raises(RateLimitWaitError) as wait:
        gate.call(client, one_request(), stage="critic")  # the window frees in ~30 s, the job has 5
    assert wait.value.retry_after_s > 5
    assert slept == [] and len(fake.log) == 1


def test_doctor_applies_the_worker_rule_to_the_visibility_timeout(queue_settings):
    from vetq.api_client.doctor import config_checks

    def visibility_check(visibility_s):
        settings = queue_settings.model_copy(update={"task_time_limit_s": 10, "visibility_timeout_s": visibility_s})
        return next(c for c in config_checks(settings, "redis://127.0.0.1:1/0") if c["check"] == "visibility_timeout")

    refused = visibility_check(12)  # longer than the limit, yet the worker refuses it
    assert refused["status"] == "problem" and "VETQ_VISIBILITY_TIMEOUT_S" in refused["detail"]
    assert visibility_check(13)["status"] == "ok"
