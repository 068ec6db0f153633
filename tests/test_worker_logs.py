"""A worker's log carries ids, counts and durations, never a document or what was
extracted from it: a real `vetq worker` process at INFO, its stderr read whole."""

from __future__ import annotations

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
    # The trace lines are there (the worker did log at INFO), with the result masked.
    assert text.count("succeeded in") == 2, text[-3000:]
    leaked = [value for value in DOCUMENT_VALUES if value in text]
    assert not leaked, [line for line in text.splitlines() if any(v in line for v in leaked)][:3]
