"""The vetq CLI as a user runs it: a subprocess, JSON on stdout, exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import GLOBEX, GLOBEX_DATA


def vetq(*args, input=None, env=None, timeout=120, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "vetq.api_client.cli", *args],
        input=input,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
        cwd=cwd,
    )


@pytest.fixture
def cli_env(redis_url, tmp_path):
    """The CLI as a producer of a running service (a worker thread in this process)."""
    return {"VETQ_REDIS_URL": redis_url, "VETQ_HOME": str(tmp_path)}


@pytest.mark.processes
def test_help_and_version():
    top = vetq("--help")
    assert top.returncode == 0 and "extract" in top.stdout and "Exit codes" in top.stdout
    for verb in ("extract", "validate", "status", "result", "worker", "up"):
        helped = vetq(verb, "--help")
        assert helped.returncode == 0 and f"vetq {verb}" in helped.stdout
    version = vetq("--version")
    assert version.returncode == 0 and version.stdout.startswith("vetq ")


@pytest.mark.processes
def test_usage_errors_exit_2():
    assert vetq().returncode == 2
    assert vetq("extract", "--field-threshold", "nan", input="x").returncode == 2
    assert vetq("extract", "--field-threshold", "1.5", input="x").returncode == 2
    bad_json = vetq("validate", "--data", "{not json", input="x")
    output = json.loads(bad_json.stdout)
    assert bad_json.returncode == 2 and (output["format"], output["status"]) == (2, "error")
    assert output["error"]["code"] == "INVALID_INPUT"
    missing = vetq("validate", input="x")
    assert missing.returncode == 2


@pytest.mark.processes
def test_bad_configuration_exits_2_naming_the_variable():
    done = vetq("extract", input="x", env={"VETQ_OVERALL_THRESHOLD": "inf"})
    assert done.returncode == 2
    assert "VETQ_OVERALL_THRESHOLD" in json.loads(done.stdout)["error"]["message"]


@pytest.mark.processes
def test_embedded_default_validate_needs_review_exits_1(tmp_path):
    env = {"VETQ_HOME": str(tmp_path)}
    data = json.dumps(dict(GLOBEX_DATA, total=683.2))
    done = vetq("validate", "--heuristics-only", "--data", data, input=GLOBEX, env=env)
    assert done.returncode == 1, done.stderr
    result = json.loads(done.stdout)
    assert result["status"] == "needs_review" and result["flagged_fields"][0]["field"] == "total"
    ok = vetq("validate", "--heuristics-only", "--data", json.dumps(GLOBEX_DATA), input=GLOBEX, env=env)
    assert ok.returncode == 0 and json.loads(ok.stdout)["status"] == "ok"
    assert not any(line.strip() and not line.startswith("{") for line in done.stdout.splitlines())


def test_file_flag_and_unreadable_file(tmp_path, service, cli_env):
    doc = tmp_path / "doc.txt"
    doc.write_text(GLOBEX)
    done = vetq("validate", "--file", str(doc), "--heuristics-only", "--data", json.dumps(GLOBEX_DATA), env=cli_env)
    assert done.returncode == 0, done.stdout + done.stderr
    missing = vetq("validate", "--file", str(tmp_path / "nope.txt"), "--data", "{}", env=cli_env)
    assert missing.returncode == 2 and "cannot read" in json.loads(missing.stdout)["error"]["message"]


def test_provider_failure_exits_3(service, cli_env):
    # The worker's pipeline names a provider whose SDK key is missing: CONFIG_ERROR from the worker.
    done = vetq("extract", input=GLOBEX, env=cli_env)
    assert done.returncode == 3, done.stdout + done.stderr
    assert json.loads(done.stdout)["error"]["code"] == "CONFIG_ERROR"


def test_no_wait_then_status_and_result(service, cli_env):
    submitted = vetq(
        "validate", "--no-wait", "--heuristics-only", "--data", json.dumps(GLOBEX_DATA), input=GLOBEX, env=cli_env
    )
    assert submitted.returncode == 0
    job_id = json.loads(submitted.stdout)["job_id"]
    result = vetq("result", job_id, "--timeout", "30", env=cli_env)
    assert result.returncode == 0 and json.loads(result.stdout)["status"] == "ok"
    status = vetq("status", job_id, env=cli_env)
    assert json.loads(status.stdout) == {"job_id": job_id, "status": "done"}


def test_batch_in_order_with_bad_lines_and_worst_exit_code(service, cli_env):
    lines = [
        json.dumps({"id": "a", "text": GLOBEX, "data": GLOBEX_DATA}),
        "{this is not json",
        json.dumps({"id": "c", "text": GLOBEX, "data": dict(GLOBEX_DATA, total=683.2)}),
        json.dumps({"id": 4, "text": 17, "data": {}}),
        "",
        json.dumps({"id": "e", "text": GLOBEX, "data": {"total": "a lot"}}),
        json.dumps({"text": GLOBEX, "data": GLOBEX_DATA}),
    ]
    done = vetq("validate", "--batch", "--heuristics-only", input="\n".join(lines) + "\n", env=cli_env)
    out = [json.loads(line) for line in done.stdout.splitlines()]
    assert [o.get("id") for o in out] == ["a", None, "c", 4, "e", None]
    assert [o["status"] for o in out] == ["ok", "error", "needs_review", "error", "error", "ok"]
    assert "line 2" in out[1]["error"]["message"]
    assert done.returncode == 2  # the worst line: input errors


def test_batch_worst_is_needs_review_when_all_lines_are_good(service, cli_env):
    lines = [json.dumps({"text": GLOBEX, "data": d}) for d in (GLOBEX_DATA, dict(GLOBEX_DATA, total=683.2))]
    done = vetq("validate", "--batch", "--heuristics-only", input="\n".join(lines), env=cli_env)
    assert done.returncode == 1
    assert [json.loads(line)["status"] for line in done.stdout.splitlines()] == ["ok", "needs_review"]


def test_batch_progress_goes_to_a_terminal_stderr_with_count_rate_and_eta(service, cli_env):
    import fcntl
    import pty
    import struct
    import termios
    import threading

    lines = [json.dumps({"id": n, "text": GLOBEX, "data": GLOBEX_DATA}) for n in range(5)] + ["{not json"]
    batch = ("\n".join(lines) + "\n").encode()
    terminal, stderr_tty = pty.openpty()
    fcntl.ioctl(stderr_tty, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    run = subprocess.Popen(
        [sys.executable, "-m", "vetq.api_client.cli", "validate", "--batch", "--heuristics-only", "--timeout", "60"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=stderr_tty,
        env={**os.environ, **cli_env, "TERM": "xterm"},
    )
    os.close(stderr_tty)
    drawn = bytearray()

    def read_terminal():
        while True:
            try:
                chunk = os.read(terminal, 4096)
            except OSError:  # EIO: the process closed the terminal
                return
            if not chunk:
                return
            drawn.extend(chunk)

    reader = threading.Thread(target=read_terminal, daemon=True)
    reader.start()
    stdout, _ = run.communicate(batch, timeout=120)
    reader.join(timeout=10)
    os.close(terminal)
    assert run.returncode == 2  # the refused line
    out = [json.loads(line) for line in stdout.decode().splitlines()]  # nothing but JSON lines
    assert [o.get("id") for o in out] == [0, 1, 2, 3, 4, None]
    screen = drawn.decode(errors="replace")
    assert "6/6" in screen and "jobs/s" in screen and "ETA" in screen, screen

    piped = vetq("validate", "--batch", "--heuristics-only", input=batch.decode(), env=cli_env)
    assert "jobs/s" not in piped.stderr and "6/6" not in piped.stderr  # no bar off a terminal...
    progress = [json.loads(line) for line in piped.stderr.splitlines() if '"batch_progress"' in line]
    assert progress and (progress[-1]["done"], progress[-1]["total"]) == (6, 6)  # ...JSON lines


def test_worker_refuses_unsafe_settings(redis_url):
    pickle = vetq("worker", env={"VETQ_REDIS_URL": redis_url, "VETQ_ACCEPT_CONTENT": '["json", "pickle"]'}, timeout=60)
    assert pickle.returncode == 2 and "pickle" in json.loads(pickle.stdout)["error"]["message"]
    short = vetq(
        "worker",
        env={"VETQ_REDIS_URL": redis_url, "VETQ_TASK_TIME_LIMIT_S": "300", "VETQ_VISIBILITY_TIMEOUT_S": "100"},
        timeout=60,
    )
    assert short.returncode == 2
    assert "VETQ_VISIBILITY_TIMEOUT_S" in json.loads(short.stdout)["error"]["message"]


@pytest.mark.processes
def test_worker_without_redis_url_or_embedded_service_says_what_to_do(tmp_path):
    done = vetq("worker", env={"VETQ_HOME": str(tmp_path)}, timeout=60)
    assert done.returncode == 2 and "VETQ_REDIS_URL" in json.loads(done.stdout)["error"]["message"]


@pytest.mark.processes
def test_harness_verbs_pass_their_flags_through():
    helped = vetq("eval", "--help")
    assert helped.returncode == 0 and "--min-accuracy" in helped.stdout
    refused = vetq("eval", "--token-budget", "5")
    assert refused.returncode == 2  # the harness's own rule: a budget needs --live


@pytest.mark.processes
def test_a_verb_without_its_action_shows_that_verbs_help():
    for verb, action in (("dead", "list"), ("telemetry", "export"), ("bench", "review")):
        done = vetq(verb)
        assert done.returncode == 2
        assert f"usage: vetq {verb}" in done.stderr and action in done.stderr, done.stderr
        assert "should-review" not in done.stderr  # not the top-level help


@pytest.mark.processes
def test_eval_help_names_the_command_the_user_typed():
    helped = vetq("eval", "--help")
    assert helped.returncode == 0 and helped.stdout.startswith("usage: vetq eval ")
