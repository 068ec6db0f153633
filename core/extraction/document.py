"""The rules a document's text must meet before any job is sent or run on it, so a
producer can refuse a bad document without importing the extraction pipeline."""

from __future__ import annotations

from vetq.core.errors import InvalidInputError

__all__ = ["check_document"]


def check_document(text: str, max_chars: int) -> None:
    """The document rules both producers and workers apply: not empty, not too long."""
    if not text.strip():
        raise InvalidInputError("text is empty: send the document's text")
    if len(text) > max_chars:
        raise InvalidInputError(
            f"text is {len(text):,} characters; the limit is {max_chars:,} "
            "(VETQ_MAX_DOCUMENT_CHARS): split the document or raise the limit"
        )
