"""The inbox's repository (inbox/store.py) on both of its databases: SQLite (the embedded
default) and a real PostgreSQL started by the suite (tests/postgres.py). Items are
added once per job, listed by priority and age, claimed by one reviewer at a time
with a lease, and resolved with values the job's schema accepts, or not at all."""

from __future__ import annotations

import threading

import pytest

from tests.inbox_data import Clock, draft

# The PostgreSQL half starts a server.
pytestmark = pytest.mark.processes

TABLES = ("inbox_item_fields", "inbox_sessions", "inbox_items", "inbox_reviewers")


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def database_url(request, tmp_path_factory):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path_factory.mktemp('inbox') / 'inbox.sqlite3'}"
    server = request.getfixturevalue("postgres_server")
    return server.create_database("inbox_store").replace("postgresql://", "postgresql+psycopg://")


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def store(database_url, clock):
    from sqlalchemy import text

    from vetq.inbox.store import InboxStore

    opened = InboxStore.open(database_url, lease_s=600, clock=clock)
    with opened.engine.begin() as connection:
        for table in TABLES:
            connection.execute(text(f"DELETE FROM {table}"))
    yield opened
    opened.close()


def reviewer(store, name):
    store.add_reviewer(name)
    return store.reviewer_named(name)


def test_migrations_bring_a_database_to_the_newest_revision_and_run_again_as_nothing(store):
    from alembic.script import ScriptDirectory
    from sqlalchemy import inspect

    from vetq.inbox.database import MIGRATIONS, migrate

    head = ScriptDirectory(str(MIGRATIONS)).get_current_head()
    assert migrate(store.engine) == head == migrate(store.engine)
    assert set(TABLES) <= set(inspect(store.engine).get_table_names())


def test_an_item_holds_the_document_every_value_and_the_flags_and_is_added_once_per_job(store, clock):
    item_id, added = store.add_item(draft("job-1", tenant="acme", priority="high", clock=clock))
    assert added
    assert store.add_item(draft("job-1", clock=clock)) == (item_id, False)  # the same entry read twice
    item = store.item(item_id)
    assert (item.job_id, item.kind, item.state, item.schema_name) == ("job-1", "extract", "open", "invoice")
    assert (item.tenant, item.priority, item.trace_id) == ("acme", "high", "trace-job-1")
    assert "Globex Ltd" in item.document_text
    paths = [field.path for field in item.fields]
    assert paths == [
        "vendor_name",
        "invoice_number",
        "invoice_date",
        "subtotal",
        "tax",
        "total",
        "currency",
        "line_items",
    ]
    total = next(field for field in item.fields if field.path == "total")
    assert (total.flagged, total.field_kind, total.machine_value, total.confidence) == (True, "amount", 538.2, 0.31)
    assert "583.20" in total.reason
    assert not any(field.flagged for field in item.fields if field.path != "total")
    assert item.machine_result["field_provenance"]["total"][0]["text"] == "583.20"
    assert store.counts()["open"] == 1


def test_open_items_list_by_priority_then_age_and_filter_by_schema_tenant_and_flagged_field(store, clock):
    store.add_item(draft("old-normal", minutes_ago=30, clock=clock))
    store.add_item(draft("new-high", priority="high", tenant="acme", minutes_ago=1, clock=clock))
    store.add_item(draft("old-low", priority="low", minutes_ago=60, clock=clock))
    store.add_item(draft("new-normal", minutes_ago=2, clock=clock))
    assert [item.job_id for item in store.items()] == ["new-high", "old-normal", "new-normal", "old-low"]
    assert [item.job_id for item in store.items(tenant="acme")] == ["new-high"]
    assert len(store.items(schema="invoice")) == 4 and store.items(schema="receipt") == []
    assert len(store.items(flagged_field="total")) == 4
    assert store.items(flagged_field="tax") == []
    facets = store.facets()
    assert facets == {"schemas": ["invoice"], "tenants": ["acme"], "fields": ["total"]}


def test_a_claim_is_one_reviewers_until_its_lease_runs_out(store, clock):
    from vetq.core.errors import ConflictError

    item_id, _ = store.add_item(draft("job-claim", clock=clock))
    ana, ben = reviewer(store, "ana"), reviewer(store, "ben")
    assert store.claim(item_id, ana).claimed_by == ana.id
    with pytest.raises(ConflictError, match="claimed by ana"):
        store.claim(item_id, ben)
    with pytest.raises(ConflictError, match="claimed by ana"):
        store.resolve(item_id, ben, {})
    clock.advance(300)
    store.claim(item_id, ana)  # claiming again renews the lease
    clock.advance(599)
    assert store.release_expired() == 0
    clock.advance(2)  # ana walked away: the claim returns to the queue
    assert store.release_expired() == 1
    assert store.item(item_id).claimed_by is None
    assert store.claim(item_id, ben).claimed_by == ben.id
    with pytest.raises(ConflictError, match="claimed by ben"):
        store.claim(item_id, ana)


def test_an_expired_claim_is_anyones_even_before_the_sweep(store, clock):
    from vetq.core.errors import ConflictError

    item_id, _ = store.add_item(draft("job-lapsed", clock=clock))
    ana, ben = reviewer(store, "ana"), reviewer(store, "ben")
    store.claim(item_id, ana)
    clock.advance(601)
    assert store.claim(item_id, ben).claimed_by == ben.id
    with pytest.raises(ConflictError):
        store.resolve(item_id, ana, {"total": 583.2})  # ana's lease is gone: nothing written
    assert store.item(item_id).state == "open"


def test_two_reviewers_claiming_at_once_one_wins(store, clock):
    from vetq.core.errors import ConflictError

    item_id, _ = store.add_item(draft("job-race", clock=clock))
    people = [reviewer(store, f"r{i}") for i in range(4)]
    barrier = threading.Barrier(len(people))
    outcomes: list[str] = []

    def claim(person):
        barrier.wait(timeout=10)
        try:
            store.claim(item_id, person)
            outcomes.append("won")
        except ConflictError:
            outcomes.append("lost")

    threads = [threading.Thread(target=claim, args=(person,)) for person in people]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert sorted(outcomes) == ["lost", "lost", "lost", "won"]


def test_resolving_checks_every_value_against_the_schema_and_writes_nothing_when_one_fails(store, clock):
    from vetq.core.errors import ConflictError, InvalidInputError

    item_id, _ = store.add_item(draft("job-resolve", clock=clock))
    ana = reviewer(store, "ana")
    store.claim(item_id, ana)
    with pytest.raises(InvalidInputError, match="total"):
        store.resolve(item_id, ana, {"total": "five hundred"})
    with pytest.raises(InvalidInputError, match="invoice_date"):
        store.resolve(item_id, ana, {"total": 583.2, "invoice_date": "the 31st of February"})
    with pytest.raises(InvalidInputError, match="no field"):
        store.resolve(item_id, ana, {"iban": "X"})
    untouched = store.item(item_id)
    assert untouched.state == "open" and untouched.claimed_by == ana.id and untouched.reviewed_result is None
    assert all(field.outcome is None for field in untouched.fields)

    clock.advance(42)
    resolved = store.resolve(item_id, ana, {"total": 583.2, "currency": "gbp"})
    assert resolved.state == "resolved" and resolved.resolved_by == ana.id and resolved.review_seconds == 42
    outcomes = {field.path: (field.outcome, field.reviewed_value) for field in resolved.fields}
    assert outcomes["total"] == ("corrected", 583.2)
    assert outcomes["currency"] == ("confirmed", "GBP")  # normalised by the schema: the machine had it right
    assert outcomes["vendor_name"] == ("confirmed", "Globex Ltd")
    result = resolved.reviewed_result
    assert result["status"] == "reviewed" and result["format"] == 2
    assert result["data"]["total"] == 583.2
    assert result["review"]["reviewer"] == "ana"
    assert result["review"]["corrections"] == [{"field": "total", "machine": 538.2, "reviewed": 583.2}]
    assert result["machine_result"]["status"] == "needs_review"
    assert result["machine_result"]["data"]["total"] == 538.2
    assert store.unwritten()[0].id == item_id

    with pytest.raises(ConflictError, match="already resolved by ana"):
        store.resolve(item_id, ana, {"total": 1.0})
    with pytest.raises(ConflictError, match="already resolved"):
        store.claim(item_id, reviewer(store, "ben"))
    store.mark_written(item_id)
    assert store.unwritten() == [] and store.counts() == {"open": 0, "resolved": 1, "unwritten": 0}


def test_reviewers_sign_in_by_token_and_sessions_end(store, clock):
    from vetq.core.errors import InvalidInputError

    token = store.add_reviewer("ana")
    with pytest.raises(InvalidInputError, match="exists already"):
        store.add_reviewer("ana")
    with pytest.raises(InvalidInputError, match="name"):
        store.add_reviewer("<b>bad</b>")
    assert store.reviewer_by_token(token).name == "ana"
    assert store.reviewer_by_token(token + "x") is None
    cookie, csrf = store.open_session(store.reviewer_by_token(token))
    session = store.web_session(cookie)
    assert session.reviewer.name == "ana" and session.csrf_token == csrf
    clock.advance(13 * 3600)
    assert store.web_session(cookie) is None
    cookie, _ = store.open_session(store.reviewer_named("ana"))
    store.close_session(cookie)
    assert store.web_session(cookie) is None


def test_a_reviewers_text_becomes_the_value_its_kind_takes():
    from vetq.inbox.store import value_from_text

    assert value_from_text("amount", " 583.20 ") == 583.2
    assert value_from_text("quantity", "12") == 12
    assert value_from_text("amount", "1.234,56") == "1.234,56"  # no guess: the schema refuses it by name
    assert value_from_text("amount", "nan") == "nan"
    assert value_from_text("amount", "") is None
    assert value_from_text("boolean", "Yes") is True
    assert value_from_text("list", "[]") == []
    assert value_from_text("text", " Globex Ltd ") == " Globex Ltd "


def test_an_item_keeps_its_jobs_pdf_within_the_limit_and_its_callback(store, clock):
    import base64
    import dataclasses

    def with_pdf(job_id, size, **extra):
        pdf = b"%PDF-1.7\n" + b"x" * (size - 9)
        base = draft(job_id, clock=clock)
        request = {**base.request, "pdf": base64.b64encode(pdf).decode()}
        return dataclasses.replace(base, request=request, **extra), pdf

    store.max_pdf_bytes = 4096
    kept, pdf = with_pdf("job-pdf", 4096, callback_url="https://hooks.example.com/vetq?t=1", batch_id="batch-7")
    item = store.item(store.add_item(kept)[0])
    assert item.document_pdf == pdf
    assert (item.callback_url, item.batch_id) == ("https://hooks.example.com/vetq?t=1", "batch-7")
    too_big, _ = with_pdf("job-pdf-big", 4097)
    assert store.item(store.add_item(too_big)[0]).document_pdf is None  # the item stands, without the PDF
    # A list of items leaves the PDFs in the database; reading one from a listed item
    # is an error, not a load per item.
    from sqlalchemy import inspect
    from sqlalchemy.exc import InvalidRequestError
    from sqlalchemy.orm.exc import DetachedInstanceError

    (listed,) = [i for i in store.items() if i.id == item.id]
    assert "document_pdf" in inspect(listed).unloaded and listed.document_text == item.document_text
    with pytest.raises((InvalidRequestError, DetachedInstanceError)):
        _ = listed.document_pdf
