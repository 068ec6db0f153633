"""The inbox at work: its store, the workers' stream and the jobs' results together.

Resolving is two steps, in this order: the database first (the item, its fields and
the reviewed result in one transaction, or nothing), then the job's result in Redis
(workers/result_backend.store_reviewed) and, for a job that carried a callback_url,
the reviewed result's webhook (event job.reviewed), published as a worker publishes
a finished job's (workers/webhooks.publish_delivery) and delivered by the workers.
The database is the record: a resolution whose result or webhook could not be
written (Redis away) stays `unwritten` and every `sync` writes it again until both
land; the result's write is idempotent (the same review id), so a retry never writes
a second result, and a job's result is replaced only once. The webhook is at least
once, as every webhook is: a retry publishes it again under the same delivery id
(X-Vetq-Delivery: the review's id), which a receiver deduplicates by."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from vetq.core.errors import ConflictError
from vetq.core.logging import get_logger
from vetq.core.settings import VetqSettings
from vetq.inbox.ingest import StreamIngest
from vetq.inbox.models import CORRECTED, Item, Reviewer
from vetq.inbox.store import REVIEW_KIND, InboxStore, _iso

log = get_logger("vetq.inbox")


@dataclass
class SyncReport:
    added: int = 0
    duplicates: int = 0
    unreadable: int = 0
    written: int = 0
    write_failures: int = 0
    claims_expired: int = 0
    errors: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "added": self.added,
            "duplicates": self.duplicates,
            "unreadable": self.unreadable,
            "results_written": self.written,
            "result_write_failures": self.write_failures,
            "claims_expired": self.claims_expired,
        }


@dataclass
class Resolution:
    item: Item
    # stored, already_stored, or None when Redis could not be written (sync retries it).
    written: str | None
    error: str | None = None


class Inbox:
    """`redis_url` is the Redis `redis_client` talks to: reviewed webhooks are published
    there as Celery messages, for the workers to deliver."""

    def __init__(self, store: InboxStore, redis_client: Any, settings: VetqSettings, *, redis_url: str) -> None:
        self.store = store
        self.redis = redis_client
        self.redis_url = redis_url
        self.settings = settings
        self.ingest = StreamIngest(redis_client, store)
        self._publisher: Any = None
        self._publisher_lock = threading.Lock()

    def close(self) -> None:
        if self._publisher is not None:
            self._publisher.close()
        self.store.close()

    def publisher(self) -> Any:
        """A Celery app on the workers' broker, made at the first webhook to publish."""
        with self._publisher_lock:
            if self._publisher is None:
                from celery import Celery

                from vetq.core.queue import celery_config

                app = Celery("vetq-inbox", set_as_current=False)
                app.conf.update(celery_config(self.settings, self.redis_url))
                self._publisher = app
            return self._publisher

    def sync(self, *, block_ms: int | None = None) -> SyncReport:
        """Take the workers' new handoffs, write the reviewed results still unwritten,
        and return abandoned claims to the queue."""
        from vetq.workers import metrics

        report = SyncReport()
        counts = self.ingest.run_once(block_ms=block_ms)
        report.added, report.duplicates, report.unreadable = counts.added, counts.duplicates, counts.unreadable
        for _ in range(counts.added):
            metrics.inbox_item_added(None)
        for item in self.store.unwritten():
            if self.write_result(item) is not None:
                report.written += 1
            else:
                report.write_failures += 1
        report.claims_expired = self.store.release_expired()
        return report

    def resolve(self, item_id: int, reviewer: Reviewer, values: dict[str, Any]) -> Resolution:
        from vetq.workers import metrics

        item = self.store.resolve(item_id, reviewer, values)
        corrected = [f.path for f in item.fields if f.outcome == CORRECTED]
        metrics.inbox_item_resolved(item.schema_name, item.review_seconds, corrected)
        try:
            written = self.write_result(item, raise_conflict=True)
        except ConflictError as exc:
            return Resolution(item, None, exc.message)
        return Resolution(
            item, written, None if written else "the job's reviewed result will be written once Redis answers"
        )

    def write_result(self, item: Item, *, raise_conflict: bool = False) -> str | None:
        """Make the item's reviewed result its job's result, then publish its webhook
        when the job has a callback; None when Redis is away (marked written only once
        both are done: `sync` tries again)."""
        from vetq.workers.result_backend import store_reviewed

        if item.reviewed_result is None or item.resolved_at is None:
            return None
        try:
            written = store_reviewed(
                self.redis,
                item.job_id,
                item.reviewed_result,
                replaces_status="ok" if item.kind == REVIEW_KIND else "needs_review",
                date_done=_iso(item.resolved_at) or "",
                expires_s=self.settings.result_ttl_s,
            )
        except ConflictError as exc:
            # The job's result is not this item's machine result (another review won, or
            # the key holds something else): recorded, never overwritten.
            log.error("inbox_result_conflict", item_id=item.id, job_id=item.job_id, error=exc.message)
            self.store.mark_written(item.id)
            if raise_conflict:
                raise
            return None
        except Exception as exc:  # noqa: BLE001 - Redis away: the resolution stands, sync writes it later
            log.warning("inbox_result_unwritten", item_id=item.id, job_id=item.job_id, error=type(exc).__name__)
            return None
        if item.callback_url:
            try:
                self.publish_webhook(item)
            except Exception as exc:  # noqa: BLE001 - the broker away: sync publishes it later
                log.warning("inbox_webhook_unpublished", item_id=item.id, job_id=item.job_id, error=type(exc).__name__)
                return None
        self.store.mark_written(item.id)
        log.info("inbox_result_written", item_id=item.id, job_id=item.job_id, outcome=written)
        return written

    def publish_webhook(self, item: Item) -> None:
        """The reviewed result's delivery to the job's callback_url (event job.reviewed),
        once it is the job's result; the workers deliver it, signed, as any webhook."""
        from vetq.workers.webhooks import EVENT_JOB_REVIEWED, publish_delivery

        assert item.reviewed_result is not None and item.callback_url is not None
        publish_delivery(
            self.publisher(),
            item.job_id,
            item.callback_url,
            item.reviewed_result,
            event=EVENT_JOB_REVIEWED,
            trace_id=item.trace_id,
            batch_id=item.batch_id,
            tenant=item.tenant,
            delivery_id=str(item.reviewed_result["review"]["id"]),
        )


def open_inbox(settings: VetqSettings, redis_url: str | None = None) -> Inbox:
    """The inbox on VETQ_INBOX_URL and VETQ_REDIS_URL (or the embedded Redis `vetq up`
    runs: the inbox starts none of its own, there would be no worker behind it)."""
    import redis

    from vetq.api_client.service_cli import _service_redis_url

    url = redis_url or _service_redis_url(settings)
    store = InboxStore.open(
        settings.inbox_database_url(), lease_s=settings.inbox_lease_s, max_pdf_bytes=settings.max_pdf_bytes
    )
    return Inbox(store, redis.Redis.from_url(url), settings, redis_url=url)
