"""The Generator: one model turns the document into a candidate record of the job's schema."""

from __future__ import annotations

from typing import Any

from vetq.core.extraction.record_prompt import skeleton
from vetq.core.llm.structured import ModelStage, StructuredAnswer, UnusableAnswer, ask_structured
from vetq.core.llm.types import Message
from vetq.core.prompts import EXTRACTION_PROMPTS, fence
from vetq.core.schemas.compiled import CompiledSchema
from vetq.core.schemas.records import RecordError


def generator_system_prompt(schema: CompiledSchema) -> str:
    return EXTRACTION_PROMPTS.render(
        "generator", schema_description=schema.description or schema.name, skeleton=skeleton(schema)
    )


class Generator(ModelStage):
    def run(self, text: str, schema: CompiledSchema) -> StructuredAnswer[dict[str, Any]]:
        def parse(obj: dict[str, Any]) -> dict[str, Any]:
            try:
                return schema.parse_answer(obj)
            except RecordError as exc:
                raise UnusableAnswer(str(exc)) from None

        return ask_structured(
            self.gate,
            self.client,
            stage="generator",
            system=generator_system_prompt(schema),
            messages=[
                Message(role="user", content="Extract the record from this document.\n\n" + fence("document", text))
            ],
            parse=parse,
            max_tokens=self.max_tokens,
            repair_retries=self.repair_retries,
        )
