"""The inbox's loop through the real parts: a worker (VETQ_INBOX=on) hands a needs_review
result to the stream, the inbox takes it into an item once, a reviewer resolves it,
and the job's result becomes `reviewed` for the producer waiting on it, with the
machine's result kept beside it. Nothing is written twice or half."""

from __future__ import annotations

import json
import threading

import pytest

from tests.conftest import GLOBEX, GLOBEX_DATA, Service, starts_processes
from tests.test_webhooks import SECRET, Receiver, readme_verifier, webhook_settings

WRONG = {**GLOBEX_DATA, "total": 538.20}


def take(inbox, job_id):
    """The job's item, once the inbox has taken its handoff: the worker appends it in
    the task's postrun, just after the result a client sees is stored."""
    added = 0
    for _ in range(100):
        added += inbox.sync(block_ms=100).added
        item_id = inbox.store.item_id_of(job_id)
        if item_id is not None:
            return item_id, added
    raise AssertionError(f"no item for job {job_id}")


@pytest.fixture(scope="module")
def receiver():
    """A loopback webhook receiver, the only destination the loop's settings allow."""
    server = Receiver()
    yield server
    server.close()


@pytest.fixture(scope="module")
@starts_processes
def loop(redis_server, tmp_path_factory):
    import redis

    from vetq.inbox.service import Inbox
    from vetq.inbox.store import InboxStore

    client = redis.Redis.from_url(redis_server.url)
    client.flushall()
    home = tmp_path_factory.mktemp("inbox-loop")
    settings = webhook_settings(home, inbox=True, inbox_review_verdicts=True)
    service = Service(settings, redis_server.url)
    store = InboxStore.open(settings.inbox_database_url(), lease_s=60)
    inbox = Inbox(store, client, settings, redis_url=redis_server.url)
    yield service, inbox
    service.close()
    inbox.close()
    client.close()


def test_a_needs_review_result_becomes_an_item_once_and_an_ok_result_none(loop):
    from vetq.core.redis_keys import INBOX_STREAM

    service, inbox = loop
    flagged = service.client.submit_validation(GLOBEX, WRONG, heuristics_only=True, tenant="acme", priority="high")
    ok = service.client.submit_validation(GLOBEX, GLOBEX_DATA, heuristics_only=True)
    assert flagged.result(timeout=60)["status"] == "needs_review"
    assert ok.result(timeout=60)["status"] == "ok"
    item_id, added = take(inbox, flagged.id)
    assert added == 1
    assert inbox.redis.xlen(INBOX_STREAM) == 0  # taken: acknowledged and deleted
    assert inbox.sync().added == 0
    item = inbox.store.item(item_id)
    assert (item.kind, item.tenant, item.priority, item.schema_name) == ("validate", "acme", "high", "invoice")
    assert item.document_text == GLOBEX
    assert [f.path for f in item.fields if f.flagged] == ["total"]
    assert item.machine_result["field_provenance"]["tax"][0]["text"] == "43.20"
    assert inbox.store.item_id_of(ok.id) is None


def test_the_same_handoff_read_twice_or_unreadable_adds_nothing_and_loses_nothing(loop):
    from tests.inbox_data import needs_review_result
    from vetq.core.redis_keys import DEAD_LETTER_KEY, INBOX_STREAM
    from vetq.workers.inbox_handoff import entry_of, hand_over

    _, inbox = loop
    entry = entry_of("vetq.extract", "job-twice", {"text": GLOBEX}, needs_review_result(), {})
    assert hand_over(inbox.redis, entry) and hand_over(inbox.redis, entry)
    inbox.redis.xadd(INBOX_STREAM, {"job_id": "job-bad", "task": "vetq.extract", "result": "{not json"})
    report = inbox.sync()
    assert (report.added, report.duplicates, report.unreadable) == (1, 1, 1)
    assert inbox.redis.xlen(INBOX_STREAM) == 0
    dead = json.loads(inbox.redis.lindex(DEAD_LETTER_KEY, 0))
    assert (dead["reason"], dead["job_id"]) == ("inbox_entry_unreadable", "job-bad")


def test_an_entry_taken_by_an_inbox_that_died_is_taken_again(loop):
    from tests.inbox_data import needs_review_result
    from vetq.core.redis_keys import INBOX_GROUP, INBOX_STREAM
    from vetq.inbox.ingest import StreamIngest
    from vetq.workers.inbox_handoff import entry_of, hand_over

    _, inbox = loop
    hand_over(inbox.redis, entry_of("vetq.extract", "job-orphan", {"text": GLOBEX}, needs_review_result(), {}))
    dead = StreamIngest(inbox.redis, inbox.store, consumer="died-before-commit")
    dead.run_once()  # group ready; then a read that never commits
    hand_over(inbox.redis, entry_of("vetq.extract", "job-orphan-2", {"text": GLOBEX}, needs_review_result(), {}))
    inbox.redis.xreadgroup(INBOX_GROUP, "died-before-commit", {INBOX_STREAM: ">"}, count=10)
    assert inbox.store.item_id_of("job-orphan-2") is None
    # Another inbox takes it over once it has sat idle long enough (here: at once).
    assert StreamIngest(inbox.redis, inbox.store, consumer="alive", stale_after_ms=60_000).run_once().added == 0
    assert StreamIngest(inbox.redis, inbox.store, consumer="alive", stale_after_ms=0).run_once().added == 1
    assert inbox.store.item_id_of("job-orphan-2") is not None
    # The same process, back, takes its own pending entries first.
    hand_over(inbox.redis, entry_of("vetq.extract", "job-orphan-3", {"text": GLOBEX}, needs_review_result(), {}))
    inbox.redis.xreadgroup(INBOX_GROUP, "back", {INBOX_STREAM: ">"}, count=10)
    assert StreamIngest(inbox.redis, inbox.store, consumer="back").run_once().added == 1
    assert inbox.redis.xlen(INBOX_STREAM) == 0


def test_resolving_makes_the_jobs_result_reviewed_for_the_producer_waiting_on_it(loop):
    from vetq.core.errors import InvalidInputError
    from vetq.workers.metrics import registry

    service, inbox = loop
    job = service.client.submit_validation(GLOBEX, WRONG, heuristics_only=True)
    assert job.result(timeout=60)["status"] == "needs_review"
    item_id, _ = take(inbox, job.id)
    waited: dict = {}
    waiter = threading.Thread(target=lambda: waited.update(job.result(timeout=60, until="reviewed")))
    waiter.start()

    inbox.store.add_reviewer("ana")
    ana = inbox.store.reviewer_named("ana")
    inbox.store.claim(item_id, ana)
    with pytest.raises(InvalidInputError, match="total"):
        inbox.resolve(item_id, ana, {"total": "583,20"})
    assert service.client.job(job.id).result(timeout=5)["status"] == "needs_review"  # nothing written
    before = registry().get_sample_value("vetq_inbox_reviews_total", {"schema": "invoice", "outcome": "corrected"})

    resolution = inbox.resolve(item_id, ana, {"total": 583.2})
    assert (resolution.written, resolution.error) == ("stored", None)
    waiter.join(timeout=60)
    assert waited["status"] == "reviewed"
    assert waited["data"]["total"] == 583.2
    assert waited["review"]["reviewer"] == "ana"
    assert waited["review"]["corrections"] == [{"field": "total", "machine": 538.2, "reviewed": 583.2}]
    assert waited["machine_result"]["status"] == "needs_review" and waited["machine_result"]["data"]["total"] == 538.2
    assert service.client.job(job.id).result(timeout=5, until="reviewed") == waited
    assert service.client.job(job.id).status().value == "done"
    after = registry().get_sample_value("vetq_inbox_reviews_total", {"schema": "invoice", "outcome": "corrected"})
    assert after == (before or 0) + 1
    assert registry().get_sample_value("vetq_inbox_corrections_total", {"schema": "invoice", "field": "total"}) >= 1


def test_a_callback_gets_the_needs_review_result_then_the_reviewed_one_both_signed(loop, receiver):
    """The webhook fires again on review: the worker POSTs the machine's result
    (job.finished), the inbox's resolution the reviewed one (job.reviewed), each signed."""
    from vetq.core.webhooks import verify

    service, inbox = loop
    url = receiver.url("/reviewed")
    job = service.client.submit_validation(GLOBEX, WRONG, heuristics_only=True, callback_url=url, tenant="acme")
    machine = job.result(timeout=60)
    assert machine["status"] == "needs_review"
    (finished,) = receiver.wait_for("/reviewed", 1)
    assert json.loads(finished["body"]) == {
        "event": "job.finished",
        "job_id": job.id,
        "tenant": "acme",
        "result": machine,
    }

    item_id, _ = take(inbox, job.id)
    assert inbox.store.item(item_id).callback_url == url
    inbox.store.add_reviewer("eve")
    eve = inbox.store.reviewer_named("eve")
    inbox.store.claim(item_id, eve)
    assert inbox.resolve(item_id, eve, {"total": 583.2}).written == "stored"

    _, reviewed_post = receiver.wait_for("/reviewed", 2)
    reviewed = job.result(timeout=10, until="reviewed")
    body = json.loads(reviewed_post["body"])
    assert body == {"event": "job.reviewed", "job_id": job.id, "tenant": "acme", "result": reviewed}
    assert body["result"]["data"]["total"] == 583.2 and body["result"]["machine_result"] == machine
    headers = reviewed_post["headers"]
    assert headers["X-Vetq-Job-Id"] == job.id
    assert headers["X-Vetq-Delivery"] == reviewed["review"]["id"]  # the same id should sync publish it again
    assert headers["X-Vetq-Delivery"] != finished["headers"]["X-Vetq-Delivery"]
    verify_vetq_signature = readme_verifier()
    for post in (finished, reviewed_post):
        assert verify(SECRET, post["headers"], post["body"])
        assert verify_vetq_signature(SECRET.encode(), post["headers"], post["body"])
    assert inbox.store.unwritten() == []


def test_a_result_is_replaced_once_and_only_the_machine_result_it_was_made_from(loop):
    from vetq.core.errors import ConflictError
    from vetq.workers.result_backend import store_reviewed

    service, inbox = loop
    job = service.client.submit_validation(GLOBEX, WRONG, heuristics_only=True)
    job.result(timeout=60)
    ok = service.client.submit_validation(GLOBEX, GLOBEX_DATA, heuristics_only=True)
    ok.result(timeout=60)
    first = {"format": 2, "status": "reviewed", "review": {"id": "review-1"}}
    arguments = {"replaces_status": "needs_review", "date_done": "2026-03-01T12:00:00Z", "expires_s": 600}
    assert store_reviewed(inbox.redis, job.id, first, **arguments) == "stored"
    assert store_reviewed(inbox.redis, job.id, first, **arguments) == "already_stored"
    with pytest.raises(ConflictError, match="another reviewed result"):
        store_reviewed(inbox.redis, job.id, {**first, "review": {"id": "review-2"}}, **arguments)
    with pytest.raises(ConflictError, match="not the needs_review result"):
        store_reviewed(inbox.redis, ok.id, first, **arguments)
    assert service.client.job(ok.id).result(timeout=5)["status"] == "ok"


def test_a_resolution_whose_result_cannot_be_written_yet_is_written_by_the_next_sync(loop):
    import redis

    from vetq.inbox.service import Inbox

    service, inbox = loop
    job = service.client.submit_validation(GLOBEX, WRONG, heuristics_only=True)
    job.result(timeout=60)
    item_id, _ = take(inbox, job.id)
    inbox.store.add_reviewer("ben")
    ben = inbox.store.reviewer_named("ben")
    inbox.store.claim(item_id, ben)
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    unreachable = redis.Redis(host="127.0.0.1", port=1, socket_connect_timeout=0.5, retry=Retry(NoBackoff(), 0))
    away = Inbox(inbox.store, unreachable, inbox.settings, redis_url="redis://127.0.0.1:1/0")
    resolution = away.resolve(item_id, ben, {})  # every value confirmed
    assert resolution.written is None and "once Redis answers" in resolution.error
    assert resolution.item.state == "resolved"
    assert service.client.job(job.id).result(timeout=5)["status"] == "needs_review"
    assert inbox.sync().written == 1
    reviewed = service.client.job(job.id).result(timeout=5, until="reviewed")
    assert reviewed["status"] == "reviewed" and reviewed["review"]["corrections"] == []
    assert inbox.store.unwritten() == []


def test_a_worker_without_vetq_inbox_hands_nothing_over(redis_url):
    import redis

    from tests.inbox_data import needs_review_result
    from vetq.core.redis_keys import INBOX_STREAM
    from vetq.core.settings import load_settings
    from vetq.workers.signals import _hand_to_inbox

    client = redis.Redis.from_url(redis_url)

    class Context:
        settings = load_settings()
        redis = client

    class Task:
        name = "vetq.extract"
        request = None
        app = type("App", (), {"conf": type("Conf", (), {"vetq_context": Context()})()})()

    _hand_to_inbox(task_id="j1", task=Task(), args=[{"text": GLOBEX}], retval=needs_review_result(), state="SUCCESS")
    assert client.xlen(INBOX_STREAM) == 0
    Context.settings = load_settings(inbox=True)
    _hand_to_inbox(task_id="j1", task=Task(), args=[{"text": GLOBEX}], retval=needs_review_result(), state="SUCCESS")
    assert client.xlen(INBOX_STREAM) == 1


def test_an_async_producer_waits_for_the_review_too(loop):
    import asyncio

    from vetq.api_client.aio import AsyncClient
    from vetq.core.errors import InvalidInputError

    service, inbox = loop
    inbox.store.add_reviewer("cy")
    cy = inbox.store.reviewer_named("cy")

    async def scenario():
        async with AsyncClient(service.client.redis_url, settings=service.settings) as client:
            job = await client.submit_validation(GLOBEX, WRONG, heuristics_only=True)
            waiting = asyncio.create_task(job.result(timeout=60, until="reviewed"))
            await asyncio.sleep(0)
            with pytest.raises(InvalidInputError, match="until"):
                await job.result(timeout=1, until="done")
            item_id, _ = await asyncio.to_thread(take, inbox, job.id)
            inbox.store.claim(item_id, cy)
            await asyncio.to_thread(inbox.resolve, item_id, cy, {"total": 583.2})
            return await asyncio.wait_for(waiting, 60)

    reviewed = asyncio.run(scenario())
    assert reviewed["status"] == "reviewed" and reviewed["data"]["total"] == 583.2


def test_a_review_verdict_becomes_an_item_and_the_reviewers_verdict_the_jobs_result(loop):
    """VETQ_INBOX_REVIEW_VERDICTS: a review job's verdict (status ok) goes through the
    same loop: handed over, taken into a review item, resolved, the job's result reviewed."""
    from tests.test_review_service import POS, PROPOSAL, VER, make_request
    from vetq.core.errors import InvalidInputError
    from vetq.core.llm.scripted import ScriptedLLMClient

    service, inbox = loop
    service.app.conf.vetq_context.replace_reviewer(ScriptedLLMClient([POS, VER]))
    job = service.client.submit_review(make_request().model_dump(mode="json", exclude_none=True), tenant="acme")
    machine = job.result(timeout=60)
    assert (machine["status"], machine["verdict"]) == ("ok", "MODIFY")
    item_id, _ = take(inbox, job.id)
    item = inbox.store.item(item_id)
    assert (item.kind, item.schema_name, item.tenant) == ("review", "review", "acme")
    assert [(f.path, f.flagged, f.machine_value) for f in item.fields] == [
        ("verdict", True, "MODIFY"),
        ("recommendation", False, "Add idempotency keys."),
    ]
    assert "OBJECTIVE\nDeliver order events" in item.document_text and PROPOSAL in item.document_text

    inbox.store.add_reviewer("dee")
    dee = inbox.store.reviewer_named("dee")
    inbox.store.claim(item_id, dee)
    with pytest.raises(InvalidInputError, match="verdict must be one of"):
        inbox.resolve(item_id, dee, {"verdict": "MAYBE"})
    assert service.client.job(job.id).result(timeout=5) == machine  # nothing written
    recommendation = "Keep it: the outbox already makes delivery atomic."
    resolution = inbox.resolve(item_id, dee, {"verdict": "KEEP", "recommendation": recommendation})
    assert (resolution.written, resolution.error) == ("stored", None)

    reviewed = job.result(timeout=10, until="reviewed")
    assert (reviewed["status"], reviewed["verdict"], reviewed["recommendation"]) == ("reviewed", "KEEP", recommendation)
    assert reviewed["review"]["reviewer"] == "dee"
    assert reviewed["review"]["corrections"] == [
        {"field": "verdict", "machine": "MODIFY", "reviewed": "KEEP"},
        {"field": "recommendation", "machine": "Add idempotency keys.", "reviewed": recommendation},
    ]
    assert reviewed["machine_result"] == machine
    assert reviewed["meta"] == machine["meta"] and reviewed["trace_id"] == machine["trace_id"] == job.trace_id
    assert inbox.store.item(item_id).state == "resolved" and inbox.store.unwritten() == []
