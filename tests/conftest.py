"""Shared fixtures. Every test is offline: models are scripted or served by the fake
provider on 127.0.0.1, and Redis is the embedded one, started by the tests."""

from __future__ import annotations

import json
import os
import platform
import sys
import threading
import time
from contextlib import contextmanager

import pytest

# pytester runs a pytest session of its own: tests/test_markers.py checks the guard below.
pytest_plugins = ["pytester"]

# Tests never reach a real provider or a developer's own Redis, whatever the shell has.
for _name in ("VETQ_REDIS_URL", "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
    os.environ.pop(_name, None)


# --- the `processes` marker: `pytest -m "not processes"` is the fast loop -------------
#
# A test that starts a process (a Redis server, a worker, the CLI, a build) carries the
# marker. Tests that use the embedded Redis get it from their fixtures; any other test
# that starts a process without it fails, so the fast loop never quietly grows slow.

PROCESS_EVENTS = frozenset({"subprocess.Popen", "os.fork", "os.forkpty", "os.posix_spawn", "os.exec", "os.system"})
_started: list[str] = []
_guarding = threading.Event()


def _audit(event: str, args: tuple) -> None:
    if _guarding.is_set() and event in PROCESS_EVENTS:
        _started.append(f"{event} {str(args[0])[:120] if args else ''}")


sys.addaudithook(_audit)
# platform.uname() runs `uname -p` once per process, the first time an SDK asks for its
# user agent: asked here, before any test, it is nobody's process.
platform.uname().processor  # noqa: B018


def starts_processes(fixture_function):
    """Under @pytest.fixture: every test that uses the fixture starts a process. (An
    attribute, not a registry: test modules import this file as tests.conftest, a
    second module beside pytest's own conftest.)"""
    fixture_function.vetq_starts_processes = True
    return fixture_function


def _uses_a_process_fixture(item) -> bool:
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return False
    return any(
        getattr(definition.func, "vetq_starts_processes", False)
        for definitions in info.name2fixturedefs.values()
        for definition in definitions
    )


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "processes: the test starts processes (Redis, workers, the CLI); deselect with -m 'not processes'"
    )


def pytest_collection_modifyitems(config, items):
    for item in items:
        if _uses_a_process_fixture(item):
            item.add_marker(pytest.mark.processes)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    marked = item.get_closest_marker("processes") is not None
    _started.clear()
    if not marked:
        _guarding.set()
    try:
        return (yield)
    finally:
        _guarding.clear()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item, nextitem):
    # Fixtures of a wider scope end in the teardown of whichever test used them last in
    # this process, marked or not (a session's PostgreSQL stopped after an unmarked test):
    # what a test starts itself, it starts in its setup or its call.
    _guarding.clear()
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if call.when == "teardown" and _started and report.passed:
        report.outcome = "failed"
        report.longrepr = (
            f"{item.nodeid} started a process without the `processes` marker: {_started[0]}\n"
            "Mark it @pytest.mark.processes (or use a fixture that does) so `-m 'not processes'` stays fast."
        )
    return report


@pytest.fixture(autouse=True)
def _declared_model_profiles_only():
    """What a parameter fallback learns holds for the process: each test starts from
    the declared profiles (core.llm.profiles) alone."""
    from vetq.core.llm.profiles import forget_learned_profiles

    forget_learned_profiles()
    yield
    forget_learned_profiles()


GLOBEX = (
    "Hi team, forwarding the bill from Globex Ltd below.\n"
    "Ref: GLX/2026/778\n"
    "Billing date 2026-02-28.\n"
    "Items came to 540.00 before tax, tax was 43.20, and the amount due is 583.20. Please pay in GBP. Thanks!\n"
)
GLOBEX_DATA = {
    "vendor_name": "Globex Ltd",
    "invoice_number": "GLX/2026/778",
    "invoice_date": "2026-02-28",
    "subtotal": 540.00,
    "tax": 43.20,
    "total": 583.20,
    "currency": "GBP",
}
FIELDS = tuple(GLOBEX_DATA)


def wait_until(condition, what: str = "the condition", timeout: float = 30.0, interval: float = 0.02):
    """Poll `condition` until it returns something truthy, and return that; fail the test
    naming `what` after `timeout` seconds. The one wait the tests poll with."""
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        assert time.monotonic() < deadline, f"{what} did not happen within {timeout} s"
        time.sleep(interval)
    return value


def critic_answer(overrides: dict | None = None, *, overall: float = 0.93, summary: str = "checked") -> str:
    """A Critic answer: every field grounded at 0.95 unless overridden by
    {field: (confidence, grounded, reason)}."""
    overrides = overrides or {}
    verdicts = []
    for field in FIELDS:
        confidence, grounded, reason = overrides.get(field, (0.95, True, "stated in the document"))
        verdicts.append({"field": field, "confidence": confidence, "grounded": grounded, "reason": reason})
    return json.dumps({"verdicts": verdicts, "overall_confidence": overall, "summary": summary})


def answer_like_a_model(path, body):
    """Generator and Critic answers for the Globex document, told apart by model name."""
    return critic_answer() if body.get("model") == "fake-critic" else json.dumps(GLOBEX_DATA)


@contextmanager
def serving_fake_provider(monkeypatch, responder, **options):
    """The fake provider on 127.0.0.1, with the openai SDK pointed at it for this test."""
    from vetq.eval.fake_provider import FakeProvider

    with FakeProvider(**options) as provider:
        provider.set_responder(responder)
        monkeypatch.setenv("OPENAI_BASE_URL", provider.base_url_openai)
        monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-real")
        yield provider


@pytest.fixture
def fake(monkeypatch):
    """The fake provider answering the Globex document as a Generator and a Critic would."""
    with serving_fake_provider(monkeypatch, answer_like_a_model) as provider:
        yield provider


def model_settings(queue_settings, **extra):
    """Settings whose Generator and Critic are the fake provider's models."""
    return queue_settings.model_copy(
        update={"generator": "openai:fake-generator", "critic": "openai:fake-critic", **extra}
    )


@pytest.fixture
def globex():
    return GLOBEX, dict(GLOBEX_DATA)


# --- queue fixtures: a real Redis (embedded) and real Celery workers -------------


@pytest.fixture(scope="session")
@starts_processes
def redis_server(tmp_path_factory):
    from vetq.workers.embedded_redis import EmbeddedRedis

    server = EmbeddedRedis(tmp_path_factory.mktemp("redis-home"), role="tests").start()
    yield server
    server.stop()


@pytest.fixture
def redis_url(redis_server):
    import redis

    redis.Redis.from_url(redis_server.url).flushall()
    return redis_server.url


@pytest.fixture
def queue_settings(tmp_path):
    from vetq.core.settings import load_settings

    return load_settings(home=tmp_path / "home")


class Service:
    """A worker app with an in-process worker thread and a producer client."""

    def __init__(self, settings, url, *, concurrency=2):
        from vetq.api_client.client import Client
        from vetq.workers.app import create_app
        from vetq.workers.runner import ThreadWorker

        self.settings = settings
        self.app = create_app(settings, url)
        self.worker = ThreadWorker(self.app, concurrency=concurrency).start()
        self.client = Client(url, settings=settings)

    def use(self, pipeline):
        self.app.conf.vetq_context.replace(pipeline)

    def close(self):
        self.client.close()
        self.worker.stop()


@pytest.fixture
def service(redis_url, queue_settings):
    svc = Service(queue_settings, redis_url)
    yield svc
    svc.close()


# --- the inbox's databases: SQLite and a real PostgreSQL -------------------------------


@pytest.fixture(scope="session")
@starts_processes
def postgres_server():
    """A PostgreSQL cluster for this test process (tests/postgres.py); skipped, saying
    why, where Debian's postgresql package is missing (make test installs it)."""
    from tests.postgres import PostgresServer, postgres_bin

    bin_dir = postgres_bin()
    if bin_dir is None:
        pytest.skip("PostgreSQL's initdb/pg_ctl are missing (apt-get install postgresql; make test does)")
    server = PostgresServer(bin_dir).start()
    yield server
    server.stop()
