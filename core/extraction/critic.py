"""The Critic: a second model scores every field of the candidate against the source."""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any

from pydantic import ValidationError

from vetq.core.extraction.record_prompt import field_guide
from vetq.core.extraction.schema import CritiqueResult
from vetq.core.llm.json_extract import normalize_confidence
from vetq.core.llm.structured import ModelStage, StructuredAnswer, UnusableAnswer, ask_structured
from vetq.core.llm.types import Message
from vetq.core.prompts import EXTRACTION_PROMPTS, fence
from vetq.core.schemas.compiled import CompiledSchema
from vetq.core.schemas.records import ancestors, leaves
from vetq.core.validation import explain


def _lenient_confidence(value: Any) -> Any:
    """The shared normaliser, leaving anything it cannot read for validation to name."""
    try:
        return normalize_confidence(value)
    except ValueError:
        return value


def _normalise_grounded(value: Any) -> Any:
    if isinstance(value, str) and value.strip().lower() in {"true", "yes"}:
        return True
    if isinstance(value, str) and value.strip().lower() in {"false", "no"}:
        return False
    return value


def parse_critique(obj: dict[str, Any], judged: Collection[str]) -> CritiqueResult:
    """The Critic's answer; verdicts for paths not in `judged` (the candidate's values
    and the items and lists that hold them) are dropped: they cannot move the gate."""
    raw = obj.get("verdicts", obj.get("fields"))
    if isinstance(raw, dict):  # {"vendor_name": {...}, ...}
        raw = [{"field": name, **v} for name, v in raw.items() if isinstance(v, dict)]
    if not isinstance(raw, list):
        raise UnusableAnswer('"verdicts" must be a list with one entry per field')
    verdicts = []
    for item in raw:
        if not isinstance(item, dict) or item.get("field") not in judged:
            continue  # a verdict for a value we do not have cannot move the gate
        verdicts.append(
            {
                "field": item["field"],
                "confidence": _lenient_confidence(item.get("confidence")),
                "grounded": _normalise_grounded(item.get("grounded")),
                "reason": str(item.get("reason") or "")[:500],
            }
        )
    try:
        return CritiqueResult.model_validate(
            {
                "verdicts": verdicts,
                "overall_confidence": _lenient_confidence(obj.get("overall_confidence")),
                "summary": str(obj.get("summary") or "")[:1000],
            }
        )
    except ValidationError as exc:
        raise UnusableAnswer(explain(exc, limit=5, root="answer")) from None


def critic_system_prompt(schema: CompiledSchema) -> str:
    return EXTRACTION_PROMPTS.render(
        "critic", schema_description=schema.description or schema.name, field_guide=field_guide(schema)
    )


class Critic(ModelStage):
    def run(self, text: str, schema: CompiledSchema, candidate: dict[str, Any]) -> StructuredAnswer[CritiqueResult]:
        committed = [leaf.path for leaf in leaves(schema.fields, candidate) if leaf.value is not None]
        judged = set(committed) | {container for path in committed for container in ancestors(path)}
        candidate_json = json.dumps(candidate, ensure_ascii=False, indent=1)
        return ask_structured(
            self.gate,
            self.client,
            stage="critic",
            system=critic_system_prompt(schema),
            messages=[
                Message(
                    role="user",
                    content="Check this candidate extraction against its source document. Give one verdict for each "
                    "of these paths: "
                    + ", ".join(committed)
                    + "\n\n"
                    + fence("document", text)
                    + "\n\n"
                    + fence("candidate", candidate_json),
                )
            ],
            parse=lambda obj: parse_critique(obj, judged),
            max_tokens=self.max_tokens,
            repair_retries=self.repair_retries,
        )
