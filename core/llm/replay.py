"""Answers from a recorded fixture, and the recorder that writes one.

A fixture file is JSON:

    {"version": 1,
     "recordings": {"<LLMRequest.fingerprint()>": {"text": "...", "finish_reason": "stop",
                                                  "model": "...", "usage": {...}}}}

`ReplayClient` answers each request from its fingerprint (so a replay is exact:
change the prompt, lose the recording). `RecordingClient` forwards to a real
client and merges every answer into the fixture file, written atomically.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from vetq.core.errors import ConfigError
from vetq.core.llm.client import LLMClient
from vetq.core.llm.types import LLMRequest, LLMResponse, Usage

__all__ = ["FIXTURE_VERSION", "MissingRecordingError", "RecordingClient", "ReplayClient", "load_fixture"]

FIXTURE_VERSION = 1


class MissingRecordingError(ConfigError):
    """A replayed request has no recording: the prompt changed, or the fixture is stale."""


def _first_line(text: str, limit: int = 120) -> str:
    line = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    return line[:limit]


def load_fixture(path: str | os.PathLike[str]) -> dict[str, dict[str, Any]]:
    """The recordings of a fixture file ({} when the file does not exist)."""
    path = Path(path)
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"replay fixture {path} cannot be read: {type(exc).__name__}") from None
    if not isinstance(data, dict) or not isinstance(data.get("recordings"), dict):
        raise ConfigError(f"replay fixture {path} has no 'recordings' object")
    version = data.get("version", FIXTURE_VERSION)
    if version != FIXTURE_VERSION:
        raise ConfigError(f"replay fixture {path} is version {version!r}; this vetq reads version {FIXTURE_VERSION}")
    return dict(data["recordings"])


def _recording_of(response: LLMResponse) -> dict[str, Any]:
    return {
        "text": response.text,
        "finish_reason": response.finish_reason,
        "model": response.model,
        # The provider's counts; what they cost is the call gate's to say, at today's prices.
        "usage": response.usage.model_dump(exclude={"cost_usd"}),
    }


def _response_of(recording: Mapping[str, Any], default_model: str) -> LLMResponse:
    usage = recording.get("usage") or {}
    return LLMResponse(
        text=str(recording.get("text", "")),
        finish_reason=recording.get("finish_reason"),
        model=str(recording.get("model") or default_model),
        usage=Usage.of(usage.get("prompt_tokens"), usage.get("completion_tokens")),
    )


class ReplayClient:
    def __init__(
        self,
        recordings: Mapping[str, Any] | str | os.PathLike[str],
        *,
        provider: str = "replay",
        model: str = "replay-model",
    ) -> None:
        self.provider = provider
        self.model = model
        if isinstance(recordings, Mapping):
            inner = recordings.get("recordings") if isinstance(recordings.get("recordings"), Mapping) else None
            self._recordings = dict(inner if inner is not None else recordings)
            self.source = "<dict>"
        else:
            if not Path(recordings).exists():
                raise ConfigError(f"replay fixture {recordings} does not exist (record it with --record)")
            self._recordings = load_fixture(recordings)
            self.source = str(recordings)
        self.requests: list[LLMRequest] = []

    @classmethod
    def from_spec(cls, model: str, *, timeout_s: float, base_url: str | None) -> ReplayClient:
        """`replay:<fixture path>`: the spec's model is the fixture's path."""
        return cls(model)

    def __len__(self) -> int:
        return len(self._recordings)

    def complete(self, request: LLMRequest) -> LLMResponse:
        self.requests.append(request)
        fingerprint = request.fingerprint()
        recording = self._recordings.get(fingerprint)
        if recording is None:
            raise MissingRecordingError(
                f"no recording for request {fingerprint} in {self.source} "
                f"(system prompt: {_first_line(request.system)!r}); re-record with --record"
            )
        if isinstance(recording, str):
            recording = {"text": recording}
        return _response_of(recording, self.model)


_PATH_LOCKS: dict[Path, threading.Lock] = {}
_PATH_LOCKS_GUARD = threading.Lock()


def _lock_for(path: Path) -> threading.Lock:
    """One lock per fixture file, so every recorder writing it (the Generator's and the
    Critic's, on several worker threads) merges instead of overwriting."""
    key = path.resolve()
    with _PATH_LOCKS_GUARD:
        return _PATH_LOCKS.setdefault(key, threading.Lock())


class RecordingClient:
    """Forwards to `inner` and records every answer into the fixture at `path`."""

    def __init__(self, inner: LLMClient, path: str | os.PathLike[str]) -> None:
        self.inner = inner
        self.provider = inner.provider
        self.model = inner.model
        self.path = Path(path)
        self._lock = _lock_for(self.path)

    def complete(self, request: LLMRequest) -> LLMResponse:
        response = self.inner.complete(request)
        self.record(request, response)
        return response

    def record(self, request: LLMRequest, response: LLMResponse) -> None:
        with self._lock:
            recordings = load_fixture(self.path)
            recordings[request.fingerprint()] = _recording_of(response)
            payload = {"version": FIXTURE_VERSION, "recordings": dict(sorted(recordings.items()))}
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=self.path.parent)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    json.dump(payload, handle, indent=2, ensure_ascii=False, sort_keys=True)
                    handle.write("\n")
                os.replace(tmp, self.path)
            except BaseException:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
                raise
