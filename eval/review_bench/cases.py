"""The benchmark cases: one JSON file each under eval/review_cases/.

A case is {id, title, category, source, input, ground_truth, diagnostics}. Only
`input` -- exactly a review request -- is ever sent to a reviewer; everything else
is for grading and analysis. `validate_case` states the rules; `case_set_hash`
fingerprints the cases a run used (it goes into the checkpoint header).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

CASES_DIR = Path(__file__).resolve().parent.parent / "review_cases"

VERDICTS = ("KEEP", "MODIFY", "REPLACE", "INSUFFICIENT_EVIDENCE")
STATUSES = ("correct", "materially_flawed", "fundamentally_flawed", "insufficient_information")
FLAWED = frozenset({"materially_flawed", "fundamentally_flawed"})
SOURCE_TYPES = ("synthetic", "postmortem")
TOP_KEYS = ("id", "title", "category", "source", "input", "ground_truth", "diagnostics")
# The input must be the request a producer would send: no mode and no trace id (the
# harness chooses the mode per job and sets its own trace id).
FORBIDDEN_INPUT_KEYS = ("review_mode", "trace_id")


class CaseError(ValueError):
    """A case file that breaks the rules; the message names the file and every problem."""


def validate_case(case: Any, *, warn: float = 0.15) -> list[str]:
    """Every problem with one case (an empty list when it is valid)."""
    from pydantic import ValidationError

    from vetq.core.review.blindness import check_blindness
    from vetq.core.review.schema import ReviewRequest
    from vetq.core.validation import explain

    if not isinstance(case, dict):
        return ["a case is a JSON object"]
    problems = [f"missing key {key!r}" for key in TOP_KEYS if key not in case]
    extra = sorted(set(case) - set(TOP_KEYS))
    if extra:
        problems.append(f"unknown key(s) {extra}")
    if problems:
        return problems
    if not isinstance(case["id"], str) or not case["id"].strip():
        problems.append("id must be a non-empty string")
    for key in ("title", "category"):
        if not isinstance(case[key], str) or not case[key].strip():
            problems.append(f"{key} must be a non-empty string")
    source = case["source"]
    if not isinstance(source, dict) or set(source) != {"type", "url", "note"}:
        problems.append("source must be {type, url, note}")
    else:
        if source["type"] not in SOURCE_TYPES:
            problems.append(f"source.type must be one of {SOURCE_TYPES}")
        if source["type"] == "postmortem" and not (isinstance(source["url"], str) and source["url"].startswith("http")):
            problems.append("a postmortem case keeps its source URL in source.url")
    if not isinstance(case["diagnostics"], dict):
        problems.append("diagnostics must be an object")

    data = case["input"]
    request = None
    if not isinstance(data, dict):
        problems.append("input must be an object")
    else:
        for key in FORBIDDEN_INPUT_KEYS:
            if key in data:
                problems.append(f"input must not set {key}")
        try:
            request = ReviewRequest.model_validate(data)
        except ValidationError as exc:
            problems.append(f"input is not a valid review request: {explain(exc, limit=1)}")
    if request is not None:
        report = check_blindness(request)
        if report.score >= warn:
            problems.append(f"the proposal is visible in the blind fields (containment {report.score:.2f} >= {warn})")
        url = source.get("url") if isinstance(source, dict) else None
        text = json.dumps(data, ensure_ascii=False)
        if url and url in text:
            problems.append("the source URL must stay in metadata, never in input")

    truth = case["ground_truth"]
    if not isinstance(truth, dict):
        return [*problems, "ground_truth must be an object"]
    required = {"proposal_status", "acceptable_verdicts", "material_issue", "required_observations", "notes"}
    missing = required - set(truth)
    if missing:
        return [*problems, f"ground_truth misses {sorted(missing)}"]
    status = truth["proposal_status"]
    verdicts = truth["acceptable_verdicts"]
    if status not in STATUSES:
        problems.append(f"proposal_status must be one of {STATUSES}")
    if not isinstance(verdicts, list) or not verdicts or any(v not in VERDICTS for v in verdicts):
        problems.append(f"acceptable_verdicts must be a non-empty list of {VERDICTS}")
    elif len(set(verdicts)) != len(verdicts):
        problems.append("acceptable_verdicts repeats a verdict")
    else:
        if status == "correct" and verdicts != ["KEEP"]:
            problems.append("a correct proposal accepts KEEP only")
        if status in FLAWED and "KEEP" in verdicts:
            problems.append("a flawed proposal never accepts KEEP")
        if status == "insufficient_information" and verdicts[0] != "INSUFFICIENT_EVIDENCE":
            problems.append("insufficient_information has INSUFFICIENT_EVIDENCE as its primary verdict")
    if status in FLAWED and not (isinstance(truth["material_issue"], str) and truth["material_issue"].strip()):
        problems.append("a flawed proposal names its material_issue")
    if not isinstance(truth["required_observations"], list) or not all(
        isinstance(o, str) for o in truth["required_observations"]
    ):
        problems.append("required_observations must be a list of strings")
    return problems


def load_cases(directory: str | Path | None = None, *, only: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """Every case of `directory` (default eval/review_cases), sorted by id, validated.
    `only` keeps the named ids (an unknown id is an error)."""
    folder = Path(directory) if directory is not None else CASES_DIR
    files = sorted(folder.glob("*.json"))
    if not files:
        raise CaseError(f"no case files (*.json) in {folder}")
    cases, problems, seen = [], [], set()
    for path in files:
        try:
            case = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            problems.append(f"{path.name}: unreadable ({exc})")
            continue
        found = validate_case(case)
        if isinstance(case, dict) and case.get("id") in seen:
            found.append(f"duplicate id {case.get('id')!r}")
        if found:
            problems.append(f"{path.name}: " + "; ".join(found))
            continue
        seen.add(case["id"])
        cases.append(case)
    if problems:
        raise CaseError("invalid case file(s):\n  " + "\n  ".join(problems))
    cases.sort(key=lambda c: c["id"])
    if only:
        wanted = list(dict.fromkeys(only))
        unknown = [i for i in wanted if i not in seen]
        if unknown:
            raise CaseError(f"--only names unknown case id(s): {', '.join(unknown)}")
        cases = [c for c in cases if c["id"] in set(wanted)]
    return cases


def case_set_hash(cases: Iterable[dict[str, Any]]) -> str:
    """sha256 of the cases (whole files, canonical JSON, sorted by id)."""
    canonical = json.dumps(
        sorted(cases, key=lambda c: c["id"]), sort_keys=True, ensure_ascii=False, separators=(",", ":")
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def review_payload(case: dict[str, Any]) -> dict[str, Any]:
    """What the reviewer gets: the case's input and nothing else."""
    return dict(case["input"])
