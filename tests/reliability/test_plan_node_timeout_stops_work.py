"""A timed-out Plan node stops its work, not only the wait.

Attack: a Plan node reads a large workbook (or PDF, or ZIP) under a short
``policy.timeout_ms``. Before: the node failed with TIMEOUT_ERROR at once, but its
thread went on parsing the whole file in the background — in a long-lived process (the
Streamlit app) every such node kept burning a CPU until the parse ended. Now: the
runner installs the attempt's cancel event for the block's thread
(``keiri_agent.stopping``), the readers check it per row / page / ZIP chunk, and the
abandoned read ends at the next row.

The assertions count rows read by the parser; the clock is only a guard.
"""

from __future__ import annotations

import io
import threading
from pathlib import Path
from typing import Any

import openpyxl
import pytest

from keiri_agent.config import Settings
from keiri_agent.files import bounds
from keiri_agent.plans.catalog.catalog import BlockCatalog
from keiri_agent.plans.dsl.models import Plan
from keiri_agent.plans.run.runner import PlanRunner
from keiri_agent.stopping import WorkStopped, check_stop, stop_on

ROWS = 20_000


def _big_workbook() -> bytes:
    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.append(["日付", "取引先", "金額"])
    for index in range(ROWS):
        sheet.append([f"2024-04-{index % 28 + 1:02d}", f"取引先{index}", index])
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


@pytest.fixture
def counted_rows(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Counts the rows the sheet parser yields; ``done`` is set when a read ends."""
    seen: dict[str, Any] = {"rows": 0, "done": threading.Event()}
    original = bounds._parsed_rows

    def counting(sheet: Any) -> Any:
        try:
            for row in original(sheet):
                seen["rows"] += 1
                yield row
        finally:
            seen["done"].set()

    monkeypatch.setattr(bounds, "_parsed_rows", counting)
    return seen


def test_a_timed_out_read_data_node_stops_reading_the_workbook(
    tmp_path: Path, counted_rows: dict[str, Any]
) -> None:
    settings = Settings(home=tmp_path)  # type: ignore[arg-type]
    runner = PlanRunner(BlockCatalog.from_settings(settings), settings, runs_dir=tmp_path / "runs")
    plan = Plan.model_validate(
        {
            "apiVersion": "v1",
            "id": "big_read",
            "version": "1.0.0",
            "vars": {"book": None},
            "policy": {"timeout_ms": 20, "on_error": "halt"},
            "graph": [
                {
                    "id": "read",
                    "block": "excel.read_data",
                    "in": {"workbook": "${vars.book}", "sheet": 0},
                }
            ],
            "exports": [],
        }
    )

    result = runner.start(plan, vars={"book": _big_workbook()})

    assert result.status == "failed"
    assert result.errors[0]["code"] == "TIMEOUT_ERROR"
    assert counted_rows["done"].wait(timeout=120), "the abandoned read never ended"
    assert counted_rows["rows"] < ROWS  # stopped early: not every row was parsed


def test_check_stop_raises_only_in_the_thread_whose_event_is_set() -> None:
    event = threading.Event()
    other: list[BaseException] = []

    def elsewhere() -> None:
        try:
            check_stop()
        except BaseException as error:  # pragma: no cover - the failure being tested
            other.append(error)

    with stop_on(event):
        check_stop()  # not set yet
        event.set()
        with pytest.raises(WorkStopped):
            check_stop()
        thread = threading.Thread(target=elsewhere)
        thread.start()
        thread.join()
    check_stop()  # uninstalled again
    assert other == []
