# Two commands work on a fresh machine with Python 3.11+ and make:
#   make demo   — offline demo on the bundled sample data, ends with out/demo/report.md
#   make test   — the test suite (offline, deterministic)
# Each installs what it needs into .venv from the lock file (uv.lock).

PYTHON ?= python3
VENV := .venv
TOOLS := .tools
UV := $(TOOLS)/bin/uv
STAMP := $(VENV)/.synced

.PHONY: demo test lint typecheck ui bench install clean

# uv lives in its own small venv so that `uv sync` (which makes .venv exactly the
# lock file) never removes it.
$(UV):
	$(PYTHON) -m venv $(TOOLS)
	$(TOOLS)/bin/python -m pip install --quiet --disable-pip-version-check "uv==0.13.9"

$(STAMP): $(UV) pyproject.toml uv.lock
	UV_PROJECT_ENVIRONMENT=$(VENV) $(UV) sync --frozen --quiet --python $(PYTHON)
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/keiri-agent demo --out out/demo

test: $(STAMP)
	$(VENV)/bin/python -m pytest -q

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests benchmarks examples
	$(VENV)/bin/ruff format --check src tests benchmarks examples

typecheck: $(STAMP)
	$(VENV)/bin/mypy

ui: $(STAMP)
	$(VENV)/bin/keiri-agent ui

bench: $(STAMP)
	for script in benchmarks/*.py; do echo "== $$script"; $(VENV)/bin/python $$script || exit 1; done

clean:
	rm -rf $(VENV) $(TOOLS) out .pytest_cache .mypy_cache .ruff_cache
