"""The embedded default for producers: vetq's own Redis plus, unless `vetq up`
already serves it, a worker inside this process for as long as it runs.

This is the one place api_client reaches into workers/, lazily, and only when no
VETQ_REDIS_URL is set: a producer pointed at a real Redis never imports worker code."""

from __future__ import annotations

from typing import Any

from vetq.core.errors import ConfigError
from vetq.core.logging import get_logger
from vetq.core.settings import VetqSettings

log = get_logger("vetq.embedded")


class EmbeddedService:
    def __init__(self, settings: VetqSettings, *, concurrency: int = 2) -> None:
        self.settings = settings
        self.concurrency = concurrency
        self.redis: Any = None
        self.worker: Any = None
        self.redis_url: str | None = None

    def start(self) -> EmbeddedService:
        from vetq.workers.app import UnsafeSettingsError, create_app
        from vetq.workers.embedded_redis import EmbeddedRedis
        from vetq.workers.runner import ThreadWorker

        self.redis = EmbeddedRedis(self.settings.home, role="cli").start()
        self.redis_url = self.redis.url
        if self.redis.attached_role == "up":
            log.info("embedded_using_running_service", url=self.redis.safe_url)
            return self
        try:
            app = create_app(self.settings, self.redis_url)
            self.worker = ThreadWorker(app, concurrency=self.concurrency).start()
        except UnsafeSettingsError as exc:
            self.redis.stop()
            raise ConfigError(str(exc)) from None
        except BaseException:
            self.redis.stop()
            raise
        return self

    def stop(self) -> None:
        if self.worker is not None:
            self.worker.stop()
            self.worker = None
        if self.redis is not None:
            self.redis.stop()
            self.redis = None
