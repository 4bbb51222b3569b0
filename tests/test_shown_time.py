"""One time zone for every surface (issue 34): times as 2026/11/28 13:02 in the setting."""

from __future__ import annotations

from datetime import UTC, datetime

from keiri_agent.config import Settings
from keiri_agent.shown_time import shown_day, shown_time


def test_a_time_is_shown_in_the_configured_zone_as_an_office_writes_it() -> None:
    moment = datetime(2026, 11, 28, 4, 2, 30, tzinfo=UTC)
    assert shown_time(moment) == "2026/11/28 13:02"
    assert shown_time("2026-11-28T04:02:30+00:00", "America/New_York") == "2026/11/27 23:02"
    assert shown_time("2026-11-28T04:02:30") == "2026/11/28 13:02"  # naive is UTC
    assert shown_time(None) == "" and shown_time("昨日") == "昨日"
    assert shown_day(moment, "Asia/Tokyo") == "2026/11/28"


def test_the_setting_defaults_to_tokyo_and_names_a_bad_zone(tmp_path: object) -> None:
    import pytest
    from pydantic import ValidationError

    assert Settings().plans.time_zone == "Asia/Tokyo"
    with pytest.raises(ValidationError, match="タイムゾーン"):
        Settings(time_zone="Tokyo/Nowhere")
