"""One Settings object per browser session, built by app.py; one ``Services`` per process,
built from them and shared by every page and session (``ui.session``)."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from keiri_agent.config import Settings
from keiri_agent.ui import session
from keiri_agent.ui.session import SETTINGS

APP = str(Path(__file__).resolve().parents[2] / "src" / "keiri_agent" / "ui" / "app.py")
PAGES = ["helpdesk_page.py", "research_page.py", "design_page.py", "run_page.py"]


def _visit_every_page() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()  # the データ分析 page
    assert not at.exception, at.exception
    for page in PAGES:
        at.switch_page(page).run()
        assert not at.exception, at.exception
    return at


def test_every_page_of_every_session_uses_the_process_services(keiri_home: Path) -> None:
    (keiri_home / "designs").mkdir()
    first = _visit_every_page()
    settings = first.session_state[SETTINGS]
    second = _visit_every_page()  # another browser session
    assert second.session_state[SETTINGS] == settings
    services = session._services(settings)
    assert services.settings is settings  # built from the first session's settings
    assert session._services(second.session_state[SETTINGS]) is services
    assert services.process_runs is services.process_runs  # its run executor: one
    first.run()
    assert first.session_state[SETTINGS] is settings  # not rebuilt on a rerun


def test_another_workspace_gets_its_own_services_and_closes_the_old(
    keiri_home: Path, tmp_path: Path
) -> None:
    settings = Settings()
    services = session._services(settings)
    runs = services.process_runs
    other = session._services(Settings(home=tmp_path / "other"))
    assert other is not services
    assert other.settings.storage.home == tmp_path / "other"
    assert runs.local is not None
    assert runs.local._stop.is_set(), "the old run executor was closed"
