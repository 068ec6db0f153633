"""Webhooks (issue 18): a job's final result POSTed to its callback_url, signed, retried
with backoff and dead-lettered after the last attempt; destinations checked against
VETQ_WEBHOOK_ALLOW at submit and again, address by address, at delivery.

The end-to-end tests share one real worker (in-process thread worker on the embedded
Redis) and one loopback HTTP receiver, the only destination allow-listed."""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import GLOBEX, GLOBEX_DATA, Service, starts_processes
from vetq.core.errors import ConfigError, ErrorCode, InvalidInputError

ROOT = Path(__file__).resolve().parents[1]
SECRET = "whsec-test-" + "0123456789abcdef" * 2
# The module's worker rotates its secret: each POST carries a signature with either.
PREVIOUS_SECRET = "whsec-old-" + "fedcba9876543210" * 2
ATTEMPTS = 3
WAIT_S = 30.0


def readme_verifier():
    """The receiver's check exactly as the README prints it."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = next(b for b in re.findall(r"```python\n(.*?)```", text, re.S) if "def verify_vetq_signature" in b)
    namespace: dict[str, Any] = {}
    exec(compile(block, "README.md", "exec"), namespace)  # the documentation's own code
    return namespace["verify_vetq_signature"]


class Receiver:
    """A loopback HTTP server that records every POST. A path answers the statuses
    scripted for it, in turn, then `always.get(path, 200)`."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.scripted: dict[str, list[int]] = {}
        self.always: dict[str, int] = {}
        self.changed = threading.Condition()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with receiver.changed:
                    script = receiver.scripted.get(self.path) or []
                    status = script.pop(0) if script else receiver.always.get(self.path, 200)
                    receiver.requests.append(
                        {"path": self.path, "headers": dict(self.headers.items()), "body": body, "status": status}
                    )
                    receiver.changed.notify_all()
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, name="webhook-receiver", daemon=True)
        self.thread.start()

    @property
    def port(self) -> int:
        return self.server.server_address[1]

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"

    def received(self, path: str) -> list[dict[str, Any]]:
        with self.changed:
            return [r for r in self.requests if r["path"] == path]

    def wait_for(self, path: str, count: int, timeout: float = WAIT_S) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout
        with self.changed:
            while len([r for r in self.requests if r["path"] == path]) < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"{path}: {len(self.received(path))} of {count} POSTs in {timeout}s")
                self.changed.wait(left)
            return [r for r in self.requests if r["path"] == path]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)


def webhook_settings(home: Path, **extra: Any):
    from vetq.core.settings import load_settings

    options = {
        "webhook_secret": SECRET,
        "webhook_previous_secret": PREVIOUS_SECRET,
        "webhook_allow": "127.0.0.1",  # loopback, and nothing else
        "webhook_attempts": ATTEMPTS,
        "webhook_backoff_s": 0.05,
        "webhook_timeout_s": 5,
    }
    return load_settings(home=home, **{**options, **extra})


@pytest.fixture(scope="module")
def receiver():
    server = Receiver()
    yield server
    server.close()


@pytest.fixture(scope="module")
@starts_processes
def hooked(redis_server, receiver, tmp_path_factory):
    """One worker and client for the module, with webhooks set up."""
    import redis

    redis.Redis.from_url(redis_server.url).flushall()
    svc = Service(webhook_settings(tmp_path_factory.mktemp("webhooks")), redis_server.url)
    yield svc
    svc.close()


def validation(**options: Any):
    return {"kind": "validate", "text": GLOBEX, "data": GLOBEX_DATA, "heuristics_only": True, **options}


def dead_letters_of(svc: Service, job_id: str, timeout: float = WAIT_S) -> list[dict[str, Any]]:
    """The dead letters naming `job_id`, once there is one (bounded wait)."""
    from vetq.workers.dead_letter import read

    redis_client = svc.client.redis()
    deadline = time.monotonic() + timeout
    while True:
        found = [e for e in read(redis_client, 1000) if e.get("job_id") == job_id]
        if found or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


# ------------------------------------------------------------------ end to end


def test_a_job_and_a_batch_post_their_results_signed(hooked, receiver):
    from vetq.core.webhooks import sign, verify

    job = hooked.client.submit_validation(GLOBEX, GLOBEX_DATA, heuristics_only=True, callback_url=receiver.url("/ok"))
    batch = hooked.client.submit_batch([validation(), validation()], callback_url=receiver.url("/batch"))
    result = job.result(timeout=WAIT_S)

    (post,) = receiver.wait_for("/ok", 1)
    body = json.loads(post["body"])
    assert body == {"event": "job.finished", "job_id": job.id, "result": result}
    assert result["status"] == "ok"
    headers = post["headers"]
    assert headers["X-Vetq-Job-Id"] == job.id and headers["X-Vetq-Attempt"] == "1"
    assert headers["Content-Type"] == "application/json"
    verify_vetq_signature = readme_verifier()
    assert verify_vetq_signature(SECRET.encode(), headers, post["body"])
    assert verify(SECRET, headers, post["body"])
    # Rotating: the new secret's signature first, then the old one's; a receiver holding
    # either verifies, through vetq's check and through the README's.
    assert headers["X-Vetq-Signature"].count("v1=") == 2
    assert headers["X-Vetq-Signature"].startswith(sign(SECRET, int(headers["X-Vetq-Timestamp"]), post["body"]))
    assert verify_vetq_signature(PREVIOUS_SECRET.encode(), headers, post["body"])
    assert verify(PREVIOUS_SECRET, headers, post["body"])
    # The signature holds the body, the timestamp and the key, each.
    assert not verify_vetq_signature(SECRET.encode(), headers, post["body"].replace(b'"ok"', b'"needs_review"'))
    assert not verify_vetq_signature(b"another-secret-of-16", headers, post["body"])
    stale = {**headers, "X-Vetq-Timestamp": str(int(headers["X-Vetq-Timestamp"]) - 301)}
    assert not verify_vetq_signature(SECRET.encode(), stale, post["body"])

    posts = receiver.wait_for("/batch", 2)
    bodies = [json.loads(p["body"]) for p in posts]
    assert sorted(b["job_id"] for b in bodies) == sorted(j.id for j in batch.jobs)
    assert {b["batch_id"] for b in bodies} == {batch.id}
    assert all(verify(SECRET, p["headers"], p["body"]) for p in posts)


def test_a_receiver_failing_twice_gets_the_result_on_the_third_attempt(hooked, receiver):
    receiver.scripted["/flaky"] = [500, 503]
    job = hooked.client.submit_validation(
        GLOBEX, GLOBEX_DATA, heuristics_only=True, callback_url=receiver.url("/flaky")
    )
    posts = receiver.wait_for("/flaky", 3)
    assert [p["status"] for p in posts] == [500, 503, 200]
    assert [p["headers"]["X-Vetq-Attempt"] for p in posts] == ["1", "2", "3"]
    assert len({p["headers"]["X-Vetq-Delivery"] for p in posts}) == 1  # one delivery, three attempts
    assert all(json.loads(p["body"])["job_id"] == job.id for p in posts)
    from vetq.core.webhooks import verify

    assert all(verify(SECRET, p["headers"], p["body"]) for p in posts)  # each attempt signed afresh
    assert json.loads(posts[-1]["body"])["result"] == job.result(timeout=WAIT_S)


def test_a_receiver_that_always_fails_ends_in_the_dead_letter_list(hooked, receiver, capsys):
    from vetq.core.logging import configure_logging

    configure_logging("INFO", force=True)
    path = "/down?token=receiver-own-token"
    receiver.always[path] = 500
    job = hooked.client.submit_validation(GLOBEX, GLOBEX_DATA, heuristics_only=True, callback_url=receiver.url(path))
    result = job.result(timeout=WAIT_S)
    (entry,) = dead_letters_of(hooked, job.id)
    # The dead letter is written after the last attempt, and nothing is tried after it.
    assert [p["status"] for p in receiver.received(path)] == [500] * ATTEMPTS
    assert entry["reason"] == "webhook_failed" and entry["task"] == "vetq.webhook"
    assert f"failed {ATTEMPTS} times" in entry["error"] and "HTTP 500" in entry["error"]
    assert f"http://127.0.0.1:{receiver.port}" in entry["error"]
    assert "token" not in entry["error"]  # the destination by its origin only

    logged = capsys.readouterr().err
    assert '"webhook_retry"' in logged and '"webhook_failed"' in logged  # the lines were captured
    from vetq.workers.dead_letter import read

    everything = logged + json.dumps(result) + json.dumps(list(read(hooked.client.redis(), 1000)))
    assert SECRET not in everything
    assert "receiver-own-token" not in logged

    # The receiver is fixed: the operator sends the undelivered result again, as it was.
    from vetq.api_client import Admin
    from vetq.core.errors import NotFoundError

    receiver.always[path] = 200
    admin = Admin.of(hooked.client)
    report = admin.redeliver(job.id)
    assert report == {
        "job_id": job.id,
        "redelivered": [{"delivery_id": entry["delivery_id"], "destination": f"http://127.0.0.1:{receiver.port}"}],
    }
    posts = receiver.wait_for(path, ATTEMPTS + 1)
    again = posts[-1]
    assert again["status"] == 200 and again["body"] == posts[0]["body"]  # the same body, signed afresh
    assert again["headers"]["X-Vetq-Delivery"] == posts[0]["headers"]["X-Vetq-Delivery"] == entry["delivery_id"]
    assert again["headers"]["X-Vetq-Attempt"] == "1" and verify_vetq_signature_of(again)
    with pytest.raises(NotFoundError):  # taken once sent: never posted twice by a second redeliver
        admin.redeliver(job.id)


def verify_vetq_signature_of(post: dict[str, Any]) -> bool:
    from vetq.core.webhooks import verify

    return verify(SECRET, post["headers"], post["body"])


def test_a_destination_the_worker_does_not_allow_is_a_dead_letter_at_once(hooked, receiver, tmp_path):
    """A producer configured more loosely than the worker: the worker's own list decides."""
    from vetq.api_client.client import Client

    loose = webhook_settings(tmp_path / "home", webhook_allow="127.0.0.1,localhost")
    url = receiver.url("/refused", host="localhost")
    with Client(hooked.client.redis_url, settings=loose) as producer:
        job = producer.submit_validation(GLOBEX, GLOBEX_DATA, heuristics_only=True, callback_url=url)
        assert job.result(timeout=WAIT_S)["status"] == "ok"
    (entry,) = dead_letters_of(hooked, job.id)
    assert entry["reason"] == "webhook_refused"
    assert "localhost" in entry["error"] and "VETQ_WEBHOOK_ALLOW" in entry["error"]
    assert receiver.received("/refused") == []


# ------------------------------------------------------------------ at submission


@pytest.mark.parametrize(
    "url",
    [
        "http://10.1.2.3/hook",  # private
        "http://192.168.0.10:8080/hook",
        "http://169.254.169.254/latest/meta-data",  # a cloud's metadata service: link-local
        "http://127.0.0.2:9/hook",  # loopback, but not the address listed
        "http://[::1]:9/hook",
        "http://[::ffff:10.0.0.1]/hook",  # an IPv4 address in IPv6 clothing
        "http://localhost:9/hook",
        "https://hooks.example.com/vetq",  # public, but not listed
        "ftp://127.0.0.1/hook",  # not http(s)
    ],
)
def test_a_callback_url_not_allowed_is_refused_at_submission(url, tmp_path):
    from vetq.api_client.client import Client

    # Nothing listens there: a refusal must come before anything is sent.
    with Client("redis://127.0.0.1:9/0", settings=webhook_settings(tmp_path)) as client:
        with pytest.raises(InvalidInputError, match="callback_url") as refused:
            client.submit_validation(GLOBEX, GLOBEX_DATA, heuristics_only=True, callback_url=url)
        assert refused.value.code == ErrorCode.INVALID_INPUT
        with pytest.raises(InvalidInputError, match="callback_url"):
            client.submit_batch([validation()], callback_url=url)


def test_a_callback_url_without_a_secret_is_refused_at_submission(tmp_path):
    from vetq.api_client.client import Client
    from vetq.core.settings import load_settings

    settings = load_settings(home=tmp_path, webhook_allow="127.0.0.1")
    with Client("redis://127.0.0.1:9/0", settings=settings) as client:
        with pytest.raises(ConfigError, match="VETQ_WEBHOOK_SECRET"):
            client.submit_validation(GLOBEX, GLOBEX_DATA, callback_url="http://127.0.0.1:9/hook")
        with pytest.raises(ConfigError, match="VETQ_WEBHOOK_SECRET"):
            client.submit_batch([validation()], callback_url="http://127.0.0.1:9/hook")


# ------------------------------------------------------------------ the rules


def test_the_allow_list_keeps_private_addresses_to_entries_that_name_them():
    from ipaddress import ip_address

    from vetq.core.webhooks import AllowList, check_destination

    everywhere = AllowList.parse("*")
    assert check_destination("https://hooks.example.com/x", everywhere) is None
    assert check_destination("https://93.184.216.34/x", everywhere) is None
    for private in ("10.0.0.1", "127.0.0.1", "169.254.169.254", "100.64.0.1", "0.0.0.0", "[::1]", "[fe80::1]"):
        assert check_destination(f"http://{private}/x", everywhere) is not None, private
    assert check_destination("http://localhost/x", everywhere) is not None
    assert not everywhere.allows_address(ip_address("10.0.0.1"), host_named=False)

    listed = AllowList.parse(" hooks.internal, *.corp.example, 10.20.0.0/16, 127.0.0.1 ")
    assert check_destination("http://hooks.internal/x", listed) is None
    assert check_destination("http://a.b.corp.example/x", listed) is None
    assert check_destination("http://corp.example/x", listed) is not None  # *. is the subdomains
    assert check_destination("http://10.20.3.4/x", listed) is None
    assert check_destination("http://10.21.0.1/x", listed) is not None
    assert check_destination("https://hooks.example.com/x", listed) is not None  # no *: public hosts too
    # A host named by the operator may resolve to a private address; under * it may not.
    assert listed.allows_address(ip_address("10.9.9.9"), host_named=True)
    assert not listed.allows_address(ip_address("10.9.9.9"), host_named=False)
    assert AllowList.parse("").empty


@pytest.mark.parametrize("entry", ["http://x.example", "10.0.0.0/33", "*.", "a b", "*x.example"])
def test_a_malformed_allow_list_stops_at_start_naming_it(entry, tmp_path):
    from vetq.core.settings import load_settings

    with pytest.raises(ConfigError, match="VETQ_WEBHOOK_ALLOW"):
        load_settings(home=tmp_path, webhook_allow=f"127.0.0.1,{entry}")


def test_one_secret_signs_once_and_a_previous_secret_needs_a_current_one(tmp_path):
    from vetq.core.settings import as_environment, load_settings
    from vetq.core.webhooks import sign, signature_header, verify

    body, now = b'{"event": "job.finished"}', 1_700_000_000
    assert signature_header([SECRET], now, body) == sign(SECRET, now, body)  # as before any rotation
    both = {"X-Vetq-Signature": signature_header([SECRET, PREVIOUS_SECRET], now, body), "X-Vetq-Timestamp": str(now)}
    assert verify(SECRET, both, body, now=now) and verify(PREVIOUS_SECRET, both, body, now=now)
    assert not verify("a-third-secret-of-16", both, body, now=now)
    with pytest.raises(ConfigError, match="VETQ_WEBHOOK_PREVIOUS_SECRET") as refused:
        load_settings(home=tmp_path, webhook_previous_secret=PREVIOUS_SECRET)
    assert PREVIOUS_SECRET not in refused.value.message
    with pytest.raises(ConfigError, match="VETQ_WEBHOOK_PREVIOUS_SECRET"):
        load_settings(home=tmp_path, webhook_secret=SECRET, webhook_previous_secret="short-secret")
    settings = load_settings(home=tmp_path, webhook_secret=SECRET, webhook_previous_secret=PREVIOUS_SECRET)
    assert settings.webhook_secrets() == [SECRET, PREVIOUS_SECRET] and PREVIOUS_SECRET not in repr(settings)
    assert as_environment(settings)["VETQ_WEBHOOK_PREVIOUS_SECRET"] == PREVIOUS_SECRET


def test_a_short_secret_stops_at_start_without_being_printed(tmp_path):
    from vetq.core.settings import as_environment, load_settings

    with pytest.raises(ConfigError, match="VETQ_WEBHOOK_SECRET") as refused:
        load_settings(home=tmp_path, webhook_secret="hunter2hunter2")
    assert "hunter2" not in refused.value.message
    settings = load_settings(home=tmp_path, webhook_secret=SECRET)
    assert SECRET not in repr(settings) and SECRET not in str(settings.model_dump())
    assert as_environment(settings)["VETQ_WEBHOOK_SECRET"] == SECRET  # a worker the client starts signs alike


def test_delivery_connects_only_to_an_allowed_address_of_the_name(receiver, monkeypatch):
    """The worker resolves the host itself and POSTs to an address it checked, with the
    name in the Host header: a name that resolves to a private address under `*`
    (DNS rebinding) reaches nothing, and only the allowed one of several answers is used."""
    from vetq.core.webhooks import AllowList
    from vetq.workers import webhooks

    real_getaddrinfo = socket.getaddrinfo
    answers = {
        "rebound.example": ["127.0.0.1"],
        "mixed.example": ["10.0.0.9", "127.0.0.1"],
    }

    def resolve(host, port, *args, **kwargs):  # the DNS answer is the network's edge
        if host in answers:
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port)) for a in answers[host]]
        return real_getaddrinfo(host, port, *args, **kwargs)

    monkeypatch.setattr(webhooks.socket, "getaddrinfo", resolve)
    headers = {"Content-Type": "application/json"}
    with pytest.raises(webhooks.WebhookRefusedError, match=r"127\.0\.0\.1"):
        webhooks.post(f"http://rebound.example:{receiver.port}/rebound", b"{}", headers, AllowList.parse("*"), 5)
    assert receiver.received("/rebound") == []

    allow = AllowList.parse("*,127.0.0.1")
    assert webhooks.post(f"http://mixed.example:{receiver.port}/mixed", b"{}", headers, allow, 5) == 200
    (post,) = receiver.received("/mixed")
    assert post["headers"]["Host"] == f"mixed.example:{receiver.port}"

    # A name the operator listed reaches loopback through real resolution (/etc/hosts).
    assert (
        webhooks.post(receiver.url("/named", host="localhost"), b"{}", headers, AllowList.parse("localhost"), 5) == 200
    )
    assert len(receiver.received("/named")) == 1


def test_the_webhook_queue_name_is_pinned():
    from vetq.core import redis_keys
    from vetq.workers.runner import served_queues

    assert redis_keys.WEBHOOK_QUEUE == "webhook"
    assert served_queues(["review"]) == ["review", "webhook"]
    assert served_queues(["extract", "webhook"]) == ["extract", "webhook"]
