"""The queue contract shared by producers (api_client) and workers: task names,
queues, routing and the Celery configuration as plain data.

Producers send tasks by name with this configuration, so they need no worker code;
workers start from the same dict, so both sides always agree on serializer,
result backend and expiry."""

from __future__ import annotations

from typing import Any

from vetq.core.redis_keys import EXTRACT_QUEUE, REVIEW_QUEUE, WEBHOOK_QUEUE, priority_queue_key
from vetq.core.redis_url import normalise_redis_url
from vetq.core.settings import VetqSettings

# A queue's name is its Redis key as well, so it is named with the other keys.
QUEUES = (EXTRACT_QUEUE, REVIEW_QUEUE)

TASK_EXTRACT = "vetq.extract"
TASK_VALIDATE = "vetq.validate"
TASK_REVIEW = "vetq.review"
TASK_NOOP = "vetq.noop"
# One POST of a finished job's result to its callback_url (workers/webhooks.py): not a job.
TASK_WEBHOOK = "vetq.webhook"

TASK_QUEUES = {
    TASK_EXTRACT: EXTRACT_QUEUE,
    TASK_VALIDATE: EXTRACT_QUEUE,
    TASK_REVIEW: REVIEW_QUEUE,
    TASK_NOOP: EXTRACT_QUEUE,
    TASK_WEBHOOK: WEBHOOK_QUEUE,
}

TRACE_HEADER = "trace_id"
# Epoch seconds at which the producer sent the job (a requeue: the time it is due
# again): the worker's metrics measure the time a job waited in its queue from it.
SENT_AT_HEADER = "vetq_sent_at"
# Dollar budgets travel in the message headers, like the batch's token budget
# (`batch_id`, `batch_token_budget`): a job's own (`submit_*(budget_usd=...)`) and its
# batch's (`submit_batch(budget_usd=...)`), in US dollars; the worker's call gate keeps
# them in the ledger as micro-dollars (scopes `job:<id>:usd`, `batch:<id>:usd`).
BUDGET_USD_HEADER = "budget_usd"
BATCH_BUDGET_USD_HEADER = "batch_budget_usd"
# The lane (core.lanes): "bulk" sends the job's calls in the providers' batches, by
# `vetq_bulk_deadline` (epoch seconds, or none) and, past it, on the realtime lane when
# `vetq_realtime_fallback` is true. No lane header: realtime.
LANE_HEADER = "vetq_lane"
BULK_DEADLINE_HEADER = "vetq_bulk_deadline"
REALTIME_FALLBACK_HEADER = "vetq_realtime_fallback"
# A producer's other options (core.job_options): "high" or "low" (no header: normal),
# the tenant the job runs for, and the URL its final result is POSTed to.
PRIORITY_HEADER = "vetq_priority"
TENANT_HEADER = "vetq_tenant"
CALLBACK_URL_HEADER = "vetq_callback_url"
# The batch a job was submitted in (a batch's webhook bodies name it), and its shared
# token budget.
BATCH_HEADER = "batch_id"
BATCH_BUDGET_HEADER = "batch_token_budget"
# A review job in one of the benchmark-only modes (VETQ_BENCH_MODES; eval/review_bench).
BENCH_MODE_HEADER = "bench_mode"

# --- priorities (README, Priorities) ---
# A job's priority picks the list it waits in: kombu's Redis transport keeps one list
# per priority step of a queue, chosen by the message's kombu `priority`, and its
# restore of a dead worker's jobs, its size and its purge all follow the same steps.
# Normal is step 0, the queue's own key, as every job was before priorities: a normal
# job is sent and popped exactly as before, and a job from an older producer is a
# normal one. The numbers only name the lists; the order they are served in is the
# workers' weighted pop (workers/lua/reliable_pop.lua), not kombu's lowest-first.
PRIORITY_STEPS = {"high": 3, "normal": 0, "low": 9}
# When all three have work, of every 10 jobs a queue starts, 6 are high, 3 normal and
# 1 low; a level with nothing waiting gives its turn to the highest one that has work.
# Weights, not strict order, so a steady stream of high jobs never starves the others:
# the low job at the head of its list is taken within 10 starts of its queue (normal
# within 4), while the high one waits for at most one other start; a lone level gets
# every turn. The turn is kept in Redis, one per queue, so the share is the fleet's.
PRIORITY_WEIGHTS = {"high": 6, "normal": 3, "low": 1}
PRIORITY_LEVELS = ("high", "normal", "low")  # the order a free turn falls through


def weighted_schedule(weights: dict[str, int]) -> tuple[str, ...]:
    """One round of turns, each level as often as its weight and spread out (smooth
    weighted round-robin, as nginx balances upstreams): h n h h n h l h n h."""
    current = dict.fromkeys(PRIORITY_LEVELS, 0)
    total = sum(weights.values())
    turns = []
    for _ in range(total):
        for level in PRIORITY_LEVELS:
            current[level] += weights[level]
        chosen = max(PRIORITY_LEVELS, key=lambda level: current[level])  # the first of a tie
        current[chosen] -= total
        turns.append(chosen)
    return tuple(turns)


PRIORITY_SCHEDULE = weighted_schedule(PRIORITY_WEIGHTS)


def priority_step(level: Any) -> int:
    """The kombu priority a job is sent with, from its `vetq_priority` header (none,
    or anything else, is normal: step 0)."""
    return PRIORITY_STEPS.get(level, 0) if isinstance(level, str) else 0


def priority_keys(queue: str) -> tuple[str, ...]:
    """A queue's lists, high, normal, low (its depth is their sum)."""
    return tuple(priority_queue_key(queue, PRIORITY_STEPS[level]) for level in PRIORITY_LEVELS)


# The Celery state of a bulk job parked until its provider batch answers (no worker
# slot held); clients read it as JobStatus.WAITING.
BULK_WAITING_STATE = "WAITING"
KIND_OF_TASK = {TASK_EXTRACT: "extract", TASK_VALIDATE: "validate", TASK_REVIEW: "review"}

# What a requeued job's countdown leaves free of the visibility timeout besides the
# hard time limit: writing the result and the ack after the job's last second.
REQUEUE_MARGIN_S = 2.0
MIN_REQUEUE_STEP_S = 1.0


def soft_time_limit_s(task_time_limit_s: int) -> int:
    """The soft limit leaves a fifth of the hard limit to end the job as a TIMEOUT
    envelope and write it (8 s of 10, 240 s of 300), not a fixed 10 s that leaves a
    job at the 10 s minimum one second."""
    return max(1, int(task_time_limit_s * 0.8))


def requeue_step_s(visibility_timeout_s: float, task_time_limit_s: float) -> float:
    """The longest countdown a requeued job may get. Kombu holds an ETA message
    unacknowledged from its delivery until the job ends, so countdown + run time must
    stay under the visibility timeout, or Redis hands the job to a second worker."""
    return float(visibility_timeout_s) - float(task_time_limit_s) - REQUEUE_MARGIN_S


def _publish_retry_logged(exc: BaseException, interval: float) -> None:
    from vetq.core.logging import get_logger

    get_logger("vetq.client").warning(
        "broker_unreachable_retrying", error=f"{type(exc).__name__}: {exc}", retry_in_s=round(float(interval), 2)
    )


def celery_config(settings: VetqSettings, redis_url: str) -> dict[str, Any]:
    """Everything both sides must agree on. Why each setting is there:

    - JSON only: a pickled message could run code in the worker; it is refused.
    - acks_late + reject_on_worker_lost: a job is acknowledged only after it ends,
      so a worker killed mid-job gives the job back instead of losing it.
    - prefetch 1: a worker holds one waiting job, not a pile a dying worker strands.
    - visibility timeout > hard time limit + the longest requeue countdown: Redis
      redelivers an unacknowledged job only after it could no longer be waiting or
      running, so a job never runs twice (longer waits are taken in steps).
    - result_expires: results are kept for VETQ_RESULT_TTL_S, then Redis reclaims them.
    - task_track_started (VETQ_TRACK_STARTED, on by default): the STARTED state that
      `Job.status()` reports as `running`. A worker stores it in one round trip and
      publishes it to nobody (workers/result_backend.py): about 0.2 ms of worker CPU
      a job (half of Celery's own read-then-write), a tenth to a fifth of what a
      heuristics-only job costs a worker and nothing next to a model call, for a
      status that tells a job a worker holds from one still waiting. A fleet that
      never asks for a job's status can turn it off; a job then reads `queued` until
      it ends (README, Performance).
    """
    redis_url = normalise_redis_url(redis_url)  # kombu reads credentials only from the userinfo
    return {
        "broker_url": redis_url,
        "result_backend": redis_url,
        "task_serializer": "json",
        "result_serializer": "json",
        "accept_content": list(settings.accept_content),
        "result_accept_content": ["json"],
        "task_acks_late": True,
        "task_reject_on_worker_lost": True,
        "worker_prefetch_multiplier": 1,
        "task_track_started": settings.track_started,
        "task_time_limit": settings.task_time_limit_s,
        "task_soft_time_limit": soft_time_limit_s(settings.task_time_limit_s),
        "result_expires": settings.result_ttl_s,
        # kombu sweeps unacked messages of dead consumers back to their queue only every
        # interval x throttle seconds (10 x 10 by default, after the visibility timeout);
        # every 10 s here, and a sweep lock left by a killed worker expires in 60 s, not 300.
        "broker_transport_options": {
            "visibility_timeout": settings.visibility_timeout_s,
            "unacked_restore_interval": 10,
            "unacked_restore_throttle": 1,
            "unacked_mutex_expire": 60,
            # Exactly vetq's three steps, so any kombu priority a message carries lands
            # in one of the lists the workers' pop reads (kombu rounds down to a step).
            "priority_steps": sorted(PRIORITY_STEPS.values()),
        },
        "result_backend_transport_options": {"visibility_timeout": settings.visibility_timeout_s},
        "broker_connection_retry_on_startup": True,
        "broker_connection_max_retries": settings.broker_connect_retries,
        # A producer whose Redis is briefly gone (restart, failover) retries the send,
        # ~30 s in all, logging each attempt, instead of failing the submit at once.
        "task_publish_retry": True,
        "task_publish_retry_policy": {
            "max_retries": 20,
            "interval_start": 0,
            "interval_step": 0.5,
            "interval_max": 2,
            "errback": _publish_retry_logged,
        },
        # A worker whose result write meets a dropped connection retries it rather than
        # losing the result of a job that ran.
        "result_backend_always_retry": True,
        "result_backend_max_retries": 20,
        "task_routes": {name: {"queue": queue} for name, queue in TASK_QUEUES.items()},
        "task_default_queue": EXTRACT_QUEUE,
        "task_create_missing_queues": True,
        "worker_hijack_root_logger": False,
        "worker_redirect_stdouts": False,
        "worker_send_task_events": False,
        "enable_utc": True,
    }


def unsafe_settings(config: dict[str, Any]) -> list[str]:
    """What would let a job run twice, run code from a message, or be lost."""
    problems = []
    accepted = set(config.get("accept_content") or [])
    if accepted - {"json", "application/json"}:
        problems.append(f"accept_content allows {sorted(accepted - {'json', 'application/json'})}: only JSON is safe")
    if config.get("task_serializer") != "json":
        problems.append(f"task_serializer is {config.get('task_serializer')!r}, not json")
    visibility = (config.get("broker_transport_options") or {}).get("visibility_timeout", 3600)
    limit = config.get("task_time_limit") or 0
    if requeue_step_s(visibility, limit) < MIN_REQUEUE_STEP_S:
        problems.append(
            f"visibility timeout ({visibility}s, VETQ_VISIBILITY_TIMEOUT_S) is not longer than the hard time limit "
            f"({limit}s, VETQ_TASK_TIME_LIMIT_S) plus {REQUEUE_MARGIN_S + MIN_REQUEUE_STEP_S:g}s: a slow job, or a "
            f"retry countdown, would be delivered to a second worker while the first still holds it"
        )
    if not config.get("task_acks_late"):
        problems.append("task_acks_late is off: a worker killed mid-job would lose it")
    return problems
