"""A worker's Prometheus metrics: what its jobs and its model calls did.

They hang on the seams every job and every call already passes, never elsewhere:

- jobs: Celery's task_prerun and task_postrun (workers/signals.py), which read the
  message's send time (the `vetq_sent_at` header) and the result envelope: its status,
  its error code, its flagged fields, a review's blindness warning. The same outcome
  the `job_finished` log line gives. A bulk job canceled while parked has no run to
  end it: the bulk coordinator counts it (`CANCELED`) when it takes it off its request;
- model calls: the call gate (workers/call_gate.py), where every call passes: its
  outcome (an answer the structured loop could not use is `malformed`, told to the
  gate by its `usable` check), tokens and dollars by lane, rate-limiter waits and
  cooldowns, budget refusals, response-cache lookups. A call answered in a batch is
  counted when the job that paid for it first reads its answer (once, however often
  the job runs again).

Every label is bounded: queues, kinds, outcomes, error codes, stages and lanes are
vetq's own vocabularies; `model` is a configured `provider:model`; a flagged field is
its schema's template path (`line_items[].amount`), and the (schema, field) pairs are
capped (MAX_FIELD_SERIES). No job id, trace id, key or document text is ever a label.

Exposure is opt-in (VETQ_METRICS_PORT): `vetq worker` serves /metrics on
VETQ_METRICS_ADDRESS (default 127.0.0.1). A prefork pool's jobs run in child
processes, so there the metrics use prometheus_client's multiprocess mode: each
process writes its values to mmap files in one directory per worker (under
VETQ_HOME, emptied at start), the parent sums them at scrape time, and a child that
exits is marked dead. Thread and solo pools run jobs in the serving process and need
none of that. Without a port the metrics are still counted in memory (a few
microseconds a job) and never served."""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from vetq.core.errors import ErrorCode
from vetq.core.logging import get_logger
from vetq.core.queue import KIND_OF_TASK, QUEUES, SENT_AT_HEADER

log = get_logger("vetq.metrics")

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
# Pools whose jobs run in child processes (prometheus_client's multiprocess mode).
PROCESS_POOLS = ("prefork", "processes")
OTHER = "other"
MAX_FIELD_SERIES = 1000
_FIELD_PATH = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[\])?(\.[A-Za-z_][A-Za-z0-9_]*(\[\])?)*")

# Seconds: a job runs from milliseconds (heuristics only) to the 300 s time limit, and
# may wait in its queue for minutes; a model call takes up to the provider timeout.
JOB_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600)
QUEUED_BUCKETS = (0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600)
CALL_BUCKETS = (0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60, 120)
WAIT_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10)
# A person's review of one item: seconds to an hour.
REVIEW_BUCKETS = (5, 10, 20, 30, 60, 120, 300, 600, 1800, 3600)


class WorkerMetrics:
    """The worker's metric families, registered on `registry` (None: on none, as in
    multiprocess mode, where the files are read instead)."""

    def __init__(self, registry: Any) -> None:
        from prometheus_client import Counter, Histogram

        self.jobs = Counter(
            "vetq_jobs",
            "Jobs run, by queue, kind and outcome (ok, needs_review, reviewed, an error code, retried, parked)",
            ["queue", "kind", "outcome"],
            registry=registry,
        )
        self.job_duration = Histogram(
            "vetq_job_duration_seconds",
            "Run time of one run of a job, from task start to task end",
            ["queue", "kind"],
            buckets=JOB_BUCKETS,
            registry=registry,
        )
        self.job_queued = Histogram(
            "vetq_job_queued_seconds",
            "Time a job waited in its queue: from the producer's send (or a requeue's due time) to its start",
            ["queue", "kind"],
            buckets=QUEUED_BUCKETS,
            registry=registry,
        )
        self.model_calls = Counter(
            "vetq_model_calls",
            "Model calls sent to a provider, by provider:model, stage and outcome "
            "(ok, truncated, rate_limited, server_error, client_error, timeout, network_error, malformed, error)",
            ["model", "stage", "outcome"],
            registry=registry,
        )
        self.model_call_duration = Histogram(
            "vetq_model_call_duration_seconds",
            "Time of one answered model call, rate-limit waits included",
            ["model", "stage"],
            buckets=CALL_BUCKETS,
            registry=registry,
        )
        self.tokens = Counter(
            "vetq_model_tokens",
            "Tokens of answered model calls, by provider:model, lane and type (input, output)",
            ["model", "lane", "type"],
            registry=registry,
        )
        self.cost = Counter(
            "vetq_model_cost_dollars",
            "What answered model calls cost, in US dollars, by provider:model and lane (unpriced models add nothing)",
            ["model", "lane"],
            registry=registry,
        )
        self.rate_limit_wait = Histogram(
            "vetq_rate_limit_wait_seconds",
            "Waits slept in place for the fleet's rate limiter or a 429's cooldown, by provider:model",
            ["model"],
            buckets=WAIT_BUCKETS,
            registry=registry,
        )
        self.cooldowns = Counter(
            "vetq_rate_limit_cooldowns",
            "Shared cooldowns started by a provider's 429, by provider:model",
            ["model"],
            registry=registry,
        )
        self.budget_refusals = Counter(
            "vetq_budget_refusals",
            "Model calls refused by a budget, by scope (job, batch, tenant) and unit (tokens, usd)",
            ["scope", "unit"],
            registry=registry,
        )
        self.cache_lookups = Counter(
            "vetq_response_cache_lookups",
            "Response-cache lookups before a model call, by stage and result (hit, miss)",
            ["stage", "result"],
            registry=registry,
        )
        self.blindness = Counter(
            "vetq_review_blindness",
            "Blind reviews whose proposal overlap was warned about or refused, by result (warning, refused)",
            ["result"],
            registry=registry,
        )
        self.webhooks = Counter(
            "vetq_webhook_deliveries",
            "Attempts to POST a job's result to its callback_url, by outcome "
            "(delivered, retried, refused, dead_lettered: the last attempt failed)",
            ["outcome"],
            registry=registry,
        )
        self.flagged_fields = Counter(
            "vetq_flagged_fields",
            "Fields flagged for review in extraction results, by schema and field path (list items as [])",
            ["schema", "field"],
            registry=registry,
        )
        # The human-review inbox (vetq.inbox): counted where an item is resolved, the
        # inbox's own process (`vetq inbox serve` serves them on /metrics).
        self.inbox_reviews = Counter(
            "vetq_inbox_reviews",
            "Inbox items a person resolved, by schema and outcome (confirmed: every value kept; corrected)",
            ["schema", "outcome"],
            registry=registry,
        )
        self.inbox_review_duration = Histogram(
            "vetq_inbox_review_seconds",
            "Time a person spent on one inbox item, from the claim to the resolution",
            ["schema"],
            buckets=REVIEW_BUCKETS,
            registry=registry,
        )
        self.inbox_corrections = Counter(
            "vetq_inbox_corrections",
            "Values a person corrected in the inbox, by schema and field path (list items as [])",
            ["schema", "field"],
            registry=registry,
        )
        self.inbox_items = Counter(
            "vetq_inbox_items",
            "Results taken into the inbox from the workers' stream, by schema",
            ["schema"],
            registry=registry,
        )


_lock = threading.Lock()
_metrics: WorkerMetrics | None = None
_registry: Any = None
_field_series: set[tuple[str, str]] = set()


def metrics() -> WorkerMetrics:
    """This process's metrics, built at first use (after serve_worker_metrics chose
    the mode). Single-process metrics live on a registry of vetq's own."""
    global _metrics, _registry
    if _metrics is None:
        with _lock:
            if _metrics is None:
                from prometheus_client import CollectorRegistry

                multiprocess = bool(os.environ.get(MULTIPROC_ENV))
                _registry = None if multiprocess else CollectorRegistry(auto_describe=True)
                _metrics = WorkerMetrics(_registry)
    return _metrics


def registry() -> Any:
    """The registry the single-process metrics are on."""
    metrics()
    return _registry


# --------------------------------------------------------------------------- labels


def queue_label(queue: Any) -> str:
    return queue if queue in QUEUES else OTHER


def kind_label(task_name: Any) -> str:
    return KIND_OF_TASK.get(task_name, "noop" if task_name == "vetq.noop" else OTHER)


def job_outcome(kind: str, state: Any, retval: Any) -> str:
    """ok, needs_review, reviewed (a review's ok), an error code; retried, parked
    (a bulk job waiting for its batch) or failed (an exception) otherwise."""
    if state == "SUCCESS" and isinstance(retval, Mapping):
        status = retval.get("status")
        if status == "ok":
            return "reviewed" if kind == "review" else "ok"
        if status == "needs_review":
            return "needs_review"
        error = retval.get("error")
        code = error.get("code") if isinstance(error, Mapping) else None
        return str(code) if code in ErrorCode._value2member_map_ else "error"
    return {"RETRY": "retried", "IGNORED": "parked", "FAILURE": "failed"}.get(str(state), OTHER)


def schema_label(schema: Any) -> str:
    name = str(schema) if isinstance(schema, str) and _FIELD_PATH.fullmatch(schema.replace("-", "_")) else OTHER
    return name[:100]


def field_labels(schema: Any, path: Any) -> tuple[str, str]:
    """(schema, field) of a flagged field: its template path, bounded in count."""
    name = schema_label(schema)
    template = re.sub(r"\[\d+\]", "[]", path) if isinstance(path, str) else ""
    field = template if _FIELD_PATH.fullmatch(template) and len(template) <= 200 else OTHER
    pair = (name, field)
    with _lock:
        if pair not in _field_series:
            if len(_field_series) >= MAX_FIELD_SERIES:
                return OTHER, OTHER
            _field_series.add(pair)
    return pair


def call_outcome(exc: BaseException) -> str:
    """The outcome of a model call that raised `exc`."""
    from vetq.core.llm.errors import (
        MalformedResponseError,
        OutputTruncatedError,
        ProviderHTTPError,
        ProviderNetworkError,
        RateLimitedError,
    )

    if isinstance(exc, RateLimitedError):
        return "rate_limited"
    if isinstance(exc, ProviderHTTPError):
        return "server_error" if exc.status >= 500 else "client_error"
    if getattr(exc, "code", None) == ErrorCode.TIMEOUT:
        return "timeout"
    if isinstance(exc, ProviderNetworkError):
        return "network_error"
    if isinstance(exc, MalformedResponseError):
        return "malformed"
    if isinstance(exc, OutputTruncatedError):
        return "truncated"
    return "error"


def scope_label(scope: str) -> str:
    kind = scope.split(":", 1)[0]
    return kind if kind in ("job", "batch", "tenant") else OTHER


# --------------------------------------------------------------------------- jobs


def job_started(task: Any, queue: Any, sent_at: Any) -> None:
    """Time in the queue: from the send (or a requeue's due time) to now."""
    try:
        sent = float(sent_at)
    except (TypeError, ValueError):
        return
    waited = max(0.0, time.time() - sent)
    metrics().job_queued.labels(queue_label(queue), kind_label(getattr(task, "name", None))).observe(waited)


def job_finished(task: Any, queue: Any, state: Any, retval: Any, runtime_s: float | None) -> None:
    m = metrics()
    kind = kind_label(getattr(task, "name", None))
    queue = queue_label(queue)
    m.jobs.labels(queue, kind, job_outcome(kind, state, retval)).inc()
    if runtime_s is not None:
        m.job_duration.labels(queue, kind).observe(runtime_s)
    if not isinstance(retval, Mapping):
        return
    flagged = retval.get("flagged_fields")
    if isinstance(flagged, list) and flagged:
        schema = retval.get("schema")
        name = schema.get("name") if isinstance(schema, Mapping) else None
        for item in flagged:
            if isinstance(item, Mapping):
                m.flagged_fields.labels(*field_labels(name, item.get("field"))).inc()
    if kind == "review":
        error = retval.get("error")
        meta = retval.get("meta")
        if isinstance(error, Mapping) and error.get("code") == ErrorCode.BLINDNESS_LEAK.value:
            m.blindness.labels("refused").inc()
        elif isinstance(meta, Mapping) and meta.get("blindness_warning"):
            m.blindness.labels("warning").inc()


def webhook_attempted(outcome: str) -> None:
    metrics().webhooks.labels(outcome).inc()


def parked_job_canceled(task_name: str, queue: Any) -> None:
    """A bulk job canceled while parked ends with no run of its own (its client wrote
    its result): the coordinator counts it, once, as a run would have."""
    m = metrics()
    m.jobs.labels(queue_label(queue), kind_label(task_name), ErrorCode.CANCELED.value).inc()


def header_of(request: Any, name: str) -> Any:
    value = getattr(request, name, None)
    if value is None:
        headers = getattr(request, "headers", None) or {}
        value = headers.get(name) if isinstance(headers, dict) else None
    return value


def sent_at_of(request: Any) -> Any:
    return header_of(request, SENT_AT_HEADER)


# --------------------------------------------------------------------------- the inbox


def inbox_item_added(schema: Any) -> None:
    metrics().inbox_items.labels(schema_label(schema)).inc()


def inbox_item_resolved(schema: Any, seconds: float | None, corrected: list[str]) -> None:
    """A person resolved an item: its outcome, their time, and each corrected field."""
    m = metrics()
    name = schema_label(schema)
    m.inbox_reviews.labels(name, "corrected" if corrected else "confirmed").inc()
    if seconds is not None:
        m.inbox_review_duration.labels(name).observe(max(0.0, seconds))
    for path in corrected:
        m.inbox_corrections.labels(*field_labels(schema, path)).inc()


# --------------------------------------------------------------------------- the call gate


def answer_outcome(response: Any, usable: Any) -> str:
    """The outcome of an answered call: truncated (cut off at max_tokens), malformed
    (`usable`, the structured loop's parse, could not use it) or ok."""
    if response.truncated:
        return "truncated"
    return "ok" if usable is None or usable(response) else "malformed"


def model_answered(model_key: str, stage: str, outcome: str, *, seconds: float | None = None) -> None:
    """An answered call (realtime, with its time; or a batch's, without)."""
    m = metrics()
    m.model_calls.labels(model_key, stage, outcome).inc()
    if seconds is not None:
        m.model_call_duration.labels(model_key, stage).observe(max(0.0, seconds))


def model_usage(model_key: str, lane: str, usage: Any) -> None:
    """Tokens and dollars of an answer, by the lane it was answered on."""
    m = metrics()
    if usage.prompt_tokens:
        m.tokens.labels(model_key, lane, "input").inc(usage.prompt_tokens)
    if usage.completion_tokens:
        m.tokens.labels(model_key, lane, "output").inc(usage.completion_tokens)
    if usage.cost_usd:
        m.cost.labels(model_key, lane).inc(usage.cost_usd)


def model_call_failed(model_key: str, stage: str, exc: BaseException) -> None:
    metrics().model_calls.labels(model_key, stage, call_outcome(exc)).inc()


def rate_limited(model_key: str, stage: str) -> None:
    """A provider 429: a call with that outcome, and a shared cooldown started."""
    m = metrics()
    m.model_calls.labels(model_key, stage, "rate_limited").inc()
    m.cooldowns.labels(model_key).inc()


def rate_limit_wait(model_key: str, seconds: float) -> None:
    metrics().rate_limit_wait.labels(model_key).observe(max(0.0, seconds))


def budget_refused(left: Mapping[str, int], amount: int, *, usd: bool) -> None:
    """The scopes a reservation of `amount` did not fit (the first, if a race refilled them)."""
    refused = [scope for scope, remaining in left.items() if remaining < amount] or list(left)[:1]
    for scope in refused:
        metrics().budget_refusals.labels(scope_label(scope), "usd" if usd else "tokens").inc()


def cache_lookup(stage: str, *, hit: bool) -> None:
    metrics().cache_lookups.labels(stage, "hit" if hit else "miss").inc()


# --------------------------------------------------------------------------- exposure


def multiprocess_dir(home: Path, port: int) -> Path:
    """The worker's directory of multiprocess files: under VETQ_HOME (per user, not a
    shared /tmp), one per port, so one worker's start never empties another's."""
    return Path(home) / "metrics" / f"worker-{port}"


def serve_worker_metrics(settings: Any, *, pool: str) -> str | None:
    """Serve this worker's /metrics when VETQ_METRICS_PORT is set (before the pool
    starts, so prefork children inherit the mode). Returns the URL, or None."""
    global _metrics, _registry
    if settings.metrics_port is None:
        return None
    from prometheus_client import CollectorRegistry, start_http_server, values

    port, address = int(settings.metrics_port), settings.metrics_address
    if pool in PROCESS_POOLS:
        from prometheus_client.multiprocess import MultiProcessCollector

        directory = multiprocess_dir(settings.home, port)
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        served = CollectorRegistry()
        MultiProcessCollector(served, path=str(directory))
    else:
        directory = None
        served = registry()
    try:
        start_http_server(port, addr=address, registry=served)
    except OSError as exc:
        from vetq.core.errors import ConfigError

        raise ConfigError(
            f"VETQ_METRICS_PORT: cannot listen on {address}:{port} ({exc.strerror or exc}); another worker on "
            f"this host needs a port of its own"
        ) from None
    if directory is not None:
        # Bound first: a second worker given the same port stops above, before it
        # could empty the first one's files.
        for stale in directory.glob("*.db"):
            stale.unlink()
        os.environ[MULTIPROC_ENV] = str(directory)
        # prometheus_client picks its value class when first imported; choose again
        # now the directory is set, and build the metrics on it.
        values.ValueClass = values.get_value_class()
        with _lock:
            _metrics, _registry = None, None
    log.info("metrics_serving", address=address, port=port, multiprocess=directory is not None)
    return f"http://{address}:{port}/metrics"


def process_exited(pid: int | None = None) -> None:
    """A pool child ends: its live gauges go (prometheus_client's bookkeeping; its
    counters and histograms stay summed, as counters must)."""
    directory = os.environ.get(MULTIPROC_ENV)
    if not directory:
        return
    from prometheus_client.multiprocess import mark_process_dead

    mark_process_dead(pid or os.getpid(), directory)
