"""cli.common.settings: built once per command invocation, fresh for the next one."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer import _click as click  # Typer's own Click: the contexts its commands run in
from typer.core import TyperCommand, TyperGroup
from typer.testing import CliRunner

from keiri_agent import config
from keiri_agent.cli.app import app
from keiri_agent.cli.common import settings

SAMPLE_PLAN = Path(config.__file__).parent / "samples" / "plans" / "expense_check.yaml"


def test_one_settings_object_per_invocation(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KEIRI_AGENT_LOG_LEVEL", "DEBUG")
    with click.Context(TyperGroup(name="keiri-agent")) as root:
        with click.Context(TyperCommand(name="plan"), parent=root):
            first = settings()
            assert settings() is first
        assert root.meta["keiri_agent.settings"] is first
    monkeypatch.setenv("KEIRI_AGENT_LOG_LEVEL", "ERROR")
    with click.Context(TyperGroup(name="keiri-agent")):
        again = settings()
    assert again is not first
    assert (first.logs.log_level, again.logs.log_level) == ("DEBUG", "ERROR")


def test_a_real_invocation_loads_the_settings_once(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("KEIRI_AGENT_HOME", str(tmp_path))
    calls = []
    load = config.load_settings

    def counting() -> config.Settings:
        calls.append(1)
        return load()

    monkeypatch.setattr(config, "load_settings", counting)
    result = CliRunner().invoke(app, ["plan", "validate", str(SAMPLE_PLAN), "--json"])
    assert result.exit_code in (0, 1), result.output
    assert len(calls) == 1  # the root callback's and the command's are one object
