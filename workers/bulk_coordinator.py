"""The bulk lane's coordinator: one worker of the fleet at a time (a Redis lock with a
lease) turns the queued bulk requests into provider batches, polls them, applies
their results, and publishes the jobs parked on them again.

One `tick()`:

1. flush: per `provider:model`, once VETQ_BULK_FLUSH_REQUESTS requests wait or the
   oldest has waited VETQ_BULK_FLUSH_AGE_S, submit them (up to the provider's
   request and byte limits, and VETQ_BULK_MAX_BATCH_REQUESTS) as one provider batch.
   A submission refused for size is split in two; a 429 (the queued-token cap) or a
   failing endpoint holds that model's submissions for the hint or a backoff; the
   requests wait, no job fails for it.
2. poll: every open provider batch whose poll is due is retrieved; until it ends the
   next poll backs off (VETQ_BULK_POLL_S doubling up to VETQ_BULK_POLL_MAX_S). A batch
   holding a request past its bulk deadline is canceled. Once ended, every request
   is accounted for:
     succeeded -> the answer is stored (record and response cache), the budget
                  reservation settled at the batch price, the jobs woken;
     errored   -> queued again once, then the jobs' error;
     expired, canceled -> queued again (up to VETQ_BULK_MAX_RESUBMITS), or, past the
                  deadline or the resubmissions, answered on the realtime lane by
                  jobs that allow it, else their TIMEOUT.
   A request the results do not mention counts as expired: nothing is dropped.
3. wake: the woken jobs are published again with their own ids and headers.

Before these, the parked jobs clients canceled are taken off their requests
(workers/bulk_store.py, Cancellation): a request no job waits on any more is withdrawn
while pending (never sent, its reservations released); a provider batch whose every
request lost its jobs is canceled at its next poll, and a request it then leaves
unanswered is withdrawn rather than queued again.

Each step is safe to repeat after a crash: a request is applied only while it is
`submitted` to that batch (resolve is once), so re-reading a batch's results applies
nothing twice.

Never paid twice, across stalls and crashes (a batch is paid once created):

* The lease is renewed at every step of a tick (each model flushed, each batch
  polled, every few hundred results applied) and right before each create call; a
  coordinator that finds it lost its lease stops its tick (LeaseLostError).
* Requests are claimed for a submission in one script that checks the lock's fencing
  token, before the provider is called (workers/bulk_store.py, Submissions): a
  coordinator that stalled past its lease claims nothing, and what it claimed before
  is in no pending set, so its successor cannot send it again.
* The submission's id goes with the create (OpenAI batch metadata; an Anthropic
  Message Batch is matched by time and size). A submission left open, by a
  coordinator that died after the create or whose create failed in a way that may
  have created the batch, is recovered at the start of a tick: the batch found at the
  provider is adopted (recorded, polled like any other); if none is found once no
  create for it can still land (`settled_by`: the last moment a create may start plus
  the create call's timeout and a margin), its requests go back to pending.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import redis
from celery import bootsteps

from vetq.core.errors import ConfigError, ErrorCode
from vetq.core.llm.batch_api import (
    BatchAPI,
    BatchOutcome,
    BatchTooLargeError,
    SubmitAbandonedError,
    batch_api_for,
    created_nothing,
)
from vetq.core.llm.errors import LLMError, RateLimitedError
from vetq.core.llm.factory import build_client
from vetq.core.llm.prices import PriceTable, micro_usd, priced
from vetq.core.llm.types import LLMResponse
from vetq.core.logging import get_logger
from vetq.core.redis_keys import BULK_LOCK_KEY
from vetq.core.settings import VetqSettings
from vetq.workers import metrics
from vetq.workers.budget_ledger import RedisBudgetLedger
from vetq.workers.bulk_lane import describe_error
from vetq.workers.bulk_store import BulkStore, ParkedJob, StoredRequest, Submission
from vetq.workers.call_gate import full_jitter_backoff_s
from vetq.workers.response_cache import RedisResponseCache

__all__ = ["BulkCoordinator", "LeaseLostError"]

log = get_logger("vetq.bulk")

# Below the provider's byte limit: the JSON around the lines, and a margin.
BYTES_HEADROOM = 0.95
WAKE_CHUNK = 500
# After the last moment a create may start and its own timeout: how long a batch takes
# to show in the provider's list, and the provider's clock against ours.
SETTLE_MARGIN_S = 60.0
# How far the provider's batch creation times may be from ours when matching them.
CLOCK_SKEW_S = 120.0
# Results applied between two lease checks.
RESULTS_PER_LEASE_CHECK = 200


class LeaseLostError(Exception):
    """The coordinator lost its lease (another worker's took over): it stops its tick."""


class BulkCoordinator:
    def __init__(
        self,
        redis_client: Any,
        settings: VetqSettings,
        *,
        store: BulkStore,
        cache: RedisResponseCache | None,
        ledger: RedisBudgetLedger | None,
        publish: Callable[[ParkedJob], None],
        deliver_canceled: Callable[[str, dict[str, Any]], object] | None = None,
        prices: PriceTable | None = None,
        batch_api: Callable[[str], BatchAPI] | None = None,
        clock: Callable[[], float] = time.time,
        lease_s: float | None = None,
    ) -> None:
        self.redis = redis_client
        self.settings = settings
        self.store = store
        self.cache = cache
        self.ledger = ledger
        self.publish = publish
        # A canceled parked job's callback (its headers name the URL): no run of it
        # will end it, so its result is delivered from here.
        self.deliver_canceled = deliver_canceled
        self.prices = prices or settings.price_table()
        self.clock = clock
        self._make_api = batch_api or self._build_api
        self._apis: dict[str, BatchAPI] = {}
        self._refusals: Counter[str] = Counter()
        # A provider that refused a batch for its size takes smaller ones from then on.
        self._learned_max: dict[str, int] = {}
        # One refused for the tokens already queued takes half as many requests next
        # time, and twice as many after each batch accepted: a batch that alone is
        # over the cap would otherwise be refused for ever.
        self._capacity_max: dict[str, int] = {}
        self.lease_s = lease_s if lease_s is not None else max(30.0, settings.bulk_tick_s * 10)
        self._lock = redis_client.lock(BULK_LOCK_KEY, timeout=self.lease_s, blocking=False, thread_local=False)
        self._held = False
        self._renewed_at = 0.0

    # ------------------------------------------------------------------ the loop

    def run(self, stop: threading.Event) -> None:
        """Tick every VETQ_BULK_TICK_S until `stop` is set; only the lock holder works."""
        while not stop.is_set():
            try:
                if self._hold_lock():
                    self.tick()
            except LeaseLostError:
                self._held = False
                log.warning("bulk_coordinator_lease_lost")
            except redis.RedisError as exc:
                self._held = False
                log.warning("bulk_coordinator_redis_error", error=type(exc).__name__)
            except Exception:
                log.exception("bulk_coordinator_error")
            stop.wait(self.settings.bulk_tick_s)
        self.release()

    def _hold_lock(self) -> bool:
        if self._held:
            try:
                self._lock.reacquire()
                self._renewed_at = time.monotonic()
                return True
            except redis.exceptions.LockError:
                self._held = False
        self._held = bool(self._lock.acquire(blocking=False))
        if self._held:
            self._renewed_at = time.monotonic()
        return self._held

    def _keep_lease(self, *, now: bool = False) -> None:
        """Renew the lease once a third of it has passed (`now`: at once), so a long tick
        keeps it; LeaseLostError when another coordinator holds it."""
        if not now and time.monotonic() - self._renewed_at < self.lease_s / 3:
            return
        try:
            self._lock.reacquire()
        except redis.exceptions.LockError as exc:
            self._held = False
            raise LeaseLostError("the bulk coordinator's lease was taken over") from exc
        self._renewed_at = time.monotonic()

    def _token(self) -> bytes | str:
        token = self._lock.local.token
        return token if token is not None else ""

    def release(self) -> None:
        if self._held:
            try:
                self._lock.release()
            except (redis.exceptions.LockError, redis.RedisError):
                pass
            self._held = False

    def tick(self) -> dict[str, int]:
        """One round of flush, poll and wake; what it did."""
        done: Counter[str] = Counter()
        done.update(self._recover())
        done["canceled"] += self._withdraw_canceled()
        for model_key in self.store.pending_models():
            self._keep_lease()
            done["submitted"] += self._flush(model_key)
        for batch_id in self.store.due_batches():
            self._keep_lease()
            done["polled"] += 1
            done.update(self._poll(batch_id))
        done["woken"] += self.wake()
        return dict(done)

    # ------------------------------------------------------------------ batch APIs

    def _build_api(self, model_key: str) -> BatchAPI:
        client = build_client(model_key, timeout_s=self.settings.provider_timeout_s)
        return batch_api_for(client)

    def _api(self, model_key: str) -> BatchAPI:
        if model_key not in self._apis:
            self._apis[model_key] = self._make_api(model_key)
        return self._apis[model_key]

    def _backoff_s(self, attempt: int) -> float:
        base = self.settings.bulk_poll_s
        return base + full_jitter_backoff_s(attempt, base_s=base, cap_s=self.settings.bulk_poll_max_s)

    # ------------------------------------------------------------------ flush

    def _flush(self, model_key: str) -> int:
        if self.store.held_for_s(model_key) > 0:
            return 0
        try:
            api = self._api(model_key)
        except ConfigError as exc:
            # Workers without this provider's SDK or key: every request waiting for it fails.
            pending = self.store.pending(model_key, 10_000)
            for stored in self.store.get_many([d for d, _ in pending]):
                if stored is not None and stored.state == "pending":
                    self._fail(stored, {"code": ErrorCode.CONFIG_ERROR.value, "message": exc.message})
            self.store.forget_pending(model_key, [d for d, _ in pending])
            return 0
        limit = min(
            api.max_requests,
            self.settings.bulk_max_batch_requests,
            self._learned_max.get(model_key, api.max_requests),
            self._capacity_max.get(model_key, api.max_requests),
        )
        pending = self.store.pending(model_key, limit)
        if not pending:
            self.store.forget_pending(model_key, [])
            return 0
        oldest = max(age for _, age in pending)
        if len(pending) < self.settings.bulk_flush_requests and oldest < self.settings.bulk_flush_age_s:
            return 0
        now = self.clock()
        lines: list[dict[str, Any]] = []
        batch: list[StoredRequest] = []
        dropped: list[str] = []
        size = 0
        for (digest, _age), stored in zip(pending, self.store.get_many([d for d, _ in pending]), strict=True):
            if stored is None or stored.state != "pending":
                dropped.append(digest)  # resolved or gone meanwhile: nothing to send
                continue
            if stored.overdue(now):
                self._past_deadline(stored, "before it could be sent")
                dropped.append(digest)
                continue
            request = stored.request()
            if request is None:
                dropped.append(digest)
                continue
            line = api.line(digest, request)
            line_size = api.line_bytes(line)
            if lines and size + line_size > api.max_bytes * BYTES_HEADROOM:
                break  # the rest go in the next batch
            lines.append(line)
            batch.append(stored)
            size += line_size
        if dropped:
            self.store.forget_pending(model_key, dropped)
        return self._submit(api, model_key, lines, batch) if lines else 0

    def _submit(self, api: BatchAPI, model_key: str, lines: list[dict[str, Any]], batch: list[StoredRequest]) -> int:
        marked = self.clock()
        submission = uuid.uuid4().hex
        create_by = marked + api.create_start_s
        settled_by = create_by + api.create_timeout_s + SETTLE_MARGIN_S
        vetq_batches = [b for b in (s.vetq_batch for s in batch) if b]
        claimed = self.store.claim(
            self._token(),
            submission,
            model_key,
            [s.digest for s in batch],
            vetq_batches=vetq_batches,
            marked=marked,
            create_by=create_by,
            settled_by=settled_by,
            check_in_s=self.lease_s,
        )
        if claimed is None:
            self._held = False
            raise LeaseLostError("the bulk coordinator's lease was taken over before it claimed its requests")
        if len(claimed) < len(batch):  # answered or sent meanwhile: not this batch's
            kept = set(claimed)
            lines = [line for line, s in zip(lines, batch, strict=True) if s.digest in kept]
            batch = [s for s in batch if s.digest in kept]
        if not batch:
            return 0

        def may_create() -> bool:
            if self.clock() >= create_by:
                return False
            try:
                self._keep_lease(now=True)
            except LeaseLostError:
                return False
            return True

        try:
            batch_id = api.submit(lines, marker=submission, proceed=may_create)
        except LLMError as exc:
            if not created_nothing(exc):
                # The provider may have created it: the submission stays open, and the
                # next recovery adopts the batch, or releases the requests once none can land.
                self._refusals[model_key] += 1
                wait = self._backoff_s(self._refusals[model_key])
                self.store.hold(model_key, wait)
                self.store.check_submission_in(submission, 0)
                log.warning(
                    "bulk_submit_uncertain", model_key=model_key, error_code=exc.code.value, submission=submission
                )
                return 0
            self.store.release(Submission(submission, {"model_key": model_key, "requests": json.dumps(claimed)}))
            if isinstance(exc, SubmitAbandonedError):
                raise LeaseLostError("the bulk coordinator may no longer create batches") from exc
            return self._refused(api, model_key, lines, batch, exc)
        self._refusals.pop(model_key, None)
        if model_key in self._capacity_max:
            self._capacity_max[model_key] *= 2
            if self._capacity_max[model_key] >= api.max_requests:
                del self._capacity_max[model_key]
        recorded = self.store.record_batch(
            batch_id,
            model_key,
            [s.digest for s in batch],
            vetq_batches,
            next_poll_s=self.settings.bulk_poll_s,
            submission=submission,
        )
        if recorded == "late":
            log.error("bulk_batch_recorded_late", model_key=model_key, provider_batch=batch_id, submission=submission)
        log.info("bulk_batch_submitted", model_key=model_key, provider_batch=batch_id, requests=len(lines))
        return len(lines)

    def _refused(
        self, api: BatchAPI, model_key: str, lines: list[dict[str, Any]], batch: list[StoredRequest], exc: LLMError
    ) -> int:
        """A create the provider refused (nothing was created; the requests are pending again)."""
        if isinstance(exc, BatchTooLargeError):
            if len(lines) == 1:
                self._errored(batch[0], exc)
                return 0
            half = len(lines) // 2
            self._learned_max[model_key] = min(self._learned_max.get(model_key, half), half)
            log.warning("bulk_batch_split", model_key=model_key, requests=len(lines))
            return self._submit(api, model_key, lines[:half], batch[:half]) + self._submit(
                api, model_key, lines[half:], batch[half:]
            )
        if isinstance(exc, RateLimitedError):
            self._refused_for_capacity(model_key, len(lines))
            wait = exc.retry_after_s if exc.retry_after_s is not None else self._backoff_s(self._refusals[model_key])
            self.store.hold(model_key, wait)
            log.warning("bulk_submit_refused", model_key=model_key, requests=len(lines), wait_s=round(wait, 2))
            return 0
        if exc.retryable:
            self._refusals[model_key] += 1
            wait = self._backoff_s(self._refusals[model_key])
            self.store.hold(model_key, wait)
            log.warning("bulk_submit_failed", model_key=model_key, error_code=exc.code.value, wait_s=round(wait, 2))
            return 0
        log.warning("bulk_submit_refused_for_good", model_key=model_key, error_code=exc.code.value)
        for stored in batch:
            self._errored(stored, exc)
        return 0

    # ------------------------------------------------------------------ recovery

    def _recover(self) -> Counter[str]:
        """Settle the submissions left open (a coordinator died or stalled between its
        claim and its record, or its create failed uncertainly): adopt the batch each
        made, or give its requests back once no create for it can still land."""
        done: Counter[str] = Counter()
        for submission_id in self.store.due_submissions():
            self._keep_lease()
            submission = self.store.submission(submission_id)
            if submission is None:
                self.store.forget_submission(submission_id)
                continue
            done[self._recover_one(submission)] += 1
        return done

    def _recover_one(self, submission: Submission) -> str:
        try:
            api = self._api(submission.model_key)
            candidates = api.find(
                submission.id,
                len(submission.digests),
                submission.marked - CLOCK_SKEW_S,
                submission.settled_by + CLOCK_SKEW_S,
            )
        except (LLMError, ConfigError) as exc:
            log.warning("bulk_recovery_failed", submission=submission.id, error=type(exc).__name__)
            self.store.check_submission_in(submission.id, self._backoff_s(submission.checks + 1))
            return "recovery_failed"
        unknown = [batch_id for batch_id in candidates if not self.store.batch_known(batch_id)]
        if unknown:
            batch_id = unknown[0]
            recorded = self.store.record_batch(
                batch_id,
                submission.model_key,
                submission.digests,
                submission.vetq_batches,
                next_poll_s=0.0,
                submission=submission.id,
            )
            log.warning(
                "bulk_submission_adopted",
                model_key=submission.model_key,
                provider_batch=batch_id,
                submission=submission.id,
                requests=len(submission.digests),
                recorded=recorded,
            )
            return "adopted"
        if self.clock() > submission.settled_by:
            released = self.store.release(submission)
            log.warning(
                "bulk_submission_released", model_key=submission.model_key, submission=submission.id, requests=released
            )
            return "released"
        self.store.check_submission_in(submission.id, self._backoff_s(submission.checks + 1))
        return "unsettled"

    def _refused_for_capacity(self, model_key: str, requests: int) -> None:
        self._refusals[model_key] += 1
        self._capacity_max[model_key] = max(1, min(self._capacity_max.get(model_key, requests), requests) // 2)

    # ------------------------------------------------------------------ poll

    def _poll(self, batch_id: str) -> Counter[str]:
        outcomes: Counter[str] = Counter()
        record = self.store.batch(batch_id)
        if record is None:
            self.store.update_batch(batch_id, next_poll_s=None)
            return outcomes
        api = self._api(record["model_key"])
        polls = record["polls"]
        try:
            state = api.retrieve(batch_id)
        except LLMError as exc:
            wait = self._backoff_s(polls + 1)
            log.warning("bulk_poll_failed", provider_batch=batch_id, error_code=exc.code.value, wait_s=round(wait, 2))
            self.store.update_batch(batch_id, next_poll_s=wait)
            return outcomes
        mine = self._requests_of(batch_id, record["requests"])
        if state.failed:
            if state.refused_for_size and len(mine) > 1:
                self.store.requeue(mine)
                self._learned_max[record["model_key"]] = max(1, len(mine) // 2)
            elif state.refused_for_capacity:
                self.store.requeue(mine)
                self._refused_for_capacity(record["model_key"], len(mine))
                self.store.hold(record["model_key"], self._backoff_s(self._refusals[record["model_key"]]))
            else:
                for stored in mine:
                    self._errored(stored, LLMError(f"the provider failed the whole batch: {state.reason}"))
            log.warning("bulk_batch_failed", provider_batch=batch_id, reason=state.reason)
            self.store.update_batch(
                batch_id, next_poll_s=None, state="failed", counts=state.counts, reason=state.reason or ""
            )
            return outcomes
        if not state.ended:
            now = self.clock()
            if not record["cancel_requested"] and any(s.overdue(now) for s in mine):
                self._cancel(api, batch_id, "a request is past its bulk deadline")
            elif not record["cancel_requested"] and record["withdrawn"] and self.store.all_orphaned(mine):
                self._cancel(api, batch_id, "every job waiting on it was canceled")
            self.store.update_batch(batch_id, next_poll_s=self._backoff_s(polls + 1), counts=state.counts)
            return outcomes
        by_id = {s.digest: s for s in mine}
        try:
            for outcome in api.results(batch_id, list(by_id)):
                if outcome.custom_id in by_id:
                    if sum(outcomes.values()) % RESULTS_PER_LEASE_CHECK == 0:
                        self._keep_lease()
                    outcomes[outcome.kind] += 1
                    self._apply(by_id[outcome.custom_id], outcome)
        except LLMError as exc:
            # What was applied stays applied (those requests are no longer `submitted`).
            wait = self._backoff_s(polls + 1)
            log.warning("bulk_results_failed", provider_batch=batch_id, error_code=exc.code.value)
            self.store.update_batch(batch_id, next_poll_s=wait, counts=state.counts)
            return outcomes
        log.info("bulk_batch_ended", provider_batch=batch_id, **dict(outcomes))
        self.store.update_batch(batch_id, next_poll_s=None, state="ended", counts=state.counts)
        return outcomes

    def _cancel(self, api: BatchAPI, batch_id: str, reason: str) -> None:
        try:
            api.cancel(batch_id)
        except LLMError as exc:
            log.warning("bulk_cancel_failed", provider_batch=batch_id, error_code=exc.code.value)
            return
        log.info("bulk_batch_canceled", provider_batch=batch_id, reason=reason)
        self.store.update_batch(batch_id, next_poll_s=self.settings.bulk_poll_s, cancel_requested="1")

    def _requests_of(self, batch_id: str, digests: Sequence[str]) -> list[StoredRequest]:
        """The batch's requests still waiting on it (an answer is applied once)."""
        return [
            s
            for s in self.store.get_many(list(digests))
            if s is not None and s.state == "submitted" and s.fields.get("batch") == batch_id
        ]

    # ------------------------------------------------------------------ outcomes

    def _apply(self, stored: StoredRequest, outcome: BatchOutcome) -> None:
        if outcome.kind == "succeeded" and outcome.response is not None:
            self._succeeded(stored, outcome.response)
        elif outcome.kind == "errored":
            self._errored(stored, outcome.error or LLMError("the batch request errored"))
        else:
            self._unanswered(stored, outcome.kind)

    def _succeeded(self, stored: StoredRequest, response: LLMResponse) -> None:
        request = stored.request()
        provider, _, model = stored.model_key.partition(":")
        response = priced(response, self.prices.lookup(stored.model_key), lane="bulk")
        self._settle(stored, response)
        if self.cache is not None and request is not None:
            self.cache.put(provider, model, request, response, stage=stored.stage)
        self.store.resolve(stored.digest, "done", response=response.model_dump_json())
        log.info(
            "model_call",
            stage=stored.stage,
            provider=provider,
            model=model,
            lane="bulk",
            prompt_tokens=response.usage.prompt_tokens,
            completion_tokens=response.usage.completion_tokens,
            cost_usd=response.usage.cost_usd,
            cached=False,
        )

    def _settle(self, stored: StoredRequest, response: LLMResponse) -> None:
        """Charge the request's budgets what the provider counted, priced for the bulk
        lane (the estimates when it reported no usage), once."""
        if self.ledger is None:
            return
        usage = response.usage
        reported = usage.total_tokens > 0
        est, est_usd = stored.estimates()
        if stored.reservation:
            self.ledger.settle(stored.reservation, usage.total_tokens if reported else est)
        if stored.reservation_usd:
            cost = usage.cost_usd
            self.ledger.settle(stored.reservation_usd, micro_usd(cost) if reported and cost is not None else est_usd)

    def _errored(self, stored: StoredRequest, error: LLMError) -> None:
        if self._withdrawn_orphan(stored):
            return
        if stored.errors < 1:
            log.warning("bulk_request_errored", stage=stored.stage, model_key=stored.model_key, retry=True)
            self.store.requeue([stored], counter="errors")
            return
        log.warning("bulk_request_failed", stage=stored.stage, model_key=stored.model_key, error_code=error.code.value)
        self._fail(stored, describe_error(error))

    def _unanswered(self, stored: StoredRequest, kind: str) -> None:
        if self._withdrawn_orphan(stored):
            return
        if stored.overdue(self.clock()):
            self._past_deadline(stored, f"{kind} past its bulk deadline")
        elif stored.resubmits < self.settings.bulk_max_resubmits:
            log.info("bulk_request_resubmitted", stage=stored.stage, model_key=stored.model_key, outcome=kind)
            self.store.requeue([stored], counter="resubmits")
        else:
            self._past_deadline(stored, f"{kind} {stored.resubmits + 1} times")

    def _past_deadline(self, stored: StoredRequest, why: str) -> None:
        """No answer on the bulk lane: the realtime lane for jobs that allow it, else TIMEOUT."""
        if stored.fallback:
            self._release(stored)
            woken = self.store.resolve(stored.digest, "realtime", reason=why)
            log.info("bulk_request_to_realtime", stage=stored.stage, model_key=stored.model_key, why=why, jobs=woken)
            return
        message = f"the {stored.stage or 'model'} call got no answer on the bulk lane ({why})"
        self._fail(stored, {"code": ErrorCode.TIMEOUT.value, "message": message})

    def _fail(self, stored: StoredRequest, error: dict[str, str]) -> None:
        self._release(stored)
        self.store.resolve(stored.digest, "failed", error=json.dumps(error))

    def _release(self, stored: StoredRequest) -> None:
        self._release_reservations([r for r in (stored.reservation, stored.reservation_usd) if r])

    def _release_reservations(self, reservations: Sequence[str]) -> None:
        if self.ledger is not None:
            for reservation in reservations:
                self.ledger.release(reservation)

    # ------------------------------------------------------------------ cancellation

    def _withdraw_canceled(self) -> int:
        """Take the parked jobs clients canceled off their requests; how many."""
        taken = 0
        while job_ids := self.store.canceled(WAKE_CHUNK):
            self._keep_lease()
            for job_id in job_ids:
                withdrawal = self.store.withdraw(job_id)
                if withdrawal.outcome == "withdrawn":
                    self._release_reservations(withdrawal.reservations)
                elif withdrawal.outcome == "orphaned" and withdrawal.batch:
                    self.store.mark_withdrawn(withdrawal.batch)
                if withdrawal.was_parked:  # no run of it will end it: it is counted and delivered here
                    metrics.parked_job_canceled(withdrawal.task, withdrawal.queue)
                    if self.deliver_canceled is not None:
                        self.deliver_canceled(job_id, withdrawal.headers)
                log.info("bulk_job_canceled", job_id=job_id, request=withdrawal.outcome)
                self.store.forget_canceled(job_id)
                taken += 1
            if len(job_ids) < WAKE_CHUNK:
                break
        return taken

    def _withdrawn_orphan(self, stored: StoredRequest) -> bool:
        """A request its batch left unanswered whose jobs were all canceled is withdrawn
        (its reservations released), not queued again."""
        withdrawal = self.store.withdraw_orphan(stored)
        if withdrawal.outcome != "withdrawn":
            return False
        self._release_reservations(withdrawal.reservations)
        log.info("bulk_request_withdrawn", stage=stored.stage, model_key=stored.model_key)
        return True

    # ------------------------------------------------------------------ wake

    def wake(self) -> int:
        """Publish the jobs whose requests were resolved; how many."""
        woken = 0
        while job_ids := self.store.woken(WAKE_CHUNK):
            for job_id in job_ids:
                parked = self.store.parked(job_id)
                if parked is None:
                    self.store.woke(ParkedJob(job_id, {}))
                    continue
                self.publish(parked)
                woken += 1
                self.store.woke(parked)
            if len(job_ids) < WAKE_CHUNK:
                break
        return woken


class CoordinatorStep(bootsteps.StartStopStep):
    """Runs the coordinator in a thread of every worker (VETQ_BULK_COORDINATOR, on by
    default): the Redis lock lets one of them work at a time, and another takes over
    within the lock's lease when it stops or dies."""

    label = "vetq bulk lane"

    def __init__(self, parent: Any, **kwargs: Any) -> None:
        super().__init__(parent, **kwargs)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._coordinator: BulkCoordinator | None = None

    def start(self, parent: Any) -> None:
        context = parent.app.conf.vetq_context
        if not context.settings.bulk_coordinator:
            return
        self._coordinator = context.bulk_coordinator(parent.app)
        self._thread = threading.Thread(
            target=self._coordinator.run, args=(self._stop,), name="vetq-bulk-coordinator", daemon=True
        )
        self._thread.start()

    def stop(self, parent: Any) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
            self._thread = None

    shutdown = stop
