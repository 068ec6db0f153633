"""Child processes that end with the process that started them, however it ends
(SIGKILL included): the embedded redis-server and the worker processes a producer
starts for a large batch must never outlive it."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
from concurrent.futures import Future
from typing import Any

__all__ = ["popen_tied_to_process"]


def popen_tied_to_process(command: list[str], **options: Any) -> subprocess.Popen:
    """subprocess.Popen(command, **options) for a child that gets SIGTERM when this
    process dies (Linux; elsewhere a plain Popen)."""
    return _spawner.popen(command, preexec_fn=_death_signal_setter(os.getpid()), **options)


class _Spawner:
    """Forks every tied child from one daemon thread that lives as long as
    the process.

    The orphan guard is PR_SET_PDEATHSIG, and Linux fires it when the *thread* that
    forked the child exits, not the process. A child forked from a short-lived thread
    (the MCP server builds its Client in an anyio worker thread, which anyio ends after
    10 s idle) would be killed under a process still using it. Forking from this thread
    ties the child to the process's life: it ends only when the process does, however
    that happens (SIGKILL included), which a watchdog polling the parent could not
    promise without a process of its own."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._requests: queue.SimpleQueue = queue.SimpleQueue()
        self._thread: threading.Thread | None = None

    def popen(self, command: list[str], **options: Any) -> subprocess.Popen:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():  # first use, or a forked child
                self._requests = queue.SimpleQueue()
                self._thread = threading.Thread(target=self._serve, name="vetq-embedded-spawner", daemon=True)
                self._thread.start()
            requests = self._requests
        future: Future = Future()
        requests.put((future, command, options))
        return future.result()

    def _serve(self) -> None:
        requests = self._requests
        while True:
            future, command, options = requests.get()
            try:
                future.set_result(subprocess.Popen(command, **options))
            except BaseException as exc:  # noqa: BLE001 - handed to the caller
                future.set_exception(exc)


_spawner = _Spawner()


def _death_signal_setter(parent_pid: int) -> Any:
    """A preexec_fn that makes the child get SIGTERM when the vetq process that
    started it dies, even by SIGKILL, so it is never orphaned (Linux;
    see _Spawner for why the forking thread matters). libc is loaded here, in the
    parent: the forked child must not import (another thread may hold the import lock)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        prctl = ctypes.CDLL("libc.so.6", use_errno=True).prctl
    except (OSError, AttributeError):
        return None

    def die_with_parent() -> None:
        prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
        if os.getppid() != parent_pid:  # the parent died before prctl took effect
            os._exit(1)

    return die_with_parent
