"""The docs match the code: every setting is in the README's table, and the README
starts with the two commands."""

from __future__ import annotations

import re
from pathlib import Path

from core.settings import VetqSettings

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
    from core.errors import ErrorCode

    for code in ErrorCode:
        assert f"`{code.value}`" in README
