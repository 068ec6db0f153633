"""The whole loop in a real browser: Debian's headless Chromium driven by Playwright
(pointed at the system browser; Playwright's own download is never used) against
`vetq inbox serve`'s app on 127.0.0.1, a real worker (VETQ_INBOX=on) and Redis. Open
the inbox, open the item, see the flagged value highlighted where it stands, correct
it, submit, and the producer's job result becomes `reviewed`.

VETQ_TEST_SCREENSHOT=PATH also saves the item view there (the README's picture)."""

from __future__ import annotations

import os
import shutil
import socket
import threading

import pytest

from tests.conftest import GLOBEX, GLOBEX_DATA, Service, starts_processes

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="Debian's chromium is missing (apt-get install chromium; make test does)"
)


@pytest.fixture(scope="module")
@starts_processes
def served(redis_server, tmp_path_factory):
    import asyncio

    import redis
    import uvicorn

    from vetq.core.settings import load_settings
    from vetq.inbox.service import Inbox
    from vetq.inbox.store import InboxStore
    from vetq.inbox.web import ReviewPage

    redis.Redis.from_url(redis_server.url).flushall()
    settings = load_settings(home=tmp_path_factory.mktemp("inbox-browser"), inbox=True)
    service = Service(settings, redis_server.url)
    store = InboxStore.open(settings.inbox_database_url(), lease_s=600)
    inbox = Inbox(store, redis.Redis.from_url(redis_server.url), settings, redis_url=redis_server.url)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(ReviewPage(inbox, sync_every_s=0.2).app(), log_level="warning"))
    thread = threading.Thread(target=lambda: asyncio.run(server.serve(sockets=[listener])), daemon=True)
    thread.start()
    for _ in range(200):
        if server.started:
            break
        threading.Event().wait(0.05)
    assert server.started
    yield service, store, f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=15)
    listener.close()
    service.close()
    store.close()


@pytest.fixture(scope="module")
def browser():
    playwright_api = pytest.importorskip("playwright.sync_api")
    with playwright_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        yield launched
        launched.close()


def signed_in(browser, url: str, token: str):
    """A page of the browser signed in with the reviewer's token, on the list."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(10_000)
    page.goto(f"{url}/login")
    page.fill("#token", token)
    page.click("button[type=submit]")
    page.wait_for_url(f"{url}/")
    return page


def test_a_reviewer_corrects_a_flagged_value_in_the_browser_and_the_job_becomes_reviewed(served, browser):
    service, store, url = served
    # The machine took the subtotal for the total: flagged, and found in the document.
    job = service.client.submit_validation(GLOBEX, {**GLOBEX_DATA, "total": 540.00}, heuristics_only=True)
    assert job.result(timeout=60)["status"] == "needs_review"
    token = store.add_reviewer("ana")

    page = signed_in(browser, url, token)
    for _ in range(100):  # the server takes the worker's handoff on its sync thread
        if page.locator(f"text={job.id}").count():
            break
        page.wait_for_timeout(100)
        page.goto(f"{url}/")
    assert page.locator(f"text={job.id}").count() == 1

    page.keyboard.press("Enter")  # the list's shortcut: review the selected (only) item
    page.wait_for_url(f"{url}/items/*")
    flagged = page.locator('mark.span.flagged[data-field="total"]')
    assert flagged.inner_text() == "540.00"
    assert flagged.is_visible()
    assert page.locator(".field.flagged .reason").inner_text().startswith("540.00 appears in the source")

    page.keyboard.press("j")  # to the flagged value: its place in the document lights up
    total = page.locator('input[name="v:total"]')
    assert total.evaluate("element => element === document.activeElement")
    assert "active" in (flagged.get_attribute("class") or "")
    if os.environ.get("VETQ_TEST_SCREENSHOT"):
        page.screenshot(path=os.environ["VETQ_TEST_SCREENSHOT"], full_page=True)
    total.fill("583.20")
    page.keyboard.press("Control+Enter")
    page.wait_for_url(f"{url}/?notice=*")
    assert "resolved" in page.locator(".notice").inner_text()

    reviewed = job.result(timeout=30, until="reviewed")
    assert reviewed["status"] == "reviewed"
    assert reviewed["data"]["total"] == 583.2
    assert reviewed["review"]["reviewer"] == "ana"
    assert reviewed["machine_result"]["data"]["total"] == 540.0
    page.close()


def test_a_pdf_item_shows_each_page_with_the_flagged_value_boxed_where_it_stands(served, browser):
    import struct

    from tests import pdfs

    service, store, url = served
    # Two pages; the totals stand on page 2, where the machine took the subtotal (540.00) for the total.
    job = service.client.submit_validation(
        pdf=pdfs.two_column_invoice(pages=2), data={**pdfs.DATA, "total": 540.00}, heuristics_only=True
    )
    machine = job.result(timeout=60)
    assert machine["status"] == "needs_review"
    (where,) = machine["field_provenance"]["total"]
    assert where["page"] == 2 and where["text"] == "540.00"
    token = store.add_reviewer("ben")
    item_id = None
    for _ in range(100):  # the server takes the worker's handoff on its sync thread
        item_id = store.item_id_of(job.id)
        if item_id is not None:
            break
        threading.Event().wait(0.1)
    assert item_id is not None

    page = signed_in(browser, url, token)
    page.goto(f"{url}/items/{item_id}")
    assert page.locator("figure.page svg.page-image image").count() == 2  # an image per page
    assert page.locator("#page-1 rect.box.flagged").count() == 0
    flagged = page.locator('#page-2 rect.box.flagged[data-field="total"]')
    assert flagged.count() == 1  # the flagged value, boxed on its page
    # Where 540.00 stands on page 2 (tests/pdfs.py writes it at x 440, baseline 100 pt).
    x, y = float(flagged.get_attribute("x")), float(flagged.get_attribute("y"))
    assert where["boxes"][0][0] - 3 <= x <= where["boxes"][0][0] and 85 <= y <= 100
    assert flagged.locator("title").text_content().startswith("total: ")
    assert flagged.is_visible() and flagged.bounding_box()["width"] > 10  # drawn, at the page's scale

    image = page.request.get(f"{url}/items/{item_id}/pages/2.png")
    assert image.status == 200 and image.headers["content-type"] == "image/png"
    png = image.body()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", png[16:24])
    assert abs(width - 595.28 * 110 / 72) < 1 and abs(height - 841.89 * 110 / 72) < 1  # A4 at 110 dpi
    assert page.request.get(f"{url}/items/{item_id}/pages/3.png").status == 404
    anonymous = browser.new_context()
    refused = anonymous.request.get(f"{url}/items/{item_id}/pages/2.png", max_redirects=0)
    assert refused.status == 303 and refused.headers["location"] == "/login"  # reviewers only
    anonymous.close()
    if os.environ.get("VETQ_TEST_SCREENSHOT_PDF"):
        page.screenshot(path=os.environ["VETQ_TEST_SCREENSHOT_PDF"], full_page=True)
    page.close()
