"""A fake model provider: a real HTTP server that speaks just enough of the OpenAI
Chat Completions and Anthropic Messages APIs for the real SDKs to talk to it.

It exists so that tests and load runs exercise vetq's actual clients (the real
`openai` / `anthropic` SDKs, their HTTP stack, their error classes) without a
network or an API key:

    with FakeProvider(rpm=60) as fake:
        client = OpenAI(api_key="x", base_url=fake.base_url_openai, max_retries=0)
        fake.push_fault({"kind": "429", "retry_after": 3})
        ...
        assert [e["outcome"] for e in fake.log] == ["429"]

What it does
------------
* ``POST /v1/chat/completions`` (OpenAI shape) and ``POST /v1/messages``
  (Anthropic shape). Every answer, errors included, carries the vendor's
  rate-limit headers: ``x-ratelimit-{limit,remaining,reset}-{requests,tokens}``
  (resets as Go-style durations such as ``"1.5s"`` or ``"6m0s"``) for OpenAI,
  ``anthropic-ratelimit-{requests,tokens}-{limit,remaining,reset}`` (resets as
  RFC 3339 times) for Anthropic. Without a configured limit the headers report a
  nominal one (10 000 requests, 10 000 000 tokens).
* Rate limits: ``rpm`` requests and ``tpm`` tokens per sliding 60-second window
  (one window shared by every model). A request's token cost is estimated as
  ``ceil(len(raw request body in bytes) / 4) + max_tokens`` (``max_tokens`` or
  ``max_completion_tokens`` from the body, 0 when absent), which over-counts like
  a real provider's pre-admission estimate does. Past a limit the answer is a 429
  with ``retry-after`` (whole seconds, rounded up, until enough of the window
  expires) and the vendor's error body. A 429 never counts toward the window;
  every other answered request does.
* Faults, consumed one per request from a queue (a per-model queue first, then
  the shared one): ``{"kind": "429", "retry_after": 3}``,
  ``{"kind": "5xx", "status": 503}`` (any status; a 4xx is logged as "4xx";
  an optional ``"body"``, dict or string, replaces the vendor error body),
  ``{"kind": "timeout", "seconds": 5}``
  (sleeps, then answers normally; a client that hangs up meanwhile is logged
  ``client_closed`` and gets no answer),
  ``{"kind": "malformed"}`` (a 200 whose body is not JSON; ``"variant":
  "wrong_shape"`` gives JSON of the wrong shape instead), ``{"kind":
  "truncated"}`` (the text cut in half, finish_reason ``"length"`` /
  stop_reason ``"max_tokens"``). ``latency_ms`` delays every answer.
* Cooldown: after a 429 (scripted or from the limiter) with retry-after R for a
  model, any request for that model within R seconds is logged with
  ``early=True`` -- proof, or disproof, that nobody retried too soon.
* Answer text: a script (texts consumed in order, per model or shared), else a
  ``responder(path, body_json) -> str`` set from Python, else ``{"ok": true}``.
* A request log (``.log`` / ``GET /_log``): arrival ``time`` (time.time()),
  ``path``, ``model``, ``outcome`` ("ok", "429", "5xx", "4xx", "timeout",
  "malformed", "truncated", "error"), ``status``, ``early``, ``fault``, ``tokens``,
  and ``client_closed`` (True) when the client hung up before a delayed answer.
* In flight: ``.in_flight`` is the model calls received and not yet answered (their
  latency or timeout still running), ``.max_in_flight`` the most at once since start
  or ``reset()``; ``GET /_log`` leaves them out, ``/_control`` answers them.
* ``POST /_control`` with a JSON object: ``{"reset": true}``, ``"rpm"``,
  ``"tpm"``, ``"latency_ms"`` (null lifts a limit), ``"faults": [{..., "model":
  optional}]``, ``"script": {"texts": [...], "model": optional}``.

Batch APIs
----------
Both vendors' Batch APIs, close enough that ``anthropic.Anthropic().messages.batches``
and ``openai.OpenAI().files`` / ``.batches`` work against it unmodified:

* Anthropic Message Batches: ``POST /v1/messages/batches`` (``requests=[{custom_id,
  params}]``), ``GET /v1/messages/batches`` (list, newest first; ``limit``,
  ``after_id``, ``before_id``), ``GET /v1/messages/batches/{id}``, ``GET
  .../{id}/results`` (JSONL, one ``{custom_id, result}`` line each: ``succeeded`` with
  the full message, ``errored`` with ``{type: "error", error: {type, message}}``,
  ``canceled``, ``expired``), ``POST .../{id}/cancel``, ``DELETE .../{id}`` (ended
  batches only). ``processing_status`` goes in_progress -> (canceling ->) ended; as
  documented, ``request_counts`` shows every request as ``processing`` until the batch
  ends; ``results_url`` is absolute (this server's address) and set once it ends.
  A bad ``custom_id`` (``^[a-zA-Z0-9_-]{1,64}$``, unique) is a 400 at creation;
  ``params`` without model, max_tokens or messages errors that request alone.
* OpenAI: ``POST /v1/files`` (multipart; purpose ``batch`` needs a ``.jsonl`` name),
  ``GET /v1/files/{id}``, ``GET /v1/files/{id}/content``, ``DELETE /v1/files/{id}``;
  ``POST /v1/batches`` (endpoint ``/v1/chat/completions`` only, window ``24h``), ``GET
  /v1/batches`` (list; ``limit``, ``after``), ``GET /v1/batches/{id}``, ``POST
  /v1/batches/{id}/cancel``. Status: ``validating`` (the create answer) ->
  ``in_progress`` -> ``finalizing`` (during ``results_delay``) -> ``completed``, or
  ``cancelling`` -> ``cancelled``, ``expired``, ``failed``. An input file OpenAI would
  refuse fails the batch with ``errors.data`` ``[{code, message, line, param}]``:
  ``invalid_json_line``, ``duplicate_custom_id``, ``url_mismatch``,
  ``model_mismatch`` (one model a file), ``missing_required_parameter``,
  ``empty_file``. The output file holds ``{id, custom_id, response: {status_code: 200,
  request_id, body: chat.completion}, error: null}`` lines; the error file holds
  errored requests (``response.status_code`` 4xx/5xx with an error body) and requests
  that never ran (``response: null, error: {code: "batch_expired" | "batch_cancelled",
  message}``). ``request_counts`` counts progress: ``completed`` / ``failed`` grow as
  requests finish; requests that never ran count in neither. ``usage`` sums the
  answers. A file id appears only when its file has lines.
* Answers: a request is answered exactly as a realtime call would be (script for its
  model, then the shared script, then the responder called with ``/v1/messages`` or
  ``/v1/chat/completions`` and the request body, then ``{"ok": true}``), usage
  estimated the same way (Anthropic's batch usage says ``service_tier: "batch"``). A
  responder that raises errors the request (``api_error``).
* Timing: request i of n finishes at ``created + batch_delay * (i + 1) / n``, so
  requests are answered in submission order, as realtime calls would consume a script;
  the batch ends at ``created + batch_delay``. Nothing runs in the background: a batch
  advances to the present whenever it is looked at (any batch endpoint, ``.batches``).
  Cancel stops answering at once; the rest are canceled ``cancel_delay`` later (the
  batch reads canceling/cancelling meanwhile, and in the cancel answer itself).
  Cancelling an ended batch is a 400. Results are listed in a seeded shuffle that
  is never the submission order (2+ requests).
* Knobs: keyword arguments of ``FakeProvider(...)`` (with ``seed=``), then
  ``configure_batches(**knobs)`` or ``/_control {"batches": {...}, "seed": n}``;
  taken when a batch is created (see ``BatchSettings``):
  ``batch_delay`` (s, default 0), ``results_delay`` (s after the end before results
  can be fetched: Anthropic's results answer 404 meanwhile, OpenAI's batch reads
  ``finalizing`` with no file ids), ``cancel_delay`` (s), ``batch_error_ids`` (ids, or
  {custom_id: error type}) and ``batch_error_rate`` (seeded fraction) with
  ``batch_error_type`` (``invalid_request_error`` default, ``api_error``,
  ``overloaded_error``, ``rate_limit_error``, ``not_found_error``; 400/500/503/429/404
  in OpenAI's error file), ``batch_expire_ids`` / ``batch_expire_rate`` (those
  requests never run: Anthropic ends the batch with them ``expired``, OpenAI's batch
  reads ``expired``), ``expire_batch=True`` (nothing runs; every request expires at
  ``batch_delay``), ``max_batch_requests`` / ``max_batch_bytes`` (default: the
  documented 100,000 / 256 MB for Anthropic, 50,000 / 200 MB for OpenAI),
  ``max_queued_tokens`` (an int for every model or ``{model: cap}``: the sum of
  ``max_tokens`` over the requests of unfinished batches of a model may not pass it),
  ``openai_limit_style``.
* Refusals at creation. Anthropic: over ``max_batch_requests`` 400
  ``invalid_request_error``; over ``max_batch_bytes`` (the request body) 413
  ``request_too_large``, as Anthropic documents; over ``max_queued_tokens`` 429
  ``rate_limit_error`` with ``retry-after`` (seconds until the first unfinished batch
  of that model ends; none when no other batch is queued). OpenAI: a batch upload over
  ``max_batch_bytes`` is refused by ``POST /v1/files`` (400 "File is too large.").
  With ``openai_limit_style="http"`` (the default) over ``max_batch_requests`` is a 400
  (code ``too_many_tasks``) and over ``max_queued_tokens`` a 429 "Enqueued token limit
  reached for ..." (code ``token_limit_exceeded``, ``retry-after``) from ``POST
  /v1/batches``. Real OpenAI does neither synchronously: it accepts the batch and then
  fails it. ``openai_limit_style="failed_batch"`` does that instead: status
  ``failed``, ``errors.data`` code ``too_many_tasks`` / ``token_limit_exceeded``.
* The batch log (``.batch_log`` / ``GET /_batch_log``): ``time``, ``provider``
  ("anthropic" / "openai"), ``op`` (create, retrieve, list, results, cancel, delete,
  lookup, file_upload, file_retrieve, file_content, file_delete, file_lookup, and
  ``answer``: one per request when it reaches its outcome), ``status`` (HTTP),
  ``outcome`` (ok, too_large, too_many_requests, queued_tokens, invalid, failed,
  not_found, not_ready, ...; for ``answer``: succeeded, errored, expired, canceled),
  and by op ``batch_id``, ``requests``, ``custom_ids``, ``models``, ``max_tokens``
  (create), ``custom_id``, ``model``, ``usage``, ``error`` (answer). ``.batches``
  summarizes each batch: status, custom_ids, outcomes, results_order.
* Batch endpoints are outside the rpm/tpm window, faults and ``latency_ms``, and
  leave ``.log`` alone. ``reset()`` forgets batches, files and the batch log too.
* For failover tests: ``batch_submissions()`` counts, per (provider, custom_id), the
  accepted batches a request was in (a request paid twice counts 2);
  ``hold_batch_creates()`` / ``release_batch_creates()`` keep batch creates unanswered
  (``batch_creates_waiting`` counts them) while every other endpoint answers, like a
  client stalled inside its create call.

Run it standalone with ``python -m vetq.eval.fake_provider --port 8999 --rpm 60``.
It binds 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import re
import select
import signal
import socket
import sys
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

HOST = "127.0.0.1"
WINDOW_S = 60.0
NOMINAL_RPM = 10_000
NOMINAL_TPM = 10_000_000
DEFAULT_TEXT = '{"ok": true}'
# A delayed answer waits for its client to hang up in slices of this long (it sees a
# hang-up at once, a stop of the provider within a slice)...
HANGUP_WAIT_S = 0.5
# ...or, when the client sent bytes while it waits, polls this often.
HANGUP_POLL_S = 0.05
FAULT_KINDS = frozenset({"429", "5xx", "timeout", "malformed", "truncated"})

OPENAI_PATH = "/v1/chat/completions"
ANTHROPIC_PATH = "/v1/messages"

Responder = Callable[[str, dict[str, Any]], str]


# --------------------------------------------------------------------------- helpers


def _go_duration(seconds: float) -> str:
    """OpenAI's reset spelling: '20ms', '1.5s', '6m0s', '1h2m3s'."""
    seconds = max(0.0, seconds)
    if seconds < 1.0:
        return f"{round(seconds * 1000)}ms"
    hours, rest = divmod(seconds, 3600.0)
    minutes, secs = divmod(rest, 60.0)
    secs_text = f"{round(secs, 3):g}s"
    if hours >= 1:
        return f"{int(hours)}h{int(minutes)}m{secs_text}"
    if minutes >= 1:
        return f"{int(minutes)}m{secs_text}"
    return secs_text


def _rfc3339_in(seconds: float) -> str:
    moment = datetime.now(UTC) + timedelta(seconds=math.ceil(max(0.0, seconds)))
    return moment.replace(microsecond=0).isoformat().replace("+00:00", "Z")


def _estimate_tokens(text: str) -> int:
    return max(1, math.ceil(len(text) / 4)) if text else 0


def _validate_fault(fault: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(fault, dict) or str(fault.get("kind")) not in FAULT_KINDS:
        raise ValueError(f"a fault is a dict whose kind is one of {sorted(FAULT_KINDS)}, got {fault!r}")
    return {**fault, "kind": str(fault["kind"])}


class _Decision:
    """What the provider decided for one request, taken under the lock."""

    __slots__ = ("delay_s", "entry", "fault", "headers_state", "retry_after", "status", "text")

    def __init__(self) -> None:
        self.entry: dict[str, Any] = {}
        self.fault: dict[str, Any] | None = None
        self.status = 200
        self.retry_after: int | None = None
        self.text: str | None = None
        self.headers_state: dict[str, Any] = {}
        self.delay_s = 0.0


# --------------------------------------------------------------------------- server


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    # Hundreds of SDK clients connect at once in a fan-out: with the default backlog of
    # 5 the kernel drops their SYNs and each retries a second later.
    request_queue_size = 1024

    def __init__(self, provider: FakeProvider, port: int) -> None:
        self.provider = provider
        self._connections: set[socket.socket] = set()
        self._conn_lock = threading.Lock()
        super().__init__((HOST, port), _Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._conn_lock:
            self._connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._conn_lock:
            self._connections.discard(request)
        super().shutdown_request(request)

    def close_connections(self) -> None:
        with self._conn_lock:
            connections, self._connections = list(self._connections), set()
        for conn in connections:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "vetq-fake-provider/1"
    timeout = 30  # idle keep-alive connections go away on their own

    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        return  # quiet: the provider keeps its own log

    # -- plumbing

    def _read_body(self) -> bytes:
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            return b"".join(chunks)
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _send(
        self,
        status: int,
        body: bytes | str,
        headers: dict[str, str] | None = None,
        content_type: str = "application/json",
    ) -> None:
        data = body.encode("utf-8") if isinstance(body, str) else body
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, OSError):
            self.close_connection = True  # the client gave up (a timeout fault, usually)

    def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        self._send(status, json.dumps(payload), headers)

    # -- verbs

    def _serve_batches(self, method: str, raw: bytes = b"") -> bool:
        """Answer a batch or file endpoint; False when the path is none of them."""
        parts = urlsplit(self.path)
        if method == "POST" and parts.path in (ANTHROPIC_BATCHES_PATH, OPENAI_BATCHES_PATH):
            self.server.provider._wait_to_create()
        reply = self.server.provider._batches.route(method, parts.path, dict(parse_qsl(parts.query)), self.headers, raw)
        if reply is None:
            return False
        status, body, headers, content_type = reply
        self._send(status, body, headers, content_type)
        return True

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        if self._serve_batches("GET"):
            return
        if path == "/_log":
            self._send_json(200, self.server.provider.log)
        elif path == "/_batch_log":
            self._send_json(200, self.server.provider.batch_log)
        elif path in ("/_health", "/healthz"):
            self._send_json(200, {"ok": True})
        else:
            self._send_json(404, {"error": {"type": "not_found_error", "message": f"no route {path}"}})

    def do_DELETE(self) -> None:
        raw = self._read_body()
        if not self._serve_batches("DELETE", raw):
            path = self.path.split("?", 1)[0]
            self._send_json(404, {"error": {"type": "not_found_error", "message": f"no route {path}"}})

    def do_POST(self) -> None:
        path = self.path.split("?", 1)[0]
        raw = self._read_body()
        provider = self.server.provider
        if self._serve_batches("POST", raw):
            return
        if path == "/_control":
            try:
                command = json.loads(raw or b"{}")
                state = provider.control(command)
            except (ValueError, TypeError) as exc:
                self._send_json(400, {"ok": False, "error": str(exc)})
                return
            self._send_json(200, {"ok": True, **state})
            return
        if path not in (OPENAI_PATH, ANTHROPIC_PATH):
            self._send_json(404, {"error": {"type": "not_found_error", "message": f"no route {path}"}})
            return
        try:
            body = json.loads(raw or b"{}")
            if not isinstance(body, dict):
                raise ValueError("body is not a JSON object")
        except ValueError:
            self._send_json(400, _error_body(path, 400, "request body is not a JSON object"))
            return
        provider._serve_model_call(self, path, raw, body)


def _peer_closed(conn: socket.socket, wait_s: float = 0.0) -> bool | None:
    """Whether the client closed its end (the socket reads as end-of-file), waiting up
    to `wait_s` for it; None when the socket turned readable with data instead. (A
    client waiting for its answer sends nothing, so readable means closed.)"""
    try:
        # poll, not select: a fan-out's sockets pass select's limit of 1024 descriptors.
        poller = select.poll()
        poller.register(conn, select.POLLIN | select.POLLPRI)
        if not poller.poll(max(0, int(wait_s * 1000))):
            return False
        return True if conn.recv(1, socket.MSG_PEEK) == b"" else None
    except OSError:
        return True


def _error_body(path: str, status: int, message: str) -> dict[str, Any]:
    if path == ANTHROPIC_PATH:
        kind = {
            400: "invalid_request_error",
            429: "rate_limit_error",
            529: "overloaded_error",
        }.get(status, "api_error" if status >= 500 else "invalid_request_error")
        return {"type": "error", "error": {"type": kind, "message": message}}
    if status == 429:
        return {
            "error": {"message": message, "type": "rate_limit_exceeded", "param": None, "code": "rate_limit_exceeded"}
        }
    kind = "server_error" if status >= 500 else "invalid_request_error"
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


def _usage_counts(body: dict[str, Any], text: str) -> tuple[int, int]:
    """(prompt, completion) tokens, estimated the same way for realtime and batch answers."""
    return _estimate_tokens(json.dumps([body.get("system"), body.get("messages")])), _estimate_tokens(text)


def _anthropic_message(
    body: dict[str, Any], text: str, *, truncated: bool = False, batch: bool = False
) -> dict[str, Any]:
    """A Messages API answer (`message` object) for `body`."""
    prompt_tokens, completion_tokens = _usage_counts(body, text)
    usage: dict[str, Any] = {"input_tokens": prompt_tokens, "output_tokens": completion_tokens}
    if batch:
        usage["service_tier"] = "batch"
    return {
        "id": f"msg_{uuid.uuid4().hex[:24]}",
        "type": "message",
        "role": "assistant",
        "model": str(body.get("model") or "fake-model"),
        "content": [{"type": "text", "text": text}],
        "stop_reason": "max_tokens" if truncated else "end_turn",
        "stop_sequence": None,
        "usage": usage,
    }


def _openai_completion(body: dict[str, Any], text: str, *, truncated: bool = False) -> dict[str, Any]:
    """A Chat Completions answer (`chat.completion` object) for `body`."""
    prompt_tokens, completion_tokens = _usage_counts(body, text)
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": str(body.get("model") or "fake-model"),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "logprobs": None,
                "finish_reason": "length" if truncated else "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


# --------------------------------------------------------------------------- provider


class FakeProvider:
    """The fake provider. Configure from Python or over HTTP; see the module docstring."""

    def __init__(
        self,
        rpm: int | None = None,
        tpm: int | None = None,
        latency_ms: float = 0,
        *,
        port: int = 0,
        window_s: float | None = None,
        seed: int = 0,
        **batch_settings: Any,
    ) -> None:
        # The limits count per sliding window: a minute, like real providers, unless a
        # test or benchmark shortens it to finish sooner.
        self.window_s = float(window_s) if window_s is not None else WINDOW_S
        self.rpm = rpm
        self.tpm = tpm
        self.latency_ms = latency_ms
        self._requested_port = port
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._responder: Responder | None = None
        # The batch knobs (BatchSettings' fields) and the seed of every random draw.
        self.seed = int(seed)
        self._batch_settings = BatchSettings().changed(**batch_settings)
        self._batches = _BatchService(self)
        self._in_flight = 0
        # Open unless a test holds batch creates (hold_batch_creates).
        self._create_gate = threading.Event()
        self._create_gate.set()
        self._creates_waiting = 0
        self._clear()

    def _clear(self) -> None:
        self._window: deque[tuple[float, int]] = deque()
        self._faults: dict[str | None, deque[dict[str, Any]]] = {}
        self._scripts: dict[str | None, deque[str]] = {}
        self._cooldown_until: dict[str, float] = {}
        self._log: list[dict[str, Any]] = []
        self._max_in_flight = self._in_flight

    # -- lifecycle

    def start(self) -> FakeProvider:
        if self._server is not None:
            return self
        self._stopping.clear()
        self._server = _Server(self, self._requested_port)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-provider", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        self._stopping.set()  # wakes sleeping timeout faults and latency waits
        self._create_gate.set()  # and held batch creates
        server.shutdown()
        server.server_close()
        server.close_connections()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> FakeProvider:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("the fake provider is not running; call start() first")
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    @property
    def base_url_openai(self) -> str:
        return f"{self.url}/v1"

    @property
    def base_url_anthropic(self) -> str:
        return self.url

    # -- configuration

    def push_fault(self, fault: dict[str, Any], model: str | None = None) -> None:
        fault = _validate_fault(fault)
        model = model if model is not None else fault.pop("model", None)
        with self._lock:
            self._faults.setdefault(model, deque()).append(fault)

    def script(self, texts: list[str], model: str | None = None) -> None:
        with self._lock:
            self._scripts.setdefault(model, deque()).extend(str(t) for t in texts)

    def set_responder(self, fn: Responder | None) -> None:
        self._responder = fn

    def reset(self) -> None:
        """Forget the window, faults, scripts, cooldowns, log, batches, files and batch
        log (keep rpm/tpm/latency and the batch settings)."""
        self._batches.clear()
        with self._lock:
            self._clear()

    @property
    def batch_settings(self) -> BatchSettings:
        return self._batch_settings

    def configure_batches(self, **changes: Any) -> BatchSettings:
        """Change batch knobs (BatchSettings' field names); applies to batches created
        from now on. Returns the new settings."""
        with self._lock:
            self._batch_settings = self._batch_settings.changed(**changes)
            return self._batch_settings

    @property
    def batch_log(self) -> list[dict[str, Any]]:
        with self._batches.log_lock:
            return [dict(entry) for entry in self._batches.log]

    @property
    def batches(self) -> list[dict[str, Any]]:
        """Every batch as it stands now (advanced to the present): id, provider, status,
        custom_ids, outcomes {custom_id: outcome or None}, results_order."""
        return self._batches.summaries()

    def batch_submissions(self) -> dict[tuple[str, str], int]:
        """How many accepted batches each request was in, by (provider, custom_id): a
        request its client paid for twice counts 2."""
        counts: dict[tuple[str, str], int] = {}
        for entry in self.batch_log:
            if entry.get("op") == "create" and entry.get("status") == 200:
                for custom_id in entry.get("custom_ids") or ():
                    key = (str(entry["provider"]), str(custom_id))
                    counts[key] = counts.get(key, 0) + 1
        return counts

    def hold_batch_creates(self) -> None:
        """Batch creates (both vendors) wait, unanswered, until release_batch_creates():
        a client stalled inside its create call. Lists, polls and results still answer."""
        self._create_gate.clear()

    def release_batch_creates(self) -> None:
        self._create_gate.set()

    @property
    def batch_creates_waiting(self) -> int:
        with self._lock:
            return self._creates_waiting

    def _wait_to_create(self) -> None:
        with self._lock:
            self._creates_waiting += 1
        try:
            self._create_gate.wait()
        finally:
            with self._lock:
                self._creates_waiting -= 1

    def _batch_text(self, path: str, body: dict[str, Any]) -> str:
        """A batch request's answer: the same script / responder / default as a realtime call."""
        model = str(body.get("model") or "")
        with self._lock:
            for key in (model, None):
                script = self._scripts.get(key)
                if script:
                    return script.popleft()
        responder = self._responder
        if responder is not None:
            return str(responder(path, body))
        return DEFAULT_TEXT

    def control(self, command: dict[str, Any]) -> dict[str, Any]:
        """Apply one /_control command; returns the resulting settings."""
        if not isinstance(command, dict):
            raise ValueError("a control command is a JSON object")
        if command.get("reset"):
            self.reset()
        with self._lock:
            if "rpm" in command:
                self.rpm = None if command["rpm"] is None else int(command["rpm"])
            if "tpm" in command:
                self.tpm = None if command["tpm"] is None else int(command["tpm"])
            if "latency_ms" in command:
                self.latency_ms = float(command["latency_ms"] or 0)
        faults = list(command.get("faults") or [])
        if command.get("fault"):
            faults.append(command["fault"])
        for fault in faults:
            self.push_fault(dict(fault))
        if "seed" in command:
            self.seed = int(command["seed"])
        if command.get("batches") is not None:
            if not isinstance(command["batches"], dict):
                raise ValueError("batches is an object of batch settings")
            self.configure_batches(**command["batches"])
        script = command.get("script")
        if isinstance(script, list):
            self.script(script)
        elif isinstance(script, dict):
            self.script(list(script.get("texts") or []), script.get("model"))
        with self._lock:
            return {
                "rpm": self.rpm,
                "tpm": self.tpm,
                "latency_ms": self.latency_ms,
                "faults_pending": sum(len(q) for q in self._faults.values()),
                "script_pending": sum(len(q) for q in self._scripts.values()),
                "in_flight": self._in_flight,
                "max_in_flight": self._max_in_flight,
            }

    @property
    def log(self) -> list[dict[str, Any]]:
        with self._lock:
            return [dict(entry) for entry in self._log]

    @property
    def in_flight(self) -> int:
        """Model calls received and not yet answered."""
        with self._lock:
            return self._in_flight

    @property
    def max_in_flight(self) -> int:
        """The most model calls in flight at once since start (or reset())."""
        with self._lock:
            return self._max_in_flight

    # -- the model call

    def _prune(self, now: float) -> None:
        while self._window and self._window[0][0] <= now - self.window_s:
            self._window.popleft()

    def _limit_wait_s(self, now: float, cost: int) -> float | None:
        """Seconds until this request would fit the window, or None if it fits now."""
        waits = []
        if self.rpm is not None and len(self._window) >= self.rpm:
            # the (len - rpm + 1)-th oldest entry must leave first
            oldest = self._window[len(self._window) - self.rpm][0]
            waits.append(oldest + self.window_s - now)
        if self.tpm is not None:
            used = sum(tokens for _, tokens in self._window)
            if used + cost > self.tpm:
                if cost > self.tpm:
                    waits.append(self.window_s)
                else:
                    for moment, tokens in self._window:
                        used -= tokens
                        if used + cost <= self.tpm:
                            waits.append(moment + self.window_s - now)
                            break
        return max(waits) if waits else None

    def _headers_state(self, now: float) -> dict[str, Any]:
        rpm = self.rpm if self.rpm is not None else NOMINAL_RPM
        tpm = self.tpm if self.tpm is not None else NOMINAL_TPM
        used_tokens = sum(tokens for _, tokens in self._window)
        reset = (self._window[0][0] + self.window_s - now) if self._window else 0.0
        return {
            "limit_requests": rpm,
            "remaining_requests": max(0, rpm - len(self._window)),
            "limit_tokens": tpm,
            "remaining_tokens": max(0, tpm - used_tokens),
            "reset_s": max(0.0, reset),
        }

    def _decide(self, path: str, raw: bytes, body: dict[str, Any]) -> _Decision:
        decision = _Decision()
        now = time.time()
        model = str(body.get("model") or "")
        max_tokens = body.get("max_tokens") or body.get("max_completion_tokens") or 0
        try:
            cost = math.ceil(len(raw) / 4) + int(max_tokens)
        except (TypeError, ValueError):
            cost = math.ceil(len(raw) / 4)
        with self._lock:
            self._prune(now)
            early = now < self._cooldown_until.get(model, 0.0)
            fault: dict[str, Any] = {}
            for key in (model, None):
                faults = self._faults.get(key)
                if faults:
                    fault = faults.popleft()
                    break
            decision.fault = fault or None
            kind = fault.get("kind")
            outcome = kind or "ok"
            counted = True
            if kind == "429":
                retry_after = max(0, math.ceil(float(fault.get("retry_after", 1))))
                decision.status, decision.retry_after, counted = 429, retry_after, False
            elif kind == "5xx":
                decision.status = int(fault.get("status", 503))
                if decision.status < 500:
                    outcome = "4xx"
            else:
                wait = self._limit_wait_s(now, cost)
                if wait is not None:
                    decision.status, decision.retry_after = 429, max(1, math.ceil(wait))
                    outcome, counted = "429", False
            if decision.status == 429:
                self._cooldown_until[model] = max(
                    self._cooldown_until.get(model, 0.0), now + float(decision.retry_after or 0)
                )
            if counted:
                self._window.append((now, cost))
            if decision.status == 200:
                for key in (model, None):
                    script = self._scripts.get(key)
                    if script:
                        decision.text = script.popleft()
                        break
            decision.headers_state = self._headers_state(now)
            if kind == "429":
                decision.headers_state["remaining_requests"] = 0
            decision.delay_s = max(0.0, float(self.latency_ms or 0)) / 1000.0
            if kind == "timeout":
                decision.delay_s += max(0.0, float(fault.get("seconds", 5)))
            decision.entry = {
                "time": now,
                "path": path,
                "model": model,
                "outcome": outcome,
                "status": decision.status,
                "early": early,
                "fault": kind,
                "tokens": cost,
            }
            self._log.append(decision.entry)
        return decision

    def _rate_headers(self, path: str, state: dict[str, Any], retry_after: int | None) -> dict[str, str]:
        if path == ANTHROPIC_PATH:
            reset = _rfc3339_in(state["reset_s"])
            headers = {
                "anthropic-ratelimit-requests-limit": str(state["limit_requests"]),
                "anthropic-ratelimit-requests-remaining": str(state["remaining_requests"]),
                "anthropic-ratelimit-requests-reset": reset,
                "anthropic-ratelimit-tokens-limit": str(state["limit_tokens"]),
                "anthropic-ratelimit-tokens-remaining": str(state["remaining_tokens"]),
                "anthropic-ratelimit-tokens-reset": reset,
                "request-id": f"req_{uuid.uuid4().hex[:24]}",
            }
        else:
            reset = _go_duration(state["reset_s"])
            headers = {
                "x-ratelimit-limit-requests": str(state["limit_requests"]),
                "x-ratelimit-remaining-requests": str(state["remaining_requests"]),
                "x-ratelimit-reset-requests": reset,
                "x-ratelimit-limit-tokens": str(state["limit_tokens"]),
                "x-ratelimit-remaining-tokens": str(state["remaining_tokens"]),
                "x-ratelimit-reset-tokens": reset,
                "x-request-id": f"req_{uuid.uuid4().hex[:24]}",
            }
        if retry_after is not None:
            headers["retry-after"] = str(retry_after)
        return headers

    def _answer_text(self, path: str, body: dict[str, Any], decision: _Decision) -> str:
        if decision.text is not None:
            return decision.text
        responder = self._responder
        if responder is not None:
            return str(responder(path, body))
        return DEFAULT_TEXT

    def _wait_for_answer(self, handler: _Handler, decision: _Decision) -> bool:
        """Sleep out the answer's delay; False when the provider stops meanwhile or the
        client hangs up (logged as `client_closed`: proof that a timed-out call really
        ended rather than being left running)."""
        deadline = time.monotonic() + decision.delay_s
        while (left := deadline - time.monotonic()) > 0:
            if self._stopping.is_set():
                return False
            # One select for the whole wait (in slices, to see a stop): hundreds of calls
            # in flight would otherwise poll the CPU away from the workers under test.
            # stop() shuts the sockets down, which wakes this wait at once.
            closed = _peer_closed(handler.connection, wait_s=min(left, HANGUP_WAIT_S))
            if self._stopping.is_set():
                return False
            if closed is None:  # readable but not closed: bytes the client sent early
                self._stopping.wait(min(left, HANGUP_POLL_S))
            elif closed:
                with self._lock:
                    decision.entry["client_closed"] = True
                return False
        return not self._stopping.is_set()

    def _serve_model_call(self, handler: _Handler, path: str, raw: bytes, body: dict[str, Any]) -> None:
        with self._lock:
            self._in_flight += 1
            self._max_in_flight = max(self._max_in_flight, self._in_flight)
        try:
            self._answer_model_call(handler, path, raw, body)
        finally:
            with self._lock:
                self._in_flight -= 1

    def _answer_model_call(self, handler: _Handler, path: str, raw: bytes, body: dict[str, Any]) -> None:
        decision = self._decide(path, raw, body)
        if decision.delay_s > 0 and not self._wait_for_answer(handler, decision):
            handler.close_connection = True
            return
        headers = self._rate_headers(path, decision.headers_state, decision.retry_after)
        if decision.status == 429:
            message = f"Rate limit reached for {body.get('model')!s}; please try again in {decision.retry_after}s."
            handler._send_json(429, _error_body(path, 429, message), headers)
            return
        if decision.status != 200:
            custom = decision.fault.get("body") if decision.fault else None
            if isinstance(custom, str):
                handler._send(decision.status, custom, headers)
            else:
                error = custom if custom is not None else _error_body(path, decision.status, "The server had an error")
                handler._send_json(decision.status, error, headers)
            return
        fault = decision.fault or {}
        kind = fault.get("kind")
        if kind == "malformed":
            if fault.get("variant") == "wrong_shape":
                handler._send_json(200, {"unexpected": True, "detail": "not a completion"}, headers)
            else:
                handler._send(200, "<html>upstream proxy said: this is not json {", headers)
            return
        try:
            text = self._answer_text(path, body, decision)
        except Exception as exc:  # noqa: BLE001 - a broken responder of any kind is a 500, and logged as such
            with self._lock:
                decision.entry.update(outcome="error", status=500)
            handler._send_json(500, _error_body(path, 500, f"responder failed: {type(exc).__name__}"), headers)
            return
        truncated = kind == "truncated"
        if truncated:
            text = text[: len(text) // 2]
        if path == ANTHROPIC_PATH:
            payload = _anthropic_message(body, text, truncated=truncated)
        else:
            payload = _openai_completion(body, text, truncated=truncated)
        handler._send_json(200, payload, headers)


# --------------------------------------------------------------------------- batches
#
# Both vendors' Batch APIs, on the same server. A batch is decided when it is created
# (which requests will error or expire, the order its results will be listed in) and
# then advanced lazily, by the clock, whenever anybody looks at it: request i of n
# finishes at created + batch_delay * (i + 1) / n, so requests are answered in
# submission order (scripts are consumed exactly as n realtime calls would consume
# them) and a cancel leaves a finished prefix and a canceled rest.

ANTHROPIC_BATCHES_PATH = "/v1/messages/batches"
OPENAI_BATCHES_PATH = "/v1/batches"
OPENAI_FILES_PATH = "/v1/files"
BATCH_WINDOW_S = 24 * 3600.0
OPENAI_FILE_TTL_S = 30 * 24 * 3600.0
# The documented limits: Anthropic 100,000 requests or 256 MB a batch; OpenAI 50,000
# requests a batch and 200 MB a batch input file.
ANTHROPIC_MAX_BATCH_REQUESTS = 100_000
ANTHROPIC_MAX_BATCH_BYTES = 256 * 1024 * 1024
OPENAI_MAX_BATCH_REQUESTS = 50_000
OPENAI_MAX_BATCH_BYTES = 200 * 1024 * 1024
_CUSTOM_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")
# A scripted per-request error, named by its Anthropic error type: the HTTP status and
# the OpenAI error type its line in an OpenAI error file carries.
BATCH_ERROR_KINDS: dict[str, tuple[int, str]] = {
    "invalid_request_error": (400, "invalid_request_error"),
    "not_found_error": (404, "invalid_request_error"),
    "rate_limit_error": (429, "rate_limit_exceeded"),
    "api_error": (500, "server_error"),
    "overloaded_error": (503, "server_error"),
}
_ERROR_KIND_ALIASES = {"server_error": "api_error", "rate_limit_exceeded": "rate_limit_error"}
OPENAI_LIMIT_STYLES = frozenset({"http", "failed_batch"})

_Reply = tuple[int, bytes, dict[str, str], str]


def _error_kind(kind: object) -> str:
    name = _ERROR_KIND_ALIASES.get(str(kind), str(kind))
    if name not in BATCH_ERROR_KINDS:
        raise ValueError(f"a batch error type is one of {sorted(BATCH_ERROR_KINDS)}, got {kind!r}")
    return name


@dataclass(frozen=True)
class BatchSettings:
    """The batch knobs (see the module docstring). Taken when a batch is created: a
    change applies to the batches created after it."""

    batch_delay: float = 0.0
    results_delay: float = 0.0
    cancel_delay: float = 0.0
    batch_error_rate: float = 0.0
    # custom_id -> error type (None: batch_error_type); a plain collection of ids is accepted.
    batch_error_ids: Mapping[str, str | None] = field(default_factory=dict)
    batch_error_type: str = "invalid_request_error"
    batch_expire_rate: float = 0.0
    batch_expire_ids: frozenset[str] = frozenset()
    expire_batch: bool = False
    max_batch_requests: int | None = None
    max_batch_bytes: int | None = None
    # one cap for every model, or {model: cap}
    max_queued_tokens: int | Mapping[str, int] | None = None
    openai_limit_style: str = "http"

    def changed(self, **changes: Any) -> BatchSettings:
        names = {f.name for f in fields(self)}
        unknown = sorted(set(changes) - names)
        if unknown:
            raise TypeError(f"unknown batch setting(s) {unknown}; known: {sorted(names)}")
        values: dict[str, Any] = {name: getattr(self, name) for name in names}
        values.update(changes)
        for name in ("batch_delay", "results_delay", "cancel_delay"):
            values[name] = float(values[name] or 0)
            if values[name] < 0:
                raise ValueError(f"{name} is a number of seconds >= 0")
        for name in ("batch_error_rate", "batch_expire_rate"):
            values[name] = float(values[name] or 0)
            if not 0.0 <= values[name] <= 1.0:
                raise ValueError(f"{name} is a fraction between 0 and 1")
        values["batch_error_type"] = _error_kind(values["batch_error_type"])
        ids = values["batch_error_ids"] or {}
        if isinstance(ids, str):
            ids = [ids]
        if isinstance(ids, Mapping):
            values["batch_error_ids"] = {
                str(cid): None if kind is None else _error_kind(kind) for cid, kind in ids.items()
            }
        else:
            values["batch_error_ids"] = dict.fromkeys((str(cid) for cid in ids), None)
        expire_ids = values["batch_expire_ids"] or ()
        values["batch_expire_ids"] = frozenset([expire_ids] if isinstance(expire_ids, str) else map(str, expire_ids))
        values["expire_batch"] = bool(values["expire_batch"])
        for name in ("max_batch_requests", "max_batch_bytes"):
            if values[name] is not None:
                values[name] = int(values[name])
                if values[name] < 1:
                    raise ValueError(f"{name} is a positive integer or None")
        caps = values["max_queued_tokens"]
        if isinstance(caps, Mapping):
            values["max_queued_tokens"] = {str(model): int(cap) for model, cap in caps.items()}
        elif caps is not None:
            values["max_queued_tokens"] = int(caps)
        if values["openai_limit_style"] not in OPENAI_LIMIT_STYLES:
            raise ValueError(f"openai_limit_style is one of {sorted(OPENAI_LIMIT_STYLES)}")
        return BatchSettings(**values)

    def queued_cap(self, model: str) -> int | None:
        caps = self.max_queued_tokens
        if isinstance(caps, Mapping):
            return caps.get(model)
        return caps


def _rfc3339(moment: float | None) -> str | None:
    if moment is None:
        return None
    return datetime.fromtimestamp(moment, UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def _unix(moment: float | None) -> int | None:
    return None if moment is None else int(moment)


def _anthropic_error(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


def _openai_error(
    message: str, kind: str = "invalid_request_error", param: str | None = None, code: str | None = None
) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


def _batch_error(code: str, message: str, line: int | None = None, param: str | None = None) -> dict[str, Any]:
    """One entry of an OpenAI batch's `errors.data` (input-file validation)."""
    return {"code": code, "message": message, "param": param, "line": line}


def _max_tokens(body: dict[str, Any]) -> int:
    try:
        return max(0, int(body.get("max_tokens") or body.get("max_completion_tokens") or 0))
    except (TypeError, ValueError):
        return 0


def _multipart(content_type: str, raw: bytes) -> dict[str, tuple[str | None, bytes]]:
    """The fields of a multipart/form-data body: name -> (filename, bytes)."""
    match = re.search(r'boundary="?([^";]+)"?', content_type)
    if not match:
        raise ValueError("multipart body without a boundary")
    delimiter = b"--" + match.group(1).encode("latin-1")
    fields_: dict[str, tuple[str | None, bytes]] = {}
    for part in raw.split(delimiter)[1:]:
        if part.startswith(b"--"):
            break
        head, _, content = part.removeprefix(b"\r\n").partition(b"\r\n\r\n")
        content = content.removesuffix(b"\r\n")
        disposition = ""
        for line in head.decode("latin-1").split("\r\n"):
            name, _, value = line.partition(":")
            if name.strip().lower() == "content-disposition":
                disposition = value
        field_name = re.search(r'(?:^|;)\s*name="([^"]*)"', disposition)
        filename = re.search(r'filename="([^"]*)"', disposition)
        if field_name:
            fields_[field_name.group(1)] = (filename.group(1) if filename else None, content)
    return fields_


class _BatchItem:
    """One request of a batch and, once it has one, its outcome."""

    __slots__ = (
        "answer",
        "body",
        "custom_id",
        "error_kind",
        "error_message",
        "fate",
        "finish_at",
        "index",
        "line_id",
        "max_tokens",
        "model",
        "outcome",
        "request_id",
        "usage",
    )

    def __init__(self, index: int, custom_id: str, body: dict[str, Any]) -> None:
        self.index = index
        self.custom_id = custom_id
        self.body = body
        self.model = str(body.get("model") or "")
        self.max_tokens = _max_tokens(body)
        self.fate = "succeed"  # or "error", "expire": decided at creation
        self.error_kind = ""
        self.error_message = ""
        self.finish_at = 0.0
        self.outcome: str | None = None  # succeeded, errored, expired, canceled
        self.answer: dict[str, Any] | None = None  # the message / chat.completion
        self.usage = (0, 0)
        self.request_id = f"req_{uuid.uuid4().hex[:24]}"
        self.line_id = f"batch_req_{uuid.uuid4().hex}"


class _Batch:
    def __init__(
        self, vendor: str, batch_id: str, created: float, settings: BatchSettings, items: list[_BatchItem]
    ) -> None:
        self.vendor = vendor
        self.id = batch_id
        self.created = created
        self.ends_at = created + settings.batch_delay
        self.results_delay = settings.results_delay
        self.cancel_delay = settings.cancel_delay
        self.cancel_at: float | None = None
        self.items = items
        self.order: list[int] = list(range(len(items)))  # the order results are listed in
        self.ended_at: float | None = None
        self.end_kind: str | None = None  # completed, expired, cancelled
        self.failed_errors: list[dict[str, Any]] | None = None  # OpenAI: input file refused
        self.input_file_id = ""
        self.endpoint = OPENAI_PATH
        self.completion_window = "24h"
        self.metadata: Any = None
        self.model: str | None = None
        self.output_file_id: str | None = None
        self.error_file_id: str | None = None
        count = len(items)
        for item in items:
            item.finish_at = created + settings.batch_delay * (item.index + 1) / count

    def end_time(self) -> float:
        return self.cancel_at + self.cancel_delay if self.cancel_at is not None else self.ends_at

    def unfinished(self, now: float) -> bool:
        return self.failed_errors is None and self.ended_at is None and now < self.end_time()

    def tokens_by_model(self) -> dict[str, int]:
        tokens: dict[str, int] = {}
        for item in self.items:
            tokens[item.model] = tokens.get(item.model, 0) + item.max_tokens
        return tokens

    def results_ready(self, now: float) -> bool:
        return self.ended_at is not None and now >= self.ended_at + self.results_delay

    def count(self, outcome: str) -> int:
        return sum(1 for item in self.items if item.outcome == outcome)


class _File:
    def __init__(self, filename: str, purpose: str, content: bytes, created: float) -> None:
        self.id = f"file-{uuid.uuid4().hex[:22]}"
        self.filename = filename
        self.purpose = purpose
        self.content = content
        self.created = created

    def render(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": "file",
            "bytes": len(self.content),
            "created_at": int(self.created),
            "filename": self.filename,
            "purpose": self.purpose,
            "status": "processed",
            "expires_at": int(self.created + OPENAI_FILE_TTL_S),
            "status_details": None,
        }


class _BatchService:
    """The batch endpoints of one FakeProvider. `lock` serializes every batch operation
    (answering included: the responder runs under it, never under the provider's own
    lock); `log_lock` guards only the batch log."""

    def __init__(self, provider: FakeProvider) -> None:
        self.provider = provider
        self.lock = threading.Lock()
        self.log_lock = threading.Lock()
        self.batches: dict[str, _Batch] = {}
        self.files: dict[str, _File] = {}
        self.seq = 0
        self.log: list[dict[str, Any]] = []

    def clear(self) -> None:
        with self.lock:
            self.batches, self.files, self.seq = {}, {}, 0
        with self.log_lock:
            self.log = []

    # -- log

    def _log(self, vendor: str, op: str, status: int, outcome: str, **extra: Any) -> None:
        entry = {"time": time.time(), "provider": vendor, "op": op, "status": status, "outcome": outcome, **extra}
        with self.log_lock:
            self.log.append(entry)

    def _log_item(self, batch: _Batch, item: _BatchItem) -> None:
        self._log(
            batch.vendor,
            "answer",
            200,
            str(item.outcome),
            batch_id=batch.id,
            custom_id=item.custom_id,
            model=item.model,
            usage={"input_tokens": item.usage[0], "output_tokens": item.usage[1]},
            error=item.error_kind or None,
        )

    # -- routing

    def route(self, method: str, path: str, query: dict[str, str], headers: Any, raw: bytes) -> _Reply | None:
        """The reply for a batch or file endpoint, or None when `path` is none of them."""
        routes = ((ANTHROPIC_BATCHES_PATH, "anthropic"), (OPENAI_BATCHES_PATH, "openai"), (OPENAI_FILES_PATH, "files"))
        matched = [(prefix, vendor) for prefix, vendor in routes if path == prefix or path.startswith(prefix + "/")]
        if not matched:
            return None
        prefix, vendor = matched[0]
        rest = [part for part in path[len(prefix) :].split("/") if part]
        with self.lock:
            now = time.time()
            if vendor == "anthropic":
                return self._anthropic(method, rest, query, raw, now)
            if vendor == "openai":
                return self._openai(method, rest, query, raw, now)
            return self._files(method, rest, headers, raw, now)

    def _reply(self, vendor: str, status: int, payload: Any, extra: dict[str, str] | None = None) -> _Reply:
        return status, json.dumps(payload).encode("utf-8"), self._headers(vendor, extra), "application/json"

    @staticmethod
    def _headers(vendor: str, extra: dict[str, str] | None = None) -> dict[str, str]:
        name = "request-id" if vendor == "anthropic" else "x-request-id"
        return {name: f"req_{uuid.uuid4().hex[:24]}", **(extra or {})}

    def _not_found(self, vendor: str, what: str) -> _Reply:
        if vendor == "anthropic":
            return self._reply(vendor, 404, _anthropic_error("not_found_error", what))
        return self._reply(vendor, 404, _openai_error(what))

    def _bad_request(self, vendor: str, message: str, param: str | None = None, code: str | None = None) -> _Reply:
        if vendor == "anthropic":
            return self._reply(vendor, 400, _anthropic_error("invalid_request_error", message))
        return self._reply(vendor, 400, _openai_error(message, param=param, code=code))

    def _batch(self, vendor: str, batch_id: str) -> _Batch | None:
        batch = self.batches.get(batch_id)
        return batch if batch is not None and batch.vendor == vendor else None

    # -- advancing

    def _advance(self, batch: _Batch, now: float) -> None:
        """Answer the requests that have finished by `now`, in submission order, and end
        the batch once its time has come."""
        if batch.failed_errors is not None or batch.ended_at is not None:
            return
        stop = min(now, batch.ends_at, batch.cancel_at if batch.cancel_at is not None else math.inf)
        for item in batch.items:
            if item.outcome is None and item.fate != "expire" and item.finish_at <= stop:
                self._process(batch, item)
        if batch.cancel_at is not None:
            if now >= batch.end_time():
                self._finish(batch, "cancelled", batch.end_time(), "canceled")
        elif now >= batch.ends_at:
            expiring = any(item.outcome is None for item in batch.items)
            self._finish(batch, "expired" if expiring else "completed", batch.ends_at, "expired")

    def _process(self, batch: _Batch, item: _BatchItem) -> None:
        if item.fate == "error":
            item.outcome = "errored"
        else:
            path = ANTHROPIC_PATH if batch.vendor == "anthropic" else OPENAI_PATH
            try:
                text = self.provider._batch_text(path, item.body)
            except Exception as exc:  # noqa: BLE001 - a broken responder errors the request, as a 500 would
                item.outcome, item.error_kind = "errored", "api_error"
                item.error_message = f"responder failed: {type(exc).__name__}"
            else:
                if batch.vendor == "anthropic":
                    item.answer = _anthropic_message(item.body, text, batch=True)
                else:
                    item.answer = _openai_completion(item.body, text)
                item.usage = _usage_counts(item.body, text)
                item.outcome = "succeeded"
        self._log_item(batch, item)

    def _finish(self, batch: _Batch, kind: str, at: float, leftover: str) -> None:
        for item in batch.items:
            if item.outcome is None:
                item.outcome = leftover
                self._log_item(batch, item)
        batch.ended_at, batch.end_kind = at, kind
        if batch.vendor == "openai":
            self._write_openai_files(batch, at)

    def _advance_all(self, vendor: str, now: float) -> None:
        for batch in self.batches.values():
            if batch.vendor == vendor:
                self._advance(batch, now)

    # -- shared creation steps

    def _new_id(self, vendor: str) -> str:
        return f"msgbatch_{uuid.uuid4().hex[:24]}" if vendor == "anthropic" else f"batch_{uuid.uuid4().hex}"

    def _build(self, vendor: str, specs: list[tuple[str, dict[str, Any], str]], now: float) -> _Batch:
        """A batch of `specs` (custom_id, body, invalid-params message), its fates and result
        order drawn from the provider's seed."""
        settings = self.provider.batch_settings
        self.seq += 1
        rng = random.Random(self.provider.seed * 1_000_003 + self.seq)
        items = []
        for index, (custom_id, body, invalid) in enumerate(specs):
            item = _BatchItem(index, custom_id, body)
            error_draw, expire_draw = rng.random(), rng.random()
            if settings.expire_batch:
                item.fate = "expire"
            elif invalid:
                item.fate, item.error_kind, item.error_message = "error", "invalid_request_error", invalid
            elif custom_id in settings.batch_error_ids or error_draw < settings.batch_error_rate:
                item.fate = "error"
                item.error_kind = settings.batch_error_ids.get(custom_id) or settings.batch_error_type
                item.error_message = f"{item.error_kind} scripted by the fake provider for {custom_id!r}"
            elif custom_id in settings.batch_expire_ids or expire_draw < settings.batch_expire_rate:
                item.fate = "expire"
            items.append(item)
        batch = _Batch(vendor, self._new_id(vendor), now, settings, items)
        rng.shuffle(batch.order)
        if len(items) > 1 and batch.order == sorted(batch.order):
            batch.order = batch.order[1:] + batch.order[:1]  # never the submission order
        return batch

    def _queue_refusal(self, tokens: dict[str, int], now: float) -> tuple[str, int, int, int | None] | None:
        """(model, cap, queued, retry_after) when adding `tokens` would pass a model's queued-token cap."""
        settings = self.provider.batch_settings
        for model, adding in sorted(tokens.items()):
            cap = settings.queued_cap(model)
            if cap is None:
                continue
            queued, ends = 0, []
            for batch in self.batches.values():
                if batch.unfinished(now) and batch.tokens_by_model().get(model):
                    queued += batch.tokens_by_model()[model]
                    ends.append(batch.end_time())
            if queued + adding > cap:
                retry_after = max(1, math.ceil(min(ends) - now)) if ends else None
                return model, cap, queued, retry_after
        return None

    # -- Anthropic Message Batches

    def _anthropic(self, method: str, rest: list[str], query: dict[str, str], raw: bytes, now: float) -> _Reply:
        vendor = "anthropic"
        if not rest:
            if method == "POST":
                return self._anthropic_create(raw, now)
            if method == "GET":
                return self._anthropic_list(query, now)
        else:
            batch = self._batch(vendor, rest[0])
            if batch is None:
                self._log(vendor, "lookup", 404, "not_found", batch_id=rest[0])
                return self._not_found(vendor, f"Message Batch {rest[0]!r} not found.")
            self._advance(batch, now)
            shape = (method, tuple(rest[1:]))
            if shape == ("GET", ()):
                self._log(
                    vendor, "retrieve", 200, "ok", batch_id=batch.id, processing_status=self._anthropic_status(batch)
                )
                return self._reply(vendor, 200, self._anthropic_render(batch))
            if shape == ("GET", ("results",)):
                return self._anthropic_results(batch, now)
            if shape == ("POST", ("cancel",)):
                return self._anthropic_cancel(batch, now)
            if shape == ("DELETE", ()):
                if batch.ended_at is None:
                    self._log(vendor, "delete", 400, "in_progress", batch_id=batch.id)
                    return self._bad_request(
                        vendor, f"Message Batch {batch.id} is still in progress: cancel it before deleting it."
                    )
                del self.batches[batch.id]
                self._log(vendor, "delete", 200, "ok", batch_id=batch.id)
                return self._reply(vendor, 200, {"id": batch.id, "type": "message_batch_deleted"})
        return self._not_found(vendor, f"no route {method} {ANTHROPIC_BATCHES_PATH}/{'/'.join(rest)}")

    def _anthropic_refuse(self, status: int, kind: str, message: str, **extra: Any) -> _Reply:
        headers = {}
        if extra.get("retry_after") is not None:
            headers["retry-after"] = str(extra["retry_after"])
        self._log("anthropic", "create", status, extra.pop("outcome"), batch_id=None, **extra)
        return self._reply("anthropic", status, _anthropic_error(kind, message), headers)

    def _anthropic_create(self, raw: bytes, now: float) -> _Reply:
        settings = self.provider.batch_settings
        max_bytes = settings.max_batch_bytes or ANTHROPIC_MAX_BATCH_BYTES
        if len(raw) > max_bytes:
            return self._anthropic_refuse(
                413,
                "request_too_large",
                f"Request exceeds the maximum allowed number of bytes for a Message Batch ({max_bytes}).",
                outcome="too_large",
                bytes=len(raw),
            )
        try:
            body = json.loads(raw or b"{}")
            requests = body.get("requests") if isinstance(body, dict) else None
        except ValueError:
            requests = None
        if not isinstance(requests, list) or not requests:
            return self._anthropic_refuse(
                400, "invalid_request_error", "requests: a non-empty list of requests is required", outcome="invalid"
            )
        max_requests = settings.max_batch_requests or ANTHROPIC_MAX_BATCH_REQUESTS
        if len(requests) > max_requests:
            return self._anthropic_refuse(
                400,
                "invalid_request_error",
                f"requests: List should have at most {max_requests} items after validation, not {len(requests)}",
                outcome="too_many_requests",
                requests=len(requests),
            )
        specs: list[tuple[str, dict[str, Any], str]] = []
        seen: set[str] = set()
        for index, request in enumerate(requests):
            custom_id = request.get("custom_id") if isinstance(request, dict) else None
            params = request.get("params") if isinstance(request, dict) else None
            problem = None
            if not isinstance(custom_id, str) or not _CUSTOM_ID.fullmatch(custom_id):
                problem = f"requests.{index}.custom_id: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'"
            elif custom_id in seen:
                problem = f"requests.{index}.custom_id: custom_id {custom_id!r} is not unique within the batch"
            elif not isinstance(params, dict):
                problem = f"requests.{index}.params: Field required"
            if problem or not isinstance(custom_id, str) or not isinstance(params, dict):
                return self._anthropic_refuse(400, "invalid_request_error", str(problem), outcome="invalid")
            seen.add(custom_id)
            # Anthropic checks params when it processes the request: a bad one errors alone.
            missing = [name for name in ("model", "max_tokens", "messages") if name not in params]
            invalid = f"{missing[0]}: Field required" if missing else ""
            specs.append((custom_id, params, invalid))
        batch = self._build("anthropic", specs, now)
        summary = self._summary_fields(batch)
        refusal = self._queue_refusal(batch.tokens_by_model(), now)
        if refusal is not None:
            model, cap, queued, retry_after = refusal
            self.seq -= 1
            return self._anthropic_refuse(
                429,
                "rate_limit_error",
                f"Number of queued batch tokens for {model} would exceed your rate limit of {cap} "
                f"({queued} already queued). Please try again once some in-progress batches have ended.",
                outcome="queued_tokens",
                retry_after=retry_after,
                **summary,
            )
        self.batches[batch.id] = batch
        self._log("anthropic", "create", 200, "ok", batch_id=batch.id, **summary)
        return self._reply("anthropic", 200, self._anthropic_render(batch, creating=True))

    @staticmethod
    def _summary_fields(batch: _Batch) -> dict[str, Any]:
        return {
            "requests": len(batch.items),
            "custom_ids": [item.custom_id for item in batch.items],
            "models": sorted({item.model for item in batch.items}),
            "max_tokens": sum(item.max_tokens for item in batch.items),
        }

    @staticmethod
    def _anthropic_status(batch: _Batch) -> str:
        if batch.ended_at is not None:
            return "ended"
        return "canceling" if batch.cancel_at is not None else "in_progress"

    def _anthropic_render(self, batch: _Batch, *, creating: bool = False) -> dict[str, Any]:
        ended = batch.ended_at is not None and not creating
        counts = {"processing": 0 if ended else len(batch.items)}
        for outcome in ("succeeded", "errored", "canceled", "expired"):
            counts[outcome] = batch.count(outcome) if ended else 0
        return {
            "id": batch.id,
            "type": "message_batch",
            "processing_status": "in_progress" if creating else self._anthropic_status(batch),
            "request_counts": counts,
            "ended_at": _rfc3339(batch.ended_at) if ended else None,
            "created_at": _rfc3339(batch.created),
            "expires_at": _rfc3339(batch.created + BATCH_WINDOW_S),
            "archived_at": None,
            "cancel_initiated_at": _rfc3339(batch.cancel_at),
            "results_url": f"{self.provider.url}{ANTHROPIC_BATCHES_PATH}/{batch.id}/results" if ended else None,
        }

    def _anthropic_results(self, batch: _Batch, now: float) -> _Reply:
        if not batch.results_ready(now):
            self._log("anthropic", "results", 404, "not_ready", batch_id=batch.id)
            return self._not_found("anthropic", f"Results for Message Batch {batch.id} are not available yet.")
        lines = []
        for index in batch.order:
            item = batch.items[index]
            result: dict[str, Any] = {"type": item.outcome}
            if item.outcome == "succeeded":
                result["message"] = item.answer
            elif item.outcome == "errored":
                result["error"] = _anthropic_error(item.error_kind, item.error_message)
            lines.append(json.dumps({"custom_id": item.custom_id, "result": result}) + "\n")
        self._log("anthropic", "results", 200, "ok", batch_id=batch.id, lines=len(lines))
        return 200, "".join(lines).encode("utf-8"), self._headers("anthropic"), "application/binary"

    def _anthropic_cancel(self, batch: _Batch, now: float) -> _Reply:
        if batch.ended_at is not None:
            self._log("anthropic", "cancel", 400, "ended", batch_id=batch.id)
            return self._bad_request("anthropic", f"Message Batch {batch.id} has already ended and cannot be canceled.")
        if batch.cancel_at is None:
            batch.cancel_at = now
        self._log("anthropic", "cancel", 200, "ok", batch_id=batch.id)
        return self._reply("anthropic", 200, self._anthropic_render(batch))

    def _anthropic_list(self, query: dict[str, str], now: float) -> _Reply:
        self._advance_all("anthropic", now)
        batches = self._listed("anthropic")
        try:
            limit = min(1000, max(1, int(query.get("limit") or 20)))
        except ValueError:
            return self._bad_request("anthropic", "limit: Input should be a valid integer")
        ids = [batch.id for batch in batches]
        if query.get("after_id") in ids:
            batches = batches[ids.index(query["after_id"]) + 1 :]
            page = batches[:limit]
        elif query.get("before_id") in ids:
            batches = batches[: ids.index(query["before_id"])]
            page = batches[-limit:]
        else:
            page = batches[:limit]
        self._log("anthropic", "list", 200, "ok", batches=len(page))
        return self._reply(
            "anthropic",
            200,
            {
                "data": [self._anthropic_render(batch) for batch in page],
                "has_more": len(batches) > len(page),
                "first_id": page[0].id if page else None,
                "last_id": page[-1].id if page else None,
            },
        )

    def _listed(self, vendor: str) -> list[_Batch]:
        """The vendor's batches, most recently created first."""
        return list(reversed([batch for batch in self.batches.values() if batch.vendor == vendor]))

    # -- OpenAI Batch API

    def _openai(self, method: str, rest: list[str], query: dict[str, str], raw: bytes, now: float) -> _Reply:
        vendor = "openai"
        if not rest:
            if method == "POST":
                return self._openai_create(raw, now)
            if method == "GET":
                return self._openai_list(query, now)
        else:
            batch = self._batch(vendor, rest[0])
            if batch is None:
                self._log(vendor, "lookup", 404, "not_found", batch_id=rest[0])
                return self._not_found(vendor, f"No batch found with id '{rest[0]}'.")
            self._advance(batch, now)
            shape = (method, tuple(rest[1:]))
            if shape == ("GET", ()):
                self._log(
                    vendor, "retrieve", 200, "ok", batch_id=batch.id, batch_status=self._openai_status(batch, now)
                )
                return self._reply(vendor, 200, self._openai_render(batch, now))
            if shape == ("POST", ("cancel",)):
                return self._openai_cancel(batch, now)
        return self._not_found(vendor, f"no route {method} {OPENAI_BATCHES_PATH}/{'/'.join(rest)}")

    def _openai_refuse(self, status: int, error: dict[str, Any], **extra: Any) -> _Reply:
        headers = {}
        if extra.get("retry_after") is not None:
            headers["retry-after"] = str(extra["retry_after"])
        self._log("openai", "create", status, extra.pop("outcome"), batch_id=None, **extra)
        return self._reply("openai", status, error, headers)

    def _openai_create(self, raw: bytes, now: float) -> _Reply:
        settings = self.provider.batch_settings
        try:
            body = json.loads(raw or b"{}")
            if not isinstance(body, dict):
                raise ValueError("not an object")
        except ValueError:
            return self._openai_refuse(400, _openai_error("The request body is not a JSON object."), outcome="invalid")
        for name in ("input_file_id", "endpoint", "completion_window"):
            if not body.get(name):
                return self._openai_refuse(
                    400, _openai_error(f"Missing required parameter: '{name}'.", param=name), outcome="invalid"
                )
        if body["endpoint"] != OPENAI_PATH:
            return self._openai_refuse(
                400,
                _openai_error(
                    f"The fake provider batches only {OPENAI_PATH}, not {body['endpoint']!r}.", param="endpoint"
                ),
                outcome="invalid",
            )
        if body["completion_window"] != "24h":
            return self._openai_refuse(
                400,
                _openai_error(
                    f"Invalid value for 'completion_window': {body['completion_window']!r}; supported: '24h'.",
                    param="completion_window",
                ),
                outcome="invalid",
            )
        source = self.files.get(str(body["input_file_id"]))
        if source is None or source.purpose != "batch":
            return self._openai_refuse(
                400,
                _openai_error(
                    f"Invalid 'input_file_id': {body['input_file_id']!r}: no file with purpose 'batch' has this id.",
                    param="input_file_id",
                ),
                outcome="invalid",
            )
        specs, errors, model = self._openai_lines(source.content)
        failed = list(errors)
        max_requests = settings.max_batch_requests or OPENAI_MAX_BATCH_REQUESTS
        if len(specs) > max_requests:
            message = f"The batch input file contains {len(specs)} requests; a batch holds at most {max_requests}."
            if settings.openai_limit_style == "http":
                return self._openai_refuse(
                    400,
                    _openai_error(message, param="input_file_id", code="too_many_tasks"),
                    outcome="too_many_requests",
                    requests=len(specs),
                )
            failed.append(_batch_error("too_many_tasks", message))
        batch = self._build("openai", specs, now)
        batch.input_file_id, batch.metadata, batch.model = source.id, body.get("metadata"), model
        summary = self._summary_fields(batch)
        if not failed:
            refusal = self._queue_refusal(batch.tokens_by_model(), now)
            if refusal is not None:
                model_name, cap, _queued, retry_after = refusal
                message = (
                    f"Enqueued token limit reached for {model_name} in organization org-fake. "
                    f"Limit: {cap:,} enqueued tokens. Please try again once some in_progress batches have been completed."
                )
                if settings.openai_limit_style == "http":
                    self.seq -= 1
                    return self._openai_refuse(
                        429,
                        _openai_error(message, kind="rate_limit_exceeded", code="token_limit_exceeded"),
                        outcome="queued_tokens",
                        retry_after=retry_after,
                        **summary,
                    )
                failed.append(_batch_error("token_limit_exceeded", message))
        if failed:
            batch.failed_errors = failed
        self.batches[batch.id] = batch
        self._log("openai", "create", 200, "failed" if failed else "ok", batch_id=batch.id, **summary)
        return self._reply("openai", 200, self._openai_render(batch, now, creating=True))

    def _openai_lines(
        self, content: bytes
    ) -> tuple[list[tuple[str, dict[str, Any], str]], list[dict[str, Any]], str | None]:
        """The requests of a batch input file, the validation errors OpenAI would fail
        the batch with, and the batch's model."""
        specs: list[tuple[str, dict[str, Any], str]] = []
        errors: list[dict[str, Any]] = []
        seen: set[str] = set()
        model: str | None = None
        try:
            text = content.decode("utf-8")
        except UnicodeDecodeError:
            return [], [_batch_error("invalid_json_line", "The file is not UTF-8 encoded JSONL.", 1)], None
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                request = json.loads(line)
            except ValueError:
                errors.append(_batch_error("invalid_json_line", "This line is not parseable as valid JSON.", number))
                continue
            if not isinstance(request, dict):
                errors.append(_batch_error("invalid_json_line", "This line is not a JSON object.", number))
                continue
            custom_id, body = request.get("custom_id"), request.get("body")
            if not isinstance(custom_id, str) or not custom_id:
                errors.append(
                    _batch_error("missing_required_parameter", "Missing 'custom_id'.", number, param="custom_id")
                )
            elif custom_id in seen:
                errors.append(
                    _batch_error(
                        "duplicate_custom_id",
                        "The custom_id for this request is a duplicate of another request. "
                        "The custom_id parameter must be unique for each individual request in a batch.",
                        number,
                        param="custom_id",
                    )
                )
            elif request.get("method") != "POST":
                errors.append(_batch_error("invalid_method", "The method must be 'POST'.", number, param="method"))
            elif request.get("url") != OPENAI_PATH:
                errors.append(
                    _batch_error(
                        "url_mismatch",
                        "The provided URL for this request does not match the endpoint of the batch.",
                        number,
                        param="url",
                    )
                )
            elif not isinstance(body, dict):
                errors.append(_batch_error("missing_required_parameter", "Missing 'body'.", number, param="body"))
            elif model is not None and body.get("model") != model:
                errors.append(
                    _batch_error(
                        "model_mismatch",
                        "The provided model for this request does not match the model of the other requests; "
                        "a batch input file holds requests for a single model.",
                        number,
                        param="body.model",
                    )
                )
            else:
                seen.add(custom_id)
                model = model if model is not None else str(body.get("model") or "")
                invalid = "" if "messages" in body else "Missing required parameter: 'messages'."
                specs.append((custom_id, body, invalid))
        if not specs and not errors:
            errors.append(_batch_error("empty_file", "The batch input file is empty."))
        return specs, errors, model

    def _openai_status(self, batch: _Batch, now: float, creating: bool = False) -> str:
        if creating:
            return "validating"
        if batch.failed_errors is not None:
            return "failed"
        if batch.ended_at is None:
            return "cancelling" if batch.cancel_at is not None else "in_progress"
        if batch.end_kind == "completed" and not batch.results_ready(now):
            return "finalizing"
        return str(batch.end_kind)

    def _openai_render(self, batch: _Batch, now: float, *, creating: bool = False) -> dict[str, Any]:
        status = self._openai_status(batch, now, creating)
        ended = batch.ended_at is not None and status not in ("validating", "finalizing")
        succeeded = [item for item in batch.items if item.outcome == "succeeded"]
        input_tokens = sum(item.usage[0] for item in succeeded)
        output_tokens = sum(item.usage[1] for item in succeeded)
        end_kind = batch.end_kind if ended else None
        return {
            "id": batch.id,
            "object": "batch",
            "endpoint": batch.endpoint,
            "model": batch.model,
            "errors": {"object": "list", "data": batch.failed_errors} if batch.failed_errors is not None else None,
            "input_file_id": batch.input_file_id,
            "completion_window": batch.completion_window,
            "status": status,
            "output_file_id": batch.output_file_id if ended else None,
            "error_file_id": batch.error_file_id if ended else None,
            "created_at": int(batch.created),
            "in_progress_at": None if creating or batch.failed_errors is not None else int(batch.created),
            "expires_at": int(batch.created + BATCH_WINDOW_S),
            "finalizing_at": _unix(batch.ended_at)
            if batch.end_kind == "completed" and status != "in_progress"
            else None,
            "completed_at": _unix((batch.ended_at or 0) + batch.results_delay) if end_kind == "completed" else None,
            "failed_at": int(batch.created) if status == "failed" else None,
            "expired_at": _unix(batch.ended_at) if end_kind == "expired" else None,
            "cancelling_at": _unix(batch.cancel_at),
            "cancelled_at": _unix(batch.ended_at) if end_kind == "cancelled" else None,
            "request_counts": {
                "total": 0 if batch.failed_errors is not None else len(batch.items),
                "completed": len(succeeded),
                # progress counters: requests that never ran (expired, cancelled) count in neither
                "failed": batch.count("errored"),
            },
            "usage": {
                "input_tokens": input_tokens,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": output_tokens,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": input_tokens + output_tokens,
            },
            "metadata": batch.metadata,
        }

    def _write_openai_files(self, batch: _Batch, at: float) -> None:
        output, errors = [], []
        for index in batch.order:
            item = batch.items[index]
            line: dict[str, Any] = {"id": item.line_id, "custom_id": item.custom_id, "response": None, "error": None}
            if item.outcome == "succeeded":
                line["response"] = {"status_code": 200, "request_id": item.request_id, "body": item.answer}
                output.append(line)
                continue
            if item.outcome == "errored":
                status, kind = BATCH_ERROR_KINDS[item.error_kind]
                line["response"] = {
                    "status_code": status,
                    "request_id": item.request_id,
                    "body": _openai_error(item.error_message, kind=kind),
                }
            elif item.outcome == "expired":
                line["error"] = {
                    "code": "batch_expired",
                    "message": "This request could not be executed before the completion window expired.",
                }
            else:
                line["error"] = {
                    "code": "batch_cancelled",
                    "message": "This request was not executed because the batch was cancelled.",
                }
            errors.append(line)
        for lines, suffix in ((output, "output"), (errors, "error")):
            if lines:
                content = "".join(json.dumps(line) + "\n" for line in lines).encode("utf-8")
                file = _File(f"batch_{batch.id}_{suffix}.jsonl", "batch_output", content, at)
                self.files[file.id] = file
                if suffix == "output":
                    batch.output_file_id = file.id
                else:
                    batch.error_file_id = file.id

    def _openai_cancel(self, batch: _Batch, now: float) -> _Reply:
        if batch.failed_errors is not None or batch.ended_at is not None:
            status = self._openai_status(batch, now)
            self._log("openai", "cancel", 400, status, batch_id=batch.id)
            return self._bad_request("openai", f"Cannot cancel a batch with status '{status}'.")
        if batch.cancel_at is None:
            batch.cancel_at = now
        self._log("openai", "cancel", 200, "ok", batch_id=batch.id)
        return self._reply("openai", 200, self._openai_render(batch, now))

    def _openai_list(self, query: dict[str, str], now: float) -> _Reply:
        self._advance_all("openai", now)
        batches = self._listed("openai")
        try:
            limit = min(100, max(1, int(query.get("limit") or 20)))
        except ValueError:
            return self._bad_request("openai", "Invalid 'limit': expected an integer.", param="limit")
        ids = [batch.id for batch in batches]
        if query.get("after") in ids:
            batches = batches[ids.index(query["after"]) + 1 :]
        page = batches[:limit]
        self._log("openai", "list", 200, "ok", batches=len(page))
        return self._reply(
            "openai",
            200,
            {
                "object": "list",
                "data": [self._openai_render(batch, now) for batch in page],
                "first_id": page[0].id if page else None,
                "last_id": page[-1].id if page else None,
                "has_more": len(batches) > len(page),
            },
        )

    # -- OpenAI Files

    def _files(self, method: str, rest: list[str], headers: Any, raw: bytes, now: float) -> _Reply:
        vendor = "openai"
        if not rest and method == "POST":
            return self._file_upload(str(headers.get("Content-Type") or ""), raw, now)
        if rest:
            file = self.files.get(rest[0])
            if file is None:
                self._log(vendor, "file_lookup", 404, "not_found", file_id=rest[0])
                return self._not_found(vendor, f"No such File object: {rest[0]}")
            shape = (method, tuple(rest[1:]))
            if shape == ("GET", ()):
                self._log(vendor, "file_retrieve", 200, "ok", file_id=file.id)
                return self._reply(vendor, 200, file.render())
            if shape == ("GET", ("content",)):
                self._log(vendor, "file_content", 200, "ok", file_id=file.id, bytes=len(file.content))
                return 200, file.content, self._headers(vendor), "application/octet-stream"
            if shape == ("DELETE", ()):
                del self.files[file.id]
                self._log(vendor, "file_delete", 200, "ok", file_id=file.id)
                return self._reply(vendor, 200, {"id": file.id, "object": "file", "deleted": True})
        return self._not_found(vendor, f"no route {method} {OPENAI_FILES_PATH}/{'/'.join(rest)}")

    def _file_upload(self, content_type: str, raw: bytes, now: float) -> _Reply:
        vendor = "openai"

        def refuse(message: str, param: str | None = None) -> _Reply:
            self._log(vendor, "file_upload", 400, "refused", bytes=len(raw), reason=message)
            return self._bad_request(vendor, message, param=param)

        try:
            form = _multipart(content_type, raw)
        except ValueError:
            return refuse("Expected a multipart/form-data body.")
        purpose = form.get("purpose", (None, b""))[1].decode("utf-8", "replace")
        if "file" not in form:
            return refuse("Missing required parameter: 'file'.", "file")
        filename, content = form["file"]
        filename = filename or "upload"
        if purpose not in ("assistants", "batch", "fine-tune", "vision", "user_data", "evals"):
            return refuse(f"Invalid value for 'purpose': {purpose!r}.", "purpose")
        if purpose == "batch":
            if not filename.endswith(".jsonl"):
                return refuse("Invalid file format for Batch API. Must be .jsonl", "file")
            if len(content) > (self.provider.batch_settings.max_batch_bytes or OPENAI_MAX_BATCH_BYTES):
                return refuse("File is too large.", "file")
        file = _File(filename, purpose, content, now)
        self.files[file.id] = file
        self._log(vendor, "file_upload", 200, "ok", file_id=file.id, bytes=len(content), purpose=purpose)
        return self._reply(vendor, 200, file.render())

    # -- for tests

    def summaries(self) -> list[dict[str, Any]]:
        with self.lock:
            now = time.time()
            result = []
            for batch in self.batches.values():
                self._advance(batch, now)
                status = (
                    self._anthropic_status(batch) if batch.vendor == "anthropic" else self._openai_status(batch, now)
                )
                result.append(
                    {
                        "id": batch.id,
                        "provider": batch.vendor,
                        "status": status,
                        "custom_ids": [item.custom_id for item in batch.items],
                        "outcomes": {item.custom_id: item.outcome for item in batch.items},
                        "results_order": [batch.items[index].custom_id for index in batch.order],
                    }
                )
            return result


# --------------------------------------------------------------------------- CLI


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m vetq.eval.fake_provider", description="Serve a fake OpenAI/Anthropic endpoint on 127.0.0.1."
    )
    parser.add_argument("--port", type=int, default=0, help="port to listen on (0: any free port)")
    parser.add_argument("--rpm", type=int, default=None, help="requests per minute before 429s")
    parser.add_argument("--tpm", type=int, default=None, help="tokens per minute before 429s")
    parser.add_argument("--latency-ms", type=float, default=0, help="delay before every answer")
    parser.add_argument("--window-s", type=float, default=None, help="length of the rate-limit window (default 60)")
    parser.add_argument("--batch-delay", type=float, default=0.0, help="seconds a batch takes to end (default 0)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the batch draws (errors, expiry, result order)")
    args = parser.parse_args(argv)

    done = threading.Event()

    def _stop(signum: int, frame: object) -> None:
        done.set()

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    provider = FakeProvider(
        rpm=args.rpm,
        tpm=args.tpm,
        latency_ms=args.latency_ms,
        port=args.port,
        window_s=args.window_s,
        seed=args.seed,
        batch_delay=args.batch_delay,
    ).start()
    print(f"fake provider listening on {provider.url}", file=sys.stderr, flush=True)
    try:
        while not done.wait(0.5):
            pass
    finally:
        provider.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
