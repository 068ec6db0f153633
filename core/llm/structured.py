"""Ask a model for a JSON object and parse it, with a bounded repair loop that tells
the model what was wrong. Shared by the Generator and the Critic."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from core.llm.client import LLMClient
from core.llm.errors import LLMError, MalformedResponseError, OutputTruncatedError
from core.llm.gate import CallGate
from core.llm.json_extract import NoJSONObjectError, extract_json_object
from core.llm.types import LLMRequest, Message, Usage
from core.logging import get_logger

T = TypeVar("T")
log = get_logger("vetq.llm")

REPAIR_ANSWER_ECHO_LIMIT = 2000


class UnusableAnswer(ValueError):
    """The answer parsed, but does not fit the expected shape; the message says why."""


@dataclass
class StructuredAnswer(Generic[T]):
    value: T
    usage: Usage
    attempts: int
    model: str = ""
    notes: list[str] = field(default_factory=list)


def ask_structured(
    gate: CallGate,
    client: LLMClient,
    *,
    stage: str,
    system: str,
    user: str,
    parse: Callable[[dict], T],
    max_tokens: int,
    repair_retries: int,
    temperature: float | None = 0.0,
) -> StructuredAnswer[T]:
    messages: list[Message] = [Message(role="user", content=user)]
    usage = Usage()
    attempts = 0
    while True:
        attempts += 1
        request = LLMRequest(
            system=system, messages=tuple(messages), max_tokens=max_tokens, temperature=temperature, json_mode=True
        )
        started = time.perf_counter()
        try:
            response = gate.call(client, request, stage=stage)
        except LLMError as exc:
            exc.partial_usage = usage  # type: ignore[attr-defined]
            raise
        usage = usage + response.usage
        # The gate logs the call itself (tokens, waits, 429s); this line is the stage's view.
        log.info(
            "model_answer",
            stage=stage,
            provider=client.provider,
            model=client.model,
            attempt=attempts,
            prompt_tokens=response.usage.prompt_tokens,
            completion_tokens=response.usage.completion_tokens,
            cached=response.cached,
            duration_ms=round((time.perf_counter() - started) * 1000, 1),
        )
        try:
            if response.has_tool_calls:
                raise UnusableAnswer("the answer attempted a tool call; no tools are available, answer with JSON only")
            value = parse(extract_json_object(response.text))
            return StructuredAnswer(value=value, usage=usage, attempts=attempts, model=response.model or client.model)
        except (NoJSONObjectError, UnusableAnswer, ValueError) as problem:
            reason = str(problem)[:300]
            if response.truncated:
                error: LLMError = OutputTruncatedError(
                    f"{stage}: the answer was cut off at max_tokens ({max_tokens}) before it was valid JSON"
                )
                error.partial_usage = usage  # type: ignore[attr-defined]
                raise error from None
            if attempts > repair_retries:
                error = MalformedResponseError(f"{stage}: unusable answer after {attempts} attempt(s): {reason}")
                error.partial_usage = usage  # type: ignore[attr-defined]
                raise error from None
            log.warning("model_answer_repair", stage=stage, attempt=attempts, problem=reason)
            messages += [
                Message(role="assistant", content=response.text[:REPAIR_ANSWER_ECHO_LIMIT]),
                Message(
                    role="user",
                    content=f"Your answer could not be used: {reason}\nReply again with only the JSON object in the required shape.",
                ),
            ]


class ModelStage:
    """A stage that asks one model for one JSON answer through the call gate."""

    def __init__(self, client: LLMClient, gate: CallGate, *, max_tokens: int, repair_retries: int) -> None:
        self.client = client
        self.gate = gate
        self.max_tokens = max_tokens
        self.repair_retries = repair_retries
