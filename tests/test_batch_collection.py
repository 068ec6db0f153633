"""A batch costs the same per job at any size: submitted in pipelined publishes with
no result subscription per job, collected on one pub/sub connection with one bulk
read per chunk, each result read once, and waited for by progress, not by a deadline
for the whole batch (issue 16)."""

from __future__ import annotations

import math
import threading
import time
from collections import Counter

import pytest
import redis

from tests.conftest import GLOBEX, GLOBEX_DATA, critic_answer
from vetq.api_client.client import WaitTimeout
from vetq.core.extraction.pipeline import ExtractionPipeline
from vetq.core.llm.scripted import ScriptedLLMClient

JOBS = 300


def calls(client: redis.Redis) -> dict[str, int]:
    return {name.removeprefix("cmdstat_"): stats["calls"] for name, stats in client.info("commandstats").items()}


def delta(before: dict[str, int], after: dict[str, int], command: str) -> int:
    return after.get(command, 0) - before.get(command, 0)


class ClientCommands:
    """The commands clients send while it is open, by name, from Redis's MONITOR: unlike
    commandstats it leaves out what Lua scripts run (a worker's idle bulk coordinator
    renewing its lock runs a GET inside one)."""

    END = "vetq-monitor-end"

    def __init__(self, url: str) -> None:
        self.url = url
        self.counts: Counter[str] = Counter()

    def __enter__(self) -> ClientCommands:
        self.monitor = redis.Redis.from_url(self.url).monitor()
        self.monitor.__enter__()
        self.thread = threading.Thread(target=self._read, name="monitor", daemon=True)
        self.thread.start()
        return self

    def _read(self) -> None:
        while True:
            command = self.monitor.next_command()
            words = command["command"].split()
            if words[-1:] == [self.END]:
                return
            if command["client_type"] != "lua" and words:
                self.counts[words[0].lower()] += 1

    def __exit__(self, *exc: object) -> None:
        redis.Redis.from_url(self.url).echo(self.END)  # everything before it has been read once it is
        self.thread.join(10)
        self.monitor.__exit__(*exc)
        assert not self.thread.is_alive(), "MONITOR never showed the end marker"


def validations(n: int) -> list[dict]:
    return [{"kind": "validate", "text": GLOBEX, "data": dict(GLOBEX_DATA), "heuristics_only": True}] * n


def test_a_batch_is_sent_without_a_subscription_per_job_and_collected_in_bulk(service, redis_url):
    r = redis.Redis.from_url(redis_url)
    before = calls(r)
    batch = service.client.submit_batch(validations(JOBS))
    after = calls(r)
    assert delta(before, after, "subscribe") == 0  # Celery's send_task subscribed once per job

    deadline = time.monotonic() + 60
    while batch.counts()["done"] < JOBS:
        assert time.monotonic() < deadline
        time.sleep(0.1)
    # Every job is finished: only the producer reads results now.
    with ClientCommands(redis_url) as sent:
        counts = batch.counts()
    assert counts == {"total": JOBS, "done": JOBS, "pending": 0}
    assert sent.counts["get"] == 0 and sent.counts["mget"] == 1, sent.counts

    before = calls(r)
    with ClientCommands(redis_url) as sent:
        results = batch.results(timeout=30)
    after = calls(r)
    assert [res["status"] for res in results] == ["ok"] * JOBS
    chunks = math.ceil(JOBS / 1000)
    assert sent.counts["get"] == 0, sent.counts  # no result read twice
    assert sent.counts["mget"] == chunks and delta(before, after, "subscribe") == chunks, sent.counts


class SlowCritic(ScriptedLLMClient):
    def __init__(self, seconds: float, answers: int) -> None:
        super().__init__([critic_answer()] * answers)
        self.seconds = seconds

    def complete(self, request):
        time.sleep(self.seconds)
        return super().complete(request)


def test_the_wait_is_bounded_by_progress_not_by_the_whole_batch(service):
    # 20 jobs of about 0.3 s each on two threads take about 3 s, twice the timeout:
    # results keep landing, so the batch is never "stuck" and must not time out.
    critic = SlowCritic(0.3, 20)
    service.use(ExtractionPipeline(service.settings, generator_client=ScriptedLLMClient([]), critic_client=critic))
    distinct = [{"kind": "validate", "text": f"{GLOBEX}\nCopy {i}.", "data": dict(GLOBEX_DATA)} for i in range(20)]
    batch = service.client.submit_batch(distinct)  # distinct: no answer comes from the response cache
    results = batch.results(timeout=1.5)
    assert [r["status"] for r in results] == ["ok"] * 20


def test_a_batch_where_nothing_lands_times_out_naming_what_is_left(service):
    critic = SlowCritic(3.0, 2)
    service.use(ExtractionPipeline(service.settings, generator_client=ScriptedLLMClient([]), critic_client=critic))
    distinct = [{"kind": "validate", "text": f"{GLOBEX}\nCopy {i}.", "data": dict(GLOBEX_DATA)} for i in range(2)]
    batch = service.client.submit_batch(distinct)
    with pytest.raises(WaitTimeout, match="2 job"):
        batch.results(timeout=0.5)
    assert [r["status"] for r in batch.results(timeout=30)] == ["ok", "ok"]  # they still finish


def test_a_streamed_batch_hands_out_results_while_its_input_is_still_read(service, redis_url, monkeypatch):
    from vetq.api_client import client as client_module

    monkeypatch.setattr(client_module, "SUBMIT_CHUNK", 5)
    r = redis.Redis.from_url(redis_url)
    read_to_the_end = False

    def requests():
        nonlocal read_to_the_end
        for i in range(15):
            if i == 5:  # hold the rest of the input until the first chunk has a result
                deadline = time.monotonic() + 30
                while not r.keys("celery-task-meta-*") and time.monotonic() < deadline:
                    time.sleep(0.05)
            yield {
                "kind": "validate",
                "text": f"{GLOBEX}\nCopy {i}.",
                "data": dict(GLOBEX_DATA),
                "heuristics_only": True,
            }
        read_to_the_end = True

    run = service.client.stream_batch(requests(), timeout=30)
    seen, early = [], 0
    for index, result in run:
        seen.append(index)
        early += not read_to_the_end
        assert result["status"] == "ok"
    assert sorted(seen) == list(range(15)) and run.total == 15
    assert early > 0  # collected before the input ended
    assert service.client.batch_status(run.id)["done"] == 15
