"""An invalid setting is a clear ConfigurationError naming the variable, on every surface."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest
from typer.testing import CliRunner

from keiri_agent import config
from keiri_agent.cli.app import app
from keiri_agent.config import Settings
from keiri_agent.errors import ConfigurationError

runner = CliRunner()
APP = str(Path(__file__).resolve().parents[1] / "src" / "keiri_agent" / "ui" / "app.py")


def test_env_names_follow_the_prefix_or_the_first_alias() -> None:
    assert config.env_name("max_upload_mb") == "KEIRI_AGENT_MAX_UPLOAD_MB"
    assert config.env_name("azure_openai_endpoint") == "KEIRI_AGENT_AZURE_OPENAI_ENDPOINT"
    assert config.env_name("home") == "KEIRI_AGENT_HOME"


def test_valid_settings_load_as_before() -> None:
    assert isinstance(config.load_settings(), Settings)
    assert config.load_settings(max_upload_mb=5).inputs.max_upload_mb == 5


def test_bad_values_name_every_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KEIRI_AGENT_MAX_UPLOAD_MB", "0")
    monkeypatch.setenv("KEIRI_AGENT_LOG_LEVEL", "verbose")
    with pytest.raises(ConfigurationError) as raised:
        config.load_settings()
    error = raised.value
    assert "設定 KEIRI_AGENT_MAX_UPLOAD_MB が不正です" in error.message
    assert "設定 KEIRI_AGENT_LOG_LEVEL が不正です" in error.message
    assert "verbose" in error.message
    assert error.hint is not None and ".env" in error.hint and "環境変数" in error.hint
    variables = [item["variable"] for item in error.details["settings"]]
    assert variables == ["KEIRI_AGENT_MAX_UPLOAD_MB", "KEIRI_AGENT_LOG_LEVEL"]


def test_a_bad_value_in_dot_env_is_named_too(keiri_home: Path) -> None:
    (keiri_home / ".env").write_text("KEIRI_AGENT_MAX_UPLOAD_MB=-1\n", encoding="utf-8")
    with pytest.raises(ConfigurationError, match="KEIRI_AGENT_MAX_UPLOAD_MB"):
        config.load_settings()


def test_an_undecodable_list_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KEIRI_AGENT_BLOCK_SPEC_DIRS", "not json")
    with pytest.raises(ConfigurationError, match="KEIRI_AGENT_BLOCK_SPEC_DIRS"):
        config.load_settings()


def test_secrets_are_never_echoed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KEIRI_AGENT_PROVIDER", "nonsense")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-value")
    with pytest.raises(ConfigurationError) as raised:
        config.load_settings()
    assert "KEIRI_AGENT_PROVIDER" in raised.value.message
    assert "sk-secret-value" not in str(raised.value.to_dict())


@pytest.mark.parametrize(
    "command",
    [
        ["blocks", "list"],
        ["-v", "blocks", "list"],
        ["plan", "validate", "x"],
        ["helpdesk", "status"],
        ["analyze", "data.csv", "--spec", "spec.json"],
    ],
)
def test_cli_reports_a_bad_setting_without_a_traceback(
    monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    monkeypatch.setenv("KEIRI_AGENT_MAX_UPLOAD_MB", "0")
    result = runner.invoke(app, command)
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "設定 KEIRI_AGENT_MAX_UPLOAD_MB が不正です" in result.output
    assert ".env" in result.output
    assert "Traceback" not in result.output and "ValidationError" not in result.output


def test_ui_shows_the_error_and_stops(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KEIRI_AGENT_LOG_LEVEL", "verbose")
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    assert not at.exception
    errors = [str(e.value) for e in at.error]
    assert any("KEIRI_AGENT_LOG_LEVEL" in e and ".env" in e for e in errors), errors
