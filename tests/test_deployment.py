"""compose.yaml and the Dockerfile cannot run here (no Docker engine), so their
contents are checked against the real CLI and settings."""

from __future__ import annotations

import json
import re
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
        unknown = set(env) - known - provider_keys - OTEL_VARIABLES
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


# The standard OpenTelemetry variables the workers take from the host (core/tracing.py).
OTEL_VARIABLES = {
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_TRACES_EXPORTER",
    "OTEL_TRACES_SAMPLER",
    "OTEL_TRACES_SAMPLER_ARG",
}


def test_workers_can_trace_when_the_host_asks():
    """The image has the otel extra; the OTEL_* variables pass from the host unset when
    it sets none (an empty endpoint would turn tracing on, pointing nowhere)."""
    import re

    from vetq.core.tracing import traces_requested

    installed = re.search(r"pip install '\.\[([a-z,]+)\]'", (ROOT / "Dockerfile").read_text())
    assert installed and "otel" in installed.group(1).split(",")
    for name in ("extract-worker", "review-worker"):
        env = compose()["services"][name]["environment"]
        otel = {k: v for k, v in env.items() if k.startswith("OTEL_")}
        assert set(otel) == OTEL_VARIABLES and all(v is None for v in otel.values()), otel
    # The variables are the ones tracing reads: an endpoint alone turns it on.
    assert traces_requested({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://otel-collector:4318"})
    assert not traces_requested({"OTEL_TRACES_EXPORTER": "none"})


def test_dockerfile_entrypoint_is_the_cli():
    text = (ROOT / "Dockerfile").read_text()
    assert 'ENTRYPOINT ["vetq"]' in text
    assert "USER vetq" in text


# --------------------------------------------------------------------------- metrics


def _yaml(path: str):
    return yaml.safe_load((ROOT / path).read_text())


def test_prometheus_and_grafana_are_in_compose_with_their_files():
    services = compose()["services"]
    assert {"vetq-metrics", "prometheus", "grafana"} <= set(services)
    for name in ("prometheus", "grafana"):
        for volume in services[name]["volumes"]:
            source = volume.split(":", 1)[0]
            if source.startswith("./"):
                assert (ROOT / source).exists(), f"{name} mounts {source}, which is not in the repository"
        # Published on the host's loopback only, as Flower is.
        assert all(port.startswith("127.0.0.1:") for port in services[name]["ports"])
    grafana_mounts = dict(v.split(":")[:2] for v in services["grafana"]["volumes"])
    provider = _yaml("deploy/grafana/provisioning/dashboards/vetq.yaml")["providers"][0]
    assert grafana_mounts["./deploy/grafana/dashboards"] == provider["options"]["path"]
    assert grafana_mounts["./deploy/grafana/provisioning"] == "/etc/grafana/provisioning"
    datasource = _yaml("deploy/grafana/provisioning/datasources/prometheus.yaml")["datasources"][0]
    assert datasource["type"] == "prometheus" and datasource["url"] == "http://prometheus:9090"
    dashboard = json.loads((ROOT / "deploy/grafana/dashboards/vetq.json").read_text())
    uids = {t["datasource"]["uid"] for p in dashboard["panels"] for t in p.get("targets", [])}
    assert uids == {datasource["uid"]}
    prometheus_mounts = dict(v.split(":")[:2] for v in services["prometheus"]["volumes"])
    assert prometheus_mounts["./deploy/prometheus/prometheus.yml"] in " ".join(services["prometheus"]["command"])


def test_prometheus_scrapes_every_worker_and_the_fleet_server_where_they_listen():
    services = compose()["services"]
    scrape = {job["job_name"]: job for job in _yaml("deploy/prometheus/prometheus.yml")["scrape_configs"]}
    workers = scrape["vetq-workers"]["dns_sd_configs"][0]
    assert set(workers["names"]) == {"extract-worker", "review-worker"}
    for name in workers["names"]:
        settings = VetqSettings(
            **{
                k[5:].lower(): v
                for k, v in services[name]["environment"].items()
                if k.startswith("VETQ_") and "${" not in str(v)
            }
        )
        assert settings.metrics_port == workers["port"]
        assert settings.metrics_address == "0.0.0.0"  # reachable from the Prometheus container
        assert "ports" not in services[name]  # but never published on the host
    args = build_parser().parse_args(services["vetq-metrics"]["command"])
    assert (args.verb, args.metrics_verb, args.address) == ("metrics", "serve", "0.0.0.0")
    assert scrape["vetq-fleet"]["static_configs"][0]["targets"] == [f"vetq-metrics:{args.port}"]
    env = services["vetq-metrics"]["environment"]
    assert set(env) <= {f"VETQ_{name.upper()}" for name in VetqSettings.model_fields}  # no provider key


def _registered_metric_names() -> tuple[set[str], set[str]]:
    """The sample names the code can export, and its metric families' names."""
    from prometheus_client import CollectorRegistry

    from vetq.api_client.fleet_metrics import FleetCollector
    from vetq.workers.metrics import WorkerMetrics

    registry = CollectorRegistry()
    WorkerMetrics(registry)
    families = {(f.name, f.type) for f in registry.collect()}
    families |= {(f.name, f.type) for f in FleetCollector(None, lambda _t: {})._families()}
    suffixes = {"counter": ("_total",), "histogram": ("_bucket", "_sum", "_count"), "gauge": ("",)}
    samples = {name + suffix for name, kind in families for suffix in suffixes[kind]}
    return samples, {name for name, _ in families}


def test_the_dashboard_queries_only_metrics_the_code_exports_and_shows_them_all():
    dashboard = json.loads((ROOT / "deploy/grafana/dashboards/vetq.json").read_text())
    expressions = [t["expr"] for p in dashboard["panels"] for t in p.get("targets", [])]
    used = {name for expr in expressions for name in re.findall(r"\bvetq_[a-z0-9_]+", expr)}
    samples, families = _registered_metric_names()
    assert used and not used - samples, f"the dashboard queries metrics nothing exports: {used - samples}"
    shown = {family for family in families if any(name.startswith(family) for name in used)}
    assert shown == families, f"metrics the dashboard does not show: {families - shown}"


def test_the_image_copies_every_file_the_build_reads():
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    copied = {
        word
        for line in (ROOT / "Dockerfile").read_text().splitlines()
        if line.startswith("COPY ")
        for word in line.split()[1:-1]
    }
    needed = {project["readme"], *project.get("license-files", [])}
    assert needed <= copied, needed - copied
