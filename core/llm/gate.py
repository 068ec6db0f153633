"""The seam every model call passes through.

Stages never call a client directly: they hand the client and request to a gate.
In a plain process the gate is direct; in a worker it is the Redis-backed call gate
(rate limiter, budget ledger, response cache) from workers/."""

from __future__ import annotations

from typing import Protocol

from core.llm.client import LLMClient
from core.llm.types import LLMRequest, LLMResponse


class CallGate(Protocol):
    def call(self, client: LLMClient, request: LLMRequest, *, stage: str) -> LLMResponse: ...


class DirectGate:
    """No limits, no cache: the model is called as asked."""

    def call(self, client: LLMClient, request: LLMRequest, *, stage: str) -> LLMResponse:
        return client.complete(request)
