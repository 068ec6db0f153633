# The two commands: `make demo` runs the main job on the embedded default,
# `make test` runs the suite. Both create or reuse .venv and install what they need.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)

.PHONY: demo test test-fast lint venv clean bench

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,mcp]'
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(BIN)/python -m vetq.eval.demo

# Lint first: ruff (rules and formatting) and mypy on the packages that ship py.typed.
test: lint
	$(BIN)/python -m pytest

# The developer's loop: every test that starts no process (no Redis, worker or CLI).
test-fast: $(STAMP)
	$(BIN)/python -m pytest -m "not processes"

# mypy cannot follow setuptools' editable finder from vetq.core to core/, so the
# folders are linked under build/typecheck/vetq/ (pyproject's mypy_path).
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	@mkdir -p build/typecheck/vetq
	@for package in core workers api_client eval; do ln -sfn ../../../$$package build/typecheck/vetq/$$package; done
	$(BIN)/mypy

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis .mypy_cache .ruff_cache build
