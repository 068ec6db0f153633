"""`vetq metrics serve`: the fleet's gauges, read from Redis when Prometheus scrapes.

A worker's /metrics (workers/metrics.py) counts what that worker did; what the fleet
holds (queues, live workers, dead letters, parked bulk jobs, provider batches) lives
in Redis and is read here, at scrape time, by one custom collector: a few reads in
one pipelined round trip. The worker probe (Admin.workers, a broadcast that waits its
whole timeout for replies) and the count of parked jobs (a SCAN: parked jobs have no
index) are the two slow reads: each is cached (PROBE_EVERY_S, PARKED_EVERY_S), so most
scrapes cost one round trip. Key names are core/redis_keys.py's; no value read is a
job id or document text, and no label is one."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from vetq.core.logging import get_logger
from vetq.core.queue import PRIORITY_LEVELS, QUEUES, priority_keys
from vetq.core.redis_keys import (
    BULK_MODELS_KEY,
    BULK_OPEN_KEY,
    BULK_SUBMISSIONS_KEY,
    BULK_WAKE_KEY,
    DEAD_LETTER_KEY,
    KOMBU_UNACKED_KEY,
    WEBHOOK_QUEUE,
    bulk_batch_key,
    bulk_job_key,
    bulk_pending_key,
    fair_queue_keys,
)

log = get_logger("vetq.metrics")

PROBE_TIMEOUT_S = 1.0
PROBE_EVERY_S = 15.0
PARKED_EVERY_S = 60.0
DEFAULT_PORT = 9465


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class FleetCollector:
    """A prometheus_client collector over one vetq Redis. `workers` is the live-worker
    probe (Admin.workers: host -> queues)."""

    def __init__(
        self,
        redis_client: Any,
        workers: Callable[[float], dict[str, list[str]]],
        *,
        probe_timeout_s: float = PROBE_TIMEOUT_S,
        probe_every_s: float = PROBE_EVERY_S,
        parked_every_s: float = PARKED_EVERY_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.redis = redis_client
        self.workers = workers
        self.probe_timeout_s = probe_timeout_s
        self.probe_every_s = probe_every_s
        self.parked_every_s = parked_every_s
        self.clock = clock
        self._lock = threading.Lock()
        self._alive: dict[str, int] | None = None
        self._alive_at = -float("inf")
        self._parked: int | None = None
        self._parked_at = -float("inf")

    def describe(self) -> Iterator[Any]:
        return iter(self._families())

    def _families(self) -> list[Any]:
        from prometheus_client.core import GaugeMetricFamily

        return [
            GaugeMetricFamily("vetq_fleet_up", "1 when Redis answered this scrape, else 0"),
            GaugeMetricFamily(
                "vetq_queue_depth",
                "Messages waiting in a queue (extract, review, webhook), by priority",
                labels=["queue", "priority"],
            ),
            GaugeMetricFamily(
                "vetq_workers_alive", "Live workers consuming a queue (a cached probe)", labels=["queue"]
            ),
            GaugeMetricFamily("vetq_dead_letters", "Entries in the dead-letter list (vetq dead list)"),
            GaugeMetricFamily(
                "vetq_unacked_messages",
                "Messages a worker holds unacknowledged: running, or scheduled (a requeued job's countdown)",
            ),
            GaugeMetricFamily("vetq_bulk_parked_jobs", "Bulk jobs parked until their provider batch answers"),
            GaugeMetricFamily("vetq_bulk_jobs_to_wake", "Parked bulk jobs answered and waiting to be queued again"),
            GaugeMetricFamily(
                "vetq_bulk_pending_requests",
                "Bulk-lane requests waiting for a provider batch, by provider:model",
                labels=["model"],
            ),
            GaugeMetricFamily(
                "vetq_bulk_batches",
                "Open provider batches of the bulk lane, by state (submitting: being created)",
                labels=["state"],
            ),
        ]

    def collect(self) -> Iterator[Any]:
        families = self._families()
        by_name = {family.name: family for family in families}
        try:
            self._read(by_name)
            by_name["vetq_fleet_up"].add_metric([], 1)
        except Exception as exc:  # noqa: BLE001 - a scrape reports Redis gone, it does not fail
            log.warning("fleet_metrics_unavailable", error=type(exc).__name__)
            families = [by_name["vetq_fleet_up"]]
            families[0].add_metric([], 0)
        return iter(families)

    def _read(self, out: dict[str, Any]) -> None:
        pipe = self.redis.pipeline(transaction=False)
        lists = [
            (queue, level, key)
            for queue in (*QUEUES, WEBHOOK_QUEUE)  # the webhook deliveries waiting too
            for level, key in zip(PRIORITY_LEVELS, priority_keys(queue), strict=True)
        ]
        for _queue, _level, key in lists:
            pipe.llen(key)
        for _queue, _level, key in lists:  # the tenants whose messages the fair pop set aside
            pipe.zrange(fair_queue_keys(key)[0], 0, -1)
        pipe.llen(DEAD_LETTER_KEY)
        pipe.hlen(KOMBU_UNACKED_KEY)
        pipe.llen(BULK_WAKE_KEY)
        pipe.smembers(BULK_MODELS_KEY)
        pipe.zrange(BULK_OPEN_KEY, 0, -1)
        pipe.zcard(BULK_SUBMISSIONS_KEY)
        replies = pipe.execute()
        depths, aside = list(replies[: len(lists)]), replies[len(lists) : 2 * len(lists)]
        dead, unacked, wake, models, open_batches, submitting = replies[2 * len(lists) :]
        models = sorted(_text(m) for m in models)
        open_batches = [_text(b) for b in open_batches]
        set_aside = [
            (index, fair_queue_keys(key)[2] + _text(tenant))
            for index, ((_queue, _level, key), tenants) in enumerate(zip(lists, aside, strict=True))
            for tenant in tenants
        ]
        pipe = self.redis.pipeline(transaction=False)
        for model in models:
            pipe.zcard(bulk_pending_key(model))
        for batch in open_batches:
            pipe.hget(bulk_batch_key(batch), "state")
        for _, key in set_aside:
            pipe.llen(key)
        more = pipe.execute() if models or open_batches or set_aside else []
        pending, states = more[: len(models)], more[len(models) : len(models) + len(open_batches)]
        for (index, _), length in zip(set_aside, more[len(models) + len(open_batches) :], strict=True):
            depths[index] += int(length)

        for (queue, level, _key), depth in zip(lists, depths, strict=True):
            out["vetq_queue_depth"].add_metric([queue, level], int(depth))
        alive = self._workers_alive()
        for queue in QUEUES:
            out["vetq_workers_alive"].add_metric([queue], alive.get(queue, 0))
        out["vetq_dead_letters"].add_metric([], int(dead))
        out["vetq_unacked_messages"].add_metric([], int(unacked))
        out["vetq_bulk_jobs_to_wake"].add_metric([], int(wake))
        out["vetq_bulk_parked_jobs"].add_metric([], self._parked_jobs())
        for model, count in zip(models, pending, strict=True):
            out["vetq_bulk_pending_requests"].add_metric([model], int(count))
        # A submission claimed and not yet recorded: its batch is being created (or recovered).
        by_state: dict[str, int] = {"submitting": int(submitting)} if submitting else {}
        for state in states:
            name = _text(state) if state is not None else "unknown"
            by_state[name] = by_state.get(name, 0) + 1
        for state, count in sorted(by_state.items()):
            out["vetq_bulk_batches"].add_metric([state], count)

    def _workers_alive(self) -> dict[str, int]:
        with self._lock:
            if self._alive is None or self.clock() - self._alive_at >= self.probe_every_s:
                counts: dict[str, int] = {}
                for queues in self.workers(self.probe_timeout_s).values():
                    for queue in set(queues):
                        counts[queue] = counts.get(queue, 0) + 1
                self._alive, self._alive_at = counts, self.clock()
            return self._alive

    def _parked_jobs(self) -> int:
        with self._lock:
            if self._parked is None or self.clock() - self._parked_at >= self.parked_every_s:
                pattern = bulk_job_key("*")
                self._parked = sum(1 for _ in self.redis.scan_iter(match=pattern, count=1000))
                self._parked_at = self.clock()
            return self._parked


def serve(redis_url: str, settings: Any, *, port: int, address: str, stop: threading.Event | None = None) -> None:
    """Serve the fleet's gauges on address:port until `stop` is set (or for ever)."""
    from prometheus_client import CollectorRegistry, start_http_server

    from vetq.api_client.admin import Admin
    from vetq.api_client.client import Client

    client = Client(redis_url, settings=settings)
    try:
        registry = CollectorRegistry(auto_describe=False)
        registry.register(FleetCollector(client.redis(), Admin.of(client).workers))
        server, _thread = start_http_server(port, addr=address, registry=registry)
        log.info("fleet_metrics_serving", address=address, port=port)
        try:
            (stop or threading.Event()).wait()
        finally:
            server.shutdown()
    finally:
        client.close()
