"""A message taken off its queue is recorded as unacknowledged before any worker code
sees it, so a worker killed (or a Redis restarted) right after the pop loses nothing:
the job comes back after the visibility timeout and runs to one result."""

from __future__ import annotations

import time

import pytest
import redis
from kombu import Consumer, Queue

from vetq.core.queue import EXTRACT_QUEUE, TASK_NOOP, celery_config


class WorkerDiedAfterPop(BaseException):
    """Stands for a SIGKILL in the instant after the pop's reply reached the worker."""


def _publish_noop(url, settings):
    from celery import Celery

    producer = Celery("test-producer", set_as_current=False)
    producer.conf.update(celery_config(settings, url))
    job_id = producer.send_task(TASK_NOOP, args=[None], queue=EXTRACT_QUEUE).id
    producer.close()
    return job_id


def _die_on_first_sight(app, store):
    """Consume one message with the worker app's transport, dying as the message
    reaches the worker; `store` gets what Redis held at that instant."""
    connection = app.connection_for_read()
    channel = connection.default_channel
    client = redis.Redis.from_url(app.conf.broker_url)

    def deliver(message, queue):
        tag = message["properties"]["delivery_tag"]
        store["in_queue"] = client.llen(EXTRACT_QUEUE)
        store["unacked"] = client.hexists("unacked", tag)
        raise WorkerDiedAfterPop()

    channel.connection._deliver = deliver
    Consumer(channel, queues=[Queue(EXTRACT_QUEUE)], accept=["json"], callbacks=[lambda *a: None]).consume()
    deadline = time.monotonic() + 10
    with pytest.raises(WorkerDiedAfterPop):
        while time.monotonic() < deadline:
            try:
                connection.drain_events(timeout=1)
            except TimeoutError:
                continue
    # The worker is gone: its socket closes without an ack or a restore.
    channel.client.connection.disconnect()


def test_a_popped_message_is_already_recorded_as_unacked(redis_url, queue_settings):
    from vetq.workers.app import create_app

    _publish_noop(redis_url, queue_settings)
    store: dict = {}
    _die_on_first_sight(create_app(queue_settings, redis_url), store)
    assert store == {"in_queue": 0, "unacked": True}


def test_a_job_whose_worker_died_after_the_pop_still_runs_once(redis_url, tmp_path):
    from celery.result import AsyncResult

    from vetq.core.settings import load_settings
    from vetq.workers.app import create_app
    from vetq.workers.runner import ThreadWorker

    # The shortest redelivery the settings allow: the restore comes after ~visibility.
    settings = load_settings(home=tmp_path / "home", task_time_limit_s=10, visibility_timeout_s=14)
    job_id = _publish_noop(redis_url, settings)
    _die_on_first_sight(create_app(settings, redis_url), {})

    app = create_app(settings, redis_url)
    with ThreadWorker(app, concurrency=1):
        result = AsyncResult(job_id, app=app)
        deadline = time.monotonic() + 60
        while not result.ready() and time.monotonic() < deadline:
            time.sleep(0.25)
        assert result.ready(), "the job of the dead worker was never given back"
        assert result.result == {"format": 2, "status": "ok"}
    client = redis.Redis.from_url(redis_url)
    assert client.llen(EXTRACT_QUEUE) == 0 and client.hlen("unacked") == 0


def _hset_calls(client) -> int:
    return int(client.info("commandstats").get("cmdstat_hset", {}).get("calls", 0))


def test_a_delivered_message_is_recorded_once_and_stays_unacked_until_its_ack(redis_url, queue_settings):
    """The pop script's record is the only write before the job runs (kombu's second
    write is skipped), the record holds until the ack, and the ack removes it."""
    from kombu.transport.virtual import Message

    from vetq.workers.app import create_app

    _publish_noop(redis_url, queue_settings)
    app = create_app(queue_settings, redis_url)
    connection = app.connection_for_read()
    channel = connection.default_channel
    client = redis.Redis.from_url(redis_url)
    seen: dict = {}

    def on_message(body, message):
        seen["hset_calls"] = _hset_calls(client) - before
        seen["unacked_while_running"] = client.hexists("unacked", message.delivery_tag)
        message.ack()
        seen["unacked_after_ack"] = client.hexists("unacked", message.delivery_tag)

    before = _hset_calls(client)
    Consumer(channel, queues=[Queue(EXTRACT_QUEUE)], accept=["json"], callbacks=[on_message]).consume()
    deadline = time.monotonic() + 10
    while not seen and time.monotonic() < deadline:
        try:
            connection.drain_events(timeout=1)
        except TimeoutError:
            continue
    assert seen == {"hset_calls": 1, "unacked_while_running": True, "unacked_after_ack": False}

    # A message the script could not have recorded (its tag not a string) is written by kombu.
    info = {"exchange": "", "routing_key": EXTRACT_QUEUE}
    payload = {"body": "", "properties": {"delivery_tag": 7, "delivery_info": info}, "headers": {}}
    channel.qos.append(Message(payload, channel=channel), 7)
    assert client.hexists("unacked", 7)
    connection.release()
