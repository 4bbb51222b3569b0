"""``table.to_markdown``: a table as a Markdown pipe table, for a report.

``document.render`` turns Markdown into a Word document; this block is what puts a table
(the result of a filter or an aggregation) into that Markdown. Numbers keep their value
with thousands separators (``1,234``, ``1,234.5``), dates and times are ISO, blanks are
empty cells, a ``|`` in a cell is escaped and a line break becomes a space, so the table
reads back cell for cell. A table that would exceed what ``document.render`` accepts is
refused with what to do instead, never cut.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Mapping
from typing import Any

from keiri_agent.blocks.base import BlockContext, ProcessingBlock
from keiri_agent.blocks.document_render import MAX_MARKDOWN_CHARS
from keiri_agent.blocks.records import check_columns, columns_of, invalid, records_input


def cell_text(value: Any) -> str:
    """One cell as Markdown text."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, bool):
        return "はい" if value else "いいえ"
    if isinstance(value, int | float):
        return format(value, ",")
    if isinstance(value, dt.date | dt.datetime | dt.time):
        return value.isoformat()
    text = value if isinstance(value, str) else str(value)
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\r", " ").replace("\n", " ")


class ToMarkdownBlock(ProcessingBlock):
    """``table.to_markdown``: records → a Markdown pipe table (with an optional heading)."""

    def run(self, inputs: Mapping[str, Any], ctx: BlockContext) -> dict[str, Any]:
        records = records_input(inputs)
        columns = inputs.get("columns")
        if columns is not None:
            if not isinstance(columns, list) or not all(isinstance(c, str) for c in columns):
                raise invalid("columns は列名（文字列）のリストで指定してください", field="columns")
            check_columns(columns, records, "columns")
        names: list[str] = list(columns) if columns else columns_of(records)
        lines: list[str] = []
        title = inputs.get("title")
        if isinstance(title, str) and title.strip():
            lines += [f"## {cell_text(title.strip())}", ""]
        if not names:
            lines.append("（該当する行はありません）")
        else:
            numeric = [
                all(
                    isinstance(row.get(name), int | float) and not isinstance(row.get(name), bool)
                    for row in records
                    if row.get(name) is not None
                )
                and any(row.get(name) is not None for row in records)
                for name in names
            ]
            lines.append("| " + " | ".join(cell_text(name) for name in names) + " |")
            lines.append("|" + "|".join("---:" if right else "---" for right in numeric) + "|")
            for number, row in enumerate(records):
                if number % 10_000 == 0:
                    ctx.check_cancelled()
                lines.append("| " + " | ".join(cell_text(row.get(name)) for name in names) + " |")
            if not records:
                lines += ["", "（該当する行はありません）"]
        markdown = "\n".join(lines) + "\n"
        if len(markdown) > MAX_MARKDOWN_CHARS:
            raise invalid(
                f"表が大きすぎて文書にできません（{len(records):,} 行、"
                f"Markdown で {len(markdown):,} 文字。上限は {MAX_MARKDOWN_CHARS:,} 文字）",
                hint="絞り込みや集計で行を減らすか、Excel か CSV で出力してください",
                field="records",
            )
        return {"markdown": markdown, "rows": len(records)}
