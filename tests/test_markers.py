"""The `processes` marker is honest: a test that starts a process without it fails, so
`pytest -m "not processes"` (make test-fast) stays a loop of seconds."""

from __future__ import annotations

from pathlib import Path

import pytest

CONFTEST = Path(__file__).with_name("conftest.py")

SESSION = """
import subprocess, sys
import pytest

from conftest import starts_processes


@pytest.fixture
@starts_processes
def child():
    return subprocess.run([sys.executable, "-c", "pass"], check=True).returncode


def test_unmarked_starts_one():
    subprocess.run([sys.executable, "-c", "pass"], check=True)


@pytest.mark.processes
def test_marked_starts_one():
    subprocess.run([sys.executable, "-c", "pass"], check=True)


def test_through_a_process_fixture(child):
    assert child == 0


def test_starts_none():
    assert sum([1, 2]) == 3
"""


def run_session(pytester, source: str, *args: str):
    """`source` as a test module under this project's conftest, in a pytest of its own."""
    pytester.makeconftest(CONFTEST.read_text())
    pytester.makepyfile(test_session=source)
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", *args)


@pytest.mark.processes
def test_an_unmarked_test_that_starts_a_process_fails(pytester):
    result = run_session(pytester, SESSION)
    result.assert_outcomes(passed=4, errors=1)
    result.stdout.fnmatch_lines(["*test_unmarked_starts_one started a process without the `processes` marker*"])


WIDER_SCOPE = """
import subprocess, sys
import pytest

from conftest import starts_processes


@pytest.fixture(scope="session")
@starts_processes
def server():
    yield "up"
    subprocess.run([sys.executable, "-c", "pass"], check=True)  # stopped: a process too


def test_uses_the_server(server):
    assert server == "up"


def test_unmarked_and_last():
    assert sum([1, 2]) == 3
"""


@pytest.mark.processes
def test_a_wider_fixture_ending_after_an_unmarked_test_is_not_that_tests_process(pytester):
    # The session fixture is torn down in the last test's teardown; that test started nothing.
    result = run_session(pytester, WIDER_SCOPE)
    result.assert_outcomes(passed=2)


@pytest.mark.processes
def test_the_fast_loop_deselects_what_starts_processes(pytester):
    result = run_session(pytester, SESSION, "-m", "not processes", "-k", "not unmarked")
    result.assert_outcomes(passed=1, deselected=3)
