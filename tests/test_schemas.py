"""Schemas: the built-ins compile, a bad schema is refused naming its path, records are
parsed by kind and refused by path, rules and kind checks can only lower scores, and a
schema travels by hash so a worker never verifies against another one."""

from __future__ import annotations

import copy
import json
import threading
import time
from collections import OrderedDict
from datetime import date
from datetime import time as dt_time
from typing import Literal

import pytest
import yaml
from pydantic import BaseModel, Field

from vetq.core.errors import ErrorCode
from vetq.core.extraction import cross_checks as X
from vetq.core.extraction import field_checks as F
from vetq.core.extraction.heuristics import run_heuristics
from vetq.core.extraction.pipeline import ExtractionPipeline
from vetq.core.llm.scripted import ScriptedLLMClient
from vetq.core.schemas import (
    RecordError,
    SchemaInvalidError,
    SchemaLimits,
    SchemaMismatchError,
    builtin,
    builtin_names,
    catalog,
    compile_schema,
    load,
    wire,
)
from vetq.core.schemas.records import ancestors, leaves
from vetq.core.schemas.wire import resolve, to_wire
from vetq.core.settings import load_settings

ORDER = {
    "name": "order",
    "version": 3,
    "description": "A small order.",
    "fields": {
        "number": {"kind": "identifier", "required": True, "pattern": "^PO-[0-9]+$"},
        "ordered": {"kind": "date"},
        "due": {"kind": "date"},
        "rate": {"kind": "number"},
        "subtotal": {"kind": "amount", "labels": ["Subtotal"]},
        "total": {"kind": "amount", "labels": ["@total"]},
        "lines": {
            "kind": "list",
            "max_items": 20,
            "fields": {
                "sku": {"kind": "identifier"},
                "qty": {"kind": "quantity", "units": ["pcs"]},
                "price": {"kind": "amount"},
                "amount": {"kind": "amount"},
            },
        },
    },
    "rules": [
        {"check": "due >= ordered"},
        {"check": "0 <= rate <= 1"},
        {"check": "sum(lines[].amount) = subtotal"},
        {"check": "lines[].qty * lines[].price = lines[].amount"},
    ],
}


def _order(**change) -> dict:
    doc = copy.deepcopy(ORDER)
    for path, value in change.items():
        target = doc
        *parents, last = path.split(".")
        for part in parents:
            target = target[int(part)] if isinstance(target, list) else target[part]
        target[last] = value
    return doc


# --- the built-ins -----------------------------------------------------------------------
def test_the_built_ins_compile_and_name_themselves():
    assert builtin_names() == ("invoice", "purchase_order", "receipt", "shipping_notice")
    for name in builtin_names():
        schema = builtin(name)
        assert schema.name == name and len(schema.hash) == 64
        assert any(f.kind == "list" for f in schema.fields), name  # every one has line items
        assert schema.rules, name


def test_the_invoice_keeps_its_seven_fields_and_adds_line_items():
    invoice = builtin("invoice")
    assert [f.name for f in invoice.fields] == [
        "vendor_name", "invoice_number", "invoice_date", "subtotal", "tax", "total", "currency", "line_items",
    ]  # fmt: skip
    assert invoice.rules[0].comparison.text == "subtotal + tax = total"


def test_the_same_schema_in_yaml_or_json_has_one_hash_and_a_change_has_another():
    # Field order is part of a schema (the prompts list fields in it): kept as written.
    as_yaml = compile_schema(yaml.safe_load(yaml.safe_dump(ORDER, sort_keys=False)))
    as_json = compile_schema(json.loads(json.dumps(ORDER)))
    spelled_out = compile_schema(_order(**{"fields.number.labels": []}))  # a default, written out
    assert as_yaml.hash == as_json.hash == spelled_out.hash
    assert compile_schema(_order(version=4)).hash != as_json.hash
    assert compile_schema(_order(**{"fields.rate.description": "the rate"})).hash != as_json.hash


# --- a bad schema is refused, naming the path ------------------------------------------
@pytest.mark.parametrize(
    "change,message",
    [
        ({"fields.rate.kind": "percent"}, "fields.rate.kind: unknown kind 'percent'"),
        ({"fields.rate.units": ["kg"], "fields.rate.kind": "text"}, "fields.rate.units: applies to number or quantity"),
        ({"fields.number.pattern": "^(PO"}, "fields.number.pattern: does not compile"),
        ({"fields.total.party": "seller"}, "fields.total.party: applies to text"),
        ({"fields.number.party": "vendor"}, "fields.number.party: Input should be 'seller' or 'buyer'"),
        ({"rules": [{"check": "due >= shipped"}]}, "rules[0].check: no field 'shipped'"),
        ({"rules": [{"check": "subtotal + ordered = total"}]}, "rules[0].check: compares dates with numbers"),
        ({"rules": [{"check": "due = ordered"}]}, "dates are compared in order"),
        ({"rules": [{"check": "number = total"}]}, "number is a identifier field"),
        ({"rules": [{"check": "subtotal +"}]}, "rules[0].check: cannot read"),
        ({"rules": [{"check": "__import__('os') = 1"}]}, "only field paths, numbers"),
        ({"rules": [{"check": "subtotal = total", "blame": "rate"}]}, "rules[0].blame: 'rate' is not a field"),
        ({"fields.lines.max_items": 5000}, "fields.lines.max_items: 5000 is above the limit"),
        ({"fields.lines.items": "party"}, "fields.lines: a list names its item fields"),
        ({"fields.total.labels": ["@total", "Subtotal"]}, "the label 'subtotal' is also subtotal's"),
        ({"fields.Total": {"kind": "text"}}, "fields.Total: a field name is lowercase"),
        ({"name": "Order!"}, "name: String should match pattern"),
        ({"fields.rate.colour": "red"}, "fields.rate.colour: unknown field"),
    ],
)
def test_a_bad_schema_is_refused_naming_the_path(change, message):
    with pytest.raises(SchemaInvalidError, match=message.replace("(", r"\(").replace("[", r"\[")) as caught:
        compile_schema(_order(**change))
    assert caught.value.code == ErrorCode.SCHEMA_INVALID


def test_a_type_that_contains_itself_is_refused_as_a_cycle():
    doc = {
        "name": "org",
        "types": {"party": {"fields": {"name": {"kind": "text"}, "parent": {"kind": "unit"}}},
                  "unit": {"fields": {"head": {"kind": "party"}}}},
        "fields": {"owner": {"kind": "party"}},
    }  # fmt: skip
    with pytest.raises(SchemaInvalidError, match=r"contains itself \(party -> unit -> party\)"):
        compile_schema(doc, SchemaLimits(max_depth=8))


def test_types_are_shared_by_fields_and_list_items():
    doc = {
        "name": "deal",
        "types": {"party": {"fields": {"name": {"kind": "text"}, "email": {"kind": "email"}}}},
        "fields": {"buyer": {"kind": "party"}, "witnesses": {"kind": "list", "items": "party"}},
    }
    schema = compile_schema(doc)
    assert {"buyer.name", "buyer.email", "witnesses[].name", "witnesses[].email"} <= set(schema.by_path)


def test_the_limits_refuse_a_schema_too_big_or_too_deep():
    wide = {"name": "wide", "fields": {f"f{i}": {"kind": "text"} for i in range(11)}}
    with pytest.raises(SchemaInvalidError, match="more than 10 fields"):
        compile_schema(wide, SchemaLimits(max_fields=10))
    deep = {
        "name": "deep",
        "fields": {"a": {"kind": "list", "fields": {"b": {"kind": "list", "fields": {"c": {"kind": "text"}}}}}},
    }
    compile_schema(deep, SchemaLimits(max_depth=3))
    with pytest.raises(SchemaInvalidError, match=r"fields\.a\.fields\.b\.fields: nests deeper than 2"):
        compile_schema(deep, SchemaLimits(max_depth=2))


# --- records ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "record,where",
    [
        ({"total": "12.50"}, "total: must be a JSON number"),
        ({"lines": [{"sku": "A"}, {"qty": True}]}, "lines[1].qty: must be a number, not a boolean"),
        ({"lines": [{"colour": "red"}]}, "lines[0].colour: unknown field"),
        ({"lines": {"sku": "A"}}, "lines: Input should be a valid list"),
        ({"ordered": "2026-02-30"}, "ordered: must be a real date"),
        ({"shipped": "2026-01-01"}, "shipped: unknown field"),
        ({"lines": [{}] * 21}, "lines: List should have at most 20 items"),
    ],
)
def test_data_that_does_not_fit_is_refused_naming_the_path(record, where):
    with pytest.raises(RecordError) as caught:
        compile_schema(ORDER).validate_data(record)
    assert where in str(caught.value)


def test_values_are_walked_by_path_with_empty_lists_as_one_null():
    schema = compile_schema(ORDER)
    record = schema.validate_data({"number": "PO-1", "lines": [{"sku": "A", "amount": 2.0}]})
    walked = {leaf.path: leaf.value for leaf in leaves(schema.fields, record)}
    assert walked["lines[0].sku"] == "A" and walked["lines[0].qty"] is None and walked["number"] == "PO-1"
    empty = {leaf.path for leaf in leaves(schema.fields, schema.validate_data({"lines": []}))}
    assert "lines" in empty and not any(path.startswith("lines[") for path in empty)
    assert ancestors("lines[2].amount") == ["lines[2]", "lines"]


# --- rules and kinds lower scores, each on what it names --------------------------------------
DOC = """Purchase order PO-7731    Ordered 2026-03-02    Due 2026-03-20
SKU      Qty        Price     Amount
A-100    2 pcs      10.00      20.00
B-200    3 pcs       5.50      16.50
Subtotal                       36.50
Total                          36.50
"""
GOOD = {
    "number": "PO-7731",
    "ordered": "2026-03-02",
    "due": "2026-03-20",
    "subtotal": 36.5,
    "total": 36.5,
    "lines": [
        {"sku": "A-100", "qty": 2, "price": 10.0, "amount": 20.0},
        {"sku": "B-200", "qty": 3, "price": 5.5, "amount": 16.5},
    ],
}


def _checks(record: dict, schema_doc: dict = ORDER) -> dict:
    schema = compile_schema(schema_doc)
    return run_heuristics(DOC, schema.validate_data(record), schema)


def test_a_correct_record_is_fully_grounded_by_path():
    checks = _checks(GOOD)
    assert {path: c.factor for path, c in checks.items() if c.factor < 1} == {}
    assert checks["lines[1].amount"].spans[0].text == "16.50"
    assert checks["lines[0].qty"].spans[0].text == "2"


def test_a_line_that_breaks_its_own_rule_flags_that_line_only():
    bad = copy.deepcopy(GOOD)
    bad["lines"][1]["price"] = 6.5  # 3 x 6.50 != 16.50, and 6.50 is not in the document
    checks = _checks(bad)
    lowered = {path for path, c in checks.items() if c.factor < 1}
    assert lowered == {"lines[1].price"}
    reason = " ".join(checks["lines[1].price"].reasons)
    assert "arithmetic: lines[1].qty * lines[1].price = 3 * 6.50 = 19.50, but lines[1].amount is 16.5" in reason


def test_a_sum_rule_blames_the_unbacked_value_else_the_right_hand_side():
    bad = copy.deepcopy(GOOD)
    bad["subtotal"] = 38.5  # not in the document, and the lines add up to 36.50
    checks = _checks(bad)
    assert checks["subtotal"].factor < F.UNGROUNDED_FACTOR
    assert "sum(lines[].amount) = 36.50, but subtotal is 38.5" in " ".join(checks["subtotal"].reasons)
    assert all(checks[f"lines[{i}].amount"].factor == 1.0 for i in range(2))


def test_order_and_range_rules():
    swapped = dict(GOOD, ordered="2026-03-20", due="2026-03-02")
    checks = _checks(swapped)
    assert checks["due"].factor == checks["ordered"].factor == X.ORDER_FACTOR
    assert "rule due >= ordered fails: 2026-03-02 >= 2026-03-20" in checks["due"].reasons[0]
    assert _checks(dict(GOOD, rate=1.5))["rate"].factor <= X.ORDER_FACTOR
    assert "rate" not in _checks(dict(GOOD, rate=None))  # a null is never checked, nor fails a rule


def test_optional_terms_count_as_zero_and_other_nulls_leave_a_rule_unchecked():
    doc = {
        "name": "bill",
        "fields": {k: {"kind": "amount"} for k in ("net", "tip", "total")},
        "rules": [{"check": "net + tip = total", "optional": ["tip"]}],
    }
    schema = compile_schema(doc)
    text = "Net 10.00  Total 12.00"
    assert (
        run_heuristics(text, {"net": 10.0, "tip": None, "total": 12.0}, schema)["total"].factor == X.ARITHMETIC_FACTOR
    )
    with_tip = run_heuristics(text, {"net": 10.0, "tip": 2.0, "total": 12.0}, schema)
    assert with_tip["total"].factor == 1.0 and with_tip["tip"].factor == F.UNGROUNDED_FACTOR  # 2.00 is not there
    assert run_heuristics(text, {"net": None, "tip": None, "total": 12.0}, schema)["total"].factor == 1.0


KINDS = {
    "name": "kinds",
    "fields": {
        "iban": {"kind": "identifier", "validator": "iban"},
        "status": {"kind": "enum", "values": {"paid": ["paid", "bezahlt"], "open": ["open", "offen", "unpaid"]}},
        "hazardous": {"kind": "boolean", "cues": {"true": ["dangerous goods"], "false": ["non-hazardous"]}},
        "email": {"kind": "email"},
        "phone": {"kind": "phone"},
        "site": {"kind": "url"},
        "weight": {"kind": "quantity", "units": ["kg"]},
        "collected_at": {"kind": "time"},
    },
}
KIND_DOC = (
    "IBAN DE89 3704 0044 0532 0130 00 - Status: bezahlt - Contains dangerous goods\n"
    "Mail ops@nordhafen.de, call 030 1234567, see www.nordhafen.de/track?id=9 - 12,5 kg\n"
    "Collected 03/09/2026 05:31 PM\n"
)


def _kind_checks(**record) -> dict:
    schema = compile_schema(KINDS)
    return run_heuristics(KIND_DOC, schema.validate_data(record), schema)


def test_each_kind_grounds_its_value_in_its_own_way():
    checks = _kind_checks(
        iban="DE89370400440532013000",
        status="paid",
        hazardous=True,
        email="OPS@nordhafen.de",
        phone="+49 30 1234567",
        site="https://nordhafen.de/track?id=9",
        weight=12.5,
        collected_at="17:31",  # "05:31 PM" on the 24-hour clock
    )
    assert {path: (c.factor, c.reasons) for path, c in checks.items() if c.factor < 1} == {}
    assert all(c.verified for c in checks.values())


def test_each_kind_lowers_a_value_the_document_does_not_back():
    checks = _kind_checks(
        iban="DE89370400440532013001",  # one digit off: not in the text, and the checksum fails
        status="open",  # the document says bezahlt
        hazardous=False,  # the document names dangerous goods
        email="ops@nordhafen.com",
        phone="030 7654321",
        site="www.nordhafen.de/track?id=8",
        weight=21.5,
        collected_at="05:31",  # the print's 05:31 is PM
    )
    assert checks["iban"].factor == pytest.approx(F.UNGROUNDED_FACTOR * F.INVALID_FORMAT_FACTOR)
    assert "not a valid IBAN" in " ".join(checks["iban"].reasons)
    assert checks["status"].factor == F.CONTRADICTED_FACTOR and "paid" in checks["status"].reasons[0]
    assert checks["hazardous"].factor == F.CONTRADICTED_FACTOR
    for path in ("email", "phone", "site", "weight", "collected_at"):
        assert checks[path].factor <= F.UNGROUNDED_FACTOR, path
    assert "time 05:31 not found" in checks["collected_at"].reasons[0]


@pytest.mark.parametrize(
    "given,held",
    [("17:31", "17:31"), ("5:31 PM", "17:31"), ("5:31 p.m.", "17:31"), ("12:05 AM", "00:05"), ("9:05", "09:05"),
     ("14h32", "14:32"), ("14:32:08", "14:32:08"), ("", None), (None, None)],
)  # fmt: skip
def test_a_time_of_day_is_held_on_the_24_hour_clock(given, held):
    assert compile_schema(KINDS).validate_data({"collected_at": given})["collected_at"] == held


@pytest.mark.parametrize("given", ["25:00", "noon", "17:61", 1731, "17:31 tomorrow"])
def test_a_value_that_is_no_time_of_day_is_refused_naming_the_form(given):
    with pytest.raises(RecordError, match=r"collected_at.*time of day as HH:MM"):
        compile_schema(KINDS).validate_data({"collected_at": given})


@pytest.mark.parametrize(
    "printed,value",
    [
        ("Date 2026-03-09 05:31 PM", "17:31"),
        ("09/03/2026 5:31p", "17:31"),
        ("le 09/03/2026 à 17h31", "17:31"),
        ("Datum: 09.03.2026 17.31 Uhr", "17:31"),
        ("Dato 09.03.2026 kl. 17.31", "17:31"),
        ("2026年3月9日 17時31分", "17:31"),
        ("2026-03-09T17:31:08+01:00", "17:31:08"),
        ("Datum:09.03.26 Uhrzeit:17:31:08 Bon: 00320", "17:31"),
        ("2026-03-09 17:31:08", "17:31"),  # hours and minutes of a print with seconds
        ("2026-03-09 17:31", "17:31:00"),
        ("12:05 AM", "00:05"),
        ("9/03/2026 5.31pm", "17:31"),  # a dotted time with its PM
        ("09/03/2026 5:31 p", "17:31"),
        ("2026-03-09 17 h 31", "17:31"),  # Quebec
        ("09/03/2026 17 h 31 min", "17:31"),
        ("09/03/2026 เวลา 17.31 น.", "17:31"),  # Thai
        ("03/09/26  1731  PUMP 06", "17:31"),  # a fuel till's four digits after its date
        ("DATE 20260309 TIME 173108", "17:31:08"),
        ("09/03/2026 5:31 μ.μ.", "17:31"),  # Greek PM
        ("2026.03.09 오후 5:31", "17:31"),  # Korean PM before the time
        ("2026-03-09 下午05:31", "17:31"),
        ("2026年3月9日(月) 午後5時31分", "17:31"),
        ("2026/03/09  05:31 م", "17:31"),  # Arabic PM
        ("2026-03-09 오전 9:05", "09:05"),
        # a hostile reader's forms
        ("09/03/2026 PM 05:31", "17:31"),
        ("09/03/2026 05:31  PM", "17:31"),
        ("09/03/2026 05:31 (PM)", "17:31"),
        ("2026/03/09 05:31 مساءً", "17:31"),
        ("1405/12/18 05:31 ب.ظ", "17:31"),
        ("2026年3月9日 17点31分", "17:31"),
        ("Dato 09.03.2026 Kl.17:31", "17:31"),
        ("kl.17.31", "17:31"),
        ("Tanggal 09/03/2026 Jam 17.31", "17:31"),
        ("DATA 09/03/2026 ORE 17.31", "17:31"),
        ("9 Mar 2026 at 17.31", "17:31"),
        ("09 MAR 2026 17.31", "17:31"),
        ("Time of sale 1731 hrs", "17:31"),
        ("09/03/2026,17:31", "17:31"),
    ],
)
def test_a_time_is_grounded_in_any_form_a_document_prints_it(printed, value):
    schema = compile_schema(KINDS)
    check = run_heuristics(printed, schema.validate_data({"collected_at": value}), schema)["collected_at"]
    assert (check.factor, check.verified) == (1.0, True), check.reasons


@pytest.mark.parametrize(
    "printed,value",
    [
        ("Paid 05:31 PM", "05:31"),  # the print is PM
        ("Total 17.31 EUR", "17:31"),  # an amount, not a time: no time's word, date or "Uhr"
        ("2026-03-09 17:31:08", "17:31:09"),  # another second
        ("UTC+01:00 at 9:00", "01:00"),  # an offset is no time of day
        ("2026-03-09 下午05:31", "05:31"),  # PM before the time
        ("Datum:14.05.20", "14:05"),  # a date's digits, not a time with seconds
        ("Qty 1731", "17:31"),  # four digits with no time's word or date before them
        ("09/03/2026 13:15\nMILK   1.15 A\n", "01:15"),  # a price and its VAT code
        ("09/03/2026 13:15\nLATTE   5.31 P\n", "17:31"),
        ("09/03/2026 13:15\nSKU X12H45\n", "12:45"),  # a code's letters and digits
        ("09/03/2026 05:31 P1 #0045", "17:31"),  # a register's "P1", no PM
        ("09/03/2026 PM 05:31", "05:31"),
    ],
)
def test_a_time_the_document_does_not_print_is_lowered(printed, value):
    schema = compile_schema(KINDS)
    check = run_heuristics(printed, schema.validate_data({"collected_at": value}), schema)["collected_at"]
    assert check.factor == F.UNGROUNDED_FACTOR and not check.verified


def test_a_number_without_its_unit_and_an_enum_without_its_words_cost_a_little():
    schema = compile_schema(KINDS)
    text = "Weight 12.5 (gross). Status unknown."
    checks = run_heuristics(text, schema.validate_data({"weight": 12.5, "status": "paid"}), schema)
    assert checks["weight"].factor == F.NO_UNIT_FACTOR
    assert checks["status"].factor == F.NO_CUE_FACTOR


@pytest.mark.parametrize(
    "line,paid,not_paid",
    [
        ("Geg. EC-Cash   EUR 1,99", "card", "cash"),  # a German card payment, not cash
        ("Paid with gift card   12.00", "other", "card"),  # a voucher, not a card
    ],
)
def test_an_enums_word_inside_another_values_longer_words_says_the_other(line, paid, not_paid):
    schema = catalog.builtin("receipt")
    text = f"Shop\nSUMME  1,99\n{line}\n"

    def payment(value):
        return run_heuristics(text, schema.validate_data({"total": 1.99, "payment_method": value}), schema)[
            "payment_method"
        ]

    assert payment(paid).factor == 1.0 and payment(paid).verified
    assert payment(not_paid).factor == F.CONTRADICTED_FACTOR


# --- the pipeline on a schema with line items -----------------------------------------------
def test_the_critic_judges_every_value_by_path_and_a_missing_verdict_flags_that_value():
    schema = compile_schema(ORDER)
    paths = [leaf.path for leaf in leaves(schema.fields, schema.validate_data(GOOD)) if leaf.value is not None]
    verdicts = [{"field": p, "confidence": 0.95, "grounded": True, "reason": "stated"} for p in paths]
    critic_answer = {"verdicts": [v for v in verdicts if v["field"] != "lines[1].sku"], "overall_confidence": 0.9}
    generator = ScriptedLLMClient([json.dumps(GOOD)])
    critic = ScriptedLLMClient([json.dumps(critic_answer)])
    pipeline = ExtractionPipeline(load_settings(), generator_client=generator, critic_client=critic)
    result = pipeline.extract(DOC, schema=ORDER)
    assert result.status == "needs_review"
    assert [f.field for f in result.flagged_fields] == ["lines[1].sku"]
    assert "no verdict" in result.flagged_fields[0].reason
    assert result.schema_info.name == "order" and result.schema_info.hash == schema.hash
    asked = critic.requests[0].messages[-1].content
    assert "lines[1].amount" in asked and "lines[1].qty" in asked
    assert '"lines": [' in generator.requests[0].system and "A small order." in generator.requests[0].system


def test_a_required_value_the_generator_left_null_is_flagged():
    generator = ScriptedLLMClient([json.dumps(dict(GOOD, number=None))])
    pipeline = ExtractionPipeline(load_settings(), generator_client=generator)
    result = pipeline.extract(DOC, schema=ORDER, heuristics_only=True)
    assert result.status == "needs_review"
    assert [(f.field, f.value) for f in result.flagged_fields] == [("number", None)]


# --- how a schema travels --------------------------------------------------------------------
def test_a_built_in_travels_by_name_and_hash_and_any_other_schema_whole():
    reference, compiled = to_wire("receipt")
    assert reference == {"name": "receipt", "hash": builtin("receipt").hash} and compiled is builtin("receipt")
    reference, compiled = to_wire(ORDER)
    assert reference["document"] == compiled.canonical and reference["hash"] == compiled.hash
    assert resolve(reference).hash == compiled.hash
    assert resolve(None).name == "invoice"


def test_a_worker_refuses_a_bare_built_in_name():
    """A name without its hash pins nothing: this worker's receipt may not be the one
    the producer's version meant. vetq's producers send the pinned reference."""
    with pytest.raises(SchemaMismatchError, match="bare name, without the hash") as caught:
        resolve("receipt")
    assert caught.value.code == ErrorCode.SCHEMA_MISMATCH
    reference, _ = to_wire("receipt")
    assert resolve(reference) is builtin("receipt")


def test_a_worker_refuses_a_schema_that_hashes_otherwise():
    with pytest.raises(SchemaMismatchError, match="different vetq versions") as caught:
        resolve({"name": "receipt", "hash": "0" * 64})
    assert caught.value.code == ErrorCode.SCHEMA_MISMATCH
    reference, _ = to_wire(ORDER)
    tampered = copy.deepcopy(reference)
    tampered["document"]["fields"]["rate"]["kind"] = "amount"
    tampered["hash"] = "1" * 64
    with pytest.raises(SchemaMismatchError, match="changed on the way"):
        resolve(tampered)


def _compiles_when_threads_ask_at_once(monkeypatch, module, ask, threads: int = 8) -> int:
    """How many times `module.compile_schema` runs when `threads` threads call `ask`
    together (each compile made slow enough that all of them ask before one is done)."""
    compiled: list[str] = []
    real = module.compile_schema

    def slow_compile(*args, **kwargs):
        compiled.append(threading.current_thread().name)
        time.sleep(0.05)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, "compile_schema", slow_compile)
    start = threading.Barrier(threads)
    answers: list[object] = []

    def worker_thread():
        start.wait()
        answers.append(ask())

    pool = [threading.Thread(target=worker_thread) for _ in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join(timeout=30)
    assert len(answers) == threads and len({id(a) for a in answers}) == 1  # one schema object for all
    return len(compiled)


def test_a_worker_compiles_a_schema_once_when_its_threads_all_start_with_it(monkeypatch):
    """A thread worker's first burst: every thread takes a job naming the same schema at
    once. Each used to compile it (~50-200 ms of CPU under one interpreter lock: a
    250-thread worker's first 250 jobs cost 20 s of CPU), now the first compiles it and
    the others wait for that one."""
    monkeypatch.setattr(catalog, "_builtins", {})
    assert _compiles_when_threads_ask_at_once(monkeypatch, catalog, lambda: builtin("receipt")) == 1
    reference, _ = to_wire(_order(version=99))
    monkeypatch.setattr(wire, "_compiled", OrderedDict())
    assert _compiles_when_threads_ask_at_once(monkeypatch, wire, lambda: resolve(reference)) == 1


def test_an_inline_schema_over_the_size_limit_is_refused_before_it_is_sent():
    big = _order(description="x" * 2000)
    with pytest.raises(SchemaInvalidError, match="VETQ_SCHEMA_MAX_BYTES"):
        to_wire(big, SchemaLimits(max_bytes=1024))


def test_a_schema_file_is_read_as_yaml_or_json_and_a_bad_one_is_named(tmp_path):
    (tmp_path / "o.yaml").write_text(yaml.safe_dump(ORDER, sort_keys=False))
    (tmp_path / "o.json").write_text(json.dumps(ORDER))
    assert load(tmp_path / "o.yaml").hash == load(str(tmp_path / "o.json")).hash
    (tmp_path / "bad.yaml").write_text("name: x\nfields: [unclosed\n")
    with pytest.raises(SchemaInvalidError, match="not valid YAML at line"):
        load(tmp_path / "bad.yaml")
    with pytest.raises(SchemaInvalidError, match="no schema file"):
        load(tmp_path / "missing.yaml")
    with pytest.raises(SchemaInvalidError, match="no built-in schema 'recipe'"):
        load("recipe")


# --- a pydantic class as a schema -----------------------------------------------------------
class Line(BaseModel):
    sku: str | None = None
    amount: float | None = Field(None, json_schema_extra={"kind": "amount"})


class Bill(BaseModel):
    """A bill from a supplier."""

    __vetq_schema__ = {"name": "bill", "version": 2, "rules": [{"check": "sum(lines[].amount) = total"}]}

    supplier: str = Field(description="who sends the bill", json_schema_extra={"party": "seller"})
    issued: date | None = None
    issued_at: dt_time | None = None
    status: Literal["paid", "open"] | None = None
    total: float | None = Field(None, json_schema_extra={"kind": "amount", "labels": ["@total"]})
    lines: list[Line] = Field(default_factory=list)


def test_a_pydantic_class_is_a_schema_with_the_same_options():
    schema = load(Bill)
    assert (schema.name, schema.version, schema.description) == ("bill", 2, "A bill from a supplier.")
    kinds = {path: f.kind for path, f in schema.by_path.items()}
    assert kinds == {
        "supplier": "text", "issued": "date", "issued_at": "time", "status": "enum", "total": "amount",
        "lines[].sku": "text", "lines[].amount": "amount", "lines": "list",
    }  # fmt: skip
    assert schema.by_path["supplier"].required and not schema.by_path["issued"].required
    assert schema.by_path["supplier"].description == "who sends the bill"
    assert schema.by_path["supplier"].party == "seller" and schema.by_path["issued"].party is None
    assert set(schema.by_path["status"].values) == {"paid", "open"}
    assert [r.comparison.text for r in schema.rules] == ["sum(lines[].amount) = total"]


def test_a_class_field_without_a_kind_is_refused_naming_it():
    class Odd(BaseModel):
        blob: bytes

    with pytest.raises(SchemaInvalidError, match=r"Odd\.blob: no schema kind"):
        load(Odd)
