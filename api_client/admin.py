"""The operator's side of vetq: which workers are alive, the messages they refused
(dead letters), the review telemetry stream and the tenants' usage. A producer submits and waits with
`Client`; an operator inspects the fleet with `Admin`, on the same Redis and settings."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from vetq.api_client.client import Client, _service_errors, live_workers
from vetq.core.errors import InvalidInputError, NotFoundError
from vetq.core.job_options import check_tenant
from vetq.core.llm.prices import MICRO_USD
from vetq.core.redis_keys import (
    DEAD_LETTER_KEY,
    TELEMETRY_STREAM,
    budget_scope_key,
    tenant_scope,
    tenant_usage_key,
    usd_scope,
)
from vetq.core.settings import VetqSettings
from vetq.core.tenants import usage_counter_of, window_start

MAX_USAGE_WINDOWS = 1000


class Admin:
    """Ops verbs over one deployment. `Admin()` connects as `Client()` does (the same
    URL rule, the embedded default included); `Admin.of(client)` reuses a producer's
    connections, which stay the client's to close."""

    def __init__(self, redis_url: str | None = None, *, settings: VetqSettings | None = None) -> None:
        self._client = Client(redis_url, settings=settings)
        self._owns_client = True

    @classmethod
    def of(cls, client: Client) -> Admin:
        admin = cls.__new__(cls)
        admin._client = client
        admin._owns_client = False
        return admin

    def workers(self, timeout: float = 1.0) -> dict[str, list[str]]:
        """Which live workers consume which queue."""
        with _service_errors(self._client.redis_url):
            return live_workers(self._client.app, timeout)

    def dead_letters(self, limit: int = 100) -> Iterator[dict[str, Any]]:
        """Messages the workers refused (workers.dead_letter), newest first."""
        for raw in self._client.redis().lrange(DEAD_LETTER_KEY, 0, max(0, int(limit) - 1)):
            try:
                yield json.loads(raw)
            except ValueError:
                yield {"reason": "unreadable_entry"}

    def redeliver(self, job_id: str) -> dict[str, Any]:
        """Send again the webhook deliveries of `job_id` the workers gave up on (its
        webhook_failed / webhook_refused dead letters), each exactly as it was, once the
        receiver or the allow-list is fixed. NotFoundError when none is kept (never
        failed, already redelivered, or older than VETQ_RESULT_TTL_S)."""
        from vetq.workers.webhooks import redeliver  # publishing a delivery is worker code

        with _service_errors(self._client.redis_url):
            sent = redeliver(self._client.app, self._client.redis(), job_id)
        if not sent:
            raise NotFoundError(
                f"job {job_id!r} has no undelivered webhook kept: it was delivered, already redelivered, or its "
                "dead letter is older than VETQ_RESULT_TTL_S"
            )
        return {"job_id": job_id, "redelivered": sent}

    def export_telemetry(self) -> Iterator[dict[str, Any]]:
        """Every telemetry record in the stream, oldest first."""
        last = "-"
        while True:
            entries = self._client.redis().xrange(TELEMETRY_STREAM, min=last, max="+", count=1000)
            if last != "-":
                entries = entries[1:]
            if not entries:
                return
            for entry_id, fields in entries:
                yield json.loads(fields[b"record"])
                last = entry_id.decode() if isinstance(entry_id, bytes) else entry_id

    def usage(self, tenant: str | None = None, *, windows: int = 1) -> list[dict[str, Any]]:
        """Each tenant's use of the models per window of VETQ_TENANT_WINDOW_S (the
        current window first, `windows` in all), with its budgets from
        VETQ_TENANT_LIMITS and what is left of them: a row per tenant that used a model
        in the window, or for `tenant` alone (a row even when it used nothing).
        Counted by the workers as answers land (workers/tenant_usage.py); `cost_usd`
        leaves out the `unpriced_calls`, whose models have no price."""
        tenant = check_tenant(tenant)
        if isinstance(windows, bool) or not isinstance(windows, int) or not 1 <= windows <= MAX_USAGE_WINDOWS:
            raise InvalidInputError(f"windows must be a whole number from 1 to {MAX_USAGE_WINDOWS}, got {windows!r}")
        settings = self._client.settings
        window_s = settings.tenant_window_s
        limits = settings.tenant_table()
        current = window_start(time.time(), window_s)
        starts = [current - i * window_s for i in range(windows)]
        with _service_errors(self._client.redis_url):
            redis = self._client.redis()
            pipe = redis.pipeline(transaction=False)
            for start in starts:
                pipe.hgetall(tenant_usage_key(window_s, start))
            counted = pipe.execute()
            rows: list[dict[str, Any]] = []
            for start, fields in zip(starts, counted, strict=True):
                by_tenant: dict[str, dict[str, int]] = {}
                for name, value in fields.items():
                    field = usage_counter_of(_text(name))
                    if field is not None and (tenant is None or field[0] == tenant):
                        by_tenant.setdefault(field[0], {})[field[1]] = int(value)
                if tenant is not None:
                    by_tenant.setdefault(tenant, {})
                for who in sorted(by_tenant):
                    rows.append(_usage_row(who, start, window_s, by_tenant[who], limits.of(who)))
            pipe = redis.pipeline(transaction=False)
            for row in rows:
                scope = tenant_scope(row["tenant"], row["window"]["start_s"])
                pipe.hmget(budget_scope_key(scope), "limit", "spent", "reserved")
                pipe.hmget(budget_scope_key(usd_scope(scope)), "limit", "spent", "reserved")
            budgets = pipe.execute() if rows else []
        for index, row in enumerate(rows):
            tokens, usd = budgets[2 * index], budgets[2 * index + 1]
            budget = row["budget"]
            if budget["tokens"] is not None:
                budget["tokens_left"] = _left(budget["tokens"], tokens)
            if budget["usd"] is not None:
                left = _left(round(budget["usd"] * MICRO_USD), usd)
                budget["usd_left"] = round(left / MICRO_USD, 6)
        return rows

    def close(self) -> None:
        if self._owns_client:
            self._client.close()

    def __enter__(self) -> Admin:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _iso(epoch_s: float) -> str:
    return datetime.fromtimestamp(epoch_s, UTC).isoformat().replace("+00:00", "Z")


def _usage_row(tenant: str, start: int, window_s: int, counts: dict[str, int], limit: Any) -> dict[str, Any]:
    return {
        "tenant": tenant,
        "window": {"start": _iso(start), "end": _iso(start + window_s), "start_s": start, "seconds": window_s},
        "calls": counts.get("calls", 0),
        "tokens": counts.get("tokens", 0),
        "input_tokens": counts.get("input_tokens", 0),
        "output_tokens": counts.get("output_tokens", 0),
        "cost_usd": round(counts.get("cost_micro_usd", 0) / MICRO_USD, 6),
        "unpriced_calls": counts.get("unpriced_calls", 0),
        "budget": {"tokens": limit.tokens, "usd": limit.usd, "weight": limit.weight},
    }


def _left(limit: int, fields: list[Any]) -> int:
    """What a budget has left: the ledger's limit less spent and reserved (a window no
    call has reached yet has its whole budget)."""
    stored, spent, reserved = (int(v) if v is not None else None for v in fields)
    return max(0, (stored if stored is not None else limit) - (spent or 0) - (reserved or 0))
