"""The client protocol every provider, the scripted client and the replay client
implement, and the `provider:model` spelling of a role's model."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from vetq.core.errors import ConfigError
from vetq.core.llm.types import LLMRequest, LLMResponse


class ModelSpec(BaseModel):
    model_config = ConfigDict(frozen=True)

    provider: str
    model: str

    @classmethod
    def parse(cls, spec: str, *, variable: str = "model") -> ModelSpec:
        provider, sep, model = (spec or "").strip().partition(":")
        if not sep or not provider or not model:
            raise ConfigError(
                f"{variable} must be 'provider:model' (for example anthropic:claude-sonnet-4-5), got {spec!r}"
            )
        from vetq.core.llm.registry import PROVIDERS  # the registry imports the clients, which import this module

        if provider not in PROVIDERS:
            raise ConfigError(f"{variable}: unknown provider {provider!r}; choose one of {', '.join(PROVIDERS)}")
        return cls(provider=provider, model=model)

    def __str__(self) -> str:
        return f"{self.provider}:{self.model}"


@runtime_checkable
class LLMClient(Protocol):
    provider: str
    model: str

    def complete(self, request: LLMRequest) -> LLMResponse:
        """One model call. Raises a core.llm.errors.LLMError subclass on failure."""
        ...
