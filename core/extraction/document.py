"""The rules a document must meet before any job is sent or run on it, so a producer
can refuse a bad document without importing the extraction pipeline (or any PDF
library: a PDF is checked for its size and magic only, and converted by the worker)."""

from __future__ import annotations

from vetq.core.documents.input import decode_pdf
from vetq.core.errors import InvalidInputError

__all__ = ["check_document", "check_input"]


def check_document(text: str, max_chars: int, *, what: str = "text") -> None:
    """The document rules both producers and workers apply: not empty, not too long."""
    if not text.strip():
        if what == "text":
            raise InvalidInputError("text is empty: send the document's text")
        raise InvalidInputError(f"{what} holds no text: send a document with some text in it")
    if len(text) > max_chars:
        raise InvalidInputError(
            f"{what} is {len(text):,} characters; the limit is {max_chars:,} "
            "(VETQ_MAX_DOCUMENT_CHARS): split the document or raise the limit"
        )


def check_input(text: str | None, pdf: str | None, *, max_chars: int, max_pdf_bytes: int) -> bytes | None:
    """A request's document, checked as a producer checks it: text by the document
    rules, a PDF (base64) by its size (VETQ_MAX_PDF_BYTES, checked before it is
    decoded) and magic. The PDF's bytes, or None for text."""
    if pdf is not None:
        return decode_pdf(pdf, max_pdf_bytes)
    check_document(text or "", max_chars)
    return None
