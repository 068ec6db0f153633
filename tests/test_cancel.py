"""Cancellation end to end: a real Redis, one real Celery worker (one slot, so a job can
be held running while others wait behind it), the real SDKs over HTTP to the fake
provider. The Generator is an OpenAI model and the Critic an Anthropic one, both with
Batch APIs, so the same worker serves the realtime and the bulk lane; its bulk
coordinator is ticked by the tests."""

from __future__ import annotations

import asyncio
import json
import threading

import pytest
import redis
from conftest import wait_until

from tests.conftest import GLOBEX, GLOBEX_DATA, Service, critic_answer
from tests.test_bulk_lane import CRITIC, FAST_LANE, GENERATOR, coordinator_of, creates
from tests.test_cli import vetq
from tests.test_webhooks import SECRET, Receiver
from vetq.api_client.aio import AsyncClient
from vetq.api_client.client import JobStatus
from vetq.core.errors import NotFoundError
from vetq.core.redis_keys import (
    BULK_CANCELED_KEY,
    BULK_PREFIX,
    EXTRACT_QUEUE,
    KOMBU_UNACKED_KEY,
    bulk_job_key,
    cancel_key,
    job_scope,
    usd_scope,
)
from vetq.core.results import error_of, spent_of
from vetq.core.settings import load_settings
from vetq.eval.fake_provider import FakeProvider
from vetq.workers import metrics
from vetq.workers.budget_ledger import RedisBudgetLedger

pytestmark = pytest.mark.processes

WAIT_S = 20.0


class HeldAnswers:
    """Answers the Globex document as a Generator and a Critic would; a Generator call
    whose prompt holds `hold` waits (bounded) until `release` is set, so a job can be
    caught between its Generator and its Critic, or kept running while others queue."""

    def __init__(self, hold: str | None = None) -> None:
        self.hold = hold
        self.entered = threading.Event()
        self.release = threading.Event()
        self.calls: list[tuple[str, str]] = []  # (role, prompt)
        self.lock = threading.Lock()

    def __call__(self, path: str, body: dict) -> str:
        role = "critic" if str(body.get("model", "")).startswith("claude") else "generator"
        prompt = json.dumps(body.get("messages"))
        with self.lock:
            self.calls.append((role, prompt))
        if role == "generator" and self.hold and self.hold in prompt:
            self.entered.set()
            self.release.wait(WAIT_S)
        return critic_answer() if role == "critic" else json.dumps(GLOBEX_DATA)

    def called(self, marker: str, role: str | None = None) -> int:
        with self.lock:
            return sum(1 for r, prompt in self.calls if marker in prompt and role in (None, r))


@pytest.fixture(scope="module")
def fake():
    with pytest.MonkeyPatch.context() as patch:
        provider = FakeProvider(seed=7).start()
        patch.setenv("OPENAI_BASE_URL", provider.base_url_openai)
        patch.setenv("OPENAI_API_KEY", "test-key-not-real")
        patch.setenv("ANTHROPIC_BASE_URL", provider.base_url_anthropic)
        patch.setenv("ANTHROPIC_API_KEY", "test-key-not-real")
        yield provider
        provider.stop()


@pytest.fixture(scope="module")
def service(redis_server, fake, tmp_path_factory):
    redis.Redis.from_url(redis_server.url).flushall()
    settings = load_settings(
        home=tmp_path_factory.mktemp("cancel-home"), webhook_secret=SECRET, webhook_allow="127.0.0.1"
    ).model_copy(update={"generator": GENERATOR, "critic": CRITIC, **FAST_LANE, "bulk_coordinator": False})
    svc = Service(settings, redis_server.url, concurrency=1)
    yield svc
    svc.close()


@pytest.fixture
def answers(service, fake):
    fake.reset()
    fake.configure_batches(batch_delay=0.0)
    held = HeldAnswers()
    fake.set_responder(held)
    yield held
    held.release.set()  # nothing stays held past its test


@pytest.fixture
def r(service):
    client = redis.Redis.from_url(service.client.redis_url)
    yield client
    client.close()


def canceled_runs(kind: str = "extract") -> float:
    return (
        metrics.registry().get_sample_value(
            "vetq_jobs_total", {"queue": "extract", "kind": kind, "outcome": "CANCELED"}
        )
        or 0.0
    )


def nothing_held(r: redis.Redis, job_id: str) -> bool:
    ledger = RedisBudgetLedger(r)
    return ledger.reserved(job_scope(job_id)) == 0 and ledger.reserved(usd_scope(job_scope(job_id))) == 0


def test_a_queued_job_canceled_with_the_cli_never_runs(service, answers, r, tmp_path):
    answers.hold = "Hold A."
    client = service.client
    running = client.submit_extraction(f"{GLOBEX}\nHold A.")
    assert answers.entered.wait(WAIT_S)
    queued = client.submit_extraction(f"{GLOBEX}\nQueued A.")
    assert queued.status() == JobStatus.QUEUED
    before = canceled_runs()

    out = vetq("cancel", queued.id, "no-such-job", env={"VETQ_REDIS_URL": client.redis_url, "VETQ_HOME": str(tmp_path)})
    assert out.returncode == 2, out.stdout + out.stderr  # an unknown id; the other is canceled all the same
    canceled, unknown = (json.loads(line) for line in out.stdout.splitlines())
    assert canceled == {"job_id": queued.id, "canceled": True, "status": "canceled"}
    assert unknown["job_id"] == "no-such-job" and unknown["error"]["code"] == "NOT_FOUND"
    # Its result is there at once: nobody waits for a worker to reach it.
    assert queued.status() == JobStatus.CANCELED
    result = queued.result(timeout=5)
    assert error_of(result)[0] == "CANCELED" and spent_of([result])["cost_usd"] == 0.0

    answers.release.set()
    assert running.result(timeout=WAIT_S)["status"] == "ok"
    # The worker takes the queued job's message and ends it at its start, calling nothing.
    wait_until(lambda: canceled_runs() - before == 1, "the worker never took the canceled job")
    wait_until(lambda: r.llen(EXTRACT_QUEUE) == 0 and r.hlen(KOMBU_UNACKED_KEY) == 0, "messages left")
    assert answers.called("Queued A.") == 0
    assert queued.result(timeout=5) == result  # its result was never replaced


def test_a_running_job_stops_before_its_critic_with_the_generators_usage(service, answers, r):
    answers.hold = "Hold B."
    job = service.client.submit_extraction(f"{GLOBEX}\nHold B.", budget_usd=1.0)
    assert answers.entered.wait(WAIT_S)
    assert job.status() == JobStatus.RUNNING

    report = job.cancel()
    assert report["canceled"] is True and report["status"] == "canceling"
    assert job.status() == JobStatus.CANCELING
    answers.release.set()
    result = job.result(timeout=WAIT_S)

    assert error_of(result)[0] == "CANCELED"
    assert answers.called("Hold B.", "critic") == 0
    generator = result["usage"]["generator"]
    assert set(result["usage"]) == {"generator"} and generator["total_tokens"] > 0
    assert result["cost_usd"] == pytest.approx(generator["cost_usd"]) and generator["cost_usd"] > 0
    ledger = RedisBudgetLedger(r)
    assert nothing_held(r, job.id)
    assert ledger.spent(job_scope(job.id)) == generator["total_tokens"]
    assert job.status() == JobStatus.CANCELED


def test_cancelling_a_finished_job_changes_nothing_and_says_so(service, answers, r):
    job = service.client.submit_validation(GLOBEX, dict(GLOBEX_DATA), heuristics_only=True)
    result = job.result(timeout=WAIT_S)
    assert result["status"] == "ok"

    report = job.cancel()
    assert report["canceled"] is False and report["status"] == "done"
    assert "already finished" in report["message"]
    assert not r.exists(cancel_key(job.id))
    assert job.result(timeout=5) == result and job.status() == JobStatus.DONE
    with pytest.raises(NotFoundError):
        service.client.job("never-issued").cancel()

    async def asynchronously():
        async with AsyncClient(service.client.redis_url, settings=service.settings) as client:
            handle = client.job(job.id)
            return await handle.cancel(), await handle.status()

    again, status = asyncio.run(asynchronously())
    assert (again["canceled"], again["status"], status) == (False, "done", JobStatus.DONE)


def test_batch_cancel_cancels_the_jobs_not_finished(service, answers, r):
    answers.hold = "Hold D."
    validation = {"kind": "validate", "text": GLOBEX, "data": dict(GLOBEX_DATA), "heuristics_only": True}
    batch = service.client.submit_batch([validation, {"kind": "extract", "text": f"{GLOBEX}\nHold D."}, validation])
    assert batch.jobs[0].result(timeout=WAIT_S)["status"] == "ok"
    assert answers.entered.wait(WAIT_S)
    before = canceled_runs("validate")

    assert batch.cancel() == {"batch_id": batch.id, "total": 3, "canceled": 1, "canceling": 1, "finished": 1}
    answers.release.set()
    done, stopped, never_ran = batch.results(timeout=WAIT_S)

    assert done["status"] == "ok"
    assert error_of(stopped)[0] == "CANCELED" and set(stopped["usage"]) == {"generator"}
    assert answers.called("Hold D.", "critic") == 0
    assert error_of(never_ran)[0] == "CANCELED"
    # The queued validation calls no model, so only its run's start could stop it: the
    # worker ended it there (a run would have counted `ok`).
    wait_until(lambda: canceled_runs("validate") - before == 1, "the queued validation was not ended at its start")
    status = service.client.batch_status(batch.id)
    assert (status["done"], status["canceled"], status["failed"], status["waiting"]) == (1, 2, 0, 0)


@pytest.fixture(scope="module")
def receiver():
    server = Receiver()
    yield server
    server.close()


def _parked(service, text: str, **options):
    job = service.client.submit_extraction(text, lane="bulk", budget_usd=1.0, **options)
    wait_until(lambda: job.status() == JobStatus.WAITING, "the bulk job never parked")
    return job


def _bulk_keys(r: redis.Redis, kind: str) -> list[bytes]:
    return list(r.scan_iter(match=f"{BULK_PREFIX}:{kind}:*"))


def test_a_parked_bulk_job_canceled_withdraws_its_request_before_it_is_sent(service, answers, fake, r):
    job = _parked(service, f"{GLOBEX}\nParked E.")
    assert _bulk_keys(r, "req") and not nothing_held(r, job.id)  # its Generator request holds its budget
    before = canceled_runs()

    assert job.cancel() == {"job_id": job.id, "canceled": True, "status": "canceled"}
    result = job.result(timeout=5)
    assert error_of(result)[0] == "CANCELED" and spent_of([result])["cost_usd"] == 0.0  # nothing was paid yet

    coordinator = coordinator_of(service)
    assert coordinator._hold_lock()
    try:
        first = coordinator.tick()
        assert first["canceled"] == 1 and first.get("submitted", 0) == 0
        assert coordinator.tick().get("submitted", 0) == 0
    finally:
        coordinator.release()
    assert creates(fake) == []  # the request was never sent
    assert _bulk_keys(r, "req") == [] and _bulk_keys(r, "waiters") == []
    assert not r.exists(bulk_job_key(job.id)) and r.llen(BULK_CANCELED_KEY) == 0
    assert nothing_held(r, job.id)
    assert canceled_runs() - before == 1  # counted once, by the coordinator: no run of it ends it
    assert job.result(timeout=5) == result


def test_a_canceled_parked_job_delivers_its_callback_once(service, answers, fake, r, receiver):
    # No run of a parked job ends it after a cancel, so the coordinator that takes it
    # off its request delivers its canceled result.
    job = _parked(service, f"{GLOBEX}\nParked with a callback G.", callback_url=receiver.url("/parked"))
    assert job.cancel()["status"] == "canceled"
    coordinator = coordinator_of(service)
    assert coordinator._hold_lock()
    try:
        assert coordinator.tick()["canceled"] == 1
        assert coordinator.tick().get("canceled", 0) == 0  # nothing left to withdraw, or to deliver again
    finally:
        coordinator.release()
    (delivery,) = receiver.wait_for("/parked", 1)
    body = json.loads(delivery["body"])
    assert body["event"] == "job.finished" and body["job_id"] == job.id
    assert error_of(body["result"])[0] == "CANCELED"
    assert body["result"] == job.result(timeout=5)


def test_a_provider_batch_whose_every_job_was_canceled_is_canceled(service, answers, fake, r):
    fake.configure_batches(batch_delay=60.0)  # it would not end by itself during the test
    job = _parked(service, f"{GLOBEX}\nOrphan F.")
    coordinator = coordinator_of(service)
    assert coordinator._hold_lock()
    try:
        assert coordinator.tick()["submitted"] == 1
        assert job.cancel()["status"] == "canceled"

        def cancels() -> list[dict]:
            return [e for e in fake.batch_log if e["op"] == "cancel" and e["status"] == 200]

        wait_until(lambda: coordinator.tick() is not None and bool(cancels()), "the provider batch was not canceled")
        # The batch ends canceled; its unanswered request is withdrawn, never sent again.
        wait_until(lambda: coordinator.tick() is not None and not _bulk_keys(r, "req"), "the request is still there")
        coordinator.tick()
    finally:
        coordinator.release()
        fake.configure_batches(batch_delay=0.0)
    assert len(creates(fake)) == 1 and len(cancels()) == 1
    assert nothing_held(r, job.id)
    assert error_of(job.result(timeout=5))[0] == "CANCELED"
