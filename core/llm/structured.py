"""The one structured-answer loop: ask a model for a JSON object, parse it, and repair
a bad answer by telling the model what was wrong. The Generator, the Critic and every
review phase ask through `ask_structured`.

Every attempt:
  * is one answered call through the gate, shaped by the model's profile (an unknown
    model that refuses a parameter gets a fallback: core.llm.profiles);
  * asks for JSON and carries no tools: an answer with tool calls is unusable;
  * with `fit_to_budget`, takes max_tokens as a cap the budget left may lower
    (core.llm.gate.plan_max_tokens), otherwise the gate refuses a call that does not fit.
An unusable answer that was cut off at the token limit is OUTPUT_TRUNCATED at once (a
repair would be cut off the same way); any other gets up to `repair_retries` repairs,
then MALFORMED_RESPONSE. Every error leaving the loop carries what its attempts cost
(`LLMError.usage`) and the fallbacks they took (`LLMError.fallbacks`)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from vetq.core.llm.client import LLMClient
from vetq.core.llm.errors import LLMError, MalformedResponseError, OutputTruncatedError
from vetq.core.llm.gate import CallGate, plan_max_tokens
from vetq.core.llm.json_extract import extract_json_object
from vetq.core.llm.profiles import call_as_profiled
from vetq.core.llm.types import LLMRequest, LLMResponse, Message, Usage
from vetq.core.logging import get_logger

T = TypeVar("T")
E = TypeVar("E", bound=LLMError)
log = get_logger("vetq.llm")

# How much of a bad answer is echoed back as the assistant turn of a repair.
REPAIR_ECHO_LIMIT = 4_000
# How much of what was wrong is told to the model (and put in the error message).
PROBLEM_LIMIT = 500


class UnusableAnswer(ValueError):
    """The answer parsed, but does not fit the expected shape; the message says why."""


@dataclass
class StructuredAnswer(Generic[T]):
    value: T
    usage: Usage
    attempts: int
    model: str = ""
    # Parameter fallbacks taken on the way (notes such as "dropped temperature after HTTP 400").
    fallbacks: list[str] = field(default_factory=list)


def repair_instruction(problem: str) -> str:
    """The user turn of a repair, unless the caller brings its own (the review's prompt file)."""
    return f"Your answer could not be used: {problem}\nReply again with only the JSON object in the required shape."


def _spent(error: E, usage: Usage, fallbacks: list[str]) -> E:
    error.usage = usage
    error.fallbacks = tuple(fallbacks)
    return error


def _value_of(response: LLMResponse, parse: Callable[[dict[str, Any]], T]) -> T:
    if response.has_tool_calls:
        raise UnusableAnswer("the answer attempted a tool call; no tools are available, answer with JSON only")
    return parse(extract_json_object(response.text))


def ask_structured(
    gate: CallGate,
    client: LLMClient,
    *,
    stage: str,
    system: str,
    messages: Sequence[Message],
    parse: Callable[[dict[str, Any]], T],
    max_tokens: int,
    repair_retries: int,
    temperature: float | None = 0.0,
    reasoning_effort: str | None = None,
    repair_prompt: Callable[[str], str] = repair_instruction,
    fit_to_budget: bool = False,
) -> StructuredAnswer[T]:
    """`parse` turns the answer's JSON object into the value, raising ValueError (an
    UnusableAnswer) that says, without quoting the answer, what does not fit."""
    conversation = list(messages)
    usage = Usage()
    fallbacks: list[str] = []
    attempts = 0
    # The gate asks whether an answer is usable (to count and cache it right); the value
    # parsed then is kept with its answer, so the same answer is not parsed twice.
    checked: list[tuple[LLMResponse, T]] = []

    def answer_check(response: LLMResponse) -> bool:
        try:
            value = _value_of(response, parse)
        except ValueError:
            return False
        checked[:] = [(response, value)]
        return True

    while True:
        attempts += 1
        checked.clear()
        attempt_stage = stage if attempts == 1 else f"{stage}.repair"
        request = LLMRequest(
            system=system,
            messages=tuple(conversation),
            max_tokens=max_tokens,
            temperature=temperature,
            reasoning_effort=reasoning_effort,
            json_mode=True,
        )
        started = time.perf_counter()
        try:
            if fit_to_budget:
                allowance = plan_max_tokens(request, gate, max_tokens_per_call=max_tokens)
                request = request.model_copy(update={"max_tokens": allowance})
            response = call_as_profiled(
                gate, client, request, stage=attempt_stage, fallbacks=fallbacks, usable=answer_check
            )
        except LLMError as exc:
            _spent(exc, usage, fallbacks)
            raise
        usage = usage + response.usage
        # The gate logs the call itself (tokens, waits, 429s); this line is the stage's view.
        log.info(
            "model_answer",
            stage=attempt_stage,
            provider=client.provider,
            model=client.model,
            attempt=attempts,
            prompt_tokens=response.usage.prompt_tokens,
            completion_tokens=response.usage.completion_tokens,
            cached=response.cached,
            duration_ms=round((time.perf_counter() - started) * 1000, 1),
        )
        try:
            value = checked[0][1] if checked and checked[0][0] is response else _value_of(response, parse)
        except ValueError as problem:
            reason = str(problem)[:PROBLEM_LIMIT]
            if response.truncated:
                error: LLMError = OutputTruncatedError(
                    f"{stage}: the answer was cut off at max_tokens ({request.max_tokens}) before it was usable JSON"
                )
                raise _spent(error, usage, fallbacks) from None
            if attempts > repair_retries:
                error = MalformedResponseError(f"{stage}: unusable answer after {attempts} attempt(s): {reason}")
                raise _spent(error, usage, fallbacks) from None
            log.warning("model_answer_repair", stage=stage, attempt=attempts, problem=reason)
            echo = (response.text or "").strip()[:REPAIR_ECHO_LIMIT] or "(no text)"
            conversation += [
                Message(role="assistant", content=echo),
                Message(role="user", content=repair_prompt(reason)),
            ]
            continue
        return StructuredAnswer(
            value=value, usage=usage, attempts=attempts, model=response.model or client.model, fallbacks=fallbacks
        )


class ModelStage:
    """A stage that asks one model for one JSON answer through the call gate."""

    def __init__(self, client: LLMClient, gate: CallGate, *, max_tokens: int, repair_retries: int) -> None:
        self.client = client
        self.gate = gate
        self.max_tokens = max_tokens
        self.repair_retries = repair_retries
