"""Build the client a role's `provider:model` names. Provider SDKs are imported only
here, and only when a role actually needs its client."""

from __future__ import annotations

import os

from core.errors import ConfigError
from core.llm.client import LLMClient, ModelSpec


def make_client(
    spec: ModelSpec, *, timeout_s: float = 60.0, record_to: str | os.PathLike[str] | None = None
) -> LLMClient:
    """`record_to` wraps the client so every answer is also written to that replay
    fixture (a live eval run recording fresh fixtures)."""
    client = _make(spec, timeout_s=timeout_s)
    if record_to is not None:
        from core.llm.replay import RecordingClient

        return RecordingClient(client, record_to)
    return client


def _make(spec: ModelSpec, *, timeout_s: float) -> LLMClient:
    if spec.provider == "replay":
        from core.llm.replay import ReplayClient

        # replay:<fixture path>: answers recorded earlier, for offline runs.
        return ReplayClient(spec.model)
    if spec.provider == "scripted":
        raise ConfigError("the scripted provider exists only inside tests; choose anthropic, openai, bedrock or replay")
    from core.llm.providers import build_client

    return build_client(spec, timeout_s=timeout_s)
