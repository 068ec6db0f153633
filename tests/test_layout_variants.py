"""The real documents written differently (eval/layout_variants.py): a neutral variation
adds no false alarm on either real set, and the measure sees what a variation costs."""

from __future__ import annotations

import json

from vetq.eval import layout_variants as lv
from vetq.eval.real_eval import REAL_SETS, load_documents

DOCUMENTS = [doc for path in REAL_SETS.values() for doc in load_documents(path)]


def test_a_neutral_variation_adds_no_false_alarm_on_the_real_documents():
    results = lv.measure(DOCUMENTS, [v for v in lv.VARIANTS if v.neutral])
    assert {r.variant.name: r.added for r in results if r.added} == {}
    assert all(r.documents == len(DOCUMENTS) for r in results)


def test_the_measure_sees_what_a_variation_takes_away():
    def no_total_lines(text: str) -> str:
        return "\n".join(line for line in text.split("\n") if "total" not in line.casefold())

    without = lv.Variant("no_total_lines", no_total_lines, False, "the lines naming a total left out")
    documents = [doc for doc in DOCUMENTS if doc["truth"].get("total") is not None and "Total" in doc["text"]][:20]
    [result] = lv.measure(documents, [without])
    assert result.added, "taking the totals' lines away must cost flags"
    assert any("total" in fields for fields in result.added.values())


def test_the_command_reports_each_variation(capsys):
    assert lv.main(["--set", "tuned", "--variant", "crlf", "--variant", "twice", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [(r["variant"], r["neutral"], r["documents"]) for r in report] == [
        ("crlf", True, len(load_documents(REAL_SETS["tuned"]))),
        ("twice", False, len(load_documents(REAL_SETS["tuned"]))),
    ]
