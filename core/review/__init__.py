"""Blind-first decision review: the reviewer forms its own position without the
proposal (Phase 1), then the proposal is revealed and compared (Phase 2).

Core logic only -- no queue, no Redis, no provider SDK. Entry point:
`core.review.service.run_review`.
"""

from core.review.blindness import BlindnessReport, check_blindness
from core.review.budget import MIN_CALL_TOKENS, BudgetExceeded, BudgetLedger, LocalBudget
from core.review.schema import (
    ReviewConfig,
    ReviewError,
    ReviewMeta,
    ReviewRequest,
    ReviewResult,
)
from core.review.service import preflight, run_review
from core.review.session import ReviewSession, ReviewTimeoutError
from core.review.should_review import ShouldReviewRequest, ShouldReviewResult, should_review
from core.review.telemetry import ListSink, TelemetrySink, build_outcome_record, build_review_record

__all__ = [
    "MIN_CALL_TOKENS",
    "BlindnessReport",
    "BudgetExceeded",
    "BudgetLedger",
    "ListSink",
    "LocalBudget",
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
