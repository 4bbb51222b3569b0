"""The spec vocabulary of the data-analysis agent (seed 000).

``reason`` turns a request into an ``analysis_spec`` or a ``plot_spec``; ``act``
runs it with template code. These Pydantic models are that contract: eight
analysis ops, five plot kinds, AND-combined filters with ten operators.

``parse_analysis_spec`` / ``parse_plot_spec`` turn a dict (from the LLM, the
rules, a JSON file) into a model, and ``check_columns`` checks every column a
spec names against the dataset. Both raise ``SpecError`` naming the item at
fault, the valid choices and the closest one, so ``reason`` can recover.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator

from keiri_agent.errors import SpecError, unknown_choice_message

ANALYSIS_OPS = (
    "total",
    "dataset_overview",
    "missingness",
    "column_summary",
    "duplicate_check",
    "groupby_agg",
    "share_ratio",
    "correlation_matrix",
)
PLOT_KINDS = ("hist", "scatter", "line", "bar", "box")
FILTER_OPS = ("==", "!=", ">", ">=", "<", "<=", "in", "contains", "is_null", "not_null")
AGGREGATIONS = ("sum", "mean", "median", "min", "max", "count", "nunique", "std")

FilterOp = Literal["==", "!=", ">", ">=", "<", "<=", "in", "contains", "is_null", "not_null"]
Aggregation = Literal["sum", "mean", "median", "min", "max", "count", "nunique", "std"]


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Filter(_Spec):
    """One condition on one column; a spec's filters are combined with AND.

    Dates may be given as strings ("2025-01-01"); they are parsed against a date
    column and a string that does not parse is an error, never ignored.
    """

    col: str
    op: FilterOp
    value: Any = None

    @field_validator("value")
    @classmethod
    def _in_needs_list(cls, value: Any, info: Any) -> Any:
        if info.data.get("op") == "in" and not isinstance(value, list | tuple):
            raise ValueError('operator \'in\' needs a list value, e.g. ["東京", "大阪"]')
        return value


class Sort(_Spec):
    """Sort a result table by one of its columns (e.g. ``sales_sum``)."""

    by: str
    ascending: bool = False


class _AnalysisBase(_Spec):
    type: Literal["analysis"] = "analysis"
    dataset_id: str | None = None
    filters: list[Filter] = Field(default_factory=list)


class TotalSpec(_AnalysisBase):
    """One number for the whole table or the rows the filters keep: the row count, and
    each column of ``metrics`` aggregated over those rows (empty: the row count only).
    Use it for every single-number question (how many, the total, the average of ...)."""

    op: Literal["total"] = "total"
    metrics: dict[str, list[Aggregation]] = Field(default_factory=dict)


class DatasetOverviewSpec(_AnalysisBase):
    """Rows, columns, dtypes, memory and a few sample rows."""

    op: Literal["dataset_overview"] = "dataset_overview"


class MissingnessSpec(_AnalysisBase):
    """Missing values per column (count and ratio)."""

    op: Literal["missingness"] = "missingness"
    columns: list[str] | None = None


class ColumnSummarySpec(_AnalysisBase):
    """Descriptive statistics per column (numeric: count/mean/std/quantiles; other: top values)."""

    op: Literal["column_summary"] = "column_summary"
    columns: list[str] | None = None


class DuplicateCheckSpec(_AnalysisBase):
    """Duplicate rows, over all columns or over ``subset``."""

    op: Literal["duplicate_check"] = "duplicate_check"
    subset: list[str] | None = None


class GroupbyAggSpec(_AnalysisBase):
    """Group by columns and aggregate metrics; result columns are ``{col}_{agg}``."""

    op: Literal["groupby_agg"] = "groupby_agg"
    group_cols: list[str] = Field(min_length=1)
    metrics: dict[str, list[Aggregation]] = Field(min_length=1)
    sort: Sort | None = None
    top_k: int | None = Field(default=None, ge=1)


class ShareRatioSpec(_AnalysisBase):
    """Share of each group in a total (composition / Pareto), with cumulative share.

    ``value_col`` None counts rows instead of summing a column.
    """

    op: Literal["share_ratio"] = "share_ratio"
    group_col: str
    value_col: str | None = None
    top_k: int | None = Field(default=None, ge=1)


class CorrelationMatrixSpec(_AnalysisBase):
    """Correlation between numeric columns.

    Without ``columns``: the ``max_columns`` (default 10) numeric columns with the
    largest variance. With ``columns``: those are always kept and the rest is
    filled by variance up to ``max_columns``.
    """

    op: Literal["correlation_matrix"] = "correlation_matrix"
    columns: list[str] | None = None
    max_columns: int = Field(default=10, ge=2, le=50)
    method: Literal["pearson", "spearman"] = "pearson"


AnalysisSpec = Annotated[
    TotalSpec
    | DatasetOverviewSpec
    | MissingnessSpec
    | ColumnSummarySpec
    | DuplicateCheckSpec
    | GroupbyAggSpec
    | ShareRatioSpec
    | CorrelationMatrixSpec,
    Field(discriminator="op"),
]


class _PlotBase(_Spec):
    type: Literal["plot"] = "plot"
    dataset_id: str | None = None
    title: str | None = None
    filters: list[Filter] = Field(default_factory=list)


class HistPlotSpec(_PlotBase):
    """Distribution of one numeric column; ``by`` overlays one histogram per group."""

    kind: Literal["hist"] = "hist"
    x: str
    bins: int = Field(default=30, ge=1, le=500)
    by: str | None = None


class ScatterPlotSpec(_PlotBase):
    """Two numeric columns against each other, optionally coloured by ``hue``."""

    kind: Literal["scatter"] = "scatter"
    x: str
    y: str
    hue: str | None = None
    max_points: int = Field(default=20_000, ge=100)


class LinePlotSpec(_PlotBase):
    """``y`` aggregated (``agg``) per ``x`` in x order, e.g. monthly sales.

    ``freq`` resamples a date ``x`` ("D", "W", "M", "Q", "Y").
    """

    kind: Literal["line"] = "line"
    x: str
    y: str
    agg: Aggregation = "sum"
    freq: Literal["D", "W", "M", "Q", "Y"] | None = None
    hue: str | None = None


class BarPlotSpec(_PlotBase):
    """``y`` aggregated per category ``x`` (row count when ``y`` is None), largest first."""

    kind: Literal["bar"] = "bar"
    x: str
    y: str | None = None
    agg: Aggregation = "sum"
    top_k: int | None = Field(default=30, ge=1)


class BoxPlotSpec(_PlotBase):
    """Distribution of numeric ``y``, one box per category ``x`` (one box when None)."""

    kind: Literal["box"] = "box"
    y: str
    x: str | None = None
    top_k: int | None = Field(default=20, ge=1)


PlotSpec = Annotated[
    HistPlotSpec | ScatterPlotSpec | LinePlotSpec | BarPlotSpec | BoxPlotSpec,
    Field(discriminator="kind"),
]

_analysis_adapter: TypeAdapter[Any] = TypeAdapter(AnalysisSpec)
_plot_adapter: TypeAdapter[Any] = TypeAdapter(PlotSpec)


def analysis_spec_json_schema() -> dict[str, Any]:
    """JSON Schema of every analysis spec (for prompts, docs and editors)."""
    return _analysis_adapter.json_schema()


def plot_spec_json_schema() -> dict[str, Any]:
    """JSON Schema of every plot spec."""
    return _plot_adapter.json_schema()


def _check_tags(raw: dict[str, Any], tag: str, choices: tuple[str, ...], what: str) -> None:
    value = raw.get(tag)
    if value is None:
        raise SpecError(
            f"{what} の指定に {tag!r} がありません。指定できるもの: {', '.join(choices)}",
            hint=f'"{tag}" に次のどれかを指定してください: {", ".join(choices)}',
            details={"field": tag, "valid": list(choices)},
        )
    if value not in choices:
        raise SpecError(
            unknown_choice_message(f"{what} の {tag}", str(value), choices),
            hint=f"次のどれかを指定してください: {', '.join(choices)}",
            details={"field": tag, "value": value, "valid": list(choices)},
        )
    for index, item in enumerate(raw.get("filters") or []):
        op = item.get("op") if isinstance(item, dict) else None
        if op not in FILTER_OPS:
            raise SpecError(
                unknown_choice_message("絞り込みの演算子 op", str(op), FILTER_OPS),
                hint='絞り込み条件は {"col": 列名, "op": 演算子, "value": 値} の形で、複数あれば'
                "すべてを満たす行が残ります",
                details={"field": f"filters[{index}].op", "value": op, "valid": list(FILTER_OPS)},
            )


def _validation_error(error: ValidationError, what: str) -> SpecError:
    problems = []
    for item in error.errors():
        location = ".".join(str(part) for part in item["loc"][1:] or item["loc"])
        problems.append(f"{location}: {item['msg']}")
    return SpecError(
        f"{what} の指定が正しくありません: " + "; ".join(problems),
        hint="項目名と値を確かめて指定し直してください（指定できる項目は docs/analysis.md にあり"
        "ます）",
        details={"problems": problems},
    )


def parse_analysis_spec(raw: dict[str, Any] | BaseModel) -> Any:
    """Validate a dict as an analysis spec; unknown op/filter op → SpecError with choices."""
    if isinstance(raw, BaseModel):
        raw = raw.model_dump()
    if not isinstance(raw, dict):
        raise SpecError(
            "分析の指定はオブジェクト（項目名と値の組）で書いてください（受け取ったもの: "
            f"{type(raw).__name__}）",
            hint='例: {"type": "analysis", "op": "dataset_overview"}',
        )
    _check_tags(raw, "op", ANALYSIS_OPS, "分析")
    try:
        return _analysis_adapter.validate_python(raw)
    except ValidationError as error:
        raise _validation_error(error, f"分析（{raw.get('op')}）") from None


def parse_plot_spec(raw: dict[str, Any] | BaseModel) -> Any:
    """Validate a dict as a plot spec; unknown kind/filter op → SpecError with choices."""
    if isinstance(raw, BaseModel):
        raw = raw.model_dump()
    if not isinstance(raw, dict):
        raise SpecError(
            "グラフの指定はオブジェクト（項目名と値の組）で書いてください（受け取ったもの: "
            f"{type(raw).__name__}）",
            hint='例: {"type": "plot", "kind": "bar", "x": 列名, "y": 列名}',
        )
    _check_tags(raw, "kind", PLOT_KINDS, "グラフ")
    try:
        return _plot_adapter.validate_python(raw)
    except ValidationError as error:
        raise _validation_error(error, f"グラフ（{raw.get('kind')}）") from None


def referenced_columns(spec: BaseModel) -> list[tuple[str, str]]:
    """Every (field path, column name) a spec names, filters included."""
    found: list[tuple[str, str]] = []
    for name in ("x", "y", "hue", "by", "group_col", "value_col"):
        value = getattr(spec, name, None)
        if isinstance(value, str):
            found.append((name, value))
    for name in ("columns", "subset", "group_cols"):
        for index, value in enumerate(getattr(spec, name, None) or []):
            found.append((f"{name}[{index}]", value))
    for column in getattr(spec, "metrics", None) or {}:
        found.append((f"metrics.{column}", column))
    for index, condition in enumerate(getattr(spec, "filters", [])):
        found.append((f"filters[{index}].col", condition.col))
    return found


def check_columns(spec: BaseModel, columns: Iterable[str]) -> None:
    """Raise SpecError for the first column the spec names that the dataset lacks."""
    available = [str(column) for column in columns]
    known = set(available)
    for field, column in referenced_columns(spec):
        if column not in known:
            raise SpecError(
                unknown_choice_message("列", column, available),
                hint="データの概要に表示された列名をそのまま指定してください",
                details={"field": field, "value": column, "valid": available},
            )
