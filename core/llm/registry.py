"""The one registry of providers: the name a `provider:model` spec uses, and the
client class that serves it. Each class builds itself from a spec (`from_spec`);
importing a class imports no SDK (the clients import theirs when built)."""

from __future__ import annotations

from typing import Protocol

from vetq.core.llm.client import LLMClient
from vetq.core.llm.providers import AnthropicClient, BedrockClient, OpenAIClient
from vetq.core.llm.replay import ReplayClient
from vetq.core.llm.scripted import ScriptedLLMClient


class BuiltFromSpec(Protocol):
    @classmethod
    def from_spec(cls, model: str, *, timeout_s: float, base_url: str | None) -> LLMClient: ...


PROVIDERS: dict[str, type[BuiltFromSpec]] = {
    "anthropic": AnthropicClient,
    "openai": OpenAIClient,
    "bedrock": BedrockClient,
    # replay:<fixture path>: answers recorded earlier, for offline runs.
    "replay": ReplayClient,
    # Named so VETQ_LIMITS and specs in tests can use it; its from_spec refuses (a
    # scripted client holds a test's answers, built by the test).
    "scripted": ScriptedLLMClient,
}
