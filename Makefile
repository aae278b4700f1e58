# Plumbline: `make run` starts the whole system, `make test` runs every test.
SHELL := /bin/bash
# The first of these that is Python 3.11, 3.12 or 3.13 (or PYTHON=/path/to/python).
SUPPORTED := (3, 11) <= sys.version_info[:2] <= (3, 13)
PYTHON ?= $(shell for p in python3 python3.11 python3.12 python3.13; do \
	$$p -c 'import sys; sys.exit(not ($(SUPPORTED)))' >/dev/null 2>&1 && { echo $$p; break; }; done)
VENV ?= .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
RUN_STAMP := $(VENV)/.installed-run
STAMP := $(VENV)/.installed
PROTO_STAMP := src/plumbline/api/.proto-stamp
PROTOS := $(shell find proto -name '*.proto')

.DEFAULT_GOAL := help

help: ## list the targets
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

# What running needs (and the gRPC code generator), then the test and lint tools on top.
$(RUN_STAMP): pyproject.toml
	@test -x $(PY) || test -n "$(PYTHON)" || { echo "Plumbline needs Python 3.11, 3.12 or 3.13 and found none on the PATH; install one, or name it: make PYTHON=/path/to/python3.12 ..." >&2; exit 1; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[proto]'
	touch $@

$(STAMP): $(RUN_STAMP)
	$(PY) -m pip install -q -e '.[dev]'
	touch $@

setup: $(STAMP) proto ## create the virtualenv, install everything (tests and lint too), build the gRPC code

proto: $(PROTO_STAMP) ## generate the gRPC code from proto/

$(PROTO_STAMP): $(RUN_STAMP) $(PROTOS)
	$(PY) -m plumbline.protogen proto src
	touch $@

run: $(RUN_STAMP) proto ## start the whole system (SQLite, in-process bus, a gateway worker per core) on :8080
	$(BIN)/plumbline run --target all

migrate: $(RUN_STAMP) proto ## apply every service's migrations
	$(BIN)/plumbline migrate

test: setup browser ## run unit and end-to-end tests in both topologies
	$(BIN)/pytest -q tests

test-unit: setup ## unit tests only, with a coverage report of the package
	$(BIN)/pytest -q --cov --cov-report=term tests/unit

test-quick: setup browser ## every test but those marked slow (the schemathesis runs)
	$(BIN)/pytest -q -m "not slow" tests

lint: setup ## ruff, and mypy --strict over the code, tests and bench
	$(BIN)/ruff check . && $(BIN)/ruff format --check . && $(BIN)/mypy

fmt: setup ## format the code (ruff format), then apply ruff's safe fixes
	$(BIN)/ruff format . && $(BIN)/ruff check --fix .

bench: setup ## benchmarks (TOPOLOGY=embedded|distributed, SIZE=small|normal|large, ONLY=items|testmgmt|attachments|history|hooks|trace, PEER=kiwi [KIWI_RESULT=file])
	$(PY) -m bench --topology $${TOPOLOGY:-embedded} --size $${SIZE:-normal} --only $${ONLY:-all} --peer $${PEER:-none}

k8s-live: $(STAMP) ## run the dev overlay for real under podman kube play and smoke-test it (root; tests/live)
	PYTHON=$(PY) KUBECTL=$(BIN)/kubectl tests/live/k8s_live.sh

browser: ## install Chromium for the docs UI browser test if it is missing
	@command -v chromium >/dev/null || (apt-get update -q && apt-get install -y -q chromium)

clean: ## remove generated code and the virtualenv
	rm -rf $(VENV) $(PROTO_STAMP)
	rm -rf src/plumbline/api

.PHONY: help setup proto run migrate test test-unit test-quick lint fmt bench k8s-live browser clean
