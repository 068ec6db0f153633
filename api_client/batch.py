"""JSONL batches for the CLI: parse each line into a request (or an error line that
keeps the batch going) and write results back in input order as they land."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import IO, Any

from core.errors import ErrorCode, InvalidInputError
from core.results import error_result
from core.validation import json_problem, parse_json_unchecked

MAX_LINE_CHARS = 10_000_000


def error_line(code: ErrorCode, message: str, line_id: Any = None) -> dict[str, Any]:
    line = error_result(code, message)
    if line_id is not None:
        line = {"id": line_id, **line}
    return line


def parse_batch_line(line: str | bytes, *, kind: str, number: int) -> tuple[Any, dict[str, Any]]:
    """(id, request dict) for a good line; (id, error line) for a bad one, marked by
    its "status": "error". Never raises. Bytes are read by the same strict rules as
    text: UTF-8 or refused, a leading BOM ignored (core.validation.load_json)."""
    if len(line) > MAX_LINE_CHARS:
        return None, error_line(ErrorCode.INVALID_INPUT, f"line {number}: longer than {MAX_LINE_CHARS:,} characters")
    try:
        obj = parse_json_unchecked(line, what=f"line {number}")
    except InvalidInputError as exc:
        return None, error_line(exc.code, exc.message)
    if not isinstance(obj, dict):
        return None, error_line(ErrorCode.INVALID_INPUT, f'line {number}: expected a JSON object with "text"')
    problem = json_problem(obj)
    line_id = obj.pop("id", None)
    if line_id is not None and (isinstance(line_id, bool) or not isinstance(line_id, (str, int))):
        line_id = str(line_id)[:200] if problem is None else None
    if problem is not None:  # the line's id, when it has a usable one, still labels its error
        return line_id, error_line(ErrorCode.INVALID_INPUT, f"line {number}: {problem}", line_id)
    if not isinstance(obj.get("text"), str):
        return line_id, error_line(ErrorCode.INVALID_INPUT, f'line {number}: "text" must be a string', line_id)
    if kind == "validate" and not isinstance(obj.get("data"), dict):
        return line_id, error_line(ErrorCode.INVALID_INPUT, f'line {number}: "data" must be a JSON object', line_id)
    if kind == "extract" and "data" in obj:
        return line_id, error_line(
            ErrorCode.INVALID_INPUT, f'line {number}: "data" belongs to validate, not extract', line_id
        )
    return line_id, {**obj, "kind": kind}


def read_lines(stream: IO[bytes]) -> Iterator[tuple[int, bytes]]:
    """The non-blank lines of a byte stream, numbered from 1. Bytes, not text: a line
    that is not UTF-8 is refused on its own (parse_batch_line) and the batch goes on."""
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
