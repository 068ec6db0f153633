# The two commands: `make demo` runs the main job on the embedded default,
# `make test` runs the suite. Both create or reuse .venv and install what they need.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)

.PHONY: demo test test-fast lint venv clean bench tesseract postgresql chromium poppler

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,mcp,otel,inbox]'
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(BIN)/python -m vetq.eval.demo

# Lint first: ruff (rules and formatting) and mypy on the packages that ship py.typed.
# The suite runs in TEST_PROCESSES pytest-xdist workers, each taking whole test files (a
# module's shared worker or fake provider is built once): most of its time is waiting on
# workers, Redis and subprocesses, which overlaps well past the core count. Each worker
# starts its own embedded Redis.
TEST_PROCESSES ?= 3
test: lint tesseract postgresql chromium poppler
	$(BIN)/python -m pytest -n $(TEST_PROCESSES) --dist loadfile

# $(call debian_package,PRESENT,PACKAGE,FOR): Debian's PACKAGE, installed when the shell
# test PRESENT fails and apt-get can (root); otherwise the tests it serves (FOR) are
# skipped, and pytest's summary says why.
debian_package = $(1) || { \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
			echo "installing $(2) for $(3)"; \
			{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(2) >/dev/null; } \
				|| echo "installing $(2) failed: $(3) will be skipped"; \
		else \
			echo "$(2) is missing and cannot be installed here (needs root and apt-get): $(3) will be skipped"; \
		fi; \
	}

# The OCR tests (scanned PDF pages) need the tesseract binary, a Debian package rather
# than a Python one.
tesseract:
	@$(call debian_package,command -v tesseract >/dev/null 2>&1,tesseract-ocr,the OCR tests)

# The inbox's tests run against a real PostgreSQL, a throwaway cluster the suite starts
# with initdb and pg_ctl (tests/postgres.py).
postgresql:
	@$(call debian_package,ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1,postgresql,the inbox's PostgreSQL tests)

# The layout variations' converter test reads the real sets' PDFs with poppler's pdftotext
# as well as with the Python converters vetq did not choose (eval/layout_variants.py).
poppler:
	@$(call debian_package,command -v pdftotext >/dev/null 2>&1,poppler-utils,the pdftotext converter test)

# The review page's browser test drives Debian's headless Chromium through Playwright
# (Playwright's own browser download is not used).
chromium:
	@$(call debian_package,command -v chromium >/dev/null 2>&1,chromium,the review page's browser test)

# The developer's loop: every test that starts no process (no Redis, worker or CLI).
test-fast: $(STAMP)
	$(BIN)/python -m pytest -m "not processes"

# mypy cannot follow setuptools' editable finder from vetq.core to core/, so the
# folders are linked under build/typecheck/vetq/ (pyproject's mypy_path).
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	@mkdir -p build/typecheck/vetq
	@for package in core workers api_client eval inbox; do ln -sfn ../../../$$package build/typecheck/vetq/$$package; done
	$(BIN)/mypy

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis .mypy_cache .ruff_cache build
