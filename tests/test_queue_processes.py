"""Worker processes (not threads): the ones a test kills, and `vetq up`."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import wait_until

from tests.conftest import GLOBEX, GLOBEX_DATA, answer_like_a_model
from vetq.api_client.admin import Admin
from vetq.api_client.client import Client
from vetq.eval.fake_provider import FakeProvider
from vetq.workers.runner import spawn_worker_process, stop_processes


def _gone_or_zombie(pid: str) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
    except FileNotFoundError:
        return True


@pytest.fixture
def slow_fake():
    with FakeProvider(latency_ms=2500) as fake:
        fake.set_responder(answer_like_a_model)
        yield fake


def worker_env(fake, home):
    return {
        "VETQ_GENERATOR": "openai:fake-generator",
        "VETQ_CRITIC": "openai:fake-critic",
        "OPENAI_BASE_URL": fake.base_url_openai,
        "OPENAI_API_KEY": "test-key-not-real",
        "VETQ_HOME": str(home),
        "VETQ_LOG_LEVEL": "WARNING",
    }


def test_job_survives_its_worker_process_being_killed(redis_url, queue_settings, slow_fake, tmp_path):
    env = worker_env(slow_fake, tmp_path)
    workers = [spawn_worker_process(redis_url, concurrency=1, extra_env=env) for _ in range(2)]
    try:
        with Client(redis_url, settings=queue_settings) as client:
            wait_until(lambda: len(Admin.of(client).workers()) == 2, timeout=60)
            job = client.submit_extraction(GLOBEX)
            # Mid-job: the Generator call has reached the (slow) provider.
            wait_until(lambda: any(e["model"] == "fake-generator" for e in slow_fake.log))
            active = wait_until(
                lambda: [t for ts in (client.app.control.inspect(timeout=1).active() or {}).values() for t in ts]
            )
            victim = active[0]["worker_pid"]
            os.kill(victim, signal.SIGKILL)

            result = job.result(timeout=90)
            assert result["status"] == "ok", result
            assert result["data"]["total"] == 583.2
            generator_calls = [e for e in slow_fake.log if e["model"] == "fake-generator"]
            assert len(generator_calls) == 2  # the interrupted call and the redelivered one
            assert all(w.poll() is None for w in workers)  # the worker nodes kept serving
    finally:
        stop_processes(workers)


@pytest.mark.processes
def test_vetq_up_serves_jobs_and_stops_without_orphans(tmp_path):
    env = {**os.environ, "VETQ_HOME": str(tmp_path / "home"), "VETQ_LOG_LEVEL": "WARNING"}
    env.pop("VETQ_REDIS_URL", None)
    up = subprocess.Popen(
        [sys.executable, "-m", "vetq.api_client.cli", "up", "--workers", "2"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        line = up.stdout.readline().strip()
        # The embedded Redis requires the home's password, so the URL handed out carries it.
        assert line.startswith("export VETQ_REDIS_URL=redis://:") and "@127.0.0.1:" in line, line
        url = line.split("=", 1)[1]
        from vetq.core.settings import load_settings

        with Client(url, settings=load_settings(home=tmp_path / "other")) as client:
            admin = Admin.of(client)
            wait_until(lambda: len(admin.workers()) == 2, timeout=60)
            children = subprocess.run(["pgrep", "-P", str(up.pid)], capture_output=True, text=True).stdout.split()
            job = client.submit_validation(GLOBEX, GLOBEX_DATA, heuristics_only=True)
            assert job.result(timeout=30)["status"] == "ok"
            # A worker that dies is replaced: the fleet is back to two.
            before = set(admin.workers())
            worker_pid = next(pid for pid in children if "worker" in Path(f"/proc/{pid}/cmdline").read_text())
            os.kill(int(worker_pid), signal.SIGKILL)
            wait_until(lambda: len(admin.workers()) == 2 and set(admin.workers()) != before, timeout=90)
            children = subprocess.run(["pgrep", "-P", str(up.pid)], capture_output=True, text=True).stdout.split()
        up.send_signal(signal.SIGTERM)
        assert up.wait(timeout=60) == 0
        assert children, "vetq up started no child processes"
        for pid in children:
            wait_until(lambda pid=pid: _gone_or_zombie(pid), timeout=20)
    finally:
        if up.poll() is None:
            up.kill()
