"""AsyncClient: asyncio producers wait on redis.asyncio pub/sub, with no thread per
waiting job, so many concurrent waits neither pile up threads nor hold each other up."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.conftest import GLOBEX, GLOBEX_DATA
from tests.test_batch_collection import SlowCritic
from vetq.api_client.aio import AsyncClient
from vetq.api_client.client import JobStatus, WaitTimeout
from vetq.core.errors import NotFoundError
from vetq.core.extraction.pipeline import ExtractionPipeline
from vetq.core.llm.scripted import ScriptedLLMClient
from vetq.core.redis_keys import CELERY_RESULT_PREFIX

JOBS = 300


def run(coro):
    async def main():
        # A small default executor: any wait that took a thread would queue behind it.
        asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(max_workers=2))
        return await coro

    return asyncio.run(main())


def validation(i: int) -> dict:
    return {"kind": "validate", "text": f"{GLOBEX}\nCopy {i}.", "data": dict(GLOBEX_DATA), "heuristics_only": True}


def test_hundreds_of_concurrent_waits_take_no_thread_each(service, redis_url):
    async def scenario():
        async with AsyncClient(redis_url, settings=service.settings) as client:
            jobs = [await client.submit(validation(i)) for i in range(JOBS)]
            threads_before = threading.active_count()
            peak = threads_before

            async def watch():
                nonlocal peak
                while True:
                    peak = max(peak, threading.active_count())
                    await asyncio.sleep(0.01)

            watcher = asyncio.create_task(watch())
            results = await asyncio.gather(*(job.result(timeout=60) for job in jobs))
            watcher.cancel()
            statuses = await asyncio.gather(*(job.status() for job in jobs[:5]))
            return results, statuses, peak - threads_before

    results, statuses, extra_threads = run(scenario())
    assert [r["status"] for r in results] == ["ok"] * JOBS
    assert [r["trace_id"] for r in results] == [r["trace_id"] for r in results]  # each its own envelope
    assert statuses == [JobStatus.DONE] * 5
    assert extra_threads <= 2  # at most the executor's two, never one per waiting job


def test_a_stuck_job_holds_up_no_other_waiter(service, redis_url):
    # One job whose Critic takes 3 s, then quick heuristics-only jobs submitted after it.
    critic = SlowCritic(3.0, 1)
    service.use(ExtractionPipeline(service.settings, generator_client=ScriptedLLMClient([]), critic_client=critic))

    async def scenario():
        async with AsyncClient(redis_url, settings=service.settings) as client:
            slow = await client.submit({"kind": "validate", "text": GLOBEX, "data": dict(GLOBEX_DATA)})
            quick = [await client.submit(validation(i)) for i in range(20)]
            finished: list[str] = []

            async def wait(job, name):
                await job.result(timeout=60)
                finished.append(name)

            await asyncio.gather(wait(slow, "slow"), *(wait(job, f"quick-{i}") for i, job in enumerate(quick)))
            return finished

    finished = run(scenario())
    assert finished[-1] == "slow" and len(finished) == 21


def test_a_batch_streams_in_and_a_bad_id_is_not_found(service, redis_url):
    async def scenario():
        async with AsyncClient(redis_url, settings=service.settings) as client:
            batch = await client.submit_batch([validation(i) for i in range(30)] + [{"kind": "validate"}])
            seen = [index async for index, _result in batch.as_completed(timeout=30)]
            with pytest.raises(NotFoundError):
                await client.job("never-submitted").result(timeout=5)
            polled = await (await client.submit(validation(99))).poll(interval=0.05, timeout=30)
            return seen, batch.spent(), polled

    seen, spent, polled = run(scenario())
    assert sorted(seen) == list(range(31)) and seen[0] == 30  # the refused line first, at once
    assert spent["results"] == 31 and polled["status"] == "ok"


def test_a_wait_times_out_and_the_job_still_finishes(service, redis_url):
    critic = SlowCritic(2.0, 1)
    service.use(ExtractionPipeline(service.settings, generator_client=ScriptedLLMClient([]), critic_client=critic))

    async def scenario():
        async with AsyncClient(redis_url, settings=service.settings) as client:
            job = await client.submit({"kind": "validate", "text": GLOBEX, "data": dict(GLOBEX_DATA)})
            with pytest.raises(WaitTimeout):
                await job.result(timeout=0.3)
            return await job.result(timeout=60)

    assert run(scenario())["status"] == "ok"
    assert critic.remaining == 0  # the one slow Critic call, made once


def test_a_result_stored_without_its_message_is_still_found(service, redis_url):
    # A result that lands while its channel is being subscribed again sends its message
    # to nobody: the wait finds it stored at its next liveness check, not at its timeout.
    async def scenario():
        async with AsyncClient(redis_url, settings=service.settings) as client:
            done = await client.submit(validation(0))
            await done.result(timeout=60)
            raw = await client._aredis().get(CELERY_RESULT_PREFIX + done.id)
            client.sync._record_submitted(["unannounced"])
            waiting = asyncio.create_task(client.job("unannounced").result(timeout=30))
            await asyncio.sleep(0.5)  # subscribed, and nothing stored yet
            await client._aredis().set(CELERY_RESULT_PREFIX + "unannounced", raw)  # no PUBLISH
            return await waiting

    assert run(scenario())["status"] == "ok"


def test_a_batch_finds_results_stored_without_their_messages(service, redis_url):
    # The batch waits as one, with no timer per job: when nothing lands for a while it
    # reads what is stored, so results whose messages went to nobody are still collected,
    # and found before it asks whether a worker is left (none is, here).
    from vetq.api_client.aio import AsyncBatch
    from vetq.api_client.client import Batch, Job

    async def scenario():
        async with AsyncClient(redis_url, settings=service.settings) as client:
            done = await client.submit(validation(0))
            await done.result(timeout=60)
            raw = await client._aredis().get(CELERY_RESULT_PREFIX + done.id)
            await asyncio.to_thread(service.worker.stop)
            ids = [f"unannounced-{i}" for i in range(3)]
            client.sync._record_submitted(ids)
            jobs = [Job(client.sync, job_id, None, "extract") for job_id in ids]
            batch = AsyncBatch(client, Batch(client.sync, list(jobs), "quiet-batch"))

            async def store_quietly():
                await asyncio.sleep(0.5)  # subscribed, and nothing stored yet
                for job_id in ids:
                    await client._aredis().set(CELERY_RESULT_PREFIX + job_id, raw)  # no PUBLISH

            storing = asyncio.create_task(store_quietly())
            results = await batch.results(timeout=30)
            await storing
            return results

    assert [r["status"] for r in run(scenario())] == ["ok"] * 3


def test_a_batch_nobody_serves_says_so(redis_url, queue_settings):
    from vetq.api_client.client import NoWorkerError

    async def scenario():
        async with AsyncClient(redis_url, settings=queue_settings) as client:
            batch = await client.submit_batch([validation(i) for i in range(3)])
            with pytest.raises(NoWorkerError):
                await batch.results(timeout=60)

    run(scenario())
