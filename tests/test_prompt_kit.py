"""The one prompt kit: every prompt vetq sends is a registered, versioned file whose
hash is pinned here (extraction) or in test_review_prompts.py (review), and what the
stages send is exactly that file."""

from __future__ import annotations

import json
import re

import pytest

from tests.conftest import GLOBEX, GLOBEX_DATA, critic_answer
from vetq.core.extraction.critic import critic_system_prompt
from vetq.core.extraction.generator import generator_system_prompt
from vetq.core.extraction.pipeline import ExtractionPipeline
from vetq.core.llm.scripted import ScriptedLLMClient
from vetq.core.prompts import BENCH_PROMPTS, EXTRACTION_PROMPTS, REVIEW_PROMPTS, PromptSet
from vetq.core.schemas import builtin
from vetq.core.settings import load_settings

EXTRACTION_FROZEN = {
    "generator": "8d304d34588f4a1e2e4382dec6aae8d20dd3e72062b760f5d56ff1d1c7e351ad",
    "critic": "ba3655c26fb5f6270e700527f5ed38de690bbef35a68ea8ca84219049c44820b",
}


def test_extraction_prompt_hashes_are_frozen() -> None:
    assert EXTRACTION_PROMPTS.hashes() == EXTRACTION_FROZEN, (
        "An extraction prompt changed. If deliberate, add a new versioned file (e.g. generator_v2.md), "
        "point EXTRACTION_PROMPTS (core/prompts.py) at it and update EXTRACTION_FROZEN."
    )


@pytest.mark.parametrize("prompts", [EXTRACTION_PROMPTS, REVIEW_PROMPTS, BENCH_PROMPTS])
def test_every_registered_prompt_is_a_versioned_file(prompts: PromptSet) -> None:
    for key, name in prompts.versions.items():
        assert re.fullmatch(rf"{key}_v\d+\.md", name), name
        assert prompts.load(key).strip()


def test_the_generator_and_the_critic_send_their_registered_files_filled_in_from_the_schema() -> None:
    generator = ScriptedLLMClient([json.dumps(GLOBEX_DATA)])
    critic = ScriptedLLMClient([critic_answer()])
    pipeline = ExtractionPipeline(load_settings(), generator_client=generator, critic_client=critic)
    assert pipeline.extract(GLOBEX).status == "ok"
    invoice = builtin("invoice")
    sent = {"generator": generator.requests[0].system, "critic": critic.requests[0].system}
    assert sent == {"generator": generator_system_prompt(invoice), "critic": critic_system_prompt(invoice)}
    # Each is its registered file with the placeholders filled: the file's text stands in it around them.
    for stage, text in sent.items():
        for fixed_part in re.split(r"\{\{\w+\}\}", EXTRACTION_PROMPTS.load(stage).strip()):
            assert fixed_part in text
    assert '"total": number or null' in sent["generator"] and "- line_items[].amount: amount" in sent["critic"]


def test_a_placeholder_inside_a_value_is_not_expanded_and_a_missing_one_is_refused() -> None:
    brief = "{{proposed_solution}} {{risk_level}}"
    text = REVIEW_PROMPTS.render("phase1_blind", decision_type="api", risk_level="low", brief=brief)
    assert brief in text and "Risk level: low" in text
    with pytest.raises(KeyError, match="brief"):
        REVIEW_PROMPTS.render("phase1_blind", decision_type="api", risk_level="low")
