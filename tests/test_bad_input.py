"""Bad input on every face (CLI, batch lines, Python client, MCP) ends as a clear
INVALID_INPUT naming what to fix, or a JSON-RPC error: never a traceback, never a
record that silently lost a value, never a whole batch lost to one line."""

from __future__ import annotations

import json
import math
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
from vetq.api_client.batch import parse_batch_line
from vetq.core.errors import InvalidInputError

REPO = Path(__file__).resolve().parents[1]


def vetq_bytes(*args: str, input: bytes | None = None, env: dict[str, str] | None = None, timeout: float = 120):
    """The CLI as a subprocess fed raw bytes (stdout decoded, since it is always JSON)."""
    done = subprocess.run(
        [sys.executable, "-m", "vetq.api_client.cli", *args],
        input=input,
        capture_output=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )
    return done.returncode, done.stdout.decode("utf-8"), done.stderr.decode("utf-8", "replace")


def nested(depth: int, leaf: Any = 1) -> Any:
    value = leaf
    for _ in range(depth):
        value = {"x": value}
    return value


@pytest.fixture
def cli_env(redis_url, tmp_path):
    return {"VETQ_REDIS_URL": redis_url, "VETQ_HOME": str(tmp_path)}


# --------------------------------------------------------------------- NaN, Infinity, 1e400


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_a_batch_line_with_a_non_finite_amount_is_refused_naming_the_field(literal):
    line = '{"id": "a", "text": "Total 5.00", "data": {"total": ' + literal + "}}"
    _, parsed = parse_batch_line(line, kind="validate", number=3)
    assert parsed["status"] == "error" and parsed["error"]["code"] == "INVALID_INPUT"
    assert "line 3" in parsed["error"]["message"] and "data.total" in parsed["error"]["message"]


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_python_client_refuses_a_non_finite_amount_instead_of_sending_null(service, value):
    with pytest.raises(InvalidInputError) as refused:
        service.client.submit_validation(GLOBEX, dict(GLOBEX_DATA, total=value), heuristics_only=True)
    assert "total" in refused.value.message and "finite" in refused.value.message


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "1e400"])
def test_cli_data_with_a_non_finite_amount_exits_2_naming_the_field(service, cli_env, literal):
    data = json.dumps(GLOBEX_DATA).replace("583.2", literal)
    code, out, err = vetq_bytes("validate", "--heuristics-only", "--data", data, input=GLOBEX.encode(), env=cli_env)
    assert code == 2, out + err
    result = json.loads(out)
    assert result["error"]["code"] == "INVALID_INPUT" and "total" in result["error"]["message"], result


# --------------------------------------------------------------------- deep nesting


def test_a_deeply_nested_batch_line_is_refused_alone_and_the_batch_goes_on(service, cli_env):
    lines = [
        json.dumps({"id": "deep", "text": GLOBEX, "data": nested(900)}),
        json.dumps({"id": "good", "text": GLOBEX, "data": GLOBEX_DATA}),
        "[" * 5000 + "]" * 5000,
    ]
    code, out, err = vetq_bytes(
        "validate", "--batch", "--heuristics-only", "--timeout", "60", input="\n".join(lines).encode(), env=cli_env
    )
    results = [json.loads(line) for line in out.splitlines()]
    assert [r.get("id") for r in results] == ["deep", "good", None], out + err
    assert results[0]["error"]["code"] == "INVALID_INPUT" and "nested" in results[0]["error"]["message"]
    assert results[1]["status"] == "ok"
    assert results[2]["error"]["code"] == "INVALID_INPUT" and "line 3" in results[2]["error"]["message"]
    assert code == 2 and "Traceback" not in err


def test_python_batch_with_a_deeply_nested_record_keeps_the_other_jobs(service):
    batch = service.client.submit_batch(
        [
            {"kind": "validate", "text": GLOBEX, "data": nested(900), "heuristics_only": True},
            {"kind": "validate", "text": GLOBEX, "data": GLOBEX_DATA, "heuristics_only": True},
        ]
    )
    first, second = batch.results(timeout=60)
    assert first["error"]["code"] == "INVALID_INPUT" and "nested" in first["error"]["message"]
    assert second["status"] == "ok"


@pytest.mark.processes
def test_review_file_with_a_deeply_nested_array_is_invalid_input_not_a_traceback(tmp_path):
    request = tmp_path / "review.json"
    request.write_text('{"objective": "x", "constraints": ' + "[" * 5000 + "]" * 5000 + "}")
    code, out, err = vetq_bytes("review", "--file", str(request), env={"VETQ_HOME": str(tmp_path)})
    assert code == 2, out + err
    assert json.loads(out)["error"]["code"] == "INVALID_INPUT"
    assert "Traceback" not in err


# --------------------------------------------------------------------- encodings


def test_a_utf8_bom_on_a_batch_line_is_ignored():
    _, parsed = parse_batch_line('\ufeff{"text": "Total 5.00"}', kind="extract", number=1)
    assert parsed == {"text": "Total 5.00", "kind": "extract"}
    _, parsed = parse_batch_line(b'\xef\xbb\xbf{"text": "Total 5.00"}', kind="extract", number=1)
    assert parsed == {"text": "Total 5.00", "kind": "extract"}


@pytest.mark.processes
def test_invalid_utf8_is_refused_alike_on_stdin_and_in_a_file(tmp_path):
    document = GLOBEX.encode() + b"\xff\xfe broken\n"
    path = tmp_path / "doc.txt"
    path.write_bytes(document)
    env = {"VETQ_HOME": str(tmp_path), "LC_ALL": "C", "PYTHONUTF8": "0"}
    data = json.dumps(GLOBEX_DATA)
    for args, stdin in ((("--file", str(path)), None), ((), document)):
        code, out, err = vetq_bytes("validate", "--heuristics-only", "--data", data, *args, input=stdin, env=env)
        assert code == 2, (args, out, err)
        result = json.loads(out)
        assert result["error"]["code"] == "INVALID_INPUT" and "not UTF-8" in result["error"]["message"], result


def test_an_invalid_utf8_batch_line_is_refused_alone(service, cli_env):
    lines = [
        b'{"id": "bad", "text": "Total \xff 5.00"}',
        json.dumps({"id": "ok", "text": GLOBEX, "data": GLOBEX_DATA}).encode(),
    ]
    _code, out, err = vetq_bytes(
        "validate", "--batch", "--heuristics-only", "--timeout", "60", input=b"\n".join(lines), env=cli_env
    )
    results = [json.loads(line) for line in out.splitlines()]
    assert results[0]["error"]["code"] == "INVALID_INPUT" and "not UTF-8" in results[0]["error"]["message"], out + err
    assert results[1]["status"] == "ok", out + err


# --------------------------------------------------------------------- the one explainer


def test_one_explainer_names_each_path_counts_the_rest_and_calls_the_whole_by_the_callers_name():
    from pydantic import ValidationError

    from vetq.core.review.schema import ReviewRequest
    from vetq.core.validation import explain

    with pytest.raises(ValidationError) as bad_fields:
        ReviewRequest.model_validate({"objective": "x", "proposed_solution": "y", "risk_level": "low", "surprise": 1})
    assert explain(bad_fields.value) == "decision_type: Field required; surprise: unknown field"
    assert explain(bad_fields.value, limit=1) == "decision_type: Field required; and 1 more problem(s)"
    with pytest.raises(ValidationError) as not_an_object:
        ReviewRequest.model_validate(["x"])
    assert explain(not_an_object.value).startswith("request: ")
    assert explain(not_an_object.value, root="answer").startswith("answer: ")


# --------------------------------------------------------------------- MCP wire


class RawMcp:
    """`vetq mcp` over raw pipes, so a test can send lines no SDK client would."""

    def __init__(self, tmp: Path) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("VETQ_")}
        env.update({"VETQ_HOME": str(tmp / "vetq-home"), "PYTHONPATH": str(REPO), "PYTHONUNBUFFERED": "1"})
        self.stderr_path = tmp / "stderr.log"
        with open(self.stderr_path, "wb") as stderr:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "vetq.api_client.cli", "mcp"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                env=env,
                cwd=str(REPO),
            )
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def send_line(self, line: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def next_message(self, timeout: float = 90.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while (remaining := deadline - time.monotonic()) > 0:
            try:
                line = self.lines.get(timeout=remaining)
            except queue.Empty:
                break
            if line is None:
                raise AssertionError(f"server closed stdout; stderr: {self.stderr_path.read_text()[-2000:]}")
            return json.loads(line)
        raise TimeoutError(f"no message in {timeout}s; stderr: {self.stderr_path.read_text()[-2000:]}")

    def request(self, request_id: int, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send_line(json.dumps(message).encode())
        while (answer := self.next_message()).get("id") != request_id:
            pass
        return answer

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(60)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait(10)


@pytest.fixture
@starts_processes
def raw_mcp(tmp_path):
    server = RawMcp(tmp_path)
    initialized = server.request(
        1,
        "initialize",
        {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "vetq-tests", "version": "0"}},
    )
    assert "result" in initialized
    server.send_line(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
    yield server
    server.close()


@pytest.mark.processes
def test_mcp_answers_unreadable_lines_with_json_rpc_errors_and_keeps_serving(raw_mcp):
    for line, code in ((b"this is not json", -32700), (b"[" * 5000 + b"]" * 5000, -32700), (b"[1, 2]", -32600)):
        raw_mcp.send_line(line)
        answer = raw_mcp.next_message()
        assert answer["jsonrpc"] == "2.0" and answer["id"] is None, answer
        assert answer["error"]["code"] == code and answer["error"]["message"], answer
    assert {t["name"] for t in raw_mcp.request(2, "tools/list")["result"]["tools"]} >= {"validate"}


@pytest.mark.parametrize("literal", ["NaN", "1e400"])
@pytest.mark.processes
def test_mcp_validate_with_a_non_finite_amount_is_invalid_input_naming_the_field(raw_mcp, literal):
    arguments = json.dumps({"text": GLOBEX, "data": dict(GLOBEX_DATA, total="TOTAL"), "heuristics_only": True})
    call = (
        '{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "validate", "arguments": '
        + arguments.replace('"TOTAL"', literal)
        + "}}"
    )
    raw_mcp.send_line(call.encode())
    while (answer := raw_mcp.next_message()).get("id") != 7:
        pass
    body = answer["result"]["structuredContent"]
    assert body["status"] == "error" and body["error"]["code"] == "INVALID_INPUT", body
    assert "total" in body["error"]["message"]


# --------------------------------------------------------------------- logging


def test_client_leaves_the_host_applications_logging_alone(tmp_path, redis_url):
    """A host's root handler and level, and its (un)configured structlog, survive a
    Client on a given Redis and one on the embedded default (with its in-process worker)."""
    script = f"""
import logging, sys, structlog
handler = logging.FileHandler({str(tmp_path / "host.log")!r})
root = logging.getLogger()
root.addHandler(handler)
root.setLevel(logging.ERROR)
from vetq.api_client.client import Client
with Client({redis_url!r}):
    pass
with Client():
    pass
print(root.handlers == [handler], root.level == logging.ERROR, structlog.is_configured())
"""
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "VETQ_HOME": str(tmp_path / "home")},
        cwd=str(REPO),
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[-3:] == ["True", "True", "False"], done.stdout + done.stderr


@pytest.mark.processes
def test_a_library_user_gets_vetq_logs_through_logging_and_nothing_on_stdout(tmp_path):
    """With structlog left unconfigured, vetq logs through the standard `logging` logger
    of its module (structlog's own default would print every job_submitted on the host's
    stdout); a host that configures logging at INFO sees them there."""
    script = """
import logging, sys
records = []
class Keep(logging.Handler):
    def emit(self, record):
        records.append((record.name, record.getMessage()))
logging.getLogger().addHandler(Keep())
logging.getLogger().setLevel(logging.INFO)
from vetq.api_client.client import Client
with Client() as client:
    client.submit_validation("Total 10.00 EUR", {"total": 10.0}, heuristics_only=True).result(timeout=60)
print(any(name == "vetq.client" and "job_submitted" in message for name, message in records), file=sys.stderr)
"""
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "VETQ_HOME": str(tmp_path / "home")},
        cwd=str(REPO),
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "", done.stdout
    assert done.stderr.strip().splitlines()[-1] == "True", done.stderr


# --------------------------------------------------------------------- unknown job ids


def test_an_unknown_job_id_is_not_found_not_queued(service, cli_env):
    from vetq.core.errors import NotFoundError

    for verb in (("status", "deadbeef"), ("result", "deadbeef", "--timeout", "30")):
        code, out, err = vetq_bytes(*verb, env=cli_env)
        assert code == 2, out + err
        result = json.loads(out)
        assert result["error"]["code"] == "NOT_FOUND" and "deadbeef" in result["error"]["message"], result
    with pytest.raises(NotFoundError):
        service.client.job("deadbeef").status()
    with pytest.raises(NotFoundError):
        service.client.job("deadbeef").result(timeout=30)
    with pytest.raises(NotFoundError):
        service.client.job("deadbeef").poll(timeout=30)


def test_submitted_ids_are_recorded_for_as_long_as_results(service):
    import redis

    from vetq.core.redis_keys import submitted_key

    single = service.client.submit_validation(GLOBEX, GLOBEX_DATA, heuristics_only=True)
    batch = service.client.submit_batch(
        [{"text": GLOBEX, "data": GLOBEX_DATA, "heuristics_only": True}] * 3 + [{"text": "   "}]
    )
    r = redis.Redis.from_url(service.client.redis_url)
    for job in [single, *batch.jobs]:
        assert 0 < r.ttl(submitted_key(job.id)) <= service.settings.result_ttl_s
    assert single.result(timeout=60)["status"] == "ok"
    assert [result["status"] for result in batch.results(timeout=60)] == ["ok", "ok", "ok", "error"]
    assert single.status() == "done"


# --------------------------------------------------------------------- one line, exit 2 or 3, never 1


def _assert_one_clean_error(code, out, err, expected_exit, error_code, *words):
    assert code == expected_exit, (code, out, err)
    lines = out.splitlines()
    assert len(lines) == 1, out
    result = json.loads(lines[0])
    assert result["error"]["code"] == error_code, result
    for word in words:
        assert word in result["error"]["message"], result
    assert not any(line.startswith("Traceback") for line in err.splitlines()), err


@pytest.mark.parametrize(
    ("args", "env", "error_code", "word"),
    [
        (("status", ""), {}, "INVALID_INPUT", "job id"),
        (("status", "abc"), {"VETQ_REDIS_URL": "notaurl"}, "CONFIG_ERROR", "VETQ_REDIS_URL"),
        (("status", "abc"), {"VETQ_REDIS_URL": "http://127.0.0.1:6379/0"}, "CONFIG_ERROR", "VETQ_REDIS_URL"),
        (("validate", "--data", "{}"), {"VETQ_ACCEPT_CONTENT": "pickle"}, "CONFIG_ERROR", "VETQ_ACCEPT_CONTENT"),
        (("telemetry", "export", "--out", "/nonexistent-dir/t.jsonl"), {}, "INVALID_INPUT", "cannot write"),
    ],
)
@pytest.mark.processes
def test_bad_configuration_and_arguments_exit_2_with_one_line(tmp_path, args, env, error_code, word):
    code, out, err = vetq_bytes(*args, input=b"Total 5.00", env={"VETQ_HOME": str(tmp_path), **env})
    _assert_one_clean_error(code, out, err, 2, error_code, word)


def test_worker_with_a_negative_concurrency_is_a_usage_error(redis_url):
    code, _out, err = vetq_bytes("worker", "--concurrency", "-1", env={"VETQ_REDIS_URL": redis_url}, timeout=60)
    assert code == 2 and "--concurrency" in err and "Traceback" not in err, err


@pytest.mark.processes
def test_a_wrong_redis_password_is_a_config_error_naming_the_url(tmp_path):
    import redis

    from vetq.workers.embedded_redis import EmbeddedRedis

    server = EmbeddedRedis(tmp_path / "locked", role="tests").start()
    host_port = server.url.rsplit("@", 1)[1]
    redis.Redis.from_url(server.url).config_set("requirepass", "the-right-one")
    try:
        code, out, err = vetq_bytes("dead", "list", env={"VETQ_REDIS_URL": f"redis://:wrong-one@{host_port}"})
    finally:
        redis.Redis.from_url(f"redis://:the-right-one@{host_port}").config_set("requirepass", "")
        server.stop()
    _assert_one_clean_error(code, out, err, 2, "CONFIG_ERROR", "password", "VETQ_REDIS_URL")
    assert "wrong-one" not in out + err


@pytest.mark.processes
def test_a_producer_whose_redis_is_down_exits_3_service_unavailable(tmp_path):
    import socket

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    code, out, err = vetq_bytes(
        "validate",
        "--heuristics-only",
        "--data",
        "{}",
        input=b"Total 5.00",
        env={"VETQ_REDIS_URL": f"redis://127.0.0.1:{port}/0", "VETQ_HOME": str(tmp_path)},
        timeout=180,
    )
    _assert_one_clean_error(code, out, err, 3, "SERVICE_UNAVAILABLE", "VETQ_REDIS_URL")


def test_an_unexpected_exception_in_a_command_is_internal_error_exit_3(monkeypatch, capsys):
    from vetq.api_client import cli

    def broken(_args):
        raise KeyError("a bug, not the user's doing")

    # The boundary under test is main's: any handler's unexpected exception.
    monkeypatch.setattr(cli, "cmd_should_review", broken)
    assert cli.main(["should-review"]) == 3
    result = json.loads(capsys.readouterr().out)
    assert result["error"]["code"] == "INTERNAL_ERROR" and "KeyError" in result["error"]["message"]


@pytest.mark.processes
def test_a_worker_whose_redis_is_down_exits_3_not_1(tmp_path):
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    # Celery gives up after VETQ_BROKER_CONNECT_RETRIES attempts (10 by default: a minute and a half).
    code, out, err = vetq_bytes(
        "worker",
        "--pool",
        "solo",
        env={
            "VETQ_REDIS_URL": f"redis://127.0.0.1:{port}/0",
            "VETQ_HOME": str(tmp_path),
            "VETQ_BROKER_CONNECT_RETRIES": "2",
        },
        timeout=300,
    )
    _assert_one_clean_error(code, out, err, 3, "SERVICE_UNAVAILABLE", "VETQ_REDIS_URL")
