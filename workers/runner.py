"""Ways to run workers: in a thread of this process (the embedded default and the
tests), in the foreground as `vetq worker`, or as N child processes for `vetq up`."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Sequence

from celery import Celery
from celery.exceptions import WorkerShutdown
from celery.worker import WorkController

from vetq.core.logging import get_logger
from vetq.core.queue import QUEUES
from vetq.core.redis_keys import WEBHOOK_QUEUE
from vetq.workers.app import size_redis_pools
from vetq.workers.tied_processes import popen_tied_to_process

log = get_logger("vetq.worker")


def _hostname(tag: str) -> str:
    return f"vetq-{tag}-{os.getpid()}-{uuid.uuid4().hex[:6]}@{socket.gethostname()}"


def served_queues(queues: Sequence[str]) -> list[str]:
    """The queues a worker consumes: its job queues and the webhook deliveries, which
    every worker serves (workers/webhooks.py)."""
    return list(dict.fromkeys([*queues, WEBHOOK_QUEUE]))


def _warm_shutdown() -> None:
    # Celery's own signal path: the loop raises this, WorkController.start stops.
    raise WorkerShutdown(0)


class ThreadWorker:
    """A real Celery worker consuming in a background thread of this process."""

    def __init__(self, app: Celery, *, queues: Sequence[str] = QUEUES, concurrency: int = 2, pool: str = "threads"):
        self.app = app
        size_redis_pools(app, concurrency)
        self.controller = WorkController(
            app=app,
            hostname=_hostname("inproc"),
            queues=served_queues(queues),
            concurrency=concurrency,
            pool=pool,
            loglevel="WARNING",
            without_heartbeat=True,
            without_mingle=True,
            without_gossip=True,
            ready_callback=self._on_consumer_ready,
        )
        self._ready = threading.Event()
        self.thread = threading.Thread(target=self._run, name="vetq-worker", daemon=True)

    def _on_consumer_ready(self, _consumer: object) -> None:
        # Celery calls this from its event loop once every consumer step (broker
        # connection, task consumer, pidbox) is up. The blueprint's RUN state is not
        # that signal: Celery sets it *before* starting the steps, and stopping then
        # closes connections under a step still reading from them ("Unrecoverable
        # error: AttributeError('NoneType' ... 'readline')").
        self._ready.set()

    def _run(self) -> None:
        try:
            self.controller.start()
        finally:
            self._ready.set()  # a worker that dies while starting must not be waited for

    def start(self, timeout: float = 30.0) -> ThreadWorker:
        self.thread.start()
        if not self._ready.wait(timeout) or not self.thread.is_alive():
            # Stopping a worker that never became ready is the race above; let it
            # finish starting (or dying) first.
            self.stop()
            raise RuntimeError("the in-process worker did not start; see the log above")
        return self

    def stop(self, timeout: float = 15.0) -> None:
        # stop() before the consumer is ready would race its start (see _on_consumer_ready).
        if self.thread.ident is not None:
            self._ready.wait(timeout)
        hub = getattr(self.controller, "hub", None)
        if hub is not None and self.thread.is_alive():
            # Stopping closes the broker connection and clears the transport's set of
            # channels. Done from this thread it races the event loop iterating that set
            # ("Unrecoverable error: RuntimeError('Set changed size during iteration')",
            # seen in CI), so the loop stops itself, in its own thread, as it does on a
            # signal. kombu's hub wakes its loop for a call_soon from another thread.
            hub.call_soon(_warm_shutdown)
            self.thread.join(timeout)
        if self.thread.is_alive():
            self.controller.stop(in_sighandler=False)
            self.thread.join(timeout)

    def __enter__(self) -> ThreadWorker:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def run_foreground(app: Celery, *, queues: Sequence[str], concurrency: int, pool: str, loglevel: str) -> None:
    """`vetq worker`: a normal Celery worker with its own signal handling
    (SIGTERM: warm shutdown, the current job finishes or is given back)."""
    size_redis_pools(app, concurrency)
    worker = app.Worker(
        hostname=_hostname("worker"),
        queues=served_queues(queues),
        concurrency=concurrency,
        pool=pool,
        loglevel=loglevel,
        without_mingle=True,
        without_gossip=True,
        quiet=True,
    )
    worker.start()
    sys.exit(worker.exitcode or 0)


def spawn_worker_process(
    redis_url: str,
    *,
    queues: Sequence[str] = QUEUES,
    concurrency: int = 1,
    pool: str = "prefork",
    extra_env: dict | None = None,
    die_with_parent: bool = False,
) -> subprocess.Popen:
    """`vetq worker` as a child process. `die_with_parent`: the kernel sends it SIGTERM
    (a warm shutdown) when this process dies, even by SIGKILL, so a producer's workers
    never outlive it (workers/tied_processes.py)."""
    env = {**os.environ, "VETQ_REDIS_URL": redis_url, **(extra_env or {})}
    command = [
        sys.executable, "-m", "vetq.api_client.cli", "worker",
        "--queues", ",".join(queues), "--concurrency", str(concurrency), "--pool", pool,
    ]  # fmt: skip
    # A worker's stdout (Celery prints its shutdown notes there) joins our stderr, so a
    # parent whose stdout is data (`vetq up`'s export line, a benchmark's JSON) stays clean.
    popen = popen_tied_to_process if die_with_parent else subprocess.Popen
    return popen(command, env=env, stdin=subprocess.DEVNULL, stdout=sys.stderr.fileno())


def stop_processes(processes: Sequence[subprocess.Popen], timeout: float = 20.0) -> None:
    for process in processes:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + timeout
    for process in processes:
        remaining = max(0.1, deadline - time.monotonic())
        try:
            process.wait(timeout=remaining)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)
