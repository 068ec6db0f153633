"""Idempotent submission against a real Redis: the same key gives the same job and one
message; another request under the key is IDEMPOTENCY_CONFLICT; a send that failed or
a producer that died before sending never leaves the key naming a job nobody runs."""

from __future__ import annotations

import json
import time

import pytest
import redis

from tests.conftest import GLOBEX, GLOBEX_DATA
from vetq.api_client import idempotency
from vetq.api_client.client import Client
from vetq.core.errors import IdempotencyConflictError
from vetq.core.redis_keys import EXTRACT_QUEUE, REVIEW_QUEUE, submitted_key


@pytest.fixture
def client(redis_url, queue_settings):
    with Client(redis_url, settings=queue_settings) as producer:  # no worker: jobs stay queued
        yield producer


def queued(redis_url: str, queue: str = EXTRACT_QUEUE) -> int:
    return redis.Redis.from_url(redis_url).llen(queue)


def test_the_same_key_gives_the_same_job_and_sends_one_message(client, redis_url):
    first = client.submit_extraction(GLOBEX, idempotency_key="order-1")
    again = client.submit_extraction(GLOBEX, idempotency_key="order-1")
    assert again.id == first.id and again.trace_id == first.trace_id
    assert queued(redis_url) == 1
    assert again.status() == "queued"
    other = client.submit_extraction(GLOBEX, idempotency_key="order-2")
    plain = client.submit_extraction(GLOBEX)
    assert len({first.id, other.id, plain.id}) == 3 and queued(redis_url) == 3


def test_a_different_request_under_a_used_key_is_a_conflict_and_sends_nothing(client, redis_url):
    first = client.submit_extraction(GLOBEX, idempotency_key="order-1")
    with pytest.raises(IdempotencyConflictError, match=first.id) as refused:
        client.submit_extraction(GLOBEX + "\nA different document.", idempotency_key="order-1")
    assert refused.value.code == "IDEMPOTENCY_CONFLICT"
    with pytest.raises(IdempotencyConflictError):
        client.submit_validation(GLOBEX, dict(GLOBEX_DATA), idempotency_key="order-1")
    assert queued(redis_url) == 1
    # A trace id is not the request: a retry that draws a new one is the same request.
    assert client.submit_extraction(GLOBEX, idempotency_key="order-1", trace_id="f" * 32).id == first.id


def test_keys_are_kept_per_tenant_and_hashed(client, redis_url):
    acme = client.submit_extraction(GLOBEX, idempotency_key="customer@example.com", tenant="acme")
    globex = client.submit_extraction(GLOBEX, idempotency_key="customer@example.com", tenant="globex")
    assert acme.id != globex.id
    keys = [k.decode() for k in redis.Redis.from_url(redis_url).keys("vetq:idempotency:*")]
    assert len(keys) == 2 and not any("customer@example.com" in k for k in keys)
    ttl = redis.Redis.from_url(redis_url).ttl(keys[0])
    assert 0 < ttl <= client.settings.result_ttl_s


def test_a_review_takes_a_key_too(client, redis_url):
    from tests.test_review_service import make_request

    request = make_request().model_dump(mode="json", exclude_none=True)
    first = client.submit_review(request, idempotency_key="rfc-7")
    assert client.submit_review(request, idempotency_key="rfc-7").id == first.id
    assert queued(redis_url, REVIEW_QUEUE) == 1


def test_a_failed_send_gives_the_key_back(client, redis_url, monkeypatch):
    from kombu.exceptions import OperationalError

    def broken(items):
        raise OperationalError("Redis went away")

    monkeypatch.setattr(client, "_publish_pipelined", broken)
    monkeypatch.setitem(client.app.conf.task_publish_retry_policy, "max_retries", 0)
    with pytest.raises(Exception, match=r"went away|unavailable|reach"):
        client.submit_extraction(GLOBEX, idempotency_key="order-9")
    monkeypatch.undo()
    job = client.submit_extraction(GLOBEX, idempotency_key="order-9")  # the retry sends it
    assert queued(redis_url) == 1 and job.status() == "queued"


def test_a_claim_whose_producer_died_before_sending_is_sent_by_the_retry(client, redis_url):
    """A claim older than TAKEOVER_S whose job was never recorded as submitted: the
    retry sends that job, under the id the key names."""
    from vetq.core.queue import TASK_EXTRACT

    task, payload, _trace_id = client._prepare({"kind": "extract", "text": GLOBEX})
    payload |= {"trace_id": "a" * 32}
    orphan = idempotency.Claim("order-5", None, idempotency.fingerprint(task, payload), "b" * 32, "a" * 32, "extract")
    r = redis.Redis.from_url(redis_url)
    r.set(orphan.redis_key, orphan.record(time.time() - idempotency.TAKEOVER_S - 1))
    assert task == TASK_EXTRACT and not r.exists(submitted_key("b" * 32))

    job = client.submit_extraction(GLOBEX, idempotency_key="order-5")
    assert job.id == "b" * 32 and job.trace_id == "a" * 32
    assert queued(redis_url) == 1 and r.exists(submitted_key(job.id))
    message = json.loads(r.lindex(EXTRACT_QUEUE, 0))
    assert message["headers"]["id"] == "b" * 32

    # A young claim is a send in progress: the retry waits for it, it does not send again.
    young = idempotency.Claim("order-6", None, orphan.fingerprint, "c" * 32, "a" * 32, "extract")
    r.set(young.redis_key, young.record())
    assert client.submit_extraction(GLOBEX, idempotency_key="order-6").id == "c" * 32
    assert queued(redis_url) == 1


def test_batch_lines_carry_their_own_keys(client, redis_url):
    earlier = client.submit_extraction(GLOBEX, idempotency_key="line-a")
    batch = client.submit_batch(
        [
            {"text": GLOBEX, "idempotency_key": "line-a"},  # names the job submitted above
            {"text": GLOBEX + "\nSecond.", "idempotency_key": "line-b"},
            {"text": GLOBEX + "\nOther.", "idempotency_key": "line-a"},  # another request: refused in its place
            {"text": GLOBEX + "\nNo key."},
            {"text": GLOBEX, "idempotency_key": "x" * 201},
        ]
    )
    entries = batch.entries
    assert entries[0].id == earlier.id
    assert entries[2]["error"]["code"] == "IDEMPOTENCY_CONFLICT"
    assert entries[4]["error"]["code"] == "INVALID_INPUT" and "idempotency_key" in entries[4]["error"]["message"]
    assert queued(redis_url) == 3  # the earlier job, line-b and the unkeyed line
    assert [job.id for job in client.batch(batch.id).jobs] == [entries[0].id, entries[1].id, entries[3].id]
    again = client.submit_batch([{"text": GLOBEX + "\nSecond.", "idempotency_key": "line-b"}])
    assert again.entries[0].id == entries[1].id and queued(redis_url) == 3
    with pytest.raises(Exception, match="idempotency_key"):
        client.submit_batch([{"text": GLOBEX}], idempotency_key="whole-batch")


def test_the_async_client_takes_the_same_key(redis_url, queue_settings):
    import asyncio

    from vetq.api_client.aio import AsyncClient

    async def run():
        async with AsyncClient(redis_url, settings=queue_settings) as aclient:
            first = await aclient.submit_extraction(GLOBEX, idempotency_key="async-1", priority="low")
            again = await aclient.submit_extraction(GLOBEX, idempotency_key="async-1", priority="low")
            return first.id, again.id

    first, again = asyncio.run(run())
    assert first == again and queued(redis_url) == 1


def test_the_cli_takes_the_key_and_checks_every_option_first(redis_url, tmp_path):
    from tests.test_cli import vetq

    env = {"VETQ_REDIS_URL": redis_url, "VETQ_HOME": str(tmp_path)}
    args = ("extract", "--no-wait", "--idempotency-key", "invoice-77", "--priority", "high", "--tenant", "acme")
    first = vetq(*args, input=GLOBEX, env=env)
    again = vetq(*args, input=GLOBEX, env=env)
    assert first.returncode == 0 and again.returncode == 0, first.stdout + first.stderr
    assert json.loads(first.stdout)["job_id"] == json.loads(again.stdout)["job_id"]
    assert queued(redis_url) == 1
    bad = vetq("extract", "--no-wait", "--priority", "urgent", input=GLOBEX, env=env)
    assert bad.returncode == 2 and "priority" in json.loads(bad.stdout)["error"]["message"]
    assert queued(redis_url) == 1
