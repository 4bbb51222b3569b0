"""Macro workbooks (.xlsm) read and written without leaking an open ZIP archive.

Catalogue (fault → what used to happen → what happens now):

- ``excel.read_data`` / ``excel.write`` on an .xlsm: openpyxl keeps the VBA parts in a
  ``ZipFile`` opened for appending and never closes it → when the workbook was collected,
  ``Exception ignored in: <function ZipFile.__del__ ...>`` appeared on stderr (in the CLI,
  in the app's log) → the archive is closed after loading and reopened read-only, so
  nothing is left for ``__del__`` to write; the macros are still kept on writing.
"""

from __future__ import annotations

import gc
import io
import sys
import zipfile
from collections.abc import Iterator
from typing import Any

import pytest
from openpyxl import Workbook

from keiri_agent.files.excel import list_sheets, read_sheet, write_cells, write_records

_VBA = b"fake VBA project"


def _xlsm() -> bytes:
    book = Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.title = "売上"
    sheet.append(["名前", "金額"])
    sheet.append(["A社", 100])
    buffer = io.BytesIO()
    book.save(buffer)
    out = io.BytesIO(buffer.getvalue())
    with zipfile.ZipFile(out, "a") as package:
        package.writestr("xl/vbaProject.bin", _VBA)
    return out.getvalue()


@pytest.fixture
def unraisable() -> Iterator[list[Any]]:
    """Everything reported through ``sys.unraisablehook`` (what ``__del__`` errors use)."""
    seen: list[Any] = []
    previous = sys.unraisablehook
    sys.unraisablehook = seen.append
    try:
        yield seen
    finally:
        gc.collect()
        sys.unraisablehook = previous


def test_reading_and_writing_an_xlsm_leaves_no_archive_open(unraisable: list[Any]) -> None:
    data = _xlsm()
    assert list_sheets(data) == ["売上"]
    assert read_sheet(data).records == [{"名前": "A社", "金額": 100}]
    written = write_records(data, [{"名前": "B社", "金額": 5}], sheet="売上")
    written = write_cells(written, {"売上!C1": "備考"})
    gc.collect()
    assert [str(item.exc_value) for item in unraisable] == []
    with zipfile.ZipFile(io.BytesIO(written)) as package:
        assert package.read("xl/vbaProject.bin") == _VBA  # the macros are kept
    assert read_sheet(written).records[-1] == {"名前": "B社", "金額": 5, "備考": None}
