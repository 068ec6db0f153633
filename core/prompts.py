"""Versioned prompt templates, loaded from the package so a prompt change is a file
change (and a deliberate hash change in the prompt-freeze tests), and the one fence
that keeps untrusted text inside its tags."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from functools import cache, lru_cache
from importlib import resources

# Every tag the extraction prompts fence content in. A fenced text may not open or
# close any of them: a candidate could otherwise pose as the end of the document.
EXTRACTION_TAGS = ("document", "candidate")


@cache
def load_prompt(package: str, name: str) -> str:
    return resources.files(package).joinpath("prompts", name).read_text(encoding="utf-8")


def prompt_sha256(package: str, name: str) -> str:
    return hashlib.sha256(load_prompt(package, name).encode("utf-8")).hexdigest()


@lru_cache(maxsize=64)
def _tag_pattern(tags: tuple[str, ...]) -> re.Pattern[str]:
    # A model reads `</DOCUMENT>`, `</document >`, `< / document>` as the same tag, so
    # case and whitespace (anywhere around the slash) must not matter.
    names = "|".join(re.escape(tag) for tag in sorted(set(tags), key=len, reverse=True))
    return re.compile(r"<(\s*/?\s*(?:" + names + r")(?![\w-]))", re.IGNORECASE)


def neutralise_tags(content: str, tags: Iterable[str]) -> str:
    """`content` with every opening or closing variant of `tags` escaped (`<` becomes
    `&lt;`), so it can neither end the block it sits in nor open another one."""
    return _tag_pattern(tuple(tags)).sub(r"&lt;\1", content)


def fence(tag: str, content: str, *, tags: Iterable[str] = EXTRACTION_TAGS) -> str:
    """Wrap untrusted content in <tag>...</tag>, neutralising any variant of `tag` and
    of the prompt's other fence tags inside it so the content cannot end its own fence
    and pose as instructions."""
    safe = neutralise_tags(content, (tag, *tags))
    return f"<{tag}>\n{safe}\n</{tag}>"
