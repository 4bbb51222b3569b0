"""Building results: artifacts, JSON-safe table payloads, labels and run logs.

Shared by the analysis ops (``executor``) and the plots (``plots``).
"""

from __future__ import annotations

import datetime as dt
import math
import re
import time
import uuid
from collections.abc import Collection, Hashable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import numpy as np
import pandas as pd

from keiri_agent.agents.analysis.artifacts import Artifact
from keiri_agent.agents.analysis.formatting import format_number, format_value
from keiri_agent.agents.analysis.ops.specs import Filter
from keiri_agent.errors import SpecError

TABLE_ROW_LIMIT = 1000


def new_artifact_id(prefix: str) -> str:
    """A fresh artifact id such as ``groupby_agg_3f9a1c2e``."""
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


def json_value(value: Any) -> Any:
    """``value`` as JSON: numpy scalars → Python, NaN/NaT/NA → None, dates → ISO strings."""
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, np.datetime64):
        return None if np.isnat(value) else pd.Timestamp(value).isoformat()
    if isinstance(value, np.timedelta64):
        return None if np.isnat(value) else str(pd.Timedelta(value))
    if isinstance(value, np.generic):
        return json_value(value.item())
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, Decimal):
        return json_value(float(value))
    if isinstance(value, list | tuple):
        return [json_value(item) for item in value]
    if isinstance(value, dict):
        return {str(key): json_value(item) for key, item in value.items()}
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value)


def table_payload(
    frame: pd.DataFrame,
    limit: int = TABLE_ROW_LIMIT,
    *,
    display: TableDisplay | None = None,
) -> dict[str, Any]:
    """``{"columns", "records", "total_rows"}`` with at most ``limit`` JSON-compatible records,
    plus the display hints of ``display`` (see ``formatting``; never part of ``--json``)."""
    head = frame.head(limit)
    columns = [str(column) for column in head.columns]
    values = [[json_value(v) for v in head.iloc[:, i].tolist()] for i in range(len(columns))]
    records = [dict(zip(columns, row, strict=True)) for row in zip(*values, strict=True)]
    payload: dict[str, Any] = {"columns": columns, "records": records, "total_rows": len(frame)}
    if display is not None:
        payload.update(display.hints(columns, len(records)))
    return payload


@dataclass
class TableDisplay:
    """How a person reads a result table: Japanese labels of computed columns, column
    formats (``"percent"``, a period ``"M"`` ...) and the rows of partly covered periods."""

    labels: dict[str, str] = field(default_factory=dict)
    formats: dict[str, str] = field(default_factory=dict)
    partial_rows: list[int] = field(default_factory=list)
    partial_column: str | None = None

    def hints(self, columns: Sequence[str], rows: int) -> dict[str, Any]:
        hints: dict[str, Any] = {}
        labels = {c: label for c, label in self.labels.items() if c in columns and label != c}
        if labels:
            hints["labels"] = labels
        formats = {c: fmt for c, fmt in self.formats.items() if c in columns}
        if formats:
            hints["formats"] = formats
        partial = [row for row in self.partial_rows if 0 <= row < rows]
        if partial and self.partial_column in columns:
            hints["partial_rows"] = partial
            hints["partial_column"] = self.partial_column
        return hints


def table_artifact(
    frame: pd.DataFrame,
    prefix: str,
    title: str,
    description: str,
    limit: int = TABLE_ROW_LIMIT,
    *,
    display: TableDisplay | None = None,
) -> Artifact:
    """A table artifact; the description says when the records were cut to ``limit``."""
    if len(frame) > limit:
        description = f"{description}（{len(frame):,} 行のうち先頭 {limit:,} 行を表示）"
    return Artifact(
        artifact_id=new_artifact_id(prefix),
        kind="table",
        title=title,
        description=description,
        payload=table_payload(frame, limit, display=display),
    )


def text_artifact(text: str, prefix: str, title: str, description: str = "") -> Artifact:
    """A short text artifact (the key facts of a result)."""
    return Artifact(
        artifact_id=new_artifact_id(prefix),
        kind="text",
        title=title,
        description=description,
        payload=text,
    )


def is_numeric_column(series: pd.Series) -> bool:
    """True for numeric columns other than true/false ones."""
    dtype = series.dtype
    return pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)


def kind_label(series: pd.Series) -> str:
    """The kind of a column in Japanese (数値, 文字列, 日付 ...)."""
    dtype = series.dtype
    if pd.api.types.is_bool_dtype(dtype):
        return "真偽"
    if isinstance(dtype, pd.CategoricalDtype):
        return "カテゴリ"
    if pd.api.types.is_numeric_dtype(dtype):
        return "数値"
    if pd.api.types.is_datetime64_any_dtype(dtype):
        return "日付"
    if pd.api.types.is_timedelta64_dtype(dtype):
        return "期間"
    return "文字列"


def check_aggregation(series: pd.Series, agg: str, field: str) -> None:
    """Raise SpecError when ``agg`` makes no sense for the column (e.g. sum of text)."""
    if agg in ("count", "nunique", "min", "max"):
        return
    dtype = series.dtype
    if pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_timedelta64_dtype(dtype):
        return
    if agg in ("mean", "median") and pd.api.types.is_datetime64_any_dtype(dtype):
        return
    raise SpecError(
        f"{field}: 集計 {agg!r} には数値の列が必要ですが、{series.name!r} は {kind_label(series)} "
        f"（{dtype}）です",
        hint="この列には count・nunique・min・max を使うか、数値の列を指定してください",
        details={"field": field, "value": agg, "valid": ["count", "nunique", "min", "max"]},
    )


def scope_text(rows_in: int, rows_after: int, filters: Sequence[Filter]) -> str:
    """ "対象: 120 / 1,000 行（条件: 地域が東京・売上 10,000以上）。" for a description."""
    if not filters:
        return f"対象: {rows_in:,} 行。"
    return f"対象: {rows_after:,} / {rows_in:,} 行（条件: {conditions_in_words(filters)}）。"


_DATE_VALUE = re.compile(r"\d{4}-\d{2}-\d{2}")
_WORDS = {
    "==": "が{v}",
    "!=": "が{v}以外",
    ">": " {v}超",
    ">=": " {v}以上",
    "<": " {v}未満",
    "<=": " {v}以下",
    "in": "が{v}",
    "contains": "に「{v}」を含む",
    "is_null": "が空欄",
    "not_null": "が入力済み",
}
_DATE_WORDS = {">": " {v}より後", ">=": " {v}以降", "<": " {v}より前", "<=": " {v}まで"}


def condition_words(condition: Filter) -> str:
    """One filter in the words of a back-office user: 「金額 100,000超」「部署が営業部」
    「計上日 2025-04-01以降」「取引先が空欄」."""
    value = condition.value
    if condition.op == "in":
        shown = "・".join(format_value(item) or "(空欄)" for item in value or [])
    elif isinstance(value, int | float) and not isinstance(value, bool):
        shown = format_number(value)
    else:
        shown = format_value(value)
    words = _WORDS[condition.op]
    if isinstance(value, str) and _DATE_VALUE.match(value):
        words = _DATE_WORDS.get(condition.op, words)
    return f"{condition.col}{words.format(v=shown)}"


def conditions_in_words(filters: Sequence[Filter]) -> str:
    """A spec's filters joined as one phrase (「計上日 2025-04-01以降・金額 100,000超」)."""
    return "・".join(condition_words(condition) for condition in filters)


def make_run_log(
    spec: Any, rows_in: int, rows_after: int, started: float, details: dict[str, Any]
) -> dict[str, Any]:
    """The reproduction summary: spec, rows before/after filters, elapsed time, op details."""
    log: dict[str, Any] = {
        "spec": spec.model_dump(mode="json", exclude_none=True),
        "rows_in": rows_in,
        "rows_after_filters": rows_after,
        "elapsed_ms": round((time.perf_counter() - started) * 1000, 1),
    }
    if details:
        log["details"] = details
    return log


def count_distinct(series: pd.Series) -> int:
    """``series.nunique(dropna=True)``, by sorting for large numeric/date columns.

    pandas counts with a hash table, which costs ~2 s for 5M distinct floats; a sort
    gives the same count about ten times faster.
    """
    dtype = series.dtype
    sortable = pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_datetime64_any_dtype(dtype)
    if len(series) < 100_000 or not sortable or pd.api.types.is_bool_dtype(dtype):
        return int(series.nunique(dropna=True))
    values = series.to_numpy(dtype=None, na_value=np.nan) if series.hasnans else series.to_numpy()
    if values.dtype.kind == "M":
        values = values.view("int64")[~np.isnat(values)]
    elif values.dtype.kind == "f":
        values = values[~np.isnan(values)]
    elif values.dtype.kind not in "iu":
        return int(series.nunique(dropna=True))
    if values.size == 0:
        return 0
    ordered = np.sort(values)
    return 1 + int(np.count_nonzero(ordered[1:] != ordered[:-1]))


def unique_name(taken: Collection[Hashable], wanted: str) -> str:
    """``wanted``, or ``wanted_2``, ``wanted_3`` ... if a column of that name is ``taken``.

    The ops add result columns (件数, 構成比 ...) next to the user's columns; a user
    column with the same name must neither crash the op nor be overwritten.
    """
    names = {str(c) for c in taken}
    if wanted not in names:
        return wanted
    suffix = 2
    while f"{wanted}_{suffix}" in names:
        suffix += 1
    return f"{wanted}_{suffix}"
