# The two commands a newcomer needs: `make dev` and `make test`.
# Both create .venv and install what they need on first use: `make dev` the package and the
# generated client (the server), `make test` (and lint, docs, test-fast) the rest too.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
# What the server needs: the package and the generated client (no test tools, no PySpark).
DEV_STAMP := $(VENV)/.installed-dev
# Everything: the `dev` extra (tests, lint, docs) and the `pipeline` extra (PySpark) too.
STAMP  := $(VENV)/.installed
TEST_KEYSPACE ?= cassieq_test
# The test runs cache bytecode under .venv/pycache even where the environment sets
# PYTHONDONTWRITEBYTECODE (this machine's shells do): without the cache, each pytest-xdist
# worker re-parsed and re-rewrote the asserts of every test module, about 10 s of CPU per
# worker to collect, and every `cassieq` subprocess the tests start compiled the package
# again. The prefix keeps the source tree free of __pycache__; `make clean` removes it.
TEST_ENV := PYTHONDONTWRITEBYTECODE= PYTHONPYCACHEPREFIX=$(CURDIR)/$(VENV)/pycache

# apt-get as root, else through sudo (the browser tests' chromium).
SUDO   := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: dev deps test test-fast lint docs browser cassandra-start cassandra-stop cluster-start cluster-stop clean prometheus-check

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# pip's own output (no --quiet): what it collects and downloads, as it goes.
$(DEV_STAMP): pyproject.toml api_spec/client/pyproject.toml | $(BIN)/python
	@echo "== installing cassieq and its generated client into $(VENV) (the server's needs)"
	$(BIN)/python -m pip install -e . -e ./api_spec/client
	touch $(DEV_STAMP)

# After `make dev` this adds the extras; the full install serves `make dev` too.
$(STAMP): pyproject.toml api_spec/client/pyproject.toml | $(BIN)/python
	@echo "== installing the dev extra (tests, lint, docs) and the pipeline extra (PySpark):"
	@echo "== about 1 GB on a first run, several minutes"
	$(BIN)/python -m pip install -e '.[dev,pipeline]' -e ./api_spec/client
	touch $(STAMP) $(DEV_STAMP)

## dev: run the development server on http://127.0.0.1:8080
dev: $(DEV_STAMP)
	$(BIN)/cassieq dev

## deps: install everything `make test` needs, and run nothing
deps: $(STAMP)

## lint: ruff (lint, format check, complexity), mypy, and the import contracts (.importlinter)
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy cassieq
	$(BIN)/mypy tests
	$(BIN)/lint-imports

## test: lint, build the docs (strict), start the local node and the three-node cluster, apply
## the schema to an empty test keyspace, run the suite (the cluster tests: the cluster tool and a short chaos soak)
## in two parts that together select every test once: those that need no node on two
## pytest-xdist workers, then those marked `cassandra` in one process (they share the test
## keyspace). The second part runs even when the first failed; make fails if either did.
test: $(STAMP) lint docs browser cassandra-start cluster-start
	$(BIN)/cassieq schema apply --keyspace $(TEST_KEYSPACE) --recreate
	$(TEST_ENV) CASSIEQ_TEST_KEYSPACE=$(TEST_KEYSPACE) $(BIN)/pytest -m "not cassandra" -n 2; \
	status=$$?; \
	$(TEST_ENV) CASSIEQ_TEST_KEYSPACE=$(TEST_KEYSPACE) $(BIN)/pytest -m cassandra || status=1; \
	exit $$status

## test-fast: every test that needs no Cassandra node, on three workers (pytest-xdist; the tests
## wait on subprocesses and sockets as much as they compute, and each worker pays ~8 s of CPU to
## collect: on 2 cores, 3 workers took 1 min 51 s where 4 took 2 min 7-13 s and 2 took 2 min 24 s),
## the schemathesis run at 8 cases per operation instead of 25; no node, no lint, no docs: the
## loop while editing (CI: `make test`). Work stealing: an idle worker takes tests queued for
## a busy one, so a slow test (the browser's, 12 s) does not leave a tail (2026-11-27, idle
## machine, no node up: 2 min 7 s with the default distribution, 1 min 54 s with it)
test-fast: $(STAMP)
	$(TEST_ENV) CASSIEQ_FUZZ_EXAMPLES=8 $(BIN)/pytest -m "not cassandra" -n 3 --dist worksteal -q

## docs: the documentation site (mkdocs.yml, docs/), built strict: a broken link or anchor,
## a page missing from the nav or a missing snippet fails; built into .venv (not committed)
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir $(VENV)/site

## browser: Debian's chromium, which the browser tests (tests/browser) drive through
## Playwright; installed when missing (Playwright's own browser download is not used)
browser:
	@command -v chromium >/dev/null || { $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq chromium; }

cassandra-start: $(DEV_STAMP)
	$(BIN)/cassieq cassandra start

cassandra-stop: $(DEV_STAMP)
	$(BIN)/cassieq cassandra stop

## cluster-start: the local three-node cluster on 127.0.0.2-4, beside the dev node (768 MB heap each)
cluster-start: $(DEV_STAMP)
	$(BIN)/cassieq cassandra start --nodes 3

cluster-stop: $(DEV_STAMP)
	$(BIN)/cassieq cassandra stop --nodes 3

## prometheus-check: a real Prometheus (Debian's package, installed if missing: needs root)
## scraping `cassieq dev --cassandra`; prints its answers for the depth and LWT series
prometheus-check: $(STAMP) cassandra-start
	command -v prometheus >/dev/null || apt-get install -y --no-install-recommends prometheus
	PYTHON=$(BIN)/python scripts/prometheus_check.sh

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache .hypothesis
