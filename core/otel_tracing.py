"""The OpenTelemetry side of core/tracing.py: loaded only by it, only when tracing is
on, and only with the `vetq[otel]` extra installed (this module imports the SDK).

The SDK configures itself from the standard variables: the sampler
(OTEL_TRACES_SAMPLER, OTEL_TRACES_SAMPLER_ARG), the resource (OTEL_SERVICE_NAME,
OTEL_RESOURCE_ATTRIBUTES), the batch processor (OTEL_BSP_*) and each exporter's own
(OTEL_EXPORTER_OTLP_*). The exporters are OTEL_TRACES_EXPORTER's names, looked up as
the SDK's auto-configuration does (entry points `opentelemetry_traces_exporter`; `otlp`
is OTLP over HTTP/protobuf, the one the extra installs).

A job's trace id is minted by the producer (a log line's `trace_id`); a span that must
start that trace (a batch's job, whose producer span is its chunk's) is made a root
with that id by VetqIdGenerator, linked to the span that sent it."""

from __future__ import annotations

import contextvars
import os
from collections.abc import Iterator, Mapping, MutableMapping
from contextlib import AbstractContextManager, contextmanager
from importlib.metadata import entry_points
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter
from opentelemetry.sdk.trace.id_generator import RandomIdGenerator
from opentelemetry.trace import Link, SpanKind, Status, StatusCode

from vetq.core.tracing import AttributeValue, Span

_KINDS = {
    "internal": SpanKind.INTERNAL,
    "producer": SpanKind.PRODUCER,
    "consumer": SpanKind.CONSUMER,
    "client": SpanKind.CLIENT,
}
_FORCED_TRACE_ID: contextvars.ContextVar[int | None] = contextvars.ContextVar("vetq_forced_trace_id", default=None)
# OTEL_TRACES_EXPORTER=otlp names the OTLP exporter; the extra installs it over HTTP.
_EXPORTER_ALIASES = {"otlp": "otlp_proto_http"}


class VetqIdGenerator(RandomIdGenerator):
    """Random ids, except a root span's trace id when vetq asks for a given one."""

    def generate_trace_id(self) -> int:
        forced = _FORCED_TRACE_ID.get()
        return forced if forced else super().generate_trace_id()


def trace_id_int(trace_id: str | None) -> int | None:
    """A W3C trace id (32 hex digits, not all zero) as an int; None for anything else."""
    if not isinstance(trace_id, str) or len(trace_id) != 32:
        return None
    try:
        value = int(trace_id, 16)
    except ValueError:
        return None
    return value or None


def exporters_from_environment() -> list[SpanExporter]:
    names = [n.strip().lower() for n in os.environ.get("OTEL_TRACES_EXPORTER", "otlp").split(",")]
    exporters: list[SpanExporter] = []
    for name in names:
        if name in ("", "none"):
            continue
        found = entry_points(group="opentelemetry_traces_exporter", name=name) or entry_points(
            group="opentelemetry_traces_exporter", name=_EXPORTER_ALIASES.get(name, name)
        )
        if not found:
            raise RuntimeError(f"OTEL_TRACES_EXPORTER names {name!r}, which no installed package provides")
        exporters.append(next(iter(found)).load()())
    return exporters


def provider_from_environment() -> TracerProvider:
    """A TracerProvider as the OTEL_* variables describe it (service.name `vetq` unless
    they name one), exporting through a batch processor."""
    named = "OTEL_SERVICE_NAME" in os.environ or "service.name=" in os.environ.get("OTEL_RESOURCE_ATTRIBUTES", "")
    resource = Resource.create({} if named else {SERVICE_NAME: "vetq"})
    provider = TracerProvider(resource=resource, id_generator=VetqIdGenerator())
    for exporter in exporters_from_environment():
        provider.add_span_processor(BatchSpanProcessor(exporter))
    return provider


class _OtelSpan:
    __slots__ = ("_span",)

    def __init__(self, span: trace.Span) -> None:
        self._span = span

    def set_attribute(self, key: str, value: AttributeValue | None) -> None:
        if value is not None:
            self._span.set_attribute(key, value)

    def set_error(self, error_type: str) -> None:
        self._span.set_attribute("error.type", error_type)
        self._span.set_status(Status(StatusCode.ERROR))

    @property
    def trace_id(self) -> str | None:
        context = self._span.get_span_context()
        return f"{context.trace_id:032x}" if context.is_valid else None


def _clean(attributes: Mapping[str, AttributeValue | None] | None) -> dict[str, Any]:
    return {k: v for k, v in (attributes or {}).items() if v is not None}


class OtelTracer:
    enabled = True

    def __init__(self, provider: Any) -> None:
        self.provider = provider
        self._tracer = provider.get_tracer("vetq")

    @classmethod
    def from_environment(cls) -> OtelTracer:
        """The global provider when the host configured an SDK one, else one made from
        the OTEL_* variables (and made the global one)."""
        current = trace.get_tracer_provider()
        if isinstance(current, TracerProvider):
            return cls(current)
        provider = provider_from_environment()
        trace.set_tracer_provider(provider)
        return cls(provider)

    @contextmanager
    def _current(self, span: trace.Span) -> Iterator[Span]:
        wrapped = _OtelSpan(span)
        with trace.use_span(span, end_on_exit=True, record_exception=False, set_status_on_exception=False):
            try:
                yield wrapped
            except BaseException as exc:
                # The class only: an exception's message may quote a document or a key.
                wrapped.set_error(type(exc).__qualname__)
                raise

    def span(
        self, name: str, attributes: Mapping[str, AttributeValue | None] | None = None, *, kind: str = "internal"
    ) -> AbstractContextManager[Span]:
        return self._current(self._tracer.start_span(name, kind=_KINDS[kind], attributes=_clean(attributes)))

    def span_in_trace(
        self,
        name: str,
        trace_id: str | None,
        attributes: Mapping[str, AttributeValue | None] | None = None,
        *,
        kind: str = "internal",
        carrier: Mapping[str, Any] | None = None,
    ) -> AbstractContextManager[Span]:
        parent_context = (
            propagate.extract(_text_carrier(carrier)) if carrier is not None else otel_context.get_current()
        )
        parent = trace.get_current_span(parent_context).get_span_context()
        wanted = trace_id_int(trace_id)
        if wanted is None or (parent.is_valid and parent.trace_id == wanted):
            span = self._tracer.start_span(
                name, context=parent_context, kind=_KINDS[kind], attributes=_clean(attributes)
            )
        else:
            token = _FORCED_TRACE_ID.set(wanted)
            try:
                span = self._tracer.start_span(
                    name,
                    context=otel_context.Context(),  # a root: the trace is the job's own
                    kind=_KINDS[kind],
                    attributes=_clean(attributes),
                    links=[Link(parent)] if parent.is_valid else None,
                )
            finally:
                _FORCED_TRACE_ID.reset(token)
        return self._current(span)

    def inject(self, headers: MutableMapping[str, Any]) -> None:
        propagate.inject(headers)

    def new_trace_id(self) -> str:
        context = trace.get_current_span().get_span_context()
        if context.is_valid:
            return f"{context.trace_id:032x}"
        return f"{RandomIdGenerator().generate_trace_id():032x}"

    def flush(self) -> None:
        force_flush = getattr(self.provider, "force_flush", None)
        if force_flush is not None:
            force_flush()


def _text_carrier(carrier: Mapping[str, Any]) -> dict[str, str]:
    """The string-valued entries of a message's headers (the propagator reads strings)."""
    return {k: v for k, v in carrier.items() if isinstance(k, str) and isinstance(v, str)}
