"""The in-process worker (the embedded default, the tests) stops in its own thread.

Stopping closes the broker connection, which clears the Redis transport's set of
channels; done from the caller's thread it raced the event loop iterating that set,
and CI saw the embedded worker die with "Unrecoverable error: RuntimeError('Set
changed size during iteration')" as a CLI command finished."""

from __future__ import annotations

import threading

from kombu.transport.redis import MultiChannelPoller


def test_stop_closes_the_broker_channels_on_the_worker_thread(redis_url, queue_settings, monkeypatch):
    from vetq.workers.app import create_app
    from vetq.workers.runner import ThreadWorker

    closing_threads: list[str] = []
    discard = MultiChannelPoller.discard
    close = MultiChannelPoller.close

    def recording_discard(self, channel):
        closing_threads.append(threading.current_thread().name)
        return discard(self, channel)

    def recording_close(self):
        closing_threads.append(threading.current_thread().name)
        return close(self)

    monkeypatch.setattr(MultiChannelPoller, "discard", recording_discard)
    monkeypatch.setattr(MultiChannelPoller, "close", recording_close)

    worker = ThreadWorker(create_app(queue_settings, redis_url), concurrency=1).start()
    worker.stop()

    assert not worker.thread.is_alive()
    assert closing_threads, "stopping closed no channel at all"
    assert set(closing_threads) == {"vetq-worker"}, closing_threads
    assert worker.controller.exitcode == 0
