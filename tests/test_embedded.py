"""The embedded default stays up and stays private: its Redis belongs to the process
(not to the thread that happened to start it), `vetq up` supervises it, every home
has its own password and private files, and a short embedded command ends cleanly.

Every process here is started by the test and ended by its id; every wait is bounded."""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis
from conftest import wait_until

from tests.conftest import GLOBEX, GLOBEX_DATA
from tests.test_mcp import McpServer, _server_env, payload

REPO = Path(__file__).resolve().parents[1]
VETQ = [sys.executable, "-m", "vetq.api_client.cli"]


def _cli_env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("VETQ_")}
    env.update({"VETQ_HOME": str(home), "PYTHONPATH": str(REPO), "PYTHONUNBUFFERED": "1", **extra})
    return env


# --------------------------------------------------------------------- item 7: MCP idle


@pytest.mark.processes
def test_embedded_redis_outlives_the_thread_that_started_it(tmp_path):
    import threading

    from vetq.workers.embedded_redis import EmbeddedRedis

    started: list[EmbeddedRedis] = []
    thread = threading.Thread(target=lambda: started.append(EmbeddedRedis(tmp_path / "home", role="tests").start()))
    thread.start()
    thread.join(30)
    [server] = started
    try:
        time.sleep(1.0)  # a death signal tied to the thread would have ended the server by now
        assert server.process.poll() is None
        assert redis.Redis.from_url(server.url, socket_timeout=5).ping()
    finally:
        server.stop()


@pytest.mark.processes
def test_mcp_embedded_service_outlives_anyio_idle_worker_threads(tmp_path):
    import asyncio

    from anyio._backends._asyncio import WorkerThread

    srv = McpServer(_server_env(tmp_path), tmp_path / "stderr.log").start()
    arguments = {"text": GLOBEX, "data": dict(GLOBEX_DATA), "heuristics_only": True}

    def burst(count: int) -> list:
        # Concurrent calls run on several anyio worker threads; the thread that built
        # the Client (and so started the embedded Redis) is then one idle thread among
        # several, and anyio ends every idle thread but the newest after MAX_IDLE_TIME.
        async def calls(session):
            return await asyncio.gather(*(session.call_tool("validate", arguments) for _ in range(count)))

        return srv.run(calls)

    try:
        first = srv.call("validate", arguments)
        assert first.is_error is False, srv.stderr()[-2000:]
        for _ in range(2):
            for result in burst(6):
                assert result.is_error is False, srv.stderr()[-2000:]
            time.sleep(WorkerThread.MAX_IDLE_TIME + 3)
            again = srv.call("validate", arguments)
            assert again.is_error is False, srv.stderr()[-2000:]
            assert payload(again)["status"] == "ok", payload(again)
    finally:
        srv.stop()


# --------------------------------------------------------------------- item 9: private


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _raw_command(port: int, command: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(command)
        return sock.recv(200)


@pytest.mark.processes
def test_embedded_home_is_private_and_needs_its_password(tmp_path):
    from vetq.workers.embedded_redis import EmbeddedRedis

    home = tmp_path / "home"
    old_umask = os.umask(0o022)  # the usual umask, under which the old files were 0644
    try:
        with EmbeddedRedis(home, role="tests") as server:
            redis.Redis.from_url(server.url).set("probe", "x")  # so the append-only file has content
            time.sleep(1.2)  # appendfsync everysec
            password = (home / "embedded.password").read_text().strip()
            assert len(password) >= 32 and f":{password}@" in server.url
            assert _mode(home / "redis") == 0o700
            for name in ("embedded.password", "embedded.json", "embedded.lock"):
                assert _mode(home / name) == 0o600, name
            written = [p for p in (home / "redis").rglob("*") if p.is_file()]
            assert any("appendonly" in p.name for p in written), written
            for path in written:
                assert _mode(path) == 0o600, path
            # The state file names the server but does not carry the password.
            assert password not in (home / "embedded.json").read_text()
            # A connection without the password is refused.
            assert _raw_command(server.port, b"PING\r\n").startswith(b"-NOAUTH")
            assert _raw_command(server.port, b"AUTH " + password.encode() + b"\r\nPING\r\n").startswith(b"+OK")
    finally:
        os.umask(old_umask)


@pytest.mark.processes
def test_a_home_from_an_older_vetq_is_tightened(tmp_path):
    from vetq.workers.embedded_redis import EmbeddedRedis

    home = tmp_path / "home"
    data = home / "redis"
    data.mkdir(parents=True)
    (data / "appendonly.aof").write_text("*1\r\n$4\r\nPING\r\n")
    (data / "redis.log").write_text("")
    (home / "embedded.lock").write_text("")
    (home / "embedded.json").write_text("{}")
    for path in (data / "appendonly.aof", data / "redis.log", home / "embedded.lock", home / "embedded.json"):
        os.chmod(path, 0o644)
    os.chmod(data, 0o755)
    with EmbeddedRedis(home, role="tests") as server:
        assert redis.Redis.from_url(server.url).ping()
        assert _mode(data) == 0o700
        for path in (data / "appendonly.aof", data / "redis.log", home / "embedded.lock", home / "embedded.json"):
            assert _mode(path) == 0o600, path
        assert _mode(home / "embedded.password") == 0o600


@pytest.mark.processes
def test_the_embedded_client_uses_the_password(tmp_path):
    from vetq.api_client.client import Client
    from vetq.core.settings import load_settings

    with Client(settings=load_settings(home=tmp_path / "home")) as client:
        assert client._embedded is not None
        result = client.submit_validation(GLOBEX, dict(GLOBEX_DATA), heuristics_only=True).result(timeout=60)
        assert result["status"] == "ok", result
        password = (tmp_path / "home" / "embedded.password").read_text().strip()
        assert f":{password}@" in client.redis_url


@pytest.mark.processes
def test_doctor_on_the_embedded_home_answers_without_printing_the_password(tmp_path):
    from vetq.workers.embedded_redis import EmbeddedRedis

    home = tmp_path / "home"
    with EmbeddedRedis(home, role="tests"):
        password = (home / "embedded.password").read_text().strip()
        done = subprocess.run(
            [*VETQ, "doctor", "--timeout", "0.5"], env=_cli_env(home), capture_output=True, text=True, timeout=60
        )
    checks = {line["check"]: line for line in map(json.loads, done.stdout.splitlines())}
    assert checks["redis"]["status"] == "ok", checks
    assert password not in done.stdout + done.stderr


# --------------------------------------------------------------------- item 8: vetq up


class Up:
    """A `vetq up` process started by the test, ended by its pid."""

    def __init__(self, home: Path, **env: str) -> None:
        self.home = home
        self.stderr_path = home.parent / f"up-{home.name}.stderr"
        self.stderr_path.parent.mkdir(parents=True, exist_ok=True)
        self._stderr = open(self.stderr_path, "w")  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen(
            [*VETQ, "up", "--workers", "1", "--concurrency", "1"],
            env=_cli_env(home, **env),
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
        )

    def export_line(self) -> str:
        assert self.process.stdout is not None
        return self.process.stdout.readline()

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait(timeout=10)
        finally:
            self._stderr.close()


def _state(home: Path) -> dict:
    return json.loads((home / "embedded.json").read_text())


@pytest.mark.processes
def test_up_restarts_a_killed_redis_on_the_same_port_and_data(tmp_path):
    home = tmp_path / "home"
    up = Up(home)
    try:
        line = up.export_line()
        assert line.startswith("export VETQ_REDIS_URL="), up.stderr()
        url = line.strip().split("=", 1)[1]
        password = (home / "embedded.password").read_text().strip()
        assert f":{password}@" in url  # the export line is a URL that works
        assert password not in up.stderr()
        client = redis.Redis.from_url(url, socket_timeout=5)
        client.set("survives", "yes")
        time.sleep(1.5)  # appendfsync everysec
        first = _state(home)
        os.kill(first["pid"], signal.SIGKILL)  # the redis-server this `vetq up` started

        def restarted():
            state = _state(home) if (home / "embedded.json").exists() else {}
            if state.get("pid") in (None, first["pid"]):
                return None
            try:
                return state if client.ping() else None
            except redis.RedisError:
                return None

        second = wait_until(restarted, "vetq up restarting its Redis", timeout=30, interval=0.2)
        assert second["port"] == first["port"]
        assert client.get("survives") == b"yes"
        assert up.process.poll() is None, up.stderr()
        # An embedded command on this home attaches to it and ends cleanly.
        done = subprocess.run(
            [*VETQ, "validate", "--heuristics-only", "--data", json.dumps(GLOBEX_DATA)],
            input=GLOBEX,
            env=_cli_env(home),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["status"] == "ok"
        assert "Traceback" not in done.stderr
    finally:
        code = up.stop()
    assert code == 0, up.stderr()
    assert password not in up.stderr()


@pytest.mark.processes
def test_up_refuses_unsafe_settings_before_its_export_line(tmp_path):
    up = Up(tmp_path / "home", VETQ_ACCEPT_CONTENT='["json", "pickle"]')
    try:
        code = up.process.wait(timeout=60)
        stdout = up.process.stdout.read() if up.process.stdout else ""
    finally:
        up.stop()
    assert code == 2, up.stderr()
    assert "export" not in stdout  # the error envelope only, no URL to use
    assert "pickle" in stdout + up.stderr() and "Traceback" not in up.stderr()
    assert not (tmp_path / "home" / "embedded.json").exists()  # no Redis was started


# --------------------------------------------------------------------- item 12: dead lock holder


@pytest.mark.processes
def test_a_lock_holder_whose_redis_is_dead_is_named(tmp_path):
    import fcntl

    from vetq.core.errors import ServiceUnavailableError
    from vetq.workers.embedded_redis import EmbeddedRedis

    home = tmp_path / "home"
    home.mkdir()
    # This test process plays a vetq that holds the home's lock while its Redis is gone.
    with open(home / "embedded.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        lock.write(f"{os.getpid()}\n")
        lock.flush()
        with pytest.raises(ServiceUnavailableError) as caught:
            EmbeddedRedis(home, role="tests", start_timeout_s=0.5).start()
        assert str(os.getpid()) in caught.value.message and str(home) in caught.value.message

        done = subprocess.run(
            [*VETQ, "validate", "--heuristics-only", "--data", json.dumps(GLOBEX_DATA)],
            input=GLOBEX,
            env=_cli_env(home),
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 3, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    envelope = json.loads(done.stdout)
    assert envelope["error"]["code"] == "SERVICE_UNAVAILABLE"
    assert str(os.getpid()) in envelope["error"]["message"]


# --------------------------------------------------------------------- the 'NoneType readline' race


@pytest.mark.processes
def test_short_embedded_commands_leave_stderr_clean(tmp_path):
    home = tmp_path / "home"
    for _ in range(6):
        done = subprocess.run(
            [*VETQ, "status", "0123456789abcdef0123456789abcdef"],
            env=_cli_env(home),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert "Unrecoverable error" not in done.stderr and "Traceback" not in done.stderr, done.stderr[-3000:]


# --------------------------------------------------------------------- the append-only file


@pytest.mark.processes
def test_a_restarted_home_compacts_its_append_only_file(tmp_path, monkeypatch):
    """Redis rewrites its append-only file only once it has doubled since the server
    started, so a home started for every command kept every write it ever had (a day of
    evals: 3.7 GB, whose loading outlasted the start's timeout). A start with more than
    AOF_COMPACT_BYTES of it rewrites it down to the live data."""
    from vetq.workers import embedded_redis
    from vetq.workers.embedded_redis import EmbeddedRedis

    monkeypatch.setattr(embedded_redis, "AOF_COMPACT_BYTES", 256 * 1024)
    home = tmp_path / "home"
    aof = home / "redis" / "appendonly.aof"
    with EmbeddedRedis(home, role="tests") as server:
        client = redis.Redis.from_url(server.url)
        for n in range(20):  # 2 MB written, 100 KB of it live
            client.set("result", str(n) * 100_000)
    written = aof.stat().st_size
    assert written > 2_000_000
    with EmbeddedRedis(home, role="tests"):
        pass  # a command shorter than the rewrite it starts: its end waits for the rewrite
    assert aof.stat().st_size < written // 2
    with EmbeddedRedis(home, role="tests") as server:
        assert redis.Redis.from_url(server.url).get("result") == b"19" * 100_000  # the live data kept


def test_a_server_loading_its_data_is_waited_for_past_the_start_timeout():
    """A server that answers LOADING is making progress: it gets the load's time, not the
    start's (which is for a server that does not answer at all)."""
    from vetq.workers.embedded_redis import wait_until_up

    now = [0.0]
    answers = iter([False, False] + [None] * 200 + [True])  # refused, then loading for 10 s

    def sleep(seconds: float) -> None:
        now[0] += seconds

    def wait(answers, **limits):
        return wait_until_up(
            "redis://127.0.0.1:1/0", lambda: False, 1.0, ping=lambda url: next(answers), clock=lambda: now[0],
            sleep=sleep, **limits,
        )  # fmt: skip

    assert wait(answers) is None and now[0] > 9.0
    now[0] = 0.0
    assert wait(iter([False] * 100)) == "it did not answer within 1s"
    now[0] = 0.0
    assert wait(iter([None] * 100), load_timeout_s=2.0) == "it was still loading its data after 2s"


def test_loading_is_read_from_the_servers_answer(monkeypatch):
    from vetq.workers import embedded_redis

    def loading(self):
        raise redis.exceptions.BusyLoadingError("Redis is loading the dataset in memory")

    monkeypatch.setattr(redis.Redis, "ping", loading)
    assert embedded_redis._ping("redis://127.0.0.1:1/0") is None
    assert embedded_redis._alive("redis://127.0.0.1:1/0") is False
