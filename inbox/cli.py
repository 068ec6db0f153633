"""The `vetq inbox` verbs and `vetq calibrate`: api_client/cli.py parses them and hands
the arguments here (the CLI's lazy edge to the inbox, as `vetq eval` is to eval/).
Output is JSON on stdout, one object per line, as every vetq verb's."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from vetq.core.errors import ConfigError
from vetq.core.settings import VetqSettings, load_settings
from vetq.inbox.store import InboxStore

EXIT_OK = 0


def emit(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def require_extra() -> None:
    """ConfigError naming the extra when vetq[inbox]'s packages are missing."""
    import importlib.util

    missing = [
        name for name in ("sqlalchemy", "alembic", "starlette", "jinja2") if importlib.util.find_spec(name) is None
    ]
    if missing:
        raise ConfigError(f"the inbox needs vetq[inbox] (pip install 'vetq[inbox]'): {', '.join(missing)} missing")


def open_store(settings: VetqSettings | None = None) -> InboxStore:
    """The inbox's store on VETQ_INBOX_URL (or the SQLite file under VETQ_HOME), migrated."""
    settings = settings or load_settings()
    return InboxStore.open(
        settings.inbox_database_url(), lease_s=settings.inbox_lease_s, max_pdf_bytes=settings.max_pdf_bytes
    )


def run_migrate(args: argparse.Namespace) -> int:
    from vetq.inbox.database import create_engine_for, database_error, migrate

    settings = load_settings()
    try:
        engine = create_engine_for(settings.inbox_database_url())
    except Exception as exc:  # noqa: BLE001 - named by database_error, without the URL
        raise database_error(exc) from None
    try:
        revision = migrate(engine)
    finally:
        engine.dispose()
    emit({"migrated": True, "revision": revision, "database": engine.dialect.name})
    return EXIT_OK


def run_add_reviewer(args: argparse.Namespace) -> int:
    store = open_store()
    try:
        token = store.add_reviewer(args.name)
    finally:
        store.close()
    # The token is shown this once: only its hash is kept.
    emit({"reviewer": args.name, "token": token})
    return EXIT_OK


def run_list(args: argparse.Namespace) -> int:
    store = open_store()
    try:
        store.release_expired()
        for item in store.items(
            state=args.state, schema=args.schema, tenant=args.tenant, flagged_field=args.field, limit=args.limit
        ):
            emit(summary(item))
    finally:
        store.close()
    return EXIT_OK


def run_sync(args: argparse.Namespace) -> int:
    """Take the workers' handoffs into items, write reviewed results still unwritten and
    return abandoned claims; once, or (--follow) until SIGTERM or Ctrl-C."""
    import signal
    import threading

    from vetq.inbox.service import open_inbox

    inbox = open_inbox(load_settings())
    stop = threading.Event()
    previous = signal.signal(signal.SIGTERM, lambda _signum, _frame: stop.set()) if args.follow else None
    try:
        while True:
            report = inbox.sync(block_ms=1000 if args.follow else None)
            if report.added or report.written or report.unreadable or not args.follow:
                emit({"synced": True, **report.as_dict(), **inbox.store.counts()})
            if not args.follow or stop.is_set():
                return EXIT_OK
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
        inbox.close()


def run_export(args: argparse.Namespace) -> int:
    from vetq.inbox.export import export

    kind, path = next((k, getattr(args, k)) for k in ("golden", "label_studio", "argilla") if getattr(args, k))
    store = open_store()
    try:
        written = export(store, kind, path, schema=args.schema)
    finally:
        store.close()
    emit({"exported": written, "format": kind, "file": path})
    return EXIT_OK


def run_calibrate(args: argparse.Namespace) -> int:
    """Thresholds from the resolved items; INVALID_INPUT (exit 2) when no schema's
    values support the target, saying how many more reviews would."""
    from vetq.core.errors import InvalidInputError
    from vetq.inbox.calibrate import calibrate, examples_of, thresholds_file, write_json

    store = open_store()
    try:
        examples = examples_of(store, args.schema)
    finally:
        store.close()
    report = calibrate(examples, args.target_precision, min_field_values=args.min_field_values)
    if not report["schemas"]:
        thin = "; ".join(
            f"schema {name}: {entry['values']} reviewed values support no threshold at precision "
            f"{args.target_precision} (Wilson lower bound, 95 %); about {entry['more_reviews_needed']} more reviews "
            "are needed"
            for name, entry in report["refused"].items()
        )
        raise InvalidInputError(f"too little data to calibrate: {thin}; nothing was written")
    if args.write:
        write_json(args.write, thresholds_file(report))
        report["written"] = args.write
    emit(report)
    return EXIT_OK


def run_serve(args: argparse.Namespace) -> int:
    """The review page on --address (127.0.0.1 unless told otherwise) and --port, until
    SIGTERM or Ctrl-C; it syncs the inbox itself every few seconds."""
    import signal

    import uvicorn

    from vetq.inbox.service import open_inbox
    from vetq.inbox.web import ReviewPage

    settings = load_settings()
    inbox = open_inbox(settings)
    page = ReviewPage(inbox, secure_cookies=args.secure_cookies)
    server = uvicorn.Server(
        uvicorn.Config(page.app(), host=args.address, port=args.port, log_level="warning", access_log=False)
    )
    # uvicorn stops gracefully on SIGTERM, then raises it again for the handler it found
    # (the default one ends the process there, the store unclosed): this one makes a
    # SIGTERM, whenever it comes, the verb's end, with exit 0.
    previous = signal.signal(signal.SIGTERM, lambda _signum, _frame: setattr(server, "should_exit", True))
    sys.stderr.write(f"vetq inbox: serving the review page on http://{args.address}:{args.port}/\n")
    try:
        server.run()
    finally:
        signal.signal(signal.SIGTERM, previous)
        inbox.close()
    return EXIT_OK


def summary(item: Any) -> dict[str, Any]:
    return {
        "item": item.id,
        "job_id": item.job_id,
        "kind": item.kind,
        "state": item.state,
        "schema": item.schema_name,
        "tenant": item.tenant,
        "priority": item.priority,
        "created_at": item.created_at.isoformat(),
        "flagged": [field.path for field in item.fields if field.flagged],
        "claimed_by": item.claimer.name if item.claimer is not None else None,
        "resolved_by": item.resolver.name if item.resolver is not None else None,
    }
