"""OpenTelemetry traces (README, Traces): one trace from a producer's span through a
real worker process's task, stage and model-call spans, joined by W3C traceparent in
the message headers; GenAI attributes on model calls; the log line's trace_id equal to
the span's; no secret, prompt, answer or document text in any span.

The producer (this process) exports to the SDK's InMemorySpanExporter; the worker
process exports by OTLP over HTTP, configured only by OTEL_* variables, to a small
OTLP receiver on 127.0.0.1 in this test."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
import redis
from conftest import wait_until

from tests.conftest import GLOBEX, GLOBEX_DATA, answer_like_a_model, starts_processes
from tests.test_secrets import API_KEY, REDIS_PASSWORD
from vetq.core import tracing
from vetq.core.tracing import NoopTracer, traces_requested

# --- the seam, without processes ---------------------------------------------


def test_traces_are_on_only_when_the_standard_variables_ask():
    assert not traces_requested({})
    assert traces_requested({"OTEL_TRACES_EXPORTER": "otlp"})
    assert traces_requested({"OTEL_TRACES_EXPORTER": "none,console"})
    assert not traces_requested({"OTEL_TRACES_EXPORTER": "none"})
    assert traces_requested({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"})
    assert traces_requested({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/v1/traces"})
    assert not traces_requested({"OTEL_TRACES_EXPORTER": "otlp", "OTEL_SDK_DISABLED": "true"})


def test_the_default_tracer_is_the_no_op_one(monkeypatch):
    for name in ("OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)
    tracing.reset_tracer()
    try:
        tracer = tracing.get_tracer()
        assert isinstance(tracer, NoopTracer) and not tracer.enabled
        headers: dict[str, Any] = {}
        tracer.inject(headers)
        assert headers == {}
        trace_id = tracer.new_trace_id()
        assert len(trace_id) == 32 and int(trace_id, 16)
    finally:
        tracing.reset_tracer()


def test_a_requeued_or_woken_job_keeps_its_place_in_the_trace():
    from vetq.workers.tasks import KEPT_HEADERS

    assert {"trace_id", "traceparent", "tracestate"} <= set(KEPT_HEADERS)


@pytest.fixture
def memory_spans():
    """Tracing on in this process, into the SDK's in-memory exporter."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from vetq.core.otel_tracing import VetqIdGenerator

    exporter = InMemorySpanExporter()
    provider = TracerProvider(id_generator=VetqIdGenerator())
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing.use_opentelemetry(provider)
    try:
        yield exporter
    finally:
        tracing.reset_tracer()
        provider.shutdown()


def test_review_phases_and_their_model_calls_are_spans(memory_spans):
    from tests.test_review_service import POS, PROPOSAL, VER, make_request, response
    from vetq.core.llm.gate import DirectGate
    from vetq.core.llm.scripted import ScriptedLLMClient
    from vetq.core.review.schema import ReviewConfig
    from vetq.core.review.service import run_review

    client = ScriptedLLMClient([response(POS), response(VER)], provider="openai", model="m1")
    request = make_request()
    with tracing.get_tracer().span("job"):
        outcome = run_review(request, client, gate=DirectGate(), config=ReviewConfig())
    assert outcome.status == "ok", outcome
    spans = {s.name: s for s in memory_spans.get_finished_spans()}
    assert {"vetq.review.phase1", "vetq.review.phase2", "chat m1"} <= set(spans)
    calls = [s for s in memory_spans.get_finished_spans() if s.name == "chat m1"]
    assert [c.parent.span_id for c in calls] == [
        spans["vetq.review.phase1"].context.span_id,
        spans["vetq.review.phase2"].context.span_id,
    ]
    assert spans["vetq.review.phase1"].parent.span_id == spans["job"].context.span_id
    assert [c.attributes["gen_ai.usage.input_tokens"] for c in calls] == [90, 90]
    assert all(c.attributes["gen_ai.system"] == "openai" for c in calls)
    # Neither the brief, the proposal nor the model's answers are in any span.
    dumped = json.dumps([_memory_span(s) for s in memory_spans.get_finished_spans()])
    for text in (PROPOSAL, request.objective, request.context, "outbox", "idempotency"):
        assert text not in dumped, text


def test_a_model_call_whose_answer_is_unusable_is_a_failed_span(memory_spans):
    """The structured loop's verdict reaches the call's span: error.type malformed,
    then the repair's call ends well."""
    from vetq.core.llm.gate import DirectGate
    from vetq.core.llm.scripted import ScriptedLLMClient
    from vetq.core.llm.structured import ask_structured
    from vetq.core.llm.types import Message

    client = ScriptedLLMClient(["no JSON here", '{"a": 1}'], provider="openai", model="m1")
    answer = ask_structured(
        DirectGate(),
        client,
        stage="s",
        system="JSON only.",
        messages=[Message(role="user", content="q")],
        parse=lambda obj: obj["a"],
        max_tokens=64,
        repair_retries=1,
    )
    assert answer.value == 1
    calls = [s for s in memory_spans.get_finished_spans() if s.name == "chat m1"]
    assert [c.attributes.get("error.type") for c in calls] == ["malformed", None]
    assert [c.attributes["vetq.stage"] for c in calls] == ["s", "s.repair"]


# --- a producer and a real worker process ------------------------------------


class OtlpReceiver:
    """An OTLP/HTTP trace receiver on 127.0.0.1: the spans every export carried."""

    def __init__(self) -> None:
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceRequest,
            ExportTraceServiceResponse,
        )

        self.spans: list[dict[str, Any]] = []
        self.raw: list[bytes] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                request = ExportTraceServiceRequest.FromString(body)
                receiver.raw.append(body)
                for resource_spans in request.resource_spans:
                    resource = _proto_attributes(resource_spans.resource.attributes)
                    for scope_spans in resource_spans.scope_spans:
                        receiver.spans.extend(_proto_span(s, resource) for s in scope_spans.spans)
                reply = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1/traces"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _any_value(value: Any) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [_any_value(v) for v in value.array_value.values]
    return getattr(value, kind) if kind else None


def _proto_attributes(attributes: Any) -> dict[str, Any]:
    return {a.key: _any_value(a.value) for a in attributes}


def _proto_span(span: Any, resource: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": span.name,
        "trace_id": span.trace_id.hex(),
        "span_id": span.span_id.hex(),
        "parent_span_id": span.parent_span_id.hex() or None,
        "kind": span.kind,
        "attributes": _proto_attributes(span.attributes),
        "events": [{"name": e.name, "attributes": _proto_attributes(e.attributes)} for e in span.events],
        "links": [{"trace_id": link.trace_id.hex(), "span_id": link.span_id.hex()} for link in span.links],
        "status": span.status.code,
        "resource": resource,
    }


def _memory_span(span: Any) -> dict[str, Any]:
    return {
        "name": span.name,
        "trace_id": f"{span.context.trace_id:032x}",
        "span_id": f"{span.context.span_id:016x}",
        "parent_span_id": f"{span.parent.span_id:016x}" if span.parent else None,
        "attributes": dict(span.attributes),
        "events": [{"name": e.name, "attributes": dict(e.attributes)} for e in span.events],
        "links": [
            {"trace_id": f"{link.context.trace_id:032x}", "span_id": f"{link.context.span_id:016x}"}
            for link in span.links
        ],
    }


@pytest.fixture
@starts_processes
def locked_redis_url(tmp_path):
    """A Redis that asks for the planted password (as tests/test_secrets.py's)."""
    from vetq.workers.embedded_redis import EmbeddedRedis

    server = EmbeddedRedis(tmp_path / "locked", role="tests").start()
    redis.Redis.from_url(server.url).config_set("requirepass", REDIS_PASSWORD)
    url = f"redis://:{REDIS_PASSWORD}@{server.url.rsplit('@', 1)[1]}"
    yield url
    redis.Redis.from_url(url).config_set("requirepass", "")
    server.stop()


@pytest.mark.processes
def test_one_trace_from_the_producer_through_a_worker_process(locked_redis_url, queue_settings, memory_spans, tmp_path):
    from vetq.api_client.admin import Admin
    from vetq.api_client.client import Client
    from vetq.eval.fake_provider import FakeProvider

    receiver = OtlpReceiver()
    log_path = tmp_path / "worker.log"
    with FakeProvider() as fake, log_path.open("w") as log_file:
        fake.set_responder(answer_like_a_model)
        env = {
            "PATH": "/usr/bin:/bin",
            "HOME": str(tmp_path),
            "VETQ_REDIS_URL": locked_redis_url,
            "VETQ_HOME": str(tmp_path / "home"),
            "VETQ_GENERATOR": "openai:fake-generator",
            "VETQ_CRITIC": "openai:fake-critic",
            "VETQ_LOG_LEVEL": "INFO",
            "OPENAI_BASE_URL": fake.base_url_openai,
            "OPENAI_API_KEY": API_KEY,
            # Only the standard variables turn tracing on and say where spans go.
            "OTEL_TRACES_EXPORTER": "otlp",
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": receiver.url,
            "OTEL_BSP_SCHEDULE_DELAY": "100",
            "OTEL_SERVICE_NAME": "vetq-worker-under-test",
        }
        worker = subprocess.Popen(
            [sys.executable, "-m", "vetq.api_client.cli", "worker", "--queues", "extract",
             "--concurrency", "1", "--pool", "prefork"],
            env=env, stdin=subprocess.DEVNULL, stdout=log_file, stderr=log_file,
        )  # fmt: skip
        try:
            with Client(locked_redis_url, settings=queue_settings) as client:
                wait_until(lambda: Admin.of(client).workers(), "a worker", timeout=60)
                job = client.submit_extraction(GLOBEX)
                result = job.result(timeout=90)
                batch = client.submit_batch([{"text": GLOBEX}, {"text": GLOBEX}])
                batch_results = batch.results(timeout=90)
                # A provider that echoes the key it was given in its error, as some do.
                fake.push_fault(
                    {"kind": "5xx", "status": 401, "body": {"error": {"message": f"Incorrect API key: {API_KEY}"}}}
                )
                # Another document: the same one would be answered from the response cache.
                failed_job = client.submit_extraction(GLOBEX.replace("Thanks!", "Thank you!"))
                failed = failed_job.result(timeout=90)
            every_trace = {job.trace_id, failed_job.trace_id, *(j.trace_id for j in batch.jobs)}
            wait_until(
                lambda: every_trace <= {s["trace_id"] for s in receiver.spans if s["name"] == "vetq.extract"},
                "the worker's task spans at the receiver",
                timeout=60,
            )
            wait_until(
                lambda: sum(1 for s in receiver.spans if s["name"] == "vetq.gate") >= 3,
                "the worker's stage spans at the receiver",
                timeout=60,
            )
        finally:
            worker.terminate()
            worker.wait(timeout=30)
            receiver.close()

    assert result["status"] == "ok", result
    assert [r["status"] for r in batch_results] == ["ok", "ok"]
    assert failed["status"] == "error" and failed["error"]["code"] == "PROVIDER_HTTP_ERROR"

    produced = [_memory_span(s) for s in memory_spans.get_finished_spans()]
    worked = receiver.spans

    # The single job: producer span -> task span -> stage spans -> model-call spans, one trace.
    trace_id = job.trace_id
    assert result["trace_id"] == trace_id and len(trace_id) == 32
    (submit,) = [s for s in produced if s["name"] == "vetq.submit" and s["trace_id"] == trace_id]
    assert submit["attributes"]["messaging.message.id"] == job.id
    in_trace = [s for s in worked if s["trace_id"] == trace_id]
    by_name = {s["name"]: s for s in in_trace}
    task = by_name["vetq.extract"]
    assert task["parent_span_id"] == submit["span_id"]
    assert task["resource"]["service.name"] == "vetq-worker-under-test"
    assert task["attributes"]["messaging.message.id"] == job.id
    assert task["attributes"]["vetq.status"] == "ok"
    for stage in ("vetq.generator", "vetq.heuristics", "vetq.critic", "vetq.gate"):
        assert by_name[stage]["parent_span_id"] == task["span_id"], stage
    generator_call, critic_call = by_name["chat fake-generator"], by_name["chat fake-critic"]
    assert generator_call["parent_span_id"] == by_name["vetq.generator"]["span_id"]
    assert critic_call["parent_span_id"] == by_name["vetq.critic"]["span_id"]
    for call, model in ((generator_call, "fake-generator"), (critic_call, "fake-critic")):
        attributes = call["attributes"]
        assert attributes["gen_ai.operation.name"] == "chat"
        assert attributes["gen_ai.system"] == "openai"
        assert attributes["gen_ai.request.model"] == model
        assert attributes["gen_ai.usage.input_tokens"] > 0
        assert attributes["gen_ai.usage.output_tokens"] > 0
    usage = result["usage"]["generator"]
    assert generator_call["attributes"]["gen_ai.usage.input_tokens"] == usage["prompt_tokens"]

    # The worker's log lines for the job carry the span's trace id.
    lines = [json.loads(line) for line in log_path.read_text().splitlines() if line.startswith("{")]
    job_lines = [line for line in lines if line.get("job_id") == job.id]
    assert {line["event"] for line in job_lines} >= {"job_started", "job_finished"}
    assert {line["trace_id"] for line in job_lines} == {task["trace_id"]}
    (model_call,) = [line for line in lines if line.get("event") == "model_call" and line.get("stage") == "generator"][
        :1
    ]
    assert model_call["trace_id"] == trace_id

    # A batch: one producer span per chunk; each job's task span roots the job's own
    # trace (its log trace_id) and links to the chunk's span.
    (chunk,) = [s for s in produced if s["name"] == "vetq.submit_batch"]
    assert chunk["attributes"]["messaging.batch.message_count"] == 2
    for batch_job in batch.jobs:
        (batch_task,) = [s for s in worked if s["name"] == "vetq.extract" and s["trace_id"] == batch_job.trace_id]
        assert batch_task["parent_span_id"] is None
        assert batch_task["links"] == [{"trace_id": chunk["trace_id"], "span_id": chunk["span_id"]}]
        assert any(s["parent_span_id"] == batch_task["span_id"] for s in worked if s["name"] == "vetq.generator")

    # The failed call: its span says what failed by type, never by message.
    failed_task = next(s for s in worked if s["name"] == "vetq.extract" and s["trace_id"] == failed_job.trace_id)
    assert failed_task["attributes"]["error.type"] == "PROVIDER_HTTP_ERROR"
    (failed_call,) = [s for s in worked if s["trace_id"] == failed_job.trace_id and s["name"] == "chat fake-generator"]
    assert failed_call["attributes"]["error.type"] == "ProviderHTTPError"

    # No secret, prompt, answer or document text anywhere in a span, at either end.
    everything = json.dumps([produced, worked]) + "".join(b.decode("latin-1") for b in receiver.raw)
    assert API_KEY not in everything
    assert REDIS_PASSWORD not in everything
    for text in ("Globex", "GLX/2026/778", "forwarding the bill", "pay in GBP", "checked"):
        assert text not in everything, text
    assert str(GLOBEX_DATA["vendor_name"]) not in everything
