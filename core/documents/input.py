"""The PDF checks a producer makes before anything is sent, and a worker makes again
before converting: base64 that decodes, no larger than VETQ_MAX_PDF_BYTES, and the
%PDF- magic. Imports no PDF library: producers need none."""

from __future__ import annotations

import base64
import binascii
import re

from vetq.core.errors import InvalidInputError

__all__ = ["PDF_MAGIC", "decode_pdf", "encode_pdf", "is_pdf", "pdf_size_limit_text"]

PDF_MAGIC = b"%PDF-"
_WHITESPACE = re.compile(rb"\s+")


def is_pdf(data: bytes) -> bool:
    """A PDF by its magic, not its name: the file starts with %PDF-."""
    return data[: len(PDF_MAGIC)] == PDF_MAGIC


def encode_pdf(data: bytes) -> str:
    """A PDF's bytes as the message carries them: standard base64, no line breaks."""
    return base64.b64encode(data).decode("ascii")


def pdf_size_limit_text(size: int, max_bytes: int) -> str:
    return (
        f"the PDF is {size:,} bytes; the limit is {max_bytes:,} (VETQ_MAX_PDF_BYTES): "
        "split it, or send its text instead"
    )


def decode_pdf(encoded: str, max_bytes: int) -> bytes:
    """The PDF a request's `pdf` field carries, or INVALID_INPUT saying what to send.
    The size is checked from the encoded length first, so an oversized PDF is refused
    before it is decoded."""
    raw = encoded.encode("ascii", "replace")
    if any(ch in raw for ch in b" \t\r\n"):
        raw = _WHITESPACE.sub(b"", raw)  # base64 wrapped at 76 columns is still base64
    estimated = len(raw) * 3 // 4 - raw[-2:].count(b"=")
    if estimated > max_bytes:
        raise InvalidInputError(pdf_size_limit_text(estimated, max_bytes))
    try:
        data = base64.b64decode(raw, validate=True)
    except (binascii.Error, ValueError):
        data = b""
    if not is_pdf(data):
        raise InvalidInputError(
            "pdf must be a PDF file's bytes in base64 (they start with %PDF-); "
            "a file path or any other text is never read: send the file's contents"
        )
    return data
