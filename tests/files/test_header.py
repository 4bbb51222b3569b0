"""One header detector: analysis loading and the excel.read_data block read one table."""

from __future__ import annotations

import io
import logging
from datetime import date, datetime
from typing import Any

import pandas as pd
import pytest
from openpyxl import Workbook

from keiri_agent.agents.analysis.datasets import DatasetRegistry
from keiri_agent.blocks.base import BlockContext
from keiri_agent.blocks.excel import ReadDataBlock
from keiri_agent.config import Settings
from keiri_agent.files.header import detect_header_row

HEADER = ["日付", "地域", "商品", "売上"]
DATA = [
    [datetime(2025, 1, 5), "関東", "文房具", 1200],
    [datetime(2025, 1, 6), "近畿", "家具", 34800],
    [datetime(2025, 1, 7), "関東", "家具", 9900],
]


def workbook(rows: list[list[Any]]) -> bytes:
    book = Workbook()
    sheet = book.active
    assert sheet is not None
    for row in rows:
        sheet.append(row)
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def by_analysis(data: bytes) -> tuple[list[str], list[dict[str, Any]], list[str]]:
    registry = DatasetRegistry(max_bytes=2**20)
    dataset_id = registry.load_bytes(data, "report.xlsx")
    frame = registry.get(dataset_id)
    frame["日付"] = frame["日付"].dt.date.map(date.isoformat)
    records = [
        {k: v.item() if hasattr(v, "item") else v for k, v in row.items()}
        for row in frame.to_dict("records")
    ]
    return list(frame.columns), records, registry.summary(dataset_id).get("notes", [])


def by_block(data: bytes) -> tuple[list[str], list[dict[str, Any]]]:
    context = BlockContext(
        run_id="run",
        plan_id="plan",
        node_id="node",
        settings=Settings(),
        logger=logging.getLogger(__name__),
    )
    out = ReadDataBlock().run({"workbook": data}, context)
    return out["columns"], out["records"]


EXPECTED = [dict(zip(HEADER, [d.date().isoformat(), *rest], strict=True)) for d, *rest in DATA]


@pytest.mark.parametrize(
    ("above", "note"),
    [
        ([], None),
        # a report title and an output date (two cells: at most half the width) above
        ([["月次売上レポート"], ["出力日", "2025/01/31"], []], "先頭の3行（タイトル）"),
        ([[], []], None),  # blank rows only: no title to mention
    ],
    ids=["header-first", "title-rows", "blank-rows"],
)
def test_analysis_and_read_data_read_the_same_table(
    above: list[list[Any]], note: str | None
) -> None:
    data = workbook([*above, HEADER, *DATA])
    columns, records, notes = by_analysis(data)
    assert (columns, records) == (HEADER, EXPECTED)
    assert by_block(data) == (HEADER, EXPECTED)
    if note is None:
        assert notes == []
    else:
        assert len(notes) == 1 and notes[0].startswith(note)
        assert "月次売上レポート / 出力日 2025/01/31" in notes[0]


@pytest.mark.parametrize(
    ("rows", "expected"),
    [
        ([["a", "b"], ["1", "2"]], 0),
        ([["title"], ["a", "b", "c"], ["1", "2", "3"]], 1),
        ([[None], ["a", "b"], [1, 2]], 1),  # leading blank row
        ([[1, 2], [3, 4]], None),  # numbers: no header
        ([["a", "a"], [1, 2]], None),  # repeated names: no header
        ([["科目", date(2025, 1, 1)], ["旅費", 100]], None),  # a date: data, not names
        ([["title"], ["a", "1,234", "c"], ["x", "y", "z"]], None),  # a number in the candidate
        ([["a", "b", "c"]], 0),  # a header without data is still the first row
        ([], None),
    ],
)
def test_detect_header_row(rows: list[list[Any]], expected: int | None) -> None:
    assert detect_header_row(rows) == expected


def test_a_header_under_titles_may_repeat_names() -> None:
    rows = [["売上明細"], ["科目", "金額", "金額", "備考"], ["旅費", 1, 2, "x"]]
    assert detect_header_row(rows) == 1
    columns, _ = by_block(workbook(rows))
    assert columns == ["科目", "金額", "金額_2", "備考"]


def test_csv_uses_the_same_detector() -> None:
    text = "月次売上レポート\n出力日,2025/01/31\n\n" + "\n".join(
        ",".join(str(cell) for cell in row) for row in [HEADER, *[[d.date(), *r] for d, *r in DATA]]
    )
    registry = DatasetRegistry(max_bytes=2**20)
    frame = registry.get(registry.load_bytes(text.encode("cp932"), "report.csv"))
    assert list(frame.columns) == HEADER and len(frame) == len(DATA)
    assert pd.api.types.is_datetime64_any_dtype(frame["日付"])
