"""Fixtures of the web UI tests: Debian Chromium driven by Playwright, and a research
server (scripted, deterministic model) reached through a proxy that can cut connections.

The API test helpers (``tests/api``) and the scripted research model
(``tests/agents/research``) are importable from here."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

TESTS = Path(__file__).resolve().parents[1]
for folder in (TESTS / "api", TESTS / "agents" / "research", Path(__file__).parent):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

from api_support import LiveServer, research_workspace  # noqa: E402
from browser_support import (  # noqa: E402
    CHROMIUM,
    CHROMIUM_FLAGS,
    Site,
    research_model_factory,
    unavailable,
)
from proxy import CuttableProxy  # noqa: E402

from keiri_agent.api.app import create_app  # noqa: E402
from keiri_agent.config import Settings  # noqa: E402


@pytest.fixture(scope="session")
def chromium() -> Iterator[Any]:
    """Headless Debian Chromium (skipped, or failed under CI=true, when missing)."""
    if not CHROMIUM.is_file():
        unavailable(f"Chromium not found at {CHROMIUM}: apt-get install chromium fonts-noto-cjk")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS, headless=True
        )
        yield browser
        browser.close()


@pytest.fixture
def page(chromium: Any) -> Iterator[Any]:
    """A fresh page, 1280×900, Japanese locale."""
    context = chromium.new_context(viewport={"width": 1280, "height": 900}, locale="ja-JP")
    context.set_default_timeout(30_000)
    yield context.new_page()
    context.close()


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Callable[..., Site]]:
    """``site(web_dir, delay_s=0.0, indexed=True, model_factory=None, prepare=None,
    scripted=True)`` → a started ``Site``: the API and the web UI of a research workspace
    (the sample corpus indexed unless ``indexed=False``; ``prepare(settings)`` runs before
    the server starts; the scripted model, ``delay_s`` per model call, unless
    ``model_factory`` is given, or no model at all with ``scripted=False``: the offline
    provider's own rules)
    behind a ``CuttableProxy``; stopped after the test."""
    started: list[Site] = []

    def start(
        web_dir: Path,
        *,
        delay_s: float = 0.0,
        indexed: bool = True,
        model_factory: Callable[[Settings], Any] | None = None,
        prepare: Callable[[Settings], None] | None = None,
        scripted: bool = True,
    ) -> Site:
        home = tmp_path / f"home{len(started)}"
        settings = (
            research_workspace(home, web_dir=web_dir)
            if indexed
            else Settings(home=home, provider="offline", web_dir=web_dir)
        )
        if prepare is not None:
            prepare(settings)
        if scripted and model_factory is None:
            model_factory = research_model_factory(delay_s)
        app = create_app(settings, model_factory=model_factory)
        server = LiveServer(app).start()
        proxy = CuttableProxy(server.port).start()
        running = Site(server=server, proxy=proxy)
        started.append(running)
        return running

    yield start
    for running in started:
        running.proxy.stop()
        running.server.stop()
