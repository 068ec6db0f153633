"""`make demo`: push the sample documents through the embedded Redis and a real
worker, with the models replayed from recorded answers (no key, no network), and
print what came back."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

SAMPLES = Path(__file__).parent / "samples"
CASES = SAMPLES / "demo.jsonl"
FIXTURE = SAMPLES / "demo_replay.json"


def main() -> int:
    # The demo replays recorded model answers; a real run names real models instead.
    os.environ["VETQ_GENERATOR"] = f"replay:{FIXTURE}"
    os.environ["VETQ_CRITIC"] = f"replay:{FIXTURE}"
    os.environ.setdefault("VETQ_LOG_LEVEL", "WARNING")

    from vetq.api_client.client import Client
    from vetq.core.logging import configure_logging
    from vetq.core.settings import load_settings
    from vetq.eval.fixtures import load_cases

    settings = load_settings()
    configure_logging(settings.log_level)
    # A home of its own, so a `vetq up` running with live models never serves the demo.
    settings = settings.model_copy(update={"home": settings.home / "demo"})
    cases = load_cases(CASES)
    started = time.perf_counter()
    print(f"vetq demo: {len(cases)} documents -> embedded Redis -> worker (replayed Generator and Critic)\n")
    with Client(settings=settings) as client:
        batch = client.submit_batch(
            {"kind": "extract", "text": case["text"], "schema": case.get("schema"), "trace_id": None} for case in cases
        )
        results = batch.results(timeout=120)
    counts: dict[str, int] = {}
    for case, result in zip(cases, results, strict=True):
        status = result.get("status", "?")
        counts[status] = counts.get(status, 0) + 1
        schema = (result.get("schema") or {}).get("name", case.get("schema", "invoice"))
        print(f"[{status:>12}] {case['id']:<24} {schema:<10} trace {result.get('trace_id')}")
        if status == "error":
            print(f"{'':15}{result['error']['code']}: {result['error']['message']}")
            continue
        data = {k: v for k, v in result["data"].items() if v is not None}
        print(f"{'':15}data: {json.dumps(data, ensure_ascii=False)}")
        for flag in result["flagged_fields"]:
            print(f"{'':15}FLAGGED {flag['field']} = {flag['value']!r} (confidence {flag['confidence']:.2f})")
            print(f"{'':17}why: {flag['reason']}")
    elapsed = time.perf_counter() - started
    summary = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
    print(f"\nsummary: {len(results)} documents in {elapsed:.1f}s: {summary}")
    return 0 if counts.get("error", 0) == 0 else 3


if __name__ == "__main__":
    sys.exit(main())
