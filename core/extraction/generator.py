"""The Generator: one model turns the document into a candidate InvoiceData."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from vetq.core.extraction.schema import FIELD_NAMES, InvoiceData
from vetq.core.llm.structured import ModelStage, StructuredAnswer, UnusableAnswer, ask_structured
from vetq.core.llm.types import Message
from vetq.core.prompts import EXTRACTION_PROMPTS, fence
from vetq.core.validation import explain


def parse_invoice(obj: dict[str, Any]) -> InvoiceData:
    # Keys outside the schema are dropped rather than refused: a model that adds a
    # "notes" key has still answered the question.
    known = {key: obj.get(key) for key in FIELD_NAMES}
    try:
        return InvoiceData.model_validate(known)
    except ValidationError as exc:
        raise UnusableAnswer(explain(exc, limit=5, root="answer")) from None


class Generator(ModelStage):
    def run(self, text: str) -> StructuredAnswer[InvoiceData]:
        return ask_structured(
            self.gate,
            self.client,
            stage="generator",
            system=EXTRACTION_PROMPTS.load("generator"),
            messages=[
                Message(
                    role="user", content="Extract the invoice fields from this document.\n\n" + fence("document", text)
                )
            ],
            parse=parse_invoice,
            max_tokens=self.max_tokens,
            repair_retries=self.repair_retries,
        )
