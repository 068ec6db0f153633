"""The --heuristics benchmark of eval/bench_queue.py: its figures have the shape it
prints, and the purchase order it generates really backs its record (every value
grounded), so what it times is the heuristics passing, not failing, on 40 fields.
No timing is asserted here: timing belongs to the benchmark's own run."""

from __future__ import annotations

import copy

from vetq.core.extraction.heuristics import run_heuristics
from vetq.core.schemas import compile_schema
from vetq.eval.bench_queue import BIG_SCHEMA, COLUMNS, padded, purchase_order, run_heuristics_bench

ROW_KEYS = {*COLUMNS, "items", "min_factor"}


def test_the_figures_have_their_shape_and_every_value_is_grounded() -> None:
    figures = run_heuristics_bench(repeats=2, items=(5, 10), main_items=10, paddings=(2,))

    assert figures["repeats"] == 2 and figures["schema_fields"] == 40
    assert [row["items"] for row in figures["by_items"]] == [5, 10]
    assert [row["case"] for row in figures["by_length"]] == ["po40 x10", "po40 x10 pad 2x"]
    assert figures["po40"] == figures["by_items"][1] == figures["by_length"][0]
    rows = [figures["invoice"], *figures["by_items"], *figures["by_length"]]
    for row in rows:
        assert set(row) == ROW_KEYS
        assert row["values"] > 0 and row["chars"] > 0 and row["median_ms"] > 0
        assert row["min_factor"] == 1.0, row["case"]
    # 32 top-level values and 8 per item, each committed
    assert [row["values"] for row in figures["by_items"]] == [32 + 8 * 5, 32 + 8 * 10]
    assert figures["invoice"]["items"] == 0 and figures["invoice"]["values"] == 7
    padded_row = figures["by_length"][1]
    assert padded_row["values"] == figures["po40"]["values"]
    assert padded_row["chars"] >= 2 * figures["po40"]["chars"]
    assert set(figures["exponents"]) == {"items", "values_x_chars", "length"}


def test_the_generated_order_is_deterministic_and_backs_each_value() -> None:
    schema = compile_schema(BIG_SCHEMA)
    text, record = purchase_order(12, seed=3)
    assert (text, record) == purchase_order(12, seed=3)
    assert text != purchase_order(12, seed=4)[0]
    for source in (text, padded(text, 4, seed=3)):
        checks = run_heuristics(source, schema.validate_data(record), schema)
        assert len(checks) == 32 + 8 * 12
        assert {path: check.reasons for path, check in checks.items() if check.factor < 1.0} == {}
        assert all(check.verified for check in checks.values())


def test_a_corrupted_item_amount_is_caught() -> None:
    schema = compile_schema(BIG_SCHEMA)
    text, record = purchase_order(10)
    wrong = copy.deepcopy(record)
    wrong["line_items"][3]["amount"] = round(wrong["line_items"][3]["amount"] + 1.0, 2)

    checks = run_heuristics(text, schema.validate_data(wrong), schema)

    assert checks["line_items[3].amount"].factor < 1.0
    assert any("arithmetic" in reason for reason in checks["line_items[3].amount"].reasons)
    assert all(check.factor == 1.0 for path, check in checks.items() if path != "line_items[3].amount")
