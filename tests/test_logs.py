"""Log lines on stderr: level from the settings or -v/-vv, one handler however often set up."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from typer.testing import CliRunner

from keiri_agent.cli.app import app
from keiri_agent.logs import LOGGER_NAME, configure_logging

runner = CliRunner()


def _handlers() -> list[logging.Handler]:
    return [h for h in logging.getLogger(LOGGER_NAME).handlers if h.get_name()]


def test_configure_logging_is_idempotent_and_checks_the_level() -> None:
    configure_logging("INFO")
    configure_logging("debug")
    assert len(_handlers()) == 1
    assert logging.getLogger(LOGGER_NAME).level == logging.DEBUG
    with pytest.raises(ValueError, match="unknown log level 'LOUD'"):
        configure_logging("LOUD")
    configure_logging("WARNING")


def test_verbose_flag_shows_the_helpdesk_steps(keiri_home: Path) -> None:
    assert runner.invoke(app, ["helpdesk", "index", "--sample"]).exit_code == 0
    quiet = runner.invoke(app, ["helpdesk", "ask", "パスワードの条件は？"])
    assert quiet.exit_code == 0 and "INFO keiri_agent.helpdesk" not in quiet.output
    verbose = runner.invoke(app, ["-v", "helpdesk", "ask", "パスワードの条件は？"])
    assert verbose.exit_code == 0, verbose.output
    assert "INFO keiri_agent.helpdesk: create_plan: start" in verbose.output
    assert "DEBUG" not in verbose.output
    debug = runner.invoke(app, ["-vv", "helpdesk", "ask", "パスワードの条件は？"])
    assert "DEBUG keiri_agent.helpdesk" in debug.output
    configure_logging("WARNING")


def test_log_level_setting(keiri_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KEIRI_AGENT_LOG_LEVEL", "INFO")
    runner.invoke(app, ["blocks", "list"])
    assert logging.getLogger(LOGGER_NAME).level == logging.INFO
    configure_logging("WARNING")
    assert logging.getLogger(LOGGER_NAME).level == logging.NOTSET  # inherits again
