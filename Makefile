# Two commands work on a fresh machine with Python 3.11+ and make:
#   make demo   — offline demo on the bundled sample data, ends with out/demo/report.md
#   make test   — the test suite (offline, deterministic): the web UI's Vitest tests, then
#                 pytest, whose tests/web/ drive the built web UI in Debian Chromium
# Each installs what it needs into .venv from the lock file (uv.lock).

PYTHON ?= python3
VENV := .venv
TOOLS := .tools
UV := $(TOOLS)/bin/uv
STAMP := $(VENV)/.synced
RUNTIME_STAMP := $(VENV)/.synced-runtime
# The web UI (web/, Next.js) is built into web/out, which `keiri-agent serve` serves at /.
WEB_STAMP := web/out/.keiri-built
WEB_SOURCES := $(shell find web -path web/node_modules -prune -o -path web/out -prune \
	-o -path web/.next -prune -o -type f -print 2>/dev/null)
NO_NODE := Node.js (node, npm) not found: skipping the web UI's tests (Vitest and browser); install Node.js 20+ to run them

.PHONY: demo test web web-test lint typecheck ui bench install clean

# uv lives in its own small venv so that `uv sync` (which makes .venv exactly the
# lock file) never removes it.
$(UV):
	$(PYTHON) -m venv $(TOOLS)
	$(TOOLS)/bin/python -m pip install --quiet --disable-pip-version-check "uv==0.13.9"

# Bytecode is compiled at install time (the dependencies by uv, the package itself by
# compileall), so the first commands on a fresh machine do not compile ~2,100 modules.
$(STAMP): $(UV) pyproject.toml uv.lock
	UV_PROJECT_ENVIRONMENT=$(VENV) $(UV) sync --frozen --quiet --compile-bytecode --python $(PYTHON)
	$(VENV)/bin/python -m compileall -q -j 0 src
	touch $(STAMP)

# What a user runs (demo, ui) needs the product's dependencies only, not the developer
# tools (test, lint and type-check packages, Playwright, the local e5 model): --no-dev,
# and --inexact so that a .venv the tests filled keeps its tools.
$(RUNTIME_STAMP): $(UV) pyproject.toml uv.lock
	UV_PROJECT_ENVIRONMENT=$(VENV) $(UV) sync --frozen --quiet --compile-bytecode --no-dev \
		--inexact --python $(PYTHON)
	$(VENV)/bin/python -m compileall -q -j 0 src
	touch $(RUNTIME_STAMP)

install: $(STAMP)

demo: $(RUNTIME_STAMP)
	$(VENV)/bin/keiri-agent demo --out out/demo

test: $(STAMP) web-test
	$(VENV)/bin/python -m pytest -q

# Builds web/out only when web/package-lock.json or a source changed (the stamp).
web:
	@if [ ! -f web/package.json ]; then echo "web/ not found: no web UI to build"; \
	elif ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then \
	  echo "$(NO_NODE)"; [ "$${CI:-}" != "true" ] || exit 1; \
	else $(MAKE) --no-print-directory $(WEB_STAMP); fi

$(WEB_STAMP): $(WEB_SOURCES)
	cd web && npm ci --no-audit --no-fund && NEXT_TELEMETRY_DISABLED=1 npm run build
	touch $@

# Vitest, after building web/out for the browser tests that pytest runs next. Without
# Node.js they are skipped with a message (under CI=true that is a failure).
web-test:
	@if [ ! -f web/package.json ]; then echo "web/ not found: skipping the web UI's tests"; \
	elif ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then \
	  echo "$(NO_NODE)"; [ "$${CI:-}" != "true" ] || exit 1; \
	else $(MAKE) --no-print-directory $(WEB_STAMP) && cd web && npm test; fi

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests benchmarks examples
	$(VENV)/bin/ruff format --check src tests benchmarks examples

typecheck: $(STAMP)
	$(VENV)/bin/mypy

ui: $(RUNTIME_STAMP)
	$(VENV)/bin/keiri-agent ui

bench: $(STAMP)
	for script in benchmarks/*.py; do echo "== $$script"; $(VENV)/bin/python $$script || exit 1; done

clean:
	rm -rf $(VENV) $(TOOLS) out .pytest_cache .mypy_cache .ruff_cache
