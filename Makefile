# The README's two commands: `make demo` runs the whole retrain flow on generated sample data,
# `make test` runs lint and the test suite. Both create .venv and install what they need.
# `make test-fast` (lint and the tests not marked slow) is the check for everyday edits; `make
# help` lists the targets.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
SERVING_VENV := .venv-serving
SERVING_STAMP := $(SERVING_VENV)/.installed-stamp
export TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS :=
export HF_HUB_OFFLINE := 1

.PHONY: demo test test-fast lint format install clean help

install: $(STAMP)

# compat editable mode (a .pth of this folder) so a package added later is found without a reinstall
$(STAMP): pyproject.toml constraints.txt Makefile
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -c constraints.txt -e '.[dev]' --config-settings editable_mode=compat
	touch $@

# Azure ML's inference server (`azmlinfsrv`) with the scoring code's packages, for
# tests/azureml/test_inference_server.py: its own venv, as it pins older pydantic and
# OpenTelemetry than Prefect's (tests/azureml/serving_venv.py says how it is put together).
$(SERVING_STAMP): $(STAMP) tests/azureml/serving_venv.py
	$(BIN)/python -m tests.azureml.serving_venv $(SERVING_VENV)
	touch $@

node_modules/.bin/azurite-blob: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

# Debian's Chromium for the browser test (tests/flows/test_ui_approval.py); Playwright never downloads one.
CHROMIUM := /usr/bin/chromium
$(CHROMIUM):
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium

demo: $(STAMP)
	$(BIN)/tunegate run --config configs/local.yaml --approval auto --summary .tunegate/last-run.json \
		--set registry.model_name=tunegate-demo-qa

# Two pytest-xdist workers (TEST_WORKERS=0: one process): the slow tests mostly wait on the
# processes they start, so two share two cores; tests/conftest.py groups what must share a worker.
TEST_WORKERS ?= 2

# What the tests need is set up side by side (npm and apt wait on the network while pip unpacks;
# the serving venv and lint follow .venv), then the suite runs.
test:
	$(MAKE) -j4 --no-print-directory $(STAMP) $(SERVING_STAMP) node_modules/.bin/azurite-blob $(CHROMIUM) lint
	$(BIN)/pytest -q --durations=25 -n $(TEST_WORKERS)

# The tests not marked `slow` (pyproject.toml says which are): what runs inside the pytest
# process, so no Azurite, Chromium or serving venv (only .venv).
test-fast: $(STAMP) lint
	$(BIN)/pytest -q --durations=10 -n $(TEST_WORKERS) -m 'not slow and not azure'

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: $(STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

help:
	@echo "make demo       the whole retrain flow on generated sample data"
	@echo "make test       lint and the whole test suite (what .ci/run calls)"
	@echo "make test-fast  lint and the tests not marked slow: the check for everyday edits"
	@echo "make lint       ruff check and ruff format --check; make format: fix both"
	@echo "make install    .venv with tunegate and its dev tools; make clean: remove it"

clean:
	rm -rf $(VENV) $(SERVING_VENV) node_modules .tunegate
