"""Webhook delivery: a finished job's result POSTed to its callback_url, signed.

A job that carries a callback (`vetq_callback_url` in its message headers) and ends
(SUCCESS: its envelope; FAILURE: the envelope a client reads for it) gets a delivery:
the worker's task_postrun handler (workers/signals.py) publishes one `vetq.webhook`
message to the `webhook` queue, carrying the JSON body made once, and is done: the
job's slot is never held by the POST or its retries. A job without a callback costs
one header lookup. A retry (RETRY) and a bulk job's parking (IGNORED) are not ends.
A needs_review result a person resolves in the inbox is delivered again, reviewed
(event job.reviewed): the inbox publishes it through the same `publish_delivery`.

A delivery is a small task on the webhook queue, which every worker serves. It
resolves the host, keeps only the addresses VETQ_WEBHOOK_ALLOW accepts
(core/webhooks.py), connects to one of them and POSTs to that very address (TLS
verified against the URL's host name), so a name that resolves elsewhere between a
check and the connection (DNS rebinding) cannot move the request; the connected peer
is checked again. No proxy, no redirect is followed. A 2xx answer is delivered; any
other answer, a timeout or a network error is retried the way jobs are
(workers/tasks.requeue with the one full-jitter backoff, VETQ_WEBHOOK_BACKOFF_S
doubling, at most WEBHOOK_MAX_BACKOFF_S), each attempt signed afresh; after
VETQ_WEBHOOK_ATTEMPTS the delivery is a dead letter (`vetq dead list`, reason
`webhook_failed`). A destination the worker's allow-list refuses, or a worker without
the secret, is a dead letter at once (`webhook_refused`): retrying cannot help.

Delivery is at least once: a job run twice (its worker lost after storing the result)
may be delivered twice, and a receiver that answered 2xx too slowly gets it again. The
delivery id (`X-Vetq-Delivery`) and the job id (`X-Vetq-Job-Id`) let it deduplicate.
Logs and dead letters name the destination as scheme://host:port only; the secret
is masked everywhere (core.logging.mask_secret) and never leaves the worker."""

from __future__ import annotations

import http.client
import ipaddress
import json
import socket
import ssl
import time
from typing import Any
from urllib.parse import urlsplit

from celery import Celery, Task

from vetq.core.errors import InvalidInputError
from vetq.core.job_options import check_callback_url
from vetq.core.logging import get_logger, mask_secret
from vetq.core.queue import CALLBACK_URL_HEADER, SENT_AT_HEADER, TASK_WEBHOOK, TENANT_HEADER, TRACE_HEADER
from vetq.core.redis_keys import WEBHOOK_QUEUE, webhook_undelivered_key
from vetq.core.results import failure_result
from vetq.core.webhooks import (
    ATTEMPT_HEADER,
    DELIVERY_HEADER,
    JOB_HEADER,
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    AllowList,
    check_destination,
    host_address,
    origin_of,
    signature_header,
)
from vetq.workers import dead_letter
from vetq.workers.call_gate import full_jitter_backoff_s
from vetq.workers.tasks import (
    BATCH_HEADER,
    RESULT_REPR_MAXSIZE,
    WorkerContext,
    counted,
    header,
    park_until_due,
    requeue,
)

log = get_logger("vetq.webhook")

# The states in which a job has ended and its result is stored.
FINAL_STATES = frozenset({"SUCCESS", "FAILURE"})
# The failed attempts of one delivery so far, in its message headers (requeue keeps them).
WEBHOOK_ATTEMPTS_HEADER = "vetq_webhook_attempts"
WEBHOOK_MAX_BACKOFF_S = 600.0
EVENT_JOB_FINISHED = "job.finished"
# A needs_review result a person resolved in the inbox: its reviewed result (inbox/service.py).
EVENT_JOB_REVIEWED = "job.reviewed"
USER_AGENT = "vetq-webhook/1"


class WebhookRefusedError(Exception):
    """The destination may not be reached: retrying cannot help."""


class WebhookFailedError(Exception):
    """This attempt failed (an answer other than 2xx, a timeout, a network error)."""


# ------------------------------------------------------------------ the job's end


def schedule_delivery(task: Task, job_id: str, state: str | None, retval: Any) -> bool:
    """task_postrun of a job: publish the delivery of its final result when it asks for
    one. A job without a callback returns after one header lookup."""
    url = header(task, CALLBACK_URL_HEADER)
    if not url or state not in FINAL_STATES:
        return False
    trace_id = header(task, TRACE_HEADER)
    if isinstance(retval, dict):
        result = retval
    else:
        result = failure_result(job_id, trace_id, retval if isinstance(retval, BaseException) else None)
    publish_delivery(
        task.app,
        job_id,
        str(url),
        result,
        trace_id=trace_id,
        batch_id=header(task, BATCH_HEADER),
        tenant=header(task, TENANT_HEADER),
    )
    return True


def deliver_canceled_parked(app: Celery, job_id: str, headers: dict[str, Any]) -> bool:
    """A parked bulk job a client canceled, taken off its request by the bulk
    coordinator: no run of it will end it, so its canceled result (the client wrote
    it) is delivered from there when the job asks for a callback. Never raises: a
    delivery that cannot be published is logged, as at a job's end."""
    url = headers.get(CALLBACK_URL_HEADER)
    if not url:
        return False
    try:
        meta = app.backend.get_task_meta(job_id)
        result = meta.get("result")
        if meta.get("status") not in FINAL_STATES or not isinstance(result, dict):
            return False
        publish_delivery(
            app,
            job_id,
            str(url),
            result,
            trace_id=headers.get(TRACE_HEADER),
            batch_id=headers.get(BATCH_HEADER),
            tenant=headers.get(TENANT_HEADER),
            # The same id if the coordinator publishes it again after a crash.
            delivery_id=f"{job_id}-canceled",
        )
    except Exception:
        log.exception("webhook_not_scheduled", job_id=job_id)
        return False
    return True


def publish_delivery(
    app: Celery,
    job_id: str,
    url: str,
    result: dict[str, Any],
    *,
    event: str = EVENT_JOB_FINISHED,
    trace_id: str | None = None,
    batch_id: str | None = None,
    tenant: str | None = None,
    delivery_id: str | None = None,
) -> None:
    """Publish one `vetq.webhook` message carrying the body made here, once: the one way
    a result is delivered, whether a worker's job ended (job.finished) or a person
    resolved its inbox item (job.reviewed, from the inbox's process). `delivery_id`
    (X-Vetq-Delivery; a new one when not given) lets a publisher that may publish the
    same delivery again give it the same id. Raises what the broker raises."""
    body: dict[str, Any] = {"event": event, "job_id": job_id}
    for name, value in (("batch_id", batch_id), ("tenant", tenant)):
        if value:
            body[name] = value
    body["result"] = result
    _send(app, {"job_id": job_id, "url": url, "body": json.dumps(body)}, delivery_id=delivery_id, trace_id=trace_id)
    log.info("webhook_scheduled", webhook_event=event, destination=origin_of(url))


def _send(app: Celery, message: dict[str, str], *, delivery_id: str | None, trace_id: str | None) -> None:
    app.send_task(
        TASK_WEBHOOK,
        args=[message],
        queue=WEBHOOK_QUEUE,
        task_id=delivery_id,
        headers={TRACE_HEADER: trace_id, SENT_AT_HEADER: time.time()} if trace_id else {SENT_AT_HEADER: time.time()},
        ignore_result=True,
    )


def redeliver(app: Celery, redis_client: Any, job_id: str) -> list[dict[str, str]]:
    """Send again, each as it was, the deliveries of `job_id` the workers gave up on
    (the dead-letter list's webhook_failed / webhook_refused entries, kept for
    VETQ_RESULT_TTL_S): once the receiver or the allow-list is fixed. Each keeps its
    delivery id (X-Vetq-Delivery), so a receiver that did get one deduplicates it, and
    is tried VETQ_WEBHOOK_ATTEMPTS times afresh. Returns what was sent: the delivery
    ids and destinations (scheme://host:port); none when nothing is kept."""
    key = webhook_undelivered_key(job_id)
    sent = []
    for delivery_id, raw in redis_client.hgetall(key).items():
        delivery_id = delivery_id.decode() if isinstance(delivery_id, bytes) else str(delivery_id)
        kept = json.loads(raw)
        message = {"job_id": job_id, "url": kept["url"], "body": kept["body"]}
        _send(app, message, delivery_id=delivery_id, trace_id=kept.get("trace_id"))
        # Taken once sent: a second redeliver finds nothing rather than posting twice.
        redis_client.hdel(key, delivery_id)
        log.info("webhook_redelivered", for_job=job_id, destination=origin_of(kept["url"]))
        sent.append({"delivery_id": delivery_id, "destination": origin_of(kept["url"])})
    return sent


# --------------------------------------------------------------------- the POST


class _PinnedConnection(http.client.HTTPConnection):
    """An HTTP(S) connection to one checked address, whatever the host name resolves
    to by the time it connects; Host header and TLS (SNI, certificate) use the name."""

    def __init__(
        self, host: str, port: int, address: str, *, tls: ssl.SSLContext | None, timeout: float, peer_allowed: Any
    ) -> None:
        super().__init__(host, port, timeout=timeout)
        self._address = address
        self._tls = tls
        self._peer_allowed = peer_allowed
        if tls is not None:
            self.default_port = 443  # the Host header leaves out the scheme's own port

    def connect(self) -> None:
        sock = socket.create_connection((self._address, self.port), timeout=self.timeout)
        try:
            peer = host_address(str(sock.getpeername()[0]).split("%", 1)[0])
            if peer is None or not self._peer_allowed(peer):
                raise WebhookRefusedError(f"connected to {peer}, which VETQ_WEBHOOK_ALLOW does not allow")
            if self._tls is not None:
                sock = self._tls.wrap_socket(sock, server_hostname=self.host)
        except BaseException:
            sock.close()
            raise
        self.sock = sock


_tls_context: ssl.SSLContext | None = None


def _tls() -> ssl.SSLContext:
    global _tls_context
    if _tls_context is None:
        _tls_context = ssl.create_default_context()  # certificate and host name verified
    return _tls_context


def post(url: str, body: bytes, headers: dict[str, str], allow: AllowList, timeout_s: float) -> int:
    """POST `body` to `url` at an address `allow` accepts; the answer's status.
    WebhookRefusedError: no such address; WebhookFailedError: the attempt failed."""
    problem = check_destination(url, allow)  # the worker's own allow-list: it may differ from the producer's
    if problem is not None:
        raise WebhookRefusedError(problem)
    parts = urlsplit(url)
    host = (parts.hostname or "").rstrip(".")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    named = host_address(host) is None and allow.names_host(host)
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise WebhookFailedError(f"cannot resolve {host}: {exc}") from None
    addresses: list[ipaddress.IPv4Address | ipaddress.IPv6Address] = []
    for info in infos:
        address = host_address(str(info[4][0]).split("%", 1)[0])
        if address is not None and address not in addresses:
            addresses.append(address)
    allowed = [a for a in addresses if allow.allows_address(a, host_named=named)]
    if not allowed:
        shown = ", ".join(str(a) for a in addresses[:4])
        raise WebhookRefusedError(f"{host} resolves to {shown}, which VETQ_WEBHOOK_ALLOW does not allow")
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    tls = _tls() if parts.scheme == "https" else None
    error = "no address answered"
    for address in allowed:
        connection = _PinnedConnection(
            host,
            port,
            str(address),
            tls=tls,
            timeout=timeout_s,
            peer_allowed=lambda peer: allow.allows_address(peer, host_named=named),
        )
        try:
            try:
                connection.connect()
            except OSError as exc:  # this address does not answer: the next may
                error = f"cannot connect to {address}: {type(exc).__name__}"
                continue
            # Connected: this attempt's outcome is this address's (another would POST twice).
            try:
                connection.request("POST", target, body=body, headers=headers)
                return connection.getresponse().status
            except (OSError, http.client.HTTPException) as exc:
                raise WebhookFailedError(f"{type(exc).__name__} from {address}") from None
        finally:
            connection.close()
    raise WebhookFailedError(error)


# ------------------------------------------------------------------ the delivery


def _delivery(message: Any) -> tuple[str, str, bytes]:
    if not isinstance(message, dict):
        raise InvalidInputError("a webhook delivery is a JSON object")
    job_id, url, body = message.get("job_id"), message.get("url"), message.get("body")
    if not isinstance(job_id, str) or not isinstance(body, str):
        raise InvalidInputError("a webhook delivery needs job_id and body")
    checked = check_callback_url(url)  # a message is checked as a producer's option is
    if checked is None:
        raise InvalidInputError("a webhook delivery needs url")
    return job_id, checked, body.encode("utf-8")


def _dead_letter(
    task: Task, reason: str, job_id: str | None, error: str, *, undelivered: Any = None, keep_s: int = 0
) -> None:
    """Record a delivery given up on. `undelivered` (a well-formed delivery message) is
    kept `keep_s` seconds beside it, under its delivery id, for `vetq dead redeliver`."""
    from vetq.workers import metrics

    metrics.webhook_attempted("refused" if reason == dead_letter.REASON_WEBHOOK_REFUSED else "dead_lettered")
    entry = dead_letter.make_entry(
        reason=reason,
        task=TASK_WEBHOOK,
        job_id=job_id,
        queue=WEBHOOK_QUEUE,
        content_type="application/json",
        error=error,
    )
    redis_client = dead_letter.redis_of(task.app)
    if undelivered is not None and job_id is not None and redis_client is not None:
        delivery_id = str(task.request.id)
        entry["delivery_id"] = delivery_id
        try:
            key = webhook_undelivered_key(job_id)
            kept = {"url": undelivered["url"], "body": undelivered["body"], "trace_id": header(task, TRACE_HEADER)}
            pipe = redis_client.pipeline()
            pipe.hset(key, delivery_id, json.dumps(kept))
            pipe.expire(key, max(1, keep_s))
            pipe.execute()
        except Exception:  # the dead letter still says what was lost
            log.exception("webhook_not_kept", for_job=job_id)
            entry.pop("delivery_id")
    dead_letter.record(redis_client, entry)


def register(app: Celery, context: WorkerContext) -> None:
    """The delivery task, on this worker's app."""
    settings = context.settings
    allow = settings.webhook_allow_list()
    secrets = settings.webhook_secrets()
    for secret in secrets:
        mask_secret(secret)

    @app.task(
        name=TASK_WEBHOOK,
        bind=True,
        shared=False,
        max_retries=None,
        ignore_result=True,  # nothing to wait for: the receiver is told, or a dead letter says why not
        resultrepr_maxsize=RESULT_REPR_MAXSIZE,
    )
    def deliver(self: Task, message: Any) -> None:
        from vetq.workers import metrics

        park_until_due(self, settings)
        attempt = counted(self, WEBHOOK_ATTEMPTS_HEADER) + 1
        try:
            job_id, url, body = _delivery(message)
        except InvalidInputError as exc:
            named = message.get("job_id") if isinstance(message, dict) else None
            _dead_letter(
                self, dead_letter.REASON_WEBHOOK_REFUSED, named if isinstance(named, str) else None, exc.message
            )
            return
        destination = origin_of(url)
        if not secrets:
            _dead_letter(
                self,
                dead_letter.REASON_WEBHOOK_REFUSED,
                job_id,
                f"POST to {destination} not sent: this worker has no VETQ_WEBHOOK_SECRET, and results are never "
                "sent unsigned",
                undelivered=message,
                keep_s=settings.result_ttl_s,
            )
            return
        timestamp = int(time.time())
        headers = {
            "Content-Type": "application/json",
            "User-Agent": USER_AGENT,
            JOB_HEADER: job_id,
            DELIVERY_HEADER: str(self.request.id),
            ATTEMPT_HEADER: str(attempt),
            TIMESTAMP_HEADER: str(timestamp),
            SIGNATURE_HEADER: signature_header(secrets, timestamp, body),
        }
        try:
            status = post(url, body, headers, allow, settings.webhook_timeout_s)
            if not 200 <= status < 300:
                raise WebhookFailedError(f"HTTP {status}")
        except WebhookRefusedError as exc:
            log.warning("webhook_refused", for_job=job_id, destination=destination, error=str(exc))
            _dead_letter(
                self,
                dead_letter.REASON_WEBHOOK_REFUSED,
                job_id,
                f"POST to {destination} refused: {exc}",
                undelivered=message,
                keep_s=settings.result_ttl_s,
            )
            return
        except WebhookFailedError as exc:
            if attempt >= settings.webhook_attempts:
                log.error("webhook_failed", for_job=job_id, destination=destination, attempts=attempt, error=str(exc))
                _dead_letter(
                    self,
                    dead_letter.REASON_WEBHOOK_FAILED,
                    job_id,
                    f"POST to {destination} failed {attempt} times; the last: {exc}",
                    undelivered=message,
                    keep_s=settings.result_ttl_s,
                )
                return
            wait = full_jitter_backoff_s(attempt, base_s=settings.webhook_backoff_s, cap_s=WEBHOOK_MAX_BACKOFF_S)
            log.info(
                "webhook_retry",
                for_job=job_id,
                destination=destination,
                attempt=attempt,
                error=str(exc),
                wait_s=round(wait, 2),
            )
            metrics.webhook_attempted("retried")
            requeue(self, None, settings, wait_s=wait, counts={WEBHOOK_ATTEMPTS_HEADER: attempt})
        metrics.webhook_attempted("delivered")
        log.info("webhook_delivered", for_job=job_id, destination=destination, attempt=attempt, status=status)
