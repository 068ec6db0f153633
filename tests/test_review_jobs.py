"""Review jobs through the queue, the client's review faces and the review CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.test_review_service import POS, VER, make_request
from vetq.api_client.admin import Admin
from vetq.api_client.client import BlindnessLeakError, Client
from vetq.core.errors import ConfigError, InvalidInputError
from vetq.core.llm.scripted import ScriptedLLMClient

SECRET = "sk-ant-PLANTED-secret-value-0123456789"


def request_dict(**overrides):
    return make_request(**overrides).model_dump(mode="json", exclude_none=True)


def test_review_end_to_end_through_the_queue(service):
    reviewer = ScriptedLLMClient([POS, VER])
    service.app.conf.vetq_context.replace_reviewer(reviewer)
    job = service.client.submit_review(request_dict())
    assert job.queue == "review"
    result = job.result(timeout=30)
    assert (result["format"], result["status"], result["verdict"]) == (2, "ok", "MODIFY")
    assert result["meta"]["phases"] == 2
    assert result["meta"]["trace_id"] == job.trace_id == result["trace_id"]
    assert result["meta"]["usage"]["total_tokens"] > 0
    assert "position" not in json.dumps(result).lower()  # the Phase-1 position is never returned
    assert len(reviewer.requests) == 2
    assert job.status() == "done"


def test_blindness_leak_is_refused_at_submission_with_no_job(service):
    leaky = request_dict(context="We will do this: " + make_request().proposed_solution)
    with pytest.raises(BlindnessLeakError) as info:
        service.client.submit_review(leaky)
    assert info.value.code.value == "BLINDNESS_LEAK"


def test_invalid_review_request_is_refused_at_submission(service):
    with pytest.raises(InvalidInputError, match="unknown field"):
        service.client.submit_review({**request_dict(), "surprise": True})


def test_worker_refuses_a_leak_sent_past_the_client_with_zero_model_calls(service):
    reviewer = ScriptedLLMClient([])  # raises if asked anything
    service.app.conf.vetq_context.replace_reviewer(reviewer)
    leaky = request_dict(objective=make_request().proposed_solution)
    service.client.app.send_task("vetq.review", args=[leaky], task_id="leak-job", queue="review")
    result = service.client.job("leak-job").result(timeout=30)
    assert result["error"]["code"] == "BLINDNESS_LEAK"
    assert reviewer.requests == []
    assert service.client.job("leak-job").status() == "failed"


def _leaky_proposal_first() -> dict:
    """A request the client lets through (proposal_first is not blind) whose blind
    fields carry the whole proposal."""
    return request_dict(objective=make_request().proposed_solution, review_mode="proposal_first")


def test_a_normal_worker_refuses_a_bench_mode_header_as_invalid_input(service):
    reviewer = ScriptedLLMClient([])  # raises if asked anything
    service.app.conf.vetq_context.replace_reviewer(reviewer)
    service.client.app.send_task(
        "vetq.review",
        args=[_leaky_proposal_first()],
        task_id="forged-mode",
        queue="review",
        headers={"bench_mode": "blind_first"},
    )
    result = service.client.job("forged-mode").result(timeout=30)
    assert result["error"]["code"] == "INVALID_INPUT" and "bench_mode" in result["error"]["message"]
    assert reviewer.requests == []


@pytest.mark.parametrize("forged_mode", ["blind_first", "independent_only"])
def test_a_bench_worker_checks_blindness_for_the_mode_that_runs(redis_url, queue_settings, forged_mode):
    from tests.conftest import Service

    svc = Service(queue_settings.model_copy(update={"bench_modes": True}), redis_url)
    try:
        reviewer = ScriptedLLMClient([])
        svc.app.conf.vetq_context.replace_reviewer(reviewer)
        svc.client.app.send_task(
            "vetq.review",
            args=[_leaky_proposal_first()],
            task_id=f"leak-{forged_mode}",
            queue="review",
            headers={"bench_mode": forged_mode},
        )
        result = svc.client.job(f"leak-{forged_mode}").result(timeout=30)
    finally:
        svc.close()
    assert result["error"]["code"] == "BLINDNESS_LEAK"
    assert result["meta"]["review_mode"] == forged_mode
    assert reviewer.requests == []


def test_should_review_runs_locally():
    result = Client.should_review(decision_type="database", risk_level="low", includes_migration=True)
    assert result["should_review"] is True and any("migration" in r for r in result["reasons"])
    with pytest.raises(InvalidInputError):
        Client.should_review({"decision_type": "database", "risk_level": "low", "bogus": 1})


def test_telemetry_stream_and_outcomes_carry_no_text(redis_url, queue_settings):
    from tests.conftest import Service

    settings = queue_settings.model_copy(update={"telemetry": True})
    svc = Service(settings, redis_url)
    try:
        svc.app.conf.vetq_context.replace_reviewer(
            ScriptedLLMClient([POS, json.dumps({**json.loads(VER), "recommendation": SECRET})])
        )
        request = request_dict(objective=f"Objective {SECRET}", context=f"Context {SECRET}")
        result = svc.client.submit_review(request).result(timeout=30)
        review_id = result["meta"]["review_id"]
        svc.client.record_outcome(review_id, accepted_review=True, later_rework_required=False, review_was_useful=True)
        records = list(Admin.of(svc.client).export_telemetry())
    finally:
        svc.close()
    assert [r["record_type"] for r in records] == ["review", "review_outcome"]
    assert records[0]["review_id"] == review_id == records[1]["review_id"]
    assert records[0]["verdict"] == "MODIFY"
    assert SECRET not in json.dumps(records) and "PLANTED" not in json.dumps(records)


def test_outcome_with_telemetry_off_says_how_to_turn_it_on(service):
    with pytest.raises(ConfigError, match="VETQ_TELEMETRY"):
        service.client.record_outcome("abc", accepted_review=True)


# --- the CLI -----------------------------------------------------------------------


def vetq(*args, input=None, env=None):
    return subprocess.run(
        [sys.executable, "-m", "vetq.api_client.cli", *args],
        input=input,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )


@pytest.mark.parametrize(
    "request_json, code",
    [
        (json.dumps(request_dict(context="Plan: " + make_request().proposed_solution)), "BLINDNESS_LEAK"),
        (json.dumps({**request_dict(), "unknown_key": 1}), "INVALID_INPUT"),
        (json.dumps({**request_dict(), "risk_level": "extreme"}), "INVALID_INPUT"),
        ("{broken", "INVALID_INPUT"),
    ],
)
@pytest.mark.processes
def test_review_cli_input_errors_exit_2_without_any_provider(request_json, code, tmp_path):
    # No key, no SDK configuration, no Redis: refused before anything starts.
    done = vetq("review", input=request_json, env={"VETQ_HOME": str(tmp_path), "VETQ_REVIEWER": "openai:none"})
    assert done.returncode == 2, done.stdout + done.stderr
    output = json.loads(done.stdout)
    assert (output["format"], output["status"], output["error"]["code"]) == (2, "error", code)


@pytest.mark.processes
def test_should_review_cli():
    done = vetq(
        "should-review", input=json.dumps({"decision_type": "other", "risk_level": "low", "trivial_kind": "docs"})
    )
    assert done.returncode == 0
    result = json.loads(done.stdout)
    assert result["should_review"] is False and result["reasons"]
    bad = vetq("should-review", input=json.dumps({"decision_type": "nope", "risk_level": "low"}))
    assert bad.returncode == 2 and json.loads(bad.stdout)["error"]["code"] == "INVALID_INPUT"


def test_review_cli_runs_a_review_against_a_service(service, redis_url, tmp_path):
    service.app.conf.vetq_context.replace_reviewer(ScriptedLLMClient([POS, VER]))
    done = vetq(
        "review",
        "--mode",
        "blind_first",
        input=json.dumps(request_dict()),
        env={"VETQ_REDIS_URL": redis_url, "VETQ_HOME": str(tmp_path)},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["verdict"] == "MODIFY"


def test_outcome_and_telemetry_export_cli(redis_url, tmp_path):
    env = {"VETQ_REDIS_URL": redis_url, "VETQ_HOME": str(tmp_path), "VETQ_TELEMETRY": "on"}
    recorded = vetq("outcome", "review-123", "--accepted", "true", "--rework", "no", "--useful", "yes", env=env)
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    out = tmp_path / "telemetry.jsonl"
    exported = vetq("telemetry", "export", "--out", str(out), env=env)
    assert exported.returncode == 0
    [record] = [json.loads(line) for line in out.read_text().splitlines()]
    assert record["review_id"] == "review-123"
    assert (record["accepted_review"], record["later_rework_required"], record["review_was_useful"]) == (
        True,
        False,
        True,
    )
    off = vetq("outcome", "review-123", "--accepted", "maybe", env=env)
    assert off.returncode == 2
    disabled = vetq("outcome", "review-123", "--accepted", "true", env={**env, "VETQ_TELEMETRY": "off"})
    assert disabled.returncode == 2 and json.loads(disabled.stdout)["error"]["code"] == "CONFIG_ERROR"


def test_reviewer_that_cannot_be_built_is_a_config_error_result(service, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    result = service.client.submit_review(request_dict()).result(timeout=30)
    assert result["error"]["code"] == "CONFIG_ERROR"
    assert "ANTHROPIC_API_KEY" in result["error"]["message"]


def test_a_soft_time_limit_outside_a_model_call_ends_the_review_timeout(service, monkeypatch):
    """Celery's soft limit can strike anywhere in a review, e.g. while the reviewer's SDK
    client is being built: the review ends TIMEOUT, never INTERNAL_ERROR."""
    from celery.exceptions import SoftTimeLimitExceeded

    def reviewer_built_too_late():
        raise SoftTimeLimitExceeded()

    monkeypatch.setattr(service.app.conf.vetq_context, "reviewer", reviewer_built_too_late)
    result = service.client.submit_review(request_dict()).result(timeout=30)
    assert result["error"]["code"] == "TIMEOUT", result
    assert "soft time limit" in result["error"]["message"]
