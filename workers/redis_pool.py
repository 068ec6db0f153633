"""The Redis connection pools of a worker process, sized to its concurrency.

A worker runs up to `--concurrency` jobs at once (threads, with `--pool threads`), and
every job thread talks to Redis: the call gate (cache, budget ledger, rate limiter),
dead letters and telemetry on the worker's pool, and Celery's result backend and
kombu's broker channel (the ack) on their own. redis-py's default pool (8.x) holds at most
100 connections and raises `MaxConnectionsError` past that at once; 250 threads met
it hundreds of times a run, and a job whose gate met it was put back on its queue as
if Redis were down, paying its Generator call again (issue 16).

So:

* the worker's pool is a blocking pool (`WorkerConnectionPool`) of `concurrency +
  POOL_SPARE` connections: a thread waits for a free connection instead of failing;
  connections are opened on demand, so a large pool costs nothing until it is used;
* Celery's result backend (`redis_max_connections`) and kombu's broker channels
  (`broker_transport_options.max_connections`) get the same size (`size_redis_pools`,
  called before a worker starts);
* a thread that waits `POOL_WAIT_S` without a connection gets
  `RedisPoolExhaustedError`, logged `redis_pool_exhausted`. It is not a
  `redis.RedisError`: Redis answered, the worker is short of connections, and nothing
  treats it as an outage (no requeue that would pay for the job's calls again). A job
  meeting it ends with an INTERNAL_ERROR envelope. `MaxConnectionsError` from any
  other pool is read the same way (`POOL_EXHAUSTED`).
"""

from __future__ import annotations

import os
import queue
from typing import Any

import redis

from vetq.core.logging import get_logger

__all__ = [
    "POOL_EXHAUSTED",
    "POOL_SPARE",
    "POOL_WAIT_S",
    "RedisPoolExhaustedError",
    "WorkerConnectionPool",
    "exhaustion_message",
    "log_exhaustion",
    "redis_pool_size",
    "worker_redis",
]

log = get_logger("vetq.worker")

# Connections beyond one per job thread: the bulk coordinator's thread, dead letters
# written from the consumer's thread, a pipeline's own.
POOL_SPARE = 8
# How long a thread waits for a free connection before that is an error. With the pool
# sized to the threads this is never reached; it bounds a leak, not a busy moment.
POOL_WAIT_S = 30.0


class RedisPoolExhaustedError(Exception):
    """No connection of a worker's Redis pool came free in time. Redis is not down:
    deliberately not a redis.RedisError, so no outage handler requeues the job."""

    def __init__(self, max_connections: int, waited_s: float | None) -> None:
        # args are the constructor's, so the error rebuilds from them (pickle, Celery).
        super().__init__(max_connections, waited_s)
        self.max_connections = max_connections
        self.waited_s = waited_s

    @property
    def message(self) -> str:
        return (
            f"no connection of the worker's Redis pool ({self.max_connections} connections) came free within "
            f"{self.waited_s}s: the worker runs more threads than its pool holds, or a connection is held too long"
        )

    def __str__(self) -> str:
        return self.message


# Pool exhaustion of every kind: ours, and redis-py's own non-blocking pools (5.x and
# later raise MaxConnectionsError, a ConnectionError, which must not read as an outage).
POOL_EXHAUSTED: tuple[type[Exception], ...] = (RedisPoolExhaustedError,) + (
    (redis.exceptions.MaxConnectionsError,) if hasattr(redis.exceptions, "MaxConnectionsError") else ()
)


def exhaustion_message(exc: BaseException) -> str:
    """What a job that met pool exhaustion says in its error envelope."""
    detail = exc.message if isinstance(exc, RedisPoolExhaustedError) else f"{type(exc).__name__}: {exc}"
    return f"the worker ran out of Redis connections ({detail}); the job was not put back, so nothing is paid twice"


def log_exhaustion(exc: BaseException, **context: Any) -> None:
    """Log pool exhaustion where it is handled, once: our pool logs when it raises."""
    if not isinstance(exc, RedisPoolExhaustedError):
        log.error("redis_pool_exhausted", error=type(exc).__name__, **context)


class _Slots(queue.LifoQueue):
    """The blocking pool's queue of connections (None: a slot not yet connected). Its
    timed-out wait is the pool's only way to run out; it raises our error, where
    redis-py's raises a ConnectionError indistinguishable from a refused connect."""

    def get(self, block: bool = True, timeout: float | None = None) -> Any:
        try:
            return super().get(block, timeout)
        except queue.Empty:
            log.error("redis_pool_exhausted", max_connections=self.maxsize, waited_s=timeout)
            raise RedisPoolExhaustedError(self.maxsize, timeout) from None


class WorkerConnectionPool(redis.BlockingConnectionPool):
    """redis-py's BlockingConnectionPool, with exhaustion as RedisPoolExhaustedError
    and a pool that can grow (before a worker starts, to its concurrency)."""

    def __init__(self, max_connections: int = 50, timeout: float | None = POOL_WAIT_S, **kwargs: Any) -> None:
        kwargs.pop("queue_class", None)
        super().__init__(max_connections=max_connections, timeout=timeout, queue_class=_Slots, **kwargs)

    def grow(self, max_connections: int) -> None:
        """Hold up to `max_connections` (never fewer than now)."""
        with self._lock:
            extra = int(max_connections) - self.max_connections
            if extra <= 0:
                return
            self.max_connections = int(max_connections)
            slots = self.pool
            with slots.mutex:
                slots.maxsize = self.max_connections
            for _ in range(extra):
                slots.put_nowait(None)


def redis_pool_size(concurrency: int | None) -> int:
    """Connections a worker running `concurrency` jobs at once needs from each pool."""
    return max(1, int(concurrency or os.cpu_count() or 1)) + POOL_SPARE


def worker_redis(redis_url: str, *, max_connections: int, timeout: float | None = POOL_WAIT_S) -> redis.Redis:
    """A client on a WorkerConnectionPool for `redis_url` (redis://, rediss://, unix://)."""
    pool = WorkerConnectionPool.from_url(redis_url, max_connections=max_connections, timeout=timeout)
    return redis.Redis(connection_pool=pool)
