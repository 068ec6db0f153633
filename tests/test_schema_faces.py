"""Schemas at every face a user meets them: the `vetq schemas` verbs, `--schema` on
validate, extract and batches, the Python client (a pydantic class, a dict, the wire
reference a worker checks), and the MCP server's `list_schemas` and VETQ_MCP_SCHEMAS.

The CLI runs as a subprocess from the repository's root, so the sample schema is named
as a user would type it (eval/samples/bank_statement.yaml). Every wait is bounded."""

from __future__ import annotations

import copy
import datetime as dt
import json
import re
import uuid
from pathlib import Path

import pytest
import yaml
from pydantic import BaseModel, Field

from tests.conftest import GLOBEX, GLOBEX_DATA, serving_fake_provider, starts_processes
from tests.test_cli import vetq as run_cli
from tests.test_mcp import McpServer, _server_env, payload
from vetq.core.queue import TASK_VALIDATE
from vetq.core.redis_keys import SUBMITTED_KEY_PREFIX
from vetq.core.schemas import SchemaInvalidError, SchemaMismatchError, builtin, builtin_names, compile_schema, load
from vetq.core.schemas.compiled import schema_hash

REPO = Path(__file__).resolve().parents[1]
SAMPLE_SCHEMA = "eval/samples/bank_statement.yaml"
SAMPLE_TEXT_FILE = "eval/samples/bank_statement.txt"
BANK_TEXT = (REPO / SAMPLE_TEXT_FILE).read_text(encoding="utf-8")
BANK_DOC = yaml.safe_load((REPO / SAMPLE_SCHEMA).read_text(encoding="utf-8"))
BANK_HASH = load(REPO / SAMPLE_SCHEMA).hash
BUILT_INS = ["invoice", "purchase_order", "receipt", "shipping_notice"]
JOB_TIMEOUT_S = 60
CLI_TIMEOUT_S = 90

BANK_DATA = {
    "account_holder": "Liska Brandt Design GmbH",
    "iban": "DE89370400440532013000",
    "period_start": "2026-03-01",
    "period_end": "2026-03-31",
    "currency": "EUR",
    "opening_balance": 4210.55,
    "closing_balance": 5414.15,
    "transactions": [
        {"date": "2026-03-03", "description": "Invoice 2026-031 Hafenkontor KG", "amount": 1850.00},
        {"date": "2026-03-10", "description": "Rent March, Speicherstadt Immobilien", "amount": -1200.00},
        {"date": "2026-03-18", "description": "Card payment, Papier & Co", "amount": -86.40},
        {"date": "2026-03-27", "description": "Invoice 2026-034 Elbmarsch Verlag", "amount": 640.00},
    ],
}
BANK_PATHS = {
    "account_holder",
    "iban",
    "period_start",
    "period_end",
    "currency",
    "opening_balance",
    "closing_balance",
    *(f"transactions[{i}].{name}" for i in range(4) for name in ("date", "description", "amount")),
}

RECEIPT_TEXT = (
    "CORNER CAFE\n12 Mill Lane\nReceipt 4471\n2026-03-14 08:15\n"
    "Flat white 2 x 3.50 7.00\nCroissant 1 x 2.80 2.80\n"
    "Subtotal 9.80\nVAT 1.96\nTotal 11.76\nPaid by card\nEUR\n"
)
RECEIPT_DATA = {
    "merchant_name": "CORNER CAFE",
    "merchant_address": "12 Mill Lane",
    "receipt_number": "4471",
    "date": "2026-03-14",
    "time": "08:15",
    "items": [
        {"description": "Flat white", "quantity": 2, "unit_price": 3.5, "amount": 7.0},
        {"description": "Croissant", "quantity": 1, "unit_price": 2.8, "amount": 2.8},
    ],
    "subtotal": 9.8,
    "tax": 1.96,
    "total": 11.76,
    "payment_method": "card",
    "currency": "EUR",
}


def bank_data(**changes):
    data = copy.deepcopy(BANK_DATA)
    data.update(changes)
    return data


def vetq(*args, env=None, input=None, timeout=CLI_TIMEOUT_S):
    return run_cli(*args, env=env, input=input, timeout=timeout, cwd=REPO)


def only_line(done):
    """The one JSON line a command printed (and nothing else on stdout, no traceback)."""
    lines = done.stdout.splitlines()
    assert len(lines) == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    return json.loads(lines[0])


def submitted_keys(client):
    return client.redis().keys(f"{SUBMITTED_KEY_PREFIX}*")


# ============================================================== vetq schemas list|show|check


@pytest.mark.processes
def test_schemas_list_prints_the_four_built_ins():
    done = vetq("schemas", "list")
    assert done.returncode == 0, done.stderr
    listed = [json.loads(line) for line in done.stdout.splitlines()]
    assert [entry["name"] for entry in listed] == BUILT_INS
    for entry in listed:
        schema = builtin(entry["name"])
        assert set(entry) == {"name", "version", "hash", "description", "fields"}
        assert re.fullmatch(r"[0-9a-f]{64}", entry["hash"]) and entry["hash"] == schema.hash
        assert entry["version"] == schema.version >= 1
        assert entry["description"] and entry["description"] == schema.description
        assert entry["fields"] == len(schema.by_path) > 0
    assert len({entry["hash"] for entry in listed}) == 4


@pytest.mark.processes
def test_schemas_show_a_built_in_and_a_file():
    receipt = only_line(vetq("schemas", "show", "receipt"))
    assert receipt["schema"] == {"name": "receipt", "version": 2, "hash": builtin("receipt").hash}
    assert receipt["document"] == builtin("receipt").canonical
    assert receipt["document"]["fields"]["items"]["fields"]["amount"]["kind"] == "amount"
    # The hash is the canonical document's: anyone holding the document can check it.
    assert schema_hash(receipt["document"]) == receipt["schema"]["hash"]

    done = vetq("schemas", "show", SAMPLE_SCHEMA)
    assert done.returncode == 0, done.stderr
    # The size limits a job's schema meets apply to what `show` reads, as to `check`.
    for verb in ("show", "check"):
        small = vetq("schemas", verb, SAMPLE_SCHEMA, env={"VETQ_SCHEMA_MAX_FIELDS": "5"})
        assert small.returncode == 2, (verb, small.stdout + small.stderr)
        assert "VETQ_SCHEMA_MAX_FIELDS" in small.stdout + small.stderr, verb
    shown = only_line(done)
    assert shown["schema"] == {"name": "bank_statement", "version": 1, "hash": BANK_HASH}
    document = shown["document"]
    assert document["description"] == BANK_DOC["description"]
    assert set(document["fields"]) == set(BANK_DOC["fields"])
    assert document["fields"]["transactions"]["fields"]["amount"]["kind"] == "amount"
    assert document["fields"]["iban"]["validator"] == "iban"
    assert [rule["check"] for rule in document["rules"]] == [rule["check"] for rule in BANK_DOC["rules"]]
    # What `show` prints compiles back to the very same schema.
    assert compile_schema(document).hash == BANK_HASH


@pytest.mark.processes
def test_schemas_check_accepts_the_sample_and_the_same_schema_as_json(tmp_path):
    done = vetq("schemas", "check", SAMPLE_SCHEMA)
    assert done.returncode == 0, done.stdout + done.stderr
    checked = only_line(done)
    assert checked["status"] == "ok"
    assert checked["schema"] == {"name": "bank_statement", "version": 1, "hash": BANK_HASH}
    assert checked["fields"] == 11
    assert checked["rules"] == [
        "period_end >= period_start",
        "opening_balance + sum(transactions[].amount) = closing_balance",
    ]
    # The same schema written as JSON, with a default spelled out, has the same hash.
    as_json = tmp_path / "bank.json"
    as_json.write_text(json.dumps({**BANK_DOC, "version": 1}, indent=2))
    again = vetq("schemas", "check", str(as_json))
    assert again.returncode == 0, again.stdout + again.stderr
    assert only_line(again)["schema"]["hash"] == BANK_HASH


BAD_SCHEMAS = {
    "unknown_kind": ("name: bad\nfields:\n  x:\n    kind: moneyz\n", ["fields.x.kind", "moneyz"]),
    "rule_names_a_missing_field": (
        "name: bad\nfields:\n  total:\n    kind: amount\nrules:\n  - check: subtotal + tax = total\n",
        ["rules[0].check", "subtotal"],
    ),
    "type_contains_itself": (
        "name: bad\ntypes:\n  party:\n    fields:\n      sub:\n        kind: party\n"
        "fields:\n  seller:\n    kind: party\n",
        ["types.party", "contains itself"],
    ),
    "pattern_does_not_compile": (
        'name: bad\nfields:\n  code:\n    kind: identifier\n    pattern: "([a-z"\n',
        ["fields.code.pattern", "does not compile"],
    ),
    "invalid_yaml": ("name: bad\nfields: [unclosed\n  x: {kind: text\n", ["not valid YAML", "line"]),
    "missing_file": (None, ["no schema file", "missing.yaml"]),
}


@pytest.mark.processes
@pytest.mark.parametrize("case", list(BAD_SCHEMAS))
def test_schemas_check_refuses_a_bad_file_naming_where(case, tmp_path):
    content, expected = BAD_SCHEMAS[case]
    path = tmp_path / ("missing.yaml" if content is None else f"{case}.yaml")
    if content is not None:
        path.write_text(content)
    done = vetq("schemas", "check", str(path))
    assert done.returncode == 2, done.stdout + done.stderr
    error = only_line(done)
    assert error["status"] == "error" and error["error"]["code"] == "SCHEMA_INVALID", error
    for fragment in expected:
        assert fragment in error["error"]["message"], error


@pytest.mark.processes
def test_schemas_check_refuses_a_type_that_contains_itself_even_when_unused(tmp_path):
    path = tmp_path / "unused_cycle.yaml"
    path.write_text(
        "name: bad\ntypes:\n  party:\n    fields:\n      sub:\n        kind: party\nfields:\n  x:\n    kind: text\n"
    )
    done = vetq("schemas", "check", str(path))
    assert done.returncode == 2, done.stdout
    error = only_line(done)
    assert error["error"]["code"] == "SCHEMA_INVALID" and "types.party" in error["error"]["message"]


# ============================================================== vetq validate --schema FILE


def validate_bank(data, tmp_path):
    """`vetq validate` of the sample on the embedded default (vetq's own Redis and worker)."""
    return vetq(
        "validate",
        "--heuristics-only",
        "--schema",
        SAMPLE_SCHEMA,
        "--file",
        SAMPLE_TEXT_FILE,
        "--data",
        json.dumps(data),
        env={"VETQ_HOME": str(tmp_path)},
    )


@pytest.mark.processes
def test_validate_a_correct_bank_statement_is_ok(tmp_path):
    done = validate_bank(BANK_DATA, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    result = only_line(done)
    assert result["status"] == "ok" and result["flagged_fields"] == []
    assert result["schema"] == {"name": "bank_statement", "version": 1, "hash": BANK_HASH}
    assert set(result["field_confidence"]) == BANK_PATHS
    assert result["data"]["transactions"][2] == BANK_DATA["transactions"][2]


@pytest.mark.processes
def test_validate_a_wrong_closing_balance_flags_it_by_the_rule(tmp_path):
    done = validate_bank(bank_data(closing_balance=5514.15), tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    result = only_line(done)
    assert result["status"] == "needs_review" and result["schema"]["name"] == "bank_statement"
    assert [f["field"] for f in result["flagged_fields"]] == ["closing_balance"]
    reason = result["flagged_fields"][0]["reason"]
    assert "arithmetic" in reason and "closing_balance" in reason, reason


MISFITS = {
    "amount_as_a_string": (
        lambda d: d["transactions"][1].update(amount="-1200.00"),
        ["transactions[1].amount", "number"],
    ),
    "unknown_field": (lambda d: d.update(branch_code="NHB-01"), ["branch_code"]),
    "list_where_an_object_belongs": (
        lambda d: d["transactions"].__setitem__(0, ["2026-03-03", 1850.0]),
        ["transactions[0]"],
    ),
}


@pytest.mark.processes
@pytest.mark.parametrize("case", list(MISFITS))
def test_validate_data_that_does_not_fit_the_schema_names_the_path(case, tmp_path):
    spoil, fragments = MISFITS[case]
    data = bank_data()
    spoil(data)
    done = validate_bank(data, tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    error = only_line(done)["error"]
    assert error["code"] == "INVALID_INPUT" and "bank_statement" in error["message"], error
    for fragment in fragments:
        assert fragment in error["message"], error


# ============================================================== vetq extract --schema FILE


VERDICT_LIST = re.compile(r"Give one verdict for each of these paths: ([^\n]*)")


class ModelScript:
    """The Generator answers `record`; the Critic a grounded verdict for each path it was asked about."""

    def __init__(self, record):
        self.record = record
        self.generator_bodies = []
        self.critic_paths = []

    def __call__(self, path, body):
        messages = body["messages"]
        if body.get("model") == "fake-critic":
            asked = VERDICT_LIST.search(messages[-1]["content"])
            assert asked is not None, messages[-1]["content"][:300]
            paths = [p.strip() for p in asked.group(1).split(",") if p.strip()]
            self.critic_paths.append(paths)
            verdicts = [{"field": p, "confidence": 0.95, "grounded": True, "reason": "stated"} for p in paths]
            return json.dumps({"verdicts": verdicts, "overall_confidence": 0.93, "summary": "checked by the fake"})
        self.generator_bodies.append(body)
        return json.dumps(self.record)


def extract_bank(home):
    return vetq(
        "extract",
        "--schema",
        SAMPLE_SCHEMA,
        "--file",
        SAMPLE_TEXT_FILE,
        env={
            "VETQ_HOME": str(home),
            "VETQ_GENERATOR": "openai:fake-generator",
            "VETQ_CRITIC": "openai:fake-critic",
            "VETQ_CACHE_TTL_S": "0",  # each run asks the models afresh
        },
    )


@pytest.mark.processes
def test_extract_with_a_schema_file_through_the_fake_models(monkeypatch, tmp_path):
    script = ModelScript(BANK_DATA)
    with serving_fake_provider(monkeypatch, script):
        done = extract_bank(tmp_path / "right")
    assert done.returncode == 0, done.stdout + done.stderr
    result = only_line(done)
    assert result["status"] == "ok" and result["schema"]["name"] == "bank_statement", result
    assert result["schema"]["hash"] == BANK_HASH
    assert result["critic_summary"] == "checked by the fake"
    assert set(result["field_confidence"]) == BANK_PATHS
    assert result["field_confidence"]["transactions[2].amount"] >= 0.7
    spans = result["field_provenance"]
    assert set(spans) <= BANK_PATHS and "transactions[2].amount" in spans
    for path, path_spans in spans.items():
        for span in path_spans:
            assert BANK_TEXT[span["start"] : span["end"]] == span["text"], path
    assert [s["text"] for s in spans["transactions[2].amount"]] == ["-86.40"]
    assert [s["text"] for s in spans["iban"]] == ["DE89 3704 0044 0532 0130 00"]

    # The Generator was told the schema: its description and a skeleton with the list.
    assert len(script.generator_bodies) == 1
    system = script.generator_bodies[0]["messages"][0]
    assert system["role"] == "system"
    assert BANK_DOC["description"] in system["content"]
    assert re.search(r'"transactions": \[.*"amount": number or null', system["content"], re.S), system["content"]
    # The Critic was asked about every value, by its path.
    assert len(script.critic_paths) == 1 and set(script.critic_paths[0]) == BANK_PATHS


@pytest.mark.processes
def test_extract_flags_only_the_wrong_transaction_amount(monkeypatch, tmp_path):
    wrong = bank_data()
    wrong["transactions"][2]["amount"] = -68.40
    with serving_fake_provider(monkeypatch, ModelScript(wrong)):
        done = extract_bank(tmp_path / "wrong")
    assert done.returncode == 1, done.stdout + done.stderr
    result = only_line(done)
    assert result["status"] == "needs_review" and result["data"]["transactions"][2]["amount"] == -68.4
    flagged = {f["field"]: f for f in result["flagged_fields"]}
    assert set(flagged) == {"transactions[2].amount"}, flagged
    assert "arithmetic" in flagged["transactions[2].amount"]["reason"]
    for i in (0, 1, 3):
        assert result["field_confidence"][f"transactions[{i}].amount"] >= 0.7
    assert result["field_confidence"]["closing_balance"] >= 0.7


RECEIPT_CASE = next(
    json.loads(line)
    for line in (REPO / "eval/golden/receipt/cases.jsonl").read_text(encoding="utf-8").splitlines()
    if line.strip() and not json.loads(line)["injected_error"]
)


@pytest.mark.processes
def test_extract_with_a_built_in_schema_name_through_the_fake_models(monkeypatch, tmp_path):
    """`--schema receipt` names the built-in, not a file: the job is verified against the
    receipt (its hash on the result), and the Generator is told the receipt's fields."""
    text_file = tmp_path / "receipt.txt"
    text_file.write_text(RECEIPT_CASE["text"], encoding="utf-8")
    script = ModelScript(RECEIPT_CASE["expected"])
    env = {
        "VETQ_HOME": str(tmp_path / "home"),
        "VETQ_GENERATOR": "openai:fake-generator",
        "VETQ_CRITIC": "openai:fake-critic",
        "VETQ_CACHE_TTL_S": "0",
    }
    with serving_fake_provider(monkeypatch, script):
        done = run_cli("extract", "--schema", "receipt", "--file", str(text_file), env=env, timeout=CLI_TIMEOUT_S)
    assert done.returncode == 0, done.stdout + done.stderr
    result = only_line(done)
    receipt = builtin("receipt")
    assert result["status"] == "ok", result
    assert result["schema"] == receipt.info.model_dump()
    paths = {path for path in result["field_confidence"]}
    assert {"merchant_name", "total", "items[0].amount"} <= paths, sorted(paths)
    assert len(script.generator_bodies) == 1
    assert receipt.description in script.generator_bodies[0]["messages"][0]["content"]
    assert set(script.critic_paths[0]) <= paths and "items[0].amount" in script.critic_paths[0]


@pytest.mark.processes
def test_eval_schema_runs_that_schemas_golden_set_through_the_cli(tmp_path):
    env = {"VETQ_HOME": str(tmp_path)}
    done = run_cli("eval", "--schema", "receipt", env=env, timeout=CLI_TIMEOUT_S * 2)
    assert done.returncode == 0, done.stdout + done.stderr
    receipt_cases = (REPO / "eval/golden/receipt/cases.jsonl").read_text(encoding="utf-8").count("\n")
    assert done.stdout.startswith(f"vetq extraction eval, receipt (critic): {receipt_cases} examples"), done.stdout
    assert "gate passed" in done.stdout
    # Without the Critic, the purchase orders' critic-only mistakes go silent: the gate
    # fails (exit 1) and names them, so the schema named is the set that ran.
    done = run_cli("eval", "--schema", "purchase_order", "--heuristics-only", env=env, timeout=CLI_TIMEOUT_S * 2)
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout.startswith("vetq extraction eval, purchase_order (heuristics only)"), done.stdout
    assert "inj-buyer-as-supplier-po-thistledown-gbp supplier_name" in done.stdout and "(SILENT)" in done.stdout
    assert "GATE FAILED" in done.stderr
    unknown = run_cli("eval", "--schema", "no_such_schema", env=env)
    assert unknown.returncode == 2 and "invalid choice" in unknown.stderr


# ============================================================== batches


@pytest.fixture
def cli_env(redis_url, tmp_path):
    """The CLI as a producer of a running service (a worker thread in this process)."""
    return {"VETQ_REDIS_URL": redis_url, "VETQ_HOME": str(tmp_path)}


def test_batch_lines_carry_their_own_schema(service, cli_env):
    lines = [
        {"id": "r", "schema": "receipt", "text": RECEIPT_TEXT, "data": RECEIPT_DATA},
        {"id": "b", "schema": SAMPLE_SCHEMA, "text": BANK_TEXT, "data": BANK_DATA},
        {"id": "x", "schema": "no_such_schema", "text": BANK_TEXT, "data": BANK_DATA},
        {"id": "d", "text": BANK_TEXT, "data": bank_data(closing_balance=5514.15)},  # the run's schema
    ]
    done = vetq(
        "validate",
        "--batch",
        "--heuristics-only",
        "--schema",
        SAMPLE_SCHEMA,
        input="".join(json.dumps(line) + "\n" for line in lines),
        env=cli_env,
    )
    out = [json.loads(line) for line in done.stdout.splitlines()]
    assert [o.get("id") for o in out] == ["r", "b", "x", "d"], done.stdout + done.stderr
    assert [o["status"] for o in out] == ["ok", "ok", "error", "needs_review"], out
    assert out[0]["schema"] == {"name": "receipt", "version": 2, "hash": builtin("receipt").hash}
    assert out[1]["schema"]["hash"] == out[3]["schema"]["hash"] == BANK_HASH
    assert out[2]["error"]["code"] == "SCHEMA_INVALID" and "no_such_schema" in out[2]["error"]["message"]
    assert [f["field"] for f in out[3]["flagged_fields"]] == ["closing_balance"]
    assert done.returncode == 2  # the worst line: the schema that does not exist


def test_batch_with_a_missing_run_schema_fails_once_before_any_line(redis_url, tmp_path):
    import redis

    lines = [json.dumps({"id": n, "text": BANK_TEXT, "data": BANK_DATA}) for n in range(3)]
    done = vetq(
        "validate",
        "--batch",
        "--heuristics-only",
        "--schema",
        "missing.yaml",
        input="\n".join(lines) + "\n",
        env={"VETQ_REDIS_URL": redis_url, "VETQ_HOME": str(tmp_path)},
    )
    assert done.returncode == 2, done.stdout + done.stderr
    error = only_line(done)
    assert "id" not in error
    assert error["error"]["code"] == "SCHEMA_INVALID" and "missing.yaml" in error["error"]["message"]
    assert redis.Redis.from_url(redis_url).keys(f"{SUBMITTED_KEY_PREFIX}*") == []  # no job was sent


# ============================================================== the Python client


class Booking(BaseModel):
    date: dt.date | None = Field(None, description="the booking date")
    description: str | None = Field(None, description="the booking text as printed")
    amount: float | None = Field(None, description="negative for money leaving", json_schema_extra={"kind": "amount"})


class PyBankStatement(BaseModel):
    """A bank account statement for one period, with its transactions."""

    __vetq_schema__ = {
        "name": "py_bank_statement",
        "version": 3,
        "rules": [
            {"check": "period_end >= period_start"},
            {"check": "opening_balance + sum(transactions[].amount) = closing_balance"},
        ],
    }
    account_holder: str = Field(description="the person or company the account belongs to")
    iban: str = Field(json_schema_extra={"kind": "identifier", "validator": "iban"})
    period_start: dt.date | None = None
    period_end: dt.date | None = None
    currency: str | None = Field(None, json_schema_extra={"kind": "currency"})
    opening_balance: float | None = Field(None, json_schema_extra={"kind": "amount", "labels": ["opening balance"]})
    closing_balance: float | None = Field(None, json_schema_extra={"kind": "amount", "labels": ["closing balance"]})
    transactions: list[Booking] | None = None


def test_client_takes_a_pydantic_class_and_a_dict(service):
    client = service.client
    job = client.submit_validation(BANK_TEXT, BANK_DATA, schema=PyBankStatement, heuristics_only=True)
    result = job.result(timeout=JOB_TIMEOUT_S)
    assert result["status"] == "ok", result
    assert result["schema"] == load(PyBankStatement).info.model_dump()
    assert result["schema"]["name"] == "py_bank_statement" and result["schema"]["version"] == 3
    assert set(result["field_confidence"]) == BANK_PATHS

    # The class's rules travelled with it: a wrong closing balance breaks one.
    wrong = client.submit_validation(
        BANK_TEXT, bank_data(closing_balance=5514.15), schema=PyBankStatement, heuristics_only=True
    ).result(timeout=JOB_TIMEOUT_S)
    assert wrong["status"] == "needs_review"
    flagged = {f["field"]: f["reason"] for f in wrong["flagged_fields"]}
    assert list(flagged) == ["closing_balance"] and "arithmetic" in flagged["closing_balance"]

    # The document as a dict is the same schema as the file it came from.
    as_dict = client.submit_validation(BANK_TEXT, BANK_DATA, schema=BANK_DOC, heuristics_only=True)
    result = as_dict.result(timeout=JOB_TIMEOUT_S)
    assert result["status"] == "ok" and result["schema"] == {"name": "bank_statement", "version": 1, "hash": BANK_HASH}


def test_a_dict_with_the_same_fields_in_another_order_is_its_own_schema(service):
    """Field order is part of a schema's hash: the client's cache must not hand the
    second order the first one's reference."""
    client = service.client
    reordered = {**BANK_DOC, "fields": dict(reversed(list(BANK_DOC["fields"].items())))}
    reordered_hash = compile_schema(reordered).hash
    assert reordered_hash != BANK_HASH
    first = client.submit_validation(BANK_TEXT, BANK_DATA, schema=BANK_DOC, heuristics_only=True)
    second = client.submit_validation(BANK_TEXT, BANK_DATA, schema=reordered, heuristics_only=True)
    assert first.result(timeout=JOB_TIMEOUT_S)["schema"]["hash"] == BANK_HASH
    assert second.result(timeout=JOB_TIMEOUT_S)["schema"]["hash"] == reordered_hash


class NoKind(BaseModel):
    when: dt.datetime


def test_client_refuses_a_bad_schema_at_submit_and_sends_nothing(service):
    client = service.client
    bad_sources = [
        {"name": "bad", "fields": {"x": {"kind": "moneyz"}}},
        {**BANK_DOC, "rules": [{"check": "opening_balance + fees = closing_balance"}]},
        "no_such_schema",
        NoKind,
    ]
    for source in bad_sources:
        with pytest.raises(SchemaInvalidError):
            client.submit_validation(BANK_TEXT, BANK_DATA, schema=source, heuristics_only=True)
    with pytest.raises(SchemaInvalidError, match=re.escape("rules[0].check")):
        client.submit_extraction(BANK_TEXT, schema=bad_sources[1])
    assert submitted_keys(client) == []


def test_worker_refuses_a_built_in_whose_hash_is_not_its_own(service):
    client = service.client
    # The producer refuses the reference itself, before any job is sent ...
    with pytest.raises(SchemaMismatchError):
        client.submit_validation(
            RECEIPT_TEXT, RECEIPT_DATA, schema={"name": "receipt", "hash": "0" * 64}, heuristics_only=True
        )
    assert submitted_keys(client) == []
    # ... so the worker's own check is reached by a message a producer did not check.
    task, message, trace_id = client._prepare(
        {"kind": "validate", "text": RECEIPT_TEXT, "data": RECEIPT_DATA, "schema": "receipt", "heuristics_only": True}
    )
    assert task == TASK_VALIDATE
    assert message["schema"] == {"name": "receipt", "hash": builtin("receipt").hash}  # a built-in travels by hash
    message["schema"] = {"name": "receipt", "hash": "0" * 64}
    result = client._send(task, message, trace_id).result(timeout=JOB_TIMEOUT_S)
    assert result["status"] == "error" and result["error"]["code"] == "SCHEMA_MISMATCH", result
    assert "receipt" in result["error"]["message"] and result["trace_id"] == trace_id
    # A bare name, as a hand-made message might carry, pins nothing: refused, not guessed.
    message["schema"] = "receipt"
    result = client._send(task, message, trace_id).result(timeout=JOB_TIMEOUT_S)
    assert result["status"] == "error" and result["error"]["code"] == "SCHEMA_MISMATCH", result
    assert "bare name" in result["error"]["message"]


def inline_message(client, document, data=BANK_DATA):
    task, message, trace_id = client._prepare(
        {"kind": "validate", "text": BANK_TEXT, "data": data, "schema": document, "heuristics_only": True}
    )
    assert message["schema"]["document"] == compile_schema(document).canonical  # the whole document travels
    return task, message, trace_id


def test_worker_refuses_an_inline_schema_changed_on_the_way(service):
    client = service.client
    # A document no worker has seen yet, so nothing is cached under its hash.
    document = {**BANK_DOC, "description": f"A bank statement ({uuid.uuid4().hex})"}
    task, message, trace_id = inline_message(client, document)
    good = client._send(task, copy.deepcopy(message), trace_id).result(timeout=JOB_TIMEOUT_S)
    assert good["status"] == "ok" and good["schema"]["hash"] == message["schema"]["hash"], good

    altered_hash = copy.deepcopy(message)
    altered_hash["schema"]["hash"] = uuid.uuid4().hex + uuid.uuid4().hex
    result = client._send(task, altered_hash, trace_id).result(timeout=JOB_TIMEOUT_S)
    assert result["status"] == "error" and result["error"]["code"] == "SCHEMA_MISMATCH", result

    fresh = {**BANK_DOC, "description": f"Another bank statement ({uuid.uuid4().hex})"}
    task, message, trace_id = inline_message(client, fresh)
    message["schema"]["document"]["rules"] = []  # the rules dropped, the hash left as it was
    result = client._send(task, message, trace_id).result(timeout=JOB_TIMEOUT_S)
    assert result["status"] == "error" and result["error"]["code"] == "SCHEMA_MISMATCH", result


def test_worker_checks_the_name_a_cached_hash_comes_with(service):
    from vetq.core.schemas import wire

    client = service.client
    receipt_hash = builtin("receipt").hash
    task, message, trace_id = client._prepare(
        {"kind": "validate", "text": RECEIPT_TEXT, "data": RECEIPT_DATA, "schema": "receipt", "heuristics_only": True}
    )
    mislabelled = copy.deepcopy(message)
    mislabelled["schema"] = {"name": "invoice", "hash": receipt_hash}

    wire._compiled.clear()  # the in-process worker as freshly started: it refuses the message
    fresh = client._send(task, copy.deepcopy(mislabelled), trace_id).result(timeout=JOB_TIMEOUT_S)
    assert fresh.get("error", {}).get("code") == "SCHEMA_MISMATCH", fresh

    primed = client._send(task, message, trace_id).result(timeout=JOB_TIMEOUT_S)  # a receipt job: cached
    assert primed["status"] == "ok", primed
    later = client._send(task, mislabelled, trace_id).result(timeout=JOB_TIMEOUT_S)
    assert later.get("error", {}).get("code") == "SCHEMA_MISMATCH", later


def test_worker_checks_an_inline_document_even_when_its_hash_is_cached(service):
    client = service.client
    document = {**BANK_DOC, "description": f"A bank statement ({uuid.uuid4().hex})"}
    task, message, trace_id = inline_message(client, document)
    first = client._send(task, copy.deepcopy(message), trace_id).result(timeout=JOB_TIMEOUT_S)
    assert first["status"] == "ok", first  # the worker now holds this hash
    message["schema"]["document"]["rules"] = []
    result = client._send(task, message, trace_id).result(timeout=JOB_TIMEOUT_S)
    assert result.get("error", {}).get("code") == "SCHEMA_MISMATCH", result


# ============================================================== MCP


def start_mcp(tmp_path_factory, name, extra=None):
    tmp = tmp_path_factory.mktemp(name)
    return McpServer(_server_env(tmp, extra), tmp / "stderr.log").start()


@pytest.fixture(scope="module")
@starts_processes
def mcp_open(tmp_path_factory):
    server = start_mcp(tmp_path_factory, "mcp-open")
    yield server
    server.stop()


@pytest.fixture(scope="module")
@starts_processes
def mcp_receipt_only(tmp_path_factory):
    server = start_mcp(tmp_path_factory, "mcp-receipt", {"VETQ_MCP_SCHEMAS": "receipt"})
    yield server
    server.stop()


@pytest.fixture(scope="module")
@starts_processes
def mcp_receipt_and_inline(tmp_path_factory):
    server = start_mcp(tmp_path_factory, "mcp-inline", {"VETQ_MCP_SCHEMAS": "receipt, inline"})
    yield server
    server.stop()


def mcp_validate(server, **arguments):
    result = server.call("validate", {"heuristics_only": True, **arguments})
    assert result.is_error is False  # extraction tools answer failures as results, never tool errors
    return payload(result)


def refused(body, *fragments):
    assert body["status"] == "error" and body["error"]["code"] == "INVALID_INPUT", body
    for fragment in fragments:
        assert fragment in body["error"]["message"], body
    return True


def test_mcp_list_schemas_lists_the_four_built_ins(mcp_open):
    result = mcp_open.call("list_schemas", {})
    assert result.is_error is False
    body = payload(result)
    assert [s["name"] for s in body["schemas"]] == BUILT_INS == list(builtin_names())
    for listed in body["schemas"]:
        schema = builtin(listed["name"])
        assert (listed["version"], listed["hash"], listed["description"]) == (
            schema.version,
            schema.hash,
            schema.description,
        )
        assert listed["fields"] == {path: field.kind for path, field in schema.by_path.items()}
    receipt = next(s for s in body["schemas"] if s["name"] == "receipt")
    assert receipt["fields"]["items[].amount"] == "amount"
    assert "subtotal + tax + tip = total" in receipt["rules"]
    assert body["inline_allowed"] is True


def test_mcp_validate_with_a_built_in_and_an_inline_schema(mcp_open):
    body = mcp_validate(mcp_open, text=RECEIPT_TEXT, data=RECEIPT_DATA, schema="receipt")
    assert body["status"] == "ok" and body["schema"]["name"] == "receipt", body
    wrong = mcp_validate(mcp_open, text=RECEIPT_TEXT, data={**RECEIPT_DATA, "total": 12.76}, schema="receipt")
    assert wrong["status"] == "needs_review" and "total" in [f["field"] for f in wrong["flagged_fields"]]
    inline = mcp_validate(mcp_open, text=BANK_TEXT, data=BANK_DATA, schema=BANK_DOC)
    assert inline["status"] == "ok" and inline["schema"]["hash"] == BANK_HASH, inline
    # No schema is the default built-in, the invoice.
    default = mcp_validate(mcp_open, text=GLOBEX, data=GLOBEX_DATA)
    assert default["status"] == "ok" and default["schema"]["name"] == "invoice", default


def test_mcp_refuses_a_file_path_as_schema_whatever_is_open(mcp_open, mcp_receipt_and_inline):
    for server in (mcp_open, mcp_receipt_and_inline):
        for path in (SAMPLE_SCHEMA, str(REPO / SAMPLE_SCHEMA), "receipt.yaml"):
            body = mcp_validate(server, text=BANK_TEXT, data=BANK_DATA, schema=path)
            assert refused(body, "not a built-in schema")


def test_mcp_schemas_restricted_to_receipt(mcp_receipt_only):
    body = payload(mcp_receipt_only.call("list_schemas", {}))
    assert [s["name"] for s in body["schemas"]] == ["receipt"] and body["inline_allowed"] is False

    assert refused(mcp_validate(mcp_receipt_only, text=GLOBEX, data=GLOBEX_DATA, schema="invoice"), "VETQ_MCP_SCHEMAS")
    assert refused(mcp_validate(mcp_receipt_only, text=GLOBEX, data=GLOBEX_DATA), "VETQ_MCP_SCHEMAS")
    extract = mcp_receipt_only.call("extract", {"text": GLOBEX, "schema": "invoice", "heuristics_only": True})
    assert extract.is_error is False and refused(payload(extract), "VETQ_MCP_SCHEMAS")
    inline = mcp_validate(mcp_receipt_only, text=BANK_TEXT, data=BANK_DATA, schema=BANK_DOC)
    assert refused(inline, "VETQ_MCP_SCHEMAS")

    allowed = mcp_validate(mcp_receipt_only, text=RECEIPT_TEXT, data=RECEIPT_DATA, schema="receipt")
    assert allowed["status"] == "ok" and allowed["schema"]["name"] == "receipt", allowed


def test_mcp_inline_schemas_are_opened_by_the_inline_word(mcp_receipt_and_inline):
    body = payload(mcp_receipt_and_inline.call("list_schemas", {}))
    assert [s["name"] for s in body["schemas"]] == ["receipt"] and body["inline_allowed"] is True
    inline = mcp_validate(mcp_receipt_and_inline, text=BANK_TEXT, data=BANK_DATA, schema=BANK_DOC)
    assert inline["status"] == "ok" and inline["schema"]["name"] == "bank_statement", inline
    assert refused(mcp_validate(mcp_receipt_and_inline, text=GLOBEX, data=GLOBEX_DATA, schema="invoice"))
