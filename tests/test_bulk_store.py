"""The bulk lane's Redis state (workers/bulk_store.py) on a real Redis: parking and
resolving are one step each, so a job is never left parked on an answered request,
an answer is applied once, and two jobs asking the same thing share one request."""

from __future__ import annotations

import redis

from vetq.core.llm.types import LLMRequest, LLMResponse, Message, Usage
from vetq.core.redis_keys import (
    BULK_LOCK_KEY,
    BULK_MODELS_KEY,
    BULK_SUBMISSIONS_KEY,
    BULK_WAKE_KEY,
    bulk_job_key,
    bulk_request_key,
)
from vetq.workers.bulk_store import BulkStore

MODEL = "openai:gpt-x"


def store_on(url: str) -> BulkStore:
    return BulkStore(redis.Redis.from_url(url), resolved_ttl_s=600)


def ask(text: str = "question") -> LLMRequest:
    return LLMRequest(system="s", messages=(Message(role="user", content=text),))


def park(store: BulkStore, job_id: str, digest: str = "d1", *, create: bool = True, deadline=None, fallback=False):
    new = {"request": ask().model_dump_json(), "stage": "generator", "reservation": f"r-{job_id}"} if create else None
    return store.park(
        job_id=job_id,
        digest=digest,
        model_key=MODEL,
        new_request=new,
        deadline=deadline,
        fallback=fallback,
        job={"task": "vetq.extract", "queue": "extract", "payload": '{"text": "t"}', "headers": "{}"},
    )


def claim(store: BulkStore, submission: str = "sub-1", digests=("d1",), token: str | None = None):
    """Claim `digests` for `submission` as the coordinator holding the lock (or `token`)."""
    lock = store.redis.lock(BULK_LOCK_KEY, timeout=30, blocking=False, thread_local=False)
    if not store.redis.exists(BULK_LOCK_KEY):
        assert lock.acquire()
    held = token if token is not None else store.redis.get(BULK_LOCK_KEY)
    return store.claim(
        held,
        submission,
        MODEL,
        list(digests),
        vetq_batches=["vb-1"],
        marked=1.0,
        create_by=2.0,
        settled_by=3.0,
        check_in_s=0,
    )


def test_the_first_job_creates_the_request_and_the_next_joins_it(redis_url):
    store = store_on(redis_url)
    assert park(store, "job-a", deadline=2_000_000_000.0) == "created"
    assert park(store, "job-b", deadline=1_900_000_000.0, fallback=True) == "joined"
    stored = store.get("d1")
    assert stored is not None and stored.state == "pending"
    assert stored.owner == "job-a" and stored.reservation == "r-job-a"
    assert stored.deadline == 1_900_000_000.0 and stored.fallback  # the earliest, and any fallback
    assert stored.request() == ask()
    assert [d for d, _ in store.pending(MODEL, 10)] == ["d1"]
    assert store.pending_models() == [MODEL]
    parked = store.parked("job-b")
    assert parked is not None and parked.digest == "d1" and parked.payload == {"text": "t"}


def test_resolving_wakes_every_waiter_once_and_drops_the_request_body(redis_url):
    store = store_on(redis_url)
    park(store, "job-a")
    park(store, "job-b")
    answer = LLMResponse(text="{}", usage=Usage.of(10, 5))
    assert store.resolve("d1", "done", response=answer.model_dump_json()) == 2
    assert sorted(store.woken(10)) == ["job-a", "job-b"]
    stored = store.get("d1")
    assert stored is not None and stored.state == "done" and stored.response() == answer
    assert stored.request() is None
    assert 0 < store.redis.ttl(bulk_request_key("d1")) <= 600
    # Applied once: a second answer for the same request changes nothing.
    assert store.resolve("d1", "failed", error="{}") == -1
    assert store.get("d1").state == "done"
    assert store.redis.llen(BULK_WAKE_KEY) == 2


def test_a_job_arriving_after_the_answer_is_not_parked(redis_url):
    store = store_on(redis_url)
    park(store, "job-a")
    store.resolve("d1", "done", response=LLMResponse(text="{}").model_dump_json())
    assert park(store, "job-late", create=False) == "resolved"
    assert park(store, "job-later") == "resolved"
    assert not store.redis.exists(bulk_job_key("job-late"))
    assert not store.redis.exists(bulk_job_key("job-later"))
    assert store.woken(10) == ["job-a"]


def test_joining_a_request_that_is_gone_runs_the_job_again(redis_url):
    store = store_on(redis_url)
    assert park(store, "job-a", create=False) == "resolved"
    assert store.get("d1") is None


def test_a_requeued_request_goes_back_to_pending_with_its_count(redis_url):
    store = store_on(redis_url)
    park(store, "job-a")
    assert claim(store) == ["d1"]
    assert store.record_batch("batch-1", MODEL, ["d1"], ["vb-1"], next_poll_s=0, submission="sub-1") == "recorded"
    assert store.pending(MODEL, 10) == []
    stored = store.get("d1")
    assert stored.state == "submitted" and stored.fields["batch"] == "batch-1"
    assert store.due_batches() == ["batch-1"]
    assert store.vetq_batch_batches("vb-1") == ["batch-1"]
    store.requeue([stored], counter="resubmits")
    again = store.get("d1")
    assert again.state == "pending" and again.resubmits == 1 and again.fields["batch"] == ""
    assert [d for d, _ in store.pending(MODEL, 10)] == ["d1"]


def test_a_closed_batch_is_no_longer_polled(redis_url):
    store = store_on(redis_url)
    park(store, "job-a")
    claim(store)
    store.record_batch("batch-1", MODEL, ["d1"], [], next_poll_s=0, submission="sub-1")
    store.update_batch("batch-1", next_poll_s=None, state="ended", counts={"succeeded": 1})
    assert store.due_batches() == []
    record = store.batch("batch-1")
    assert record["state"] == "ended" and record["counts"] == {"succeeded": 1} and record["polls"] == 1


def test_publishing_a_woken_job_forgets_it(redis_url):
    store = store_on(redis_url)
    park(store, "job-a")
    store.resolve("d1", "realtime", reason="expired")
    store.woke(store.parked("job-a"))
    assert store.woken(10) == [] and store.parked("job-a") is None


def test_a_woken_job_that_parked_again_before_it_was_forgotten_stays_parked(redis_url):
    """The coordinator publishes a woken job, the job runs at once and parks on its
    next call, and only then does the coordinator forget what it published: the new
    parking must survive, or the job would never be woken again."""
    store = store_on(redis_url)
    park(store, "job-a")
    store.resolve("d1", "done", response=LLMResponse(text="{}").model_dump_json())
    published = store.parked("job-a")
    assert park(store, "job-a", digest="d2") == "created"  # the re-run, on its next call
    store.woke(published)
    assert store.woken(10) == []
    again = store.parked("job-a")
    assert again is not None and again.digest == "d2"
    assert store.resolve("d2", "done", response=LLMResponse(text="{}").model_dump_json()) == 1
    assert store.woken(10) == ["job-a"]


def test_an_emptied_model_leaves_the_scan(redis_url):
    store = store_on(redis_url)
    park(store, "job-a")
    store.forget_pending(MODEL, ["d1"])
    assert store.pending_models() == [] and not store.redis.sismember(BULK_MODELS_KEY, MODEL)


# --------------------------------------------------------------------------- submissions


def test_only_the_lock_holder_claims_and_a_claimed_request_is_pending_no_more(redis_url):
    store = store_on(redis_url)
    park(store, "job-a")
    park(store, "job-b", digest="d2")
    assert claim(store, token="a-coordinator-whose-lease-ran-out") is None  # fenced: nothing claimed
    assert store.get("d1").state == "pending" and store.submission("sub-1") is None
    assert claim(store, digests=("d1", "d2", "gone")) == ["d1", "d2"]
    assert store.pending(MODEL, 10) == []
    assert store.get("d1").state == "submitting" and store.get("d1").fields["submission"] == "sub-1"
    assert claim(store, "sub-2", ("d1",)) == []  # a request is in one submission at a time
    submission = store.submission("sub-1")
    assert submission is not None and submission.digests == ["d1", "d2"] and submission.vetq_batches == ["vb-1"]
    assert (submission.marked, submission.create_by, submission.settled_by) == (1.0, 2.0, 3.0)
    assert store.due_submissions() == ["sub-1"]
    # A job asking the same thing meanwhile joins it; an answer for it resolves it.
    assert park(store, "job-c", create=False) == "joined"
    assert store.resolve("d2", "failed", error="{}") == 1


def test_a_released_submission_gives_back_only_what_it_still_claims(redis_url):
    store = store_on(redis_url)
    park(store, "job-a")
    park(store, "job-b", digest="d2")
    claim(store, digests=("d1", "d2"))
    store.resolve("d2", "failed", error="{}")
    submission = store.submission("sub-1")
    assert store.release(submission) == 1
    assert [d for d, _ in store.pending(MODEL, 10)] == ["d1"] and store.get("d1").state == "pending"
    assert store.get("d2").state == "failed"
    assert store.submission("sub-1") is None and not store.redis.zcard(BULK_SUBMISSIONS_KEY)
    assert store.pending_models() == [MODEL]


def test_recording_a_batch_twice_or_after_a_release_changes_no_request(redis_url):
    store = store_on(redis_url)
    park(store, "job-a")
    claim(store)
    assert store.record_batch("batch-1", MODEL, ["d1"], [], next_poll_s=0, submission="sub-1") == "recorded"
    assert store.record_batch("batch-1", MODEL, ["d1"], [], next_poll_s=0, submission="sub-1") == "known"
    park(store, "job-b", digest="d2")
    claim(store, "sub-2", ("d2",))
    store.release(store.submission("sub-2"))
    assert claim(store, "sub-3", ("d2",)) == ["d2"]
    # sub-2's create landed after all: the batch is kept (polled), the request stays sub-3's.
    assert store.record_batch("batch-2", MODEL, ["d2"], [], next_poll_s=0, submission="sub-2") == "late"
    assert store.get("d2").state == "submitting" and store.get("d2").fields["submission"] == "sub-3"
    assert store.batch("batch-2") is not None and store.batch_known("batch-2")
