"""Build the client a role's `provider:model` names, from the one provider registry
(core.llm.registry). Provider SDKs are imported only when a client is built."""

from __future__ import annotations

import os

from vetq.core.llm.client import LLMClient, ModelSpec
from vetq.core.llm.registry import PROVIDERS


def build_client(spec: ModelSpec | str, *, timeout_s: float = 60.0, base_url: str | None = None) -> LLMClient:
    """The client for a `provider:model` spec (`replay:<path>` answers from a recorded
    fixture; `scripted` is refused: tests build ScriptedLLMClient(answers) directly)."""
    if isinstance(spec, str):
        spec = ModelSpec.parse(spec)
    return PROVIDERS[spec.provider].from_spec(spec.model, timeout_s=timeout_s, base_url=base_url)


def make_client(
    spec: ModelSpec, *, timeout_s: float = 60.0, record_to: str | os.PathLike[str] | None = None
) -> LLMClient:
    """A role's client. `record_to` wraps it so every answer is also written to that
    replay fixture (a live eval run recording fresh fixtures)."""
    client = build_client(spec, timeout_s=timeout_s)
    if record_to is not None:
        from vetq.core.llm.replay import RecordingClient

        return RecordingClient(client, record_to)
    return client
