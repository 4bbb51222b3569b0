"""table.to_markdown: a table as a Markdown pipe table, read back cell for cell."""

from __future__ import annotations

import datetime as dt
import io

import docx
from block_harness import failure, make_context, run

from keiri_agent.blocks.document_render import MAX_MARKDOWN_CHARS


def test_cells_numbers_dates_blanks_and_escapes() -> None:
    records = [
        {"部門": "営業|1課", "金額": 1234567, "率": 0.5, "日付": dt.date(2024, 4, 1), "備考": None},
        {"部門": "総務\n部", "金額": -300, "率": None, "日付": None, "備考": "確認済"},
    ]
    out = run("table.to_markdown", make_context(), records=records, title="部門別")
    lines = out["markdown"].splitlines()
    assert lines[0] == "## 部門別"
    assert lines[2] == "| 部門 | 金額 | 率 | 日付 | 備考 |"
    assert lines[3] == "|---|---:|---:|---|---|"
    assert lines[4] == "| 営業\\|1課 | 1,234,567 | 0.5 | 2024-04-01 |  |"
    assert lines[5] == "| 総務 部 | -300 |  |  | 確認済 |"
    assert out["rows"] == 2


def test_columns_chosen_and_no_rows_said_so() -> None:
    out = run("table.to_markdown", make_context(), records=[{"a": 1, "b": 2}], columns=["b"])
    assert out["markdown"].splitlines()[:2] == ["| b |", "|---:|"]
    empty = run("table.to_markdown", make_context(), records=[])
    assert "該当する行はありません" in empty["markdown"] and empty["rows"] == 0
    error = failure("table.to_markdown", make_context(), records=[{"a": 1}], columns=["c"])
    assert "c" in str(error)


def test_a_table_too_large_for_a_document_is_refused_not_cut() -> None:
    rows = [{"摘要": "x" * 100, "金額": n} for n in range(MAX_MARKDOWN_CHARS // 100 + 10)]
    error = failure("table.to_markdown", make_context(), records=rows)
    assert "Excel" in (error.hint or "")


def test_the_table_becomes_a_word_table() -> None:
    markdown = run(
        "table.to_markdown", make_context(), records=[{"部門": "営業部", "金額": 125000}]
    )["markdown"]
    document = run("document.render", make_context(), markdown=markdown)["document"]
    table = docx.Document(io.BytesIO(document)).tables[0]
    assert [[cell.text for cell in row.cells] for row in table.rows] == [
        ["部門", "金額"],
        ["営業部", "125,000"],
    ]
