"""Poison messages: refused once, recorded in `vetq:dead`, and the worker keeps serving."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
from kombu import Connection, Exchange, Producer, Queue

from tests.conftest import GLOBEX, GLOBEX_DATA
from vetq.api_client.admin import Admin
from vetq.workers import dead_letter

SECRET_KEY = "sk-ant-api03-PLANTEDSECRETabcdefghijklmnop"
SECRET_PASSWORD = "hunter2planted"
CELERY_EMBED = {"callbacks": None, "errbacks": None, "chain": None, "chord": None}


def _publish(url: str, body, *, headers: dict, serializer: str | None = None, content_type: str | None = None) -> None:
    exchange = Exchange("extract", type="direct")
    with Connection(url) as conn:
        producer = Producer(conn, exchange=exchange, routing_key="extract")
        options = (
            {"serializer": serializer} if serializer else {"content_type": content_type, "content_encoding": "utf-8"}
        )
        producer.publish(
            body, headers={"lang": "py", **headers},
            declare=[Queue("extract", exchange, routing_key="extract")], **options,
        )  # fmt: skip


def _entries(service) -> list[dict]:
    return list(Admin.of(service.client).dead_letters(limit=1000))


def _wait_for(predicate, timeout: float = 20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    return predicate()


def test_the_client_reads_the_list_the_workers_write():
    assert dead_letter.DEAD_LETTER_KEY == "vetq:dead"


def test_preview_is_short_and_redacted():
    body = ("x" * 150) + f" key={SECRET_KEY} url=redis://:{SECRET_PASSWORD}@host:6379/0 " + ("y" * 5000)
    text = dead_letter.preview(body)
    assert len(text) <= dead_letter.PREVIEW_CHARS
    assert "PLANTEDSECRET" not in text and SECRET_PASSWORD not in text
    # a secret straddling the cut is masked before cutting, not left half visible
    assert "sk-ant-api03-PLANT" not in dead_letter.preview(("z" * 190) + SECRET_KEY)
    assert dead_letter.preview(b"\x80\x04\x95binary") and dead_letter.preview(None) == ""


def test_record_caps_the_list(redis_url):
    import redis

    client = redis.Redis.from_url(redis_url)
    for i in range(7):
        dead_letter.record(client, dead_letter.make_entry(reason="decode_error", job_id=f"j{i}"), cap=5)
    entries = list(dead_letter.read(client, limit=100))
    assert [e["job_id"] for e in entries] == ["j6", "j5", "j4", "j3", "j2"]


def test_poison_messages_are_dead_lettered_once_and_the_worker_keeps_serving(service, redis_url):
    poison_text = (
        f"Invoice from Evil Corp, api key {SECRET_KEY}, redis://admin:{SECRET_PASSWORD}@10.0.0.1:6379 " + "z" * 3000
    )

    # 1. pickled (ContentDisallowed: only JSON is accepted)
    _publish(
        redis_url,
        ([{"kind": "validate", "text": poison_text, "data": {}}], {}, CELERY_EMBED),
        serializer="pickle",
        headers={"task": "vetq.validate", "id": "dl-pickled"},
    )
    # 2. a garbage body under a JSON content type (DecodeError)
    _publish(
        redis_url,
        f"{{not json at all {SECRET_KEY}".encode(),
        content_type="application/json",
        headers={"task": "vetq.extract", "id": "dl-garbage"},
    )
    # 3. an unknown task name
    service.client.app.send_task("vetq.no_such_task", args=[{"text": "x"}], task_id="dl-unknown", queue="extract")
    # 4. a payload that is not a JSON object: the job ends INVALID_INPUT and is also a dead letter
    service.client.app.send_task(
        "vetq.extract", args=[f"just a string {SECRET_KEY}"], task_id="dl-not-object", queue="extract"
    )
    # 5. a JSON body Celery's own parsing chokes on (a bare number)
    _publish(redis_url, b"42", content_type="application/json", headers={"task": "vetq.extract", "id": "dl-number"})

    # the worker keeps serving: a normal job after them completes
    job = service.client.submit_validation(GLOBEX, GLOBEX_DATA, heuristics_only=True)
    assert job.result(timeout=30)["status"] == "ok"
    not_object = service.client.job("dl-not-object").result(timeout=30)
    assert not_object["status"] == "error" and not_object["error"]["code"] == "INVALID_INPUT"

    expected = {"dl-pickled", "dl-garbage", "dl-unknown", "dl-not-object", "dl-number"}
    entries = _wait_for(
        lambda: (
            [e for e in _entries(service) if e.get("job_id") in expected]
            if expected <= {e.get("job_id") for e in _entries(service)}
            else None
        )
    )
    assert entries, _entries(service)
    time.sleep(1.0)  # nothing is retried or recorded a second time
    entries = _entries(service)
    by_id: dict[str, list[dict]] = {}
    for entry in entries:
        by_id.setdefault(entry.get("job_id"), []).append(entry)
    for job_id in expected:
        assert len(by_id.get(job_id, [])) == 1, (job_id, entries)
    reasons = {job_id: by_id[job_id][0]["reason"] for job_id in expected}
    assert reasons == {
        "dl-pickled": "content_disallowed",
        "dl-garbage": "decode_error",
        "dl-unknown": "unknown_task",
        "dl-not-object": "invalid_input",
        "dl-number": "malformed_message",
    }
    for entry in entries:
        assert set(entry) >= {"time", "reason", "task", "job_id", "queue", "content_type", "preview"}
        assert len(entry["preview"]) <= dead_letter.PREVIEW_CHARS
    assert by_id["dl-pickled"][0]["content_type"] == "application/x-python-serialize"
    assert by_id["dl-unknown"][0]["task"] == "vetq.no_such_task"
    assert by_id["dl-unknown"][0]["queue"] == "extract"
    assert by_id["dl-not-object"][0]["task"] == "vetq.extract"
    dump = json.dumps(entries)
    assert "PLANTEDSECRET" not in dump and SECRET_PASSWORD not in dump
    assert "z" * 300 not in dump  # never the full document

    # never retried: the poison is gone from the queue and nothing waits unacknowledged
    import redis

    client = redis.Redis.from_url(redis_url)
    assert client.llen("extract") == 0
    unacked = [json.loads(v) for v in client.hgetall("unacked").values()]
    assert not [m for m in unacked if (m[0].get("headers") or {}).get("id") in expected]
    assert service.client.app.AsyncResult("dl-pickled").state == "PENDING"  # never ran

    # `vetq dead list`: newest first, one JSON object per line
    env = {**os.environ, "VETQ_REDIS_URL": redis_url, "VETQ_HOME": str(service.settings.home)}

    def dead(*args: str) -> subprocess.CompletedProcess:
        command = [sys.executable, "-m", "vetq.api_client.cli", "dead", *args]
        return subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)

    out = dead("list")
    assert out.returncode == 0, out.stderr
    lines = [json.loads(line) for line in out.stdout.splitlines() if line.strip()]
    assert [e["job_id"] for e in lines] == [e["job_id"] for e in entries]
    times = [e["time"] for e in lines]
    assert times == sorted(times, reverse=True)
    assert "PLANTEDSECRET" not in out.stdout and SECRET_PASSWORD not in out.stdout
    limited = dead("list", "--limit", "2")
    assert [json.loads(line)["job_id"] for line in limited.stdout.splitlines()] == [e["job_id"] for e in entries[:2]]
    # `vetq dead redeliver`: a job with no undelivered webhook says so, by its id, exit 2
    nothing = dead("redeliver", "dl-never-hooked")
    (line,) = [json.loads(line) for line in nothing.stdout.splitlines()]
    assert nothing.returncode == 2 and line["job_id"] == "dl-never-hooked" and line["error"]["code"] == "NOT_FOUND"


@pytest.mark.parametrize("args", [[], [{"text": "a"}, {"text": "b"}]])
def test_arguments_that_do_not_fit_the_task_are_dead_lettered(service, args):
    service.client.app.send_task("vetq.extract", args=args, task_id="dl-arity", queue="extract")
    assert service.client.job("dl-arity").result(timeout=30)["status"] == "error"
    entries = _wait_for(lambda: [e for e in _entries(service) if e.get("job_id") == "dl-arity"])
    assert len(entries) == 1 and entries[0]["reason"] == "bad_arguments"


class _BuggyReviewer:
    """A reviewer whose code has a bug: a TypeError worded like a signature mismatch."""

    provider, model = "scripted", "buggy"

    def complete(self, request):
        raise TypeError("render() missing 1 required positional argument: 'value'")


def test_a_type_error_inside_review_code_is_not_filed_as_bad_arguments(service):
    from tests.test_review_service import make_request

    service.app.conf.vetq_context.replace_reviewer(_BuggyReviewer())
    request = make_request().model_dump(mode="json", exclude_none=True)
    service.client.app.send_task("vetq.review", args=[request], task_id="dl-bug", queue="review")
    outcome = service.client.job("dl-bug").result(timeout=30)
    assert outcome["error"]["code"] == "INTERNAL_ERROR" and "TypeError" in outcome["error"]["message"], outcome
    # A message that really does not fit, sent after: once its entry is there, the bug's would be too.
    service.client.app.send_task("vetq.review", args=[request, "extra"], task_id="dl-bug-arity", queue="review")
    assert _wait_for(lambda: [e for e in _entries(service) if e.get("job_id") == "dl-bug-arity"])
    reasons = {e["job_id"]: e["reason"] for e in _entries(service)}
    assert reasons["dl-bug-arity"] == "bad_arguments"
    assert "dl-bug" not in reasons
