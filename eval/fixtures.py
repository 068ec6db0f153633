"""Record replay fixtures from authored model answers.

A case holds a document and the answers the Generator and the Critic give for it.
Running each case through the real pipeline with recording clients captures the
exact requests the pipeline makes, so the fixture replays byte for byte, and a
prompt change shows up as a fixture that no longer matches (see the tests)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from vetq.core.extraction.pipeline import ExtractionPipeline
from vetq.core.llm.replay import RecordingClient
from vetq.core.llm.scripted import ScriptedLLMClient
from vetq.core.schemas.catalog import DEFAULT_SCHEMA
from vetq.core.settings import load_settings


def _answer(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def record_cases(cases: Iterable[dict[str, Any]], path: str | os.PathLike[str], *, schema: str = DEFAULT_SCHEMA) -> int:
    """Write a fresh fixture at `path` for every case (each a record of `schema`, or of
    the built-in its own "schema" names); returns how many cases ran."""
    target = Path(path)
    target.unlink(missing_ok=True)
    # Recorded with the default model settings, which is what a replay run uses.
    settings = load_settings(generator="replay:unused", critic="replay:unused")
    count = 0
    cases_list = list(cases)
    for case in cases_list:
        generator_answers = case["generator"] if isinstance(case["generator"], list) else [case["generator"]]
        critic_answers = case.get("critic")
        critic_answers = (
            critic_answers if isinstance(critic_answers, list) else [critic_answers] if critic_answers else []
        )
        pipeline = ExtractionPipeline(
            settings,
            generator_client=RecordingClient(ScriptedLLMClient([_answer(a) for a in generator_answers]), target),
            critic_client=RecordingClient(ScriptedLLMClient([_answer(a) for a in critic_answers]), target),
        )
        pipeline.extract(case["text"], schema=case.get("schema", schema))
        count += 1
    _check_replays(cases_list, target, settings, schema)
    return count


def _check_replays(cases: list[dict[str, Any]], path: Path, settings: Any, schema: str) -> None:
    """Replay every case: two cases whose requests are identical but whose answers
    differ cannot share one fixture, and this says which."""
    from vetq.core.llm.replay import ReplayClient
    from vetq.core.schemas import builtin

    replay = ReplayClient(path)
    for case in cases:
        generated = case["generator"][-1] if isinstance(case["generator"], list) else case["generator"]
        if isinstance(generated, str):
            continue
        case_schema = case.get("schema", schema)
        pipeline = ExtractionPipeline(settings, generator_client=replay, critic_client=replay)
        outcome = pipeline.extract(case["text"], schema=case_schema)
        expected = builtin(case_schema).parse_answer(generated)
        if outcome.status == "error" or outcome.data != expected:
            raise ValueError(
                f"case {case.get('id')!r} does not replay to its own answer: "
                "another case makes the same request with a different answer"
            )


def load_cases(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


if __name__ == "__main__":  # python -m vetq.eval.fixtures CASES.jsonl FIXTURE.json [SCHEMA]
    import sys

    from vetq.core.logging import configure_logging

    configure_logging("WARNING")
    cases_path, fixture_path = sys.argv[1], sys.argv[2]
    schema_name = sys.argv[3] if len(sys.argv) > 3 else DEFAULT_SCHEMA
    recorded = record_cases(load_cases(cases_path), fixture_path, schema=schema_name)
    print(f"recorded {recorded} case(s) into {fixture_path}")
