# Arena — developer entry points. Everything runs from a local virtual environment in .venv.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
TORCH_PIN := torch==2.13.0

.PHONY: install system-deps demo test lint format bench clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q "$(TORCH_PIN)"
	$(PIP) install -q -e ".[gateway,match-runner,trainer,demo,dev]"
	touch $@

install: system-deps $(VENV)/.installed ## create .venv with every service's dependencies

system-deps: ## bubblewrap is the hosted-bot sandbox; install it when we can
	@command -v bwrap >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing bubblewrap (hosted-bot sandbox)"; \
	    apt-get update -qq && apt-get install -y -qq bubblewrap >/dev/null; \
	  else echo "WARNING: bubblewrap (bwrap) is missing; hosted bots need it outside development mode"; fi; }

demo: install ## run the platform: embedded or configured Postgres/Redis, gateway, worker, beat, bots, ladder
	$(PY) -m scripts.demo $(DEMO_ARGS)

test: install ## the whole test suite against real PostgreSQL, Redis, processes and sandboxes
	$(PY) -m pytest $(PYTEST_ARGS)

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

format: install
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

bench: install ## benchmarks: print figures and ratios against baselines measured in the same run
	$(PY) -m scripts.bench_podracing
	$(PY) -m scripts.bench_torch_kernels
	$(PY) -m scripts.bench_battle
	$(PY) -m scripts.bench_battle_config
	$(PY) -m scripts.bench_platform
	$(PY) -m scripts.bench_sandbox

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis .arena-data
