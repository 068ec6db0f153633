"""Blind-first decision review: the reviewer forms its own position without the
proposal (Phase 1), then the proposal is revealed and compared (Phase 2).

Core logic only -- no queue, no Redis, no provider SDK. Entry point:
`core.review.service.run_review`.
"""

from vetq.core.review.blindness import BlindnessReport, check_blindness
from vetq.core.review.schema import (
    ReviewConfig,
    ReviewError,
    ReviewMeta,
    ReviewRequest,
    ReviewResult,
)
from vetq.core.review.service import preflight, run_review
from vetq.core.review.session import ReviewSession, ReviewTimeoutError
from vetq.core.review.should_review import ShouldReviewRequest, ShouldReviewResult, should_review
from vetq.core.review.telemetry import ListSink, TelemetrySink, build_outcome_record, build_review_record

__all__ = [
    "BlindnessReport",
    "ListSink",
    "ReviewConfig",
    "ReviewError",
    "ReviewMeta",
    "ReviewRequest",
    "ReviewResult",
    "ReviewSession",
    "ReviewTimeoutError",
    "ShouldReviewRequest",
    "ShouldReviewResult",
    "TelemetrySink",
    "build_outcome_record",
    "build_review_record",
    "check_blindness",
    "preflight",
    "run_review",
    "should_review",
]
