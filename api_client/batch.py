"""JSONL batches for the CLI: parse each line into a request (or an error line that
keeps the batch going) and write results back in input order as they land."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Iterator
from typing import IO, Any

from vetq.core.errors import ErrorCode, InvalidInputError
from vetq.core.results import error_result
from vetq.core.validation import json_problem, parse_json_unchecked

MAX_LINE_CHARS = 10_000_000
# How often a batch whose stderr is not a terminal reports its progress (a JSON line).
PROGRESS_EVERY_S = 10.0
# Room a line needs besides its document: options, data, schema, id.
LINE_OVERHEAD_CHARS = 1_000_000


def line_limit(max_pdf_bytes: int) -> int:
    """The longest line a batch takes: a text document's, or a PDF of VETQ_MAX_PDF_BYTES in base64 with its options."""
    return max(MAX_LINE_CHARS, -(-max_pdf_bytes // 3) * 4 + LINE_OVERHEAD_CHARS)


def error_line(code: ErrorCode, message: str, line_id: Any = None) -> dict[str, Any]:
    line = error_result(code, message)
    if line_id is not None:
        line = {"id": line_id, **line}
    return line


def parse_batch_line(
    line: str | bytes, *, kind: str, number: int, max_chars: int = MAX_LINE_CHARS
) -> tuple[Any, dict[str, Any]]:
    """(id, request dict) for a good line; (id, error line) for a bad one, marked by
    its "status": "error". Never raises. Bytes are read by the same strict rules as
    text: UTF-8 or refused, a leading BOM ignored (core.validation.load_json). The
    document is "text", or "pdf": a PDF file's bytes in base64 (checked for size and
    magic when submitted, converted by the worker)."""
    if len(line) > max_chars:
        return None, error_line(ErrorCode.INVALID_INPUT, f"line {number}: longer than {max_chars:,} characters")
    try:
        obj = parse_json_unchecked(line, what=f"line {number}")
    except InvalidInputError as exc:
        return None, error_line(exc.code, exc.message)
    if not isinstance(obj, dict):
        return None, error_line(ErrorCode.INVALID_INPUT, f'line {number}: expected a JSON object with "text" or "pdf"')
    problem = json_problem(obj)
    line_id = obj.pop("id", None)
    if line_id is not None and (isinstance(line_id, bool) or not isinstance(line_id, (str, int))):
        line_id = str(line_id)[:200] if problem is None else None
    if problem is not None:  # the line's id, when it has a usable one, still labels its error
        return line_id, error_line(ErrorCode.INVALID_INPUT, f"line {number}: {problem}", line_id)
    if "pdf" in obj:
        if "text" in obj:
            return line_id, error_line(
                ErrorCode.INVALID_INPUT, f'line {number}: send "text" or "pdf", not both', line_id
            )
        if not isinstance(obj["pdf"], str):
            return line_id, error_line(
                ErrorCode.INVALID_INPUT, f'line {number}: "pdf" must be the PDF\'s bytes in base64 (a string)', line_id
            )
    elif not isinstance(obj.get("text"), str):
        return line_id, error_line(
            ErrorCode.INVALID_INPUT, f'line {number}: "text" must be a string (or "pdf": a PDF in base64)', line_id
        )
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
    """The batch's progress on stderr; stdout carries the JSONL results alone.

    On a terminal rich draws done/total, a bar, jobs per second and the ETA. Anywhere
    else (a pipe, a log file, a CI job) it is JSON lines, `{"event": "batch_progress",
    "done", "submitted", "total", "jobs_per_s", "eta_s"}`, at most one per `every_s`
    seconds and one at the end, so a long batch is seen to move. `total` is None
    until the input has been read to its end (`set_total`). A batch of one line shows
    nothing. A context manager; lines advanced before it starts (refused at parsing)
    count as done."""

    def __init__(
        self,
        total: int | None = None,
        stream: IO[str] | None = None,
        *,
        every_s: float = PROGRESS_EVERY_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.total = total
        self.stream = stream or sys.stderr
        self.terminal = bool(getattr(self.stream, "isatty", lambda: False)())
        self.every_s = every_s
        self.clock = clock
        self.done = 0
        self.submitted = 0
        self._started = clock()
        self._last_line: float | None = None
        self._bar: Any = None
        self._task: Any = None
        self._active = False

    @property
    def enabled(self) -> bool:
        return self.total is None or self.total > 1

    def __enter__(self) -> Progress:
        self._active = True
        self._started = self.clock()
        if self.terminal and self.enabled:
            self._bar = _rich_progress(self.stream)
            self._task = self._bar.add_task("batch", total=self.total, completed=self.done)
            self._bar.start()
        return self

    def set_total(self, total: int) -> None:
        self.total = total
        if self._bar is not None:
            self._bar.update(self._task, total=total)

    def sent(self, count: int) -> None:
        self.submitted = count
        self._maybe_line()

    def advance(self) -> None:
        self.done += 1
        if self._bar is not None:
            self._bar.advance(self._task)
        self._maybe_line()

    def _maybe_line(self) -> None:
        if not self._active or self.terminal or not self.enabled:
            return
        now = self.clock()
        if self._last_line is None or now - self._last_line >= self.every_s:
            self._line(now)

    def _line(self, now: float) -> None:
        self._last_line = now
        elapsed = max(now - self._started, 1e-9)
        rate = self.done / elapsed
        left = None if self.total is None else self.total - self.done
        eta = None if left is None or rate <= 0 else round(left / rate, 1)
        line = {
            "event": "batch_progress",
            "done": self.done,
            "submitted": max(self.submitted, self.done),
            "total": self.total,
            "jobs_per_s": round(rate, 2),
            "eta_s": eta,
        }
        self.stream.write(json.dumps(line) + "\n")
        self.stream.flush()

    def __exit__(self, *exc: object) -> None:
        self._active = False
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
        elif not self.terminal and self.enabled:
            self._line(self.clock())


def _rich_progress(stream: IO[str]) -> Any:
    # Imported only when a bar is drawn: a batch into a pipe does not pay for rich.
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, ProgressColumn, TextColumn, TimeRemainingColumn
    from rich.progress import Progress as RichProgress
    from rich.text import Text

    class JobRate(ProgressColumn):
        def render(self, task: Any) -> Text:
            speed = task.finished_speed or task.speed
            return Text("? jobs/s" if speed is None else f"{speed:.1f} jobs/s")

    # The terminal test is ours (Progress.enabled), not rich's reading of FORCE_COLOR
    # and the like. Neither stdout nor stderr is redirected: results stay on stdout.
    console = Console(file=stream, force_terminal=True, highlight=False)
    return RichProgress(
        MofNCompleteColumn(),
        BarColumn(),
        JobRate(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=console,
        redirect_stdout=False,
        redirect_stderr=False,
    )
