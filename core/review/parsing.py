"""Getting a JSON object out of a model's answer, and normalising the loose
spellings models use for verdicts, confidences and empty values.

Pure functions only: no pydantic models here (schema.py imports these)."""

from __future__ import annotations

import re
from typing import Any

from core.llm.json_extract import (  # noqa: F401 - re-exported: the review's answers parse the same way
    NoJSONObjectError,
    extract_json_object,
    first_balanced_object,
    normalize_confidence,
    strip_think,
    strip_wrappers,
)

MAX_LIST_ITEMS = 10

VERDICTS: tuple[str, ...] = ("KEEP", "MODIFY", "REPLACE", "INSUFFICIENT_EVIDENCE")
_EMPTY_WORDS = frozenset({"", "n/a", "na", "none", "null", "nil", "-", "--", "no", "nothing", "not applicable"})


def normalize_verdict(value: Any) -> str:
    """'keep', ' Modify ', 'insufficient evidence', 'INSUFFICIENT-EVIDENCE' -> canonical."""
    if not isinstance(value, str):
        raise ValueError(f"verdict must be one of {', '.join(VERDICTS)}")
    key = re.sub(r"[\s\-_]+", "_", value.strip()).strip("_").upper()
    if key in VERDICTS:
        return key
    raise ValueError(f"verdict must be one of {', '.join(VERDICTS)}")


def normalize_optional_text(value: Any) -> str | None:
    """'n/a', 'none', 'null', '' (and JSON null) -> None; other text stripped."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError("must be a string or null")
    text = value.strip()
    if text.casefold().rstrip(".") in _EMPTY_WORDS:
        return None
    return text


def normalize_str_list(value: Any, *, limit: int = MAX_LIST_ITEMS) -> list[str]:
    """A list of non-empty strings, truncated to `limit`. A bare string becomes
    a one-item list; null becomes empty."""
    if value is None:
        return []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        raise ValueError("must be a list of strings")
    items: list[str] = []
    for item in value:
        if isinstance(item, (int, float)) and not isinstance(item, bool):
            item = str(item)
        if not isinstance(item, str):
            raise ValueError("must be a list of strings")
        if item.strip():
            items.append(item.strip())
    return items[:limit]
