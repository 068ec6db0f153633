"""The in-flight benchmark (eval/bench_inflight.py) runs end to end on a small fan-out:
thread workers, the fake provider with a latency, the real SDKs over HTTP, and the
account the README's table records."""

from __future__ import annotations

import json

import pytest

from vetq.eval.bench_inflight import main


@pytest.mark.processes
def test_the_in_flight_benchmark_counts_each_call_once_and_the_slots_it_kept_busy(capfd):
    jobs, concurrency, latency_ms = 40, 8, 400
    argv = ["--jobs", str(jobs), "--workers", "1", "--concurrency", str(concurrency)]
    assert main([*argv, "--latency-ms", str(latency_ms), "--warmup", "2", "--json"]) == 0
    figures = json.loads(capfd.readouterr().out)
    assert figures["results"] == {"ok": jobs} and figures["lost"] == 0
    assert figures["answered_calls"] == figures["expected_calls"] == 2 * jobs
    assert figures["extra_calls"] == 0 and figures["jobs_paid_twice"] == 0
    assert figures["max_in_flight"] <= figures["slots"] == concurrency
    # Forty jobs on eight slots: five rounds, so there is a span between the first
    # job's end and the last one's start, inside the run, with calls in flight.
    assert 0 < figures["steady_s"] < figures["wall_s"]
    assert 0 < figures["steady_in_flight"] <= concurrency
    assert 0 < figures["mean_in_flight"] <= concurrency
    assert figures["worker_cpu_ms_per_job"] > 0
