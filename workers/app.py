"""The one Celery app of a worker process, configured from validated settings."""

from __future__ import annotations

# Imported here, before any pool forks: socket.getaddrinfo imports encodings.idna on
# its first call. A worker's bulk coordinator thread connecting to Redis could hold
# that import's lock at the instant the prefork pool forks a child, and the child's
# own first connection (the STARTED write) would then wait on the copied lock until
# the soft time limit (seen in CI: TimeLimitExceeded in the STARTED store).
import encodings.idna  # noqa: F401
import json

from celery import Celery

from vetq.core.queue import celery_config, unsafe_settings
from vetq.core.settings import VetqSettings


class UnsafeSettingsError(RuntimeError):
    pass


def size_redis_pools(app: Celery, concurrency: int) -> int:
    """Size every Redis pool a job thread uses to a worker running `concurrency` jobs
    at once (workers/redis_pool.py): the worker's own (the call gate, dead letters,
    telemetry), Celery's result backend and kombu's broker channels (acks). Never
    shrinks one; called before the worker starts, while Celery's pools are not built
    yet. Returns the size."""
    from vetq.workers.redis_pool import redis_pool_size

    size = redis_pool_size(concurrency)
    app.conf.redis_max_connections = max(size, app.conf.redis_max_connections or 0)
    options = dict(app.conf.broker_transport_options or {})
    options["max_connections"] = max(size, options.get("max_connections") or 0)
    app.conf.broker_transport_options = options
    context = getattr(app.conf, "vetq_context", None)
    if context is not None:
        context.redis.connection_pool.grow(size)
    return size


def create_app(settings: VetqSettings, redis_url: str, *, check_safety: bool = True) -> Celery:
    # Logging is the entry point's to configure (`vetq worker` does): this app also
    # runs inside a host's process as the embedded worker of a library Client.
    config = celery_config(settings, redis_url)
    if check_safety:
        problems = unsafe_settings(config)
        if problems:
            raise UnsafeSettingsError("refusing to start a worker: " + "; ".join(problems))
    app = Celery("vetq", set_as_current=True)
    app.conf.update(config)
    if redis_url.split("://", 1)[0] in ("redis", "unix"):
        # Take each message off its queue and record it as unacknowledged in one
        # step (workers/reliable_transport.py): a kill or a Redis restart between
        # the two would otherwise lose the job.
        app.conf.broker_transport = "vetq.workers.reliable_transport:Transport"
        # The tenants' weights for the fair pop (VETQ_TENANT_LIMITS).
        from vetq.workers.reliable_transport import TENANT_WEIGHTS_OPTION

        options = dict(app.conf.broker_transport_options or {})
        options[TENANT_WEIGHTS_OPTION] = json.dumps(settings.tenant_table().weights())
        app.conf.broker_transport_options = options
    # Store each job state in one round trip, never over a SUCCESS, and STARTED
    # without a pub/sub message (workers/result_backend.py).
    from vetq.workers.result_backend import backend_url

    app.conf.result_backend = backend_url(config["result_backend"])
    # A worker-side setting: refused messages (undecodable, unknown task, malformed)
    # are recorded in the dead-letter list `vetq:dead` (workers/dead_letter_consumer.py).
    app.conf.worker_consumer = "vetq.workers.dead_letter_consumer:DeadLetterConsumer"
    # When the broker connection drops, a running job finishes and writes its result
    # (the backend retries); its ack is lost with the old connection, so Redis gives the
    # job back after the visibility timeout and the rerun answers from the response cache.
    app.conf.worker_cancel_long_running_tasks_on_connection_loss = False
    # Celery's pools look tasks up on the current/default app; in a thread worker
    # the pool threads see only the default, so this app must be it.
    app.set_default()
    # Importing the task and signal modules registers them on this app.
    from vetq.workers import signals, tasks, webhooks

    webhooks.register(app, tasks.register(app, settings, redis_url))
    signals.connect()
    # The bulk lane's coordinator runs beside the consumer in every worker (one works at a time).
    from vetq.workers.bulk_coordinator import CoordinatorStep

    app.steps["worker"].add(CoordinatorStep)
    return app
