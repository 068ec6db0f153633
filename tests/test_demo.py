"""`make demo` works on the embedded default, and its replay fixture matches the
prompts the pipeline sends today."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from vetq.eval.demo import CASES, FIXTURE
from vetq.eval.fixtures import load_cases, record_cases


def test_demo_fixture_is_up_to_date(tmp_path):
    fresh = tmp_path / "replay.json"
    record_cases(load_cases(CASES), fresh)
    assert json.loads(fresh.read_text()) == json.loads(FIXTURE.read_text()), (
        "prompts changed: re-record with python -m vetq.eval.fixtures eval/samples/demo.jsonl eval/samples/demo_replay.json"
    )


@pytest.mark.processes
def test_demo_runs_through_the_queue_and_names_what_to_review(tmp_path):
    env = {**os.environ, "VETQ_HOME": str(tmp_path)}
    env.pop("VETQ_REDIS_URL", None)
    done = subprocess.run(
        [sys.executable, "-m", "vetq.eval.demo"], capture_output=True, text=True, timeout=180, env=env
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "FLAGGED total = 683.2" in done.stdout
    assert "FLAGGED vendor_name = 'Invoice'" in done.stdout
    assert "summary: 6 documents" in done.stdout and "2 needs_review, 4 ok" in done.stdout
    assert done.stdout.count("trace ") == 6
    # the demo shows a schema other than the invoice: a receipt with its line items
    assert (
        "receipt-diner            receipt" in done.stdout
        and '"items": [{"description": "Classic Burger"' in done.stdout
    )
