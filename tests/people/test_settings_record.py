"""Settings changes in the audit trail: the first start records them all, a restart
with the same settings records nothing, a changed setting is named with its value
before and after; secrets and URL passwords never enter the trail."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy
from pydantic import SecretStr

from keiri_agent.config import Settings
from keiri_agent.people.audit import AuditTrail
from keiri_agent.people.settings_record import record_settings
from keiri_agent.storage.engine import create_engine
from keiri_agent.storage.migrate import upgrade


@pytest.fixture
def trail(tmp_path: Path) -> Iterator[AuditTrail]:
    engine: sqlalchemy.Engine = create_engine(Settings(home=tmp_path))
    upgrade(engine)
    yield AuditTrail(engine)
    engine.dispose()


def test_a_changed_setting_is_recorded_once_with_before_and_after(
    trail: AuditTrail, tmp_path: Path
) -> None:
    secret = "s3cr3t-token-value-that-is-long-enough-1234"
    first = Settings(home=tmp_path, provider="offline", api_token=SecretStr(secret))
    entry = record_settings(first, trail, "ops")
    assert entry is not None and entry.kind == "settings_changed"
    assert record_settings(first, trail, "ops") is None

    changed = first.with_values(team_sharing=True, api_session_hours=4.0)
    entry = record_settings(changed, trail, "ops")
    assert entry is not None
    assert sorted(entry.details["changed"]) == [
        ["api_session_hours", 8.0, 4.0],
        ["team_sharing", False, True],
    ]
    settings = dict(entry.details["settings"])
    assert settings["api_token"] == "設定あり"
    assert secret not in json.dumps([e.details for e in trail.entries()])
    assert trail.verify().ok


def test_a_password_in_the_database_url_is_not_recorded(trail: AuditTrail, tmp_path: Path) -> None:
    url = "postgresql+psycopg://keiri:hunter2@db.example:5432/keiri"
    entry = record_settings(Settings(home=tmp_path, database_url=url), trail, "ops")
    assert entry is not None
    assert dict(entry.details["settings"])["database_url"] == (
        "postgresql+psycopg://***@db.example:5432/keiri"
    )
    assert "hunter2" not in json.dumps(entry.details)
