# The two commands: `make demo` (install, index this repository, search it) and
# `make test` (install what tests need, lint, run the whole suite). Both create .venv.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
# CPU torch from the local wheel cache; `make TORCH=torch` (or a CUDA index) for GPUs.
TORCH  ?= torch==2.13.0
export HF_HUB_OFFLINE ?= 1
export PIP_DISABLE_PIP_VERSION_CHECK = 1

.PHONY: install demo test test-fast lint bench bench-quick clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q "$(TORCH)"
	$(BIN)/pip install -q -e '.[test]'
	touch $@

install: $(VENV)/.installed

demo: install
	$(BIN)/vq --config examples/demo.yaml build
	$(BIN)/vq --config examples/demo.yaml status
	$(BIN)/vq --config examples/demo.yaml search -n 5 "how does a build skip when another holds the lock"

# The suite and `make lint` run side by side (lint is mostly a cold mypy, off the
# critical path): lint's output waits in build/lint.log and is shown after the suite,
# and either failing fails `make test`, so CI (.ci/run = `make test`) runs both.
# PYTEST_ARGS: extra pytest options, e.g. `make test PYTEST_ARGS=--durations=20`.
PYTEST_ARGS ?=
test: install
	@mkdir -p build
	@$(MAKE) --no-print-directory lint >build/lint.log 2>&1 & lint=$$!; \
	$(BIN)/python -m pytest -q -p no:cacheprovider $(PYTEST_ARGS); suite=$$?; \
	wait $$lint; linted=$$?; \
	echo "--- make lint (ran beside the suite) ---"; cat build/lint.log; \
	[ $$linted -eq 0 ] || echo "make test: make lint failed (exit $$linted)"; \
	[ $$suite -eq 0 ] && [ $$linted -eq 0 ]

test-fast: install
	$(BIN)/python -m pytest -q -m "not model and not slow and not ray"

# ruff, then the layering contracts (import-linter) and types (mypy) on the installed
# layout: a tree of links that puts core/ indexer/ query/ jobs/ beneath vq/, as the
# wheel does (both tools find modules by folder, not through the editable finder).
LINT_TREE := build/lint-tree
lint: install
	$(BIN)/ruff check .
	@rm -rf $(LINT_TREE) && mkdir -p $(LINT_TREE)/vq
	@ln -s $(CURDIR)/pyproject.toml $(LINT_TREE)/pyproject.toml
	@for f in vq/*; do ln -s $(CURDIR)/$$f $(LINT_TREE)/vq/; done
	@for p in core indexer query jobs; do ln -s $(CURDIR)/$$p $(LINT_TREE)/vq/$$p; done
	cd $(LINT_TREE) && PYTHONPATH=. $(CURDIR)/$(BIN)/lint-imports
	cd $(LINT_TREE) && $(CURDIR)/$(BIN)/mypy --cache-dir $(CURDIR)/build/mypy-cache

# Retrieval quality and speed vs baselines (see docs/performance.md); each writes
# bench/results/<date>.json and .md. bench-quick is the subset (~12 min on 2 idle cores).
bench: install
	$(BIN)/pip install -q -e '.[bench]'
	$(BIN)/python -m bench.run

bench-quick: install
	$(BIN)/pip install -q -e '.[bench]'
	$(BIN)/python -m bench.run --quick

clean:
	rm -rf $(VENV) .vq *.egg-info
