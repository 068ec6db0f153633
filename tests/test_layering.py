"""The arrows between the packages hold at import time: a producer pulls in no worker
code and no provider SDK, and core imports no Celery, Redis or SDK."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


def modules_after(statement: str) -> set[str]:
    code = f"import sys; {statement}; print('\\n'.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return set(out.split())


@pytest.mark.processes
def test_producer_imports_no_worker_code_and_no_sdk():
    loaded = modules_after("import vetq.api_client; from vetq.api_client import Client; import vetq.api_client.cli")
    assert not {m for m in loaded if m == "vetq.workers" or m.startswith("vetq.workers.")}
    assert not {m for m in loaded if m.split(".")[0] in ("anthropic", "openai", "mcp")}
    assert not {m for m in loaded if m == "vetq.eval" or m.startswith("vetq.eval.")}
    # The inbox (vetq[inbox]: SQLAlchemy, Starlette) is loaded by its verbs only.
    assert not {m for m in loaded if m == "vetq.inbox" or m.startswith("vetq.inbox.")}
    assert not {m for m in loaded if m.split(".")[0] in ("sqlalchemy", "alembic", "starlette", "jinja2", "psycopg")}


@pytest.mark.processes
def test_the_workers_hand_items_to_the_inbox_without_its_database():
    """A worker appends to the inbox's stream: it imports neither the inbox nor a database."""
    loaded = modules_after("import vetq.workers.app, vetq.workers.signals, vetq.workers.tasks")
    assert "vetq.workers.signals" in loaded
    assert not {m for m in loaded if m == "vetq.inbox" or m.startswith("vetq.inbox.")}
    assert not {m for m in loaded if m.split(".")[0] in ("sqlalchemy", "alembic", "starlette", "psycopg")}


@pytest.mark.processes
def test_producer_checks_documents_without_importing_the_pipeline():
    loaded = modules_after(
        "import vetq.api_client; from vetq.api_client import Client; import vetq.api_client.cli, "
        "vetq.api_client.batch, vetq.api_client.mcp_server; from vetq.core.extraction.document import check_document"
    )
    worker_side = {
        "vetq.core.extraction.pipeline",
        "vetq.core.extraction.generator",
        "vetq.core.extraction.critic",
        "vetq.core.extraction.heuristics",
        "vetq.core.llm.factory",
    }
    assert not loaded & worker_side
    assert "vetq.api_client.client" in loaded  # the statement really imported the producer


@pytest.mark.processes
def test_core_imports_no_celery_redis_or_sdk():
    loaded = modules_after(
        "import vetq.core.extraction.pipeline, vetq.core.review.service, vetq.core.llm.providers, "
        "vetq.core.llm.factory, vetq.core.queue"
    )
    assert "vetq.core.extraction.pipeline" in loaded  # the statement really imported core
    # opentelemetry too: the vetq[otel] extra is loaded only when tracing is on (core/tracing.py).
    forbidden = {"celery", "kombu", "redis", "anthropic", "openai", "opentelemetry"}
    assert not {m for m in loaded if m.split(".")[0] in forbidden}
    assert not {
        m for m in loaded if m.split(".")[:2] in (["vetq", "workers"], ["vetq", "api_client"], ["vetq", "inbox"])
    }


def test_the_ops_verbs_are_the_admins_not_the_producers():
    from vetq.api_client import Admin, Client

    ops = ("workers", "dead_letters", "export_telemetry")
    assert all(callable(getattr(Admin, verb, None)) for verb in ops)
    assert not [verb for verb in ops if hasattr(Client, verb)]


def test_progress_bar_draws_only_on_a_terminal():
    import io

    from vetq.api_client.batch import Progress

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    tty, pipe = Terminal(), io.StringIO()
    for stream in (tty, pipe):
        with Progress(3, stream) as bar:
            for _ in range(3):
                bar.advance()
    assert "3/3" in tty.getvalue() and tty.getvalue().removesuffix("\x1b[?25h").endswith("\n")
    assert "jobs/s" in tty.getvalue() and "ETA" in tty.getvalue()
    # Off a terminal: no bar, JSON lines (the first job, then the end).
    lines = [json.loads(line) for line in pipe.getvalue().splitlines()]
    assert [(line["event"], line["done"], line["total"]) for line in lines] == [
        ("batch_progress", 1, 3),
        ("batch_progress", 3, 3),
    ]


def test_progress_off_a_terminal_is_a_json_line_at_most_every_interval():
    import io

    from vetq.api_client.batch import Progress

    now = [0.0]
    pipe = io.StringIO()
    with Progress(None, pipe, every_s=10.0, clock=lambda: now[0]) as bar:
        for second in range(1, 26):  # a job a second, the input's length unknown until the end
            now[0] = float(second)
            bar.sent(second)
            bar.advance()
        bar.set_total(25)
    lines = [json.loads(line) for line in pipe.getvalue().splitlines()]
    assert [line["done"] for line in lines] == [0, 10, 20, 25]  # a line as the first is sent, then every 10 s
    assert lines[0]["total"] is None and lines[0]["eta_s"] is None
    assert lines[-1] == {
        "event": "batch_progress",
        "done": 25,
        "submitted": 25,
        "total": 25,
        "jobs_per_s": 1.0,
        "eta_s": 0.0,
    }


def test_progress_counts_lines_advanced_before_the_bar_starts():
    import io

    from vetq.api_client.batch import Progress

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    tty = Terminal()
    bar = Progress(4, tty)
    bar.advance()  # a line refused at parsing, before any job is submitted
    with bar:
        for _ in range(3):
            bar.advance()
    assert "4/4" in tty.getvalue()


@pytest.mark.processes
def test_the_worker_app_imports_what_getaddrinfo_would_import_lazily():
    # A pool forked while a worker thread holds the lazy import's lock would leave the
    # child waiting on a copy of it at its first connection (workers/app.py says why).
    import subprocess
    import sys

    code = "import sys, vetq.workers.app; print('encodings.idna' in sys.modules)"
    assert (
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
        == "True"
    )
