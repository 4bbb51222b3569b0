"""cli.common.settings: built once per command invocation, fresh for the next one."""

from __future__ import annotations

import click
import pytest

from keiri_agent.cli.common import settings


def test_one_settings_object_per_invocation(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KEIRI_AGENT_LOG_LEVEL", "DEBUG")
    with click.Context(click.Group("keiri-agent")) as root:
        with click.Context(click.Command("plan"), parent=root):
            first = settings()
            assert settings() is first
        assert root.meta["keiri_agent.settings"] is first
    monkeypatch.setenv("KEIRI_AGENT_LOG_LEVEL", "ERROR")
    with click.Context(click.Group("keiri-agent")):
        again = settings()
    assert again is not first
    assert (first.log_level, again.log_level) == ("DEBUG", "ERROR")
