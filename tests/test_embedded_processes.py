"""The embedded default moves a large batch's work out of the producer: from
VETQ_EMBEDDED_PROCESSES_FROM jobs on, worker processes (one per CPU) serve the batch
and the in-process thread worker hands over to them; they stop with the client, and
die with its process however it ends."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.conftest import GLOBEX, GLOBEX_DATA
from vetq.api_client.admin import Admin
from vetq.api_client.client import Client
from vetq.core.settings import load_settings

REPO = Path(__file__).resolve().parents[1]


def validation(i: int) -> dict:
    return {"kind": "validate", "text": f"{GLOBEX}\nCopy {i}.", "data": dict(GLOBEX_DATA), "heuristics_only": True}


def _gone(pid: int) -> bool:
    """No such process, or a zombie nobody has reaped yet (it runs nothing)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return True
    return any(line.startswith("State:") and "Z" in line for line in status.splitlines())


@pytest.fixture
def embedded_env(monkeypatch):
    for name in list(os.environ):
        if name.startswith("VETQ_"):
            monkeypatch.delenv(name)


@pytest.mark.processes
def test_a_large_batch_moves_to_worker_processes_that_stop_with_the_client(tmp_path, embedded_env):
    settings = load_settings(home=tmp_path / "home", embedded_processes_from=40, log_level="WARNING")
    with Client(settings=settings) as client:
        embedded = client._embedded
        assert embedded is not None and embedded.worker is not None
        small = client.submit_batch([validation(i) for i in range(10)])
        assert [r["status"] for r in small.results(timeout=120)] == ["ok"] * 10
        assert embedded.processes == []  # below the threshold the thread worker serves alone

        large = client.submit_batch([validation(i) for i in range(60)])
        processes = list(embedded.processes)
        assert len(processes) == (os.cpu_count() or 1)
        assert [r["status"] for r in large.results(timeout=120)] == ["ok"] * 60
        embedded._handover.join(timeout=90)
        assert embedded.worker is None  # handed over once the processes answered
        serving = Admin.of(client).workers()
        assert len(serving) == len(processes) and not any("inproc" in host for host in serving), serving

        after = client.submit_batch([validation(i) for i in range(5)])
        assert [r["status"] for r in after.results(timeout=120)] == ["ok"] * 5
        assert all(process.poll() is None for process in processes)
    assert all(process.poll() is not None for process in processes)


@pytest.mark.processes
def test_the_worker_processes_die_with_a_killed_producer(tmp_path, embedded_env):
    pids_file = tmp_path / "pids"
    script = textwrap.dedent(
        f"""
        import time
        from vetq.api_client.client import Client
        from vetq.core.settings import load_settings

        client = Client(settings=load_settings(home={str(tmp_path / "home")!r}, embedded_processes_from=3))
        client.submit_batch([{{"kind": "validate", "text": "Total 10.00", "data": {{}}, "heuristics_only": True}}] * 3)
        redis_pid = client._embedded.redis.process.pid
        pids = [p.pid for p in client._embedded.processes] + [redis_pid]
        open({str(pids_file)!r}, "w").write(" ".join(map(str, pids)))
        time.sleep(600)
        """
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    producer = subprocess.Popen([sys.executable, "-c", script], env=env, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while not pids_file.exists() or not pids_file.read_text().strip():
            assert producer.poll() is None and time.monotonic() < deadline, "the producer did not start its workers"
            time.sleep(0.2)
        *workers, redis_pid = map(int, pids_file.read_text().split())
        assert workers and not any(_gone(pid) for pid in workers)
    finally:
        producer.send_signal(signal.SIGKILL)
        producer.wait(10)
    deadline = time.monotonic() + 60
    try:
        while not all(_gone(pid) for pid in [*workers, redis_pid]) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert all(_gone(pid) for pid in [*workers, redis_pid])
    finally:  # a failed test leaves no orphan behind
        for pid in [*workers, redis_pid]:
            if not _gone(pid):
                os.kill(pid, signal.SIGKILL)
