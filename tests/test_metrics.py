"""Prometheus metrics: a real worker process's /metrics after real jobs, and `vetq
metrics serve` over the same Redis, both scraped over HTTP and read with the
Prometheus text parser. One worker, one metrics server and one fake provider serve
every process test here (a module fixture), so the metrics cost the suite a few
seconds. The planted key and the Redis password of tests/test_secrets.py must appear
in neither scrape, nor any text of the documents the jobs carried."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request

import pytest
import redis

from tests.conftest import GLOBEX, GLOBEX_DATA, critic_answer, starts_processes
from tests.test_secrets import API_KEY
from vetq.core.redis_keys import DEAD_LETTER_KEY
from vetq.eval.fake_provider import FakeProvider

REVIEW_MARK = "Remittance hold pending"
DOCUMENTS = [GLOBEX + f"\nInternal note {n}: forwarded by accounts." for n in range(3)]
NEEDS_REVIEW_DOCUMENT = GLOBEX + f"\n{REVIEW_MARK}.\n"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def scrape(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        return response.read().decode()


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    from prometheus_client.parser import text_string_to_metric_families

    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(scraped: dict, name: str, **labels: str) -> float:
    return scraped.get((name, tuple(sorted(labels.items()))), 0.0)


def wait_for(predicate, timeout: float = 60.0, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            result = predicate()
        except OSError:
            result = None
        if result:
            return result
        time.sleep(0.2)
    raise AssertionError(f"{what} not reached in time")


def answer(path, body):
    """The Globex answers; the document with REVIEW_MARK gets a Critic that doubts the total."""
    if body.get("model") != "fake-critic":
        return json.dumps(GLOBEX_DATA)
    if REVIEW_MARK in json.dumps(body):
        return critic_answer({"total": (0.2, False, "not stated")}, overall=0.5)
    return critic_answer()


@pytest.fixture(scope="module")
@starts_processes
def fleet(redis_server, tmp_path_factory):
    """A prefork worker with VETQ_METRICS_PORT (extract queue only), `vetq metrics serve`,
    and the jobs: 3 ok, 1 needs_review, 1 repeat answered by the cache, 1 invalid (a
    dead letter), a 429 on the first call; 2 review jobs left queued (no review worker)."""
    from tests.test_review_service import make_request
    from vetq.api_client.admin import Admin
    from vetq.api_client.client import Client
    from vetq.core.queue import TASK_EXTRACT
    from vetq.core.settings import load_settings
    from vetq.workers.runner import spawn_worker_process, stop_processes

    url = redis_server.url  # carries the embedded Redis's password
    redis.Redis.from_url(url).flushall()
    home = tmp_path_factory.mktemp("metrics-home")
    worker_port, fleet_port = free_port(), free_port()
    processes: list[subprocess.Popen] = []
    with FakeProvider() as fake:
        fake.set_responder(answer)
        fake.push_fault({"kind": "429", "retry_after": 1})
        env = {
            "VETQ_GENERATOR": "openai:fake-generator",
            "VETQ_CRITIC": "openai:fake-critic",
            "OPENAI_BASE_URL": fake.base_url_openai,
            "OPENAI_API_KEY": API_KEY,
            "VETQ_HOME": str(home),
            "VETQ_LOG_LEVEL": "WARNING",
            "VETQ_METRICS_PORT": str(worker_port),
        }
        try:
            processes.append(spawn_worker_process(url, queues=["extract"], concurrency=1, extra_env=env))
            serve_env = {**os.environ, "VETQ_REDIS_URL": url, "VETQ_HOME": str(home), "VETQ_LOG_LEVEL": "WARNING"}
            processes.append(
                subprocess.Popen(
                    [sys.executable, "-m", "vetq.api_client.cli", "metrics", "serve", "--port", str(fleet_port)],
                    env=serve_env,
                    stdin=subprocess.DEVNULL,
                    stdout=sys.stderr.fileno(),
                )
            )
            settings = load_settings(home=home)
            with Client(url, settings=settings) as client:
                wait_for(lambda: Admin.of(client).workers(), what="the worker")
                jobs = [client.submit_extraction(text) for text in [*DOCUMENTS, NEEDS_REVIEW_DOCUMENT, DOCUMENTS[0]]]
                results = [job.result(timeout=120) for job in jobs]
                invalid = client.app.send_task(TASK_EXTRACT, args=[{"text": 42}], queue="extract")
                # disable_sync_subtasks: this process may have run an in-process worker (a task context)
                invalid_result = invalid.get(timeout=60, disable_sync_subtasks=False)
                for priority in ("high", None):
                    client.submit_review(make_request().model_dump(mode="json", exclude_none=True), priority=priority)
                # The worker's postrun signal (metrics, dead letter) runs after the result is stored.
                wait_for(lambda: redis.Redis.from_url(url).llen(DEAD_LETTER_KEY), what="the dead letter")
                worker_text = wait_for(
                    lambda: next((t for t in [scrape(worker_port)] if 'outcome="INVALID_INPUT"' in t), None),
                    what="the worker's metrics",
                )
                fleet_text = wait_for(lambda: scrape(fleet_port), what="vetq metrics serve")
            yield {
                "results": results,
                "invalid": invalid_result,
                "worker": worker_text,
                "fleet": fleet_text,
                "redis_url": url,
                "home": home,
                "worker_port": worker_port,
            }
        finally:
            stop_processes(processes)


@pytest.mark.processes
def test_a_workers_metrics_move_as_its_jobs_did(fleet):
    statuses = [r["status"] for r in fleet["results"]]
    assert statuses == ["ok", "ok", "ok", "needs_review", "ok"], fleet["results"]
    assert fleet["invalid"]["error"]["code"] == "INVALID_INPUT"
    m = samples(fleet["worker"])
    jobs = {"queue": "extract", "kind": "extract"}
    assert value(m, "vetq_jobs_total", **jobs, outcome="ok") == 4
    assert value(m, "vetq_jobs_total", **jobs, outcome="needs_review") == 1
    assert value(m, "vetq_jobs_total", **jobs, outcome="INVALID_INPUT") == 1
    assert value(m, "vetq_job_duration_seconds_count", **jobs) == 6
    # Queued time is measured from the producer's send-time header: the raw Celery send has none.
    assert value(m, "vetq_job_queued_seconds_count", **jobs) == 5
    assert value(m, "vetq_job_queued_seconds_bucket", **jobs, le="+Inf") == 5

    # 2 calls for each of the 4 distinct documents; the repeat is answered by the cache.
    generator, critic = "openai:fake-generator", "openai:fake-critic"
    assert value(m, "vetq_model_calls_total", model=generator, stage="generator", outcome="ok") == 4
    assert value(m, "vetq_model_calls_total", model=critic, stage="critic", outcome="ok") == 4
    assert value(m, "vetq_model_calls_total", model=generator, stage="generator", outcome="rate_limited") == 1
    assert value(m, "vetq_rate_limit_cooldowns_total", model=generator) == 1
    assert value(m, "vetq_rate_limit_wait_seconds_count", model=generator) >= 1  # the cooldown, waited in place
    assert value(m, "vetq_response_cache_lookups_total", stage="generator", result="hit") == 1
    assert value(m, "vetq_response_cache_lookups_total", stage="critic", result="hit") == 1
    assert value(m, "vetq_response_cache_lookups_total", stage="generator", result="miss") == 4
    assert value(m, "vetq_model_call_duration_seconds_count", model=critic, stage="critic") == 4
    assert value(m, "vetq_model_tokens_total", model=generator, lane="realtime", type="input") > 0
    assert value(m, "vetq_model_tokens_total", model=critic, lane="realtime", type="output") > 0
    assert value(m, "vetq_flagged_fields_total", schema="invoice", field="total") == 1
    assert not [k for k in m if k[0] == "vetq_budget_refusals_total"]


@pytest.mark.processes
def test_prefork_metrics_are_multiprocess_files_in_the_workers_own_directory(fleet):
    from vetq.workers.metrics import multiprocess_dir

    directory = multiprocess_dir(fleet["home"], fleet["worker_port"])
    assert list(directory.glob("counter_*.db")) and list(directory.glob("histogram_*.db"))


@pytest.mark.processes
def test_vetq_metrics_serve_reads_the_fleet_from_redis(fleet):
    m = samples(fleet["fleet"])
    assert value(m, "vetq_fleet_up") == 1
    # No review worker: its two jobs wait, each in the list of its priority.
    assert value(m, "vetq_queue_depth", queue="review", priority="high") == 1
    assert value(m, "vetq_queue_depth", queue="review", priority="normal") == 1
    assert value(m, "vetq_queue_depth", queue="review", priority="low") == 0
    assert ("vetq_queue_depth", (("priority", "normal"), ("queue", "extract"))) in m
    assert sum(v for (name, _labels), v in m.items() if name == "vetq_queue_depth") == 2
    assert value(m, "vetq_workers_alive", queue="extract") == 1
    assert value(m, "vetq_workers_alive", queue="review") == 0
    assert value(m, "vetq_dead_letters") == 1
    assert value(m, "vetq_bulk_parked_jobs") == 0
    assert ("vetq_unacked_messages", ()) in m


@pytest.mark.processes
def test_no_secret_and_no_document_text_in_a_scrape(fleet):
    """tests/test_secrets.py's planted key, and the Redis password both processes used."""
    password = redis.connection.parse_url(fleet["redis_url"])["password"]
    assert password
    words = {"Globex", "GLX/2026/778", "583.20", "forwarded by accounts", REVIEW_MARK}
    for text in (fleet["worker"], fleet["fleet"]):
        assert API_KEY not in text
        assert password not in text
        assert not [word for word in words if word in text]
        assert "vetq_" in text


# --------------------------------------------------------------------------- no process


def _value(name: str, **labels: str) -> float:
    from vetq.workers import metrics

    return metrics.registry().get_sample_value(name, labels) or 0.0


def test_job_outcomes_come_from_the_result_envelope():
    from vetq.workers import metrics

    class Task:
        name = "vetq.review"

    def moved(name: str, **labels: str):
        before = _value(name, **labels)
        return lambda: _value(name, **labels) - before

    reviewed = moved("vetq_jobs_total", queue="review", kind="review", outcome="reviewed")
    leak = moved("vetq_jobs_total", queue="review", kind="review", outcome="BLINDNESS_LEAK")
    retried = moved("vetq_jobs_total", queue="review", kind="review", outcome="retried")
    parked = moved("vetq_jobs_total", queue="other", kind="review", outcome="parked")
    warned = moved("vetq_review_blindness_total", result="warning")
    refused = moved("vetq_review_blindness_total", result="refused")
    metrics.job_finished(Task, "review", "SUCCESS", {"status": "ok", "meta": {"blindness_warning": "overlap"}}, 0.5)
    metrics.job_finished(
        Task, "review", "SUCCESS", {"status": "error", "error": {"code": "BLINDNESS_LEAK", "message": "x"}}, 0.01
    )
    metrics.job_finished(Task, "review", "RETRY", None, 0.2)
    metrics.job_finished(Task, "job-42-queue", "IGNORED", None, None)  # a queue vetq does not name
    assert (reviewed(), leak(), retried(), parked(), warned(), refused()) == (1, 1, 1, 1, 1, 1)


def test_flagged_fields_are_labelled_by_template_path_and_bounded(monkeypatch):
    from vetq.workers import metrics

    class Task:
        name = "vetq.extract"

    monkeypatch.setattr(metrics, "_field_series", set())
    monkeypatch.setattr(metrics, "MAX_FIELD_SERIES", 2)
    item = _value("vetq_flagged_fields_total", schema="invoice", field="line_items[].amount")
    other = _value("vetq_flagged_fields_total", schema="other", field="other")
    envelope = {
        "status": "needs_review",
        "schema": {"name": "invoice", "version": 1, "hash": "h"},
        "flagged_fields": [
            {"field": "line_items[3].amount"},
            {"field": "line_items[7].amount"},
            {"field": "Globex Ltd owes 583.20"},  # never a label, whatever a path holds
            {"field": "total"},
            {"field": "subtotal"},  # past the cap
        ],
    }
    metrics.job_finished(Task, "extract", "SUCCESS", envelope, 1.0)
    assert _value("vetq_flagged_fields_total", schema="invoice", field="line_items[].amount") - item == 2
    assert _value("vetq_flagged_fields_total", schema="other", field="other") - other == 2


def test_call_outcomes_and_budget_scopes():
    from vetq.core.llm.errors import (
        MalformedResponseError,
        OutputTruncatedError,
        ProviderHTTPError,
        ProviderNetworkError,
        ProviderTimeoutError,
        RateLimitedError,
    )
    from vetq.workers import metrics
    from vetq.workers.call_gate import JobTimeoutError

    cases = {
        "rate_limited": RateLimitedError("429"),
        "server_error": ProviderHTTPError(502),
        "client_error": ProviderHTTPError(400),
        "timeout": ProviderTimeoutError("slow"),
        "network_error": ProviderNetworkError("reset"),
        "malformed": MalformedResponseError("not JSON"),
        "truncated": OutputTruncatedError("cut"),
        "error": RuntimeError("a bug"),
    }
    assert {name: metrics.call_outcome(exc) for name, exc in cases.items()} == {n: n for n in cases}
    assert metrics.call_outcome(JobTimeoutError("late")) == "timeout"
    batch = _value("vetq_budget_refusals_total", scope="batch", unit="usd")
    metrics.budget_refused({"job:abc:usd": 900, "batch:b1:usd": 10}, 100, usd=True)
    assert _value("vetq_budget_refusals_total", scope="batch", unit="usd") - batch == 1


def test_a_thread_pool_worker_serves_its_registry_and_a_taken_port_stops_it(tmp_path):
    """No multiprocess mode for a thread pool: the endpoint serves the metrics this
    process counts. A second worker given the same port stops at start, naming it,
    before it could touch the first one's files."""
    from vetq.core.errors import ConfigError
    from vetq.core.settings import load_settings
    from vetq.workers import metrics

    settings = load_settings(home=tmp_path, metrics_port=free_port())
    url = metrics.serve_worker_metrics(settings, pool="threads")
    assert url == f"http://127.0.0.1:{settings.metrics_port}/metrics"
    metrics.cache_lookup("thread-pool-test", hit=True)
    scraped = samples(scrape(settings.metrics_port))
    assert value(scraped, "vetq_response_cache_lookups_total", stage="thread-pool-test", result="hit") == 1
    assert not os.environ.get(metrics.MULTIPROC_ENV)
    with pytest.raises(ConfigError, match=f"VETQ_METRICS_PORT: cannot listen on 127.0.0.1:{settings.metrics_port}"):
        metrics.serve_worker_metrics(settings, pool="prefork")
    assert not os.environ.get(metrics.MULTIPROC_ENV)
    assert metrics.serve_worker_metrics(load_settings(home=tmp_path), pool="prefork") is None  # no port: off


def test_metrics_settings_are_checked():
    from vetq.core.errors import ConfigError
    from vetq.core.settings import load_settings

    assert load_settings(metrics_port="").metrics_port is None
    assert load_settings(metrics_address=" 0.0.0.0 ").metrics_address == "0.0.0.0"
    with pytest.raises(ConfigError, match="VETQ_METRICS_PORT"):
        load_settings(metrics_port=70000)
    with pytest.raises(ConfigError, match="VETQ_METRICS_ADDRESS"):
        load_settings(metrics_address="http://host:9464")


class _FakeRedis:
    """Just the reads FleetCollector makes, over a dict of lists, sets, hashes and sorted sets."""

    def __init__(self, data: dict, *, down: bool = False) -> None:
        self.data, self.down, self.scans = data, down, 0

    def pipeline(self, transaction: bool = False):
        redis_ = self

        class Pipe:
            def __init__(self) -> None:
                self.calls: list = []

            def __getattr__(self, name):
                return lambda *args: self.calls.append((name, args))

            def execute(self):
                if redis_.down:
                    raise redis.ConnectionError("down")
                return [getattr(redis_, name)(*args) for name, args in self.calls]

        return Pipe()

    def llen(self, key):
        return len(self.data.get(key, []))

    hlen = zcard = llen

    def smembers(self, key):
        return set(self.data.get(key, set()))

    def zrange(self, key, start, stop):
        return list(self.data.get(key, []))

    def hget(self, key, field):
        return self.data.get(key, {}).get(field)

    def scan_iter(self, match, count):
        import fnmatch

        self.scans += 1
        return (k for k in self.data if fnmatch.fnmatchcase(k, match.replace("{", "[{]").replace("}", "[}]")))


def test_the_fleet_collector_reads_the_bulk_lane_and_caches_its_slow_reads():
    from vetq.api_client.fleet_metrics import FleetCollector
    from vetq.core.queue import PRIORITY_STEPS
    from vetq.core.redis_keys import (
        BULK_MODELS_KEY,
        BULK_OPEN_KEY,
        BULK_SUBMISSIONS_KEY,
        bulk_batch_key,
        bulk_job_key,
        bulk_pending_key,
        priority_queue_key,
    )

    data = {
        "extract": [b"m1", b"m2", b"m3"],
        priority_queue_key("extract", PRIORITY_STEPS["low"]): [b"m4"],
        "webhook": [b"w1", b"w2"],  # deliveries waiting (every worker serves the queue)
        BULK_MODELS_KEY: {b"openai:gpt-5-mini"},
        bulk_pending_key("openai:gpt-5-mini"): [b"d1", b"d2"],
        BULK_OPEN_KEY: [b"b1", b"b2", b"b3"],
        bulk_batch_key("b1"): {"state": b"in_progress"},
        bulk_batch_key("b2"): {"state": b"in_progress"},
        bulk_batch_key("b3"): {"state": b"finalizing"},
        BULK_SUBMISSIONS_KEY: [b"s1"],
        bulk_job_key("job-1"): {"task": b"vetq.extract"},
        bulk_job_key("job-2"): {"task": b"vetq.extract"},
    }
    probes: list[float] = []

    def workers(timeout: float) -> dict[str, list[str]]:
        probes.append(timeout)
        return {"w1@h": ["extract"], "w2@h": ["extract", "review"]}

    now = [0.0]
    fake = _FakeRedis(data)
    collector = FleetCollector(fake, workers, clock=lambda: now[0])

    def scrape_once() -> dict:
        return {
            (s.name, tuple(sorted(s.labels.items()))): s.value for family in collector.collect() for s in family.samples
        }

    m = scrape_once()
    assert value(m, "vetq_queue_depth", queue="extract", priority="normal") == 3
    assert value(m, "vetq_queue_depth", queue="extract", priority="low") == 1
    assert ("vetq_queue_depth", (("priority", "high"), ("queue", "review"))) in m
    assert value(m, "vetq_queue_depth", queue="webhook", priority="normal") == 2
    assert value(m, "vetq_workers_alive", queue="extract") == 2 and value(m, "vetq_workers_alive", queue="review") == 1
    assert value(m, "vetq_bulk_pending_requests", model="openai:gpt-5-mini") == 2
    assert value(m, "vetq_bulk_batches", state="in_progress") == 2
    assert value(m, "vetq_bulk_batches", state="finalizing") == 1
    assert value(m, "vetq_bulk_batches", state="submitting") == 1
    assert value(m, "vetq_bulk_parked_jobs") == 2
    now[0] = 10.0
    scrape_once()
    assert (len(probes), fake.scans) == (1, 1)  # both slow reads cached
    now[0] = 61.0
    scrape_once()
    assert (len(probes), fake.scans) == (2, 2)
    assert probes[0] <= 1.0  # a short probe

    down = FleetCollector(_FakeRedis(data, down=True), workers)
    assert [(s.name, s.value) for f in down.collect() for s in f.samples] == [("vetq_fleet_up", 0)]
