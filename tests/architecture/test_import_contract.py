"""The import-time contract of the CLI: nothing heavy is imported before it is needed.

Each case runs in a fresh interpreter (``subprocess``) and asserts the set of
modules it loaded, never a time: ``import keiri_agent.cli`` (what ``--help`` pays)
loads no LLM client, plotting, database, YAML or settings library; an offline
command loads no OpenAI client; a table question loads no plotting library.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SAMPLES = Path(__file__).resolve().parents[2] / "src" / "keiri_agent" / "samples"

LLM_CLIENTS = ("openai", "langchain_openai")
# LangChain's chat-model base classes (and their callback/tracer machinery beyond what
# LangGraph itself loads): only a provider or an LLM reasoner needs them
CHAT_MODEL_BASE = ("langchain_core.language_models.chat_models",)
# what LangGraph's dependencies' package __init__s load and LangGraph never uses
# (keiri_agent/deferred_packages.py): the LangSmith REST API models, the Platform client
UNUSED_BY_LANGGRAPH = ("langsmith.types.run", "langgraph_sdk.client", "websockets")
START_UP_FREE = (
    *LLM_CLIENTS,
    "matplotlib",
    "sqlalchemy",
    "yaml",
    "rich.markdown",
    "pydantic_settings",
    "keiri_agent.config",
    "jsonschema",
    "pandas",
)

# Runs the CLI like the console script does, then prints every loaded module
# (also when the command exits through SystemExit).
_RUN_CLI = """
import atexit, pathlib, sys
listing = pathlib.Path(sys.argv[1])
atexit.register(lambda: listing.write_text("\\n".join(sorted(sys.modules)), encoding="utf-8"))
sys.argv = ["keiri-agent", *sys.argv[2:]]
from keiri_agent.cli import main
main()
"""


def _loaded(leaked_from: list[str], forbidden: tuple[str, ...]) -> list[str]:
    return sorted(
        name
        for name in leaked_from
        if any(name == root or name.startswith(root + ".") for root in forbidden)
    )


def _modules_after_import(module: str) -> list[str]:
    code = (
        "import sys, importlib; importlib.import_module(sys.argv[1]); "
        "print('\\n'.join(sorted(sys.modules)))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, module], capture_output=True, text=True, check=True
    )
    return result.stdout.split()


def _modules_after_command(tmp_path: Path, *args: str) -> list[str]:
    listing = tmp_path / "modules.txt"
    result = subprocess.run(
        [sys.executable, "-c", _RUN_CLI, str(listing), *args],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return listing.read_text(encoding="utf-8").split()


@pytest.mark.parametrize("module", ["keiri_agent.cli", "keiri_agent.cli.app"])
def test_the_cli_starts_without_heavy_libraries(module: str) -> None:
    leaked = _loaded(_modules_after_import(module), START_UP_FREE)
    assert leaked == [], f"import {module} loads {leaked[:20]}"


def test_help_loads_no_heavy_library(tmp_path: Path) -> None:
    # plain Japanese help (cli/usage.py): Typer's Rich help and its Markdown/traceback stay out
    forbidden = (*START_UP_FREE, "typer.rich_utils", "rich.traceback")
    leaked = _loaded(_modules_after_command(tmp_path, "--help"), forbidden)
    assert leaked == [], f"keiri-agent --help loads {leaked[:20]}"


def test_offline_analyze_of_a_table_question_loads_no_llm_client_plot_or_database(
    tmp_path: Path,
) -> None:
    loaded = _modules_after_command(
        tmp_path, "analyze", str(SAMPLES / "sales.csv"), "地域別の売上合計", "--json"
    )
    assert "pandas" in loaded  # the command did run the analysis
    # --json prints no Markdown: the terminal renderer (rich.markdown, pygments) stays out
    forbidden = (
        *LLM_CLIENTS,
        *CHAT_MODEL_BASE,
        *UNUSED_BY_LANGGRAPH,
        "httpx",  # the HTTP client of a real provider (llm/async_http.py)
        "matplotlib",
        "sqlalchemy",
        "rich.markdown",
    )
    leaked = _loaded(loaded, forbidden)
    assert leaked == [], f"offline analyze loads {leaked[:20]}"


def test_offline_helpdesk_ask_loads_no_llm_client(tmp_path: Path) -> None:
    index_listing = tmp_path / "index"
    index_listing.mkdir()
    indexed = _modules_after_command(index_listing, "helpdesk", "index", "--sample", "--json")
    loaded = _modules_after_command(tmp_path, "helpdesk", "ask", "パスワードを忘れました", "--json")
    assert _loaded(indexed, LLM_CLIENTS) == [], "offline helpdesk index loads an LLM client"
    leaked = _loaded(loaded, (*LLM_CLIENTS, "matplotlib", "sqlalchemy"))
    assert leaked == [], f"offline helpdesk ask loads {leaked[:20]}"


# What an idle ``keiri-agent serve`` holds: the app built and started (the lifespan's
# start-up: migrations, research runs, search sources), no request answered yet.
_IDLE_SERVER = """
import sys, tempfile
from fastapi.testclient import TestClient
from keiri_agent.api.app import create_app
from keiri_agent.config import Settings
app = create_app(Settings(home=tempfile.mkdtemp(), provider="offline"))
with TestClient(app):
    print("\\n".join(sorted(sys.modules)))
"""
IDLE_SERVER_FREE = ("pandas", "matplotlib", "openpyxl", "pypdf", "pdfminer", "docx")
"""numpy is allowed: the keyword search (BM25 scoring) every knowledge base uses needs it."""


def test_an_idle_server_loads_no_data_library() -> None:
    """Issue 31 item 5: an idle ``serve`` held 218 MiB because the analysis routes
    imported the result formatter, which imports pandas at load; data libraries load
    when a route needs them (the first upload or table)."""
    result = subprocess.run(
        [sys.executable, "-c", _IDLE_SERVER], capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert _loaded(result.stdout.split(), IDLE_SERVER_FREE) == []
