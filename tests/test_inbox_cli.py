"""`vetq inbox sync` and `vetq inbox serve` as a user runs them: subprocesses on the
test Redis and a SQLite inbox under VETQ_HOME. The page's rules are tests/
test_inbox_web.py's; here, that the verbs start, serve over real HTTP and stop."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from http.cookiejar import CookieJar
from urllib.parse import urlencode

import pytest

from tests.conftest import GLOBEX
from tests.inbox_data import needs_review_result

WAIT_S = 30.0


def vetq_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "vetq.api_client.cli", *args]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_until_serving(server: subprocess.Popen[str], url: str) -> None:
    """Until /healthz answers; fails at once when the server has exited."""
    deadline = time.monotonic() + WAIT_S
    while True:
        if server.poll() is not None:
            raise AssertionError(f"vetq inbox serve exited {server.returncode}: {server.stderr.read()}")
        try:
            with urllib.request.urlopen(f"{url}/healthz", timeout=2) as answer:
                if answer.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError):
            pass
        if time.monotonic() > deadline:
            raise AssertionError(f"vetq inbox serve did not answer on {url} within {WAIT_S} s")
        time.sleep(0.05)


@pytest.mark.processes
def test_vetq_inbox_sync_takes_a_handoff_and_serve_shows_it_to_a_signed_in_reviewer(redis_url, tmp_path):
    import re

    import redis

    from vetq.core.schemas.wire import to_wire
    from vetq.core.settings import load_settings
    from vetq.inbox.store import InboxStore
    from vetq.workers.inbox_handoff import entry_of, hand_over

    env = {**os.environ, "VETQ_REDIS_URL": redis_url, "VETQ_HOME": str(tmp_path)}
    reference, _ = to_wire("invoice")
    handoff = entry_of("vetq.extract", "job-cli", {"text": GLOBEX, "schema": reference}, needs_review_result(), {})
    assert hand_over(redis.Redis.from_url(redis_url), handoff)

    synced = subprocess.run(
        vetq_command("inbox", "sync"), env=env, capture_output=True, text=True, timeout=WAIT_S, check=False
    )
    assert synced.returncode == 0, synced.stderr
    report = json.loads(synced.stdout)
    assert (report["synced"], report["added"], report["open"]) == (True, 1, 1)

    store = InboxStore.open(load_settings(home=tmp_path).inbox_database_url())
    try:
        token = store.add_reviewer("ana")
    finally:
        store.close()

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(
        vetq_command("inbox", "serve", "--port", str(port)),
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_until_serving(server, url)
        browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(CookieJar()))
        with browser.open(f"{url}/", timeout=10) as anonymous:
            assert anonymous.url == f"{url}/login"  # redirected: nothing without signing in
            csrf = re.search(r'name="csrf" value="([^"]+)"', anonymous.read().decode()).group(1)
        form = urlencode({"token": token, "csrf": csrf}).encode()
        with browser.open(urllib.request.Request(f"{url}/login", data=form), timeout=10) as listing:
            page = listing.read().decode()
        assert listing.url == f"{url}/"  # signed in: the list
        assert "job-cli" in page and '<code class="flag">total</code>' in page
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            returncode = server.wait(timeout=WAIT_S)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
            raise
        _, stderr = server.communicate()
    assert returncode == 0, stderr  # stopped cleanly: SIGTERM ends the verb, not the process
    assert f"serving the review page on {url}/" in stderr
