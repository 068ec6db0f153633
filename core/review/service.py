"""The entry point of a review: blindness check, then the mode, then the result.

Error/retry contract
--------------------
`run_review` returns a ReviewResult, or a ReviewError for every failure a retry
would not fix (BLINDNESS_LEAK, BUDGET_EXCEEDED, MALFORMED_RESPONSE,
OUTPUT_TRUNCATED, TIMEOUT of the review, PROVIDER_HTTP_ERROR 4xx, CONFIG_ERROR,
...). It RAISES the core.llm.errors.LLMError whose `.retryable` is True
(RateLimitedError, ProviderNetworkError, ProviderTimeoutError, ProviderHTTPError
5xx/408/409) so the queue layer can retry the job. Exceptions that are not a
VetqError (bugs) propagate unchanged.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any, cast

from vetq.core.errors import ErrorCode, VetqError
from vetq.core.llm.client import LLMClient
from vetq.core.llm.gate import CallGate
from vetq.core.logging import get_logger
from vetq.core.review.blindness import BlindnessReport, check_blindness
from vetq.core.review.modes import BLIND_MODES, MODES
from vetq.core.review.schema import (
    AnyReviewMode,
    FalsificationProbe,
    ReviewConfig,
    ReviewError,
    ReviewErrorMeta,
    ReviewMeta,
    ReviewRequest,
    ReviewResult,
)
from vetq.core.review.session import ReviewSession
from vetq.core.review.telemetry import TelemetrySink, build_review_record

log = get_logger("vetq.review")


def preflight(
    request: ReviewRequest, config: ReviewConfig, mode: AnyReviewMode | None = None
) -> BlindnessReport | ReviewError:
    """The blindness check alone: a ReviewError (BLINDNESS_LEAK) when a review in a
    blind mode must be refused, else the report. `mode` is the mode that will run
    (default: the request's). Callers may run it before building a client;
    run_review runs it first thing, for the mode it runs."""
    mode = mode or request.review_mode
    report = check_blindness(request, leak=config.blindness_leak, warn=config.blindness_warn)
    if mode in BLIND_MODES and report.leaked:
        return ReviewError.of(
            ErrorCode.BLINDNESS_LEAK,
            report.leak_message(),
            meta=ReviewErrorMeta(review_mode=mode, trace_id=request.trace_id),
        )
    return report


def _model_name(client: LLMClient) -> str:
    return f"{getattr(client, 'provider', 'unknown')}:{getattr(client, 'model', 'unknown')}"


def run_review(
    request: ReviewRequest,
    client: LLMClient | Callable[[], LLMClient],
    *,
    gate: CallGate,
    config: ReviewConfig | None = None,
    trace_id: str | None = None,
    clock: Callable[[], float] = time.monotonic,
    telemetry: TelemetrySink | None = None,
    mode: str | None = None,
) -> ReviewResult | ReviewError:
    """Run one review. `client` may be a zero-argument factory: it is then only
    called after the blindness check passed, so a refused review never builds a
    client. The review's token budget is the gate's: `gate.job_scope(max_review_tokens)`
    (a worker's gate already holds the job's scope; a DirectGate counts it here)."""
    config = config or ReviewConfig()
    trace_id = trace_id or request.trace_id
    review_id = uuid.uuid4().hex
    # `mode` (the queue's bench_mode header) overrides request.review_mode for the
    # benchmark only: a producer's fleet refuses it, so nobody can pick a mode (or skip
    # the blindness check) by forging a header.
    if mode is not None and not config.bench_modes:
        return ReviewError.of(
            ErrorCode.INVALID_INPUT,
            "this worker does not run benchmark modes (the bench_mode header is for `vetq bench review`'s own "
            "workers): send review_mode in the request instead",
            meta=ReviewErrorMeta(trace_id=trace_id),
        )
    asked = mode or request.review_mode
    if asked not in MODES:
        return ReviewError.of(
            ErrorCode.INVALID_INPUT, f"unknown review mode {asked!r}", meta=ReviewErrorMeta(trace_id=trace_id)
        )
    run_mode = cast(AnyReviewMode, asked)  # MODES' keys are AnyReviewMode's values (tested)
    started = time.monotonic()

    report = preflight(request, config, run_mode)
    if isinstance(report, ReviewError):
        # Refused before any client is built or any token is spent.
        log.warning("review.blindness_leak", review_id=review_id, mode=run_mode, trace_id=trace_id)
        error = report.model_copy(
            update={
                "meta": ReviewErrorMeta(review_id=review_id, review_mode=run_mode, trace_id=trace_id, latency_ms=0),
                "trace_id": trace_id,
            }
        )
        _emit(telemetry, error, request, mode=run_mode, model="")
        return error

    if not isinstance(client, LLMClient) and callable(client):
        client = client()
    model = _model_name(client)
    session = ReviewSession(client, gate.job_scope(config.max_review_tokens), config, clock=clock)

    def elapsed_ms() -> int:
        return int((time.monotonic() - started) * 1000)

    def error_meta() -> ReviewErrorMeta:
        return ReviewErrorMeta(
            review_id=review_id,
            review_mode=run_mode,
            model=model,
            phases=0,
            usage=session.usage,
            latency_ms=elapsed_ms(),
            fallbacks=list(session.fallbacks),
            trace_id=trace_id,
        )

    log.info(
        "review.start",
        review_id=review_id,
        mode=run_mode,
        model=model,
        trace_id=trace_id,
        blindness_score=round(report.score, 3),
    )
    try:
        outcome = MODES[run_mode](request, session)
    except VetqError as exc:
        if getattr(exc, "retryable", False):
            log.warning("review.retryable_error", review_id=review_id, code=exc.code.value, calls=session.calls)
            raise
        log.warning("review.failed", review_id=review_id, code=exc.code.value, calls=session.calls)
        error = ReviewError.of(exc.code, exc.message, meta=error_meta())
        _emit(telemetry, error, request, mode=run_mode, model=model)
        return error

    answer = outcome.verdict
    result = ReviewResult(
        verdict=answer["verdict"],
        recommendation=answer["recommendation"],
        critical_assumptions=answer["critical_assumptions"],
        material_risks=answer["material_risks"],
        better_alternative=answer.get("better_alternative"),
        falsification_probe=FalsificationProbe(**answer["falsification_probe"]),
        confidence=answer["confidence"],
        meta=ReviewMeta(
            review_id=review_id,
            review_mode=run_mode,
            model=model,
            phases=outcome.phases,
            usage=session.usage,
            latency_ms=elapsed_ms(),
            budget_exhausted=True if outcome.budget_exhausted else None,
            blindness_warning=report.warning,
            fallbacks=list(session.fallbacks),
            trace_id=trace_id,
        ),
    )
    log.info(
        "review.done",
        review_id=review_id,
        verdict=result.verdict,
        calls=session.calls,
        total_tokens=session.usage.total_tokens,
    )
    _emit(telemetry, result, request, mode=run_mode, model=model)
    return result


def _emit(sink: TelemetrySink | None, outcome: Any, request: ReviewRequest, *, mode: str, model: str) -> None:
    if sink is None:
        return
    try:
        sink.write(build_review_record(outcome, request, mode=mode, model=model))
    except Exception:
        log.warning("review.telemetry_failed", exc_info=True)


def config_from_settings(settings: Any) -> ReviewConfig:
    """The review knobs of VetqSettings, in the shape the review core takes."""
    return ReviewConfig(
        max_tokens_per_call=settings.max_tokens_per_call,
        max_review_tokens=settings.max_review_tokens,
        blindness_leak=settings.blindness_leak,
        blindness_warn=settings.blindness_warn,
        review_timeout_s=settings.review_timeout_s,
        bench_modes=settings.bench_modes,
    )
