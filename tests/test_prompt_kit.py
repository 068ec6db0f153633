"""The one prompt kit: every prompt vetq sends is a registered, versioned file whose
hash is pinned here (extraction) or in test_review_prompts.py (review), and what the
stages send is exactly that file."""

from __future__ import annotations

import json
import re

import pytest

from tests.conftest import GLOBEX, GLOBEX_DATA, critic_answer
from vetq.core.extraction.pipeline import ExtractionPipeline
from vetq.core.llm.scripted import ScriptedLLMClient
from vetq.core.prompts import BENCH_PROMPTS, EXTRACTION_PROMPTS, REVIEW_PROMPTS, PromptSet, prompt_sha256
from vetq.core.settings import load_settings

EXTRACTION_FROZEN = {
    "generator": "77f65c664780314d9cb8be78a6da7e522abddae3e0bf6a9c7f32b2723c76875d",
    "critic": "b84dbc55e07a0444dd5a560ef3fcba013aa697ac7d385a3b616ead5ed1570711",
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


def test_the_generator_and_the_critic_send_their_registered_files_unchanged() -> None:
    generator = ScriptedLLMClient([json.dumps(GLOBEX_DATA)])
    critic = ScriptedLLMClient([critic_answer()])
    pipeline = ExtractionPipeline(load_settings(), generator_client=generator, critic_client=critic)
    assert pipeline.extract(GLOBEX).status == "ok"
    sent = {"generator": generator.requests[0].system, "critic": critic.requests[0].system}
    assert {stage: prompt_sha256(text.encode("utf-8")) for stage, text in sent.items()} == EXTRACTION_FROZEN


def test_a_placeholder_inside_a_value_is_not_expanded_and_a_missing_one_is_refused() -> None:
    brief = "{{proposed_solution}} {{risk_level}}"
    text = REVIEW_PROMPTS.render("phase1_blind", decision_type="api", risk_level="low", brief=brief)
    assert brief in text and "Risk level: low" in text
    with pytest.raises(KeyError, match="brief"):
        REVIEW_PROMPTS.render("phase1_blind", decision_type="api", risk_level="low")
