"""Column types of a table read from a file, by the office rules of :mod:`files.cells`.

``csv.read`` and ``excel.read_data`` both call :func:`type_columns`, so a column reads
the same way from either file. Per column:

- **number** when every non-empty cell is a number: a number value, or text that
  :func:`~keiri_agent.files.cells.parse_number` reads (``1,234`` ``¥1,234`` ``1,234円``
  ``△500`` ``(500)`` ``１２３``). Whole numbers become ``int``. A column where one value
  is a code with a leading zero (``00123``; ``0`` and ``0.5`` are numbers) stays text.
- **date** when every non-empty cell is a date without a time of day (``2025/4/1``
  ``2025-04-01`` ``2025年4月1日`` ``令和7年4月1日`` ``R7.4.1``): each value becomes ISO
  text ``2025-04-01``, so dates compare as text (``table.filter``).
- **text** otherwise: every cell stays exactly as read.

Empty cells (null, or only spaces) become null in number and date columns; a column
without a non-empty cell is left as it is.

``types`` names a column's type instead (``text``, ``number``, ``date``; ``auto`` infers
it even when inference is off). A cell the forced type cannot read raises
:class:`ColumnTypeError` naming the column, the data row (1-based) and the value.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterable, Mapping, MutableMapping, Sequence
from typing import Any, Literal, cast

from keiri_agent.errors import UserInputError, closest_match
from keiri_agent.files.cells import DATE_RE, nfkc, parse_date, parse_number

ColumnType = Literal["text", "number", "date"]
TYPE_CHOICES = ("auto", "text", "number", "date")
"""What ``types`` may say of a column."""
TYPE_LABELS: Mapping[str, str] = {"text": "文字列", "number": "数値", "date": "日付"}

_CODE_RE = re.compile(r"[-+△▲(¥$\\\s]*0[\d,]")
"""``00123``, ``-012`` (after NFKC): a code with a leading zero, not a number."""
_PLAIN_INT_RE = re.compile(r"-?[1-9]\d{0,17}|0")
_Convert = Callable[[Any], Any]


class ColumnTypeError(UserInputError):
    """``types`` is malformed, or a cell cannot be read as its column's forced type."""

    code = "COLUMN_TYPE"


def type_columns(
    records: Sequence[MutableMapping[str, Any]],
    columns: Sequence[str],
    *,
    types: Mapping[str, str] | None = None,
    infer: bool = True,
) -> dict[str, ColumnType | None]:
    """Convert ``records`` in place, column by column; the type each column got.

    A column not in ``types`` is inferred when ``infer`` (else left as read: ``None``
    in the result). The result is ``None`` also for a column with no non-empty cell.

    Raises:
        ColumnTypeError: ``types`` names an unknown column or type, or a cell cannot be
            read as the type ``types`` forces.
    """
    forced = check_types(types, columns)
    found: dict[str, ColumnType | None] = {}
    for column in columns:
        wanted = forced.get(column, "auto" if infer else None)
        values = [row.get(column) for row in records]
        if wanted is None:
            found[column] = None
            continue
        kind: ColumnType | None
        converted: list[Any] | None
        if wanted == "auto":
            kind, converted = infer_column(values)
        else:
            kind, converted = cast(ColumnType, wanted), _forced(column, values, wanted)
        found[column] = kind
        if converted is not None:
            for row, value in zip(records, converted, strict=True):
                row[column] = value
    return found


def check_types(types: Any, columns: Sequence[str]) -> dict[str, str]:
    """``types`` as ``{column: type}``; ColumnTypeError naming what is wrong."""
    if types is None:
        return {}
    if not isinstance(types, Mapping):
        raise ColumnTypeError(
            "types は「列名: 型」の対応で指定してください",
            hint="例: types: {金額: number, 日付: date, 取引先コード: text}",
        )
    checked: dict[str, str] = {}
    for column, kind in types.items():
        if kind not in TYPE_CHOICES:
            raise ColumnTypeError(
                f"types: 列 {column!r} の型 {kind!r} は使えません"
                f"（使えるもの: {', '.join(TYPE_CHOICES)}）",
                hint="text（文字列のまま）、number（数値）、date（日付）、auto（自動判定）の"
                "どれかを指定してください",
                details={"column": str(column), "choices": list(TYPE_CHOICES)},
            )
        if column not in columns:
            suggestion = closest_match(str(column), list(columns))
            shown = ", ".join(list(columns)[:40])
            raise ColumnTypeError(
                f"types: 列 {column!r} は読んだ表にありません（列: {shown}）",
                hint=f"{suggestion!r} ではありませんか？"
                if suggestion
                else "列名は大文字・小文字・空白も区別します。読んだ表の列名を確かめてください",
                details={"column": str(column), "choices": list(columns)},
            )
        checked[str(column)] = str(kind)
    return checked


def infer_column(values: Sequence[Any]) -> tuple[ColumnType | None, list[Any] | None]:
    """The type of one column's values and the converted values (None: keep them).

    ``(None, None)`` when no value is non-empty; ``("text", None)`` when the column is
    neither all numbers nor all dates.
    """
    first = next((value for value in values if not is_empty(value)), None)
    if first is None:
        return None, None
    if number_value(first) is not None:
        numbers = _convert_all(values, _inferred_number)
        if numbers is not None:
            return "number", numbers
    elif date_text(first, allow_time=False) is not None:
        dates = _convert_all(values, lambda value: date_text(value, allow_time=False))
        if dates is not None:
            return "date", dates
    return "text", None


def is_empty(value: Any) -> bool:
    """None, NaN, or text of spaces only."""
    if value is None:
        return True
    if isinstance(value, float):
        return value != value
    return isinstance(value, str) and not value.strip()


def number_value(value: Any) -> int | float | None:
    """A number cell, or office number text (whole numbers as ``int``), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return value
    if not isinstance(value, str):
        return None
    if _PLAIN_INT_RE.fullmatch(value):  # the common case, without NFKC or Decimal
        return int(value)
    try:
        return parse_number(value)
    except ValueError:
        return None


def date_text(value: Any, *, allow_time: bool) -> str | None:
    """A date cell as ISO text ``YYYY-MM-DD``, else None (also a date with a time of day
    unless ``allow_time``: inference never drops a time)."""
    if isinstance(value, dt.datetime):
        return value.date().isoformat() if allow_time or value.time() == dt.time() else None
    if isinstance(value, dt.date):
        return value.isoformat()
    if not isinstance(value, str):
        return None
    if not allow_time:
        match = DATE_RE.fullmatch(nfkc(value))
        if match is not None and match.group(3):
            return None
    try:
        return parse_date(value).isoformat()
    except ValueError:
        return None


def _inferred_number(value: Any) -> int | float | None:
    if isinstance(value, str) and _CODE_RE.match(nfkc(value)):
        return None  # a code such as 00123: the column stays text
    return number_value(value)


def _convert_all(values: Iterable[Any], convert: _Convert) -> list[Any] | None:
    """Every value converted (empty → None); None as soon as one cannot be."""
    converted: list[Any] = []
    for value in values:
        if is_empty(value):
            converted.append(None)
            continue
        result = convert(value)
        if result is None:
            return None
        converted.append(result)
    return converted


def _forced(column: str, values: Sequence[Any], kind: str) -> list[Any]:
    converted: list[Any] = []
    for row, value in enumerate(values, start=1):
        if is_empty(value):
            converted.append(None if kind != "text" else value)
            continue
        if kind == "text":
            converted.append(_text(value))
            continue
        result = number_value(value) if kind == "number" else date_text(value, allow_time=True)
        if result is None:
            raise ColumnTypeError(
                f"列 {column!r} のデータ {row} 行目の値 {value!r} を"
                f"{TYPE_LABELS[kind]}として読めません（types で {kind} を指定しています）",
                hint="ファイルのその値を直すか、types のその列を text または auto にしてください"
                + (
                    "（使える形: 1,234 / ¥1,234 / 1,234円 / △500 / (500)）"
                    if kind == "number"
                    else "（使える形: 2025-04-01 / 2025/4/1 / 2025年4月1日 / 令和7年4月1日）"
                ),
                details={"column": column, "row": row, "value": _shown(value), "type": kind},
            )
        converted.append(result)
    return converted


def _text(value: Any) -> Any:
    """A cell as text: numbers without a trailing ``.0``, booleans as Excel writes them."""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, int | float):
        return str(value)
    return value


def _shown(value: Any) -> Any:
    return value if isinstance(value, str | int | float | bool) else str(value)
