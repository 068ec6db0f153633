"""The result format (core.results): one error shape for every job kind, one reader of
it, and results written by a worker of the previous format still read."""

from __future__ import annotations

from tests.conftest import GLOBEX
from vetq.api_client import JobStatus
from vetq.core.errors import ErrorCode
from vetq.core.extraction.pipeline import ExtractionPipeline
from vetq.core.results import error_of, error_result, upgrade
from vetq.core.review.schema import ReviewError, ReviewErrorMeta

COMMON = {"format", "status", "error", "trace_id"}

FORMAT_1_EXTRACTION_ERROR = {
    "status": "error",
    "error_code": "RATE_LIMITED",
    "error_message": "429 after 4 attempts",
    "trace_id": "t-1",
    "usage": {},
}
FORMAT_1_REVIEW_ERROR = {
    "error": {"code": "BLINDNESS_LEAK", "message": "the plan is in the context"},
    "meta": {"review_mode": "blind_first", "phases": 0, "trace_id": "t-2"},
}
FORMAT_1_REVIEW = {
    "verdict": "KEEP",
    "recommendation": "go",
    "falsification_probe": {"description": "d", "expected_signal": "s"},
    "confidence": 0.8,
    "meta": {"review_id": "r", "review_mode": "blind_first", "model": "m", "trace_id": "t-3"},
}


def test_extraction_and_review_errors_share_one_shape():
    extraction = ExtractionPipeline().run({"kind": "extract", "text": "   ", "trace_id": "t-x"}).model_dump(mode="json")
    review = ReviewError.of(ErrorCode.TIMEOUT, "too slow", meta=ReviewErrorMeta(trace_id="t-r")).model_dump(
        mode="json", exclude_none=True
    )
    made = error_result(ErrorCode.NOT_FOUND, "no such job", trace_id="t-c")
    for result in (extraction, review, made):
        assert set(result) >= COMMON, result
        assert result["format"] == 2 and result["status"] == "error"
        assert set(result["error"]) == {"code", "message"}
    assert extraction["error"]["code"] == "INVALID_INPUT" and extraction["trace_id"] == "t-x"
    assert "usage" in extraction and "meta" in review
    assert review["trace_id"] == "t-r" == review["meta"]["trace_id"]


def test_error_of_reads_every_error_of_both_formats_and_no_success():
    success = ExtractionPipeline().validate(GLOBEX, {"total": 583.2}, heuristics_only=True).model_dump(mode="json")
    assert success["format"] == 2 and success["status"] in ("ok", "needs_review")
    assert error_of(success) is None
    assert error_of(upgrade(FORMAT_1_REVIEW)) is None
    assert error_of(FORMAT_1_REVIEW) is None
    assert error_of(FORMAT_1_EXTRACTION_ERROR) == ("RATE_LIMITED", "429 after 4 attempts")
    assert error_of(FORMAT_1_REVIEW_ERROR) == ("BLINDNESS_LEAK", "the plan is in the context")
    assert error_of(error_result(ErrorCode.TIMEOUT, "late")) == ("TIMEOUT", "late")
    for not_a_result in (None, "error", ["error"], 3):
        assert error_of(not_a_result) is None


def test_a_format_1_result_is_upgraded_to_format_2():
    assert upgrade(FORMAT_1_EXTRACTION_ERROR) == {
        "format": 2,
        "status": "error",
        "trace_id": "t-1",
        "usage": {},
        "error": {"code": "RATE_LIMITED", "message": "429 after 4 attempts"},
    }
    review_error = upgrade(FORMAT_1_REVIEW_ERROR)
    assert review_error["status"] == "error" and review_error["trace_id"] == "t-2"
    assert review_error["meta"] == FORMAT_1_REVIEW_ERROR["meta"]
    review = upgrade(FORMAT_1_REVIEW)
    assert (review["format"], review["status"], review["trace_id"]) == (2, "ok", "t-3")
    current = error_result(ErrorCode.TIMEOUT, "late")
    assert upgrade(current) == current


def test_a_result_an_older_worker_left_in_the_backend_reads_in_format_2(redis_url, queue_settings):
    from vetq.api_client.client import Client

    with Client(redis_url, settings=queue_settings) as client:
        for job_id, stored in (("old-extraction", FORMAT_1_EXTRACTION_ERROR), ("old-review", FORMAT_1_REVIEW)):
            client._record_submitted([job_id])
            client.app.backend.store_result(job_id, stored, "SUCCESS")
        failed = client.job("old-extraction")
        assert failed.status() is JobStatus.FAILED
        result = failed.result(timeout=10)
        assert result["format"] == 2 and result["error"] == {"code": "RATE_LIMITED", "message": "429 after 4 attempts"}
        done = client.job("old-review")
        assert done.status() is JobStatus.DONE
        assert done.result(timeout=10)["status"] == "ok"
