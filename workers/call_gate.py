"""The fleet-wide call gate: every model call of every stage of every job passes
here, and its state lives in Redis, so it holds across worker processes and hosts.

One `call()`:

1. response cache: a hit is returned as is, costing 0.0 (no limiter, no budget charge);
2. budget: reserve `estimate_prompt_tokens(request) + max_tokens` on
   `budget_scopes`, and on `usd_scopes` (dollar budgets, in micro-dollars) that
   estimate priced for the gate's lane (core.llm.prices; a model without a price is a
   ConfigError there); when it does not fit, BudgetExceededError (nothing is sent). The
   gate is the budget authority: `tokens_left()` is what a stage sizes its call by;
3. rate limiter for `provider:model`: a wait up to `max_sleep_s` is slept in place,
   a longer one raises RateLimitWaitError(retry_after_s=wait) so the Celery task can
   give its worker slot back with `retry(countdown=exc.retry_after_s)`;
4. the provider call (SDK retries are off: one complete() is one HTTP request);
5. success: the call priced (`Usage.cost_usd`, None without a price), budgets settled
   with the provider's usage and that cost (the estimates when it reported 0), limiter
   entry corrected, limiter learns from the rate-limit headers, answer
   cached, one `model_call` log line;
6. a provider 429: shared cooldown from Retry-After (or the reset hint, or full-jitter
   backoff), reservation released, `rate_limited` logged; back to 3 (which waits the
   cooldown out, so no retry goes out before Retry-After) while the cooldown is at
   most `max_sleep_s`, else RateLimitWaitError. After `max_attempts` 429s for the same
   request: RateLimitExhaustedError (not retryable: the job ends RATE_LIMITED);
7. any other failure: reservation released, error re-raised.

A canceled job (its cancel mark, `cancel_key`, read once before each call that would
be sent or queued on the bulk lane; an answer from the cache costs nothing and is
still returned) makes no further call: JobCanceledError (CANCELED, not retried), with
nothing reserved, so the pipeline's envelope keeps the usage of the calls it made.

A tenant's job (`tenant`, from the `vetq_tenant` header) has its tenant's budgets for
the window among its scopes (`tenant:<tenant>:<window start>`, `...:usd`; refused like
any other: BudgetExceededError), asks the limiter for its tenant's fair share of the
model (`tenant_weight`; workers/rate_limiter.py), and each answer is counted in the
tenant's usage for the window (`usage`, workers/tenant_usage.py).

Redis out of reach is GateStateUnavailableError (retryable: the job is put back);
the worker's own connection pool out of connections is GatePoolExhaustedError (not
retried: Redis is up, and a rerun would pay again; workers/redis_pool.py).

The job's deadline (`deadline`, on `clock`): the worker's hard time limit is not
enforced by Celery's thread and solo pools, so the gate enforces it where vetq holds
the time. Past the deadline no new call is sent; each call's timeout is clipped to
the time left (`LLMRequest.timeout_s`, the SDK's per-request timeout); a call that
fails once the time is up, or that a soft time limit interrupted
(SoftTimeLimitExceeded, raised into the SDK's read on prefork), ends the job with
JobTimeoutError (TIMEOUT, not retried; the pipeline's envelope keeps the usage of the
stages that answered). A rate-limit wait
that would cross the deadline is not slept: the job is requeued (RateLimitWaitError)
and comes back with a fresh time limit.

Attempt counting across Celery retries: pass `attempt_key` (e.g. "job:<id>"). The
429s of one request are then counted in Redis under
`<attempt_prefix>:<attempt_key>:<provider:model>:<request fingerprint>` (TTL
`attempt_ttl_s`, deleted when the request succeeds), so a re-run of the job with a
new gate continues the count. Without `attempt_key` the count is per `call()`.
"""

from __future__ import annotations

import copy
import random
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

import redis
from celery.exceptions import SoftTimeLimitExceeded

from vetq.core.errors import ErrorCode
from vetq.core.llm.client import LLMClient
from vetq.core.llm.errors import BudgetExceededError, LLMError, RateLimitedError
from vetq.core.llm.gate import AnswerCheck
from vetq.core.llm.prices import MICRO_USD, ModelPrice, PriceTable, check_lane, micro_usd, priced, shipped_prices
from vetq.core.llm.tokens import estimate_prompt_tokens
from vetq.core.llm.types import LLMRequest, LLMResponse, RateLimitInfo
from vetq.core.logging import get_logger
from vetq.core.redis_keys import ATTEMPTS_PREFIX, JOB_SCOPE_PREFIX, attempts_key
from vetq.workers import metrics
from vetq.workers.budget_ledger import UNLIMITED, RedisBudgetLedger
from vetq.workers.bulk_lane import BulkJob, BulkWaitError, bulk_answer
from vetq.workers.bulk_store import BULK_LIVE_TTL_S, BulkStore
from vetq.workers.rate_limiter import RedisRateLimiter, entry_id_for
from vetq.workers.redis_pool import POOL_EXHAUSTED, exhaustion_message, log_exhaustion
from vetq.workers.response_cache import RedisResponseCache
from vetq.workers.tenant_usage import TenantUsage

__all__ = [
    "GatePoolExhaustedError",
    "GateStateUnavailableError",
    "JobCanceledError",
    "JobTimeoutError",
    "RateLimitExhaustedError",
    "RateLimitWaitError",
    "RedisCallGate",
    "full_jitter_backoff_s",
]

log = get_logger("vetq.gate")

MAX_BACKOFF_S = 60.0
# 2.0 ** 1024 overflows a float; past this many doublings every cap is reached anyway.
_MAX_DOUBLINGS = 64


def full_jitter_backoff_s(
    attempt: int, rng: random.Random | None = None, *, base_s: float = 1.0, cap_s: float = MAX_BACKOFF_S
) -> float:
    """The one backoff of vetq (a 429 without a hint, a job requeued after a transient
    failure, the next poll of a provider batch): full jitter, uniform in
    [0, min(cap_s, base_s * 2**attempt)]."""
    return (rng or random).uniform(0, min(cap_s, base_s * 2.0 ** min(max(0, attempt), _MAX_DOUBLINGS)))


class RateLimitWaitError(RateLimitedError):
    """The model is rate limited for longer than the gate sleeps in place: retry the
    job after `retry_after_s` seconds."""

    retryable = True

    def __init__(self, message: str, *, retry_after_s: float, rate_limit: RateLimitInfo | None = None):
        super().__init__(message, retry_after_s=retry_after_s, rate_limit=rate_limit)
        self.retry_after_s = float(retry_after_s)


class RateLimitExhaustedError(RateLimitedError):
    """Still rate limited after max_attempts (or a request no window can hold): the job
    ends RATE_LIMITED."""

    retryable = False


class JobTimeoutError(LLMError):
    """The job's time is up: no further model call is made, and the job ends TIMEOUT."""

    code = ErrorCode.TIMEOUT
    retryable = False


class JobCanceledError(LLMError):
    """The job was canceled: no further model call is made, and the job ends CANCELED."""

    code = ErrorCode.CANCELED
    retryable = False


class GateStateUnavailableError(LLMError):
    """Redis, which holds the limiter, ledger and cache, did not answer."""

    code = ErrorCode.INTERNAL_ERROR
    retryable = True


class GatePoolExhaustedError(LLMError):
    """No connection of the worker's Redis pool came free (workers/redis_pool.py): the
    job ends INTERNAL_ERROR rather than being retried as if Redis were down."""

    code = ErrorCode.INTERNAL_ERROR
    retryable = False


class _Held(NamedTuple):
    """The reservations of one call: its tokens on the token scopes, its micro-dollars
    on the dollar scopes (None where there is nothing to reserve on)."""

    tokens: str | None
    usd: str | None


class RedisCallGate:
    """core.llm.gate.CallGate backed by Redis. `limiter`, `ledger` and `cache` may each
    be None (no rate limit / no budget / no cache). `usd_scopes` are the ledger scopes
    of dollar budgets (micro-dollars, `<scope>:usd`); calls are priced with `prices`
    (the shipped table by default) for `lane`. `budget_limits` (and `job_scope_tokens`
    for the `job:` scopes) are the limits the scopes get, each set once, when the
    ledger is first needed: building a gate costs no round trip. `cancel_key`: the
    job's cancel mark, read before each call that would be paid."""

    def __init__(
        self,
        redis_client: Any,
        *,
        limiter: RedisRateLimiter | None,
        ledger: RedisBudgetLedger | None,
        cache: RedisResponseCache | None,
        budget_scopes: Sequence[str] = (),
        usd_scopes: Sequence[str] = (),
        budget_limits: Mapping[str, int] | None = None,
        budget_ttls: Mapping[str, int] | None = None,
        prices: PriceTable | None = None,
        lane: str = "realtime",
        job_scope_tokens: int | None = None,
        budget_ttl_s: int = 7 * 24 * 3600,
        max_sleep_s: float = 10.0,
        max_attempts: int = 6,
        attempt_key: str | None = None,
        attempt_prefix: str = ATTEMPTS_PREFIX,
        attempt_ttl_s: int = 24 * 3600,
        deadline: float | None = None,
        bulk: BulkJob | None = None,
        bulk_store: BulkStore | None = None,
        cancel_key: str | None = None,
        tenant: str | None = None,
        tenant_weight: float = 1.0,
        usage: TenantUsage | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        rng: random.Random | None = None,
    ) -> None:
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        self.redis = redis_client
        self.limiter = limiter
        self.ledger = ledger
        self.cache = cache
        self.budget_scopes = list(dict.fromkeys(budget_scopes))
        self.usd_scopes = list(dict.fromkeys(usd_scopes))
        self.prices = prices or shipped_prices()
        self.lane = check_lane(lane)
        self.max_sleep_s = float(max_sleep_s)
        self.max_attempts = int(max_attempts)
        self.attempt_key = attempt_key
        self.attempt_prefix = attempt_prefix
        self.attempt_ttl_s = int(attempt_ttl_s)
        self.deadline = deadline
        # A bulk job's calls wait for the providers' batches (workers/bulk_lane.py).
        self.bulk = bulk if bulk_store is not None else None
        self.bulk_store = bulk_store
        self.cancel_key = cancel_key
        self.tenant = tenant or None
        self.tenant_weight = float(tenant_weight)
        self.usage = usage if self.tenant else None
        self.sleep = sleep
        self.clock = clock
        self.rng = rng or random.Random()
        self.budget_ttl_s = int(budget_ttl_s)
        self.budget_ttls = dict(budget_ttls or {})
        self._lock = threading.Lock()
        self.stats: dict[str, float] = {
            "calls": 0,
            "cache_hits": 0,
            "waits_s": 0.0,
            "rate_limited": 0,
            "limiter_waits": 0,
            "budget_refused": 0,
            "errors": 0,
        }
        # A scope's limit is set once (a re-delivered job keeps what it already spent),
        # and only when a call first needs the ledger (_set_limits): a job that makes no
        # model call creates no budget key and makes no ledger round trip.
        self._unset_limits: dict[str, int] = {}
        self._limited: set[str] = set()
        self._limits_lock = threading.Lock()
        if ledger is not None:
            for scope, tokens in (budget_limits or {}).items():
                self._unset_limits.setdefault(scope, int(tokens))
            if job_scope_tokens is not None:
                for scope in self.budget_scopes:
                    if scope.startswith(JOB_SCOPE_PREFIX):
                        self._unset_limits.setdefault(scope, int(job_scope_tokens))

    # ------------------------------------------------------------------ budgets

    def _limit_once(self, scope: str, tokens: int) -> None:
        """Give `scope` the limit `tokens` when the ledger is next used, unless it has or
        will get one already."""
        with self._limits_lock:
            if scope not in self._limited:
                self._unset_limits.setdefault(scope, int(tokens))

    def _set_limits(self) -> None:
        """Give the scopes their limits (each once: a scope that has one keeps it), in one
        round trip, before the ledger is first read or reserved on."""
        if self.ledger is None or not self._unset_limits:
            return
        with self._limits_lock:
            if self._unset_limits:
                self.ledger.set_limits(self._unset_limits, self.budget_ttl_s, self.budget_ttls)
                self._limited.update(self._unset_limits)
                self._unset_limits = {}

    def tokens_left(self) -> int | None:
        """The least any of `budget_scopes` has left (None: no ledger or no limit)."""
        if self.ledger is None or not self.budget_scopes:
            return None
        self._set_limits()
        left = min(self.ledger.remaining(scope) for scope in self.budget_scopes)
        return None if left >= UNLIMITED else left

    def job_scope(self, tokens: int) -> RedisCallGate:
        """A worker's gate is made for its job (`job:<id>` among `budget_scopes`, its
        limit set once, so a re-delivered job keeps what it spent): that scope stands,
        given `tokens` only if it has no limit yet. A gate without a job scope gets a
        scope of its own for the job."""
        if self.ledger is None:
            return self
        scope = next((s for s in self.budget_scopes if s.startswith("job:")), None)
        if scope is not None:
            self._limit_once(scope, tokens)
            return self
        job = copy.copy(self)
        job.budget_scopes = [*self.budget_scopes, f"job:{uuid.uuid4().hex}"]
        with self._limits_lock:
            job._unset_limits = {**self._unset_limits, job.budget_scopes[-1]: int(tokens)}
            job._limited = set(self._limited)
        job._limits_lock = threading.Lock()
        return job

    # ------------------------------------------------------------------ helpers

    def time_left_s(self) -> float | None:
        """Seconds until the job's deadline (None: no deadline)."""
        return None if self.deadline is None else self.deadline - self.clock()

    def _timed_out(self, stage: str, why: str) -> JobTimeoutError:
        log.warning("job_deadline_reached", stage=stage, reason=why)
        return JobTimeoutError(f"the job ran out of time ({why}) before the {stage} stage had an answer")

    def _wait_within_deadline(self, model_key: str, wait: float) -> None:
        """Sleeping past the deadline would only be cut short: give the worker slot back."""
        left = self.time_left_s()
        if left is not None and wait >= left:
            raise RateLimitWaitError(
                f"{model_key} is rate limited for {wait:.1f}s, longer than the {max(0.0, left):.1f}s this run has left; "
                f"retry later",
                retry_after_s=wait,
            )

    def _stop_if_canceled(self, stage: str) -> None:
        """One read before a call that would be paid: a canceled job sends nothing more."""
        if self.cancel_key is not None and self.redis.exists(self.cancel_key):
            log.info("job_canceled", stage=stage)
            raise JobCanceledError(f"the job was canceled before its {stage} call")

    def _count(self, name: str, amount: float = 1) -> None:
        with self._lock:
            self.stats[name] += amount

    def _attempt_counter(self, model_key: str, request: LLMRequest) -> str | None:
        if self.attempt_key is None:
            return None
        return attempts_key(self.attempt_key, model_key, request.fingerprint(), self.attempt_prefix)

    def attempts_so_far(self, client: LLMClient, request: LLMRequest) -> int:
        """Provider 429s recorded in Redis for this request (0 without attempt_key)."""
        counter = self._attempt_counter(f"{client.provider}:{client.model}", request)
        return int(self.redis.get(counter) or 0) if counter else 0

    def _reserve_on(
        self, scopes: list[str], amount: int, model_key: str, stage: str, *, usd: bool, lease_s: float | None = None
    ) -> str | None:
        if self.ledger is None or not scopes:
            return None
        reservation = self.ledger.reserve(scopes, amount, lease_s=lease_s)
        if reservation is None:
            self._count("budget_refused")
            left = {s: self.ledger.remaining(s) for s in scopes}
            metrics.budget_refused(left, amount, usd=usd)
            log.warning("budget_refused", stage=stage, model_key=model_key, estimate=amount, remaining=left)
            if usd:
                raise BudgetExceededError(
                    f"dollar budget exhausted: the call may cost up to ${amount / MICRO_USD:.6f}, "
                    + ", ".join(f"{s} has ${n / MICRO_USD:.6f} left" for s, n in left.items())
                )
            raise BudgetExceededError(
                f"token budget exhausted: the call needs about {amount} tokens, "
                + ", ".join(f"{s} has {n} left" for s, n in left.items())
            )
        return reservation

    def _reserve(self, est: int, est_usd: int, model_key: str, stage: str, *, lease_s: float | None = None) -> _Held:
        """Reserve the call's tokens, then its micro-dollars; each is atomic across its
        scopes, and a refusal of the second gives the first back."""
        self._set_limits()
        tokens = self._reserve_on(self.budget_scopes, est, model_key, stage, usd=False, lease_s=lease_s)
        try:
            dollars = self._reserve_on(self.usd_scopes, est_usd, model_key, stage, usd=True, lease_s=lease_s)
        except BaseException:
            self._release(_Held(tokens, None))
            raise
        return _Held(tokens, dollars)

    def _release(self, held: _Held) -> None:
        if self.ledger is not None:
            for reservation in held:
                if reservation is not None:
                    self.ledger.release(reservation)

    def _renewed(self, held: _Held, est: int, est_usd: int, model_key: str, stage: str) -> _Held:
        """A wait in place can outlast the reservation's lease, whose tokens the next
        reserve on the scope then gives back: renew the lease, or reserve again (refused
        when the budget has no room left), so the tokens are never spent twice."""
        if self.ledger is None or all(self.ledger.renew(r) for r in held if r is not None):
            return held
        self._release(held)
        return self._reserve(est, est_usd, model_key, stage)

    def _admit(self, model_key: str, est: int, entry_id: str) -> float:
        """Wait (in place, up to max_sleep_s per wait) until the limiter admits the
        call; returns the seconds slept. Raises RateLimitWaitError for longer waits."""
        if self.limiter is None:
            return 0.0
        waited = 0.0
        while True:
            wait = self.limiter.acquire(
                model_key, est, entry_id=entry_id, weight=self.tenant_weight, waits_in_place_s=self.max_sleep_s
            )
            if wait <= 0:
                return waited
            self._count("limiter_waits")
            if wait > self.max_sleep_s:
                raise RateLimitWaitError(
                    f"{model_key} is rate limited for {wait:.1f}s more (over the {self.max_sleep_s:g}s "
                    f"this worker waits in place); retry later",
                    retry_after_s=wait,
                )
            self._wait_within_deadline(model_key, wait)
            self.sleep(wait)
            metrics.rate_limit_wait(model_key, wait)
            waited += wait
            self._count("waits_s", wait)

    def _backoff_s(self, exc: RateLimitedError, attempt: int) -> float:
        hint = exc.retry_after_s
        if hint is None and exc.rate_limit is not None:
            hint = exc.rate_limit.wait_hint_s()
        if hint is not None:
            return max(0.0, float(hint))
        return full_jitter_backoff_s(attempt, self.rng)

    # ------------------------------------------------------------------ the call

    def call(
        self, client: LLMClient, request: LLMRequest, *, stage: str, usable: AnswerCheck | None = None
    ) -> LLMResponse:
        try:
            self._set_limits()  # the job's budget scopes, at its first call
            return self._call(client, request, stage=stage, usable=usable)
        except POOL_EXHAUSTED as exc:
            # Redis answers, but this worker has no free connection to it: no outage
            # and no retry, which would pay again for calls already answered.
            log_exhaustion(exc, stage=stage)
            raise GatePoolExhaustedError(exhaustion_message(exc)) from None
        except redis.RedisError as exc:
            # The gate's state is out of reach (a Redis restart, a failover): the job
            # is retried later rather than failed or run without limits and budgets.
            log.warning("gate_state_unavailable", stage=stage, error=type(exc).__name__)
            raise GateStateUnavailableError(
                f"the call gate cannot reach Redis ({type(exc).__name__}); retrying"
            ) from None
        except SoftTimeLimitExceeded:
            # Celery's soft time limit (prefork) struck while the gate waited or
            # bookkept: the job ends TIMEOUT with what it has, not INTERNAL_ERROR.
            raise self._timed_out(stage, "soft time limit") from None

    def _estimates(self, model_key: str, request: LLMRequest, lane: str) -> tuple[int, int, ModelPrice | None]:
        """The call's token estimate, its micro-dollar estimate on `lane` (0 without a
        dollar budget), and the model's price (None: unpriced; a ConfigError when a
        dollar budget needs it)."""
        prompt_estimate = estimate_prompt_tokens(request)
        dollar_budget = self.ledger is not None and bool(self.usd_scopes)
        price = self.prices.price_for_budget(model_key) if dollar_budget else self.prices.lookup(model_key)
        est_usd = (
            price.estimate_micro_usd(prompt_estimate, request.max_tokens, lane=lane)
            if price is not None and dollar_budget
            else 0
        )
        return prompt_estimate + request.max_tokens, est_usd, price

    def _bulk_call(
        self, client: LLMClient, request: LLMRequest, *, stage: str, usable: AnswerCheck | None
    ) -> LLMResponse | None:
        """A bulk job's call: its answer from the bulk lane, None when it is to be made
        on the realtime lane now, or BulkWaitError (the job parks) with the call's
        budget reserved for as long as a batch may take."""
        assert self.bulk is not None and self.bulk_store is not None
        digest = RedisResponseCache.digest(client.provider, client.model, request)
        try:
            answer = bulk_answer(self.bulk, self.bulk_store, self.cache, client, request, stage=stage, digest=digest)
        except BulkWaitError as wait:
            self._stop_if_canceled(stage)  # neither queue a request nor wait for one
            if wait.new_request is not None:
                est, est_usd, _ = self._estimates(wait.model_key, request, "bulk")
                held = self._reserve(est, est_usd, wait.model_key, stage, lease_s=BULK_LIVE_TTL_S)
                wait.new_request |= {
                    "reservation": held.tokens or "",
                    "reservation_usd": held.usd or "",
                    "estimate": str(est),
                    "estimate_usd": str(est_usd),
                }
            raise
        if answer is not None and answer.cached:
            self._count("cache_hits")
            return answer.with_cost(0.0)  # paid for once, by the job that first asked
        if answer is not None and self.bulk_store.first_read(digest):  # a call answered in a batch, counted once
            model_key = f"{client.provider}:{client.model}"
            metrics.model_answered(model_key, stage, metrics.answer_outcome(answer, usable))
            metrics.model_usage(model_key, "bulk", answer.usage)
            if self.usage is not None and self.tenant is not None:
                self.usage.record(self.tenant, answer.usage, charged_tokens=answer.usage.total_tokens)
        return answer  # priced at the batch price when it landed

    def release_reserved(self, fields: dict[str, str] | None) -> None:
        """Give back what a bulk call reserved (its job joined another's request)."""
        if fields is not None:
            self._release(_Held(fields.get("reservation") or None, fields.get("reservation_usd") or None))

    def _call(self, client: LLMClient, request: LLMRequest, *, stage: str, usable: AnswerCheck | None) -> LLMResponse:
        provider, model = client.provider, client.model
        model_key = f"{provider}:{model}"
        if self.bulk is not None:
            answer = self._bulk_call(client, request, stage=stage, usable=usable)
            if answer is not None:
                return answer
            # Past its bulk deadline and the job allows it: the realtime lane, below.
        if self.cache is not None:
            hit = self.cache.get(provider, model, request, stage=stage)
            if hit is not None and usable is not None and not usable(hit):
                hit = None  # kept by an older vetq; asked again (and replaced if the new answer is usable)
            metrics.cache_lookup(stage, hit=hit is not None)
            if hit is not None:
                self._count("cache_hits")
                return hit.with_cost(0.0)  # paid for once, when it was first answered

        # A dollar budget needs the model's price before anything is sent.
        est, est_usd, price = self._estimates(model_key, request, self.lane)
        limit = self.limiter.limit_for(model_key) if self.limiter is not None else None
        if limit is not None and limit.tpm is not None and est > limit.tpm:
            raise RateLimitExhaustedError(
                f"{model_key}: the call needs about {est} tokens, more than its limit of {limit.tpm} tokens "
                f"per window; it can never be admitted"
            )

        counter = self._attempt_counter(model_key, request)
        counted = False  # whether this job has 429s recorded for the request (then cleared on success)
        local_attempts = 0
        waited = 0.0
        started = self.clock()
        while True:
            self._stop_if_canceled(stage)  # each attempt: a 429's cooldown may have been long
            reservation = self._reserve(est, est_usd, model_key, stage)
            entry_id = entry_id_for(self.tenant)
            try:
                slept = self._admit(model_key, est, entry_id)
                waited += slept
                if slept > 0:
                    reservation = self._renewed(reservation, est, est_usd, model_key, stage)
            except BaseException:
                self._release(reservation)
                raise
            attempt = local_attempts + 1
            if counter is not None:
                attempt = int(self.redis.get(counter) or 0) + 1
                counted = counted or attempt > 1
            left = self.time_left_s()
            if left is not None and left <= 0:
                self._release(reservation)
                raise self._timed_out(stage, "hard time limit")
            self._count("calls")
            try:
                response = client.complete(_clipped(request, left))
            except RateLimitedError as exc:
                self._release(reservation)
                self._count("rate_limited")
                metrics.rate_limited(model_key, stage)
                local_attempts += 1
                attempts = local_attempts
                if counter is not None:
                    pipe = self.redis.pipeline()
                    pipe.incr(counter)
                    pipe.expire(counter, self.attempt_ttl_s)
                    attempts = int(pipe.execute()[0])
                wanted = self._backoff_s(exc, attempts)
                cooldown = self.limiter.cooldown(model_key, wanted) if self.limiter is not None else wanted
                log.warning(
                    "rate_limited",
                    stage=stage,
                    provider=provider,
                    model=model,
                    retry_after=exc.retry_after_s,
                    cooldown_s=round(cooldown, 3),
                    attempt=attempts,
                    max_attempts=self.max_attempts,
                )
                if attempts >= self.max_attempts:
                    raise RateLimitExhaustedError(
                        f"{model_key} still rate limited after {attempts} attempts",
                        retry_after_s=cooldown,
                        rate_limit=exc.rate_limit,
                    ) from exc
                if cooldown > self.max_sleep_s:
                    raise RateLimitWaitError(
                        f"{model_key} is rate limited (HTTP 429); retry after {cooldown:.1f}s",
                        retry_after_s=cooldown,
                        rate_limit=exc.rate_limit,
                    ) from exc
                if self.limiter is None and cooldown > 0:
                    self._wait_within_deadline(model_key, cooldown)
                    self.sleep(cooldown)
                    metrics.rate_limit_wait(model_key, cooldown)
                    waited += cooldown
                    self._count("waits_s", cooldown)
                continue  # step 3 waits the shared cooldown out
            except BaseException as exc:
                self._release(reservation)
                self._count("errors")
                metrics.model_call_failed(model_key, stage, exc)
                if _interrupted_by_soft_limit(exc):
                    raise self._timed_out(stage, "soft time limit") from None
                left = self.time_left_s()
                if isinstance(exc, LLMError) and left is not None and left <= 0:
                    raise self._timed_out(stage, "hard time limit") from None
                raise
            break

        response = priced(response, price, lane=self.lane)
        usage = response.usage
        reported = usage.total_tokens > 0
        actual = usage.total_tokens if reported else est
        if self.ledger is not None:
            if reservation.tokens is not None:
                self.ledger.settle(reservation.tokens, actual)
            if reservation.usd is not None:
                cost = usage.cost_usd
                self.ledger.settle(reservation.usd, micro_usd(cost) if reported and cost is not None else est_usd)
        if self.limiter is not None:
            self.limiter.settle(model_key, entry_id, actual)
            self.limiter.learn(model_key, response.rate_limit)
        if self.usage is not None and self.tenant is not None:
            self.usage.record(self.tenant, usage, charged_tokens=actual)
        if counter is not None and counted:
            self.redis.delete(counter)
        outcome = metrics.answer_outcome(response, usable)
        if self.cache is not None and outcome == "ok":
            self.cache.put(provider, model, request, response, stage=stage)
        if (
            self.bulk is not None
            and self.bulk_store is not None
            and outcome == "ok"
            and RedisResponseCache.cacheable(request, response)
        ):
            self.bulk_store.keep_realtime_answer(
                RedisResponseCache.digest(provider, model, request),
                model_key,
                response.model_dump_json(),
                owner=self.bulk.job_id,
            )
        metrics.model_answered(model_key, stage, outcome, seconds=self.clock() - started)
        metrics.model_usage(model_key, self.lane, usage)
        log.info(
            "model_call",
            stage=stage,
            provider=provider,
            model=model,
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            cost_usd=usage.cost_usd,
            waited_s=round(waited, 3),
            attempt=attempt,
            cached=False,
            latency_ms=int((self.clock() - started) * 1000),
        )
        return response


def _clipped(request: LLMRequest, left_s: float | None) -> LLMRequest:
    """The request with its timeout cut to the time the job has left, so no call
    outlives the job's time limit."""
    if left_s is None or (request.timeout_s is not None and request.timeout_s <= left_s):
        return request
    return request.model_copy(update={"timeout_s": max(0.01, left_s)})


def _interrupted_by_soft_limit(exc: BaseException) -> bool:
    """The SDKs wrap whatever interrupts their read (an APIConnectionError caused by
    SoftTimeLimitExceeded), so the soft limit is found in the exception's chain."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, SoftTimeLimitExceeded):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False
