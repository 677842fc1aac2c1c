# The README's two commands: `make demo` runs the whole retrain flow on generated sample data,
# `make test` runs lint and the test suite. Both create .venv and install what they need.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
export TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS :=
export HF_HUB_OFFLINE := 1

.PHONY: demo test lint format install clean

install: $(STAMP)

# compat editable mode (a .pth of this folder) so a package added later is found without a reinstall
$(STAMP): pyproject.toml constraints.txt Makefile
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -c constraints.txt -e '.[dev]' --config-settings editable_mode=compat
	touch $@

node_modules/.bin/azurite-blob: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

# Debian's Chromium for the browser test (tests/test_ui_approval.py); Playwright never downloads one.
CHROMIUM := /usr/bin/chromium
$(CHROMIUM):
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium

demo: $(STAMP)
	$(BIN)/tunegate run --config configs/local.yaml --approval auto --summary .tunegate/last-run.json

test: $(STAMP) node_modules/.bin/azurite-blob $(CHROMIUM) lint
	$(BIN)/pytest -q --durations=25

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: $(STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

clean:
	rm -rf $(VENV) node_modules .tunegate
