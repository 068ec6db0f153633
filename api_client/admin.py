"""The operator's side of vetq: which workers are alive, the messages they refused
(dead letters) and the review telemetry stream. A producer submits and waits with
`Client`; an operator inspects the fleet with `Admin`, on the same Redis and settings."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from vetq.api_client.client import Client, _service_errors, live_workers
from vetq.core.redis_keys import DEAD_LETTER_KEY, TELEMETRY_STREAM
from vetq.core.settings import VetqSettings


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

    def close(self) -> None:
        if self._owns_client:
            self._client.close()

    def __enter__(self) -> Admin:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
