"""Find the JSON object in a model's answer: strip <think> blocks and code fences,
then try the whole text, then the first balanced object."""

from __future__ import annotations

import json
import re
from typing import Any

_THINK_BLOCK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_UNCLOSED_THINK = re.compile(r"^\s*<think>.*", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"```[a-zA-Z0-9_-]*[ \t]*\n?|```")


class JSONNotFound(ValueError):
    """The answer holds no JSON object."""


def _first_balanced_object(text: str) -> str | None:
    """The first {...} whose braces balance, ignoring braces inside strings."""
    start = text.find("{")
    while start != -1:
        depth, in_string, escaped = 0, False, False
        for index in range(start, len(text)):
            ch = text[index]
            if in_string:
                if escaped:
                    escaped = False
                elif ch == "\\":
                    escaped = True
                elif ch == '"':
                    in_string = False
            elif ch == '"':
                in_string = True
            elif ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    return text[start : index + 1]
        start = text.find("{", start + 1)
    return None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _loads(text: str) -> Any:
    # NaN and Infinity are not JSON; a model that writes them gets a repair prompt.
    return json.loads(text, parse_constant=_reject_constant)


def extract_json_object(answer: str) -> dict[str, Any]:
    text = _THINK_BLOCK.sub("", answer or "")
    if _UNCLOSED_THINK.match(text):
        raise JSONNotFound("the answer is an unfinished <think> block with no JSON after it")
    text = _FENCE.sub("", text).strip()
    try:
        value = _loads(text)
    except (ValueError, RecursionError):
        candidate = _first_balanced_object(text)
        if candidate is None:
            raise JSONNotFound("no JSON object found in the answer") from None
        try:
            value = _loads(candidate)
        except (ValueError, RecursionError) as exc:
            raise JSONNotFound(f"the JSON object in the answer does not parse: {str(exc)[:120]}") from None
    if not isinstance(value, dict):
        raise JSONNotFound(f"expected a JSON object, got {type(value).__name__}")
    return value
