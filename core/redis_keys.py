"""Every Redis key vetq names, in one place: for each, what it holds, how long it
lives and who writes it. Producers (api_client) and workers import their keys from
here, so the two sides cannot drift apart.

The strings are deployed data: producers and workers of different releases share one
Redis (the embedded one keeps them in its append-only file under VETQ_HOME), and a
renamed key strands what the old one holds (a job's submitted mark, a budget half
spent, a dead letter). Change none of them without a migration.

Every key a Lua script touches shares one hash tag, so the script's keys sit in one
Redis Cluster slot (tests/test_redis_slots.py): the ledger's prefix, or the limiter's
`provider:model`. The scripts themselves are listed in workers/lua_scripts.py."""

from __future__ import annotations

__all__ = [
    "ATTEMPTS_PREFIX",
    "BATCH_RECORD_PREFIX",
    "BATCH_SCOPE_PREFIX",
    "BUDGET_PREFIX",
    "BULK_CANCELED_KEY",
    "BULK_LOCK_KEY",
    "BULK_MODELS_KEY",
    "BULK_OPEN_KEY",
    "BULK_PREFIX",
    "BULK_SUBMISSIONS_KEY",
    "BULK_WAKE_KEY",
    "CANCEL_KEY_PREFIX",
    "CELERY_RESULT_PREFIX",
    "DEAD_LETTER_KEY",
    "EXTRACT_QUEUE",
    "FAIR_QUEUE_PREFIX",
    "IDLE_KEY_PREFIX",
    "INBOX_GROUP",
    "INBOX_STREAM",
    "JOB_SCOPE_PREFIX",
    "KOMBU_BINDING_PREFIX",
    "KOMBU_PRIORITY_SEPARATOR",
    "KOMBU_UNACKED_INDEX_KEY",
    "KOMBU_UNACKED_KEY",
    "KOMBU_UNACKED_MUTEX_KEY",
    "PRIORITY_TURN_PREFIX",
    "RATE_LIMIT_PREFIX",
    "RESPONSE_CACHE_PREFIX",
    "REVIEW_QUEUE",
    "SUBMITTED_KEY_PREFIX",
    "TELEMETRY_STREAM",
    "TENANT_SCOPE_PREFIX",
    "TENANT_USAGE_PREFIX",
    "USD_SCOPE_SUFFIX",
    "WEBHOOK_QUEUE",
    "WEBHOOK_UNDELIVERED_PREFIX",
    "attempts_key",
    "batch_jobs_key",
    "batch_record_key",
    "batch_scope",
    "budget_hash_tag",
    "budget_lease_key",
    "budget_reservation_key",
    "budget_scope_key",
    "bulk_batch_key",
    "bulk_hold_key",
    "bulk_job_key",
    "bulk_pending_key",
    "bulk_request_key",
    "bulk_submission_key",
    "bulk_vbatch_key",
    "bulk_waiters_key",
    "cancel_key",
    "fair_queue_keys",
    "idle_key",
    "job_scope",
    "priority_queue_key",
    "priority_turn_key",
    "rate_limit_keys",
    "rate_limit_sum_key",
    "rate_limit_waiting_keys",
    "response_cache_key",
    "submitted_key",
    "tenant_scope",
    "tenant_usage_key",
    "usd_scope",
    "webhook_undelivered_key",
]

# --------------------------------------------------------------------------- queues

# Lists of kombu messages, named by the queue. Producers push (send_task), workers pop
# (workers/reliable_transport.py); no TTL: a message waits until a worker takes it.
EXTRACT_QUEUE = "extract"
REVIEW_QUEUE = "review"
# The webhook deliveries (workers/webhooks.py): every worker serves it beside its job
# queues (workers/runner.py), without blocking on it when idle (reliable_transport.py).
WEBHOOK_QUEUE = "webhook"
# kombu's Redis transport keeps one list per priority step of a queue: the queue's own
# key for step 0 (vetq's normal jobs, and every job sent before priorities), and
# `<queue>\x06\x16<step>` for the others (kombu's separator; vetq's steps are in
# core.queue.PRIORITY_STEPS). kombu's own restore, size and purge name them the same way
# (tests/test_redis_keys.py checks it against the installed kombu).
KOMBU_PRIORITY_SEPARATOR = "\x06\x16"


def priority_queue_key(queue: str, step: int) -> str:
    return f"{queue}{KOMBU_PRIORITY_SEPARATOR}{step}" if step else queue


# String `vetq:priority_turn:<queue>` = the queue's place (0-9) in the weighted turn of
# its priorities (core.queue.PRIORITY_SCHEDULE), read and moved on by every pop that
# takes a message off the queue (workers/lua/reliable_pop.lua), so the whole fleet's
# pops follow one schedule; no TTL (one short string per queue).
PRIORITY_TURN_PREFIX = "vetq:priority_turn:"


def priority_turn_key(queue: str) -> str:
    return f"{PRIORITY_TURN_PREFIX}{queue}"


# A queue's fair pop (workers/reliable_transport.py, workers/lua/reliable_pop.lua):
# once a message with a tenant (header `vetq_tenant`) reaches the head of a queue, the
# workers' pop sets messages aside per tenant and serves the tenants in turn, by weight:
#   vetq:fq:<queue key>:t:<tenant>  list of that tenant's messages, in queue order
#                                   (`t:` alone: the messages without a tenant)
#   vetq:fq:<queue key>:active      sorted set of the tenants with messages set aside,
#                                   scored by their pass (served once: + 1 / weight)
#   vetq:fq:<queue key>:state       hash: `queued` (messages set aside, for the queue's
#                                   depth), `pass` (where a tenant that comes back starts)
# No TTL: a message waits until a worker takes it, as on its queue. The script builds
# these names from the prefix and the queue key it is passed.
FAIR_QUEUE_PREFIX = "vetq:fq:"


def fair_queue_keys(queue_key: str, prefix: str = FAIR_QUEUE_PREFIX) -> tuple[str, str, str]:
    """The active set, the state hash and the prefix of the tenants' lists of one queue key."""
    base = f"{prefix}{queue_key}"
    return f"{base}:active", f"{base}:state", f"{base}:t:"


# ----------------------------------------------------------------- written by producers

# String `vetq:submitted:<job id>` = 1, set by the client that submitted the job, with
# the results' TTL (VETQ_RESULT_TTL_S): an id without one was never issued here, or
# has expired, and reads as NOT_FOUND rather than as a job still waiting.
SUBMITTED_KEY_PREFIX = "vetq:submitted:"


def submitted_key(job_id: str) -> str:
    return f"{SUBMITTED_KEY_PREFIX}{job_id}"


# Hash `vetq:webhook:undelivered:<job id>`: delivery id -> the delivery a worker gave up
# on (JSON: url, body, trace id), kept for VETQ_RESULT_TTL_S so `vetq dead redeliver`
# can send exactly it again once the receiver is fixed (workers/webhooks.py).
WEBHOOK_UNDELIVERED_PREFIX = "vetq:webhook:undelivered:"


def webhook_undelivered_key(job_id: str) -> str:
    return f"{WEBHOOK_UNDELIVERED_PREFIX}{job_id}"


# String `vetq:cancel:{celery-task-meta-<job id>}` = 1: the job was asked to cancel
# (Client.cancel, `vetq cancel`), set by the client that cancels it, with the results'
# TTL. A worker reads it in the same script that stores the job's STARTED state
# (workers/lua/result_store.lua: a queued job ends CANCELED without running) and the
# call gate before each model call (a running job stops there). Its hash tag is the
# job's result key, so the mark and the result sit in one Redis Cluster slot.
CANCEL_KEY_PREFIX = "vetq:cancel:"


def cancel_key(job_id: str) -> str:
    return f"{CANCEL_KEY_PREFIX}{{{CELERY_RESULT_PREFIX}{job_id}}}"


# A producer's idempotency key (hashed, by tenant) -> the job it submitted and its
# request's fingerprint (JSON); kept for VETQ_RESULT_TTL_S, as the job's result is.
IDEMPOTENCY_KEY_PREFIX = "vetq:idempotency:"


def idempotency_key(tenant: str | None, key_digest: str) -> str:
    return f"{IDEMPOTENCY_KEY_PREFIX}{tenant or ''}:{key_digest}"


# Stream of review telemetry records (field `record`, JSON), appended by workers
# (VETQ_TELEMETRY=on) and by clients' record_outcome; no TTL, trimmed to about a
# million entries (core.review.telemetry.StreamSink's maxlen).
TELEMETRY_STREAM = "vetq:telemetry"

# ------------------------------------------------------------------- written by workers

# List of refused messages (JSON entries, redacted previews), newest first, pushed by
# workers/dead_letter.py and trimmed to its DEAD_LETTER_CAP; no TTL: an operator reads
# it with `vetq dead list`.
DEAD_LETTER_KEY = "vetq:dead"

# Stream of the results a person must review (VETQ_INBOX=on): one entry per needs_review
# result (and, with VETQ_INBOX_REVIEW_VERDICTS, per review verdict), fields `job_id`,
# `task`, `request` (the job's payload, JSON: the document and its schema), `result`
# (JSON), `tenant`, `priority`, `finished_at`. Appended by workers in their task_postrun
# (workers/signals.py); read by the inbox (`vetq inbox sync`, `vetq inbox serve`)
# through the consumer group INBOX_GROUP, which XACKs and XDELs an entry once its item
# is committed to the inbox's database. No TTL and no trim: an entry waits, however
# long, for an inbox to take it.
INBOX_STREAM = "vetq:inbox"
# The stream's consumer group (a name inside the stream, not a key of its own).
INBOX_GROUP = "vetq-inbox"

# String `vetq:cache:<sha256 of provider, model and request>` = the LLMResponse JSON,
# written by the call gate's response cache (workers/response_cache.py), TTL
# VETQ_CACHE_TTL_S. Single-key commands only, so it needs no hash tag.
RESPONSE_CACHE_PREFIX = "vetq:cache"


def response_cache_key(digest: str, prefix: str = RESPONSE_CACHE_PREFIX) -> str:
    return f"{prefix}:{digest}"


# The fleet's rate limiter (workers/rate_limiter.py), four keys per `provider:model`,
# all with that model as their hash tag:
#   vetq:rl:{provider:model}:w    sorted set of admitted entry ids, scored by time (ms)
#   vetq:rl:{provider:model}:t    hash entry id -> tokens
#   vetq:rl:{provider:model}:sum  hash: the window's running sum (`tokens`, over
#                                 `entries` entries; `recounts`, how often it was counted
#                                 again; per tenant `n:<tenant>` entries and
#                                 `k:<tenant>` tokens, `tn`/`tk` for all tenants), so an
#                                 acquire never reads the whole window;
#                                 written with w and t by the same scripts
#                                 (workers/lua/include/rl_window.lua says why it cannot
#                                 drift), deleted with the window's last entry
#   vetq:rl:{provider:model}:cd   the shared cooldown; its PTTL is the time left
# The window, token and sum keys expire together, one window (+1 s, less 10 ms) after
# their last write.
RATE_LIMIT_PREFIX = "vetq:rl"


def rate_limit_keys(model_key: str, prefix: str = RATE_LIMIT_PREFIX) -> tuple[str, str, str]:
    """The window, tokens and cooldown keys of one `provider:model`."""
    base = f"{prefix}:{{{model_key}}}"
    return f"{base}:w", f"{base}:t", f"{base}:cd"


def rate_limit_sum_key(model_key: str, prefix: str = RATE_LIMIT_PREFIX) -> str:
    """The running sum of one `provider:model` window's tokens."""
    return f"{prefix}:{{{model_key}}}:sum"


# Two more keys per `provider:model` once tenants share it (workers/lua/include/rl_fair.lua):
#   vetq:rl:{provider:model}:wq   sorted set of the calls waiting in place for the model,
#                                 `<entry id>|<tokens>` scored by when the call must have
#                                 asked again (ms) or be forgotten
#   vetq:rl:{provider:model}:wp   hash per waiting tenant: `n:<tenant>` calls, `k:<tenant>`
#                                 tokens, `w:<tenant>` weight (the tenant `` is the calls
#                                 sent without one)
# Both expire together when the last registration would.
def rate_limit_waiting_keys(model_key: str, prefix: str = RATE_LIMIT_PREFIX) -> tuple[str, str]:
    """The waiting calls and the waiting tenants of one `provider:model`."""
    base = f"{prefix}:{{{model_key}}}"
    return f"{base}:wq", f"{base}:wp"


# The token budgets (workers/budget_ledger.py). Every key carries the prefix as its
# hash tag `{vetq:budget}`, so a reserve across a job's and its batch's scopes is one
# slot:
#   {vetq:budget}:scope:<scope>  hash limit, spent, reserved, r:<id> per reservation
#                                (TTL from set_limit: the results' TTL for job and batch
#                                scopes; a scope without a limit lives 7 days)
#   {vetq:budget}:lease:<scope>  sorted set of reservation ids by lease deadline (ms),
#                                kept at least as long as its scope
#   {vetq:budget}:res:<id>       hash of one reservation (state, tokens, its keys), 24 h
BUDGET_PREFIX = "vetq:budget"
# Budget scopes: one per job, one per batch (its jobs' calls are charged to both),
# created when a job's first model call needs them: a job that calls no model has none.
JOB_SCOPE_PREFIX = "job:"
BATCH_SCOPE_PREFIX = "batch:"


def job_scope(job_id: str) -> str:
    return f"{JOB_SCOPE_PREFIX}{job_id}"


def batch_scope(batch_id: str) -> str:
    return f"{BATCH_SCOPE_PREFIX}{batch_id}"


# A dollar budget is a scope of its own beside its token scope, counted in micro-dollars
# by the same ledger scripts: `job:<id>:usd`, `batch:<id>:usd`.
USD_SCOPE_SUFFIX = ":usd"


def usd_scope(scope: str) -> str:
    return f"{scope}{USD_SCOPE_SUFFIX}"


# A tenant's budget per window (core.tenants, VETQ_TENANT_LIMITS): the scope
# `tenant:<tenant>:<window start, epoch s>` (and `...:usd`), created by the first call of
# the window that needs it, kept until the window has ended.
TENANT_SCOPE_PREFIX = "tenant:"


def tenant_scope(tenant: str, window_start_s: int) -> str:
    return f"{TENANT_SCOPE_PREFIX}{tenant}:{int(window_start_s)}"


# Hash `vetq:usage:<window s>:<window start, epoch s>`: the tenants' use of the models
# in that window, fields `<tenant>:<counter>` (calls, input_tokens, output_tokens,
# cost_micro_usd, unpriced_calls), added to by the call gate as each answer lands
# (workers/call_gate.py), read by `vetq usage`; kept 7 days past the window's end.
TENANT_USAGE_PREFIX = "vetq:usage:"


def tenant_usage_key(window_s: int, window_start_s: int) -> str:
    return f"{TENANT_USAGE_PREFIX}{int(window_s)}:{int(window_start_s)}"


def budget_hash_tag(prefix: str = BUDGET_PREFIX) -> str:
    return f"{{{prefix}}}"


def budget_scope_key(scope: str, prefix: str = BUDGET_PREFIX) -> str:
    return f"{budget_hash_tag(prefix)}:scope:{scope}"


def budget_lease_key(scope: str, prefix: str = BUDGET_PREFIX) -> str:
    return f"{budget_hash_tag(prefix)}:lease:{scope}"


def budget_reservation_key(reservation_id: str, prefix: str = BUDGET_PREFIX) -> str:
    return f"{budget_hash_tag(prefix)}:res:{reservation_id}"


# String counter `vetq:attempts:<attempt key>:<provider:model>:<request fingerprint>`:
# the provider 429s one request of one job met, across the job's Celery retries.
# Incremented by the call gate (workers/call_gate.py) with a 24 h TTL, deleted when the
# request succeeds. The attempt key is the job's scope (`job:<id>`).
ATTEMPTS_PREFIX = "vetq:attempts"


def attempts_key(attempt_key: str, model_key: str, fingerprint: str, prefix: str = ATTEMPTS_PREFIX) -> str:
    return f"{prefix}:{attempt_key}:{model_key}:{fingerprint}"


# `vetq:idle:<random>`: a list nobody ever writes. An idle worker channel on a Redis
# without BLMOVE (older than 6.2) blocks on it for one wait slice as a sleep
# (workers/reliable_transport.py); it never exists.
IDLE_KEY_PREFIX = "vetq:idle:"


def idle_key(token: str) -> str:
    return f"{IDLE_KEY_PREFIX}{token}"


# The bulk lane (workers/bulk_store.py). Every key carries the hash tag `{vetq:bulk}`,
# so each of its scripts' keys sit in one Redis Cluster slot:
#   {vetq:bulk}:req:<digest>        hash of one model request on the bulk lane (the
#                                   response cache's digest): its state, the request,
#                                   its provider batch, the answer or the error once
#                                   resolved. Lives BULK_LIVE_TTL_S while unresolved,
#                                   the results' TTL after.
#   {vetq:bulk}:waiters:<digest>    set of the job ids parked on that request
#   {vetq:bulk}:pending:<model>     sorted set of the requests of one provider:model
#                                   waiting for a provider batch, by time queued (ms)
#   {vetq:bulk}:models              set of the provider:models with pending requests
#   {vetq:bulk}:hold:<model>        string: no submission for that model until it
#                                   expires (a refusal for capacity, a failing endpoint)
#   {vetq:bulk}:job:<job id>        hash of one parked job: its task, queue, payload
#                                   and headers, to publish it again once answered
#   {vetq:bulk}:wake                list of the job ids whose requests were answered,
#                                   waiting to be published again
#   {vetq:bulk}:canceled            list of the parked job ids a client canceled (their
#                                   results written already), waiting for the
#                                   coordinator to take them off their requests and
#                                   withdraw a request no other job waits on; written
#                                   by producers, no TTL (the coordinator drains it)
#   {vetq:bulk}:batch:<batch id>    hash of one provider batch: model, requests,
#                                   counts by state, polls (the results' TTL once ended)
#   {vetq:bulk}:open                sorted set of the open provider batches by next poll (ms)
#   {vetq:bulk}:vbatch:<vetq batch> set of the provider batches a vetq batch's requests went to
#   {vetq:bulk}:lock                the lease of the one worker that submits and polls;
#                                   its value is the holder's fencing token
#   {vetq:bulk}:sub:<submission>    hash of one submission between its requests' claim
#                                   and the provider batch it made being recorded: model,
#                                   requests, its time bounds (workers/bulk_coordinator.py)
#   {vetq:bulk}:subs                sorted set of the open submissions by next recovery
#                                   check (ms)
BULK_PREFIX = "{vetq:bulk}"


def bulk_request_key(digest: str) -> str:
    return f"{BULK_PREFIX}:req:{digest}"


def bulk_waiters_key(digest: str) -> str:
    return f"{BULK_PREFIX}:waiters:{digest}"


def bulk_pending_key(model_key: str) -> str:
    return f"{BULK_PREFIX}:pending:{model_key}"


def bulk_hold_key(model_key: str) -> str:
    return f"{BULK_PREFIX}:hold:{model_key}"


def bulk_job_key(job_id: str) -> str:
    return f"{BULK_PREFIX}:job:{job_id}"


def bulk_batch_key(batch_id: str) -> str:
    return f"{BULK_PREFIX}:batch:{batch_id}"


def bulk_vbatch_key(vetq_batch_id: str) -> str:
    return f"{BULK_PREFIX}:vbatch:{vetq_batch_id}"


def bulk_submission_key(submission_id: str) -> str:
    return f"{BULK_PREFIX}:sub:{submission_id}"


BULK_MODELS_KEY = f"{BULK_PREFIX}:models"
BULK_WAKE_KEY = f"{BULK_PREFIX}:wake"
BULK_CANCELED_KEY = f"{BULK_PREFIX}:canceled"
BULK_OPEN_KEY = f"{BULK_PREFIX}:open"
BULK_LOCK_KEY = f"{BULK_PREFIX}:lock"
BULK_SUBMISSIONS_KEY = f"{BULK_PREFIX}:subs"

# ------------------------------------------------------------------ written by producers

# A vetq batch (a Client.submit_batch), written by the client that submits it, with the
# results' TTL: `vetq:batch:<id>` hash (total, lane, created, budgets) and
# `vetq:batch:<id>:jobs` list of its job ids in input order; read by `vetq batch status`.
BATCH_RECORD_PREFIX = "vetq:batch:"


def batch_record_key(batch_id: str) -> str:
    return f"{BATCH_RECORD_PREFIX}{batch_id}"


def batch_jobs_key(batch_id: str) -> str:
    return f"{BATCH_RECORD_PREFIX}{batch_id}:jobs"


# ------------------------------------------------------- named by kombu and Celery

# Not vetq's to name: kombu's and Celery's own keys, listed so that every key in a vetq
# Redis is found here, and for the tools that read them (eval/chaos.py, the tests).
# tests/test_redis_keys.py checks them against the installed kombu and Celery.
# Hash delivery tag -> message of every message a worker holds unacknowledged (vetq's
# transport writes it in the same script as the pop); kombu restores entries older
# than the visibility timeout to their queue.
KOMBU_UNACKED_KEY = "unacked"
# Sorted set of the same delivery tags, scored by delivery time.
KOMBU_UNACKED_INDEX_KEY = "unacked_index"
# The restore sweep's lock (its TTL is core.queue's unacked_mutex_expire, 60 s).
KOMBU_UNACKED_MUTEX_KEY = "unacked_mutex"
# Set per queue `_kombu.binding.<queue>`: the exchange bindings kombu routes by.
KOMBU_BINDING_PREFIX = "_kombu.binding."
# String `celery-task-meta-<job id>`: a job's state and result envelope, written by the
# worker's result backend (workers/result_backend.py, one script that never overwrites a
# SUCCESS), TTL VETQ_RESULT_TTL_S (result_expires); also the pub/sub channel a waiting
# client listens on, where every state but STARTED is published.
CELERY_RESULT_PREFIX = "celery-task-meta-"
