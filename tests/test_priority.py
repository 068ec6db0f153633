"""Priorities (README, Priorities): a job's `priority` picks its queue's high, normal or
low list, and the workers' pop serves the lists by weight (6:3:1 while all have work),
with the turn kept in Redis for the whole fleet. High jobs start first under a
backlog; low jobs still start while high ones keep coming; a job put back on its
queue (a requeue, a wake from the bulk lane, a dead worker's restore) keeps its list."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
import redis

from tests.conftest import GLOBEX, GLOBEX_DATA, Service, model_settings
from vetq.core.job_options import Priority
from vetq.core.queue import (
    EXTRACT_QUEUE,
    PRIORITY_HEADER,
    PRIORITY_LEVELS,
    PRIORITY_SCHEDULE,
    PRIORITY_STEPS,
    PRIORITY_WEIGHTS,
    TASK_NOOP,
    priority_keys,
    priority_step,
)

VALIDATION = {"kind": "validate", "text": GLOBEX, "data": GLOBEX_DATA, "heuristics_only": True}


def test_the_schedule_gives_each_level_its_weight_and_a_bounded_wait():
    assert set(PRIORITY_WEIGHTS) == set(PRIORITY_LEVELS) == {p.value for p in Priority}
    assert Counter(PRIORITY_SCHEDULE) == PRIORITY_WEIGHTS
    # The longest run of turns between two of a level's, round the cycle: what a job at
    # the head of its list may wait while every level has work (README's figures).
    cycle = PRIORITY_SCHEDULE * 2
    longest = {
        level: max(
            next(j for j in range(i + 1, len(cycle)) if cycle[j] == level) - i
            for i in range(len(PRIORITY_SCHEDULE))
            if cycle[i] == level
        )
        for level in PRIORITY_LEVELS
    }
    assert longest == {"high": 2, "normal": 4, "low": 10}
    assert PRIORITY_SCHEDULE[0] == "high"
    assert [priority_step(v) for v in ("high", "normal", "low", None, "urgent", 3)] == [3, 0, 9, 0, 0, 0]


@pytest.fixture
def started() -> Iterator[list[tuple[str, Any, Any]]]:
    """(job id, priority header, kombu priority) of every job a worker in this process
    starts, in the order they start (Celery's task_prerun, in the worker's thread)."""
    from celery.signals import task_prerun

    from vetq.workers.tasks import header

    order: list[tuple[str, Any, Any]] = []

    def note(task_id: str | None = None, task: Any = None, **_: Any) -> None:
        delivery = getattr(task.request, "delivery_info", None) or {}
        order.append((str(task_id), header(task, PRIORITY_HEADER), delivery.get("priority")))

    task_prerun.connect(note, weak=False)
    yield order
    task_prerun.disconnect(note)


def run_one_worker(redis_url: str, settings: Any, until: Any) -> None:
    """A worker of concurrency 1 (prefetch 1: it takes its next job when one ends, so
    start order is pop order), stopped once `until()` has its results."""
    from vetq.workers.app import create_app
    from vetq.workers.runner import ThreadWorker

    with ThreadWorker(create_app(settings, redis_url), concurrency=1):
        until()


@pytest.mark.processes
def test_under_a_backlog_high_jobs_start_first_and_low_ones_get_their_share(redis_url, queue_settings, started):
    from vetq.api_client.client import Client

    with Client(redis_url, settings=queue_settings) as client:
        # Queued with no worker, low first: in arrival order low would start first.
        batches = {level: client.submit_batch([VALIDATION] * 10, priority=level) for level in ("low", "normal", "high")}
        r = redis.Redis.from_url(redis_url)
        assert [r.llen(key) for key in priority_keys(EXTRACT_QUEUE)] == [10, 10, 10]
        level_of = {job.id: level for level, batch in batches.items() for job in batch.jobs}
        results: list[dict] = []
        run_one_worker(
            redis_url, queue_settings, lambda: results.extend(r for b in batches.values() for r in b.results(60))
        )
    assert [result["status"] for result in results] == ["ok"] * 30  # every low job ran too
    levels = [level_of[job_id] for job_id, _header, _step in started]
    assert len(levels) == 30 and levels[0] == "high"
    assert Counter(levels[:10]) == {"high": 6, "normal": 3, "low": 1}  # the share while all wait
    second_low = [i for i, level in enumerate(levels) if level == "low"][1]
    assert levels[:second_low].count("high") == 10  # every high job before the second low one
    assert all(step == PRIORITY_STEPS[level] for (_id, _h, step), level in zip(started, levels, strict=True))


@pytest.mark.processes
def test_low_jobs_start_while_high_ones_keep_coming(redis_url, queue_settings, started):
    """A steady stream: every job that starts sends a high one, so high jobs are always
    waiting; the low ones still start, one in every 10 starts."""
    from celery.signals import task_prerun

    from vetq.api_client.client import Client

    with Client(redis_url, settings=queue_settings) as client:
        lows = client.submit_batch([VALIDATION] * 3, priority="low")
        highs = [client.submit_validation(GLOBEX, GLOBEX_DATA, heuristics_only=True, priority="high") for _ in range(3)]
        sent_before: list[int] = []  # high jobs sent before each start

        def keep_high_coming(**_: Any) -> None:
            sent_before.append(len(highs))
            highs.append(client.submit_validation(GLOBEX, GLOBEX_DATA, heuristics_only=True, priority="high"))

        task_prerun.connect(keep_high_coming, weak=False)
        try:
            run_one_worker(redis_url, queue_settings, lambda: lows.results(60))
        finally:
            task_prerun.disconnect(keep_high_coming)
    low_ids = {job.id for job in lows.jobs}
    low_starts = [i for i, (job_id, _h, _s) in enumerate(started) if job_id in low_ids]
    assert len(low_starts) == 3
    assert all(position < 10 * (k + 1) for k, position in enumerate(low_starts)), low_starts
    # Each low job started while high ones waited, not once they ran out.
    for position in low_starts:
        high_started = sum(1 for job_id, _h, _s in started[:position] if job_id not in low_ids)
        assert sent_before[position] > high_started, (position, sent_before, high_started)


@pytest.mark.processes
def test_a_requeued_high_job_goes_back_to_the_high_list(fake, redis_url, queue_settings, started):
    # A 429 longer than the gate sleeps in place: the job is put back on its queue.
    fake.push_fault({"kind": "429", "retry_after": 1}, model="fake-generator")
    svc = Service(model_settings(queue_settings, max_sleep_s=0.2), redis_url, concurrency=1)
    try:
        job = svc.client.submit_extraction(GLOBEX, priority="high")
        assert job.result(timeout=60)["status"] == "ok"
    finally:
        svc.close()
    runs = [(h, step) for job_id, h, step in started if job_id == job.id]
    assert runs == [("high", PRIORITY_STEPS["high"])] * 2  # sent high, and requeued high


@pytest.mark.processes
def test_a_woken_bulk_job_and_a_dead_workers_job_go_back_to_their_lists(redis_url, queue_settings):
    from tests.test_reliable_delivery import _die_on_first_sight
    from vetq.workers.app import create_app
    from vetq.workers.bulk_store import ParkedJob

    app = create_app(queue_settings, redis_url)
    r = redis.Redis.from_url(redis_url)
    high, normal, low = priority_keys(EXTRACT_QUEUE)
    parked = {"task": TASK_NOOP, "queue": EXTRACT_QUEUE, "payload": "null"}
    app.conf.vetq_context.publish_parked(app, ParkedJob("woken-low", {**parked, "headers": '{"vetq_priority": "low"}'}))
    app.conf.vetq_context.publish_parked(app, ParkedJob("woken-normal", {**parked, "headers": "{}"}))
    assert (r.llen(high), r.llen(normal), r.llen(low)) == (0, 1, 1)
    assert json.loads(r.lindex(low, 0))["headers"]["id"] == "woken-low"

    # The worker's pop records the low job as unacked; kombu's restore of a dead
    # worker's message puts it back on the low list, where the next pop finds it.
    r.delete(normal)
    _die_on_first_sight(app, {})
    (tag,) = r.hkeys("unacked")
    assert r.llen(low) == 0
    app.connection_for_read().default_channel.qos.restore_by_tag(tag.decode())
    assert (r.llen(low), r.hlen("unacked")) == (1, 0)
