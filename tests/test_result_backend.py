"""The worker's result backend (workers/result_backend.py) against a real Redis: each
state is one round trip that never overwrites a SUCCESS, and STARTED (a job's
`running`) is stored for readers but not published to waiters."""

from __future__ import annotations

import json
import threading
import time

import pytest
import redis

from tests.conftest import GLOBEX, GLOBEX_DATA, Service
from vetq.core.extraction.pipeline import ExtractionPipeline
from vetq.core.redis_keys import CELERY_RESULT_PREFIX
from vetq.workers.app import create_app
from vetq.workers.result_backend import ResultBackend


def commands_of(backend: ResultBackend) -> list[str]:
    """The commands the backend's client sends from now on."""
    sent: list[str] = []
    client = backend.client
    execute = client.execute_command

    def recorded(*args, **options):
        sent.append(str(args[0]).upper())
        return execute(*args, **options)

    client.execute_command = recorded
    return sent


def test_a_state_is_one_round_trip_and_never_overwrites_a_success(redis_url, queue_settings):
    app = create_app(queue_settings, redis_url)
    backend = app.backend
    assert isinstance(backend, ResultBackend)
    r = redis.Redis.from_url(redis_url)
    backend.store_result("warm", {"pid": 1}, "STARTED")  # the script is loaded once
    sent = commands_of(backend)

    backend.store_result("j1", {"pid": 1, "hostname": "w1"}, "STARTED")
    backend.store_result("j1", {"status": "ok"}, "SUCCESS")
    assert sent == ["EVALSHA", "EVALSHA"]  # no read before a write
    # A late or redelivered run of the job: its STARTED, its failure, are not stored.
    backend.store_result("j1", {"pid": 2, "hostname": "w2"}, "STARTED")
    backend.mark_as_failure("j1", RuntimeError("late"))
    done = app.AsyncResult("j1")
    assert done.state == "SUCCESS" and done.result == {"status": "ok"}
    assert 0 < r.ttl(CELERY_RESULT_PREFIX + "j1") <= queue_settings.result_ttl_s

    # A SUCCESS whose stored keys come in another order is still recognised.
    r.set(CELERY_RESULT_PREFIX + "j2", json.dumps({"result": {"status": "ok"}, "task_id": "j2", "status": "SUCCESS"}))
    backend.store_result("j2", {"pid": 3}, "STARTED")
    assert app.AsyncResult("j2").state == "SUCCESS"
    # Any other state is overwritten, as Celery does (RETRY, then STARTED again, then the result).
    sent.clear()
    backend.store_result("j3", None, "RETRY")
    backend.store_result("j3", {"pid": 4}, "STARTED")
    assert sent == ["EVALSHA", "EVALSHA"]
    assert app.AsyncResult("j3").state == "STARTED"
    backend.mark_as_failure("j3", RuntimeError("failed"))
    assert app.AsyncResult("j3").state == "FAILURE"
    app.close()


class HeldPipeline:
    """The real pipeline, held until the test lets the job go on."""

    def __init__(self, inner: ExtractionPipeline) -> None:
        self.inner = inner
        self.running = threading.Event()
        self.go_on = threading.Event()

    def run(self, *args, **kwargs):
        self.running.set()
        assert self.go_on.wait(30)
        return self.inner.run(*args, **kwargs)


def test_a_running_job_reads_running_and_waiters_get_only_its_result(service):
    held = HeldPipeline(ExtractionPipeline(service.settings))
    service.use(held)
    listener = redis.Redis.from_url(service.client.redis_url).pubsub()
    listener.psubscribe(CELERY_RESULT_PREFIX + "*")
    try:
        job = service.client.submit_validation(GLOBEX, GLOBEX_DATA, heuristics_only=True)
        assert held.running.wait(30)
        assert job.status() == "running"
        held.go_on.set()
        assert job.result(timeout=30)["status"] == "ok"
        assert job.status() == "done"
        time.sleep(0.2)  # the last message reaches the listener
        published = []
        while (message := listener.get_message(timeout=0.5)) is not None:
            if message["type"] == "pmessage" and message["channel"] == (CELERY_RESULT_PREFIX + job.id).encode():
                published.append(json.loads(message["data"])["status"])
    finally:
        held.go_on.set()
        listener.close()
    assert published == ["SUCCESS"]  # STARTED was stored, never sent to the waiters


def test_the_worker_app_uses_the_backend_and_the_producer_keeps_celerys(redis_url, queue_settings):
    from celery.backends.redis import RedisBackend

    svc = Service(queue_settings, redis_url, concurrency=1)
    try:
        assert type(svc.app.backend) is ResultBackend
        assert type(svc.client.app.backend) is RedisBackend
    finally:
        svc.close()


def test_with_track_started_off_a_running_job_reads_queued_and_stores_no_start(redis_url, queue_settings):
    svc = Service(queue_settings.model_copy(update={"track_started": False}), redis_url, concurrency=1)
    held = HeldPipeline(ExtractionPipeline(svc.settings))
    svc.use(held)
    try:
        job = svc.client.submit_validation(GLOBEX, GLOBEX_DATA, heuristics_only=True)
        assert held.running.wait(30)
        assert job.status() == "queued"
        assert redis.Redis.from_url(redis_url).get(CELERY_RESULT_PREFIX + job.id) is None
        held.go_on.set()
        assert job.result(timeout=30)["status"] == "ok" and job.status() == "done"
    finally:
        held.go_on.set()
        svc.close()


@pytest.mark.processes
def test_the_worker_cost_benchmark_times_each_step_both_ways():
    from vetq.eval.bench_queue import run_worker_cost

    figures = run_worker_cost(3)
    assert figures["repeats"] == 3 and figures["result_bytes"] > 500
    assert set(figures["cpu_us_median"]) == {
        "celery_store_started_and_result",
        "vetq_store_started_and_result",
        "celery_store_result_only",
        "vetq_store_result_only",
        "result_repr_celery_default",
        "result_repr_vetq",
        "budget_set_limit_round_trip",
    }
