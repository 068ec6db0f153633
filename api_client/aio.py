"""`AsyncClient`: vetq's producer for asyncio code, waiting on `redis.asyncio`.

    async with AsyncClient() as client:
        job = await client.submit_extraction(text)
        result = await job.result(timeout=60)
        batch = await client.submit_batch({"text": t} for t in texts)
        async for index, result in batch.as_completed():
            ...

Every wait is native: one pub/sub connection per client carries every awaited job's
result channel, a reader task resolves each waiter's future when its result lands,
and a subscription is followed by one read of what was already stored (the same rule
as `result_stream.ResultStream`). Ten thousand concurrent waits are ten thousand
futures and channels on one connection, not ten thousand threads; a stuck job delays
nothing but its own waiter. Submission publishes through Celery's kombu producer,
which has no asyncio transport: each submit call runs once in the loop's executor
(pipelined, a chunk of a batch per round trip), so threads stay bounded by the
executor whatever the number of jobs. Checks, envelopes, lanes and budgets are the
synchronous `Client`'s, which the AsyncClient holds.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import time
from collections.abc import AsyncIterator, Iterable
from typing import Any

import redis.asyncio as aioredis

from vetq.api_client.client import (
    LIVENESS_CHECK_S,
    Batch,
    Client,
    Job,
    JobStatus,
    WaitTimeout,
    _safe_url,
    awaits_review,
    check_until,
    expire_collected,
    reviewed_of,
    status_of,
)
from vetq.api_client.result_stream import FINAL_STATES, SUBSCRIBE_CHUNK
from vetq.core.errors import NotFoundError
from vetq.core.redis_keys import CELERY_RESULT_PREFIX, cancel_key, submitted_key
from vetq.core.settings import VetqSettings

__all__ = ["AsyncBatch", "AsyncClient", "AsyncJob"]

# Connections an AsyncClient's commands share (its pub/sub connection is apart).
ASYNC_REDIS_CONNECTIONS = 16
# How long close() waits for its background tasks to end. redis-py can swallow a
# cancellation that lands inside a pub/sub command, so the tasks also watch a closing
# flag; this bound only keeps a close from waiting on a dead connection for ever.
CLOSE_WAIT_S = 5.0


class AsyncJob:
    def __init__(self, client: AsyncClient, job: Job) -> None:
        self.client = client
        self._job = job
        self.id = job.id
        self.trace_id = job.trace_id
        self.queue = job.queue

    async def status(self) -> JobStatus:
        """queued, running, retrying, waiting, canceling, done, failed or canceled;
        NotFoundError for an id never submitted here (or expired)."""
        meta = await self.client._stored(self.id)
        if meta is None:
            await self.client._require_issued(self.id)
            return JobStatus.QUEUED
        status = status_of(str(meta.get("status")), meta.get("result"))
        if status is JobStatus.RUNNING and await self.client._aredis().exists(cancel_key(self.id)):
            return JobStatus.CANCELING
        return status

    async def cancel(self) -> dict[str, Any]:
        """As Job.cancel (one call in the executor): {"job_id", "canceled", "status"}."""
        return await asyncio.to_thread(self._job.cancel)

    async def result(self, timeout: float | None = None, *, until: str | None = None) -> dict[str, Any]:
        """Wait for the result (pub/sub, no thread). While the job is still queued a
        worker ping every few seconds turns a queue nobody consumes into
        NoWorkerError; WaitTimeout after `timeout` seconds. `until="reviewed"` waits
        past a needs_review result for the one a person resolves in the inbox, as
        `Job.result` does."""
        check_until(until)
        deadline = None if timeout is None else time.monotonic() + timeout
        await self.client._require_issued(self.id)
        meta = await self.client._wait(self.id, self.queue, timeout)
        outcome = await self._collected(meta)
        if until is None or not awaits_review(outcome, self.client.sync.settings):
            return outcome
        return await self.client._wait_reviewed(self.id, deadline, timeout)

    async def _collected(self, meta: dict[str, Any]) -> dict[str, Any]:
        outcome = self._job._outcome_of(str(meta["status"]), meta.get("result"))
        await self.client._expire_collected([self.id])
        return outcome

    async def poll(self, interval: float = 0.5, timeout: float | None = None) -> dict[str, Any]:
        """Wait by reading the stored result every `interval` seconds."""
        await self.client._require_issued(self.id)
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            meta = await self.client._stored(self.id)
            if meta is not None and meta.get("status") in FINAL_STATES:
                return await self._collected(meta)
            if deadline is not None and time.monotonic() >= deadline:
                raise WaitTimeout(f"job {self.id} did not finish within {timeout}s")
            await asyncio.sleep(interval)

    def __repr__(self) -> str:
        return f"AsyncJob(id={self.id!r}, trace_id={self.trace_id!r}, queue={self.queue!r})"


class AsyncBatch:
    """A submitted batch: `as_completed()` and `results()` await every job at once."""

    def __init__(self, client: AsyncClient, batch: Batch) -> None:
        self.client = client
        self._batch = batch
        self.id = batch.id
        self.entries: list[AsyncJob | dict[str, Any]] = [
            AsyncJob(client, entry) if isinstance(entry, Job) else entry for entry in batch.entries
        ]

    def __len__(self) -> int:
        return len(self.entries)

    def spent(self) -> dict[str, Any]:
        """As `Batch.spent()`: what the results collected so far cost."""
        return self._batch.spent()

    async def cancel(self) -> dict[str, Any]:
        """As Batch.cancel (one call in the executor): every job not finished yet."""
        return await asyncio.to_thread(self._batch.cancel)

    async def as_completed(self, timeout: float | None = None) -> AsyncIterator[tuple[int, dict[str, Any]]]:
        """(input index, result) as results land. `timeout`: the longest wait for the
        next result (WaitTimeout), as for the synchronous Batch.

        The batch waits as one: every job's future is resolved by the client's reader
        and queued here, with no timer per job; only when nothing has landed for
        LIVENESS_CHECK_S does it read what is stored (a result whose message was
        missed) and ask whether a worker consumes the queue."""
        index_of: dict[str, int] = {}
        for index, entry in enumerate(self.entries):
            if isinstance(entry, AsyncJob):
                index_of[entry.id] = index
            else:
                self._batch.collected[index] = entry
                yield index, entry
        if not index_of:
            return
        landed: asyncio.Queue[tuple[str, dict[str, Any]]] = asyncio.Queue()
        futures = self.client._watch(index_of)
        for job_id, future in futures.items():
            future.add_done_callback(functools.partial(_hand_to, landed, job_id))
        queues = {entry.queue for entry in self.entries if isinstance(entry, AsyncJob)}
        queue = queues.pop() if len(queues) == 1 else None
        pending = set(index_of)
        last_progress = time.monotonic()
        try:
            while pending:
                left = None if timeout is None else last_progress + timeout - time.monotonic()
                if left is not None and left <= 0:
                    raise WaitTimeout(f"batch {self.id}: no result for {timeout}s, {len(pending)} job(s) unfinished")
                try:
                    first = await asyncio.wait_for(
                        landed.get(), LIVENESS_CHECK_S if left is None else min(LIVENESS_CHECK_S, left)
                    )
                except TimeoutError:
                    await self.client._read_stored(pending)
                    await asyncio.sleep(0)  # the futures' done callbacks run on the next turn of the loop
                    if landed.empty():
                        await self.client._check_worker(queue)
                    continue
                arrived = [first]
                while not landed.empty():  # everything already here, in one expiry round trip
                    arrived.append(landed.get_nowait())
                arrived = [(job_id, meta) for job_id, meta in arrived if job_id in pending]
                pending.difference_update(job_id for job_id, _ in arrived)
                last_progress = time.monotonic()
                await self.client._expire_collected([job_id for job_id, _ in arrived])
                for job_id, meta in arrived:
                    yield self._batch._collect(index_of[job_id], meta)
        finally:
            self.client._unwatch(futures)

    async def results(self, timeout: float | None = None) -> list[dict[str, Any]]:
        ordered: list[dict[str, Any] | None] = [None] * len(self.entries)
        async for index, result in self.as_completed(timeout):
            ordered[index] = result
        return [r for r in ordered if r is not None]


class AsyncClient:
    """A producer for asyncio code. The same arguments, checks and embedded default as
    `Client`; use `async with AsyncClient() as client` (or `await client.close()`)."""

    def __init__(self, redis_url: str | None = None, *, settings: VetqSettings | None = None) -> None:
        self._redis_url = redis_url
        self._settings = settings
        self._sync: Client | None = None
        self._redis: aioredis.Redis | None = None
        self._pubsub: Any = None
        self._reader: asyncio.Task[None] | None = None
        self._subscriber: asyncio.Task[None] | None = None
        self._waiters: dict[str, list[asyncio.Future[dict[str, Any]]]] = {}
        self._to_subscribe: set[str] = set()
        self._to_unsubscribe: set[str] = set()
        self._subscribed: set[str] = set()
        self._wake_subscriber = asyncio.Event()
        self._closing = False
        self._liveness_lock = asyncio.Lock()
        self._liveness_checked: dict[str | None, float] = {}

    async def start(self) -> AsyncClient:
        self._closing = False
        if self._sync is None:
            # Client() may start the embedded Redis and worker: once, off the loop.
            self._sync = await asyncio.to_thread(Client, self._redis_url, settings=self._settings)
            # A bounded pool that waits for a free connection: thousands of concurrent
            # waiters share a few connections instead of opening one each.
            pool = aioredis.BlockingConnectionPool.from_url(
                self._sync.redis_url, max_connections=ASYNC_REDIS_CONNECTIONS, timeout=30
            )
            self._redis = aioredis.Redis(connection_pool=pool)
        return self

    @property
    def sync(self) -> Client:
        if self._sync is None:
            raise RuntimeError("start the AsyncClient first: `async with AsyncClient() as client`")
        return self._sync

    @property
    def redis_url(self) -> str:
        return self.sync.redis_url

    async def __aenter__(self) -> AsyncClient:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        self._closing = True
        self._wake_subscriber.set()
        tasks = [task for task in (self._reader, self._subscriber) if task is not None]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=CLOSE_WAIT_S)
        self._reader = self._subscriber = None
        if self._pubsub is not None:
            with contextlib.suppress(Exception):
                await self._pubsub.aclose()
            self._pubsub = None
        if self._redis is not None:
            with contextlib.suppress(Exception):
                await self._redis.aclose()
            self._redis = None
        for futures in self._waiters.values():
            for future in futures:
                future.cancel()
        self._waiters.clear()
        if self._sync is not None:
            sync, self._sync = self._sync, None
            await asyncio.to_thread(sync.close)

    # --- submission: the synchronous client's, run once per call in the executor ---
    async def submit(self, request: Any, **options: Any) -> AsyncJob:
        return AsyncJob(self, await asyncio.to_thread(self.sync.submit, request, **options))

    async def submit_extraction(self, text: str | None = None, **options: Any) -> AsyncJob:
        return AsyncJob(self, await asyncio.to_thread(self.sync.submit_extraction, text, **options))

    async def submit_validation(
        self, text: str | None = None, data: dict[str, Any] | None = None, **options: Any
    ) -> AsyncJob:
        return AsyncJob(self, await asyncio.to_thread(self.sync.submit_validation, text, data, **options))

    async def submit_review(self, request: Any, **options: Any) -> AsyncJob:
        return AsyncJob(self, await asyncio.to_thread(self.sync.submit_review, request, **options))

    async def submit_batch(self, requests: Iterable[Any], **options: Any) -> AsyncBatch:
        return AsyncBatch(self, await asyncio.to_thread(self.sync.submit_batch, requests, **options))

    def job(self, job_id: str, *, queue: str | None = None) -> AsyncJob:
        return AsyncJob(self, self.sync.job(job_id, queue=queue))

    # --- waiting ----------------------------------------------------------------
    def _aredis(self) -> aioredis.Redis:
        if self._redis is None:
            raise RuntimeError("start the AsyncClient first: `async with AsyncClient() as client`")
        return self._redis

    async def _stored(self, job_id: str) -> dict[str, Any] | None:
        raw = await self._aredis().get(CELERY_RESULT_PREFIX + job_id)
        return None if raw is None else self.sync.app.backend.decode_result(raw)

    async def _expire_collected(self, job_ids: list[str]) -> None:
        """As Client._expire_collected (VETQ_COLLECTED_RESULT_TTL_S), on the asyncio pool."""
        ttl = self.sync.settings.collected_result_ttl_s
        if ttl is None:
            return
        pipe = self._aredis().pipeline(transaction=False)
        expire_collected(pipe, job_ids, ttl)
        await pipe.execute()

    async def _require_issued(self, job_id: str) -> None:
        if await self._aredis().exists(submitted_key(job_id)):
            return
        if await self._stored(job_id) is None:
            raise NotFoundError(
                f"no job {job_id!r} was submitted to {_safe_url(self.redis_url)}, or its result has "
                "expired (VETQ_RESULT_TTL_S): check the id and VETQ_REDIS_URL"
            )

    def _watch(self, job_ids: Iterable[str]) -> dict[str, asyncio.Future[dict[str, Any]]]:
        """A future per job, resolved with its final meta by the reader task; the jobs'
        channels are subscribed by the subscribe task, in chunks."""
        loop = asyncio.get_running_loop()
        futures: dict[str, asyncio.Future[dict[str, Any]]] = {}
        for job_id in job_ids:
            futures[job_id] = future = loop.create_future()
            self._waiters.setdefault(job_id, []).append(future)
            if job_id not in self._subscribed:
                self._to_subscribe.add(job_id)
        self._ensure_tasks()
        self._wake_subscriber.set()
        return futures

    def _unwatch(self, futures: dict[str, asyncio.Future[dict[str, Any]]]) -> None:
        """Stop waiting: channels nobody waits on any more are unsubscribed, in chunks."""
        for job_id, future in futures.items():
            waiters = self._waiters.get(job_id)
            if waiters is not None and future in waiters:
                waiters.remove(future)
                if not waiters:
                    del self._waiters[job_id]
                    self._to_unsubscribe.add(job_id)
            future.cancel()
        self._wake_subscriber.set()

    async def _read_stored(self, job_ids: Iterable[str]) -> None:
        """Deliver the final results already stored for these jobs (one MGET a chunk)."""
        pending = list(job_ids)
        for start in range(0, len(pending), SUBSCRIBE_CHUNK):
            keys = [CELERY_RESULT_PREFIX + job_id for job_id in pending[start : start + SUBSCRIBE_CHUNK]]
            for key, raw in zip(keys, await self._aredis().mget(keys), strict=True):
                if raw is not None:
                    self._deliver(key, raw)

    async def _wait(self, job_id: str, queue: str | None, timeout: float | None) -> dict[str, Any]:
        """The job's final meta, once stored."""
        futures = self._watch([job_id])
        future = futures[job_id]
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            while True:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise WaitTimeout(
                        f"job {job_id} did not finish within {timeout}s; it may still finish: `vetq result {job_id}`"
                    )
                slice_s = LIVENESS_CHECK_S if left is None else min(LIVENESS_CHECK_S, left)
                try:
                    return await asyncio.wait_for(asyncio.shield(future), slice_s)
                except TimeoutError:
                    meta = await self._stored(job_id)
                    if meta is not None and meta.get("status") in FINAL_STATES:
                        return meta  # stored while the subscription was being renewed
                    if meta is None:  # still queued: is anyone consuming its queue?
                        await self._check_worker(queue)
        finally:
            self._unwatch(futures)

    async def _check_worker(self, queue: str | None) -> None:
        """The synchronous client's worker probe, at most once per LIVENESS_CHECK_S per
        queue for all of this client's waiters together."""
        async with self._liveness_lock:
            now = time.monotonic()
            if now - self._liveness_checked.get(queue, float("-inf")) < LIVENESS_CHECK_S:
                return
            await asyncio.to_thread(self.sync.require_worker, queue)
            self._liveness_checked[queue] = time.monotonic()

    async def _wait_reviewed(self, job_id: str, deadline: float | None, timeout: float | None) -> dict[str, Any]:
        """A job's reviewed result (Job._wait_reviewed, on a pub/sub connection of its
        own: a person's review is rare and slow, and no batch waits for one)."""
        key = CELERY_RESULT_PREFIX + job_id
        pubsub = self._aredis().pubsub(ignore_subscribe_messages=True)
        try:
            await pubsub.subscribe(key)
            reviewed = reviewed_of(await self._aredis().get(key))
            while reviewed is None:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise WaitTimeout(
                        f"job {job_id} was not reviewed within {timeout}s; it may still be: "
                        f"`vetq result {job_id} --until reviewed`"
                    )
                wait_s = LIVENESS_CHECK_S if left is None else min(left, LIVENESS_CHECK_S)
                message = await pubsub.get_message(timeout=wait_s)
                if message is not None and message.get("type") == "message":
                    reviewed = reviewed_of(message.get("data"))
        finally:
            with contextlib.suppress(Exception):
                await pubsub.aclose()
        await self._expire_collected([job_id])
        return reviewed

    def _ensure_tasks(self) -> None:
        if self._pubsub is None:
            self._pubsub = self._aredis().pubsub()
        if self._subscriber is None or self._subscriber.done():
            self._subscriber = asyncio.create_task(self._subscribe_loop(), name="vetq-async-subscribe")
        if self._reader is None or self._reader.done():
            self._reader = asyncio.create_task(self._read_loop(), name="vetq-async-results")

    async def _subscribe_loop(self) -> None:
        """Subscribe the jobs waited for, a chunk per round trip, then read the results
        they already have (stored before the subscription); unsubscribe, in chunks too,
        the jobs nobody waits for any more."""
        while not self._closing:
            await self._wake_subscriber.wait()
            self._wake_subscriber.clear()
            if self._closing:
                return
            done = [job_id for job_id in self._to_unsubscribe if job_id not in self._waiters]
            self._to_unsubscribe.clear()
            done = [job_id for job_id in done if job_id in self._subscribed]
            for start in range(0, len(done), SUBSCRIBE_CHUNK):
                chunk = done[start : start + SUBSCRIBE_CHUNK]
                await self._pubsub.unsubscribe(*[CELERY_RESULT_PREFIX + job_id for job_id in chunk])
                self._subscribed.difference_update(chunk)
                # Waited for again while the unsubscribe was on its way: subscribe again.
                self._to_subscribe.update(job_id for job_id in chunk if job_id in self._waiters)
            while self._to_subscribe:
                chunk = [self._to_subscribe.pop() for _ in range(min(SUBSCRIBE_CHUNK, len(self._to_subscribe)))]
                keys = [CELERY_RESULT_PREFIX + job_id for job_id in chunk]
                await self._pubsub.subscribe(*keys)
                self._subscribed.update(chunk)
                for key, raw in zip(keys, await self._aredis().mget(keys), strict=True):
                    if raw is not None:
                        self._deliver(key, raw)

    async def _read_loop(self) -> None:
        while not self._closing:
            if not self._subscribed:
                await asyncio.sleep(0.05)
                continue
            try:
                message = await self._pubsub.get_message(timeout=1.0)
            except (aioredis.ConnectionError, aioredis.TimeoutError):
                # Redis drops a subscriber that falls too far behind (its output buffer
                # limit): a new connection subscribes every waited job again and reads
                # what landed meanwhile.
                with contextlib.suppress(Exception):
                    await self._pubsub.aclose()
                self._pubsub = self._aredis().pubsub()
                self._to_subscribe.update(self._waiters)
                self._subscribed.clear()
                self._wake_subscriber.set()
                await asyncio.sleep(0.1)
                continue
            if message is not None and message.get("type") == "message":
                self._deliver(message["channel"], message["data"])

    def _deliver(self, channel: Any, raw: Any) -> None:
        name = channel.decode("utf-8") if isinstance(channel, bytes) else str(channel)
        job_id = name[len(CELERY_RESULT_PREFIX) :]
        waiters = self._waiters.get(job_id)
        if not waiters:
            return
        meta = self.sync.app.backend.decode_result(raw)
        if meta.get("status") not in FINAL_STATES:
            return
        for future in waiters:
            if not future.done():
                future.set_result(meta)


def _hand_to(
    landed: asyncio.Queue[tuple[str, dict[str, Any]]], job_id: str, future: asyncio.Future[dict[str, Any]]
) -> None:
    if not future.cancelled():
        landed.put_nowait((job_id, future.result()))
