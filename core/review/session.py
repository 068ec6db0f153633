"""ReviewSession: the ONLY path from a review to the model.

One session serves one review. Every phase asks through the one structured-answer
loop (core.llm.structured.ask_structured), so every call:
  * goes through the gate, whose budget is the review's (run_review scopes it to
    max_review_tokens): max_tokens = min(max_tokens_per_call, tokens left - prompt
    estimate), and under MIN_CALL_TOKENS no call is made (BudgetExceededError);
    usage is summed over every call, repairs too;
  * asks for JSON (json_mode) and carries no tools -- an answer with tool calls is
    unusable and treated like a malformed one;
  * gets exactly one repair (the repair_v1 prompt) for a malformed answer, then
    MALFORMED_RESPONSE; an unusable answer cut off by the token limit is
    OUTPUT_TRUNCATED without retry;
  * is shaped by the model's profile; an unknown model that refuses a parameter
    (HTTP 400/422) gets a fallback (core.llm.profiles), noted in `fallbacks`;
  * counts only the time spent inside model calls against review_timeout_s: the time
    left is the call's own timeout (`LLMRequest.timeout_s`, the SDK's per-request
    timeout), so a call that outlives it is ended (TIMEOUT), not left running.

Error contract: the session raises core.errors.VetqError subclasses. LLMErrors from
the gate propagate unchanged; those with `.retryable` True (rate limits, network
errors, provider timeouts, 5xx) are meant to reach the queue layer so it can retry
the job. The review's own failures (ReviewTimeoutError, MalformedResponseError,
OutputTruncatedError, BudgetExceededError, ProviderHTTPError 4xx) are not retryable.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel, ValidationError

from vetq.core.errors import ErrorCode
from vetq.core.llm.client import LLMClient
from vetq.core.llm.errors import LLMError, ProviderTimeoutError
from vetq.core.llm.gate import CallGate
from vetq.core.llm.structured import UnusableAnswer, ask_structured
from vetq.core.llm.types import LLMRequest, LLMResponse, Message, Usage
from vetq.core.logging import get_logger
from vetq.core.prompts import REVIEW_PROMPTS
from vetq.core.review.schema import ANSWER_SCHEMAS, ReviewConfig
from vetq.core.tracing import stage_span
from vetq.core.validation import explain

log = get_logger("vetq.review")

# ---------------------------------------------------------------- errors


class ReviewTimeoutError(LLMError):
    """The review's time inside model calls ran out. Not retryable: a retry would
    start the same review with the same budget of time."""

    code = ErrorCode.TIMEOUT
    retryable = False


# A review gets exactly one repair of a malformed answer.
REVIEW_REPAIRS = 1


class _TimedClient:
    """The session's client as the call gate sees it: same provider and model (so the
    same limits, profile and cache keys), each complete() limited to the review's
    model time left. It sits below the gate, so time the gate spends waiting for a
    rate limit or a cooldown is not model time and does not count."""

    def __init__(self, session: ReviewSession) -> None:
        self._session = session
        self.provider = session.client.provider
        self.model = session.client.model

    def complete(self, request: LLMRequest) -> LLMResponse:
        return self._session._timed_complete(request)


def _parse_answer(schema: type[BaseModel], data: dict[str, Any]) -> dict[str, Any]:
    """The validated answer as a dict; UnusableAnswer says what was wrong."""
    try:
        model = schema.model_validate(data)
    except ValidationError as exc:
        raise UnusableAnswer(
            f"the JSON did not match the required shape: {explain(exc, limit=4, root='answer')}"
        ) from None
    return model.model_dump(mode="json")


def _repair_prompt(problem: str) -> str:
    return REVIEW_PROMPTS.render("repair", problem=problem)


class ReviewSession:
    def __init__(
        self,
        client: LLMClient,
        gate: CallGate,
        config: ReviewConfig,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client = client
        self.gate = gate
        self.config = config
        self.clock = clock
        self.usage = Usage()
        self.calls = 0
        self.time_spent_s = 0.0
        self.fallbacks: list[str] = []
        self.system = REVIEW_PROMPTS.load("system").strip()
        self._timed_client = _TimedClient(self)

    def _timed_complete(self, request: LLMRequest) -> LLMResponse:
        limit = self.config.review_timeout_s
        remaining = limit - self.time_spent_s
        if remaining <= 0:
            raise ReviewTimeoutError(
                f"review timed out: {self.time_spent_s:.1f}s spent in model calls (limit {limit:g}s)"
            )
        # The tightest of the review's time left, the gate's clip (the job's deadline)
        # and the client's own timeout ends the call.
        others = min(request.timeout_s or math.inf, getattr(self.client, "timeout_s", math.inf))
        started = self.clock()
        try:
            return self.client.complete(request.model_copy(update={"timeout_s": min(remaining, others)}))
        except ProviderTimeoutError as exc:
            # The review's time bound the call (or ran out during it, under a wrapped
            # client whose own timeout is not visible here).
            if remaining <= others or self.clock() - started >= remaining:
                raise ReviewTimeoutError(
                    f"review timed out: the model did not answer within the remaining {remaining:.1f}s "
                    f"(limit {limit:g}s)"
                ) from exc
            raise
        finally:
            self.time_spent_s += max(0.0, self.clock() - started)

    def ask(self, messages: Sequence[Message], *, schema_kind: str, phase: str) -> tuple[dict[str, Any], list[Message]]:
        """Ask once (plus at most one repair). Returns the parsed answer and the
        conversation continued with the answer, re-serialised, as the assistant turn."""
        if schema_kind not in ANSWER_SCHEMAS:
            raise KeyError(f"unknown schema kind {schema_kind!r}")
        schema = ANSWER_SCHEMAS[schema_kind]
        with stage_span(f"review.{phase}") as span:
            value, attempts = self._ask(messages, schema, phase)
            span.set_attribute("vetq.attempts", attempts)
        assistant = Message(role="assistant", content=json.dumps(value, ensure_ascii=False))
        return value, [*messages, assistant]

    def _ask(self, messages: Sequence[Message], schema: Any, phase: str) -> tuple[dict[str, Any], int]:
        try:
            answer = ask_structured(
                self.gate,
                self._timed_client,
                stage=f"review.{phase}",
                system=self.system,
                messages=messages,
                parse=lambda data: _parse_answer(schema, data),
                max_tokens=self.config.max_tokens_per_call,
                repair_retries=REVIEW_REPAIRS,
                temperature=self.config.temperature,
                reasoning_effort=self.config.reasoning_effort,
                repair_prompt=_repair_prompt,
                fit_to_budget=True,
            )
        except LLMError as exc:
            self._account(exc.usage or Usage(), exc.fallbacks)
            raise
        self.calls += answer.attempts
        self._account(answer.usage, answer.fallbacks)
        return answer.value, answer.attempts

    def _account(self, usage: Usage, fallbacks: Sequence[str]) -> None:
        self.usage = self.usage + usage
        self.fallbacks.extend(fallbacks)
