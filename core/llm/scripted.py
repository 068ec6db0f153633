"""A client that answers from a script: the model boundary for tests.

    client = ScriptedLLMClient(['{"a": 1}', RateLimitedError("slow down", retry_after_s=2)])

Each answer is a `str` (the text; finish_reason "stop"), an `LLMResponse`
(returned as is) or an exception instance (raised). Asking for more answers than
the script holds fails the test loudly instead of reaching a real model.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

from vetq.core.errors import ConfigError
from vetq.core.llm.types import LLMRequest, LLMResponse, Usage

__all__ = ["ScriptExhaustedError", "ScriptedLLMClient"]

Answer = str | LLMResponse | BaseException


class ScriptExhaustedError(AssertionError):
    """The code under test made more model calls than the test scripted."""


def _estimate_tokens(text: str) -> int:
    return len(text) // 4


class ScriptedLLMClient:
    def __init__(self, answers: Iterable[Answer], *, provider: str = "scripted", model: str = "scripted-model") -> None:
        self.provider = provider
        self.model = model
        self._answers: list[Answer] = list(answers)
        for answer in self._answers:
            if not isinstance(answer, (str, LLMResponse, BaseException)):
                raise TypeError(f"a scripted answer is a str, an LLMResponse or an exception, got {type(answer)!r}")
        self._next = 0
        self._lock = threading.Lock()
        self.requests: list[LLMRequest] = []

    @classmethod
    def from_spec(cls, model: str, *, timeout_s: float, base_url: str | None) -> ScriptedLLMClient:
        raise ConfigError(
            "the scripted provider exists only inside tests: build ScriptedLLMClient(answers) with the test's answers; "
            "choose anthropic, openai, bedrock or replay"
        )

    @property
    def remaining(self) -> int:
        with self._lock:
            return len(self._answers) - self._next

    def complete(self, request: LLMRequest) -> LLMResponse:
        with self._lock:
            self.requests.append(request)
            if self._next >= len(self._answers):
                held = len(self._answers)
                raise ScriptExhaustedError(
                    f"ScriptedLLMClient ({self.provider}:{self.model}) held {held} answer"
                    f"{'' if held == 1 else 's'} and was asked for call #{len(self.requests)}"
                )
            answer = self._answers[self._next]
            self._next += 1
        if isinstance(answer, BaseException):
            raise answer
        if isinstance(answer, LLMResponse):
            return answer
        prompt = request.system + "".join(m.content for m in request.messages)
        return LLMResponse(
            text=answer,
            finish_reason="stop",
            model=self.model,
            usage=Usage.of(_estimate_tokens(prompt), _estimate_tokens(answer)),
        )

    def __repr__(self) -> str:
        return f"ScriptedLLMClient(provider={self.provider!r}, model={self.model!r}, remaining={self.remaining})"
