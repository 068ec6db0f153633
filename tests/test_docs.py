"""The docs match the code: every setting is in the README's table, and the README
starts with the two commands."""

from __future__ import annotations

import re
from pathlib import Path

from vetq.core.settings import VetqSettings

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def test_readme_starts_with_the_two_commands():
    head = "\n".join(README.splitlines()[:8])
    assert "make demo" in head and "make test" in head


def test_every_setting_is_documented_and_nothing_else():
    documented = set(re.findall(r"^\| `(VETQ_[A-Z_]+)` \|", README, flags=re.MULTILINE))
    real = {f"VETQ_{name.upper()}" for name in VetqSettings.model_fields}
    assert documented == real


def test_documented_error_codes_are_the_real_ones():
    from vetq.core.errors import ErrorCode

    for code in ErrorCode:
        assert f"`{code.value}`" in README


def _json_blocks() -> list[object]:
    import json

    return [json.loads(block) for block in re.findall(r"```json\n(.*?)```", README, flags=re.DOTALL)]


def test_readme_result_examples_are_in_the_current_result_format():
    from vetq.core.results import RESULT_FORMAT, ErrorResult, error_of

    results = [block for block in _json_blocks() if isinstance(block, dict) and "status" in block]
    assert {r["status"] for r in results} >= {"needs_review", "error"}, "the README shows a result and an error"
    for result in results:
        assert result["format"] == RESULT_FORMAT, result
        if result["status"] == "error":
            ErrorResult.model_validate({k: v for k, v in result.items() if k in ErrorResult.model_fields})
            assert error_of(result) is not None
    assert f'"format": {RESULT_FORMAT}' in README.split("### The result format", 1)[1].split("\n## ", 1)[0]


def test_readme_mcp_table_names_each_tools_arguments():
    import asyncio

    from vetq.api_client.mcp_server import build_server

    rows = dict(re.findall(r"^\| `(\w+)\(([^)]*)\)` \|", README, flags=re.MULTILINE))
    tools = {tool.name: tool.input_schema for tool in asyncio.run(build_server().list_tools())}
    assert set(rows) == set(tools)
    for name, arguments in rows.items():
        named = [a.strip() for a in arguments.split(",") if a.strip() and not a.strip().startswith("...")]
        required = [a for a in named if not a.endswith("?")]
        optional = [a.rstrip("?") for a in named if a.endswith("?")]
        assert set(required) == set(tools[name].get("required", [])), name
        assert set(optional) <= set(tools[name]["properties"]) - set(required), name


def test_readme_custom_schema_example_is_the_sample_file_and_compiles():
    from vetq.core import schemas

    sample = ROOT / "eval" / "samples" / "bank_statement.yaml"
    blocks = re.findall(r"```yaml\n(.*?)```", README, flags=re.DOTALL)
    assert sample.read_text() in blocks
    schema = schemas.load(sample)
    assert schema.name == "bank_statement" and "transactions[].amount" in schema.by_path


def test_readme_names_every_built_in_schema():
    from vetq.core import schemas

    section = README.split("## Schemas", 1)[1].split("\n## ", 1)[0]
    for name in schemas.builtin_names():
        assert f"`{name}`" in section, name
