"""The inbox's one repository: every read and write of its database goes through here.

Items are added once per job (the job id is unique: ingesting the same entry twice
adds nothing), listed by priority and age, claimed by one reviewer at a time with a
lease, and resolved with the reviewer's values checked against the job's schema.

Claims and resolutions are conditional UPDATEs (`... WHERE state = 'open' AND
(claimed_by IS NULL OR claim_expires_at <= now ...)`): one statement decides, on
SQLite and PostgreSQL alike, so two reviewers can never both hold or both resolve an
item, and a claim whose lease ran out is anyone's again. A resolution is one
transaction: the item, its fields' outcomes and the reviewed result are written
together or not at all; a correction the schema refuses writes nothing."""

from __future__ import annotations

import copy
import hashlib
import re
import secrets
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import Engine, and_, delete, func, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, defer

from vetq.core.errors import ConflictError, InvalidInputError, NotFoundError, VetqError
from vetq.core.logging import get_logger
from vetq.core.settings import VetqSettings
from vetq.inbox.database import create_engine_for, database_error, migrate
from vetq.inbox.models import (
    CONFIRMED,
    CORRECTED,
    OPEN,
    PRIORITY_RANK,
    RESOLVED,
    Item,
    ItemField,
    Reviewer,
    WebSession,
)

log = get_logger("vetq.inbox")

REVIEWED = "reviewed"
# The machine statuses an item is made from: an extraction's needs_review, a review's
# verdict (status ok) when VETQ_INBOX_REVIEW_VERDICTS is on.
REVIEW_KIND = "review"
REVIEW_VERDICTS = ("KEEP", "MODIFY", "REPLACE", "INSUFFICIENT_EVIDENCE")
REVIEWER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,99}$")
SESSION_TTL = timedelta(hours=12)
MAX_PAGE = 500
DEFAULT_MAX_PDF_BYTES: int = VetqSettings.model_fields["max_pdf_bytes"].default


@dataclass(frozen=True)
class ItemDraft:
    """A finished job that needs a person: what the worker handed over."""

    job_id: str
    kind: str  # extract, validate or review
    request: Mapping[str, Any]
    result: Mapping[str, Any]
    finished_at: datetime
    tenant: str | None = None
    priority: str | None = None
    # Where the job's result is POSTed (core.job_options), the reviewed one too; its batch.
    callback_url: str | None = None
    batch_id: str | None = None


@dataclass(frozen=True)
class FieldDraft:
    path: str
    template: str
    field_kind: str | None
    value: Any


# --------------------------------------------------------------------------- paths

_STEP = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def path_steps(path: str) -> list[str | int]:
    """`line_items[2].amount` -> ["line_items", 2, "amount"]."""
    steps: list[str | int] = []
    for name, index in _STEP.findall(path):
        steps.append(int(index) if index else name)
    return steps


def template_of(path: str) -> str:
    return re.sub(r"\[\d+\]", "[]", path)


def value_at(data: Any, path: str) -> Any:
    current = data
    for step in path_steps(path):
        if isinstance(step, int):
            current = current[step] if isinstance(current, list) and step < len(current) else None
        else:
            current = current.get(step) if isinstance(current, dict) else None
    return current


def set_value(data: dict[str, Any], path: str, value: Any) -> None:
    steps = path_steps(path)
    current: Any = data
    for step in steps[:-1]:
        current = current[step]
    current[steps[-1]] = value


def record_fields(data: Mapping[str, Any], schema: Any | None) -> list[FieldDraft]:
    """Every value of a record by its path, in schema order (core.schemas.records.leaves),
    or, when the schema cannot be compiled here, by walking the data itself."""
    if schema is not None:
        from vetq.core.schemas.records import leaves

        # The value as the record holds it: an empty list stays [] (a leaf says None).
        return [
            FieldDraft(leaf.path, template_of(leaf.path), leaf.field.kind, value_at(data, leaf.path))
            for leaf in leaves(schema.fields, dict(data))
        ]
    out: list[FieldDraft] = []

    def walk(value: Any, path: str) -> None:
        if isinstance(value, dict) and value:
            for key, child in value.items():
                walk(child, f"{path}.{key}" if path else str(key))
        elif isinstance(value, list) and value:
            for index, child in enumerate(value):
                walk(child, f"{path}[{index}]")
        else:
            out.append(FieldDraft(path, template_of(path), None, value))

    for key, value in data.items():
        walk(value, str(key))
    return out


NUMERIC_KINDS = ("amount", "number", "quantity")


def value_from_text(kind: str | None, text: str) -> Any:
    """A reviewer's typed text as the JSON value the schema checks: a number for the
    numeric kinds (written plainly, 1234.56: `1.234,56` stays text and the schema says
    so, never a guess), true/false for a boolean, JSON for a list or object, null for
    an empty input; text otherwise."""
    import json
    import math

    stripped = text.strip()
    if stripped == "":
        return None
    if kind in NUMERIC_KINDS:
        try:
            number = float(stripped)
        except ValueError:
            return stripped
        if not math.isfinite(number):
            return stripped
        return int(number) if number.is_integer() and kind == "quantity" else number
    if kind == "boolean":
        lowered = stripped.lower()
        return {"true": True, "yes": True, "false": False, "no": False}.get(lowered, stripped)
    if kind in ("list", "object"):
        try:
            return json.loads(stripped)
        except ValueError:
            return stripped
    return text


def compiled_schema_of(reference: Any) -> Any:
    """The job's schema from the reference its message carried (core.schemas.wire)."""
    from vetq.core.schemas.wire import resolve

    return resolve(reference)


# --------------------------------------------------------------------------- the store


def utc_now() -> datetime:
    return datetime.now(UTC)


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class InboxStore:
    """The repository over one engine. `clock` gives the current UTC time (tests move it
    to expire a lease). An item keeps its job's PDF (the page images are drawn from it)
    up to `max_pdf_bytes` (VETQ_MAX_PDF_BYTES, as the workers took it)."""

    def __init__(
        self,
        engine: Engine,
        *,
        lease_s: float = 900.0,
        clock: Callable[[], datetime] = utc_now,
        max_pdf_bytes: int = DEFAULT_MAX_PDF_BYTES,
    ) -> None:
        self.engine = engine
        self.lease = timedelta(seconds=lease_s)
        self.clock = clock
        self.max_pdf_bytes = max_pdf_bytes

    @classmethod
    def open(
        cls,
        url: str,
        *,
        lease_s: float = 900.0,
        clock: Callable[[], datetime] = utc_now,
        max_pdf_bytes: int = DEFAULT_MAX_PDF_BYTES,
    ) -> InboxStore:
        """The store on `url`, migrated to the newest revision first."""
        try:
            engine = create_engine_for(url)
        except Exception as exc:  # noqa: BLE001 - named by database_error, without the URL
            raise database_error(exc) from None
        migrate(engine)
        return cls(engine, lease_s=lease_s, clock=clock, max_pdf_bytes=max_pdf_bytes)

    def close(self) -> None:
        self.engine.dispose()

    @contextmanager
    def session(self) -> Iterator[Session]:
        session = Session(self.engine, expire_on_commit=False)
        try:
            yield session
        except VetqError:
            session.rollback()
            raise
        except Exception as exc:
            session.rollback()
            raise database_error(exc) from exc
        finally:
            session.close()

    # ----------------------------------------------------------------- items

    def add_item(self, draft: ItemDraft) -> tuple[int, bool]:
        """The item of a finished job: (its id, True) when added now, (the id, False)
        when the job already has one (the same stream entry read twice)."""
        existing = self.item_id_of(draft.job_id)
        if existing is not None:
            return existing, False
        item = self._item_of(draft)
        with self.session() as session:
            session.add(item)
            try:
                session.commit()
            except IntegrityError:  # another inbox process added it between the look and the write
                session.rollback()
                existing = self.item_id_of(draft.job_id)
                if existing is None:
                    raise
                return existing, False
            return item.id, True

    def item_id_of(self, job_id: str) -> int | None:
        with self.session() as session:
            return session.scalar(select(Item.id).where(Item.job_id == job_id))

    def _item_of(self, draft: ItemDraft) -> Item:
        result = dict(draft.result)
        request = dict(draft.request)
        now = self.clock()
        priority = draft.priority if draft.priority in PRIORITY_RANK else "normal"
        item = Item(
            job_id=draft.job_id,
            kind=draft.kind,
            state=OPEN,
            machine_result=result,
            trace_id=_text(result.get("trace_id") or request.get("trace_id"), 128),
            tenant=_text(draft.tenant, 200),
            priority=priority,
            callback_url=draft.callback_url,
            batch_id=_text(draft.batch_id, 200),
            priority_rank=PRIORITY_RANK[priority],
            created_at=draft.finished_at,
            ingested_at=now,
        )
        if draft.kind == REVIEW_KIND:
            item.schema_name = REVIEW_KIND
            item.document_text = review_document(request)
            fields = [
                FieldDraft("verdict", "verdict", "enum", result.get("verdict")),
                FieldDraft("recommendation", "recommendation", "text", result.get("recommendation")),
            ]
            flags = {"verdict": f"the reviewer model's verdict (confidence {result.get('confidence')})"}
            confidence = {"verdict": _number(result.get("confidence"))}
        else:
            raw_info = result.get("schema")
            info: Mapping[str, Any] = raw_info if isinstance(raw_info, Mapping) else {}
            item.schema_name = _text(info.get("name"), 200) or "unknown"
            item.schema_hash = _text(info.get("hash"), 64)
            item.schema_ref = request.get("schema")
            text = request.get("text")
            item.document_text = text if isinstance(text, str) else None
            item.document_pdf = self._pdf_of(draft.job_id, request.get("pdf"))
            try:
                schema = compiled_schema_of(item.schema_ref)
            except (VetqError, ValueError):
                schema = None  # a schema this release cannot compile: the data's own shape
            raw_data = result.get("data")
            data: Mapping[str, Any] = raw_data if isinstance(raw_data, Mapping) else {}
            fields = record_fields(data, schema)
            flags = {
                str(flag.get("field")): str(flag.get("reason") or "")
                for flag in result.get("flagged_fields") or []
                if isinstance(flag, Mapping)
            }
            raw_confidence = result.get("field_confidence")
            confidence = (
                {str(k): _number(v) for k, v in raw_confidence.items()} if isinstance(raw_confidence, Mapping) else {}
            )
        for position, field in enumerate(fields):
            flagged = field.path in flags
            item.fields.append(
                ItemField(
                    position=position,
                    path=field.path[:500],
                    template=field.template[:500],
                    field_kind=field.field_kind,
                    flagged=flagged,
                    reason=flags.get(field.path) if flagged else None,
                    confidence=confidence.get(field.path),
                    machine_value=field.value,
                )
            )
        return item

    def _pdf_of(self, job_id: str, encoded: Any) -> bytes | None:
        """The job's PDF (base64 in its request), kept for its page images. One over
        max_pdf_bytes (a worker allowed more than this inbox does) is not kept: the item
        then lists where each value stands, without images; logged, never silent."""
        if not isinstance(encoded, str):
            return None
        if len(encoded) > 4 * (self.max_pdf_bytes // 3 + 1):
            log.warning("inbox_pdf_not_kept", job_id=job_id, reason="over VETQ_MAX_PDF_BYTES")
            return None
        import base64
        import binascii

        try:
            pdf = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            log.warning("inbox_pdf_not_kept", job_id=job_id, reason="not base64")
            return None
        if len(pdf) > self.max_pdf_bytes:
            log.warning("inbox_pdf_not_kept", job_id=job_id, reason="over VETQ_MAX_PDF_BYTES")
            return None
        return pdf

    def items(
        self,
        *,
        state: str = OPEN,
        schema: str | None = None,
        tenant: str | None = None,
        flagged_field: str | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[Item]:
        """Items in `state`, highest priority first, then oldest first; filtered by schema
        name, tenant, and a flagged field's path or template (`total`, `line_items[].amount`)."""
        # A list never shows the PDFs: loading them would hold up to MAX_PAGE of them in
        # memory per page view. Reading one from a listed item raises, rather than loading.
        query = select(Item).options(defer(Item.document_pdf, raiseload=True)).where(Item.state == state)
        if schema:
            query = query.where(Item.schema_name == schema)
        if tenant:
            query = query.where(Item.tenant == tenant)
        if flagged_field:
            flagged = select(ItemField.item_id).where(
                ItemField.flagged.is_(True),
                or_(ItemField.path == flagged_field, ItemField.template == template_of(flagged_field)),
            )
            query = query.where(Item.id.in_(flagged))
        order = (Item.priority_rank, Item.created_at, Item.id) if state == OPEN else (Item.resolved_at.desc(), Item.id)
        query = query.order_by(*order).limit(max(1, min(limit, MAX_PAGE))).offset(max(0, offset))
        with self.session() as session:
            return list(session.scalars(query).unique())

    def facets(self) -> dict[str, list[str]]:
        """The schemas, tenants and flagged field templates open items have: the filters' choices."""
        with self.session() as session:
            schemas = session.scalars(
                select(Item.schema_name).where(Item.state == OPEN).distinct().order_by(Item.schema_name)
            )
            tenants = session.scalars(
                select(Item.tenant).where(Item.state == OPEN, Item.tenant.is_not(None)).distinct().order_by(Item.tenant)
            )
            templates = session.scalars(
                select(ItemField.template)
                .join(Item, Item.id == ItemField.item_id)
                .where(Item.state == OPEN, ItemField.flagged.is_(True))
                .distinct()
                .order_by(ItemField.template)
            )
            return {"schemas": list(schemas), "tenants": [t for t in tenants if t], "fields": list(templates)}

    def counts(self) -> dict[str, int]:
        with self.session() as session:
            rows = session.execute(select(Item.state, func.count()).group_by(Item.state)).all()
            unwritten = session.scalar(
                select(func.count()).where(Item.state == RESOLVED, Item.result_written_at.is_(None))
            )
        counts = {OPEN: 0, RESOLVED: 0, **{str(state): int(n) for state, n in rows}}
        counts["unwritten"] = int(unwritten or 0)
        return counts

    def item(self, item_id: int) -> Item:
        with self.session() as session:
            item = session.get(Item, item_id)
            if item is None:
                raise NotFoundError(f"no inbox item {item_id}")
            return item

    def next_open(self, after: Item, reviewer: Reviewer) -> int | None:
        """The open item after `after` in the list's order that nobody else holds."""
        now = self.clock()
        free = or_(Item.claimed_by.is_(None), Item.claimed_by == reviewer.id, Item.claim_expires_at <= now)
        later = or_(
            Item.priority_rank > after.priority_rank,
            and_(Item.priority_rank == after.priority_rank, Item.created_at > after.created_at),
            and_(Item.priority_rank == after.priority_rank, Item.created_at == after.created_at, Item.id > after.id),
        )
        query = (
            select(Item.id)
            .where(Item.state == OPEN, Item.id != after.id, free, later)
            .order_by(Item.priority_rank, Item.created_at, Item.id)
            .limit(1)
        )
        with self.session() as session:
            return session.scalar(query)

    # ----------------------------------------------------------------- claims

    def claim(self, item_id: int, reviewer: Reviewer) -> Item:
        """Hold `item_id` for `reviewer` for one lease (again: the lease starts over).
        ConflictError when another reviewer holds it or it is resolved."""
        now = self.clock()
        claimable = or_(Item.claimed_by.is_(None), Item.claimed_by == reviewer.id, Item.claim_expires_at <= now)
        statement = (
            update(Item)
            .where(Item.id == item_id, Item.state == OPEN, claimable)
            .values(claimed_by=reviewer.id, claimed_at=now, claim_expires_at=now + self.lease)
            .execution_options(synchronize_session=False)
        )
        with self.session() as session:
            held = session.execute(statement).rowcount  # type: ignore[attr-defined]
            session.commit()
        item = self.item(item_id)
        if held != 1:
            raise ConflictError(self._why_not_yours(item, reviewer, now))
        return item

    def release(self, item_id: int, reviewer: Reviewer) -> bool:
        """Give an item back to the queue (only its holder can)."""
        statement = (
            update(Item)
            .where(Item.id == item_id, Item.state == OPEN, Item.claimed_by == reviewer.id)
            .values(claimed_by=None, claimed_at=None, claim_expires_at=None)
            .execution_options(synchronize_session=False)
        )
        with self.session() as session:
            released = session.execute(statement).rowcount  # type: ignore[attr-defined]
            session.commit()
        return bool(released)

    def release_expired(self) -> int:
        """Claims whose lease ran out go back to the queue; returns how many."""
        now = self.clock()
        statement = (
            update(Item)
            .where(Item.state == OPEN, Item.claimed_by.is_not(None), Item.claim_expires_at <= now)
            .values(claimed_by=None, claimed_at=None, claim_expires_at=None)
            .execution_options(synchronize_session=False)
        )
        with self.session() as session:
            released = int(session.execute(statement).rowcount)  # type: ignore[attr-defined]
            session.commit()
        if released:
            log.info("inbox_claims_expired", released=released)
        return released

    def _why_not_yours(self, item: Item, reviewer: Reviewer, now: datetime) -> str:
        if item.state == RESOLVED:
            by = item.resolver.name if item.resolver is not None else "another reviewer"
            return f"item {item.id} was already resolved by {by}; nothing was written"
        if item.claimed_by is not None and item.claimed_by != reviewer.id and (item.claim_expires_at or now) > now:
            by = item.claimer.name if item.claimer is not None else "another reviewer"
            return f"item {item.id} is claimed by {by} until {_iso(item.claim_expires_at)}; nothing was written"
        if item.claimed_by is None or (item.claim_expires_at or now) <= now:
            return f"your claim on item {item.id} has expired: claim it again; nothing was written"
        return f"item {item.id} cannot be changed now; nothing was written"

    # ----------------------------------------------------------------- resolving

    def resolve(self, item_id: int, reviewer: Reviewer, values: Mapping[str, Any]) -> Item:
        """Resolve an item the reviewer holds: `values` maps field paths to the values the
        reviewer gives (a field left out keeps the machine's value: confirmed). The whole
        record is checked against the job's schema; InvalidInputError (nothing written)
        names what does not fit. ConflictError if the reviewer does not hold the item."""
        now = self.clock()
        item = self.item(item_id)
        if item.state != OPEN or item.claimed_by != reviewer.id or (item.claim_expires_at or now) <= now:
            raise ConflictError(self._why_not_yours(item, reviewer, now))
        reviewed_data, outcomes = self.reviewed_values(item, values)
        review_seconds = max(0.0, (now - item.claimed_at).total_seconds()) if item.claimed_at else None
        reviewed = reviewed_result(item, reviewed_data, outcomes, reviewer.name, now, review_seconds)
        statement = (
            update(Item)
            .where(
                Item.id == item_id,
                Item.state == OPEN,
                Item.claimed_by == reviewer.id,
                Item.claim_expires_at > now,
            )
            .values(
                state=RESOLVED,
                resolved_by=reviewer.id,
                resolved_at=now,
                reviewed_result=reviewed,
                review_seconds=review_seconds,
                claim_expires_at=None,
            )
            .execution_options(synchronize_session=False)
        )
        with self.session() as session:
            if session.execute(statement).rowcount != 1:  # type: ignore[attr-defined]
                session.rollback()
                raise ConflictError(self._why_not_yours(self.item(item_id), reviewer, now))
            for field in session.scalars(select(ItemField).where(ItemField.item_id == item_id)):
                reviewed_value, outcome = outcomes[field.path]
                field.reviewed_value = reviewed_value
                field.outcome = outcome
            session.commit()
        log.info(
            "inbox_item_resolved",
            item_id=item_id,
            job_id=item.job_id,
            corrected=sum(1 for _, outcome in outcomes.values() if outcome == CORRECTED),
        )
        return self.item(item_id)

    def reviewed_values(
        self, item: Item, values: Mapping[str, Any]
    ) -> tuple[dict[str, Any], dict[str, tuple[Any, str]]]:
        """The reviewed record and, per field path, (its reviewed value, confirmed or
        corrected); InvalidInputError when a value does not fit the schema."""
        by_path = {field.path: field for field in item.fields}
        unknown = [path for path in values if path not in by_path]
        if unknown:
            raise InvalidInputError(f"item {item.id} has no field {', '.join(sorted(unknown)[:5])}")
        if item.kind == REVIEW_KIND:
            return self._reviewed_verdict(item, values)
        machine_data = item.machine_result.get("data")
        data = copy.deepcopy(machine_data) if isinstance(machine_data, dict) else {}
        for path, value in values.items():
            try:
                set_value(data, path, value)
            except (KeyError, IndexError, TypeError):
                raise InvalidInputError(f"{path}: the record has no place for a value there") from None
        try:
            schema = compiled_schema_of(item.schema_ref)
        except VetqError as exc:
            raise InvalidInputError(
                f"item {item.id}'s schema {item.schema_name!r} cannot be used here ({exc.message}); nothing was written"
            ) from None
        from vetq.core.schemas.records import RecordError

        try:
            reviewed = schema.validate_data(data)
        except RecordError as exc:
            raise InvalidInputError(f"the correction does not fit schema {item.schema_name!r}: {exc}") from None
        outcomes = {}
        for path, field in by_path.items():
            value = value_at(reviewed, path)
            outcomes[path] = (value, CONFIRMED if value == field.machine_value else CORRECTED)
        return reviewed, outcomes

    def _reviewed_verdict(
        self, item: Item, values: Mapping[str, Any]
    ) -> tuple[dict[str, Any], dict[str, tuple[Any, str]]]:
        reviewed = {field.path: values.get(field.path, field.machine_value) for field in item.fields}
        if reviewed.get("verdict") not in REVIEW_VERDICTS:
            raise InvalidInputError(f"verdict must be one of {', '.join(REVIEW_VERDICTS)}")
        if not isinstance(reviewed.get("recommendation"), str) or not reviewed["recommendation"].strip():
            raise InvalidInputError("recommendation must be text")
        outcomes = {
            field.path: (
                reviewed[field.path],
                CONFIRMED if reviewed[field.path] == field.machine_value else CORRECTED,
            )
            for field in item.fields
        }
        return reviewed, outcomes

    def mark_written(self, item_id: int) -> None:
        """The reviewed result is now the job's result."""
        with self.session() as session:
            session.execute(
                update(Item)
                .where(Item.id == item_id, Item.result_written_at.is_(None))
                .values(result_written_at=self.clock())
                .execution_options(synchronize_session=False)
            )
            session.commit()

    def unwritten(self, limit: int = 100) -> list[Item]:
        """Resolved items whose reviewed result is not yet the job's (Redis was away)."""
        query = (
            select(Item)
            .where(Item.state == RESOLVED, Item.result_written_at.is_(None))
            .order_by(Item.resolved_at)
            .limit(limit)
        )
        with self.session() as session:
            return list(session.scalars(query).unique())

    def resolved(self, *, schema: str | None = None, kind: str | None = None) -> Iterator[Item]:
        """Every resolved item, oldest resolution first, a page at a time."""
        last = 0
        while True:
            query = select(Item).where(Item.state == RESOLVED, Item.id > last)
            if schema:
                query = query.where(Item.schema_name == schema)
            if kind:
                query = query.where(Item.kind == kind)
            with self.session() as session:
                page = list(session.scalars(query.order_by(Item.id).limit(200)).unique())
            if not page:
                return
            yield from page
            last = page[-1].id

    # ----------------------------------------------------------------- reviewers

    def add_reviewer(self, name: str) -> str:
        """A new reviewer; returns their token (shown once: only its hash is kept)."""
        if not REVIEWER_NAME.match(name or ""):
            raise InvalidInputError(
                "a reviewer's name is 1-100 letters, digits and . _ @ - (starting with a letter or digit)"
            )
        token = secrets.token_urlsafe(32)
        with self.session() as session:
            if session.scalar(select(Reviewer.id).where(Reviewer.name == name)) is not None:
                raise InvalidInputError(f"a reviewer named {name!r} exists already")
            session.add(Reviewer(name=name, token_hash=hash_token(token), created_at=self.clock(), active=True))
            session.commit()
        return token

    def reviewer_by_token(self, token: str) -> Reviewer | None:
        if not token:
            return None
        with self.session() as session:
            reviewer = session.scalar(select(Reviewer).where(Reviewer.token_hash == hash_token(token)))
        return reviewer if reviewer is not None and reviewer.active else None

    def reviewer_named(self, name: str) -> Reviewer:
        with self.session() as session:
            reviewer = session.scalar(select(Reviewer).where(Reviewer.name == name))
        if reviewer is None:
            raise NotFoundError(f"no reviewer named {name!r}: add one with `vetq inbox add-reviewer`")
        return reviewer

    def reviewers(self) -> Sequence[Reviewer]:
        with self.session() as session:
            return list(session.scalars(select(Reviewer).order_by(Reviewer.name)))

    # ----------------------------------------------------------------- sessions

    def open_session(self, reviewer: Reviewer) -> tuple[str, str]:
        """A signed-in browser for `reviewer`: (the cookie's token, the CSRF token)."""
        cookie, csrf = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
        now = self.clock()
        with self.session() as session:
            session.execute(delete(WebSession).where(WebSession.expires_at <= now))
            session.add(
                WebSession(
                    id=hash_token(cookie),
                    reviewer_id=reviewer.id,
                    csrf_token=csrf,
                    created_at=now,
                    expires_at=now + SESSION_TTL,
                )
            )
            session.commit()
        return cookie, csrf

    def web_session(self, cookie: str | None) -> WebSession | None:
        if not cookie:
            return None
        with self.session() as session:
            found = session.get(WebSession, hash_token(cookie))
        if found is None or found.expires_at <= self.clock() or not found.reviewer.active:
            return None
        return found

    def close_session(self, cookie: str | None) -> None:
        if not cookie:
            return
        with self.session() as session:
            session.execute(delete(WebSession).where(WebSession.id == hash_token(cookie)))
            session.commit()


def reviewed_result(
    item: Item,
    reviewed: Mapping[str, Any],
    outcomes: Mapping[str, tuple[Any, str]],
    reviewer: str,
    now: datetime,
    review_seconds: float | None,
) -> dict[str, Any]:
    """The job's final result once a person has reviewed it: the reviewed values, who and
    when, each correction beside the machine's value, and the machine's whole result."""
    machine = dict(item.machine_result)
    machine_values = {field.path: field.machine_value for field in item.fields}
    corrections = [
        {"field": path, "machine": machine_values[path], "reviewed": value}
        for path, (value, outcome) in outcomes.items()
        if outcome == CORRECTED
    ]
    result: dict[str, Any] = {"format": 2, "status": REVIEWED}
    if item.kind == REVIEW_KIND:
        result.update(verdict=reviewed.get("verdict"), recommendation=reviewed.get("recommendation"))
        if isinstance(machine.get("meta"), Mapping):
            result["meta"] = machine["meta"]
    else:
        result.update(schema=machine.get("schema"), data=dict(reviewed))
        result.update(usage=machine.get("usage") or {}, cost_usd=machine.get("cost_usd", 0.0))
    result["trace_id"] = machine.get("trace_id")
    result["review"] = {
        "id": uuid.uuid4().hex,
        "reviewer": reviewer,
        "reviewed_at": _iso(now),
        "review_seconds": None if review_seconds is None else round(review_seconds, 3),
        "corrections": corrections,
        "confirmed": [path for path, (_, outcome) in outcomes.items() if outcome == CONFIRMED],
    }
    result["machine_result"] = machine
    return result


def review_document(request: Mapping[str, Any]) -> str:
    """A review job's request as one text a person reads: its sections, labelled."""
    parts = []
    for name in ("objective", "context", "environment", "proposed_solution"):
        value = request.get(name)
        if isinstance(value, str) and value.strip():
            parts.append(f"{name.replace('_', ' ').upper()}\n{value.strip()}")
    for name in ("constraints", "evidence"):
        value = request.get(name)
        if isinstance(value, list) and value:
            lines = [f"- {entry if isinstance(entry, str) else _compact(entry)}" for entry in value]
            parts.append(f"{name.upper()}\n" + "\n".join(lines))
    return "\n\n".join(parts)


def _compact(value: Any) -> str:
    import json

    return json.dumps(value, ensure_ascii=False)


def _text(value: Any, limit: int) -> str | None:
    return str(value)[:limit] if isinstance(value, str) and value else None


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
