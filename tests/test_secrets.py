"""Secrets never leave: API keys and Redis passwords planted in the environment and
in URLs appear in no log line, result or error message."""

from __future__ import annotations

import json

import pytest
import redis

from core.logging import configure_logging, get_logger, redact_text
from eval.fake_provider import FakeProvider
from tests.conftest import GLOBEX, GLOBEX_DATA, Service

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
def locked_redis(tmp_path):
    from workers.embedded_redis import EmbeddedRedis

    server = EmbeddedRedis(tmp_path / "locked", role="tests").start()
    redis.Redis.from_url(server.url).config_set("requirepass", REDIS_PASSWORD)
    host_port = server.url.rsplit("@", 1)[1]  # the embedded URL carries the home's own password
    yield f"redis://:{REDIS_PASSWORD}@{host_port}"
    redis.Redis.from_url(f"redis://:{REDIS_PASSWORD}@{host_port}").config_set("requirepass", "")
    server.stop()


def test_no_secret_in_logs_results_or_errors(locked_redis, queue_settings, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    configure_logging("INFO", force=True)
    with FakeProvider() as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url_openai)
        # A provider that echoes the key it was given in its error, as some do.
        fake.push_fault({"kind": "5xx", "status": 401, "body": {"error": {"message": f"Incorrect API key provided: {API_KEY}"}}})
        settings = queue_settings.model_copy(update={"generator": "openai:fake-generator", "critic": "openai:fake-critic"})
        svc = Service(settings, locked_redis)
        try:
            failed = svc.client.submit_extraction(GLOBEX).result(timeout=60)
            ok = svc.client.submit_validation(GLOBEX, GLOBEX_DATA, heuristics_only=True).result(timeout=60)
        finally:
            svc.close()
    everything = json.dumps([failed, ok]) + capsys.readouterr().err
    assert failed["status"] == "error" and failed["error_code"] == "PROVIDER_HTTP_ERROR"
    assert "401" in failed["error_message"]
    assert ok["status"] == "ok"
    assert API_KEY not in everything
    assert REDIS_PASSWORD not in everything


def test_no_worker_error_does_not_print_the_redis_password(locked_redis, queue_settings):
    from api_client.client import Client, NoWorkerError

    with Client(locked_redis, settings=queue_settings) as client:
        job = client.submit_validation(GLOBEX, GLOBEX_DATA, heuristics_only=True)
        with pytest.raises(NoWorkerError) as info:
            job.result(timeout=30)
    assert REDIS_PASSWORD not in info.value.message
