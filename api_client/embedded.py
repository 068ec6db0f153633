"""The embedded default for producers: vetq's own Redis plus, unless `vetq up`
already serves it, a worker for as long as this process runs: a thread worker inside
it, and worker processes (its children) once a batch is large enough to matter.

This is the one place api_client reaches into workers/, lazily, and only when no
VETQ_REDIS_URL is set: a producer pointed at a real Redis never imports worker code."""

from __future__ import annotations

import os
import subprocess
import threading
import time
from typing import Any

from vetq.core.errors import ConfigError
from vetq.core.logging import get_logger
from vetq.core.settings import VetqSettings

log = get_logger("vetq.embedded")
# How long new worker processes may take to answer before the thread worker hands over.
PROCESS_START_S = 60.0


class EmbeddedService:
    """The embedded Redis and its worker: 2 threads in this process to begin with;
    `scale_for` moves a large batch's work to worker processes, one per CPU (a thread
    worker shares this process's CPU and GIL with the producer submitting and
    collecting: 0.65x the throughput of two processes on 2 cores)."""

    def __init__(self, settings: VetqSettings, *, concurrency: int = 2) -> None:
        self.settings = settings
        self.concurrency = concurrency
        self.redis: Any = None
        self.worker: Any = None
        self.processes: list[subprocess.Popen] = []
        self.redis_url: str | None = None
        self._lock = threading.Lock()
        self._handover: threading.Thread | None = None
        self._stopping = threading.Event()

    @property
    def runs_workers(self) -> bool:
        """Whether this process runs the workers (so they stop when it does)."""
        return self.worker is not None or bool(self.processes)

    def start(self) -> EmbeddedService:
        from vetq.workers.app import UnsafeSettingsError, create_app
        from vetq.workers.embedded_redis import EmbeddedRedis
        from vetq.workers.runner import ThreadWorker

        self.redis = EmbeddedRedis(self.settings.home, role="cli").start()
        self.redis_url = self.redis.url
        if self.redis.attached_role == "up":
            log.info("embedded_using_running_service", url=self.redis.safe_url)
            return self
        try:
            app = create_app(self.settings, self.redis_url)
            self.worker = ThreadWorker(app, concurrency=self.concurrency).start()
        except UnsafeSettingsError as exc:
            self.redis.stop()
            raise ConfigError(str(exc)) from None
        except BaseException:
            self.redis.stop()
            raise
        return self

    def scale_for(self, jobs: int) -> None:
        """A batch has reached `jobs` jobs: from VETQ_EMBEDDED_PROCESSES_FROM on, start
        worker processes (threads each, as many as the thread worker had, so calls in
        flight do not drop) and stop the thread worker once they answer."""
        threshold = self.settings.embedded_processes_from
        if not threshold or jobs < threshold or self.worker is None or self.processes:
            return
        from vetq.core.settings import as_environment, variable_of
        from vetq.workers.runner import spawn_worker_process

        with self._lock:
            if self.processes or self.worker is None:
                return
            count = max(1, os.cpu_count() or 1)
            environment = as_environment(self.settings)
            # A client's private workers serve no metrics: N of them would want one port.
            environment[variable_of("metrics_port")] = ""
            self.processes = [
                spawn_worker_process(
                    self.redis.live_url,
                    pool="threads",
                    concurrency=self.concurrency,
                    extra_env=environment,
                    die_with_parent=True,
                )
                for _ in range(count)
            ]
            log.info("embedded_worker_processes_started", processes=count, batch_jobs=jobs)
            self._handover = threading.Thread(target=self._hand_over, name="vetq-handover", daemon=True)
            self._handover.start()

    def _hand_over(self) -> None:
        """Stop the thread worker once the processes answer a ping (it finishes the jobs
        it holds; those it had only reserved go back to the queue). If they never
        answer, it keeps working."""
        from vetq.api_client.client import live_workers

        worker = self.worker
        if worker is None:
            return
        deadline = time.monotonic() + PROCESS_START_S
        while (
            time.monotonic() < deadline
            and not self._stopping.is_set()
            and all(p.poll() is None for p in self.processes)
        ):
            try:
                if len(live_workers(worker.app, timeout=1.0)) > len(self.processes):
                    break
            except Exception as exc:  # noqa: BLE001 - a failed probe is asked again
                log.warning("embedded_worker_probe_failed", error=type(exc).__name__)
            time.sleep(0.5)
        else:
            log.warning("embedded_worker_processes_not_ready", keeping="the in-process worker")
            return
        with self._lock:
            if self.worker is worker:
                self.worker = None
                worker.stop()

    def stop(self) -> None:
        from vetq.workers.runner import stop_processes

        self._stopping.set()
        if self._handover is not None:
            self._handover.join()
        with self._lock:
            if self.processes:
                stop_processes(self.processes)
                self.processes = []
            if self.worker is not None:
                self.worker.stop()
                self.worker = None
        if self.redis is not None:
            self.redis.stop()
            self.redis = None
