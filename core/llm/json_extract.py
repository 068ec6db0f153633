"""Find the JSON object in a model's answer and normalise the loose spellings models
use for numbers like confidences. Shared by every stage that asks a model for JSON.

The answer is cleaned of <think> blocks, then parsed whole; failing that, the first
balanced {...} that parses (string-aware, so braces or fences inside JSON strings
are never touched). NaN and Infinity are not JSON and are refused."""

from __future__ import annotations

import json
import math
import re
from typing import Any


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _loads(text: str) -> Any:
    return json.loads(text, parse_constant=_refuse_constant)


_THINK_BLOCK = re.compile(r"<think\b[^>]*>.*?</think\s*>", re.IGNORECASE | re.DOTALL)
# A reasoning block that was opened but never closed (the model ran on or the
# server stripped the closing tag): drop from the tag to the first '{' after it.
_UNCLOSED_THINK = re.compile(r"^\s*<think\b[^>]*>.*?(?=\{)", re.IGNORECASE | re.DOTALL)
_FENCE = re.compile(r"```[A-Za-z0-9_-]*[ \t]*\n?|```")


class NoJSONObjectError(ValueError):
    """The answer holds no JSON object."""


def strip_think(text: str) -> str:
    """Remove <think>...</think> blocks, a stray closing tag's preamble and an
    unclosed leading block."""
    cleaned = _THINK_BLOCK.sub("", text or "")
    # A stray closing tag with no opening one: everything before it was reasoning.
    close = re.search(r"</think\s*>", cleaned, re.IGNORECASE)
    if close:
        cleaned = cleaned[close.end() :]
    cleaned = _UNCLOSED_THINK.sub("", cleaned)
    if re.match(r"^\s*<think\b", cleaned, re.IGNORECASE):  # unclosed and no JSON after it
        return ""
    return cleaned.strip()


def strip_wrappers(text: str) -> str:
    """Remove <think> blocks (see strip_think) and code fences."""
    return _FENCE.sub("", strip_think(text)).strip()


def first_balanced_object(text: str) -> str | None:
    """The first balanced {...} in text, matching braces outside JSON strings."""
    start = text.find("{")
    while start != -1:
        depth, in_string, escaped = 0, False, False
        for i in range(start, len(text)):
            ch = text[i]
            if in_string:
                if escaped:
                    escaped = False
                elif ch == "\\":
                    escaped = True
                elif ch == '"':
                    in_string = False
                continue
            if ch == '"':
                in_string = True
            elif ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    return text[start : i + 1]
        # Unbalanced from this brace: try the next one.
        start = text.find("{", start + 1)
    return None


def extract_json_object(text: str) -> dict[str, Any]:
    """The JSON object in a model's answer: the whole cleaned text if it is one,
    else the first balanced {...} that parses (string-aware). Raises NoJSONObjectError."""
    cleaned = strip_think(text)
    if not strip_wrappers(cleaned):
        raise NoJSONObjectError("the answer was empty (no JSON object)")
    # The whole answer first. Fenced or prose-wrapped objects are then found by
    # the string-aware brace scan, so a fence inside a JSON string is never touched.
    try:
        value = _loads(cleaned)
    except (ValueError, RecursionError):
        value = None
    if isinstance(value, dict):
        return value
    if value is not None:
        raise NoJSONObjectError(f"the answer was JSON but not an object (got {type(value).__name__})")
    search_from = 0
    while True:
        candidate = first_balanced_object(cleaned[search_from:])
        if candidate is None:
            raise NoJSONObjectError("no JSON object found in the answer")
        try:
            value = _loads(candidate)
        except (ValueError, RecursionError):
            value = None
        if isinstance(value, dict):
            return value
        search_from = cleaned.index(candidate, search_from) + 1


def normalize_confidence(value: Any) -> float:
    """0.8, '0.8', '80%', 80 -> 0.8. Values above 1 (up to 100) are percentages."""
    if isinstance(value, bool) or value is None:
        raise ValueError("confidence must be a number between 0 and 1")
    percent = False
    if isinstance(value, str):
        text = value.strip()
        if text.endswith("%"):
            percent, text = True, text[:-1].strip()
        try:
            number = float(text)
        except ValueError as exc:
            raise ValueError("confidence must be a number between 0 and 1") from exc
    elif isinstance(value, (int, float)):
        number = float(value)
    else:
        raise ValueError("confidence must be a number between 0 and 1")
    if not math.isfinite(number) or number < 0:
        raise ValueError("confidence must be a number between 0 and 1")
    if percent or number > 1:
        number = number / 100.0
    if number > 1:
        raise ValueError("confidence must be a number between 0 and 1 (or a percentage up to 100)")
    return number
