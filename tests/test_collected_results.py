"""VETQ_COLLECTED_RESULT_TTL_S: a client that asks for it lets the results it has
collected (and their submitted marks) expire early, by every way of collecting; a
client that does not ask leaves them for VETQ_RESULT_TTL_S."""

from __future__ import annotations

import asyncio
import time

import redis

from tests.conftest import GLOBEX, GLOBEX_DATA
from vetq.api_client.aio import AsyncClient
from vetq.api_client.client import Client
from vetq.core.redis_keys import CELERY_RESULT_PREFIX, submitted_key


def validation(i: int) -> dict:
    return {"kind": "validate", "text": f"{GLOBEX}\nCopy {i}.", "data": dict(GLOBEX_DATA), "heuristics_only": True}


def _ttls(redis_url: str, job_ids: list[str]) -> list[int]:
    """The TTL of each job's result and submitted mark (-2: gone)."""
    r = redis.Redis.from_url(redis_url)
    return [r.ttl(key) for job_id in job_ids for key in (CELERY_RESULT_PREFIX + job_id, submitted_key(job_id))]


def test_a_client_that_does_not_ask_keeps_results_for_the_result_ttl(service, redis_url):
    batch = service.client.submit_batch([validation(i) for i in range(5)])
    assert [r["status"] for r in batch.results(timeout=60)] == ["ok"] * 5
    job = service.client.submit(validation(9))
    assert job.result(timeout=60)["status"] == "ok"
    ttls = _ttls(redis_url, [j.id for j in batch.jobs] + [job.id])
    assert all(service.settings.result_ttl_s - 120 < ttl <= service.settings.result_ttl_s for ttl in ttls), ttls


def test_collected_results_expire_early_when_the_client_asks(service, redis_url):
    keep_a_minute = service.settings.model_copy(update={"collected_result_ttl_s": 60})
    delete = service.settings.model_copy(update={"collected_result_ttl_s": 0})
    with Client(redis_url, settings=keep_a_minute) as client:
        batch = client.submit_batch([validation(i) for i in range(30)])
        assert [r["status"] for r in batch.results(timeout=60)] == ["ok"] * 30
        waited = client.submit(validation(100))
        assert waited.result(timeout=60)["status"] == "ok"
        polled = client.submit(validation(101))
        assert polled.poll(interval=0.05, timeout=60)["status"] == "ok"
        ttls = _ttls(redis_url, [j.id for j in batch.jobs] + [waited.id, polled.id])
        assert all(0 < ttl <= 60 for ttl in ttls), ttls
        assert batch.counts() == {"total": 30, "done": 30, "pending": 0}  # still readable meanwhile
    with Client(redis_url, settings=delete) as client:
        batch = client.submit_batch([validation(i) for i in range(10)])
        assert len(batch.results(timeout=60)) == 10
        assert set(_ttls(redis_url, [j.id for j in batch.jobs])) == {-2}
        # all stored before the collection starts: found by its first read, not by messages
        finished = client.submit_batch([validation(i) for i in range(10)])
        deadline = time.monotonic() + 60
        while finished.counts()["pending"] and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(finished.results(timeout=60)) == 10
        assert set(_ttls(redis_url, [j.id for j in finished.jobs])) == {-2}


def test_the_async_client_expires_what_it_collects(service, redis_url):
    delete = service.settings.model_copy(update={"collected_result_ttl_s": 0})

    async def scenario() -> list[str]:
        async with AsyncClient(redis_url, settings=delete) as client:
            job = await client.submit(validation(0))
            assert (await job.result(timeout=60))["status"] == "ok"
            polled = await client.submit(validation(1))
            assert (await polled.poll(interval=0.05, timeout=60))["status"] == "ok"
            batch = await client.submit_batch([validation(i) for i in range(2, 12)])
            assert len(await batch.results(timeout=60)) == 10
            return [job.id, polled.id, *(entry.id for entry in batch.entries)]

    job_ids = asyncio.run(scenario())
    assert set(_ttls(redis_url, job_ids)) == {-2}
