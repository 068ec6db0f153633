"""What each model accepts, declared per `provider:model` prefix, so a request to a
known model is shaped right the first time instead of learning it from an HTTP 400.

A profile says which field carries the completion limit (`max_tokens` or
`max_completion_tokens`), whether a temperature and a reasoning effort are accepted,
and whether a request may ask for JSON mode (OpenAI's client sends `response_format`;
the Anthropic client has no flag to send and the prompt asks for JSON). `shape()`
turns a stage's request into what its model accepts; for the defaults every stage
sends to a chat model it changes nothing, so recorded replay fixtures keep matching.

The first matching prefix wins, so a specific prefix sits above the broader one it
would otherwise fall under. A model no prefix matches gets DEFAULT_PROFILE, and only
such an unknown model gets the fallback: when it refuses a request with HTTP 400/422,
one parameter is dropped or renamed (the one the error body names, else the next in
FALLBACK_ORDER) and the request is sent again; what was learned holds for the rest of
the process, for every stage that calls that model.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from vetq.core.llm.client import LLMClient
from vetq.core.llm.errors import ProviderHTTPError
from vetq.core.llm.types import LLMRequest, LLMResponse
from vetq.core.logging import get_logger
from vetq.core.tracing import get_tracer

if TYPE_CHECKING:  # the gate imports the price table, which matches models with first_prefix_match
    from vetq.core.llm.gate import AnswerCheck, CallGate

log = get_logger("vetq.llm")

TokenField = Literal["max_tokens", "max_completion_tokens"]
T = TypeVar("T")


def first_prefix_match(entries: Iterable[tuple[str, T]], key: str, *, boundaries: str = "") -> T | None:
    """The value of the first (prefix, value) entry whose prefix `key` starts with; None
    when none does. With `boundaries`, a prefix matches only all of `key` or a part
    followed in it by one of those characters (`openai:gpt-5` then matches
    `openai:gpt-5-2025-08-07` but not `openai:gpt-5.4`). The one prefix match of
    `provider:model` keys: model profiles here, prices in core.llm.prices."""
    for prefix, value in entries:
        if key.startswith(prefix) and (not boundaries or len(key) == len(prefix) or key[len(prefix)] in boundaries):
            return value
    return None


@dataclass(frozen=True)
class ModelProfile:
    token_field: TokenField = "max_tokens"
    temperature: bool = True
    reasoning_effort: bool = True
    json_mode: bool = True

    def shape(self, request: LLMRequest) -> LLMRequest:
        """The request as this model accepts it: refused parameters dropped, the
        completion limit in the model's field."""
        update: dict[str, object] = {"max_tokens_field": self.token_field}
        if not self.temperature:
            update["temperature"] = None
        if not self.reasoning_effort:
            update["reasoning_effort"] = None
        if not self.json_mode:
            update["json_mode"] = False
        return request.model_copy(update=update)


DEFAULT_PROFILE = ModelProfile()

# OpenAI's reasoning models (o-series, GPT-5) take max_completion_tokens and refuse any
# temperature but the default; they take a reasoning effort. o1-mini and o1-preview
# also lack the JSON mode.
_OPENAI_REASONING = ModelProfile(token_field="max_completion_tokens", temperature=False)
_OPENAI_CHAT = ModelProfile(reasoning_effort=False)
# The Messages API has no reasoning_effort; AnthropicClient sends no JSON flag (there
# is none) and a temperature only when asked to (the 2.x SDK dropped the argument).
_ANTHROPIC = ModelProfile(reasoning_effort=False)

PROFILES: tuple[tuple[str, ModelProfile], ...] = (
    ("openai:gpt-5-chat", ModelProfile(token_field="max_completion_tokens", reasoning_effort=False)),
    ("openai:gpt-5", _OPENAI_REASONING),
    ("openai:o1-mini", replace(_OPENAI_REASONING, json_mode=False)),
    ("openai:o1-preview", replace(_OPENAI_REASONING, json_mode=False)),
    ("openai:o1", _OPENAI_REASONING),
    ("openai:o3", _OPENAI_REASONING),
    ("openai:o4", _OPENAI_REASONING),
    ("openai:gpt-4", _OPENAI_CHAT),  # gpt-4, gpt-4o, gpt-4.1 and their -mini/-nano
    ("openai:gpt-3.5", _OPENAI_CHAT),
    ("anthropic:claude", _ANTHROPIC),
    *((f"bedrock:{region}anthropic.claude", _ANTHROPIC) for region in ("", "us.", "eu.", "apac.", "global.")),
)

_learned: dict[str, ModelProfile] = {}
_learned_lock = threading.Lock()


def _key(provider: str, model: str) -> str:
    return f"{provider}:{model}"


def declared_profile(provider: str, model: str) -> ModelProfile | None:
    """The profile PROFILES declares for this model, or None when it is unknown."""
    return first_prefix_match(PROFILES, _key(provider, model))


def profile_for(provider: str, model: str) -> ModelProfile:
    """The declared profile; for an unknown model, what this process learned of it."""
    declared = declared_profile(provider, model)
    if declared is not None:
        return declared
    with _learned_lock:
        return _learned.get(_key(provider, model), DEFAULT_PROFILE)


def forget_learned_profiles() -> None:
    """Drop what the fallbacks learned (tests start every case from the declarations)."""
    with _learned_lock:
        _learned.clear()


# ---------------------------------------------------------------- fallbacks for unknown models

FALLBACK_STATUSES = frozenset({400, 422})
# (fallback, words in an error body that point at it), in the order they are tried.
FALLBACK_ORDER: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("reasoning_effort", ("reasoning_effort", "reasoning")),
    ("temperature", ("temperature",)),
    ("max_completion_tokens", ("max_tokens", "max_completion_tokens")),
    ("json_mode", ("response_format", "json_object", "json_mode", "json")),
)
_FALLBACK_LABEL = {
    "reasoning_effort": "dropped reasoning_effort",
    "temperature": "dropped temperature",
    "max_completion_tokens": "renamed max_tokens to max_completion_tokens",
    "json_mode": "dropped json_mode",
}


def _applies(fallback: str, request: LLMRequest) -> bool:
    """The fallback would change what `request` (already shaped) sends."""
    if fallback == "reasoning_effort":
        return request.reasoning_effort is not None
    if fallback == "temperature":
        return request.temperature is not None
    if fallback == "max_completion_tokens":
        return request.max_tokens_field == "max_tokens"
    return request.json_mode


def next_fallback(request: LLMRequest, body: str) -> str | None:
    """The fallback for a refusal of `request`: the first the error body names, else
    the first in FALLBACK_ORDER that still changes the request; None when none does."""
    text = (body or "").casefold()
    candidates = [name for name, _ in FALLBACK_ORDER if _applies(name, request)]
    named = [name for name, hints in FALLBACK_ORDER if name in candidates and any(h in text for h in hints)]
    choices = named or candidates
    return choices[0] if choices else None


def _learn(provider: str, model: str, fallback: str) -> None:
    with _learned_lock:
        current = _learned.get(_key(provider, model), DEFAULT_PROFILE)
        if fallback == "max_completion_tokens":
            learned = replace(current, token_field="max_completion_tokens")
        elif fallback == "temperature":
            learned = replace(current, temperature=False)
        elif fallback == "reasoning_effort":
            learned = replace(current, reasoning_effort=False)
        else:
            learned = replace(current, json_mode=False)
        _learned[_key(provider, model)] = learned


def call_as_profiled(
    gate: CallGate,
    client: LLMClient,
    request: LLMRequest,
    *,
    stage: str,
    fallbacks: list[str],
    usable: AnswerCheck | None = None,
) -> LLMResponse:
    """One answered call of `request`, shaped by the model's profile. An unknown model's
    400/422 refusal takes a fallback (appended to `fallbacks` as a note) and the call
    goes again; a known model's refusal, or one no fallback changes, is raised."""
    while True:
        shaped = profile_for(client.provider, client.model).shape(request)
        try:
            return _traced_call(gate, client, shaped, stage, usable)
        except ProviderHTTPError as exc:
            known = declared_profile(client.provider, client.model) is not None
            fallback = None if known or exc.status not in FALLBACK_STATUSES else next_fallback(shaped, exc.body)
            if fallback is None:
                raise
            _learn(client.provider, client.model, fallback)
            fallbacks.append(f"{_FALLBACK_LABEL[fallback]} after HTTP {exc.status}")
            log.warning(
                "model_param_fallback",
                stage=stage,
                provider=client.provider,
                model=client.model,
                fallback=fallback,
                status=exc.status,
            )


# GenAI semantic conventions' names for vetq's providers (gen_ai.system); others as named.
_GEN_AI_SYSTEMS = {"bedrock": "aws.bedrock", "anthropic": "anthropic", "openai": "openai"}


def _traced_call(
    gate: CallGate, client: LLMClient, request: LLMRequest, stage: str, usable: AnswerCheck | None
) -> LLMResponse:
    """One model call through the gate, in a span with the GenAI semantic conventions'
    attributes: the provider, the model, the request's limits, the usage and why it
    stopped. Never the prompt or the answer."""
    tracer = get_tracer()
    if not tracer.enabled:
        return gate.call(client, request, stage=stage, usable=usable)
    system = _GEN_AI_SYSTEMS.get(client.provider, client.provider)
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.system": system,
        "gen_ai.provider.name": system,
        "gen_ai.request.model": client.model,
        "gen_ai.request.max_tokens": request.max_tokens,
        "gen_ai.request.temperature": request.temperature,
        "vetq.stage": stage,
    }
    with tracer.span(f"chat {client.model}", attributes, kind="client") as span:
        verdict: list[bool] = []

        def judged(answer: LLMResponse) -> bool:  # once, whether or not the gate asks
            if not verdict:
                verdict.append(usable is None or usable(answer))
            return verdict[0]

        response = gate.call(client, request, stage=stage, usable=judged)
        if not judged(response):
            span.set_error("malformed")
        span.set_attribute("gen_ai.response.model", response.model or None)
        span.set_attribute("gen_ai.usage.input_tokens", response.usage.prompt_tokens)
        span.set_attribute("gen_ai.usage.output_tokens", response.usage.completion_tokens)
        if response.finish_reason:
            span.set_attribute("gen_ai.response.finish_reasons", [response.finish_reason])
        span.set_attribute("vetq.cached", response.cached)
        span.set_attribute("vetq.cost_usd", response.usage.cost_usd)
        return response
