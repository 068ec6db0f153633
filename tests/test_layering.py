"""The arrows between the packages hold at import time: a producer pulls in no worker
code and no provider SDK, and core imports no Celery, Redis or SDK."""

from __future__ import annotations

import subprocess
import sys


def modules_after(statement: str) -> set[str]:
    code = f"import sys; {statement}; print('\\n'.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return set(out.split())


def test_producer_imports_no_worker_code_and_no_sdk():
    loaded = modules_after("import api_client; from api_client import Client; import api_client.cli")
    assert not {m for m in loaded if m == "workers" or m.startswith("workers.")}
    assert not {m for m in loaded if m.split(".")[0] in ("anthropic", "openai", "mcp", "eval")}


def test_producer_checks_documents_without_importing_the_pipeline():
    loaded = modules_after(
        "import api_client; from api_client import Client; import api_client.cli, api_client.batch, "
        "api_client.mcp_server; from core.extraction.document import check_document"
    )
    worker_side = {
        "core.extraction.pipeline",
        "core.extraction.generator",
        "core.extraction.critic",
        "core.extraction.heuristics",
        "core.llm.factory",
    }
    assert not loaded & worker_side
    assert "api_client.client" in loaded  # the statement really imported the producer


def test_core_imports_no_celery_redis_or_sdk():
    loaded = modules_after(
        "import core.extraction.pipeline, core.review.service, core.llm.providers, core.llm.factory, core.queue"
    )
    forbidden = {"celery", "kombu", "redis", "anthropic", "openai", "workers", "api_client"}
    assert not {m for m in loaded if m.split(".")[0] in forbidden}


def test_the_ops_verbs_are_the_admins_not_the_producers():
    from api_client import Admin, Client

    ops = ("workers", "dead_letters", "export_telemetry")
    assert all(callable(getattr(Admin, verb, None)) for verb in ops)
    assert not [verb for verb in ops if hasattr(Client, verb)]


def test_progress_bar_draws_only_on_a_terminal():
    import io

    from api_client.batch import Progress

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
    assert pipe.getvalue() == ""


def test_progress_counts_lines_advanced_before_the_bar_starts():
    import io

    from api_client.batch import Progress

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
