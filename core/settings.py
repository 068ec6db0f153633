"""Every VETQ_* setting, validated once at start. A bad value stops the process with
a message naming the variable; provider keys keep their SDKs' own names.

This is the only module that reads a VETQ_ variable (tests/test_settings_reader.py
checks the shipped packages): everything else takes a VetqSettings, so each default
and each rule is written once, here."""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict, SettingsError

from vetq.core.errors import ConfigError
from vetq.core.llm.client import ModelSpec
from vetq.core.validation import explain

if TYPE_CHECKING:
    from vetq.core.documents.pdf import ConvertOptions, RenderOptions
    from vetq.core.extraction.thresholds import ThresholdTable
    from vetq.core.llm.prices import PriceTable
    from vetq.core.schemas.compiled import SchemaLimits
    from vetq.core.tenants import TenantLimits
    from vetq.core.webhooks import AllowList


def _default_home() -> Path:
    from platformdirs import user_data_path

    return user_data_path("vetq", appauthor=False)


LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
# Without VETQ_LOG_LEVEL a worker (`vetq worker`, `vetq up`, a library's own logging)
# logs every job at INFO, the field's default; a one-shot command and the MCP server,
# whose stderr a person or an agent's host reads, keep to warnings and errors.
QUIET_LOG_LEVEL = "WARNING"


T = TypeVar("T")


def _parsed_by(parse: Callable[[Any], object], variable: str, value: T) -> T:
    """`value` when `parse` reads it; its ConfigError as the validation error, without the
    variable's name, which pydantic's error already names."""
    try:
        parse(value)
    except ConfigError as exc:
        raise ValueError(exc.message.removeprefix(f"{variable}: ")) from None
    return value


class VetqSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="VETQ_", extra="ignore", validate_default=True)

    # Models, one per role, as provider:model.
    generator: str = Field("anthropic:claude-sonnet-4-5", description="Generator model (provider:model)")
    critic: str = Field("anthropic:claude-haiku-4-5", description="Critic model; another family is one variable away")
    reviewer: str = Field("anthropic:claude-sonnet-4-5", description="Reviewer model for review jobs")
    provider_timeout_s: float = Field(60.0, gt=0, description="Timeout of one model call")

    record_to: Path | None = Field(None, description="Also record every model answer into this replay fixture")

    # Extraction gate.
    field_threshold: float = Field(0.70, ge=0, le=1, description="Fields below this are flagged")
    field_thresholds: Path | None = Field(
        None,
        description="A thresholds file (`vetq calibrate --write`): per schema and field, the threshold below which "
        "a field is flagged",
    )
    overall_threshold: float = Field(0.75, ge=0, le=1, description="Overall confidence below this is needs_review")
    max_document_chars: int = Field(200_000, gt=0, description="Longest document accepted")
    parse_retries: int = Field(1, ge=0, le=5, description="Repair retries when a model answer does not parse")
    generator_max_tokens: int = Field(4096, ge=64, description="max_tokens of a Generator call")
    critic_max_tokens: int = Field(8192, ge=64, description="max_tokens of a Critic call")

    # PDF input (core.documents): the producer checks size and magic, the worker converts.
    max_pdf_bytes: int = Field(
        10 * 1024 * 1024, ge=1024, le=256 * 1024 * 1024, description="Largest PDF a job may carry, in bytes"
    )
    max_pdf_pages: int = Field(50, ge=1, le=5000, description="Most pages a PDF may have")
    pdf_timeout_s: float = Field(60.0, gt=0, le=3600, description="Longest a worker spends converting one PDF")
    ocr: str = Field("auto", description="auto: read scanned pages with Tesseract where installed; off: never")
    ocr_lang: str = Field("eng", description="Tesseract's language(s) for scanned pages, e.g. eng+deu")
    ocr_min_confidence: float = Field(
        0.75, ge=0, le=1, description="A value read from OCR words below this confidence is penalised"
    )

    # Schemas (core.schemas): a job's schema travels in its message and is walked for every record.
    schema_max_fields: int = Field(200, ge=1, le=10_000, description="Most fields a schema may have, at all levels")
    schema_max_depth: int = Field(3, ge=1, le=8, description="Deepest nesting of lists and objects in a schema")
    schema_max_list_items: int = Field(1000, ge=1, le=100_000, description="Most items a list of a record may hold")
    schema_max_bytes: int = Field(
        65_536, ge=1024, le=4 * 1024 * 1024, description="Largest schema a job may carry inline, as JSON bytes"
    )
    mcp_schemas: str = Field(
        "",
        description="Schemas MCP agents may use: comma-separated built-in names, `inline` for their own (unset: all)",
    )

    # Review jobs.
    max_tokens_per_call: int = Field(4000, ge=256, description="Largest max_tokens of one review call")
    max_review_tokens: int = Field(20_000, ge=256, description="Token budget of one review")
    blindness_leak: float = Field(0.5, ge=0, le=1, description="Proposal overlap that refuses a blind review")
    blindness_warn: float = Field(0.15, ge=0, le=1, description="Proposal overlap that adds a warning")
    review_timeout_s: float = Field(120.0, gt=0, description="Model time one review may spend")
    telemetry: bool = Field(False, description="Write review telemetry records (on/off)")
    bench_modes: bool = Field(
        False, description="Run benchmark-only review modes (set by `vetq bench review` for its own workers)"
    )

    # Queue and workers.
    redis_url: str | None = Field(None, description="Redis for broker and results; unset = embedded Redis")
    home: Path = Field(default_factory=_default_home, description="Data directory of the embedded Redis")
    task_time_limit_s: int = Field(300, ge=10, description="Hard time limit of one job")
    visibility_timeout_s: int | None = Field(
        None, description="Broker redelivery timeout (default: time limit x 2 + 60)"
    )
    result_ttl_s: int = Field(24 * 3600, ge=60, description="How long results are kept")
    collected_result_ttl_s: int | None = Field(
        None,
        ge=0,
        description="Keep a result only this long once a client has collected it (0: delete; unset: VETQ_RESULT_TTL_S)",
    )
    track_started: bool = Field(
        True, description="Store each job's STARTED state, which status() reports as running (off: queued until done)"
    )
    wait_timeout_s: float = Field(600.0, gt=0, description="How long the CLI waits for a result")
    embedded_processes_from: int = Field(
        1000,
        ge=0,
        description="A batch this large moves the embedded default's worker out of the producer into worker "
        "processes, one per CPU (0: never)",
    )
    broker_connect_retries: int = Field(
        10, ge=1, le=100, description="Connection attempts of a starting worker before it gives up (exit 3)"
    )
    accept_content: list[str] = Field(
        default_factory=lambda: ["json"], description="Message formats workers accept; anything but json is refused"
    )

    # The fleet-wide call gate.
    limits: str = Field("", description="Per-model limits for the whole fleet, e.g. openai:gpt-5-mini=500rpm,200000tpm")
    limit_window_s: float = Field(
        60.0, gt=0, description="Length of the rate-limit window (providers count per minute)"
    )
    fleet_limiter: bool = Field(
        True, description="Share rate limits and 429 cooldowns across the fleet (off only to compare)"
    )
    max_attempts: int = Field(
        6, ge=1, le=50, description="Attempts of one request under rate limiting before RATE_LIMITED"
    )
    max_sleep_s: float = Field(
        10.0, ge=0, description="Longest rate-limit wait slept in place; longer ones requeue the job"
    )
    max_job_tokens: int = Field(50_000, ge=256, description="Token budget of one extraction job")
    prices: Path | None = Field(
        None,
        description="A price file (JSON or YAML, the shape of core/llm/prices.json) whose entries replace or add "
        "to the shipped prices",
    )
    cache_ttl_s: int = Field(86_400, ge=0, description="How long model answers are cached (0 turns the cache off)")
    tenant_limits: str = Field(
        "",
        description="Per-tenant budgets per window and fair-share weights, e.g. "
        "acme=200000tokens,5usd,weight=3;*=50000tokens",
    )
    tenant_window_s: int = Field(
        86_400,
        ge=1,
        description="Length of the tenants' budget window (windows start at multiples of it since the epoch)",
    )

    # The bulk lane (workers/bulk_coordinator.py): jobs' calls in the providers' Batch APIs.
    bulk_coordinator: bool = Field(
        True, description="Run the bulk lane's coordinator in this worker (one worker of the fleet works at a time)"
    )
    bulk_tick_s: float = Field(2.0, gt=0, le=300, description="How often the coordinator submits, polls and wakes")
    bulk_flush_requests: int = Field(
        1000, ge=1, description="Submit a model's queued bulk requests once this many wait"
    )
    bulk_flush_age_s: float = Field(
        60.0, ge=0, le=86_400, description="... or once the oldest has waited this long (seconds)"
    )
    bulk_max_batch_requests: int = Field(
        100_000, ge=1, description="Most requests in one provider batch (below the provider's own limit)"
    )
    bulk_poll_s: float = Field(30.0, gt=0, le=3600, description="First poll of a provider batch after submitting it")
    bulk_poll_max_s: float = Field(600.0, gt=0, le=86_400, description="Longest wait between two polls of a batch")
    bulk_max_resubmits: int = Field(
        2, ge=0, le=10, description="Times an expired or canceled bulk request is submitted again"
    )

    # Webhooks (core/webhooks.py, workers/webhooks.py): a job's final result POSTed to its
    # callback_url, signed. Producers and workers both need the secret and the allow-list.
    webhook_secret: SecretStr | None = Field(
        None, description="Key of every webhook's HMAC-SHA256 signature (unset: a callback_url is refused)"
    )
    webhook_previous_secret: SecretStr | None = Field(
        None,
        description="While a secret is rotated, the one it replaces: each webhook is signed with both, so "
        "receivers still holding it keep verifying",
    )
    webhook_allow: str = Field(
        "",
        description="Where callbacks may go, comma-separated: host names, *.domain, addresses, networks (CIDR), "
        "or * for any public address",
    )
    webhook_timeout_s: float = Field(10.0, gt=0, le=300, description="Timeout of one webhook POST")
    webhook_attempts: int = Field(8, ge=1, le=50, description="Attempts at one webhook before it is a dead letter")
    webhook_backoff_s: float = Field(
        5.0, gt=0, le=3600, description="First wait between webhook attempts; doubles each time, full jitter"
    )

    # Prometheus metrics (workers/metrics.py): off unless a port is given.
    metrics_port: int | None = Field(
        None, ge=1, le=65535, description="Port of a worker's Prometheus metrics endpoint (unset: no endpoint)"
    )
    metrics_address: str = Field(
        "127.0.0.1",
        description="Address the metrics endpoints listen on (0.0.0.0 to let a Prometheus on another host scrape)",
    )

    # The human-review inbox (inbox/, `vetq inbox`): items in a database, fed from a Redis stream.
    inbox: bool = Field(False, description="Workers hand each needs_review result to the human-review inbox (on/off)")
    inbox_review_verdicts: bool = Field(
        False, description="With VETQ_INBOX: workers hand every review job's verdict to the inbox too"
    )
    inbox_url: str | None = Field(
        None,
        description="The inbox's database: postgresql://user:password@host/db for a fleet (unset: SQLite under "
        "VETQ_HOME)",
    )
    inbox_lease_s: int = Field(
        900, ge=10, le=86_400, description="How long a reviewer's claim on an inbox item lasts unless renewed"
    )

    log_level: str = Field(
        "INFO", description="DEBUG, INFO, WARNING or ERROR (unset: WARNING for one-shot commands and the MCP server)"
    )

    @field_validator("generator", "critic", "reviewer")
    @classmethod
    def _model_spec(cls, value: str) -> str:
        try:
            ModelSpec.parse(value)
        except ConfigError as exc:
            raise ValueError(exc.message) from None
        return value

    @field_validator(
        "field_threshold",
        "overall_threshold",
        "blindness_leak",
        "blindness_warn",
        "provider_timeout_s",
        "pdf_timeout_s",
        "ocr_min_confidence",
        "bulk_tick_s",
        "bulk_flush_age_s",
        "bulk_poll_s",
        "bulk_poll_max_s",
        "webhook_timeout_s",
        "webhook_backoff_s",
    )
    @classmethod
    def _finite(cls, value: float) -> float:
        if not math.isfinite(value):
            raise ValueError("must be a finite number")
        return value

    @field_validator("ocr")
    @classmethod
    def _ocr(cls, value: str) -> str:
        if value.strip().lower() not in ("auto", "off"):
            raise ValueError("must be auto or off")
        return value.strip().lower()

    @field_validator("ocr_lang")
    @classmethod
    def _ocr_lang(cls, value: str) -> str:
        if not re.fullmatch(r"[A-Za-z0-9_]+(\+[A-Za-z0-9_]+)*", value.strip()):
            raise ValueError("must be Tesseract language codes joined by +, e.g. eng or eng+deu")
        return value.strip()

    @field_validator("limits")
    @classmethod
    def _limits(cls, value: str) -> str:
        from vetq.core.llm.limits import parse_limits

        return _parsed_by(parse_limits, "VETQ_LIMITS", value)

    @field_validator("tenant_limits")
    @classmethod
    def _tenant_limits(cls, value: str) -> str:
        from vetq.core.tenants import ENV_VAR, parse_tenant_limits

        return _parsed_by(parse_tenant_limits, ENV_VAR, value)

    @field_validator("prices", mode="before")
    @classmethod
    def _no_price_file(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("prices")
    @classmethod
    def _prices(cls, value: Path | None) -> Path | None:
        from vetq.core.llm.prices import ENV_VAR, load_prices

        return _parsed_by(load_prices, ENV_VAR, value)

    @field_validator("webhook_secret", "webhook_previous_secret", mode="before")
    @classmethod
    def _no_webhook_secret(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("webhook_secret", "webhook_previous_secret")
    @classmethod
    def _webhook_secret(cls, value: SecretStr | None) -> SecretStr | None:
        from vetq.core.webhooks import MIN_SECRET_CHARS

        # The message never repeats the value.
        if value is not None and len(value.get_secret_value()) < MIN_SECRET_CHARS:
            raise ValueError(f"must be at least {MIN_SECRET_CHARS} characters (e.g. `openssl rand -hex 32`)")
        return value

    @field_validator("webhook_allow")
    @classmethod
    def _webhook_allow(cls, value: str) -> str:
        from vetq.core.webhooks import AllowList

        AllowList.parse(value)  # a ValueError names the entry
        return value

    @field_validator("field_thresholds", mode="before")
    @classmethod
    def _no_thresholds_file(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("field_thresholds")
    @classmethod
    def _thresholds(cls, value: Path | None) -> Path | None:
        from vetq.core.extraction.thresholds import ENV_VAR, load_thresholds

        return _parsed_by(load_thresholds, ENV_VAR, value)

    @field_validator("metrics_port", mode="before")
    @classmethod
    def _no_metrics_port(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("metrics_address")
    @classmethod
    def _metrics_address(cls, value: str) -> str:
        import ipaddress

        value = value.strip()
        try:
            ipaddress.ip_address(value)
        except ValueError:
            if not re.fullmatch(r"[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?", value):
                raise ValueError("must be an IP address or a host name, e.g. 127.0.0.1 or 0.0.0.0") from None
        return value

    @field_validator("inbox_url", mode="before")
    @classmethod
    def _no_inbox_url(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("inbox_url")
    @classmethod
    def _inbox_url(cls, value: str | None) -> str | None:
        return check_inbox_url(value) if value else None

    @field_validator("redis_url")
    @classmethod
    def _redis_url(cls, value: str | None) -> str | None:
        return check_redis_url(value) if value else None

    @field_validator("log_level")
    @classmethod
    def _level(cls, value: str) -> str:
        if value.upper() not in LOG_LEVELS:
            raise ValueError("must be DEBUG, INFO, WARNING or ERROR")
        return value.upper()

    @model_validator(mode="after")
    def _visibility_default(self) -> VetqSettings:
        if self.visibility_timeout_s is None:
            self.visibility_timeout_s = self.task_time_limit_s * 2 + 60
        return self

    @model_validator(mode="after")
    def _previous_secret_beside_one(self) -> VetqSettings:
        if self.webhook_previous_secret is not None and self.webhook_secret is None:
            raise ValueError(
                "VETQ_WEBHOOK_PREVIOUS_SECRET is the secret being replaced: it needs VETQ_WEBHOOK_SECRET, the new one"
            )
        return self

    def webhook_secrets(self) -> list[str]:
        """The keys a webhook is signed with: the secret, then the one it replaces while
        that is still set."""
        return [s.get_secret_value() for s in (self.webhook_secret, self.webhook_previous_secret) if s is not None]

    def schema_limits(self) -> SchemaLimits:
        from vetq.core.schemas.compiled import SchemaLimits

        return SchemaLimits(
            max_fields=self.schema_max_fields,
            max_depth=self.schema_max_depth,
            max_list_items=self.schema_max_list_items,
            max_bytes=self.schema_max_bytes,
        )

    def convert_options(self) -> ConvertOptions:
        """How a worker converts a PDF (core.documents.pdf), from these settings."""
        from vetq.core.documents.pdf import ConvertOptions

        return ConvertOptions(
            max_pages=self.max_pdf_pages, ocr=self.ocr, ocr_lang=self.ocr_lang, timeout_s=self.pdf_timeout_s
        )

    def render_options(self) -> RenderOptions:
        """How the inbox draws a PDF item's pages (core.documents.pdf.render): within the
        page and time limits a worker converts it with."""
        from vetq.core.documents.pdf import RenderOptions

        return RenderOptions(max_pages=self.max_pdf_pages, timeout_s=self.pdf_timeout_s)

    def price_table(self) -> PriceTable:
        """The shipped prices with VETQ_PRICES's entries replacing or adding to them."""
        from vetq.core.llm.prices import load_prices

        return load_prices(self.prices)

    def webhook_allow_list(self) -> AllowList:
        from vetq.core.webhooks import AllowList

        return AllowList.parse(self.webhook_allow)

    def inbox_database_url(self) -> str:
        """The inbox's SQLAlchemy URL: VETQ_INBOX_URL with psycopg (v3) as the PostgreSQL
        driver, or a SQLite file under VETQ_HOME."""
        if self.inbox_url is None:
            return f"sqlite:///{Path(self.home) / 'inbox.sqlite3'}"
        scheme, rest = self.inbox_url.split("://", 1)
        if scheme.lower() in ("postgres", "postgresql"):
            return f"postgresql+psycopg://{rest}"
        return self.inbox_url

    def threshold_table(self) -> ThresholdTable:
        """VETQ_FIELD_THRESHOLDS's per-schema and per-field thresholds (empty when unset)."""
        from vetq.core.extraction.thresholds import load_thresholds

        return load_thresholds(self.field_thresholds)

    def tenant_table(self) -> TenantLimits:
        """VETQ_TENANT_LIMITS, parsed (core.tenants)."""
        from vetq.core.tenants import parse_tenant_limits

        return parse_tenant_limits(self.tenant_limits)

    def spec(self, role: str) -> ModelSpec:
        return ModelSpec.parse(getattr(self, role), variable=variable_of(role))

    def log_level_of(self, *, quiet: bool) -> str:
        """VETQ_LOG_LEVEL when it is set; else INFO, or QUIET_LOG_LEVEL for a quiet entry point."""
        if quiet and "log_level" not in self.model_fields_set:
            return QUIET_LOG_LEVEL
        return self.log_level


def variable_of(field: str) -> str:
    """The environment variable of a setting: VETQ_ and its name in capitals."""
    if field not in VetqSettings.model_fields:
        raise KeyError(f"no setting {field!r}")
    return f"{VetqSettings.model_config.get('env_prefix', '')}{field}".upper()


def raw_value(field: str, environ: Mapping[str, str] | None = None) -> str | None:
    """One setting's variable as written (None when unset), read as pydantic-settings
    reads it (the name in any case), without validating the others. Only for what must
    work however the rest is configured: the log level of an entry point that starts
    anyway, a harness deciding how to run before it loads the settings. Everything
    else reads load_settings()."""
    name = variable_of(field)
    env = os.environ if environ is None else environ
    if name in env:
        return env[name]
    return next((value for key, value in env.items() if key.upper() == name), None)


def as_environment(settings: VetqSettings) -> dict[str, str]:
    """The VETQ_ variables that give another process these settings (a worker the
    embedded default starts for a client whose settings were built in code). Unset
    fields are left out; the log level stays the environment's, so a worker started
    for a one-shot command is as quiet as the command."""
    environment = {}
    for name in VetqSettings.model_fields:
        value = getattr(settings, name)
        if value is None or name == "log_level":
            continue
        if isinstance(value, bool):
            text = "true" if value else "false"
        elif isinstance(value, SecretStr):
            text = value.get_secret_value()
        elif isinstance(value, list | dict):
            text = json.dumps(value)
        else:
            text = str(value)
        environment[variable_of(name)] = text
    environment[variable_of("log_level")] = log_level_from_environment(quiet=True)
    return environment


def log_level_from_environment(*, quiet: bool, environ: Mapping[str, str] | None = None) -> str:
    """VETQ_LOG_LEVEL alone, for an entry point that must start whatever else is
    misconfigured (the MCP server, which fails calls rather than its start; logging
    configured without a level): a malformed value gives the default instead of
    stopping the process."""
    value = (raw_value("log_level", environ) or "").upper()
    if value in LOG_LEVELS:
        return value
    return QUIET_LOG_LEVEL if quiet else str(VetqSettings.model_fields["log_level"].default)


REDIS_URL_SCHEMES = ("redis", "rediss", "unix")


def check_redis_url(url: str) -> str:
    """`url` if it is a URL redis-py can open, else ValueError saying what to write. The
    message never repeats the URL: it may hold a password."""
    from urllib.parse import urlsplit

    scheme = urlsplit(url.strip()).scheme.lower() if isinstance(url, str) else ""
    if scheme not in REDIS_URL_SCHEMES:
        found = f"one starting {scheme}://" if scheme else "a value without a scheme"
        raise ValueError(f"must be a redis://, rediss:// or unix:// URL (e.g. redis://host:6379/0), got {found}")
    return url.strip()


INBOX_URL_SCHEMES = ("postgresql", "postgres", "postgresql+psycopg", "sqlite")


def check_inbox_url(url: str) -> str:
    """`url` if it names a database the inbox runs on, else ValueError saying what to
    write. The message never repeats the URL: it may hold a password."""
    from urllib.parse import urlsplit

    scheme = urlsplit(url.strip()).scheme.lower() if isinstance(url, str) else ""
    if scheme not in INBOX_URL_SCHEMES or "://" not in url:
        found = f"one starting {scheme}://" if scheme else "a value without a scheme"
        raise ValueError(
            "must be a postgresql:// URL (e.g. postgresql://vetq:secret@db:5432/vetq) or sqlite:////path/inbox.db, "
            f"got {found}"
        )
    return url.strip()


def load_settings(**overrides: object) -> VetqSettings:
    """Settings from the environment; a bad value raises ConfigError naming it."""
    try:
        return VetqSettings(**overrides)  # type: ignore[arg-type]
    except SettingsError as exc:
        # A value pydantic-settings could not even decode (a list setting that is not JSON).
        field = re.search(r'field "(\w+)"', str(exc))
        name = f"VETQ_{field.group(1).upper()}" if field else "a VETQ_ setting"
        raise ConfigError(
            f'invalid configuration: {name}: not valid JSON; write a JSON list such as ["json"]'
        ) from None
    except ValidationError as exc:
        problems = explain(exc, limit=None, root="VETQ settings", path=_variable_name)
        raise ConfigError(f"invalid configuration: {problems}") from None


def _variable_name(loc: tuple[int | str, ...]) -> str:
    return "VETQ_" + "_".join(str(part) for part in loc).upper()
