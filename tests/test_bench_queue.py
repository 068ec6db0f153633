"""The queue benchmark (eval/bench_queue.py) runs end to end on a small N: a row per
way and per N, each with the figures the README's table records."""

from __future__ import annotations

import json
import socket

import pytest

from vetq.eval.bench_queue import main


@pytest.mark.processes
def test_the_queue_benchmark_prints_a_row_per_way_and_count(capfd):
    with socket.socket() as probe:  # a free port for the worker's metrics
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    assert main(["--jobs", "10", "20", "--rounds", "2", "--workers", "1", "--metrics-port", str(port), "--json"]) == 0
    figures = json.loads(capfd.readouterr().out)
    assert figures["rounds"] == 2 and figures["metrics"] is True
    rows = figures["rows"]
    assert [(row["way"], row["jobs"]) for row in rows] == [
        (way, jobs) for jobs in (10, 20) for way in ("raw_celery", "vetq_client", "vetq_async_client")
    ]
    for row in rows:
        assert row["jobs_per_s"] > 0 and row["producer_cpu_ms_per_job"] > 0
        assert row["redis_bytes_per_job"] > 0  # the results are kept
        assert ("ratio_to_raw_celery" in row) == (row["way"] != "raw_celery")


@pytest.mark.processes
def test_the_awaits_benchmark_holds_every_wait_pending_without_a_thread_each(capfd):
    assert main(["--awaits", "200", "--workers", "1", "--json"]) == 0
    figures = json.loads(capfd.readouterr().out)
    assert figures["jobs"] == figures["ok"] == 200
    # The waits were all pending before any worker ran, and none took a thread (a
    # thread or two of earlier tests' may come or go in this shared process).
    assert figures["threads_all_pending"] <= figures["threads_before"] + 2
    assert figures["threads_peak"] <= figures["threads_before"] + 2
    assert figures["resident_mb_peak"] >= figures["resident_mb_all_pending"] > 0
