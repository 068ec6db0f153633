"""ReviewSession: the ONLY path from a review to the model.

One session serves one review. Every call goes through the gate and:
  * takes its completion allowance from the budget policy (budget.py) and charges
    the provider's usage afterwards; usage is summed over every call, repairs too;
  * asks for JSON (json_mode) and carries no tools -- an answer with tool calls is
    unusable and treated like a malformed one;
  * gets exactly one repair retry for a malformed answer, then MALFORMED_RESPONSE;
  * fails with OUTPUT_TRUNCATED, without retry, when an answer cut off by the token
    limit holds no JSON object;
  * on HTTP 400/422 retries with one OpenAI-compatible parameter fallback at a time
    (drop reasoning_effort, drop temperature, max_tokens -> max_completion_tokens,
    drop json_mode), each at most once, persisting for the rest of the session;
  * counts only the time spent inside model calls against review_timeout_s, and
    abandons a call that outlives the remaining time (TIMEOUT).

Error contract: the session raises core.errors.VetqError subclasses. LLMErrors from
the gate propagate unchanged; those with `.retryable` True (rate limits, network
errors, provider timeouts, 5xx) are meant to reach the queue layer so it can retry
the job. The review's own failures (ReviewTimeoutError, MalformedResponseError,
OutputTruncatedError, BudgetExceeded, ProviderHTTPError 4xx) are not retryable.
"""

from __future__ import annotations

import contextvars
import json
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from pydantic import ValidationError

from core.errors import ErrorCode
from core.llm.client import LLMClient
from core.llm.errors import LLMError, MalformedResponseError, OutputTruncatedError, ProviderHTTPError
from core.llm.gate import CallGate
from core.llm.types import LLMRequest, LLMResponse, Message, Usage
from core.logging import get_logger
from core.prompts import REVIEW_PROMPTS
from core.review.budget import BudgetLedger, plan_for_request
from core.review.parsing import NoJSONObjectError, extract_json_object
from core.review.schema import ANSWER_SCHEMAS, ReviewConfig
from core.validation import explain

log = get_logger("vetq.review")

# ---------------------------------------------------------------- errors


class ReviewTimeoutError(LLMError):
    """The review's time inside model calls ran out. Not retryable: a retry would
    start the same review with the same budget of time."""

    code = ErrorCode.TIMEOUT
    retryable = False


# ---------------------------------------------------------------- fallbacks

FALLBACK_STATUSES = frozenset({400, 422})
# (name, words in an error body that point at it), in the order they are tried.
_FALLBACKS: tuple[tuple[str, tuple[str, ...]], ...] = (
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

REPAIR_ECHO_LIMIT = 4_000


def _run_with_timeout(fn: Callable[[], LLMResponse], timeout_s: float) -> LLMResponse:
    """Run fn in a daemon thread and wait at most timeout_s. A call that never
    returns is abandoned (the daemon thread cannot keep the process alive)."""
    future: Future[LLMResponse] = Future()
    ctx = contextvars.copy_context()

    def runner() -> None:
        if not future.set_running_or_notify_cancel():
            return
        try:
            future.set_result(ctx.run(fn))
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
            future.set_exception(exc)

    threading.Thread(target=runner, name="vetq-review-call", daemon=True).start()
    return future.result(timeout=timeout_s)


class _TimedClient:
    """The session's client as the call gate sees it: same provider and model (so the
    same limits and cache keys), each complete() under the review's model-time limit."""

    def __init__(self, session: ReviewSession) -> None:
        self._session = session
        self.provider = session.client.provider
        self.model = session.client.model

    def complete(self, request: LLMRequest) -> LLMResponse:
        return self._session._timed_complete(request)


class ReviewSession:
    def __init__(
        self,
        client: LLMClient,
        gate: CallGate,
        budget: BudgetLedger,
        config: ReviewConfig,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client = client
        self.gate = gate
        self.budget = budget
        self.config = config
        self.clock = clock
        self.usage = Usage()
        self.calls = 0
        self.time_spent_s = 0.0
        self.fallbacks: list[str] = []
        self._applied: set[str] = set()
        self.system = REVIEW_PROMPTS.load("system").strip()

    # ------------------------------------------------------------ request shape

    def _request(self, messages: Sequence[Message], max_tokens: int = 1) -> LLMRequest:
        return LLMRequest(
            system=self.system,
            messages=tuple(messages),
            max_tokens=max_tokens,
            temperature=None if "temperature" in self._applied else self.config.temperature,
            json_mode="json_mode" not in self._applied,
            reasoning_effort=None if "reasoning_effort" in self._applied else self.config.reasoning_effort,
            max_tokens_field="max_completion_tokens" if "max_completion_tokens" in self._applied else "max_tokens",
        )

    def _applicable(self, name: str) -> bool:
        if name in self._applied:
            return False
        if name == "reasoning_effort":
            return self.config.reasoning_effort is not None
        if name == "temperature":
            return self.config.temperature is not None
        return True

    def _next_fallback(self, body: str) -> str | None:
        text = (body or "").casefold()
        candidates = [name for name, _ in _FALLBACKS if self._applicable(name)]
        if not candidates:
            return None
        named = [name for name, hints in _FALLBACKS if name in candidates and any(h in text for h in hints)]
        return named[0] if named else candidates[0]

    # ------------------------------------------------------------ one call

    def _call(self, messages: Sequence[Message], phase: str) -> LLMResponse:
        """One answered call: budget, timeout and parameter fallbacks applied."""
        while True:
            draft = self._request(messages)
            max_tokens = plan_for_request(draft, self.budget, self.config)
            request = draft.model_copy(update={"max_tokens": max_tokens})
            try:
                response = self._timed_gate_call(request, phase)
            except ProviderHTTPError as exc:
                fallback = self._next_fallback(exc.body) if exc.status in FALLBACK_STATUSES else None
                if fallback is None:
                    raise
                self._applied.add(fallback)
                note = f"{_FALLBACK_LABEL[fallback]} after HTTP {exc.status}"
                self.fallbacks.append(note)
                log.warning("review.param_fallback", fallback=fallback, status=exc.status, phase=phase)
                continue
            self.calls += 1
            self.usage = self.usage + response.usage
            self.budget.charge(response.usage)
            return response

    def _timed_gate_call(self, request: LLMRequest, phase: str) -> LLMResponse:
        # The gate gets a timed stand-in for the client: time the gate spends waiting for
        # a rate limit or a cooldown is not model time and does not count.
        return self.gate.call(_TimedClient(self), request, stage=f"review.{phase}")

    def _timed_complete(self, request: LLMRequest) -> LLMResponse:
        remaining = self.config.review_timeout_s - self.time_spent_s
        if remaining <= 0:
            raise ReviewTimeoutError(
                f"review timed out: {self.time_spent_s:.1f}s spent in model calls (limit {self.config.review_timeout_s:g}s)"
            )
        started = self.clock()
        try:
            return _run_with_timeout(lambda: self.client.complete(request), remaining)
        except FutureTimeout as exc:
            raise ReviewTimeoutError(
                f"review timed out: the model did not answer within the remaining {remaining:.1f}s "
                f"(limit {self.config.review_timeout_s:g}s)"
            ) from exc
        finally:
            self.time_spent_s += max(0.0, self.clock() - started)

    # ------------------------------------------------------------ one answer

    def _parse(self, response: LLMResponse, schema_kind: str) -> dict[str, Any]:
        """The validated answer as a dict; ValueError says what was wrong."""
        if response.has_tool_calls:
            raise ValueError("the answer called a tool; no tools are available, answer with JSON only")
        data = extract_json_object(response.text)
        try:
            model = ANSWER_SCHEMAS[schema_kind].model_validate(data)
        except ValidationError as exc:
            raise ValueError(
                f"the JSON did not match the required shape: {explain(exc, limit=4, root='answer')}"
            ) from exc
        return model.model_dump(mode="json")

    def ask(self, messages: Sequence[Message], *, schema_kind: str, phase: str) -> tuple[dict[str, Any], list[Message]]:
        """Ask once (plus at most one repair). Returns the parsed answer and the
        conversation continued with the answer, re-serialised, as the assistant turn."""
        if schema_kind not in ANSWER_SCHEMAS:
            raise KeyError(f"unknown schema kind {schema_kind!r}")
        conversation = list(messages)
        attempt_messages = conversation
        for attempt in (1, 2):
            response = self._call(attempt_messages, phase if attempt == 1 else f"{phase}.repair")
            try:
                parsed = self._parse(response, schema_kind)
            except NoJSONObjectError as exc:
                if response.truncated:
                    raise OutputTruncatedError(
                        f"the model's {phase} answer was cut off at the token limit before it held a JSON object"
                    ) from exc
                problem = str(exc)
            except ValueError as exc:
                problem = str(exc)
            else:
                answer = Message(role="assistant", content=json.dumps(parsed, ensure_ascii=False))
                return parsed, [*conversation, answer]
            log.info("review.malformed_answer", phase=phase, attempt=attempt, problem=problem[:200])
            if attempt == 2:
                raise MalformedResponseError(
                    f"the model's {phase} answer was not usable after one repair: {problem}"[:500]
                )
            echo = (response.text or "").strip()[:REPAIR_ECHO_LIMIT] or "(no text)"
            attempt_messages = [
                *conversation,
                Message(role="assistant", content=echo),
                Message(role="user", content=REVIEW_PROMPTS.render("repair", problem=problem)),
            ]
        raise AssertionError("unreachable")  # pragma: no cover
