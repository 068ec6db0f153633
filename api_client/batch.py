"""JSONL batches for the CLI: parse each line into a request (or an error line that
keeps the batch going) and write results back in input order as they land."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from typing import IO, Any

from core.errors import ErrorCode

MAX_LINE_CHARS = 10_000_000


def error_line(code: ErrorCode, message: str, line_id: Any = None) -> dict[str, Any]:
    line: dict[str, Any] = {"status": "error", "error_code": code.value, "error_message": message}
    if line_id is not None:
        line = {"id": line_id, **line}
    return line


def parse_batch_line(line: str, *, kind: str, number: int) -> tuple[Any, dict[str, Any]]:
    """(id, request dict) for a good line; (id, error line) for a bad one, marked by
    its "status": "error". Never raises."""
    if len(line) > MAX_LINE_CHARS:
        return None, error_line(ErrorCode.INVALID_INPUT, f"line {number}: longer than {MAX_LINE_CHARS:,} characters")
    try:
        obj = json.loads(line, parse_constant=_refuse_constant)
    except (ValueError, RecursionError) as exc:
        return None, error_line(ErrorCode.INVALID_INPUT, f"line {number}: not valid JSON ({str(exc)[:80]})")
    if not isinstance(obj, dict):
        return None, error_line(ErrorCode.INVALID_INPUT, f"line {number}: expected a JSON object with \"text\"")
    line_id = obj.pop("id", None)
    if line_id is not None and (isinstance(line_id, bool) or not isinstance(line_id, (str, int))):
        line_id = str(line_id)[:200]
    if not isinstance(obj.get("text"), str):
        return line_id, error_line(ErrorCode.INVALID_INPUT, f"line {number}: \"text\" must be a string", line_id)
    if kind == "validate" and not isinstance(obj.get("data"), dict):
        return line_id, error_line(ErrorCode.INVALID_INPUT, f"line {number}: \"data\" must be a JSON object", line_id)
    if kind == "extract" and "data" in obj:
        return line_id, error_line(ErrorCode.INVALID_INPUT, f"line {number}: \"data\" belongs to validate, not extract", line_id)
    return line_id, {**obj, "kind": kind}


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def read_lines(stream: IO[str]) -> Iterator[tuple[int, str]]:
    for number, line in enumerate(stream, start=1):
        if line.strip():
            yield number, line


class Progress:
    """A one-line progress bar on stderr, drawn only when stderr is a terminal."""

    def __init__(self, total: int, stream: IO[str] | None = None) -> None:
        self.total = total
        self.stream = stream or sys.stderr
        self.enabled = bool(getattr(self.stream, "isatty", lambda: False)()) and total > 1
        self.done = 0

    def advance(self) -> None:
        self.done += 1
        if self.enabled:
            width = 30
            filled = int(width * self.done / max(1, self.total))
            self.stream.write(f"\r[{'#' * filled}{' ' * (width - filled)}] {self.done}/{self.total}")
            if self.done >= self.total:
                self.stream.write("\n")
            self.stream.flush()
