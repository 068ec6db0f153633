"""The inbox's tables (SQLAlchemy 2). The schema itself is made and changed only by the
migrations (migrations/versions/), never by `create_all`: a fleet's PostgreSQL and a
laptop's SQLite move from one release to the next the same way.

Times are UTC. SQLite keeps no time zone, so every time column stores a naive UTC
datetime and reads back an aware one (UTCDateTime)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, ClassVar

from sqlalchemy import JSON, DateTime, ForeignKey, Integer, LargeBinary, String, Text, UniqueConstraint
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship
from sqlalchemy.types import TypeDecorator

from vetq.core.job_options import MAX_CALLBACK_URL_CHARS

OPEN, RESOLVED = "open", "resolved"
STATES = (OPEN, RESOLVED)
CONFIRMED, CORRECTED = "confirmed", "corrected"
# A job's priority header (core.job_options) as a sort key: high first.
PRIORITY_RANK = {"high": 0, "normal": 1, "low": 2}


class UTCDateTime(TypeDecorator[datetime]):
    impl = DateTime
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("inbox times must be aware (UTC)")
        return value.astimezone(UTC).replace(tzinfo=None)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        return None if value is None else value.replace(tzinfo=UTC)


class Base(DeclarativeBase):
    type_annotation_map: ClassVar[dict[Any, Any]] = {dict[str, Any]: JSON, list[Any]: JSON, datetime: UTCDateTime}


class Reviewer(Base):
    """A person who may resolve items. Their token is shown once, at `vetq inbox
    add-reviewer`; only its sha256 is kept."""

    __tablename__ = "inbox_reviewers"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(100), unique=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime]
    active: Mapped[bool] = mapped_column(default=True)


class WebSession(Base):
    """A signed-in browser: the cookie holds a random token, the table its sha256 (a
    leaked database opens no session), with the CSRF token every form must echo."""

    __tablename__ = "inbox_sessions"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    reviewer_id: Mapped[int] = mapped_column(ForeignKey("inbox_reviewers.id", ondelete="CASCADE"), index=True)
    csrf_token: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime]
    expires_at: Mapped[datetime]

    reviewer: Mapped[Reviewer] = relationship(lazy="joined")


class Item(Base):
    """One result a person must review: the job's document, schema and machine result,
    who holds it (a claim with a lease) and, once resolved, the reviewed result and
    whether it has been written to the job's result yet (`result_written_at`)."""

    __tablename__ = "inbox_items"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    job_id: Mapped[str] = mapped_column(String(200), unique=True)
    kind: Mapped[str] = mapped_column(String(16))
    state: Mapped[str] = mapped_column(String(16), index=True, default=OPEN)
    schema_name: Mapped[str] = mapped_column(String(200), index=True)
    schema_hash: Mapped[str | None] = mapped_column(String(64))
    # The job's schema reference as its message carried it (core.schemas.wire).
    schema_ref: Mapped[Any | None] = mapped_column(JSON)
    document_text: Mapped[str | None] = mapped_column(Text)
    document_pdf: Mapped[bytes | None] = mapped_column(LargeBinary)
    machine_result: Mapped[dict[str, Any]]
    trace_id: Mapped[str | None] = mapped_column(String(128))
    tenant: Mapped[str | None] = mapped_column(String(200), index=True)
    priority: Mapped[str] = mapped_column(String(8), default="normal")
    priority_rank: Mapped[int] = mapped_column(Integer, index=True, default=1)
    # The job's callback_url: the reviewed result is POSTed there too (event job.reviewed).
    callback_url: Mapped[str | None] = mapped_column(String(MAX_CALLBACK_URL_CHARS))
    batch_id: Mapped[str | None] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(index=True)
    ingested_at: Mapped[datetime]
    claimed_by: Mapped[int | None] = mapped_column(ForeignKey("inbox_reviewers.id"))
    claimed_at: Mapped[datetime | None]
    claim_expires_at: Mapped[datetime | None]
    resolved_by: Mapped[int | None] = mapped_column(ForeignKey("inbox_reviewers.id"))
    resolved_at: Mapped[datetime | None]
    reviewed_result: Mapped[dict[str, Any] | None]
    review_seconds: Mapped[float | None]
    result_written_at: Mapped[datetime | None]

    fields: Mapped[list[ItemField]] = relationship(
        back_populates="item", order_by="ItemField.position", cascade="all, delete-orphan", lazy="selectin"
    )
    claimer: Mapped[Reviewer | None] = relationship(foreign_keys=[claimed_by], lazy="joined")
    resolver: Mapped[Reviewer | None] = relationship(foreign_keys=[resolved_by], lazy="joined")


class ItemField(Base):
    """One value of an item's record (a leaf, by its path), flagged or not, with what
    the machine said and, once resolved, what the reviewer said."""

    __tablename__ = "inbox_item_fields"
    __table_args__ = (UniqueConstraint("item_id", "path"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    item_id: Mapped[int] = mapped_column(ForeignKey("inbox_items.id", ondelete="CASCADE"), index=True)
    position: Mapped[int]
    path: Mapped[str] = mapped_column(String(500))
    # The schema's template path (line_items[].amount): what filters and calibration group by.
    template: Mapped[str] = mapped_column(String(500), index=True)
    field_kind: Mapped[str | None] = mapped_column(String(32))
    flagged: Mapped[bool] = mapped_column(default=False)
    reason: Mapped[str | None] = mapped_column(Text)
    confidence: Mapped[float | None]
    machine_value: Mapped[Any | None] = mapped_column(JSON)
    reviewed_value: Mapped[Any | None] = mapped_column(JSON)
    outcome: Mapped[str | None] = mapped_column(String(16))

    item: Mapped[Item] = relationship(back_populates="fields")
