"""`vetq worker` and `vetq up`: the verbs that run the service rather than use it.
They import workers/ lazily; the producer verbs never load this module."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from typing import Any

from vetq.core.errors import ConfigError, ServiceUnavailableError
from vetq.core.logging import get_logger
from vetq.core.queue import QUEUES
from vetq.core.settings import load_settings

log = get_logger("vetq.service")


def _queues(raw: str) -> list[str]:
    queues = [q.strip() for q in raw.split(",") if q.strip()]
    unknown = [q for q in queues if q not in QUEUES]
    if not queues or unknown:
        raise ConfigError(f"--queues takes a comma-separated subset of {','.join(QUEUES)}; got {raw!r}")
    return queues


def _service_redis_url(settings: Any) -> str:
    """VETQ_REDIS_URL, or the embedded Redis `vetq up` runs; never a new one."""
    from vetq.workers.embedded_redis import running_embedded

    url = settings.redis_url
    if url is None:
        state = running_embedded(settings.home)
        if state is None:
            raise ConfigError(
                "VETQ_REDIS_URL is not set and no embedded Redis is running: set VETQ_REDIS_URL to your Redis, "
                "or run `vetq up` for a single machine"
            )
        url = state["url"]
    return str(url)


def run_worker(args: argparse.Namespace) -> int:
    from vetq.workers.app import UnsafeSettingsError, create_app
    from vetq.workers.runner import run_foreground

    settings = load_settings()
    queues = _queues(args.queues)
    url = _service_redis_url(settings)
    try:
        app = create_app(settings, url)
    except UnsafeSettingsError as exc:
        raise ConfigError(str(exc)) from None
    concurrency = args.concurrency or os.cpu_count() or 1
    from vetq.workers.metrics import serve_worker_metrics

    serve_worker_metrics(settings, pool=args.pool)  # VETQ_METRICS_PORT set: before the pool forks
    log.info("worker_starting", queues=queues, concurrency=concurrency, pool=args.pool)
    run_foreground(app, queues=queues, concurrency=concurrency, pool=args.pool, loglevel=settings.log_level)
    return 0


def run_metrics_serve(args: argparse.Namespace) -> int:
    """`vetq metrics serve`: the fleet's gauges on --port until SIGTERM or Ctrl-C."""
    import threading

    from vetq.api_client.fleet_metrics import serve

    settings = load_settings()
    url = _service_redis_url(settings)
    stop = threading.Event()
    previous = signal.signal(signal.SIGTERM, lambda _signum, _frame: stop.set())
    try:
        serve(url, settings, port=args.port, address=args.address or settings.metrics_address, stop=stop)
    except OSError as exc:
        raise ConfigError(f"vetq metrics serve: cannot listen on port {args.port} ({exc.strerror or exc})") from None
    finally:
        signal.signal(signal.SIGTERM, previous)
    return 0


# `vetq up` restarts a Redis that died; one that keeps dying is given up on.
REDIS_RESTARTS_PER_WINDOW = 3
REDIS_RESTART_WINDOW_S = 60.0


def _refuse_unsafe_settings(settings: Any) -> None:
    """What `vetq worker` would refuse, refused before anything starts: otherwise `up`
    prints a URL and then restarts refused workers forever."""
    from vetq.core.queue import celery_config, unsafe_settings

    problems = unsafe_settings(celery_config(settings, "redis://127.0.0.1:6379/0"))
    if problems:
        raise ConfigError("refusing to start: " + "; ".join(problems))


def _supervise_redis(redis: Any, restarts: list[float]) -> None:
    """Restart the embedded Redis on its port and data if it has ended; raise
    ServiceUnavailableError when it keeps ending or cannot come back."""
    code = redis.exit_code()
    if code is None:
        return
    now = time.monotonic()
    restarts[:] = [t for t in restarts if now - t < REDIS_RESTART_WINDOW_S]
    log_path = redis.data_dir / "redis.log"
    if len(restarts) >= REDIS_RESTARTS_PER_WINDOW:
        raise ServiceUnavailableError(
            f"the embedded Redis exited (status {code}) {len(restarts) + 1} times within "
            f"{REDIS_RESTART_WINDOW_S:.0f}s; see {log_path}"
        )
    restarts.append(now)
    log.warning("embedded_redis_died_restarting", exit_code=code, port=redis.port)
    sys.stderr.write(f"vetq up: the embedded Redis exited (status {code}); restarting it on port {redis.port}\n")
    redis.restart()  # ServiceUnavailableError, naming the log, if it cannot


def _metrics_env(settings: Any, index: int) -> dict[str, str]:
    """`vetq up`'s workers share a host: with VETQ_METRICS_PORT, worker i serves on port + i."""
    if settings.metrics_port is None:
        return {}
    from vetq.core.settings import variable_of

    return {variable_of("metrics_port"): str(settings.metrics_port + index)}


def run_up(args: argparse.Namespace) -> int:
    from vetq.workers.embedded_redis import EmbeddedRedis
    from vetq.workers.runner import spawn_worker_process, stop_processes

    settings = load_settings()
    if settings.redis_url:
        raise ConfigError("`vetq up` runs the embedded Redis; unset VETQ_REDIS_URL, or run `vetq worker` against it")
    if args.workers < 1:
        raise ConfigError("--workers must be at least 1")
    _refuse_unsafe_settings(settings)
    stopping = False

    def request_stop(signum: int, _frame: Any) -> None:
        nonlocal stopping
        stopping = True

    previous = {sig: signal.signal(sig, request_stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        redis = EmbeddedRedis(settings.home, role="up").start()
    except BaseException:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        raise
    if not redis.owner:
        redis.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        raise ConfigError(f"an embedded Redis already runs for {settings.home} at {redis.safe_url}; use that one")
    workers: list = []
    # A worker that dies right after it starts (a bad setting, a missing SDK) is
    # restarted with growing delays instead of in a tight loop.
    started_at: list[float] = []
    delay_s: list[float] = []
    restart_at: list[float] = []
    redis_restarts: list[float] = []
    try:
        workers = [
            spawn_worker_process(redis.live_url, concurrency=args.concurrency, extra_env=_metrics_env(settings, i))
            for i in range(args.workers)
        ]
        now = time.monotonic()
        started_at = [now] * args.workers
        delay_s = [0.0] * args.workers
        restart_at = [0.0] * args.workers
        # The export line carries the home's Redis password (it is what makes the URL
        # work); stdout is for the user's shell, and every log line redacts it.
        sys.stdout.write(f"export VETQ_REDIS_URL={redis.url}\n")
        sys.stdout.flush()
        sys.stderr.write(f"vetq up: Redis at {redis.safe_url}, {args.workers} worker process(es). Ctrl-C stops all.\n")
        while not stopping:
            _supervise_redis(redis, redis_restarts)
            now = time.monotonic()
            for index, process in enumerate(workers):
                if process.poll() is None or stopping:
                    continue
                if restart_at[index] == 0.0:
                    lived = now - started_at[index]
                    delay_s[index] = 0.0 if lived > 60 else min(30.0, max(1.0, delay_s[index] * 2))
                    restart_at[index] = now + delay_s[index]
                    log.warning(
                        "worker_died_restarting",
                        pid=process.pid,
                        exit_code=process.returncode,
                        restart_in_s=delay_s[index],
                    )
                if now >= restart_at[index]:
                    workers[index] = spawn_worker_process(
                        redis.live_url, concurrency=args.concurrency, extra_env=_metrics_env(settings, index)
                    )
                    started_at[index], restart_at[index] = now, 0.0
            time.sleep(0.2)
    finally:
        sys.stderr.write("vetq up: stopping workers and Redis\n")
        stop_processes(workers)
        redis.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 0
