"""Secrets never leave: API keys and Redis passwords planted in the environment and
in URLs appear in no log line, result or error message. The metrics endpoints are
checked with the same planted key in tests/test_metrics.py
(test_no_secret_and_no_document_text_in_a_scrape), which scrapes a worker and `vetq
metrics serve` it runs once for all its tests."""

from __future__ import annotations

import json

import pytest
import redis

from tests.conftest import GLOBEX, GLOBEX_DATA, Service, starts_processes
from vetq.core.logging import configure_logging, get_logger, redact_text
from vetq.eval.fake_provider import FakeProvider

API_KEY = "sk-proj-PLANTEDkey0123456789abcdefXYZ"
REDIS_PASSWORD = "hunter2-PLANTED-redis-pw"


def test_redaction_processor_masks_keys_and_url_passwords(capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "plain-key-without-prefix-42")
    configure_logging("INFO", force=True)
    get_logger("t").info(
        "connecting",
        url=f"redis://:{REDIS_PASSWORD}@127.0.0.1:6379/0",
        nested={"headers": [f"Bearer {API_KEY}"]},
        note="key plain-key-without-prefix-42 in text",
    )
    line = capsys.readouterr().err
    assert REDIS_PASSWORD not in line and API_KEY not in line and "plain-key-without-prefix-42" not in line
    assert "127.0.0.1:6379" in line  # the rest of the URL is kept
    assert redact_text(f"rediss://user:{REDIS_PASSWORD}@host:6380/1") == "rediss://user:[REDACTED]@host:6380/1"


@pytest.fixture
@starts_processes
def locked_redis(tmp_path):
    from vetq.workers.embedded_redis import EmbeddedRedis

    server = EmbeddedRedis(tmp_path / "locked", role="tests").start()
    redis.Redis.from_url(server.url).config_set("requirepass", REDIS_PASSWORD)
    host_port = server.url.rsplit("@", 1)[1]  # the embedded URL carries the home's own password
    yield f"redis://:{REDIS_PASSWORD}@{host_port}"
    redis.Redis.from_url(f"redis://:{REDIS_PASSWORD}@{host_port}").config_set("requirepass", "")
    server.stop()


@pytest.mark.processes
def test_no_secret_in_logs_results_or_errors(locked_redis, queue_settings, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    configure_logging("INFO", force=True)
    with FakeProvider() as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url_openai)
        # A provider that echoes the key it was given in its error, as some do.
        fake.push_fault(
            {"kind": "5xx", "status": 401, "body": {"error": {"message": f"Incorrect API key provided: {API_KEY}"}}}
        )
        settings = queue_settings.model_copy(
            update={"generator": "openai:fake-generator", "critic": "openai:fake-critic"}
        )
        svc = Service(settings, locked_redis)
        try:
            failed = svc.client.submit_extraction(GLOBEX).result(timeout=60)
            ok = svc.client.submit_validation(GLOBEX, GLOBEX_DATA, heuristics_only=True).result(timeout=60)
        finally:
            svc.close()
    everything = json.dumps([failed, ok]) + capsys.readouterr().err
    assert failed["status"] == "error" and failed["error"]["code"] == "PROVIDER_HTTP_ERROR"
    assert "401" in failed["error"]["message"]
    assert ok["status"] == "ok"
    assert API_KEY not in everything
    assert REDIS_PASSWORD not in everything


@pytest.mark.processes
def test_no_worker_error_does_not_print_the_redis_password(locked_redis, queue_settings):
    from vetq.api_client.client import Client, NoWorkerError

    with Client(locked_redis, settings=queue_settings) as client:
        job = client.submit_validation(GLOBEX, GLOBEX_DATA, heuristics_only=True)
        with pytest.raises(NoWorkerError) as info:
            job.result(timeout=30)
    assert REDIS_PASSWORD not in info.value.message


@pytest.mark.parametrize(
    "url",
    [
        f"redis://127.0.0.1:6379/0?password={REDIS_PASSWORD}",
        f"redis://127.0.0.1:6379/0?db=0&password={REDIS_PASSWORD}&socket_timeout=5",
        f"rediss://user:{REDIS_PASSWORD}@host:6380/1",
        f"rediss://host:6380/1?ssl_cert_reqs=required&password={REDIS_PASSWORD}",
        f"redis://127.0.0.1:6379/0?pass%77ord={REDIS_PASSWORD}",  # parse_qs decodes the name, redis-py too
        f"redis://:p@ss-{REDIS_PASSWORD}@127.0.0.1:6379/0",  # an @ inside the password
        f"unix://:{REDIS_PASSWORD}@/run/redis.sock?db=0",
        f"unix:///run/redis.sock?password={REDIS_PASSWORD}",
    ],
)
def test_every_password_form_redis_py_accepts_is_redacted(url):
    from redis.connection import parse_url

    assert parse_url(url)["password"].endswith(REDIS_PASSWORD)  # a form redis-py really reads as the password
    for text in (url, f"could not reach {url} (VETQ_REDIS_URL)", json.dumps({"url": url})):
        assert REDIS_PASSWORD not in redact_text(text), redact_text(text)
        assert "[REDACTED]" in redact_text(text)


@pytest.mark.parametrize(
    "url",
    [
        f"redis://127.0.0.1:6379/0?password={REDIS_PASSWORD}",
        f"redis://127.0.0.1:6379/0?username=alice&password={REDIS_PASSWORD}&socket_timeout=5",
        f"redis://:{REDIS_PASSWORD}@127.0.0.1:6379/0?password=ignored-by-redis-py",
        "redis://127.0.0.1:6379/0?password=with%20space%26amp",
    ],
)
def test_the_normalised_url_means_the_same_to_redis_py_and_works_for_kombu(url):
    from kombu.utils.url import parse_url as kombu_parse
    from redis.connection import parse_url

    from vetq.core.redis_url import normalise_redis_url

    normal = normalise_redis_url(url)
    assert parse_url(normal) == parse_url(url)
    parsed = kombu_parse(normal)
    assert parsed["password"] == parse_url(url)["password"]
    assert parsed["userid"] == parse_url(url).get("username")
    assert "password" not in normal.partition("?")[2]
    assert normalise_redis_url("redis://127.0.0.1:6379/0?db=1") == "redis://127.0.0.1:6379/0?db=1"


@pytest.mark.processes
def test_a_query_password_url_serves_jobs_and_is_never_printed(locked_redis, queue_settings, capsys):
    configure_logging("INFO", force=True)
    host_port = locked_redis.rsplit("@", 1)[1]
    query_url = f"redis://{host_port}?password={REDIS_PASSWORD}"
    svc = Service(queue_settings, query_url)  # the worker's app and the producer, both on the query form
    try:
        result = svc.client.submit_validation(GLOBEX, GLOBEX_DATA, heuristics_only=True).result(timeout=60)
    finally:
        svc.close()
    assert result["status"] == "ok", result
    assert REDIS_PASSWORD not in capsys.readouterr().err


@pytest.mark.processes
def test_doctor_redacts_a_query_password(locked_redis, queue_settings):
    import io

    from vetq.api_client.doctor import run_doctor

    host_port = locked_redis.rsplit("@", 1)[1]
    settings = queue_settings.model_copy(update={"redis_url": f"redis://{host_port}?password={REDIS_PASSWORD}"})
    out = io.StringIO()
    run_doctor(0.5, settings=settings, out=out)
    checks = {json.loads(line)["check"]: json.loads(line) for line in out.getvalue().splitlines()}
    assert checks["redis"]["status"] == "ok", checks  # the URL works: Redis answers
    assert "cannot ask the workers" not in json.dumps(checks)  # the producer side parses it too
    assert REDIS_PASSWORD not in out.getvalue()
