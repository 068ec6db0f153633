"""Model answers cached in Redis, shared by every worker, so a retried job does not
pay again for a call that already succeeded.

Key: `<prefix>:<sha256(provider, model, request.fingerprint())>`, value: the
LLMResponse JSON (stored with cached=False and without the rate-limit headers,
returned with cached=True), TTL `ttl_s`. Only complete answers are stored (not
truncated, no tool calls); a request with use_cache=False is neither read nor
written. Hits and misses are logged with stage, provider and model, never text.
A Redis failure of the cache is logged and treated as a miss, except a read that finds
the worker's connection pool exhausted (workers/redis_pool.py): it is raised, since a
job that reads no cache must not pay for a call it may already have paid for.
Each entry is one key, read and written by single-key commands: it needs no
Redis Cluster hash tag.
"""

from __future__ import annotations

import hashlib
from typing import Any

import redis
from pydantic import ValidationError

from vetq.core.llm.types import LLMRequest, LLMResponse, RateLimitInfo
from vetq.core.logging import get_logger
from vetq.core.redis_keys import RESPONSE_CACHE_PREFIX, response_cache_key
from vetq.workers.redis_pool import POOL_EXHAUSTED

__all__ = ["RedisResponseCache"]

log = get_logger("vetq.cache")


class RedisResponseCache:
    def __init__(self, redis_client: Any, ttl_s: int, *, key_prefix: str = RESPONSE_CACHE_PREFIX) -> None:
        if int(ttl_s) <= 0:
            raise ValueError("ttl_s must be positive")
        self.redis = redis_client
        self.ttl_s = int(ttl_s)
        self.key_prefix = key_prefix

    @staticmethod
    def digest(provider: str, model: str, request: LLMRequest) -> str:
        """What names one model request: the cache's key, and the bulk lane's request id."""
        return hashlib.sha256("\x00".join((provider, model, request.fingerprint())).encode("utf-8")).hexdigest()

    def key(self, provider: str, model: str, request: LLMRequest) -> str:
        return response_cache_key(self.digest(provider, model, request), self.key_prefix)

    def get(self, provider: str, model: str, request: LLMRequest, *, stage: str | None = None) -> LLMResponse | None:
        if not request.use_cache:
            return None
        try:
            raw = self.redis.get(self.key(provider, model, request))
        except POOL_EXHAUSTED:
            raise  # no connection to read with is not a miss: the caller ends the job, unpaid
        except redis.RedisError as exc:
            log.warning("cache_error", op="get", stage=stage, provider=provider, model=model, error=type(exc).__name__)
            return None
        if raw is not None:
            try:
                response = LLMResponse.model_validate_json(raw)
            except ValidationError:
                raw = None
            else:
                log.info("cache_hit", stage=stage, provider=provider, model=model)
                return response.model_copy(update={"cached": True})
        log.info("cache_miss", stage=stage, provider=provider, model=model)
        return None

    @staticmethod
    def cacheable(request: LLMRequest, response: LLMResponse) -> bool:
        return request.use_cache and not response.truncated and not response.has_tool_calls and not response.cached

    def put(
        self, provider: str, model: str, request: LLMRequest, response: LLMResponse, *, stage: str | None = None
    ) -> bool:
        """Store a complete answer; False when it is not cacheable (or Redis failed)."""
        if not self.cacheable(request, response):
            return False
        stored = response.model_copy(update={"cached": False, "rate_limit": RateLimitInfo()})
        try:
            self.redis.set(self.key(provider, model, request), stored.model_dump_json(), ex=self.ttl_s)
        except redis.RedisError as exc:
            log.warning("cache_error", op="put", stage=stage, provider=provider, model=model, error=type(exc).__name__)
            return False
        return True
