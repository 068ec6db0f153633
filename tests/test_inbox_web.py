"""The review page's rules, through Starlette's in-process client: sign-in by token,
sessions, CSRF on every form, a hostile document shown as text, typed inputs,
conflicts and schema errors on the page with nothing written. The whole loop in a
real browser is tests/test_inbox_browser.py."""

from __future__ import annotations

import re

import pytest

from tests.inbox_data import HOSTILE, Clock, draft


@pytest.fixture
def page(redis_url, tmp_path):
    import redis
    from starlette.testclient import TestClient

    from vetq.core.settings import load_settings
    from vetq.inbox.service import Inbox
    from vetq.inbox.store import InboxStore
    from vetq.inbox.web import ReviewPage

    clock = Clock()
    settings = load_settings(home=tmp_path)
    store = InboxStore.open(settings.inbox_database_url(), lease_s=600, clock=clock)
    inbox = Inbox(store, redis.Redis.from_url(redis_url), settings, redis_url=redis_url)
    review_page = ReviewPage(inbox, sync_every_s=0)
    clients = []

    def browser():
        client = TestClient(review_page.app(), base_url="http://127.0.0.1")
        clients.append(client)
        return client

    yield store, clock, browser
    for client in clients:
        client.close()
    store.close()


def csrf_of(html: str) -> str:
    return re.search(r'name="csrf" value="([^"]+)"', html).group(1)


def sign_in(browser, store, name):
    token = store.add_reviewer(name)
    client = browser()
    login = client.get("/login")
    response = client.post("/login", data={"token": token, "csrf": csrf_of(login.text)}, follow_redirects=False)
    assert response.status_code == 303 and "vetq_session" in response.cookies
    return client


def test_every_page_wants_a_signed_in_reviewer_and_a_token_opens_one(page):
    store, _, browser = page
    anonymous = browser()
    assert anonymous.get("/", follow_redirects=False).headers["location"] == "/login"
    login = anonymous.get("/login")
    refused = anonymous.post("/login", data={"token": "guess", "csrf": csrf_of(login.text)})
    assert refused.status_code == 401 and "opens no reviewer" in refused.text
    forged = browser().post("/login", data={"token": store.add_reviewer("ana"), "csrf": "made-up"})
    assert forged.status_code == 403
    client = sign_in(browser, store, "ben")
    assert client.get("/").status_code == 200
    cookie = client.cookies.get("vetq_session")
    assert "HttpOnly" in client.get("/login").headers.get("set-cookie", "HttpOnly")
    logout = client.post("/logout", data={"csrf": csrf_of(client.get("/").text)}, follow_redirects=False)
    assert logout.status_code == 303 and store.web_session(cookie) is None


def test_a_hostile_document_is_shown_as_text_and_no_script_may_run(page):
    store, clock, browser = page
    hostile = f"Invoice {HOSTILE} from Globex Ltd\nSubtotal 540.00 Tax 43.20 Total 583.20\n"
    item_id, _ = store.add_item(draft("job-hostile", text=hostile, clock=clock))
    client = sign_in(browser, store, "ana")
    html = client.get(f"/items/{item_id}").text
    assert HOSTILE not in html
    assert "&lt;script&gt;window.pwned = 1&lt;/script&gt;" in html
    policy = client.get(f"/items/{item_id}").headers["content-security-policy"]
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy


def test_the_item_view_marks_each_value_where_it_stands_and_types_each_input(page):
    store, clock, browser = page
    item_id, _ = store.add_item(draft("job-view", clock=clock))
    client = sign_in(browser, store, "ana")
    listing = client.get("/")
    assert "job-view" in listing.text and '<code class="flag">total</code>' in listing.text
    claimed = client.post(f"/items/{item_id}/claim", data={"csrf": csrf_of(listing.text)}, follow_redirects=False)
    assert claimed.headers["location"] == f"/items/{item_id}"
    html = client.get(f"/items/{item_id}").text
    assert '<mark id="mark-total-0" class="span flagged" data-field="total">583.20</mark>' in html
    assert '<mark id="mark-tax-0" class="span" data-field="tax">43.20</mark>' in html
    assert re.search(r'name="v:total" type="number" step="any" value="538.2"', html)
    assert re.search(r'name="v:invoice_date" type="date"\s+value="2026-02-28"', html)
    assert "subtotal + tax = 583.20" in html


def test_forms_without_the_csrf_token_are_refused_and_change_nothing(page):
    store, clock, browser = page
    item_id, _ = store.add_item(draft("job-csrf", clock=clock))
    client = sign_in(browser, store, "ana")
    assert client.post(f"/items/{item_id}/claim", data={}).status_code == 403
    assert client.post(f"/items/{item_id}/claim", data={"csrf": "x" * 40}).status_code == 403
    assert store.item(item_id).claimed_by is None


def test_a_correction_the_schema_refuses_is_shown_on_the_page_and_nothing_is_written(page):
    store, clock, browser = page
    item_id, _ = store.add_item(draft("job-bad", clock=clock))
    client = sign_in(browser, store, "ana")
    csrf = csrf_of(client.get("/").text)
    client.post(f"/items/{item_id}/claim", data={"csrf": csrf})
    response = client.post(
        f"/items/{item_id}/resolve", data={"csrf": csrf, "v:total": "583,20", "v:invoice_date": "2026-02-28"}
    )
    assert response.status_code == 422
    assert "does not fit schema" in response.text and 'value="583,20"' in response.text  # what was typed stays
    assert store.item(item_id).state == "open"


def test_another_reviewers_item_cannot_be_taken_or_resolved(page):
    store, clock, browser = page
    item_id, _ = store.add_item(draft("job-taken", clock=clock))
    ana, ben = sign_in(browser, store, "ana"), sign_in(browser, store, "ben")
    ana.post(f"/items/{item_id}/claim", data={"csrf": csrf_of(ana.get("/").text)})
    ben_csrf = csrf_of(ben.get("/").text)
    taken = ben.post(f"/items/{item_id}/claim", data={"csrf": ben_csrf})
    assert taken.status_code == 409 and "claimed by ana" in taken.text
    assert "ana is reviewing this item" in ben.get(f"/items/{item_id}").text
    refused = ben.post(f"/items/{item_id}/resolve", data={"csrf": ben_csrf, "v:total": "583.2"})
    assert refused.status_code == 409 and "nothing was written" in refused.text
    assert store.item(item_id).state == "open"


def test_a_slow_database_call_does_not_hold_up_other_requests(page, monkeypatch):
    # The handlers' database calls run in worker threads: while one reviewer's list waits
    # on a slow query, the server still answers everyone else.
    import threading

    store, _clock, browser = page
    client = sign_in(browser, store, "ana")
    entered, release, answered = threading.Event(), threading.Event(), threading.Event()
    items = store.items

    def slow_items(**filters):
        entered.set()
        release.wait(10)
        return items(**filters)

    monkeypatch.setattr(store, "items", slow_items)
    statuses = {}

    def get(path):
        statuses[path] = client.get(path).status_code
        if path == "/healthz":
            answered.set()

    with client:  # one event loop serves every request, as a real server's does
        listing = threading.Thread(target=get, args=("/",))
        listing.start()
        try:
            assert entered.wait(10)
            threading.Thread(target=get, args=("/healthz",), daemon=True).start()
            served_meanwhile = answered.wait(5)
        finally:
            release.set()
            listing.join(10)
    assert served_meanwhile and statuses == {"/healthz": 200, "/": 200}
