"""One Settings object per browser session, built by app.py and shared by every page."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from keiri_agent.ui.session import SETTINGS

APP = str(Path(__file__).resolve().parents[2] / "src" / "keiri_agent" / "ui" / "app.py")


def test_every_page_uses_the_sessions_settings(keiri_home: Path) -> None:
    (keiri_home / "designs").mkdir()
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    settings = at.session_state[SETTINGS]
    assert at.session_state["analysis.agent"].settings is settings
    at.switch_page("helpdesk_page.py").run()
    assert at.session_state["helpdesk.desk"].settings is settings
    at.switch_page("run_page.py").run()
    assert at.session_state["run.engine"].settings is settings
    at.run()
    assert at.session_state[SETTINGS] is settings  # not rebuilt on a rerun
