"""`vetq doctor`: check a deployment and name each problem found.

One JSON line per check on stdout: {"check", "status": ok|warning|problem, "detail"}.
Exit 0 when no check is a problem, 1 otherwise. The Redis URL is always redacted.

Which deployment: VETQ_REDIS_URL, else the embedded Redis running for VETQ_HOME, else
it says that nothing runs (a problem)."""

from __future__ import annotations

import json
import sys
from typing import Any, TextIO
from urllib.parse import parse_qs, urlsplit

from vetq.core.logging import redact_text
from vetq.core.queue import EXTRACT_QUEUE, QUEUES, REVIEW_QUEUE, celery_config, unsafe_settings
from vetq.core.redis_keys import CELERY_RESULT_PREFIX, submitted_key
from vetq.core.settings import VetqSettings, load_settings

OK, WARNING, PROBLEM = "ok", "warning", "problem"
LOOPBACK = {"127.0.0.1", "localhost", "::1", ""}


def _check(name: str, status: str, detail: str) -> dict[str, str]:
    return {"check": name, "status": status, "detail": redact_text(detail)}


def check_tls_url(url: str) -> dict[str, str]:
    """The TLS settings of a Redis URL, without connecting."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if scheme == "unix":
        return _check("tls", OK, "a Unix socket: no network, no TLS needed")
    if scheme == "redis":
        if host in LOOPBACK:
            return _check("tls", OK, "plain redis:// on the loopback interface: no TLS needed")
        return _check(
            "tls",
            WARNING,
            f"plain redis:// to {host}: traffic (documents, results) is not encrypted; "
            "use rediss:// for a Redis on another host",
        )
    if scheme != "rediss":
        return _check("tls", PROBLEM, f"unknown URL scheme {scheme!r}: use redis://, rediss:// or unix://")
    query = {k.lower(): v[-1] for k, v in parse_qs(parts.query).items()}
    reqs = (query.get("ssl_cert_reqs") or "required").strip().lower()
    if reqs in ("none", "cert_none"):
        return _check(
            "tls",
            WARNING,
            "rediss:// with ssl_cert_reqs=none: the server's certificate is not checked, "
            "so anyone on the path can impersonate Redis; drop it (and set ssl_ca_certs "
            "for a private CA)",
        )
    if reqs in ("optional", "cert_optional"):
        return _check("tls", WARNING, "rediss:// with ssl_cert_reqs=optional: a certificate is checked only if sent")
    if reqs not in ("required", "cert_required"):
        return _check("tls", PROBLEM, f"rediss:// with an unknown ssl_cert_reqs={reqs!r}")
    ca = query.get("ssl_ca_certs") or query.get("ssl_ca_path")
    return _check(
        "tls",
        OK,
        "rediss:// with certificate verification" + (" against the given CA" if ca else " against the system's CAs"),
    )


def config_checks(settings: VetqSettings, url: str) -> list[dict[str, str]]:
    """What the shared queue contract says, from settings alone."""
    config = celery_config(settings, url)
    checks = []
    visibility = (config.get("broker_transport_options") or {}).get("visibility_timeout")
    limit = config.get("task_time_limit")
    # The worker's own rule (core.queue.unsafe_settings), so doctor and worker agree.
    visibility_problems = [p for p in unsafe_settings(config) if "visibility" in p]
    if visibility_problems:
        checks.append(_check("visibility_timeout", PROBLEM, visibility_problems[0]))
    else:
        checks.append(
            _check(
                "visibility_timeout",
                OK,
                f"visibility timeout {visibility}s > hard time limit {limit}s plus the longest requeue countdown",
            )
        )
    serializer_problems = [p for p in unsafe_settings(config) if "visibility" not in p and "acks_late" not in p]
    if config.get("result_serializer") != "json":
        serializer_problems.append(f"result_serializer is {config.get('result_serializer')!r}, not json")
    if serializer_problems:
        checks.append(_check("serializer", PROBLEM, "; ".join(serializer_problems) + " (VETQ_ACCEPT_CONTENT)"))
    else:
        checks.append(_check("serializer", OK, "task and result serializer json; accept_content json only"))
    return checks


def redis_checks(client: Any) -> list[dict[str, str]]:
    """Eviction policy and persistence of a reachable Redis."""
    import redis

    checks = []
    try:
        policy = client.config_get("maxmemory-policy").get("maxmemory-policy")
    except redis.RedisError as exc:
        policy = None
        checks.append(
            _check(
                "eviction_policy",
                WARNING,
                f"cannot read maxmemory-policy ({type(exc).__name__}); make sure it is noeviction",
            )
        )
    if policy is not None:
        if policy == "noeviction":
            checks.append(_check("eviction_policy", OK, "maxmemory-policy noeviction"))
        else:
            checks.append(
                _check(
                    "eviction_policy",
                    PROBLEM,
                    f"maxmemory-policy is {policy}: under memory pressure Redis would delete queued jobs "
                    "and results; set it to noeviction (CONFIG SET maxmemory-policy noeviction)",
                )
            )
    try:
        appendonly = client.config_get("appendonly").get("appendonly")
        save = client.config_get("save").get("save")
    except redis.RedisError as exc:
        checks.append(_check("persistence", WARNING, f"cannot read the persistence settings ({type(exc).__name__})"))
        return checks
    if appendonly == "yes":
        checks.append(_check("persistence", OK, "append-only file on"))
    elif save and str(save).strip():
        checks.append(
            _check("persistence", OK, f"RDB snapshots (save {save}); a crash loses writes since the last one")
        )
    else:
        checks.append(
            _check(
                "persistence",
                WARNING,
                "no append-only file and no RDB snapshots: a Redis restart loses every queued job and "
                "result; set appendonly yes",
            )
        )
    return checks


# How `result_memory` estimates the results' memory at steady state: RANDOMKEY draws
# keys at random (O(1) each, whatever the size of the keyspace); a result's remaining
# TTL says when it was written, so the share of draws that are results written in the
# last RATE_WINDOW_S, times DBSIZE, is how many were written then.
MEMORY_SAMPLE_DRAWS = 400
RATE_WINDOW_S = 3600


def _megabytes(size: float) -> str:
    return f"{size / 1e6:,.1f} MB"


def result_memory_check(client: Any, settings: VetqSettings) -> dict[str, str]:
    """The memory the results would hold at steady state (the last hour's rate of
    results x VETQ_RESULT_TTL_S x the memory of a result and its submitted mark),
    against maxmemory, or the Redis host's memory when maxmemory is unset."""
    import redis

    ttl = settings.result_ttl_s
    try:
        info = client.info("memory")
        keys = int(client.dbsize())
        pipe = client.pipeline(transaction=False)
        for _ in range(MEMORY_SAMPLE_DRAWS if keys else 0):
            pipe.randomkey()
        prefix = CELERY_RESULT_PREFIX.encode()
        results = [key for key in pipe.execute() if key is not None and key.startswith(prefix)]
        pipe = client.pipeline(transaction=False)
        for key in results:
            pipe.ttl(key)
            pipe.memory_usage(key)
            pipe.memory_usage(submitted_key(key[len(prefix) :].decode()))
        answers = pipe.execute()
    except redis.RedisError as exc:
        return _check("result_memory", WARNING, f"cannot estimate the results' memory ({type(exc).__name__})")
    if not results:
        return _check("result_memory", OK, f"no job results among {keys} keys")
    remaining = answers[0::3]
    per_job = sum((answers[i + 1] or 0) + (answers[i + 2] or 0) for i in range(0, len(answers), 3)) / len(results)
    recent = sum(1 for left in remaining if left is not None and 0 < ttl - left <= RATE_WINDOW_S)
    rate = recent / MEMORY_SAMPLE_DRAWS * keys / RATE_WINDOW_S
    projected = rate * ttl * per_job
    maxmemory = int(info.get("maxmemory") or 0)
    limit, limit_name = (
        (maxmemory, "maxmemory")
        if maxmemory
        else (int(info.get("total_system_memory") or 0), "the Redis host's memory (maxmemory is unset)")
    )
    figures = (
        f"about {rate:.3g} results/s in the last hour, {per_job:,.0f} bytes each with its submitted mark, "
        f"kept {ttl}s (VETQ_RESULT_TTL_S): {_megabytes(projected)} at steady state"
    )
    if limit and projected > limit:
        return _check(
            "result_memory",
            WARNING,
            f"{figures}, more than {limit_name} ({_megabytes(limit)}); under noeviction Redis would then refuse "
            "new jobs: lower VETQ_RESULT_TTL_S, set VETQ_COLLECTED_RESULT_TTL_S on the clients that collect "
            "results, or give Redis more memory",
        )
    return _check("result_memory", OK, figures + (f", within {limit_name} ({_megabytes(limit)})" if limit else ""))


def worker_checks(url: str, settings: VetqSettings, timeout: float) -> list[dict[str, str]]:
    from vetq.api_client.admin import Admin

    admin = Admin(url, settings=settings)
    try:
        workers = admin.workers(timeout=timeout)
        if not all(any(q in queues for queues in workers.values()) for q in QUEUES):
            # A busy worker can miss one broadcast window: ask once more before naming a problem.
            for host, queues in admin.workers(timeout=timeout).items():
                workers.setdefault(host, queues)
    except Exception as exc:  # noqa: BLE001 - reported as a problem, not raised
        return [_check(f"workers_{q}", PROBLEM, f"cannot ask the workers ({type(exc).__name__})") for q in QUEUES]
    finally:
        admin.close()
    checks = []
    for queue in (EXTRACT_QUEUE, REVIEW_QUEUE):
        serving = sorted(host for host, queues in workers.items() if queue in queues)
        if serving:
            checks.append(_check(f"workers_{queue}", OK, f"{len(serving)} worker(s) consume {queue!r}"))
        else:
            checks.append(
                _check(
                    f"workers_{queue}",
                    PROBLEM,
                    f"no worker answered within {timeout}s for the {queue!r} queue: its jobs would wait; "
                    f"start one with `vetq worker --queues {queue}` (or `vetq up`)",
                )
            )
    return checks


def find_deployment(settings: VetqSettings) -> tuple[str | None, str]:
    if settings.redis_url:
        return settings.redis_url, "VETQ_REDIS_URL"
    from vetq.workers.embedded_redis import running_embedded  # the embedded default is worker code

    state = running_embedded(settings.home)
    if state:
        return state["url"], f"the embedded Redis of {settings.home}"
    return None, ""


def diagnose(settings: VetqSettings, timeout: float = 2.0) -> list[dict[str, str]]:
    url, source = find_deployment(settings)
    if url is None:
        return [
            _check(
                "redis",
                PROBLEM,
                f"nothing runs: VETQ_REDIS_URL is unset and no embedded Redis runs for "
                f"{settings.home}; start one with `vetq up` or set VETQ_REDIS_URL",
            )
        ]
    import redis

    checks = [check_tls_url(url)]
    client = redis.Redis.from_url(url, socket_connect_timeout=timeout, socket_timeout=timeout)
    try:
        client.ping()
    except (redis.RedisError, OSError) as exc:
        checks.insert(
            0, _check("redis", PROBLEM, f"{redact_text(url)} ({source}) does not answer: {type(exc).__name__}: {exc}")
        )
        return checks + config_checks(settings, url)
    checks.insert(0, _check("redis", OK, f"{redact_text(url)} ({source}) answers"))
    try:
        checks += redis_checks(client)
        checks.append(result_memory_check(client, settings))
    finally:
        client.close()
    checks += config_checks(settings, url)
    checks += worker_checks(url, settings, timeout)
    return checks


def run_doctor(timeout: float = 2.0, *, settings: VetqSettings | None = None, out: TextIO | None = None) -> int:
    settings = settings or load_settings()
    out = out or sys.stdout
    checks = diagnose(settings, timeout)
    for check in checks:
        out.write(json.dumps(check) + "\n")
    out.flush()
    # A problem found is the deployment's configuration: exit 2, as every vetq
    # configuration error (1 means needs_review and nothing else).
    return 2 if any(c["status"] == PROBLEM for c in checks) else 0
