"""Which row of a table names its columns: the one header detector of the project.

Used by the analysis loader (CSV, TSV and Excel) and by ``files.excel.read_sheet``
(so the ``excel.read_data`` block), so that one workbook gives one table whichever
path reads it. It looks at cell values as read (text from CSV; text, numbers and
dates from Excel) in the first :data:`HEADER_SCAN_ROWS` rows after any blank ones:

- Title rows above the header (a report name, an output date: rows with at most
  half as many filled cells as the table is wide) are skipped. The table's width is
  its dominant filled-cell count (the most common among the rows, ties to the wider);
  the header is the first row that fills it, holds no number or date, follows only
  title rows and has a filled row under it.
- Otherwise the first filled row is the header if it names the columns: its filled
  cells are text, none a number or a date, all different, and they fill at least half
  the table's width. When it does not, the table has no header row (``None``); the
  analysis loader then takes the first filled row as names (as ``pandas`` does), and
  ``read_sheet`` names the columns by their letters.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

from keiri_agent.files.cells import looks_like_value

HEADER_SCAN_ROWS = 20


def is_filled(cell: Any) -> bool:
    """Not None, NaN, or text of only whitespace."""
    if cell is None or (isinstance(cell, float) and cell != cell):
        return False
    return not isinstance(cell, str) or bool(cell.strip())


def first_filled_row(rows: Sequence[Sequence[Any]]) -> int | None:
    """The index of the first row with a filled cell, or None."""
    return next((i for i, row in enumerate(rows) if any(is_filled(c) for c in row)), None)


def detect_header_row(rows: Sequence[Sequence[Any]]) -> int | None:
    """The index (into ``rows``) of the header row, or None when no row names the columns."""
    first = first_filled_row(rows)
    if first is None:
        return None
    scanned = rows[first : first + HEADER_SCAN_ROWS]
    counts = [sum(1 for cell in row if is_filled(cell)) for row in scanned]
    tally = Counter(count for count in counts if count)
    width = max(tally, key=lambda count: (tally[count], count))
    titled = _header_after_titles(scanned, counts, width)
    if titled is not None:
        return first + titled
    return first if _names_columns(scanned[0], width) else None


def _header_after_titles(
    rows: Sequence[Sequence[Any]], counts: list[int], width: int
) -> int | None:
    """The header under title rows (index > 0), or None when there are no title rows."""
    if width < 2:
        return None
    index = next((i for i, count in enumerate(counts) if count == width), 0)
    if index == 0 or any(count > width // 2 for count in counts[:index]):
        return None
    if not any(counts[index + 1 :]):  # no data under it
        return None
    if any(looks_like_value(cell) for cell in rows[index] if is_filled(cell)):
        return None
    return index


def _names_columns(row: Sequence[Any], width: int) -> bool:
    filled = [cell for cell in row if is_filled(cell)]
    if not all(isinstance(cell, str) and not looks_like_value(cell) for cell in filled):
        return False
    names = [cell.strip() for cell in filled]
    return len(names) >= max(1, math.ceil(width / 2)) and len(set(names)) == len(names)


def unique_names(cells: Sequence[Any]) -> list[str]:
    """Column names from a header row: blanks named 列1, 列2…, repeats given _2, _3."""
    names: list[str] = []
    for position, cell in enumerate(cells, start=1):
        base = str(cell or "").strip() or f"列{position}"
        name, suffix = base, 2
        while name in names:
            name, suffix = f"{base}_{suffix}", suffix + 1
        names.append(name)
    return names
