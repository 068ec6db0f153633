"""The installed distribution lives under one `vetq` namespace: the repository's folders
core/, workers/, api_client/ and eval/ install as vetq.core, vetq.workers, ... so that no
generic top-level name (`core`, `eval`) lands in a user's site-packages."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.conftest import starts_processes

ROOT = Path(__file__).resolve().parents[1]
BARE = ("core", "workers", "api_client", "eval", "inbox")


@pytest.fixture(scope="module")
@starts_processes
def build(tmp_path_factory) -> tuple[zipfile.ZipFile, str]:
    """The wheel, and what the build printed."""
    # Built from a copy: setuptools keeps build/lib between builds in the source tree,
    # and a file deleted since (an old prompt) would still ship from there.
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, source / name)
    for package in BARE:
        shutil.copytree(ROOT / package, source / package, ignore=shutil.ignore_patterns("__pycache__"))
    out = tmp_path_factory.mktemp("wheel")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-v", "-w", str(out), str(source)],
        check=True,
        capture_output=True,
        text=True,
        timeout=300,
    )
    (built,) = out.glob("vetq-*.whl")
    return zipfile.ZipFile(built), done.stdout + done.stderr


@pytest.fixture(scope="module")
def wheel(build) -> zipfile.ZipFile:
    return build[0]


def test_the_build_warns_of_nothing_and_names_its_licence(build):
    # setuptools deprecates a licence table (builds fail from 2027-02-18) and warns of a
    # folder Python can import that the package list leaves out (a data folder it would
    # ship only by accident of the package-data globs)
    built, printed = build
    assert "BuildBackendWarning" not in printed and "SetuptoolsDeprecationWarning" not in printed, printed
    (metadata,) = [n for n in built.namelist() if n.endswith(".dist-info/METADATA")]
    assert "License-Expression: Apache-2.0" in built.read(metadata).decode().splitlines()
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in built.namelist())


@pytest.mark.processes
def test_the_wheel_installs_nothing_outside_the_vetq_namespace(wheel):
    tops = {name.split("/")[0] for name in wheel.namelist()}
    assert {top for top in tops if not top.startswith("vetq")} == set()
    assert "vetq/__init__.py" not in wheel.namelist()  # a namespace: vetq.* from other dists may join it


def test_the_wheel_carries_the_data_the_code_reads(wheel):
    names = set(wheel.namelist())
    needed = {
        "vetq/core/py.typed",
        "vetq/core/extraction/prompts/generator_v2.md",
        "vetq/core/extraction/amount_lexicon.json",
        "vetq/core/llm/prices.json",
        "vetq/core/schemas/builtin/invoice.yaml",
        "vetq/core/schemas/builtin/shipping_notice.yaml",
        "vetq/core/review/prompts/system_v1.md",
        "vetq/workers/lua/budget_reserve.lua",
        "vetq/eval/golden/invoice/cases.jsonl",
        "vetq/eval/golden/receipt/replay.json",
        "vetq/eval/samples/bank_statement.yaml",
        "vetq/eval/samples/demo.jsonl",
        "vetq/inbox/py.typed",
        "vetq/inbox/migrations/env.py",
        "vetq/inbox/migrations/versions/0001_initial.py",
    }
    assert needed - names == set()
    shipped_prompts = {n for n in names if "/prompts/" in n}
    repo_prompts = {f"vetq/{p.relative_to(ROOT)}" for p in ROOT.glob("core/*/prompts/*.md")}
    assert shipped_prompts == repo_prompts
    lua = {n for n in names if n.endswith(".lua")}
    assert lua == {f"vetq/{p.relative_to(ROOT)}" for p in ROOT.glob("workers/lua/**/*.lua")}


def test_the_entry_point_names_the_namespaced_cli(wheel):
    (entry_points,) = [n for n in wheel.namelist() if n.endswith("entry_points.txt")]
    assert "vetq = vetq.api_client.cli:entrypoint" in wheel.read(entry_points).decode()


@pytest.mark.processes
def test_the_code_never_imports_a_bare_top_level_package(tmp_path):
    """Run from a folder where a bare `core` cannot be found: every module imports, and
    nothing asked for one (a stray `from core...` would fail here, not in a user's site).
    The inbox's migrations are files Alembic runs by path while migrating, not modules."""
    modules = sorted(
        "vetq." + ".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        for package in BARE
        for p in (ROOT / package).rglob("*.py")
        if p.name != "__main__.py" and "migrations" not in p.relative_to(ROOT).parts
    )
    code = (
        "import importlib, sys\n"
        f"for m in {modules!r}:\n"
        "    importlib.import_module(m)\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {BARE!r}))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"
