"""What every page shows around its content: no developer toolbar, Japanese uploaders.

The toolbar is hidden by the option ``keiri-agent ui`` passes to Streamlit (the page
itself cannot set it); the uploader's texts are replaced by a style sheet, checked here
by its content (how it renders was checked by hand in Chromium).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest
from typer.testing import CliRunner

from keiri_agent.cli import app as cli_app

APP = str(Path(__file__).resolve().parents[2] / "src" / "keiri_agent" / "ui" / "app.py")


def test_keiri_agent_ui_starts_streamlit_without_the_developer_toolbar(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    commands: list[list[str]] = []

    def run_child(command: list[str], env: Any) -> int:
        commands.append(command)
        return 0

    monkeypatch.setattr(cli_app, "run_child", run_child)
    result = CliRunner().invoke(cli_app.app, ["ui", "--port", "8600"])

    assert result.exit_code == 0, result.output
    (command,) = commands
    option = command.index("--client.toolbarMode")
    assert command[option + 1] in ("minimal", "viewer")
    # Streamlit's upload limit (200 MB by default) is ours: 1 GiB unless configured
    upload = command.index("--server.maxUploadSize")
    assert command[upload + 1] == "1024"


def test_every_page_replaces_the_uploaders_english_texts(keiri_home: Path) -> None:
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    for page in (None, "helpdesk_page.py", "run_page.py"):
        if page:
            at.switch_page(page).run()
            assert not at.exception, at.exception
        styles = [e.proto.body for e in at.get("html") if "<style>" in e.proto.body]
        assert len(styles) == 1, styles  # once per run
        (style,) = styles
        assert "stFileUploaderDropzoneInstructions" in style
        assert 'content: "ファイルを選択"' in style
        assert "200MB まで" in style  # the size limit, in Japanese


def test_a_plan_forms_uploader_names_the_accepted_formats_in_japanese(keiri_home: Path) -> None:
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    at.switch_page("run_page.py").run()
    at.selectbox(key="run.plan").select("sample:expense_check").run()
    assert not at.exception, at.exception
    (uploader,) = at.get("file_uploader")
    assert "受け付ける形式: .xlsx" in uploader.proto.help


def test_every_page_shows_the_offline_banner_with_how_to_set_an_api_key(keiri_home: Path) -> None:
    """Issue 16 item 6: without an LLM every page says so in its sidebar, and how to set
    one up (the settings file or the environment variable, and where)."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    assert not at.exception, at.exception
    for page in (None, "helpdesk_page.py", "research_page.py", "design_page.py", "run_page.py"):
        if page:
            at.switch_page(page).run()
            assert not at.exception, at.exception
        banners = [w.value for w in at.sidebar.warning if "オフラインモード" in w.value]
        assert len(banners) == 1, (page, banners)
        (banner,) = banners
        assert "オフラインモード（LLM 未設定）" in banner
        assert ".env" in banner and "環境変数 OPENAI_API_KEY" in banner
