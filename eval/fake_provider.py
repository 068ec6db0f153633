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
* ``POST /_control`` with a JSON object: ``{"reset": true}``, ``"rpm"``,
  ``"tpm"``, ``"latency_ms"`` (null lifts a limit), ``"faults": [{..., "model":
  optional}]``, ``"script": {"texts": [...], "model": optional}``.

Run it standalone with ``python -m vetq.eval.fake_provider --port 8999 --rpm 60``.
It binds 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import json
import math
import select
import signal
import socket
import sys
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

HOST = "127.0.0.1"
WINDOW_S = 60.0
NOMINAL_RPM = 10_000
NOMINAL_TPM = 10_000_000
DEFAULT_TEXT = '{"ok": true}'
# How often a delayed answer checks whether its client has hung up.
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

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        if path == "/_log":
            self._send_json(200, self.server.provider.log)
        elif path in ("/_health", "/healthz"):
            self._send_json(200, {"ok": True})
        else:
            self._send_json(404, {"error": {"type": "not_found_error", "message": f"no route {path}"}})

    def do_POST(self) -> None:
        path = self.path.split("?", 1)[0]
        raw = self._read_body()
        provider = self.server.provider
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


def _peer_closed(conn: socket.socket) -> bool:
    """The client closed its end: the socket reads as end-of-file. (A client waiting for
    its answer sends nothing, so readable means closed.)"""
    try:
        readable, _, _ = select.select([conn], [], [], 0)
        return bool(readable) and conn.recv(1, socket.MSG_PEEK) == b""
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
        self._clear()

    def _clear(self) -> None:
        self._window: deque[tuple[float, int]] = deque()
        self._faults: dict[str | None, deque[dict[str, Any]]] = {}
        self._scripts: dict[str | None, deque[str]] = {}
        self._cooldown_until: dict[str, float] = {}
        self._log: list[dict[str, Any]] = []

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
        """Forget the window, faults, scripts, cooldowns and log (keep rpm/tpm/latency)."""
        with self._lock:
            self._clear()

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
            }

    @property
    def log(self) -> list[dict[str, Any]]:
        with self._lock:
            return [dict(entry) for entry in self._log]

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
            if self._stopping.wait(min(left, HANGUP_POLL_S)):
                return False
            if _peer_closed(handler.connection):
                with self._lock:
                    decision.entry["client_closed"] = True
                return False
        return True

    def _serve_model_call(self, handler: _Handler, path: str, raw: bytes, body: dict[str, Any]) -> None:
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
        model = str(body.get("model") or "fake-model")
        prompt_tokens = _estimate_tokens(json.dumps([body.get("system"), body.get("messages")]))
        completion_tokens = _estimate_tokens(text)
        payload: dict[str, Any]
        if path == ANTHROPIC_PATH:
            payload = {
                "id": f"msg_{uuid.uuid4().hex[:24]}",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [{"type": "text", "text": text}],
                "stop_reason": "max_tokens" if truncated else "end_turn",
                "stop_sequence": None,
                "usage": {"input_tokens": prompt_tokens, "output_tokens": completion_tokens},
            }
        else:
            payload = {
                "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": model,
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
        handler._send_json(200, payload, headers)


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
    args = parser.parse_args(argv)

    done = threading.Event()

    def _stop(signum: int, frame: object) -> None:
        done.set()

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    provider = FakeProvider(
        rpm=args.rpm, tpm=args.tpm, latency_ms=args.latency_ms, port=args.port, window_s=args.window_s
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
