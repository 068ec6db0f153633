"""One reader of VETQ_*: core/settings.py. Everything else takes its values from a
VetqSettings (or, where it must start whatever else is wrong, from the settings
module's own readers), so each default is stated once."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from vetq.core.errors import ConfigError
from vetq.core.settings import (
    QUIET_LOG_LEVEL,
    VetqSettings,
    load_settings,
    log_level_from_environment,
    raw_value,
    variable_of,
)

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ("core", "workers", "api_client", "eval", "inbox")
READER = ROOT / "core" / "settings.py"


def _is_os_environ(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and node.attr == "environ"
        and isinstance(node.value, ast.Name)
        and node.value.id == "os"
    ) or (isinstance(node, ast.Name) and node.id == "environ")


def vetq_environment_reads(source: str) -> list[str]:
    """Each place `source` reads a VETQ_ variable from the process environment:
    `os.environ.get(...)`, `os.getenv(...)`, `os.environ[...]` read, `... in os.environ`,
    also through a name bound to os.environ (`env = os.environ if e is None else e`)
    and with the variable's name in a module constant or an f-string. Writes (setting
    a child's or this process's variables, setdefault, pop) are not reads; a name the
    code builds at run time from something else cannot be seen here."""
    tree = ast.parse(source)
    constants = {
        target.id: node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    aliases = {
        target.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign) and any(_is_os_environ(n) for n in ast.walk(node.value))
        for target in node.targets
        if isinstance(target, ast.Name)
    }

    def environ(node: ast.AST) -> bool:
        return _is_os_environ(node) or (isinstance(node, ast.Name) and node.id in aliases)

    def vetq_name(node: ast.AST) -> bool:
        if isinstance(node, ast.Name):
            text = constants.get(node.id)
        elif isinstance(node, ast.Constant):
            text = node.value
        elif isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant):
            text = node.values[0].value
        else:
            text = None
        return isinstance(text, str) and text.upper().startswith("VETQ_")

    def reads_one(node: ast.AST) -> bool:
        if isinstance(node, ast.Call) and node.args and vetq_name(node.args[0]):
            func = node.func
            if isinstance(func, ast.Attribute):
                return (func.attr == "get" and environ(func.value)) or func.attr == "getenv"
            return isinstance(func, ast.Name) and func.id == "getenv"
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            return environ(node.value) and vetq_name(node.slice)
        if isinstance(node, ast.Compare) and vetq_name(node.left):
            membership = any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops)
            return membership and any(environ(c) for c in node.comparators)
        return False

    return [f"line {node.lineno}: {ast.unparse(node)}" for node in ast.walk(tree) if reads_one(node)]


PLANTED_READS = """
import os
from os import environ, getenv

ENV_VAR = "VETQ_LIMITS"

def limits(mapping=None):
    env = os.environ if mapping is None else mapping
    return env.get(ENV_VAR)

def cli_level():
    return os.environ.get("VETQ_LOG_LEVEL", "WARNING")

def home():
    return os.getenv("VETQ_HOME") or getenv("VETQ_REDIS_URL")

def remote():
    return "VETQ_REDIS_URL" in os.environ or os.environ["VETQ_CRITIC"]

def one(name):
    return environ.get(f"VETQ_{name}")
"""

PLANTED_WRITES = """
import os

def configure(url, fixture):
    os.environ["VETQ_GENERATOR"] = f"replay:{fixture}"
    os.environ.setdefault("VETQ_LOG_LEVEL", "WARNING")
    os.environ.pop("VETQ_LIMITS", None)
    child = {**os.environ, "VETQ_REDIS_URL": url}
    return child, os.environ.get("ANTHROPIC_API_KEY"), {"VETQ_HOME": "x"}.get("VETQ_HOME")
"""


def test_the_checker_finds_each_way_of_reading_a_vetq_variable():
    reads = vetq_environment_reads(PLANTED_READS)
    assert len(reads) == 7, reads
    for text in ("ENV_VAR", "VETQ_LOG_LEVEL", "VETQ_HOME", "VETQ_REDIS_URL' in", "VETQ_CRITIC", "f'VETQ_{name}'"):
        assert any(text in read for read in reads), (text, reads)


def test_the_checker_passes_writes_and_other_variables():
    assert vetq_environment_reads(PLANTED_WRITES) == []


def test_only_the_settings_module_reads_vetq_variables():
    found = {}
    for package in SHIPPED:
        for path in sorted((ROOT / package).rglob("*.py")):
            if path != READER:
                reads = vetq_environment_reads(path.read_text(encoding="utf-8"))
                if reads:
                    found[str(path.relative_to(ROOT))] = reads
    assert found == {}, "read VETQ_ variables through core.settings"


# --------------------------------------------------------------------------- log level


def test_each_entry_point_gets_its_default_log_level(monkeypatch):
    monkeypatch.delenv("VETQ_LOG_LEVEL", raising=False)
    settings = load_settings()
    assert settings.log_level_of(quiet=False) == "INFO"
    assert settings.log_level_of(quiet=True) == QUIET_LOG_LEVEL == "WARNING"
    monkeypatch.setenv("VETQ_LOG_LEVEL", "debug")
    settings = load_settings()
    assert settings.log_level_of(quiet=True) == settings.log_level_of(quiet=False) == "DEBUG"


def test_the_log_level_alone_falls_back_instead_of_failing():
    assert log_level_from_environment(quiet=True, environ={}) == "WARNING"
    assert log_level_from_environment(quiet=False, environ={}) == "INFO"
    assert log_level_from_environment(quiet=True, environ={"VETQ_LOG_LEVEL": "error"}) == "ERROR"
    # pydantic-settings matches the name in any case; so does this reader.
    assert log_level_from_environment(quiet=True, environ={"vetq_log_level": "DEBUG"}) == "DEBUG"
    for malformed in ("loud", "", " INFO"):
        assert log_level_from_environment(quiet=True, environ={"VETQ_LOG_LEVEL": malformed}) == "WARNING"
        with pytest.raises(ConfigError, match="VETQ_LOG_LEVEL"):
            load_settings(log_level=malformed)


@pytest.mark.processes
def test_logging_without_a_level_takes_it_from_the_settings():
    code = "import logging; from core.logging import configure_logging; configure_logging(); print(logging.getLogger().level)"
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith("VETQ_")}
    for value, level in (("ERROR", "40"), ("bogus", "20"), (None, "20")):
        run_env = env if value is None else {**env, "VETQ_LOG_LEVEL": value}
        out = subprocess.run(
            [sys.executable, "-c", code], env=run_env, cwd=ROOT, capture_output=True, text=True, check=True
        )
        assert out.stdout.strip() == level, (value, out.stderr)


def test_variables_are_named_from_the_settings_fields():
    assert variable_of("log_level") == "VETQ_LOG_LEVEL"
    assert raw_value("redis_url", {"VETQ_REDIS_URL": "redis://h"}) == "redis://h"
    assert raw_value("redis_url", {}) is None
    with pytest.raises(KeyError):
        variable_of("no_such_setting")


# --------------------------------------------------------------------------- MCP floor


def test_the_mcp_floor_is_the_settings_thresholds(monkeypatch):
    from vetq.api_client.mcp_server import read_floor

    monkeypatch.delenv("VETQ_FIELD_THRESHOLD", raising=False)
    monkeypatch.delenv("VETQ_OVERALL_THRESHOLD", raising=False)
    defaults = VetqSettings.model_fields
    assert read_floor() == {
        "field_threshold": defaults["field_threshold"].default,
        "overall_threshold": defaults["overall_threshold"].default,
    }
    monkeypatch.setenv("VETQ_OVERALL_THRESHOLD", "0.9")
    assert read_floor()["overall_threshold"] == 0.9
    assert read_floor(load_settings(field_threshold=0.8)) == {"field_threshold": 0.8, "overall_threshold": 0.9}
    for malformed in ("nan", "abc", "1.5"):
        monkeypatch.setenv("VETQ_FIELD_THRESHOLD", malformed)
        with pytest.raises(ConfigError, match="VETQ_FIELD_THRESHOLD"):
            read_floor()


def test_settings_built_in_code_reach_another_process_whole(monkeypatch, tmp_path):
    from vetq.core.settings import as_environment, load_settings

    for name in list(os.environ):
        if name.startswith("VETQ_"):
            monkeypatch.delenv(name)
    built = load_settings(
        home=tmp_path,
        generator="openai:gpt-5-mini",
        field_threshold=0.8,
        telemetry=True,
        accept_content=["json"],
        result_ttl_s=3600,
        collected_result_ttl_s=0,
    )
    for name, value in as_environment(built).items():
        monkeypatch.setenv(name, value)
    read_back = load_settings()
    assert read_back.model_dump(exclude={"log_level"}) == built.model_dump(exclude={"log_level"})
    assert os.environ["VETQ_LOG_LEVEL"] == "WARNING"  # a quiet worker unless the environment says otherwise
