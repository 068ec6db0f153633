"""Jobs through a real Redis and real Celery workers."""

from __future__ import annotations

import json
import time

import pytest
from kombu import Connection, Exchange, Producer, Queue

from tests.conftest import GLOBEX, GLOBEX_DATA, critic_answer
from vetq.api_client.admin import Admin
from vetq.api_client.client import Client, JobStatus, NoWorkerError
from vetq.core.extraction.pipeline import ExtractionPipeline
from vetq.core.llm.scripted import ScriptedLLMClient


def test_validation_end_to_end(service):
    job = service.client.submit_validation(GLOBEX, dict(GLOBEX_DATA, total=683.2), heuristics_only=True)
    result = job.result(timeout=30)
    assert result["status"] == "needs_review"
    assert [f["field"] for f in result["flagged_fields"]] == ["total"]
    assert result["trace_id"] == job.trace_id
    assert job.status() is JobStatus.DONE


def test_extraction_end_to_end_with_both_models(service):
    generator = ScriptedLLMClient([json.dumps(GLOBEX_DATA)])
    critic = ScriptedLLMClient([critic_answer()])
    service.use(ExtractionPipeline(service.settings, generator_client=generator, critic_client=critic))
    job = service.client.submit_extraction(GLOBEX, trace_id="trace-e2e")
    result = job.result(timeout=30)
    assert result["status"] == "ok", result
    assert result["data"]["total"] == 583.2
    assert result["trace_id"] == "trace-e2e"
    assert set(result["usage"]) == {"generator", "critic"}
    assert len(generator.requests) == 1 and len(critic.requests) == 1


def test_invalid_request_is_refused_at_submission_with_the_same_model(service):
    from vetq.core.errors import InvalidInputError

    with pytest.raises(InvalidInputError, match="field_threshold"):
        service.client.submit_extraction("text", field_threshold=2.0)
    with pytest.raises(InvalidInputError, match="empty"):
        service.client.submit_extraction("   ")


def test_a_bad_payload_sent_by_name_is_an_envelope_not_a_crash(service):
    job_id = "bad-payload-job"
    service.client.app.send_task(
        "vetq.validate", args=[{"text": "x", "data": {"total": "many"}}], task_id=job_id, queue="extract"
    )
    result = service.client.job(job_id).result(timeout=30)
    assert result["status"] == "error" and result["error"]["code"] == "INVALID_INPUT"


def test_batch_of_200_is_complete_and_in_input_order(service):
    requests = [
        {
            "kind": "validate",
            "text": f"Order {i}: Total {i}.00 EUR",
            "data": {"total": float(i), "currency": "EUR"},
            "heuristics_only": True,
        }
        for i in range(1, 201)
    ]
    requests.insert(50, {"kind": "validate", "text": "", "data": {}})  # refused at submission, keeps its place
    batch = service.client.submit_batch(requests)
    results = batch.results(timeout=120)
    assert len(results) == 201
    assert results[50]["error"]["code"] == "INVALID_INPUT"
    totals = [r["data"]["total"] for i, r in enumerate(results) if i != 50]
    assert totals == [float(i) for i in range(1, 201)]
    assert batch.counts() == {"total": 201, "done": 201, "pending": 0}


def test_as_completed_yields_every_index_once(service):
    batch = service.client.submit_batch(
        {"kind": "validate", "text": f"Total {i}.00", "data": {"total": float(i)}, "heuristics_only": True}
        for i in range(20)
    )
    seen = [index for index, _ in batch.as_completed(timeout=60)]
    assert sorted(seen) == list(range(20))


def test_result_subscribe_and_poll_agree(service):
    job = service.client.submit_validation(GLOBEX, GLOBEX_DATA, heuristics_only=True)
    assert job.result(timeout=30) == job.poll(interval=0.05, timeout=30)


def test_pickled_message_is_refused_and_the_worker_keeps_serving(service, caplog):
    import logging

    caplog.set_level(logging.WARNING)
    body = (
        [{"kind": "validate", "text": "x", "data": {}}],
        {},
        {"callbacks": None, "errbacks": None, "chain": None, "chord": None},
    )
    with Connection(service.client.redis_url) as conn:
        producer = Producer(conn, exchange=Exchange("extract", type="direct"), routing_key="extract")
        producer.publish(
            body,
            serializer="pickle",
            headers={"task": "vetq.validate", "id": "pickled-job", "lang": "py"},
            declare=[Queue("extract", Exchange("extract", type="direct"), routing_key="extract")],
        )
    job = service.client.submit_validation(GLOBEX, GLOBEX_DATA, heuristics_only=True)
    assert job.result(timeout=30)["status"] == "ok"
    refused = [r for r in caplog.records if "pickle" in r.getMessage().lower()]
    assert refused, [r.getMessage() for r in caplog.records]
    assert service.client.app.AsyncResult("pickled-job").state == "PENDING"  # never ran


def test_waiting_with_no_worker_fails_clearly(redis_url, queue_settings):
    with Client(redis_url, settings=queue_settings) as client:
        job = client.submit_validation(GLOBEX, GLOBEX_DATA, heuristics_only=True)
        with pytest.raises(NoWorkerError, match="no worker consumes the 'extract' queue"):
            job.result(timeout=60)
        with pytest.raises(NoWorkerError):
            client.submit_batch([{"kind": "validate", "text": "Total 1.00", "data": {"total": 1.0}}]).results(
                timeout=60
            )


def test_trace_id_on_producer_and_worker_lines_and_no_context_leak(redis_url, queue_settings, capsys):
    from tests.conftest import Service
    from vetq.core.logging import configure_logging

    configure_logging("INFO", force=True)
    svc = Service(queue_settings, redis_url, concurrency=1)
    try:
        first = svc.client.submit_validation(GLOBEX, GLOBEX_DATA, heuristics_only=True, trace_id="trace-one")
        first.result(timeout=30)
        second = svc.client.submit_validation(GLOBEX, GLOBEX_DATA, heuristics_only=True, trace_id="trace-two")
        second.result(timeout=30)
        time.sleep(0.2)  # let the worker write its last line
    finally:
        svc.close()
    lines = [json.loads(line) for line in capsys.readouterr().err.splitlines() if line.startswith("{")]
    for job, trace in ((first, "trace-one"), (second, "trace-two")):
        mine = [line for line in lines if line.get("job_id") == job.id]
        events = {line["event"] for line in mine}
        assert {"job_submitted", "job_started", "extraction_done", "job_finished"} <= events, events
        assert {line.get("trace_id") for line in mine} == {trace}
    worker_lines = [line for line in lines if line.get("event") in ("job_started", "extraction_done")]
    assert {line.get("trace_id") for line in worker_lines} == {"trace-one", "trace-two"}
    after_first = [line for line in lines if line.get("trace_id") == "trace-one" and line.get("job_id") == second.id]
    assert after_first == []


def test_worker_probe_survives_a_dropped_broker_connection(service, monkeypatch):
    import redis as redis_lib

    real_inspect = service.client.app.control.inspect
    calls = []

    def flaky_inspect(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise redis_lib.ConnectionError("Connection closed by server.")
        return real_inspect(*args, **kwargs)

    monkeypatch.setattr(service.client.app.control, "inspect", flaky_inspect)
    assert any("extract" in queues for queues in Admin.of(service.client).workers().values())
    assert len(calls) == 2
