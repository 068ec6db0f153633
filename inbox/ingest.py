"""Taking the workers' handoffs (workers/inbox_handoff.py) from the inbox's Redis stream
into items, through one consumer group shared by every inbox process.

An entry is acknowledged and deleted only once its item is committed, so an inbox
that dies mid-way leaves it pending and it is read again: by the same consumer at its
next round (its own pending entries first), or by another once it has sat idle for
STALE_AFTER_MS (XAUTOCLAIM). Reading an entry twice adds nothing: items are unique by
job id. An entry that cannot be read as a handoff becomes a dead letter (vetq dead
list), never a silent loss."""

from __future__ import annotations

import json
import os
import socket
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from vetq.core.errors import InvalidInputError
from vetq.core.job_options import check_callback_url
from vetq.core.logging import get_logger
from vetq.core.queue import KIND_OF_TASK
from vetq.core.redis_keys import INBOX_GROUP, INBOX_STREAM
from vetq.inbox.store import InboxStore, ItemDraft

log = get_logger("vetq.inbox")

# An entry another inbox process took and has not acknowledged for this long is
# taken over (that process died, or lost its database).
STALE_AFTER_MS = 60_000
REASON_UNREADABLE = "inbox_entry_unreadable"


@dataclass
class IngestCounts:
    added: int = 0
    duplicates: int = 0
    unreadable: int = 0

    def as_dict(self) -> dict[str, int]:
        return {"added": self.added, "duplicates": self.duplicates, "unreadable": self.unreadable}


def consumer_name() -> str:
    return f"{socket.gethostname()}-{os.getpid()}"[:120]


def ensure_group(redis_client: Any) -> None:
    import redis

    try:
        redis_client.xgroup_create(INBOX_STREAM, INBOX_GROUP, id="0", mkstream=True)
    except redis.ResponseError as exc:
        if "BUSYGROUP" not in str(exc):
            raise


def draft_of(fields: dict[str, str]) -> ItemDraft:
    """The item draft an entry describes; ValueError naming what is missing."""
    job_id = fields.get("job_id") or ""
    task = fields.get("task") or ""
    if not job_id or task not in KIND_OF_TASK:
        raise ValueError("the entry names no job id or no vetq task")
    result = json.loads(fields.get("result") or "null")
    request = json.loads(fields.get("request") or "{}")
    if not isinstance(result, dict) or not isinstance(request, dict):
        raise ValueError("the entry's result and request must be JSON objects")
    try:
        finished = datetime.fromtimestamp(float(fields.get("finished_at") or ""), UTC)
    except ValueError:
        finished = datetime.now(UTC)
    return ItemDraft(
        job_id=job_id,
        kind=KIND_OF_TASK[task],
        request=request,
        result=result,
        finished_at=finished,
        tenant=fields.get("tenant") or None,
        priority=fields.get("priority") or None,
        callback_url=callback_url_of(job_id, fields.get("callback_url") or None),
        batch_id=fields.get("batch_id") or None,
    )


def callback_url_of(job_id: str, url: str | None) -> str | None:
    """The entry's callback_url as the producer checked it. One that is not (an entry
    written by hand, or damaged) costs the item its reviewed webhook, never the item:
    logged, and the worker's delivery would refuse it anyway."""
    try:
        return check_callback_url(url)
    except InvalidInputError as exc:
        log.error("inbox_callback_url_refused", job_id=job_id, error=exc.message)
        return None


class StreamIngest:
    def __init__(
        self,
        redis_client: Any,
        store: InboxStore,
        *,
        consumer: str | None = None,
        stale_after_ms: int = STALE_AFTER_MS,
    ) -> None:
        self.redis = redis_client
        self.store = store
        self.consumer = consumer or consumer_name()
        self.stale_after_ms = stale_after_ms
        self._group_ready = False

    def run_once(self, *, count: int = 100, block_ms: int | None = None) -> IngestCounts:
        """One round: this consumer's own pending entries, stale ones of others, then
        new ones (waiting up to `block_ms` for the first when given)."""
        import redis

        if not self._group_ready:
            ensure_group(self.redis)
            self._group_ready = True
        try:
            return self._round(count, block_ms)
        except redis.ResponseError as exc:
            if "NOGROUP" not in str(exc):
                raise
            # The stream was deleted under us (a Redis without persistence restarted, an
            # operator's DEL): the group is made again and the round runs again.
            ensure_group(self.redis)
            return self._round(count, block_ms)

    def _round(self, count: int, block_ms: int | None) -> IngestCounts:
        counts = IngestCounts()
        own = self.redis.xreadgroup(INBOX_GROUP, self.consumer, {INBOX_STREAM: "0"}, count=count)
        self._take(_entries(own), counts)
        claimed = self.redis.xautoclaim(INBOX_STREAM, INBOX_GROUP, self.consumer, self.stale_after_ms, "0", count=count)
        self._take(claimed[1] if isinstance(claimed, (list, tuple)) and len(claimed) > 1 else [], counts)
        new = self.redis.xreadgroup(INBOX_GROUP, self.consumer, {INBOX_STREAM: ">"}, count=count, block=block_ms)
        self._take(_entries(new), counts)
        return counts

    def _take(self, entries: list[tuple[Any, dict[Any, Any]]], counts: IngestCounts) -> None:
        for entry_id, raw in entries:
            if not raw:  # deleted while pending
                self._done(entry_id)
                continue
            fields = {_text(key): _text(value) for key, value in raw.items()}
            try:
                draft = draft_of(fields)
            except ValueError as exc:
                self._dead_letter(fields, str(exc))
                counts.unreadable += 1
                self._done(entry_id)
                continue
            _, added = self.store.add_item(draft)  # raises when the database is away: the entry stays pending
            if added:
                counts.added += 1
                log.info("inbox_item_added", job_id=draft.job_id)
            else:
                counts.duplicates += 1
            self._done(entry_id)

    def _done(self, entry_id: Any) -> None:
        pipe = self.redis.pipeline(transaction=True)
        pipe.xack(INBOX_STREAM, INBOX_GROUP, entry_id)
        pipe.xdel(INBOX_STREAM, entry_id)
        pipe.execute()

    def _dead_letter(self, fields: dict[str, str], error: str) -> None:
        from vetq.workers.dead_letter import make_entry, record

        entry = make_entry(
            reason=REASON_UNREADABLE,
            task=fields.get("task") or None,
            job_id=fields.get("job_id") or None,
            content_type="application/json",
            body=fields.get("result"),
            error=error,
        )
        record(self.redis, entry)

    def pending(self) -> int:
        """Entries waiting in the stream (not yet taken into items)."""
        return int(self.redis.xlen(INBOX_STREAM))


def _entries(reply: Any) -> list[tuple[Any, dict[Any, Any]]]:
    out: list[tuple[Any, dict[Any, Any]]] = []
    for _stream, entries in reply or []:
        out.extend(entries)
    return out


def _text(value: Any) -> str:
    return value.decode("utf-8", errors="replace") if isinstance(value, bytes) else str(value)
