"""`vetq mcp` end to end: the real server process, driven by the MCP SDK's own stdio
client (and, for the stdout check, by raw JSON-RPC lines over pipes).

One server process per environment (module-scoped): the default one runs on the
embedded Redis and an in-process worker; validate runs heuristics-only, so no
provider key or SDK is involved. Every wait is bounded."""

from __future__ import annotations

import asyncio
import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import GLOBEX, GLOBEX_DATA, starts_processes

REPO = Path(__file__).resolve().parents[1]
SERVER_CMD = [sys.executable, "-m", "vetq.api_client.cli", "mcp"]
CALL_TIMEOUT_S = 90.0
START_TIMEOUT_S = 60.0

TOOLS = {"extract", "validate", "list_schemas", "review_decision", "should_review", "record_outcome", "job_result"}
# The job tools take the lane arguments beside their request model's fields.
JOB_ARGUMENTS = {"lane", "bulk_deadline", "realtime_fallback", "priority", "tenant", "idempotency_key"}

PLAN = (
    "Replace the Postgres polling job table with a Redis Streams consumer group, move every writer to XADD, "
    "and retire the cron sweeper once the backlog has drained."
)
BLIND_OBJECTIVE = "Job pickup latency must drop below one second at ten times today's volume."


def _server_env(tmp: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {"VETQ_HOME": str(tmp / "vetq-home"), "PYTHONPATH": str(REPO), "PYTHONUNBUFFERED": "1"}
    env.update(extra or {})
    return env


class McpServer:
    """A `vetq mcp` process and an initialized ClientSession, driven from a private
    event loop in a background thread so tests can share one across a module."""

    def __init__(self, env: dict[str, str], errlog: Path) -> None:
        self.env = env
        self.errlog_path = errlog
        self.loop: asyncio.AbstractEventLoop | None = None
        self.session: Any = None
        self.error: BaseException | None = None
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._run, name="mcp-test-client", daemon=True)

    def start(self) -> McpServer:
        self._thread.start()
        if not self._ready.wait(START_TIMEOUT_S):
            raise TimeoutError(f"vetq mcp did not initialize in {START_TIMEOUT_S}s; stderr: {self.stderr()[-2000:]}")
        if self.error is not None:
            raise RuntimeError(f"vetq mcp failed to start: {self.error!r}; stderr: {self.stderr()[-2000:]}")
        return self

    def _run(self) -> None:
        asyncio.run(self._main())

    async def _main(self) -> None:
        from mcp.client.session import ClientSession
        from mcp.client.stdio import StdioServerParameters, stdio_client

        self.loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        params = StdioServerParameters(command=SERVER_CMD[0], args=SERVER_CMD[1:], env=self.env, cwd=str(REPO))
        errlog = open(self.errlog_path, "w", encoding="utf-8")  # noqa: SIM115 - a file for the child's stderr
        try:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write, read_timeout_seconds=CALL_TIMEOUT_S) as session,
            ):
                await asyncio.wait_for(session.initialize(), START_TIMEOUT_S)
                self.session = session
                self._ready.set()
                await self._stop.wait()
        except BaseException as exc:  # noqa: BLE001 - reported to the test thread
            self.error = exc
        finally:
            errlog.close()
            self._ready.set()

    def run(self, make_coro: Any, timeout: float = CALL_TIMEOUT_S) -> Any:
        assert self.loop is not None and self.session is not None, "server not started"
        future = asyncio.run_coroutine_threadsafe(make_coro(self.session), self.loop)
        return future.result(timeout)

    def list_tools(self) -> dict[str, Any]:
        result = self.run(lambda s: s.list_tools())
        return {tool.name: tool for tool in result.tools}

    def call(self, name: str, arguments: dict[str, Any]) -> Any:
        return self.run(lambda s: s.call_tool(name, arguments))

    def stderr(self) -> str:
        try:
            return self.errlog_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""

    def stop(self) -> None:
        if self.loop is not None and self._stop is not None:
            self.loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(30)


def payload(result: Any) -> dict[str, Any]:
    """The result's structured content, checked against its text twin."""
    text = json.loads(result.content[0].text)
    assert result.structured_content == text
    return text


@pytest.fixture(scope="module")
@starts_processes
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("mcp-default")
    srv = McpServer(_server_env(tmp), tmp / "stderr.log").start()
    yield srv
    srv.stop()


@pytest.fixture(scope="module", params=["nan", "abc"], ids=["nan", "abc"])
@starts_processes
def malformed_floor_server(request, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("mcp-malformed")
    srv = McpServer(_server_env(tmp, {"VETQ_FIELD_THRESHOLD": request.param}), tmp / "stderr.log").start()
    yield srv
    srv.stop()


# --------------------------------------------------------------------- list_tools


@pytest.mark.processes
def test_lists_seven_tools_with_schemas_and_annotations(server):
    tools = server.list_tools()
    assert set(tools) == TOOLS

    required = {name: set(tool.input_schema.get("required", [])) for name, tool in tools.items()}
    assert required["extract"] == set()  # `text` or `pdf`, exactly one: the request model checks
    assert required["validate"] == {"data"}
    assert required["review_decision"] == {"objective", "proposed_solution", "decision_type", "risk_level"}
    assert required["should_review"] == {"decision_type", "risk_level"}
    assert required["record_outcome"] == {"review_id"}
    assert required["list_schemas"] == set()
    assert required["job_result"] == {"job_id"}

    # Every field tells the agent what it is for.
    for name, tool in tools.items():
        assert tool.description, name
        for field, schema in tool.input_schema["properties"].items():
            assert schema.get("description"), f"{name}.{field} has no description"

    # extract takes any schema: its title names no one record type
    assert tools["extract"].title == "Extract a verified record"
    assert all("invoice" not in (tool.title or "").lower() for tool in tools.values())

    review = tools["review_decision"]
    assert "BLINDNESS_LEAK" in review.description
    assert "proposed_solution" in review.description
    for blind in ("objective", "constraints", "context", "environment", "evidence"):
        assert blind in review.description
        assert "BLIND" in review.input_schema["properties"][blind]["description"]
    assert "should_review" in review.description
    assert set(review.input_schema["properties"]["decision_type"]["enum"]) >= {"architecture", "database"}

    hints = {
        name: (t.annotations.read_only_hint, t.annotations.idempotent_hint, t.annotations.open_world_hint)
        for name, t in tools.items()
    }
    assert hints == {
        "extract": (True, True, True),
        "validate": (True, True, True),
        "list_schemas": (True, True, False),
        "review_decision": (True, False, True),
        "should_review": (True, True, False),
        "record_outcome": (False, False, False),
        "job_result": (True, True, False),
    }


def test_tool_arguments_are_the_request_models_fields(server):
    """The schema a client sees is derived from the request models: the same fields
    (less the job kind and the trace id), their descriptions and their limits."""
    from vetq.core.extraction.schema import ExtractionRequest, ValidationRequest
    from vetq.core.review.schema import ReviewRequest
    from vetq.core.review.should_review import ShouldReviewRequest

    tools = server.list_tools()
    for name, model in (
        ("extract", ExtractionRequest),
        ("validate", ValidationRequest),
        ("review_decision", ReviewRequest),
        ("should_review", ShouldReviewRequest),
    ):
        schema = tools[name].input_schema
        # a field's wire name: `schema` is the alias of record_schema
        fields = {info.alias or f: info for f, info in model.model_fields.items() if f not in ("kind", "trace_id")}
        lane = JOB_ARGUMENTS if name != "should_review" else set()
        assert set(schema["properties"]) == set(fields) | lane, name
        assert set(schema.get("required", [])) == {f for f, info in fields.items() if info.is_required()}, name
        for field, info in fields.items():
            assert schema["properties"][field]["description"] == info.description, (name, field)
        if lane:
            assert schema["properties"]["lane"]["anyOf"][0]["enum"] == ["realtime", "bulk"], name
    review = tools["review_decision"].input_schema["properties"]
    assert review["objective"]["maxLength"] == 4_000 and review["proposed_solution"]["maxLength"] == 60_000
    assert review["review_mode"]["default"] == "blind_first"
    assert tools["should_review"].input_schema["properties"]["files_changed"]["default"] == 0


def test_a_null_argument_means_the_models_default(server):
    result = server.call(
        "should_review",
        {"decision_type": "implementation", "risk_level": "low", "summary": None, "files_changed": None},
    )
    assert result.is_error is False, payload(result)
    assert payload(result)["should_review"] is False


# --------------------------------------------------------------------- extraction


def test_validate_heuristics_only_through_the_embedded_queue(server):
    data = dict(GLOBEX_DATA, total=683.2)
    result = server.call("validate", {"text": GLOBEX, "data": data, "heuristics_only": True})
    assert result.is_error is False
    body = payload(result)
    assert body["status"] == "needs_review", body
    assert [f["field"] for f in body["flagged_fields"]] == ["total"]
    assert body["data"]["total"] == 683.2
    assert not any("raised from" in note for note in body["notes"])


def test_agent_threshold_below_the_floor_is_raised_and_noted(server):
    result = server.call(
        "validate",
        {
            "text": GLOBEX,
            "data": dict(GLOBEX_DATA, total=683.2),
            "heuristics_only": True,
            "field_threshold": 0,
            "overall_threshold": 0.9,
        },
    )
    body = payload(result)
    assert result.is_error is False
    assert "field_threshold raised from 0.0 to 0.7" in body["notes"]
    # Raising above the floor is the agent's right, and is not noted.
    assert not any(note.startswith("overall_threshold") for note in body["notes"])
    # The gate really ran at the floor: the wrong total is still flagged.
    assert body["status"] == "needs_review"
    assert "total" in [f["field"] for f in body["flagged_fields"]]


def test_extraction_input_error_is_an_envelope_not_a_tool_error(server):
    result = server.call("validate", {"text": "   ", "data": {}, "heuristics_only": True})
    assert result.is_error is False
    body = payload(result)
    assert body["status"] == "error" and body["error"]["code"] == "INVALID_INPUT"

    result = server.call("extract", {"text": GLOBEX, "field_threshold": 1.5})
    body = payload(result)
    assert result.is_error is False
    assert body["status"] == "error" and body["error"]["code"] == "INVALID_INPUT"


# --------------------------------------------------------------------- the bulk lane


@pytest.fixture(scope="module")
@starts_processes
def bulk_server(tmp_path_factory):
    """A server whose Critic is an Anthropic model answered by the fake provider's
    Message Batches, with a coordinator that flushes and polls at once."""
    from tests.conftest import critic_answer
    from vetq.eval.fake_provider import FakeProvider

    provider = FakeProvider(seed=5).start()
    provider.set_responder(lambda path, body: critic_answer())
    tmp = tmp_path_factory.mktemp("mcp-bulk")
    env = {
        "VETQ_CRITIC": "anthropic:claude-haiku-4-5",
        "ANTHROPIC_BASE_URL": provider.base_url_anthropic,
        "ANTHROPIC_API_KEY": "test-key-not-real",
        "VETQ_BULK_TICK_S": "0.1",
        "VETQ_BULK_FLUSH_AGE_S": "0",
        "VETQ_BULK_POLL_S": "0.1",
        "VETQ_BULK_POLL_MAX_S": "0.3",
    }
    srv = McpServer(_server_env(tmp, env), tmp / "stderr.log").start()
    srv.provider = provider
    yield srv
    srv.stop()
    provider.stop()


def test_a_bulk_job_returns_its_id_and_job_result_fetches_it(bulk_server):
    submitted = payload(bulk_server.call("validate", {"text": GLOBEX, "data": GLOBEX_DATA, "lane": "bulk"}))
    assert submitted["lane"] == "bulk" and submitted["status"] in ("queued", "running", "waiting"), submitted
    deadline = time.monotonic() + CALL_TIMEOUT_S
    while True:
        result = bulk_server.call("job_result", {"job_id": submitted["job_id"]})
        body = payload(result)
        if set(body) == {"job_id", "status"}:  # not done yet
            assert body["status"] in ("queued", "running", "waiting"), body
            assert time.monotonic() < deadline, body
            time.sleep(0.2)
            continue
        break
    assert result.is_error is False
    assert body["status"] == "ok", body
    assert body["usage"]["critic"]["cost_usd"] > 0
    answered = [e for e in bulk_server.provider.batch_log if e.get("op") == "answer"]
    assert [e["outcome"] for e in answered] == ["succeeded"]  # the Critic's call went in a Message Batch
    assert not [e for e in bulk_server.provider.log if e.get("path") == "/v1/messages"]


def test_job_result_of_an_unknown_id_is_an_error_envelope(bulk_server):
    body = payload(bulk_server.call("job_result", {"job_id": "no-such-job"}))
    assert body["status"] == "error" and body["error"]["code"] == "NOT_FOUND", body


# --------------------------------------------------------------------- review tools


def test_blindness_leak_is_a_tool_error(server):
    result = server.call(
        "review_decision",
        {
            "objective": BLIND_OBJECTIVE,
            "context": f"Our plan: {PLAN}",
            "proposed_solution": PLAN,
            "decision_type": "architecture",
            "risk_level": "high",
        },
    )
    assert result.is_error is True
    body = payload(result)
    assert body["error"]["code"] == "BLINDNESS_LEAK", body
    assert body["error"]["message"]


def test_review_input_error_is_a_tool_error(server):
    result = server.call(
        "review_decision",
        {"objective": BLIND_OBJECTIVE, "proposed_solution": PLAN, "decision_type": "vibes", "risk_level": "high"},
    )
    assert result.is_error is True
    assert payload(result)["error"]["code"] == "INVALID_INPUT"


def test_should_review(server):
    result = server.call(
        "should_review",
        {"decision_type": "database", "risk_level": "low", "summary": "migrate the orders table", "files_changed": 3},
    )
    assert result.is_error is False
    body = payload(result)
    assert body["should_review"] is True
    assert "database decision" in body["reasons"]

    result = server.call(
        "should_review", {"decision_type": "implementation", "risk_level": "low", "trivial_kind": "docs"}
    )
    assert payload(result)["should_review"] is False

    result = server.call("should_review", {"decision_type": "database", "risk_level": "low", "files_changed": -1})
    assert result.is_error is True
    assert payload(result)["error"]["code"] == "INVALID_INPUT"


def test_record_outcome_with_telemetry_off_is_a_config_error(server):
    result = server.call("record_outcome", {"review_id": "r-123", "accepted_review": True})
    assert result.is_error is True
    body = payload(result)
    assert body["error"]["code"] == "CONFIG_ERROR"
    assert "VETQ_TELEMETRY" in body["error"]["message"]


# --------------------------------------------------------------------- malformed floor


@pytest.mark.processes
def test_malformed_floor_fails_every_call_but_the_server_starts(malformed_floor_server):
    srv = malformed_floor_server
    assert set(srv.list_tools()) == TOOLS

    result = srv.call(
        "validate", {"text": GLOBEX, "data": dict(GLOBEX_DATA), "heuristics_only": True, "field_threshold": 0.9}
    )
    body = payload(result)
    assert body["status"] == "error" and body["error"]["code"] == "CONFIG_ERROR", body
    assert "VETQ_FIELD_THRESHOLD" in body["error"]["message"]

    result = srv.call("extract", {"text": GLOBEX, "heuristics_only": True})
    assert payload(result)["error"]["code"] == "CONFIG_ERROR"

    for name, arguments in (
        ("should_review", {"decision_type": "database", "risk_level": "low"}),
        (
            "review_decision",
            {
                "objective": BLIND_OBJECTIVE,
                "proposed_solution": PLAN,
                "decision_type": "architecture",
                "risk_level": "high",
            },
        ),
        ("record_outcome", {"review_id": "r-1"}),
    ):
        result = srv.call(name, arguments)
        assert result.is_error is True, name
        error = payload(result)["error"]
        assert error["code"] == "CONFIG_ERROR", (name, error)
        assert "VETQ_FIELD_THRESHOLD" in error["message"]


# --------------------------------------------------------------------- stdout discipline


@pytest.mark.processes
def test_nothing_but_protocol_messages_on_stdout(tmp_path):
    """Raw pipes: every byte the server writes to stdout must be a JSON-RPC line, across
    start-up, list_tools, a validate job that starts the embedded Redis and worker, and
    shutdown."""
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("VETQ_")}, **_server_env(tmp_path)}
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY"):
        env.pop(name, None)
    stderr_path = tmp_path / "stderr.log"
    with open(stderr_path, "wb") as stderr:
        proc = subprocess.Popen(
            SERVER_CMD, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, env=env, cwd=str(REPO)
        )
    lines: queue.Queue[bytes | None] = queue.Queue()

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    seen: list[bytes] = []

    def send(message: dict[str, Any]) -> None:
        assert proc.stdin is not None
        proc.stdin.write((json.dumps(message) + "\n").encode())
        proc.stdin.flush()

    def wait_for(request_id: int, timeout: float = CALL_TIMEOUT_S) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"no response to {request_id}; stderr: {stderr_path.read_text()[-2000:]}")
            try:
                line = lines.get(timeout=remaining)
            except queue.Empty:
                continue
            if line is None:
                raise AssertionError(f"server closed stdout; stderr: {stderr_path.read_text()[-2000:]}")
            seen.append(line)
            message = json.loads(line)
            if message.get("id") == request_id:
                return message

    try:
        send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "vetq-tests", "version": "0"},
                },
            }
        )
        assert "result" in wait_for(1)
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        assert {t["name"] for t in wait_for(2)["result"]["tools"]} == TOOLS
        send(
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "tools/call",
                "params": {
                    "name": "validate",
                    "arguments": {"text": GLOBEX, "data": dict(GLOBEX_DATA, total=683.2), "heuristics_only": True},
                },
            }
        )
        response = wait_for(3)
        assert response["result"]["structuredContent"]["status"] == "needs_review"
        proc.stdin.close()  # the client disconnects: the server stops its worker and Redis, and exits
        assert proc.wait(60) == 0
        while (line := lines.get(timeout=10)) is not None:
            seen.append(line)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)

    assert seen
    for line in seen:
        message = json.loads(line)  # anything else on stdout fails here
        assert isinstance(message, dict) and message.get("jsonrpc") == "2.0", line
