"""The concrete model clients: Anthropic (Messages API), OpenAI (Chat Completions)
and Anthropic-on-Bedrock, behind the one `LLMClient` protocol.

Rules every client here keeps:

* SDKs are imported lazily, in the constructor: importing this module never
  imports `anthropic` or `openai`. A missing SDK is a ConfigError naming the extra.
* SDK retries are off (`max_retries=0`): one `complete()` is one HTTP request.
  Retrying, and waiting out a 429, is the caller's job (it knows the budget).
* Keys come from the SDKs' own environment variables (ANTHROPIC_API_KEY,
  OPENAI_API_KEY; base URLs from ANTHROPIC_BASE_URL / OPENAI_BASE_URL) unless
  passed in. A missing key is a ConfigError naming the variable. No error message
  ever carries a key: bodies are scrubbed of it and cut to 300 characters.
* Every SDK failure becomes a core.llm.errors type; a truncated answer is not an
  error here (it shows as finish_reason, `LLMResponse.truncated`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self

from vetq.core.errors import ConfigError
from vetq.core.llm.errors import (
    HTTP_BODY_LIMIT,
    LLMError,
    MalformedResponseError,
    ProviderHTTPError,
    ProviderNetworkError,
    ProviderTimeoutError,
    RateLimitedError,
)
from vetq.core.llm.types import LLMRequest, LLMResponse, RateLimitInfo, Usage

__all__ = ["AnthropicClient", "BedrockClient", "OpenAIClient"]

_PARSE_ERRORS = (ValueError, AttributeError, KeyError, IndexError, TypeError)
_REDACTED = "[REDACTED]"


def _scrub(text: str, secrets: tuple[str, ...]) -> str:
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, _REDACTED)
    return text


def _field(obj: Any, name: str) -> Any:
    """An attribute of an SDK model, or a key of a dict (lenient SDK parsing can
    leave either)."""
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)


def _headers_of(exc: Any) -> dict[str, str]:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    try:
        return dict(headers.items()) if headers is not None else {}
    except Exception:  # noqa: BLE001 - headers are a nicety, never a second failure
        return {}


def _body_of(exc: Any) -> str:
    response = getattr(exc, "response", None)
    try:
        text = response.text if response is not None else ""
    except Exception:  # noqa: BLE001 - e.g. a streamed body that was never read
        text = ""
    if not text:
        body = getattr(exc, "body", None)
        if body is not None:
            try:
                text = body if isinstance(body, str) else json.dumps(body, default=str)
            except (TypeError, ValueError):
                text = str(body)
    return text or ""


def _env_key(variable: str, provider: str, explicit: str | None) -> str:
    key = explicit if explicit is not None else os.environ.get(variable)
    if not key or not key.strip():
        raise ConfigError(f"{variable} is not set: provider {provider!r} needs an API key in {variable}")
    return key.strip()


class _SDKClient:
    """What the concrete clients share: error mapping, key scrubbing, the timeout."""

    provider: str = ""
    model: str = ""
    _secrets: tuple[str, ...] = ()
    _sdk: Any = None
    _client: Any = None
    timeout_s: float = 60.0

    if TYPE_CHECKING:  # what every concrete client's constructor takes (and from_spec passes)

        def __init__(self, model: str, *, timeout_s: float = 60.0, base_url: str | None = None) -> None: ...

    @classmethod
    def from_spec(cls, model: str, *, timeout_s: float, base_url: str | None) -> Self:
        return cls(model, timeout_s=timeout_s, base_url=base_url)

    def _timeout_of(self, request: LLMRequest) -> float:
        """The call's timeout: the request's (the time its review or job has left) when
        shorter than the client's own."""
        return min(self.timeout_s, request.timeout_s) if request.timeout_s is not None else self.timeout_s

    def __repr__(self) -> str:  # never shows the key
        return f"{type(self).__name__}(provider={self.provider!r}, model={self.model!r})"

    def _map_error(self, exc: BaseException, timeout_s: float) -> LLMError:
        """Turn an SDK exception into a vetq LLMError. `self._sdk` is the SDK module."""
        sdk = self._sdk
        where = f"{self.provider}:{self.model}"
        if isinstance(exc, sdk.RateLimitError):
            headers = _headers_of(exc)
            info = RateLimitInfo.from_headers(headers)
            hint = info.wait_hint_s()
            after = f"; retry after {hint:g}s" if hint is not None else ""
            return RateLimitedError(f"{where} is rate limited (HTTP 429){after}", retry_after_s=hint, rate_limit=info)
        if isinstance(exc, sdk.APIStatusError):
            status = int(getattr(exc, "status_code", 0) or 0)
            body = _scrub(_body_of(exc), self._secrets)[:HTTP_BODY_LIMIT]
            return ProviderHTTPError(status, body, message=f"{where} answered HTTP {status}: {body}")
        if isinstance(exc, sdk.APITimeoutError):
            return ProviderTimeoutError(f"{where} did not answer within {timeout_s:g}s")
        if isinstance(exc, sdk.APIConnectionError):
            cause = exc.__cause__ or exc.__context__
            reason = _scrub(str(cause or exc), self._secrets)[:HTTP_BODY_LIMIT]
            return ProviderNetworkError(f"could not reach {where}: {type(cause or exc).__name__}: {reason}")
        if isinstance(exc, (sdk.APIResponseValidationError, *_PARSE_ERRORS)):
            return MalformedResponseError(f"{where} sent an answer that cannot be read ({type(exc).__name__})")
        message = _scrub(str(exc), self._secrets)[:HTTP_BODY_LIMIT]
        return LLMError(f"{where}: unexpected SDK failure {type(exc).__name__}: {message}")

    def _call(self, send: Any, read: Any, request: LLMRequest) -> LLMResponse:
        """Send via the SDK's raw-response call (given its per-request timeout), then read
        it; every failure mapped. The timeout is the SDK's own, so a call past it is
        ended and its connection closed, not left running."""
        base_error = sdk_base_error(self._sdk)
        timeout_s = self._timeout_of(request)
        try:
            raw = send(timeout_s)
        except (base_error, json.JSONDecodeError) as exc:
            raise self._map_error(exc, timeout_s) from None
        try:
            headers = dict(raw.headers.items())
            parsed = raw.parse()
        except (base_error, *_PARSE_ERRORS) as exc:
            raise self._map_error(exc, timeout_s) from None
        try:
            return read(parsed, headers)
        except MalformedResponseError:
            raise
        except _PARSE_ERRORS as exc:
            raise MalformedResponseError(
                f"{self.provider}:{self.model} sent an answer that cannot be read ({type(exc).__name__})"
            ) from None


def sdk_base_error(sdk: Any) -> type[BaseException]:
    """The SDK's root exception class (AnthropicError / OpenAIError)."""
    return getattr(sdk, "AnthropicError", None) or getattr(sdk, "OpenAIError", None) or LLMError


# --------------------------------------------------------------------------- Anthropic


def _import_anthropic(extra: str = "anthropic") -> Any:
    try:
        import anthropic
    except ImportError:
        raise ConfigError(f"provider {extra!r} needs the Anthropic SDK: pip install 'vetq[{extra}]'") from None
    return anthropic


class AnthropicClient(_SDKClient):
    """Claude through the Messages API. JSON mode has no native flag here: the
    prompt asks for JSON.

    The anthropic 2.x SDK dropped `temperature` from `messages.create` (current
    models fix their own sampling), so by default no temperature is sent;
    `send_temperature=True` sends `request.temperature` in the body anyway."""

    provider = "anthropic"

    def __init__(
        self,
        model: str,
        *,
        timeout_s: float = 60.0,
        base_url: str | None = None,
        api_key: str | None = None,
        send_temperature: bool = False,
    ) -> None:
        self._sdk = _import_anthropic()
        self.model = model
        self.send_temperature = send_temperature
        self.timeout_s = float(timeout_s)
        key = _env_key("ANTHROPIC_API_KEY", self.provider, api_key)
        self._secrets = (key,)
        # base_url None: the SDK reads ANTHROPIC_BASE_URL itself.
        self._client = self._sdk.Anthropic(api_key=key, base_url=base_url, timeout=self.timeout_s, max_retries=0)

    def _params(self, request: LLMRequest) -> dict[str, Any]:
        params: dict[str, Any] = {
            "model": self.model,
            "max_tokens": request.max_tokens,
            "messages": [{"role": m.role, "content": m.content} for m in request.messages],
        }
        if request.system:
            params["system"] = request.system
        if self.send_temperature and request.temperature is not None:
            # anthropic 2.x has no `temperature` argument any more; the body still can.
            params["extra_body"] = {"temperature": request.temperature}
        return params

    def complete(self, request: LLMRequest) -> LLMResponse:
        params = self._params(request)
        return self._call(
            lambda timeout: self._client.messages.with_raw_response.create(**params, timeout=timeout),
            self._read,
            request,
        )

    def _read(self, message: Any, headers: dict[str, str]) -> LLMResponse:
        content = _field(message, "content")
        if not isinstance(content, list):
            raise MalformedResponseError(f"{self.provider}:{self.model} answered without a content list")
        texts: list[str] = []
        has_tool_calls = False
        for block in content:
            kind = _field(block, "type")
            if kind == "text":
                text = _field(block, "text")
                if not isinstance(text, str):
                    raise MalformedResponseError(f"{self.provider}:{self.model} sent a text block without text")
                texts.append(text)
            elif kind in ("tool_use", "server_tool_use"):
                has_tool_calls = True
        usage = _field(message, "usage")
        return LLMResponse(
            text="".join(texts),
            finish_reason=_field(message, "stop_reason"),
            model=str(_field(message, "model") or self.model),
            usage=Usage.of(_field(usage, "input_tokens"), _field(usage, "output_tokens")),
            rate_limit=RateLimitInfo.from_headers(headers),
            has_tool_calls=has_tool_calls,
        )


class BedrockClient(AnthropicClient):
    """Claude on AWS Bedrock through the Anthropic SDK's AnthropicBedrock client.
    Credentials come from the usual AWS environment (or AWS_BEARER_TOKEN_BEDROCK);
    the region from AWS_REGION / AWS_DEFAULT_REGION."""

    provider = "bedrock"

    def __init__(
        self,
        model: str,
        *,
        timeout_s: float = 60.0,
        base_url: str | None = None,
        aws_region: str | None = None,
        send_temperature: bool = False,
    ) -> None:
        self._sdk = _import_anthropic("bedrock")
        self.model = model
        self.send_temperature = send_temperature
        self.timeout_s = float(timeout_s)
        try:
            from anthropic import AnthropicBedrock
        except ImportError:
            raise ConfigError("provider 'bedrock' needs pip install 'vetq[bedrock]'") from None
        bearer = os.environ.get("AWS_BEARER_TOKEN_BEDROCK")
        if not bearer:
            try:
                import botocore  # noqa: F401 - AnthropicBedrock signs requests with it
            except ImportError:
                raise ConfigError("provider 'bedrock' needs botocore: pip install 'vetq[bedrock]'") from None
        region = aws_region or os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
        secrets = [
            os.environ.get(name) or ""
            for name in ("AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_BEARER_TOKEN_BEDROCK")
        ]
        self._secrets = tuple(s for s in secrets if s)
        try:
            self._client = AnthropicBedrock(aws_region=region, base_url=base_url, timeout=self.timeout_s, max_retries=0)
        except ValueError as exc:
            if "region" in str(exc).lower():
                raise ConfigError(
                    "AWS_REGION is not set: provider 'bedrock' needs AWS_REGION "
                    "(or AWS_DEFAULT_REGION, or a region in the AWS profile)"
                ) from None
            raise ConfigError(f"provider 'bedrock' is misconfigured: {_scrub(str(exc), self._secrets)}") from None

    def complete(self, request: LLMRequest) -> LLMResponse:
        params = self._params(request)
        try:
            return self._call(
                lambda timeout: self._client.messages.with_raw_response.create(**params, timeout=timeout),
                self._read,
                request,
            )
        except LLMError:
            raise
        except Exception as exc:  # botocore credential failures surface while signing
            if type(exc).__module__.startswith("botocore"):
                raise ConfigError(f"provider 'bedrock' could not sign the request: {type(exc).__name__}") from None
            raise


# --------------------------------------------------------------------------- OpenAI


class OpenAIClient(_SDKClient):
    """GPT models through Chat Completions; json_mode → response_format json_object."""

    provider = "openai"

    def __init__(
        self, model: str, *, timeout_s: float = 60.0, base_url: str | None = None, api_key: str | None = None
    ) -> None:
        try:
            import openai
        except ImportError:
            raise ConfigError("provider 'openai' needs the OpenAI SDK: pip install 'vetq[openai]'") from None
        self._sdk = openai
        self.model = model
        self.timeout_s = float(timeout_s)
        key = _env_key("OPENAI_API_KEY", self.provider, api_key)
        self._secrets = (key,)
        kwargs: dict[str, Any] = {"api_key": key, "timeout": self.timeout_s, "max_retries": 0}
        if base_url is not None:  # otherwise the SDK reads OPENAI_BASE_URL itself
            kwargs["base_url"] = base_url
        try:
            self._client = openai.OpenAI(**kwargs)
        except openai.OpenAIError as exc:
            raise ConfigError(f"provider 'openai' is misconfigured: {_scrub(str(exc), self._secrets)}") from None

    def _params(self, request: LLMRequest) -> dict[str, Any]:
        messages: list[dict[str, str]] = []
        if request.system:
            messages.append({"role": "system", "content": request.system})
        messages.extend({"role": m.role, "content": m.content} for m in request.messages)
        # The body follows the request's fields, so a caller's parameter fallback (the
        # review session renames max_tokens, drops reasoning_effort...) changes what is sent.
        params: dict[str, Any] = {"model": self.model, "messages": messages}
        if request.max_tokens_field == "max_tokens":
            params["max_tokens"] = request.max_tokens
        else:
            params["max_completion_tokens"] = request.max_tokens
        if request.temperature is not None:
            params["temperature"] = request.temperature
        if request.reasoning_effort is not None:
            params["reasoning_effort"] = request.reasoning_effort
        if request.json_mode:
            params["response_format"] = {"type": "json_object"}
        return params

    def complete(self, request: LLMRequest) -> LLMResponse:
        params = self._params(request)
        return self._call(
            lambda timeout: self._client.chat.completions.with_raw_response.create(**params, timeout=timeout),
            self._read,
            request,
        )

    def _read(self, completion: Any, headers: dict[str, str]) -> LLMResponse:
        choices = _field(completion, "choices")
        if not isinstance(choices, list) or not choices:
            raise MalformedResponseError(f"{self.provider}:{self.model} answered without choices")
        choice = choices[0]
        message = _field(choice, "message")
        if message is None:
            raise MalformedResponseError(f"{self.provider}:{self.model} answered a choice without a message")
        content = _field(message, "content")
        if content is not None and not isinstance(content, str):
            raise MalformedResponseError(f"{self.provider}:{self.model} answered non-text content")
        has_tool_calls = bool(_field(message, "tool_calls")) or bool(_field(message, "function_call"))
        usage = _field(completion, "usage")
        return LLMResponse(
            text=content or "",
            finish_reason=_field(choice, "finish_reason"),
            model=str(_field(completion, "model") or self.model),
            usage=Usage.of(_field(usage, "prompt_tokens"), _field(usage, "completion_tokens")),
            rate_limit=RateLimitInfo.from_headers(headers),
            has_tool_calls=has_tool_calls,
        )
