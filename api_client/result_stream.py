"""Many jobs' final results as they land, each read and decoded once.

Celery's Redis backend stores a result under `celery-task-meta-<id>` and publishes
the same bytes on the channel of that name. A batch subscribes to its jobs' channels
on one pub/sub connection (SUBSCRIBE takes a chunk of channels per round trip), then
reads the results already stored with one MGET per chunk: a result stored before the
subscription is found by the read, one stored after by its message, and one stored
in between by both (the second is ignored). Nothing is ever re-read: the cost per job
is one channel, one slot in an MGET and one decode, whatever the batch's size. Jobs
can be added while results are read, so a batch is collected while it is still
being submitted.

Redis drops a subscriber whose unread messages pass its output-buffer limit (32 MB
by default): a consumer that falls far behind a fast fleet loses its connection.
The stream then subscribes again on a new connection and reads what was stored
meanwhile, so a lost message costs a read, never a result.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import redis

from vetq.core.redis_keys import CELERY_RESULT_PREFIX

__all__ = ["FINAL_STATES", "ResultStream"]

FINAL_STATES = frozenset({"SUCCESS", "FAILURE", "REVOKED"})
SUBSCRIBE_CHUNK = 1000
# The most results read in one go before handing them out.
DRAIN_MAX = 1000

Item = tuple[str, dict[str, Any]]


class ResultStream:
    """(job id, decoded meta) for each job `add`ed, once its final result is stored.

    `decode` turns stored bytes into the meta dict (the result backend's
    `decode_result`, which rebuilds a failure's exception). `on_idle` is called when
    no result has landed for `idle_s` and then every `idle_every_s` while none does
    (the waiter's check that a worker is alive; it may raise). `on_collected` is
    called with the ids of the results read since its last call, once per read of
    whatever had landed (not once per job), before they are handed out."""

    def __init__(
        self,
        client: redis.Redis,
        *,
        decode: Callable[[bytes], dict[str, Any]],
        on_idle: Callable[[], None] | None = None,
        on_collected: Callable[[list[str]], None] | None = None,
        idle_s: float = 5.0,
        idle_every_s: float = 30.0,
    ) -> None:
        self.client = client
        self.pending: set[str] = set()
        self.decode = decode
        self.on_idle = on_idle
        self.on_collected = on_collected
        self._collected: list[str] = []
        self.idle_s = idle_s
        self.idle_every_s = idle_every_s
        self._pubsub: Any = None
        self._ready: deque[Item] = deque()
        self._last_progress = self._last_idle_check = time.monotonic()

    def add(self, job_ids: Iterable[str]) -> None:
        """Watch more jobs: subscribe to their channels, then read those already done."""
        new = [job_id for job_id in job_ids if job_id not in self.pending]
        self.pending.update(new)
        if self._pubsub is None:
            self._pubsub = self.client.pubsub()
        self._subscribe(new)

    def next(self, wait_s: float) -> Item | None:
        """The next result to land within `wait_s` seconds (0: only one already here)."""
        if not self._ready:
            self._read(time.monotonic() + wait_s)
        if self._collected and self.on_collected is not None:
            collected, self._collected = self._collected, []
            self.on_collected(collected)
        if self._ready:
            self._last_progress = self._last_idle_check = time.monotonic()
            return self._ready.popleft()
        self._check_idle()
        return None

    def _read(self, deadline: float) -> None:
        """Wait until a result lands (or the deadline), then read what has landed with it."""
        while self.pending and len(self._ready) < DRAIN_MAX:
            # Once a result is here, only what has already landed too is read (no wait).
            wait = 0.0 if self._ready else min(max(0.0, deadline - time.monotonic()), 1.0)
            try:
                message = self._pubsub.get_message(timeout=wait)
            except (redis.ConnectionError, redis.TimeoutError):
                self._reconnect()
                continue
            if message is not None:  # a result, or a subscription's confirmation (read, and go on)
                if message.get("type") == "message":
                    self._accept(message["channel"], message["data"])
                continue
            if self._ready or time.monotonic() >= deadline:
                break

    def results(self, timeout: float | None, on_timeout: Callable[[int], BaseException]) -> Iterator[Item]:
        """Every pending job's result. `timeout` bounds the wait for the next result,
        not the whole stream: jobs that keep finishing never time out; when none lands
        for `timeout` seconds, `on_timeout(jobs left)` is raised."""
        try:
            while self.pending or self._ready:
                left = None if timeout is None else self._last_progress + timeout - time.monotonic()
                if left is not None and left <= 0:
                    raise on_timeout(len(self.pending))
                item = self.next(1.0 if left is None else min(1.0, left))
                if item is not None:
                    yield item
        finally:
            self.close()

    def _check_idle(self) -> None:
        now = time.monotonic()
        if self.on_idle is None or not self.pending or now - self._last_progress < self.idle_s:
            return
        if self._last_idle_check == self._last_progress or now - self._last_idle_check >= self.idle_every_s:
            self._last_idle_check = now
            self.on_idle()

    def _subscribe(self, job_ids: list[str]) -> None:
        for start in range(0, len(job_ids), SUBSCRIBE_CHUNK):
            keys = [CELERY_RESULT_PREFIX + job_id for job_id in job_ids[start : start + SUBSCRIBE_CHUNK]]
            self._pubsub.subscribe(*keys)
            for key, raw in zip(keys, self.client.mget(keys), strict=True):
                if raw is not None:
                    self._accept(key, raw)

    def _reconnect(self) -> None:
        """A new connection subscribed to every pending job, and what was stored meanwhile."""
        self.close()
        self._pubsub = self.client.pubsub()
        self._subscribe(sorted(self.pending))

    def _accept(self, channel: Any, raw: Any) -> None:
        name = channel.decode("utf-8") if isinstance(channel, bytes) else str(channel)
        job_id = name[len(CELERY_RESULT_PREFIX) :]
        if job_id not in self.pending:
            return
        meta = self.decode(raw)
        if meta.get("status") not in FINAL_STATES:
            return  # started, retrying, waiting for a provider batch: not yet
        self.pending.discard(job_id)
        self._ready.append((job_id, meta))
        if self.on_collected is not None:
            self._collected.append(job_id)

    def close(self) -> None:
        if self._pubsub is not None:
            try:
                self._pubsub.close()
            except redis.RedisError:
                pass
            self._pubsub = None
