"""Versioned prompt templates, loaded from the package so a prompt change is a file
change (and a deliberate hash change in the prompt-freeze tests)."""

from __future__ import annotations

import hashlib
from functools import lru_cache
from importlib import resources


@lru_cache(maxsize=None)
def load_prompt(package: str, name: str) -> str:
    return resources.files(package).joinpath("prompts", name).read_text(encoding="utf-8")


def prompt_sha256(package: str, name: str) -> str:
    return hashlib.sha256(load_prompt(package, name).encode("utf-8")).hexdigest()


def fence(tag: str, content: str) -> str:
    """Wrap untrusted content in <tag>...</tag>, neutralising any closing tag inside
    it so the content cannot end its own fence and pose as instructions."""
    safe = content.replace(f"</{tag}>", f"<\\/{tag}>")
    return f"<{tag}>\n{safe}\n</{tag}>"
