# Arena — developer entry points. Everything runs from a local virtual environment in .venv.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
TORCH_PIN := torch==2.13.0

.DEFAULT_GOAL := help
.PHONY: help install system-deps demo test test-fast check lint typecheck format bench clean

help: ## list the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-z-]+:.*## / {printf "  make %-12s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q "$(TORCH_PIN)"
	$(PIP) install -q -e ".[gateway,match-runner,trainer,evolver,demo,dev]"
	touch $@

install: system-deps $(VENV)/.installed ## create .venv with every service's dependencies

system-deps: ## bubblewrap (sandbox), chromium (browser tests), docker-compose and linux-libc-dev (deployment checks); installed when we can
	@missing=""; lean=""; \
	command -v bwrap >/dev/null 2>&1 || missing="$$missing bubblewrap"; \
	command -v chromium >/dev/null 2>&1 || missing="$$missing chromium"; \
	command -v docker-compose >/dev/null 2>&1 || lean="$$lean docker-compose"; \
	if [ "$$(uname -m)" = x86_64 ] && [ ! -e /usr/include/x86_64-linux-gnu/asm/unistd_64.h ] \
	  && [ ! -e /usr/include/asm/unistd_64.h ]; then lean="$$lean linux-libc-dev"; fi; \
	if [ -n "$$missing$$lean" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing$$missing$$lean (hosted-bot sandbox; browser tests through Playwright; Compose file and seccomp profile checks)"; \
	    apt-get update -qq \
	    && { [ -z "$$missing" ] || apt-get install -y -qq $$missing >/dev/null; } \
	    && { [ -z "$$lean" ] || apt-get install -y -qq --no-install-recommends $$lean >/dev/null; }; \
	  else echo "WARNING: missing$$missing$$lean: hosted bots need bubblewrap outside development mode, the browser tests need /usr/bin/chromium, the deployment tests docker-compose (the client only) and linux-libc-dev"; fi; \
	fi

demo: install ## run the platform: embedded or configured Postgres/Redis, gateway, worker, beat, bots, ladder
	$(PY) -m scripts.demo $(DEMO_ARGS)

FAST_TESTS := not e2e and not browser and not slow and not gpu
# The tests run on TEST_WORKERS processes (pytest-xdist; each has its own database, Redis database
# and data folder, and takes whole modules: CONTRIBUTING.md); TEST_WORKERS=0, or PYTEST_ARGS="-n 0",
# runs them one after the other in one process. Bytecode is cached under .pytest_cache/pycache even
# where PYTHONDONTWRITEBYTECODE is set: every worker and every process a test starts would compile
# the tree again otherwise.
# `make test` (CI) stays serial by default (FULL_TEST_WORKERS=3 runs it in parallel): under load two
# tests of the full suite still fail when run beside others (docs/architecture.md#checks).
TEST_WORKERS ?= 3
FULL_TEST_WORKERS ?= 0
PYTEST := env -u PYTHONDONTWRITEBYTECODE PYTHONPYCACHEPREFIX=$(CURDIR)/.pytest_cache/pycache \
	$(PY) -m pytest --dist loadgroup

test: install ## the whole test suite against real PostgreSQL, Redis, processes and sandboxes, on 3 processes (CI runs this)
	$(PYTEST) -n $(FULL_TEST_WORKERS) --durations=25 $(PYTEST_ARGS)

test-fast: install ## the suite without the e2e, browser, slow and gpu tests (markers in pyproject.toml), on 3 processes
	$(PYTEST) -n $(TEST_WORKERS) -m "$(FAST_TESTS)" $(PYTEST_ARGS)

check: lint typecheck ## everything CI checks besides the tests: ruff (lint and format) and mypy

lint: install ## ruff: lint rules and formatting, without changing files
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

typecheck: install ## mypy, strict, over services/, shared/, scripts/ and tests/ (configured in pyproject.toml)
	$(VENV)/bin/mypy

format: install ## fix what ruff can fix and format the code
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

bench: install ## benchmarks: print figures and ratios against baselines measured in the same run
	$(PY) -m scripts.bench_podracing
	$(PY) -m scripts.bench_search
	$(PY) -m scripts.bench_export
	$(PY) -m scripts.bench_trainer
	$(PY) -m scripts.bench_torch_kernels
	$(PY) -m scripts.bench_battle
	$(PY) -m scripts.bench_battle_config
	$(PY) -m scripts.bench_platform
	$(PY) -m scripts.bench_internals
	$(PY) -m scripts.bench_sandbox
	$(PY) -m scripts.bench_events
	$(PY) -m scripts.bench_live
	$(PY) -m scripts.bench_viewer
	$(PY) -m scripts.bench_evolver
	$(PY) -m scripts.bench_gateway_load --quick
	$(PY) -m scripts.bench_match_list
	$(PY) -m scripts.eval_trained_bot --races 500 --search-races 100
	$(PY) -m scripts.eval_trained_bot --bot examples/bots/podracing_hybrid.py --races 0 --search-races 100

clean: ## remove the virtual environment, caches and the demo's data (and say what it leaves on servers)
	@cat .arena-data/demo/left-on-servers.txt 2>/dev/null || true
	rm -rf $(VENV) .pytest_cache .ruff_cache .mypy_cache .hypothesis .arena-data
