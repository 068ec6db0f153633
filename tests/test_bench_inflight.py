"""The in-flight benchmark (eval/bench_inflight.py) runs end to end on a small fan-out:
thread workers, the fake provider with a latency, the real SDKs over HTTP, and the
account the README's table records."""

from __future__ import annotations

import json

import pytest

from vetq.eval.bench_inflight import main, steady_window
from vetq.eval.fake_provider import ANTHROPIC_PATH, OPENAI_PATH


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


def test_the_steady_window_runs_from_the_first_jobs_end_to_the_last_jobs_start():
    def calls(generator_times, critic_times):
        return [{"time": t, "path": OPENAI_PATH} for t in generator_times] + [
            {"time": t, "path": ANTHROPIC_PATH} for t in critic_times
        ]

    # Generator then Critic, 2 s each: the first job ends at 2.1 + 2, the last starts at 20.
    log = calls([0.0, 0.1, 4.2, 20.0], [2.1, 2.2, 22.1])
    assert steady_window(log, 2.0) == (4.1, 20.0)
    # Shorter than two jobs of a slot (8 s at 2 s a call): no steady state to speak of.
    assert steady_window(calls([0.0, 10.0], [2.1, 12.1]), 2.0) is None
    assert steady_window([], 2.0) is None
    assert steady_window(calls([0.0, 20.0], []), 2.0) is None  # no job ended
