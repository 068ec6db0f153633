"""Opening the inbox's database: the engine for VETQ_INBOX_URL (or the SQLite file under
VETQ_HOME) and its migrations, run on every open so a new release's tables are there
before anything reads them. `vetq inbox migrate` runs the same step alone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vetq.core.errors import ConfigError, ServiceUnavailableError
from vetq.core.logging import get_logger

log = get_logger("vetq.inbox")

MIGRATIONS = Path(__file__).with_name("migrations")
# Alembic's bookkeeping table, named for the inbox: the database may hold others' tables.
VERSION_TABLE = "inbox_alembic_version"
# Inbox servers starting together on one PostgreSQL migrate one at a time.
MIGRATION_LOCK_ID = 0x76657471  # "vetq"


def create_engine_for(url: str) -> Any:
    """An engine for `url`. SQLite waits for a writer instead of failing at once
    (several processes may share the file: a server and a `vetq inbox sync`)."""
    from sqlalchemy import create_engine, event

    if url.startswith("sqlite"):
        path = url.split("///", 1)[1] if "///" in url else ""
        if path and path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        engine = create_engine(url, connect_args={"timeout": 30, "check_same_thread": False})

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(connection: Any, _record: Any) -> None:
            cursor = connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.close()

        return engine
    return create_engine(url, pool_pre_ping=True)


def migrate(engine: Any) -> str | None:
    """Bring the database to the newest revision; returns it."""
    from alembic import command
    from alembic.config import Config
    from alembic.runtime.migration import MigrationContext
    from sqlalchemy import text

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    try:
        with engine.begin() as connection:
            if connection.dialect.name == "postgresql":
                connection.execute(text("SELECT pg_advisory_xact_lock(:id)"), {"id": MIGRATION_LOCK_ID})
            config.attributes["connection"] = connection
            command.upgrade(config, "head")
            context = MigrationContext.configure(connection, opts={"version_table": VERSION_TABLE})
            revision = context.get_current_revision()
    except Exception as exc:  # noqa: BLE001 - named by database_error, without the URL
        raise database_error(exc) from None
    log.info("inbox_migrated", revision=revision)
    return revision


def database_error(exc: BaseException) -> Exception:
    """What a failure to reach or use the database means, without its URL (it may
    hold a password)."""
    from sqlalchemy.exc import ArgumentError, NoSuchModuleError, OperationalError

    if isinstance(exc, (ArgumentError, NoSuchModuleError)):
        return ConfigError(f"VETQ_INBOX_URL: the inbox's database URL cannot be used ({type(exc).__name__})")
    if isinstance(exc, OperationalError):
        reason = str(getattr(exc, "orig", exc)).splitlines()[0][:200] if str(exc) else type(exc).__name__
        return ServiceUnavailableError(f"the inbox's database cannot be reached or written: {reason}")
    if isinstance(exc, Exception):
        return exc
    return RuntimeError(str(exc))
