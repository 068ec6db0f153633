"""compose.yaml and the Dockerfile cannot run here (no Docker engine), so their
contents are checked against the real CLI and settings."""

from __future__ import annotations

from pathlib import Path

import yaml

from vetq.api_client.cli import build_parser
from vetq.core.queue import QUEUES
from vetq.core.settings import VetqSettings

ROOT = Path(__file__).resolve().parents[1]


def compose():
    return yaml.safe_load((ROOT / "compose.yaml").read_text())


def test_services_present():
    assert {"redis", "extract-worker", "review-worker", "flower"} <= set(compose()["services"])


def test_redis_is_persistent_and_never_evicts():
    command = " ".join(compose()["services"]["redis"]["command"])
    assert "--appendonly yes" in command
    assert "--maxmemory-policy noeviction" in command


def test_worker_commands_parse_with_the_real_cli():
    parser = build_parser()
    for name, queue in (("extract-worker", "extract"), ("review-worker", "review")):
        service = compose()["services"][name]
        args = parser.parse_args(service["command"])
        assert args.verb == "worker"
        assert args.queues.split(",") == [queue] and queue in QUEUES
        assert "build" in service  # the image built from the Dockerfile, whose entrypoint is vetq


def test_worker_environment_is_real_settings_and_safe():
    known = {f"VETQ_{name.upper()}" for name in VetqSettings.model_fields}
    provider_keys = {"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL"}
    for name in ("extract-worker", "review-worker"):
        env = compose()["services"][name]["environment"]
        unknown = set(env) - known - provider_keys
        assert not unknown, f"{name} sets variables vetq does not read: {unknown}"
        settings = VetqSettings(
            **{k[5:].lower(): v for k, v in env.items() if k.startswith("VETQ_") and "${" not in str(v)}
        )
        assert settings.visibility_timeout_s > settings.task_time_limit_s
        # Secrets come from the host, never written into the file.
        assert all(str(env[k]).startswith("${") for k in provider_keys & set(env))
        # Workers get time to finish a job on shutdown: the grace period passes the time limit.
        grace = compose()["services"][name]["stop_grace_period"]
        assert int(grace.rstrip("s")) > settings.task_time_limit_s


def test_dockerfile_entrypoint_is_the_cli():
    text = (ROOT / "Dockerfile").read_text()
    assert 'ENTRYPOINT ["vetq"]' in text
    assert "USER vetq" in text
