"""The tracing seam: spans through a `Tracer`, a no-op unless OpenTelemetry is on.

Tracing is on when the `vetq[otel]` extra is installed and the standard OpenTelemetry
variables ask for traces: `OTEL_TRACES_EXPORTER` set to an exporter other than `none`,
or an OTLP endpoint (`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`)
given; `OTEL_SDK_DISABLED=true` turns it off. Everything else (sampler, endpoint,
batching, resource) is the SDK's own configuration. A host application (or a test) can
hand vetq its own TracerProvider with `use_opentelemetry(provider)`.

This module imports no OpenTelemetry: the implementation (core/otel_tracing.py) is
loaded the first time a span is asked for, and only when tracing is on, so core stays
importable without the extra and the off path costs one attribute read per span.

Attributes are ids, names, counts and outcomes: never a prompt, an answer, document
text or a secret (tests/test_tracing.py plants them and looks).
"""

from __future__ import annotations

import os
import threading
import uuid
from collections.abc import Iterator, Mapping, MutableMapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any, Protocol

AttributeValue = str | bool | int | float | Sequence[str]

# W3C trace context in a message's headers (core.queue keeps them across requeues).
TRACEPARENT_HEADER = "traceparent"
TRACESTATE_HEADER = "tracestate"


class Span(Protocol):
    def set_attribute(self, key: str, value: AttributeValue | None) -> None: ...

    def set_error(self, error_type: str) -> None:
        """The span failed: `error.type` (a class name or a code, never a message)."""
        ...

    @property
    def trace_id(self) -> str | None:
        """The span's trace id as 32 hex digits (None off)."""
        ...


class Tracer(Protocol):
    enabled: bool

    def span(
        self, name: str, attributes: Mapping[str, AttributeValue | None] | None = None, *, kind: str = "internal"
    ) -> AbstractContextManager[Span]:
        """A span, child of the current one, current while the block runs. An exception
        leaving the block marks it failed with the exception's class name."""
        ...

    def span_in_trace(
        self,
        name: str,
        trace_id: str | None,
        attributes: Mapping[str, AttributeValue | None] | None = None,
        *,
        kind: str = "internal",
        carrier: Mapping[str, Any] | None = None,
    ) -> AbstractContextManager[Span]:
        """A span in the trace `trace_id` (32 hex digits): a child of the parent
        `carrier` holds (message headers; without one, the current span) when that
        parent is in the same trace, else a root of that trace linked to the parent."""
        ...

    def inject(self, headers: MutableMapping[str, Any]) -> None:
        """Put the current span's W3C trace context into `headers`."""
        ...

    def new_trace_id(self) -> str:
        """A new job's trace id: the current span's trace when there is one, else new."""
        ...

    def flush(self) -> None: ...


class _NoopSpan:
    trace_id = None

    def set_attribute(self, key: str, value: AttributeValue | None) -> None:
        pass

    def set_error(self, error_type: str) -> None:
        pass


class _NoopContext:
    """A reusable context manager yielding the no-op span (no allocation per span)."""

    def __enter__(self) -> Span:
        return NOOP_SPAN

    def __exit__(self, *exc: object) -> None:
        return None


NOOP_SPAN: Span = _NoopSpan()
_NOOP_CONTEXT = _NoopContext()


class NoopTracer:
    enabled = False

    def span(
        self, name: str, attributes: Mapping[str, AttributeValue | None] | None = None, *, kind: str = "internal"
    ) -> AbstractContextManager[Span]:
        return _NOOP_CONTEXT

    def span_in_trace(
        self,
        name: str,
        trace_id: str | None,
        attributes: Mapping[str, AttributeValue | None] | None = None,
        *,
        kind: str = "internal",
        carrier: Mapping[str, Any] | None = None,
    ) -> AbstractContextManager[Span]:
        return _NOOP_CONTEXT

    def inject(self, headers: MutableMapping[str, Any]) -> None:
        pass

    def new_trace_id(self) -> str:
        return uuid.uuid4().hex

    def flush(self) -> None:
        pass


_lock = threading.Lock()
_tracer: Tracer | None = None


def traces_requested(environ: Mapping[str, str] | None = None) -> bool:
    """Whether the standard OTEL_* variables ask for traces (see the module's text)."""
    env = os.environ if environ is None else environ
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    exporter = env.get("OTEL_TRACES_EXPORTER", "").strip().lower()
    if exporter:
        return any(name.strip() not in ("", "none") for name in exporter.split(","))
    return bool(env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or env.get("OTEL_EXPORTER_OTLP_ENDPOINT"))


def get_tracer() -> Tracer:
    """The process's tracer, decided on first use: OpenTelemetry's when it is on."""
    tracer = _tracer
    if tracer is not None:
        return tracer
    with _lock:
        if _tracer is None:
            _set(_from_environment())
        tracer = _tracer
        assert tracer is not None
        return tracer


def _set(tracer: Tracer | None) -> None:
    global _tracer
    _tracer = tracer


def _from_environment() -> Tracer:
    if not traces_requested():
        return NoopTracer()
    try:
        from vetq.core import otel_tracing
    except ImportError:
        from vetq.core.logging import get_logger

        get_logger("vetq.tracing").warning(
            "tracing_unavailable", reason="OTEL_* variables ask for traces but vetq[otel] is not installed"
        )
        return NoopTracer()
    return otel_tracing.OtelTracer.from_environment()


def use_opentelemetry(tracer_provider: Any = None) -> Tracer:
    """Trace through OpenTelemetry with `tracer_provider` (an SDK TracerProvider; by
    default the one the OTEL_* variables describe), whatever the variables say."""
    from vetq.core import otel_tracing

    tracer: Tracer = (
        otel_tracing.OtelTracer.from_environment()
        if tracer_provider is None
        else otel_tracing.OtelTracer(tracer_provider)
    )
    with _lock:
        _set(tracer)
    return tracer


def reset_tracer() -> None:
    """Forget the tracer; the next span decides again from the environment (tests)."""
    with _lock:
        _set(None)


@contextmanager
def stage_span(name: str, **attributes: AttributeValue | None) -> Iterator[Span]:
    """A pipeline stage's span (`vetq.<stage>`)."""
    with get_tracer().span(f"vetq.{name}", {"vetq.stage": name, **attributes}) as span:
        yield span
