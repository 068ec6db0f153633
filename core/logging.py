"""structlog, configured once: JSON lines on stderr with ISO timestamps, the level,
the event and whatever is bound in contextvars (trace_id, job_id, stage, ...).

Log calls pass ids, counts and durations, never document text. A redaction
processor masks anything that looks like a secret in case one slips through."""

from __future__ import annotations

import logging
import os
import re
import sys
from collections.abc import MutableMapping
from typing import Any

import structlog

_configured = False

_SECRET_PATTERNS = [
    re.compile(r"sk-(?:ant-)?[A-Za-z0-9_\-]{12,}"),
    re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._\-]{8,}"),
]
_SECRET_ENV = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN")
_MASK = "[REDACTED]"
# Secrets a process holds from its settings rather than from the variables above (the
# webhook signing key): masked wherever they would appear (mask_secret).
_HELD_SECRETS: set[str] = set()
# A URL inside free text: a scheme, then anything up to whitespace or a quote.
_URL_IN_TEXT = re.compile(r"(?i)\b[a-z][a-z0-9+.\-]*://[^\s'\"<>]*")
_QUERY_PARAMETER = re.compile(r"([^&;=#]*)(=?)([^&;#]*)")
# Query parameters redis-py turns into a password (names are compared percent-decoded).
_SECRET_QUERY_NAMES = frozenset({"password"})


def redact_url(url: str) -> str:
    """`url` with its password masked wherever redis-py would read one: the userinfo
    (`redis://user:pw@host`, `rediss://:pw@host`, `unix://:pw@/path`, a password
    holding `@`) and the query (`?password=pw`, `&password=`, `?pass%77ord=`)."""
    from urllib.parse import unquote_plus

    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    end = min((i for i in (rest.find(c) for c in "/?#") if i >= 0), default=len(rest))
    netloc, after = rest[:end], rest[end:]
    userinfo, at, hostport = netloc.rpartition("@")
    if at and ":" in userinfo:
        netloc = f"{userinfo.partition(':')[0]}:{_MASK}@{hostport}"
    path, question, query = after.partition("?")
    if question:
        query, hash_, fragment = query.partition("#")

        def mask(match: re.Match[str]) -> str:
            name, equals, value = match.groups()
            if equals and value and unquote_plus(name).strip().lower() in _SECRET_QUERY_NAMES:
                return f"{name}={_MASK}"
            return match.group(0)

        after = f"{path}?{_QUERY_PARAMETER.sub(mask, query)}{hash_}{fragment}"
    return f"{scheme}://{netloc}{after}"


def mask_secret(value: str) -> None:
    """Mask `value` in every log line, dead letter and error text from now on."""
    if len(value) >= 6:
        _HELD_SECRETS.add(value)


def redact_text(text: str) -> str:
    for name in _SECRET_ENV:
        value = os.environ.get(name)
        if value and len(value) >= 6:
            text = text.replace(value, _MASK)
    for value in _HELD_SECRETS:
        text = text.replace(value, _MASK)
    text = _URL_IN_TEXT.sub(lambda m: redact_url(m.group(0)), text)
    for pattern in _SECRET_PATTERNS:
        if pattern.groups >= 2:
            text = pattern.sub(lambda m: f"{m.group(1)}[REDACTED]{m.group(2)}", text)
        elif pattern.groups == 1:
            text = pattern.sub(lambda m: f"{m.group(1)}[REDACTED]", text)
        else:
            text = pattern.sub("[REDACTED]", text)
    return text


def _redact_value(value: Any) -> Any:
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        return {k: _redact_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_redact_value(v) for v in value]
    return value


def redact_secrets(_logger: Any, _method: str, event_dict: MutableMapping[str, Any]) -> dict[str, Any]:
    return {key: _redact_value(value) for key, value in event_dict.items()}


# Celery's own task lines format a job's arguments and result from a context dict
# ("Task vetq.extract[...] succeeded in 2.0s: {'data': {...}}"): the document and the
# values extracted from it. These loggers log such lines; the keys are Celery's.
CELERY_TASK_LOGGERS = ("celery.app.trace", "celery.worker.strategy", "celery.worker.request")
TASK_DATA_KEYS = ("return_value", "args", "kwargs")


# Celery's success line ("Task %(name)s[%(id)s] succeeded in %(runtime)ss:
# %(return_value)s", celery.app.trace.LOG_SUCCESS), told by its format.
_SUCCESS_LINE_FIELD = "%(return_value)s"


class TaskDataFilter(logging.Filter):
    """Masks a job's arguments and result in Celery's task log records before any
    handler formats them; ids, task names, runtimes and exceptions are kept. Celery's
    success line is dropped whole: vetq's `job_finished` (workers/signals.py) is a
    job's one outcome line, with its state, status, error code and run time, and the
    line's only other content is the (masked) result."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str) and _SUCCESS_LINE_FIELD in record.msg:
            return False
        if isinstance(record.args, dict) and any(key in record.args for key in TASK_DATA_KEYS):
            record.args = _without_task_data(record.args)
        data = getattr(record, "data", None)  # the same context, for custom handlers
        if isinstance(data, dict) and any(key in data for key in TASK_DATA_KEYS):
            record.data = _without_task_data(data)
        return True


def _without_task_data(context: dict[str, Any]) -> dict[str, Any]:
    return {key: ("[hidden]" if key in TASK_DATA_KEYS else value) for key, value in context.items()}


def hide_task_data() -> None:
    """Install TaskDataFilter on Celery's task loggers (once; a worker calls this at
    start, before it forks or starts pool threads)."""
    for name in CELERY_TASK_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, TaskDataFilter) for f in logger.filters):
            logger.addFilter(TaskDataFilter())


class _CurrentStderr:
    """Writes to whatever sys.stderr is at the moment of writing, so a redirected or
    replaced stderr (tests, daemons) never leaves the logger holding a closed file."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


def configure_logging(level: str | None = None, *, force: bool = False) -> None:
    """JSON lines on stderr at `level` (an entry point passes the one its settings
    give); without one, at VETQ_LOG_LEVEL or a worker's INFO."""
    global _configured
    if _configured and not force:
        return
    if not level:
        from vetq.core.settings import log_level_from_environment

        level = log_level_from_environment(quiet=False)
    level_name = level.upper()
    numeric = logging.getLevelName(level_name)
    if not isinstance(numeric, int):
        numeric = logging.INFO
    shared: list[Any] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        structlog.processors.format_exc_info,
        redact_secrets,
    ]
    structlog.configure(
        processors=[*shared, structlog.processors.JSONRenderer()],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.WriteLoggerFactory(file=_CurrentStderr()),  # type: ignore[arg-type]
        cache_logger_on_first_use=False,
    )
    # Library loggers (Celery, kombu, httpx) go to stderr as the same JSON lines.
    handler = logging.StreamHandler(_CurrentStderr())
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                structlog.processors.JSONRenderer(),
            ],
            foreign_pre_chain=[*shared, structlog.stdlib.add_logger_name],
        )
    )
    root = logging.getLogger()
    root.handlers = [handler]
    root.setLevel(max(numeric, logging.INFO) if numeric < logging.INFO else numeric)
    for noisy in ("httpx", "httpcore", "anthropic", "openai"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    _configured = True


class _LibraryLogger:
    """vetq's module logger. Where structlog is configured (by a vetq entry point, or
    by the host application its own way) it logs through that configuration; where it
    is not, through the standard `logging` logger of the same name, so a library user
    who configured nothing gets nothing on stdout (structlog's own default writes
    there) and sees warnings on stderr as any library's."""

    def __init__(self, name: str | None) -> None:
        self._name = name

    def _target(self) -> Any:
        if structlog.is_configured():
            return structlog.get_logger(self._name)
        return structlog.wrap_logger(
            logging.getLogger(self._name or "vetq"),
            processors=[
                structlog.contextvars.merge_contextvars,
                structlog.processors.add_log_level,
                structlog.processors.format_exc_info,
                redact_secrets,
                structlog.processors.JSONRenderer(),
            ],
            wrapper_class=structlog.stdlib.BoundLogger,
        )

    def __getattr__(self, method: str) -> Any:
        return getattr(self._target(), method)


def get_logger(name: str | None = None) -> Any:
    """The logger every vetq module uses (see _LibraryLogger)."""
    return _LibraryLogger(name)
