"""A provider-free token estimate, deliberately on the high side so a reservation
made from it rarely falls short of what the provider counts."""

from __future__ import annotations

import math

from vetq.core.llm.types import LLMRequest

PER_MESSAGE_OVERHEAD = 4


def estimate_text_tokens(text: str) -> int:
    # Counted in C (encoding drops each non-ASCII character, keeps one byte per ASCII
    # one): a character loop in Python was 2% of a worker's CPU per extraction job.
    ascii_chars = len(text) if text.isascii() else len(text.encode("ascii", "ignore"))
    return math.ceil(ascii_chars / 3) + (len(text) - ascii_chars)


def estimate_prompt_tokens(request: LLMRequest) -> int:
    """ceil(ASCII characters / 3) + one per non-ASCII character, plus 4 per message
    (the system prompt counts as one)."""
    parts = [request.system, *(m.content for m in request.messages)]
    return sum(estimate_text_tokens(p) + PER_MESSAGE_OVERHEAD for p in parts)
