"""Oversized inputs: a few kilobytes that declare a huge table.

Catalogue (attack → what used to happen → what happens now):

- an .xlsx of ~2 KB with A1:B2 filled and one empty, styled cell at XFD1048576 →
  ``analyze`` ran ~110 s and ended in a MemoryError traceback, ``excel.read_data`` ~3 min
  → only the real used range (cells holding a value) is read: A1:B2, at once;
- the same with a *value* at XFD1048576 → the same minutes of CPU and gigabytes → refused
  before any grid is built (``INPUT_TOO_MANY_CELLS``), with a Japanese message naming the
  setting; document text extraction reads the filled rows only, with a "truncated" note;
- thousands of rows whose only cell is an empty one at column XFD → ~2 ms CPU per row in
  document text extraction (HelpDesk indexing, ``document.extract_text``) → rows with no
  value cost nothing: no row is padded to 16,384 columns;
- a CSV that is one line of 1,000,000 commas (1 MB) → refused after 174 s at a 3.7 GB
  peak → refused at once by the column limit (``INPUT_TOO_MANY_COLUMNS``); the FAQ CSV
  reader of the HelpDesk index shares the check;
- an .xlsx whose 3,000 records fill A:B and also column XFD → loaded as 3,000 行 × 2 列,
  the XFD values dropped by the column limit without a word (the bound's note was lost
  on the way to the dataset summary) → the summary's ``notes`` say which columns (rows,
  for the row limit) were not read and how many value cells that was.

The hostile calls run under :func:`run_isolated` (a child with a time and a memory
limit), so on the old code a test fails quickly with ActionMemoryError/ActionTimeoutError
instead of taking the machine with it; results are checked by content, not wall clock.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from openpyxl import Workbook

from keiri_agent.agents.analysis.datasets.loading import read_excel, read_text_table
from keiri_agent.agents.analysis.runtime.isolation import isolation_available, run_isolated
from keiri_agent.documents.extract import extract_text
from keiri_agent.errors import KeiriAgentError
from keiri_agent.files.excel import read_sheet
from keiri_agent.limits import InputLimits

pytestmark = pytest.mark.skipif(not isolation_available(), reason="needs fork")

_TIMEOUT_S = 60.0
_MEMORY_MB = 768


def _xlsx(extra_rows: str = "") -> bytes:
    """A workbook with A1:B2 filled (header 名前/金額, one record) and ``extra_rows`` appended."""
    book = Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.title = "売上"
    sheet.append(["名前", "金額"])
    sheet.append(["A社", 100])
    buffer = io.BytesIO()
    book.save(buffer)
    source = zipfile.ZipFile(io.BytesIO(buffer.getvalue()))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            part = source.read(info.filename)
            if info.filename == "xl/worksheets/sheet1.xml" and extra_rows:
                part = part.replace(b"</sheetData>", extra_rows.encode() + b"</sheetData>")
                part = re.sub(
                    rb"<sheetData/>", b"<sheetData>" + extra_rows.encode() + b"</sheetData>", part
                )
            target.writestr(info, part)
    return out.getvalue()


FAR_STYLED = _xlsx('<row r="1048576"><c r="XFD1048576" s="0"/></row>')
FAR_VALUE = _xlsx('<row r="1048576"><c r="XFD1048576"><v>1</v></c></row>')
EMPTY_XFD_ROWS = _xlsx("".join(f'<row r="{n}"><c r="XFD{n}" s="0"/></row>' for n in range(3, 4003)))


def _outcome(func: Callable[..., Any], *args: Any) -> Any:
    """``func(*args)`` in a bounded child: its result, or ``("error", code, message)``."""

    def call() -> Any:
        try:
            return func(*args)
        except KeiriAgentError as exc:
            return ("error", exc.code, exc.message)

    return run_isolated(call, timeout_s=_TIMEOUT_S, memory_mb=_MEMORY_MB)


def test_the_hostile_files_are_tiny() -> None:
    assert len(FAR_STYLED) < 8_000 and len(FAR_VALUE) < 8_000
    assert len(EMPTY_XFD_ROWS) < 40_000


def test_analysis_reads_only_the_real_used_range_of_a_sheet() -> None:
    frame, _, _ = _outcome(read_excel, FAR_STYLED, "far.xlsx", None)
    assert list(frame.columns) == ["名前", "金額"]
    assert frame.to_dict("records") == [{"名前": "A社", "金額": 100}]


def test_excel_read_data_reads_only_the_real_used_range() -> None:
    table = _outcome(read_sheet, FAR_STYLED)
    assert table.columns == ["名前", "金額"]
    assert table.records == [{"名前": "A社", "金額": 100}]
    assert table.notes == []


def test_a_value_far_away_is_refused_before_a_grid_is_built() -> None:
    kind, code, message = _outcome(read_excel, FAR_VALUE, "far.xlsx", None)
    assert (kind, code) == ("error", "INPUT_TOO_MANY_CELLS")
    assert "使用範囲" in message and "KEIRI_AGENT" not in message  # the setting is in the hint
    kind, code, message = _outcome(read_sheet, FAR_VALUE)
    assert (kind, code) == ("error", "EXCEL_TOO_LARGE")
    assert "セル" in message


def test_document_extraction_reads_filled_rows_only_with_a_truncated_note() -> None:
    result = _outcome(extract_text, FAR_VALUE, "far.xlsx")
    assert result.text == "## 売上\n名前\t金額\nA社\t100"
    assert any("先頭の 2,000 列" in warning for warning in result.warnings)


def test_rows_of_empty_far_cells_cost_nothing_in_document_extraction(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import keiri_agent.documents.office as office

    converted: list[Any] = []
    original = office._cell_text

    def counting(value: Any) -> str:
        converted.append(value)
        return original(value)

    monkeypatch.setattr(office, "_cell_text", counting)
    result = _outcome(lambda: (extract_text(EMPTY_XFD_ROWS, "rows.xlsx"), len(converted)))
    extracted, count = result
    assert extracted.text == "## 売上\n名前\t金額\nA社\t100"
    assert count == 4  # the four filled cells; no row padded to column XFD


def test_a_csv_line_of_a_million_commas_is_refused_at_once() -> None:
    data = b"," * 1_000_000 + b"\n"
    kind, code, message = _outcome(read_text_table, data, "commas.csv", ".csv")
    assert (kind, code) == ("error", "INPUT_TOO_MANY_COLUMNS")
    assert "列数の上限" in message


def test_a_csv_header_wider_than_the_limit_is_refused_by_the_faq_reader() -> None:
    from keiri_agent.search.chunking import chunk_faq

    data = ("質問,回答" + "," * 1_000_000 + "\nQ,A\n").encode()
    kind, code, _ = _outcome(chunk_faq, "faq.csv", data)
    assert (kind, code) == ("error", "INPUT_TOO_MANY_COLUMNS")


def test_a_normal_wide_csv_still_loads() -> None:
    header = ",".join(f"c{i}" for i in range(300))
    row = ",".join(str(i) for i in range(300))
    frame, _, _ = read_text_table(f"{header}\n{row}\n".encode(), "wide.csv", ".csv")
    assert frame.shape == (1, 300)


def test_writing_into_a_sheet_with_a_far_styled_cell_stays_bounded() -> None:
    from keiri_agent.files.excel import write_records

    written = _outcome(
        lambda: read_sheet(write_records(FAR_STYLED, [{"名前": "B社", "金額": 5}], sheet="売上"))
    )
    assert written.records[-1] == {"名前": "B社", "金額": 5}


def _records_xlsx(path: Path, records: int, *, far_column: bool) -> Path:
    """A real workbook: 名前/金額 in A:B for ``records`` rows, 備考 in column XFD if asked."""
    book = Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.title = "売上"
    for row in range(1, records + 2):
        sheet.cell(row, 1, "名前" if row == 1 else f"取引先{row}")
        sheet.cell(row, 2, "金額" if row == 1 else row * 10)
        if far_column:
            sheet.cell(row, 16_384, "備考" if row == 1 else f"メモ{row}")
    book.save(path)
    return path


def _loaded_summary(path: Path) -> dict[str, Any]:
    from keiri_agent.agents.analysis.datasets.registry import DatasetRegistry

    registry = DatasetRegistry(max_bytes=50 * 2**20)
    return registry.summary(registry.load_path(path))


def test_far_column_values_cut_by_the_column_limit_are_noted_in_the_summary(
    tmp_path: Path,
) -> None:
    summary = _loaded_summary(_records_xlsx(tmp_path / "far.xlsx", 3_000, far_column=True))
    assert summary["rows"] == 3_000
    assert [column["name"] for column in summary["columns"]] == ["名前", "金額"]
    notes = summary.get("notes", [])
    assert any("XFD 列" in note and "3,001 セル" in note for note in notes), notes


def test_rows_cut_by_the_row_limit_are_noted_in_the_summary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import keiri_agent.limits as limits

    monkeypatch.setattr(limits, "_current", InputLimits(max_rows=1_000))
    summary = _loaded_summary(_records_xlsx(tmp_path / "long.xlsx", 1_500, far_column=False))
    assert summary["rows"] == 999  # the header is row 1
    notes = summary.get("notes", [])
    assert any("1,001〜1,501 行目" in note and "1,002 セル" in note for note in notes), notes
