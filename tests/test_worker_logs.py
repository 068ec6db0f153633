"""A worker's log carries ids, counts and durations, never a document or what was
extracted from it: a real `vetq worker` process at INFO, its stderr read whole; and
an in-process worker, whose tracer is watched for copies of a result."""

from __future__ import annotations

import json
import subprocess
import sys
import time

from tests.conftest import GLOBEX, GLOBEX_DATA, answer_like_a_model
from vetq.api_client.admin import Admin
from vetq.api_client.client import Client
from vetq.eval.fake_provider import FakeProvider

# Values that occur only in the document and in what the model extracted from it.
DOCUMENT_VALUES = ("Globex", "GLX/2026/778", "583.2", "forwarding the bill")


def test_a_worker_at_info_logs_no_document_text_and_no_extracted_value(redis_url, queue_settings, tmp_path):
    log_path = tmp_path / "worker.log"
    env = {
        "PATH": "/usr/bin:/bin",
        "VETQ_REDIS_URL": redis_url,
        "VETQ_GENERATOR": "openai:fake-generator",
        "VETQ_CRITIC": "openai:fake-critic",
        "OPENAI_API_KEY": "test-key-not-real",
        "VETQ_HOME": str(tmp_path / "home"),
        "VETQ_LOG_LEVEL": "INFO",
    }
    with FakeProvider() as fake, open(log_path, "w") as log_file:
        fake.set_responder(answer_like_a_model)
        env["OPENAI_BASE_URL"] = fake.base_url_openai
        worker = subprocess.Popen(
            [sys.executable, "-m", "vetq.api_client.cli", "worker", "--queues", "extract", "--concurrency", "1",
             "--pool", "prefork"],
            env=env, stdin=subprocess.DEVNULL, stdout=log_file, stderr=subprocess.STDOUT,
        )  # fmt: skip
        try:
            with Client(redis_url, settings=queue_settings) as client:
                deadline = time.monotonic() + 60
                while not Admin.of(client).workers(timeout=1) and time.monotonic() < deadline:
                    time.sleep(0.2)
                extracted = client.submit_extraction(GLOBEX).result(timeout=60)
                validated = client.submit_validation(GLOBEX, GLOBEX_DATA, heuristics_only=True).result(timeout=60)
        finally:
            worker.terminate()
            worker.wait(timeout=30)
    assert extracted["status"] == "ok" and extracted["data"]["vendor_name"] == "Globex Ltd"
    assert validated["status"] == "ok"
    text = log_path.read_text()
    # One outcome line per job (the worker did log at INFO): vetq's job_finished, with
    # its state, status and run time; Celery's success line, a repr of the result, is not.
    finished = [json.loads(line) for line in text.splitlines() if '"job_finished"' in line]
    assert len(finished) == 2, text[-3000:]
    assert {(line["kind"], line["state"], line["status"]) for line in finished} == {
        ("extract", "SUCCESS", "ok"),
        ("validate", "SUCCESS", "ok"),
    }
    assert all(line["runtime_ms"] >= 0 and line["job_id"] and line["trace_id"] for line in finished)
    assert "succeeded in" not in text, text[-3000:]
    leaked = [value for value in DOCUMENT_VALUES if value in text]
    assert not leaked, [line for line in text.splitlines() if any(v in line for v in leaked)][:3]


def test_no_copy_of_a_result_is_made_for_the_log_and_the_job_has_one_outcome_line(service, monkeypatch, capsys):
    from celery.app import trace

    from vetq.core.logging import configure_logging

    configure_logging("INFO", force=True)
    reprs: list[str] = []
    saferepr = trace.saferepr

    def watched(value, *args, **kwargs):
        text = saferepr(value, *args, **kwargs)
        reprs.append(text)
        return text

    monkeypatch.setattr(trace, "saferepr", watched)
    job = service.client.submit_validation(GLOBEX, GLOBEX_DATA, heuristics_only=True, trace_id="trace-logs")
    result = job.result(timeout=30)
    time.sleep(0.2)  # let the worker write its last line
    assert result["status"] == "ok" and "Globex Ltd" in json.dumps(result)  # the values are in the result
    # The tracer's repr of the result, built for every success, is cut at once.
    assert reprs and all(len(text) < 10 for text in reprs), reprs
    err = capsys.readouterr().err
    leaked = [value for value in DOCUMENT_VALUES if value in err]
    assert not leaked, [line for line in err.splitlines() if any(v in line for v in leaked)][:3]
    lines = [json.loads(line) for line in err.splitlines() if line.startswith("{")]
    finished = [line for line in lines if line.get("event") == "job_finished" and line.get("job_id") == job.id]
    assert len(finished) == 1, lines
    assert finished[0]["state"] == "SUCCESS" and finished[0]["status"] == "ok" and finished[0]["runtime_ms"] >= 0
    assert finished[0]["trace_id"] == "trace-logs" and finished[0]["kind"] == "validate"
    assert not [line for line in lines if "succeeded in" in str(line.get("event"))]
