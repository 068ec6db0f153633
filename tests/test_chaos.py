"""Redis going away mid-run, and the chaos run (worker kills, a Redis restart, provider faults)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from vetq.core.settings import load_settings


@contextmanager
def service_on_restartable_redis(tmp_path: Path) -> Iterator[tuple[Any, Any, Any]]:
    """(embedded Redis, client, worker): a thread worker and a client on a Redis the
    test can stop and start again on the same port (redis_down_for)."""
    from vetq.api_client.client import Client
    from vetq.workers.app import create_app
    from vetq.workers.embedded_redis import EmbeddedRedis
    from vetq.workers.runner import ThreadWorker

    settings = load_settings(home=tmp_path / "home", task_time_limit_s=10, visibility_timeout_s=15, log_level="WARNING")
    with EmbeddedRedis(tmp_path / "redis-home", role="tests") as server:
        worker = ThreadWorker(create_app(settings, server.url), concurrency=2).start()
        client = Client(server.url, settings=settings)
        try:
            yield server, client, worker
        finally:
            client.close()
            worker.stop()


def redis_down_for(server: Any, seconds: float, meanwhile: Callable[[], None] = lambda: None) -> None:
    """Stop Redis, run `meanwhile`, and start it again on its port `seconds` later."""
    port = int(server.url.rsplit(":", 1)[1].split("/")[0])
    server._terminate()
    meanwhile()
    time.sleep(seconds)
    server.requested_port = port
    server._spawn()


@pytest.mark.processes
def test_redis_restart_while_a_producer_submits(tmp_path):
    with service_on_restartable_redis(tmp_path) as (server, client, worker):
        jobs: list = []
        errors: list = []
        slow_submits: list[float] = []
        stop = threading.Event()

        def produce() -> None:
            i = 0
            while not stop.is_set() and i < 400:
                started = time.monotonic()
                try:
                    jobs.append(
                        (
                            i,
                            client.submit_validation(
                                f"Order {i}: Total {i}.00 EUR", {"total": float(i)}, heuristics_only=True
                            ),
                        )
                    )
                except Exception as exc:  # noqa: BLE001 - the test fails on any
                    errors.append(exc)
                slow_submits.append(time.monotonic() - started)
                i += 1
                time.sleep(0.02)

        producer = threading.Thread(target=produce, daemon=True)
        try:
            producer.start()
            time.sleep(1.0)
            before = len(jobs)
            # Down for a while: the producer's submit blocks and retries meanwhile.
            redis_down_for(server, 1.5)
            time.sleep(2.0)
            stop.set()
            producer.join(timeout=60)
            assert not producer.is_alive()
            assert errors == []
            assert len(jobs) > before + 5, "the producer went on submitting after Redis came back"
            assert max(slow_submits) >= 1.0, "a submit waited for Redis (retried) instead of failing"
            # Every job completes with its own result (in-flight ones are redelivered after the
            # visibility timeout); none is reported done without a result.
            for i, job in jobs:
                result = job.result(timeout=90)
                assert result["status"] == "ok", (i, result)
                assert result["data"]["total"] == float(i)
                assert job.status() == "done"
        finally:
            stop.set()
    assert worker.thread.is_alive() is False


@pytest.mark.processes
def test_a_batch_submitted_while_redis_is_down_is_sent_once_it_is_back(tmp_path):
    # The pipelined batch send meets Redis gone between the jobs' record and their
    # messages (a public submit's record waits for Redis, so the send is called
    # directly): kombu retries neither its flush nor a publish inside it, so the
    # client retries the whole batch on a reconnected producer.
    with service_on_restartable_redis(tmp_path) as (server, client, _worker):
        client.submit_validation("Total 1.00 EUR", {"total": 1.0}, heuristics_only=True).result(timeout=60)
        requests = [
            {
                "kind": "validate",
                "text": f"Order {i}: Total {i}.00 EUR",
                "data": {"total": float(i)},
                "heuristics_only": True,
            }
            for i in range(30)
        ]
        job_ids = [f"down-{i}" for i in range(30)]
        sendable = [
            (job_id, *client._prepare(request), None) for job_id, request in zip(job_ids, requests, strict=True)
        ]
        client._record_submitted(job_ids)
        outcome: dict = {}

        def send() -> None:
            try:
                outcome["jobs"] = client._send_many(sendable)
            except Exception as exc:  # noqa: BLE001 - the test fails on any
                outcome["error"] = exc

        sender = threading.Thread(target=send, daemon=True)
        redis_down_for(server, 1.5, meanwhile=sender.start)
        sender.join(timeout=60)
        assert not sender.is_alive() and "error" not in outcome, outcome
        results = [job.result(timeout=90) for job in outcome["jobs"]]
        assert [r["data"]["total"] for r in results] == [float(i) for i in range(30)]


@pytest.mark.processes
def test_chaos_run_loses_nothing_and_writes_no_second_result():
    from vetq.eval.chaos import run_chaos

    figures = run_chaos(
        jobs=20,
        workers=3,
        rate=5.0,
        kill_every_s=2.0,
        kills=1,
        redis_restarts=1,
        fault_bursts=1,
        latency_ms=150,
        deadline_s=120,
        time_limit_s=15,
        visibility_timeout_s=20,
        seed=7,
    )
    assert figures["submitted"] == 20 and figures["submit_errors"] == 0, figures["submit_error_samples"]
    assert figures["lost"] == 0, figures
    assert figures["duplicate_results"] == 0, figures
    assert figures["completed"] + figures["failed"] == 20, figures
    assert figures["kills"] == 1 and figures["redis_restarts"] == 1 and figures["fault_bursts"] == 1, figures
    assert figures["extra_model_calls"] <= figures["interrupted_jobs"] * 2, figures


@pytest.mark.processes
def test_chaos_repeat_prints_a_line_per_run_and_a_summary(capfd):
    from vetq.eval.chaos import main

    code = main(
        [
            "--jobs",
            "3",
            "--workers",
            "1",
            "--kills",
            "0",
            "--redis-restarts",
            "0",
            "--fault-bursts",
            "0",
            "--rate",
            "20",
            "--latency-ms",
            "10",
            "--deadline-s",
            "60",
            "--repeat",
            "2",
            "--seed",
            "3",
        ]
    )
    lines = capfd.readouterr().out.strip().splitlines()
    assert code == 0, lines
    assert [line.split(":")[0] for line in lines] == ["run 1", "run 2", "summary"]
    assert all(" pass " in line and "lost=0" in line for line in lines[:2]), lines
    summary = json.loads(lines[2].removeprefix("summary: "))
    assert summary["runs"] == 2 and summary["runs_passed"] == 2 and summary["total_submitted"] == 6, summary
