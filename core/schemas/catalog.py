"""Where schemas come from: the built-in ones shipped in this package, a file a user
wrote (YAML or JSON), an inline mapping, or a pydantic class. Every way ends in one
compile_schema, so a schema means the same wherever it was written."""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from importlib import resources
from pathlib import Path
from threading import Lock
from typing import Any

from vetq.core.schemas.compiled import CompiledSchema, SchemaInvalidError, SchemaLimits, compile_schema

__all__ = [
    "DEFAULT_SCHEMA",
    "MAX_SCHEMA_FILE_BYTES",
    "builtin",
    "builtin_names",
    "load",
    "parse_document_text",
]

DEFAULT_SCHEMA = "invoice"
MAX_SCHEMA_FILE_BYTES = 256 * 1024
_BUILTIN_PACKAGE = "vetq.core.schemas"


@cache
def builtin_names() -> tuple[str, ...]:
    folder = resources.files(_BUILTIN_PACKAGE).joinpath("builtin")
    return tuple(sorted(p.name.removesuffix(".yaml") for p in folder.iterdir() if p.name.endswith(".yaml")))


# Compiled once per process: a worker's threads that all start a job at once would
# otherwise each compile the same schema (~50-200 ms of CPU each under one interpreter
# lock: a 250-thread worker's first burst spent 20 s of CPU doing it).
_builtins: dict[str, CompiledSchema] = {}
_compiling = Lock()


def builtin(name: str) -> CompiledSchema:
    """A built-in schema by name; SchemaInvalidError naming the ones there are."""
    compiled = _builtins.get(name)
    if compiled is None:
        with _compiling:
            compiled = _builtins.get(name)
            if compiled is None:
                compiled = _builtins[name] = _compile_builtin(name)
    return compiled


def _compile_builtin(name: str) -> CompiledSchema:
    if name not in builtin_names():
        raise SchemaInvalidError(f"no built-in schema {name!r} (built in: {', '.join(builtin_names())})")
    text = resources.files(_BUILTIN_PACKAGE).joinpath("builtin", f"{name}.yaml").read_text(encoding="utf-8")
    compiled = compile_schema(parse_document_text(text, where=f"built-in schema {name}"))
    if compiled.name != name:  # pragma: no cover - a packaging mistake, caught by the tests
        raise SchemaInvalidError(f"built-in schema file {name}.yaml names itself {compiled.name!r}")
    return compiled


def parse_document_text(text: str, *, where: str) -> Any:
    """A schema document's text as data: JSON, or YAML (safe loader: plain data only)."""
    stripped = text.lstrip()
    if stripped.startswith("{"):
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise SchemaInvalidError(f"{where} is not valid JSON: {exc.msg} at line {exc.lineno}") from None
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}" if mark is not None else ""
        raise SchemaInvalidError(f"{where} is not valid YAML{at}: {getattr(exc, 'problem', None) or exc}") from None


def load(source: str | Path | Mapping[str, Any] | type, limits: SchemaLimits | None = None) -> CompiledSchema:
    """A schema from a built-in name, a file path (.yaml, .yml, .json), a mapping (the
    document itself) or a pydantic class carrying the field annotations."""
    if isinstance(source, type):
        from vetq.core.schemas.from_pydantic import document_of

        return compile_schema(document_of(source), limits)
    if isinstance(source, Mapping):
        return compile_schema(dict(source), limits)
    if isinstance(source, Path) or looks_like_path(str(source)):
        return compile_schema(_read_file(Path(source)), limits)
    return builtin(str(source))


def looks_like_path(source: str) -> bool:
    """A --schema argument names a file when it has a schema file's suffix or a path
    separator; otherwise it is a built-in's name."""
    return source.endswith((".yaml", ".yml", ".json")) or "/" in source or "\\" in source


def _read_file(path: Path) -> Any:
    try:
        size = path.stat().st_size
        if size > MAX_SCHEMA_FILE_BYTES:
            raise SchemaInvalidError(f"schema file {path} is {size} bytes; the limit is {MAX_SCHEMA_FILE_BYTES}")
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SchemaInvalidError(f"no schema file {path}") from None
    except UnicodeDecodeError:
        raise SchemaInvalidError(f"schema file {path} is not UTF-8 text") from None
    except OSError as exc:
        raise SchemaInvalidError(f"cannot read schema file {path}: {exc.strerror}") from None
    return parse_document_text(text, where=f"schema file {path}")
