"""`vetq doctor`: each problem of a deployment named, one JSON line per check."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import pytest

from vetq.api_client.doctor import check_tls_url, run_doctor
from vetq.core.settings import load_settings


def _run(settings, timeout=1.0) -> tuple[int, dict[str, dict]]:
    out = io.StringIO()
    code = run_doctor(timeout, settings=settings, out=out)
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    for line in lines:
        assert set(line) == {"check", "status", "detail"}
        assert line["status"] in ("ok", "warning", "problem")
    return code, {line["check"]: line for line in lines}


def test_healthy_embedded_setup_with_a_worker(service, redis_server, tmp_path):
    # the running embedded Redis is found through VETQ_HOME, with no VETQ_REDIS_URL
    settings = load_settings(home=redis_server.home)
    code, checks = _run(settings, timeout=3.0)
    assert code == 0, checks
    assert set(checks) == {
        "redis",
        "tls",
        "eviction_policy",
        "persistence",
        "visibility_timeout",
        "serializer",
        "result_memory",
        "workers_extract",
        "workers_review",
    }
    assert {c["status"] for c in checks.values()} == {"ok"}, checks


@pytest.mark.processes
def test_a_careless_redis_and_no_worker_are_named(tmp_path):
    import redis

    from vetq.workers.embedded_redis import EmbeddedRedis

    with EmbeddedRedis(tmp_path / "careless", role="tests") as server:
        client = redis.Redis.from_url(server.url)
        client.config_set("maxmemory-policy", "allkeys-lru")
        client.config_set("appendonly", "no")
        client.config_set("save", "")
        settings = load_settings(home=tmp_path / "home", redis_url=server.url)
        code, checks = _run(settings, timeout=0.5)
    assert code == 2
    assert checks["redis"]["status"] == "ok"
    assert checks["eviction_policy"]["status"] == "problem" and "allkeys-lru" in checks["eviction_policy"]["detail"]
    assert checks["persistence"]["status"] == "warning"
    assert checks["workers_extract"]["status"] == "problem" and "extract" in checks["workers_extract"]["detail"]
    assert checks["workers_review"]["status"] == "problem" and "review" in checks["workers_review"]["detail"]


def _store_results(client, count: int, *, ttl_s: int, written_ago_s: int, value_bytes: int = 1000) -> None:
    from vetq.core.redis_keys import CELERY_RESULT_PREFIX, submitted_key

    pipe = client.pipeline(transaction=False)
    for i in range(count):
        job_id = f"{written_ago_s}-{i}"
        left = ttl_s - written_ago_s
        pipe.set(CELERY_RESULT_PREFIX + job_id, json.dumps({"status": "SUCCESS", "pad": "x" * value_bytes}), ex=left)
        pipe.set(submitted_key(job_id), 1, ex=left)
    pipe.execute()


@pytest.mark.processes
def test_results_that_would_outgrow_maxmemory_are_named(tmp_path):
    # 200 results written in the last minute: about 200 an hour. Kept 30 days, at ~1.2 KB
    # each with their submitted marks, they would hold ~170 MB at steady state.
    import redis

    from vetq.api_client.doctor import result_memory_check
    from vetq.workers.embedded_redis import EmbeddedRedis

    month, hour = 30 * 24 * 3600, 3600

    def check(ttl_s: int, written_ago_s: int) -> dict:
        client.config_set("maxmemory", 0)
        client.flushdb()
        _store_results(client, 200, ttl_s=ttl_s, written_ago_s=written_ago_s)
        client.config_set("maxmemory", 50_000_000)
        return result_memory_check(client, load_settings(home=tmp_path, result_ttl_s=ttl_s))

    with EmbeddedRedis(tmp_path / "r", role="tests") as server:
        client = redis.Redis.from_url(server.url)
        kept_a_month = check(month, written_ago_s=30)
        kept_an_hour = check(hour, written_ago_s=30)  # ~240 KB at steady state
        old = check(month, written_ago_s=2 * hour)  # none written in the last hour: no growth
    assert kept_a_month["status"] == "warning", kept_a_month
    assert "maxmemory (50.0 MB)" in kept_a_month["detail"] and "VETQ_RESULT_TTL_S" in kept_a_month["detail"]
    assert kept_an_hour["status"] == "ok", kept_an_hour
    assert old["status"] == "ok" and "about 0 results/s" in old["detail"], old


def test_unsafe_settings_and_nothing_running(tmp_path):
    # A deliberately unsafe deployment (a format other than JSON accepted, short
    # visibility timeout): the doctor must name each problem. No worker is started with
    # these settings, and no message is ever decoded.
    settings = load_settings(
        home=tmp_path / "home",
        task_time_limit_s=100,
        visibility_timeout_s=50,
        accept_content=["json", "msgpack"],
        redis_url="redis://:s3cr3tpass@127.0.0.1:1/0",
    )
    code, checks = _run(settings, timeout=0.3)
    assert code == 2
    assert checks["redis"]["status"] == "problem"
    assert checks["visibility_timeout"]["status"] == "problem"
    assert checks["serializer"]["status"] == "problem" and "msgpack" in checks["serializer"]["detail"]
    assert "s3cr3tpass" not in json.dumps(checks)

    code, checks = _run(load_settings(home=tmp_path / "empty-home"))
    assert code == 2 and list(checks) == ["redis"] and "nothing runs" in checks["redis"]["detail"]


@pytest.mark.parametrize(
    ("url", "status"),
    [
        ("rediss://:pw@redis.example.com:6380/0?ssl_cert_reqs=none", "warning"),
        ("rediss://:pw@redis.example.com:6380/0?ssl_cert_reqs=CERT_NONE", "warning"),
        ("rediss://:pw@redis.example.com:6380/0", "ok"),
        ("rediss://:pw@redis.example.com:6380/0?ssl_cert_reqs=required&ssl_ca_certs=/etc/ca.pem", "ok"),
        ("redis://127.0.0.1:6379/0", "ok"),
        ("redis://:pw@redis.example.com:6379/0", "warning"),
        ("http://redis.example.com", "problem"),
    ],
)
def test_tls_settings_of_the_url(url, status):
    check = check_tls_url(url)
    assert check["check"] == "tls" and check["status"] == status, check
    assert ":pw@" not in check["detail"]


@pytest.mark.processes
def test_cli_doctor_prints_json_lines_and_exits_1_on_a_problem(tmp_path):
    env = {
        **os.environ,
        "VETQ_REDIS_URL": "rediss://:topsecret@127.0.0.1:1/0?ssl_cert_reqs=none",
        "VETQ_HOME": str(tmp_path / "home"),
    }
    out = subprocess.run(
        [sys.executable, "-m", "vetq.api_client.cli", "doctor", "--timeout", "0.3"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2, out.stderr
    checks = {json.loads(line)["check"]: json.loads(line) for line in out.stdout.splitlines()}
    assert checks["redis"]["status"] == "problem" and checks["tls"]["status"] == "warning"
    assert "topsecret" not in out.stdout + out.stderr
