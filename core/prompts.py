"""The prompt kit: every prompt vetq sends, as versioned files in the packages, one
render, one hash and the one fence that keeps untrusted text inside its tags.

A prompt change is a file change: a new `*_vN.md` beside the old one and the set's
entry pointed at it, which the prompt-freeze tests notice as a deliberate hash change.
The benchmark's report header records the same hashes, so a run says which prompts
it measured."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources

# ---------------------------------------------------------------- versioned files

_PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")


@cache
def _file_bytes(package: str, file_name: str) -> bytes:
    return resources.files(package).joinpath("prompts", file_name).read_bytes()


def prompt_sha256(data: bytes) -> str:
    """The hash a prompt is pinned and reported by: sha256 of the file's bytes."""
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class PromptSet:
    """The prompts one package sends: a key the code asks for, mapped to the versioned
    file (`<package>/prompts/<name>_vN.md`) that key means today."""

    package: str
    versions: Mapping[str, str]

    def file_bytes(self, key: str) -> bytes:
        return _file_bytes(self.package, self.versions[key])

    def load(self, key: str) -> str:
        """The template exactly as the file holds it."""
        return self.file_bytes(key).decode("utf-8")

    def render(self, key: str, /, **values: str) -> str:
        """The template for `key` with its `{{name}}` placeholders filled in one pass,
        so text inside a value is never itself taken for a placeholder. A placeholder
        without a value is refused (KeyError): a prompt with a hole in it would still
        read as a prompt to the model."""
        template = self.load(key)
        missing = set(_PLACEHOLDER.findall(template)) - set(values)
        if missing:
            raise KeyError(f"prompt {key} needs {sorted(missing)}")
        return _PLACEHOLDER.sub(lambda m: values[m.group(1)], template).strip()

    def hashes(self) -> dict[str, str]:
        """prompt_sha256 of each file, by key: what the freeze tests pin and the
        benchmark's header reports."""
        return {key: prompt_sha256(self.file_bytes(key)) for key in self.versions}


EXTRACTION_PROMPTS = PromptSet(
    "vetq.core.extraction",
    {
        "generator": "generator_v2.md",
        "critic": "critic_v2.md",
    },
)

# What a producer's review gets. The benchmark-only modes' prompts are a set of their
# own, so a benchmark prompt can change without touching what producers are sent.
REVIEW_PROMPTS = PromptSet(
    "vetq.core.review",
    {
        "system": "system_v1.md",
        "phase1_blind": "phase1_blind_v1.md",
        "phase2_reveal": "phase2_reveal_v1.md",
        "proposal_first": "proposal_first_v1.md",
        "repair": "repair_v1.md",
    },
)
BENCH_PROMPTS = PromptSet(
    "vetq.core.review",
    {
        "proposal_second_pass": "proposal_second_pass_v1.md",
        "independent_compare": "independent_compare_v1.md",
        "decision_judge": "decision_judge_v1.md",
    },
)

# ---------------------------------------------------------------- the fence

# Every tag the extraction prompts fence content in. A fenced text may not open or
# close any of them: a candidate could otherwise pose as the end of the document.
EXTRACTION_TAGS = ("document", "candidate")
# Every tag the review prompts delimit supplied text with.
REVIEW_TAGS = (
    "objective", "constraints", "constraint", "context", "environment", "evidence", "item", "proposed_solution",
    "reviewer_position",
)  # fmt: skip


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
