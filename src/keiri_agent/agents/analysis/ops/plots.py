"""Run a plot spec: five chart kinds drawn with matplotlib into in-memory PNG bytes.

Only the object-oriented API is used (``Figure`` + the Agg canvas, no pyplot and
no change to global rcParams), so figures can be drawn from threads and forked
processes. Japanese text is drawn with IPAexGothic from ``matplotlib-fontja``:
the font file is registered with matplotlib's font manager when this module is
imported (without importing ``matplotlib_fontja``, which would change rcParams)
and set on every text of our figures.
"""

from __future__ import annotations

import importlib.util
import io
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib import font_manager
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.cbook import boxplot_stats
from matplotlib.figure import Figure
from matplotlib.text import Text
from matplotlib.ticker import StrMethodFormatter

from keiri_agent.agents.analysis.artifacts import ActionResult, Artifact
from keiri_agent.agents.analysis.formatting import (
    AGG_LABELS,
    agg_label,
    display_label,
    format_number,
    period_label,
)
from keiri_agent.agents.analysis.ops.filters import (
    apply_filters,
    looks_like_dates,
    to_datetime_column,
)
from keiri_agent.agents.analysis.ops.results import (
    TableDisplay,
    check_aggregation,
    is_numeric_column,
    make_run_log,
    new_artifact_id,
    scope_text,
    table_artifact,
    text_artifact,
    unique_name,
)
from keiri_agent.agents.analysis.ops.specs import (
    BarPlotSpec,
    BoxPlotSpec,
    HistPlotSpec,
    LinePlotSpec,
    ScatterPlotSpec,
    check_columns,
    parse_plot_spec,
)
from keiri_agent.errors import ConfigurationError, SpecError

PlotSpecModel = HistPlotSpec | ScatterPlotSpec | LinePlotSpec | BarPlotSpec | BoxPlotSpec
MAX_SERIES = 10
MAX_BARS = 100
_FREQ = {"D": "D", "W": "W-MON", "M": "MS", "Q": "QS-JAN", "Y": "YS"}
_EMPTY_IS_ZERO = ("sum", "count", "nunique")
_FREQ_LABELS = {"D": "日", "W": "週", "M": "月", "Q": "四半期", "Y": "年"}
_OTHER_LABEL = "その他"


def _register_japanese_font() -> list[str]:
    spec = importlib.util.find_spec("matplotlib_fontja")
    locations = list(spec.submodule_search_locations or []) if spec else []
    path = Path(locations[0], "fonts", "ipaexg.ttf") if locations else None
    if path is None or not path.is_file():
        raise ConfigurationError(
            "グラフ用の日本語フォント（matplotlib-fontja の fonts/ipaexg.ttf）が見つかりません",
            hint="システム管理者に依存パッケージの再インストール（uv sync）を依頼してください",
        )
    font_manager.fontManager.addfont(str(path))
    name = font_manager.FontProperties(fname=str(path)).get_name()
    return [name, "DejaVu Sans"]


FONT_FAMILY = _register_japanese_font()


@dataclass
class _Drawn:
    """What a drawer produced besides the figure."""

    default_title: str
    description: str
    table: pd.DataFrame | None = None
    facts: list[str] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)
    display: TableDisplay | None = None


def run_plot(spec: PlotSpecModel | Mapping[str, Any], df: pd.DataFrame) -> ActionResult:
    """Draw one plot spec on ``df``.

    Args:
        spec: A parsed plot spec (a dict is parsed first).
        df: The dataset; it is never modified.

    Returns:
        A figure artifact (PNG bytes), a table of the plotted values for bar, line,
        hist and box, a text with the key facts, and the run log.

    Raises:
        SpecError: unknown column, bad filter, a column of the wrong type, or no
            rows left to plot.
    """
    started = time.perf_counter()
    model: PlotSpecModel = parse_plot_spec(dict(spec)) if isinstance(spec, Mapping) else spec
    check_columns(model, df.columns)
    columns = [
        c for c in dict.fromkeys([model.x, getattr(model, "y", None), _series_col(model)]) if c
    ]
    data = apply_filters(df, model.filters, columns) if model.filters else df
    if len(data) == 0:
        raise SpecError(
            f"グラフにする行がありません: {len(df):,} 行のどれも絞り込み条件に合いません",
            hint="絞り込み条件をゆるめるか、外してください",
            details={"rows_in": len(df), "rows_after_filters": 0},
        )
    figure = Figure(figsize=(9, 5.5), dpi=100, layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    drawn = _DRAWERS[model.kind](model, data, axes)
    title = model.title or drawn.default_title
    axes.set_title(title)
    png = _render(figure)
    scope = scope_text(len(df), len(data), model.filters)
    artifacts: list[Artifact] = [
        Artifact(
            artifact_id=new_artifact_id(f"plot_{model.kind}"),
            kind="figure",
            title=title,
            description=f"{drawn.description} {scope}",
            payload=png,
        )
    ]
    if drawn.table is not None:
        artifacts.append(
            table_artifact(
                drawn.table,
                f"plot_{model.kind}",
                f"{title}（データ）",
                drawn.description,
                display=drawn.display,
            )
        )
    if drawn.facts:
        artifacts.append(
            text_artifact("".join(drawn.facts), f"plot_{model.kind}", f"{title}の要点")
        )
    return ActionResult(artifacts, make_run_log(model, len(df), len(data), started, drawn.details))


def _series_col(spec: PlotSpecModel) -> str | None:
    if isinstance(spec, HistPlotSpec):
        return spec.by
    if isinstance(spec, ScatterPlotSpec | LinePlotSpec):
        return spec.hue
    return None


def _render(figure: Figure) -> bytes:
    for axes in figure.axes:
        axes.tick_params(labelfontfamily=FONT_FAMILY)
    for text in figure.findobj(Text):
        text.set_fontfamily(FONT_FAMILY)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return buffer.getvalue()


def _numbers(data: pd.DataFrame, column: str, field: str) -> pd.Series:
    series = data[column]
    if not (is_numeric_column(series) or pd.api.types.is_bool_dtype(series.dtype)):
        raise SpecError(
            f"{field}: 列 {column!r} は数値の列ではありません（{series.dtype}）",
            hint="この軸には金額・数量など数値の列を指定してください",
            details={"field": field, "value": column},
        )
    values = series.astype("float64")
    if not np.isfinite(values.to_numpy()).any():
        raise SpecError(
            f"{field}: 列 {column!r} にグラフにできる値がありません",
            hint="値の入っている数値の列を指定するか、絞り込み条件を見直してください",
            details={"field": field},
        )
    return values


def _top_groups(labels: pd.Series, limit: int) -> list[Any]:
    return list(labels.value_counts(dropna=False, sort=True).head(limit).index)


def _group_mask(labels: pd.Series, group: Any) -> np.ndarray:
    if not isinstance(group, str) and bool(pd.isna(group)):
        return np.asarray(labels.isna().to_numpy(dtype=bool))
    return np.asarray((labels == group).to_numpy(dtype=bool, na_value=False))


def _category_axis(axes: Axes, labels: list[str], first: int = 0) -> None:
    axes.set_xticks(range(first, first + len(labels)), labels)
    if len(labels) > 6 or max((len(label) for label in labels), default=0) > 6:
        axes.tick_params(axis="x", labelrotation=45)
        for tick in axes.get_xticklabels():
            tick.set_horizontalalignment("right")
            tick.set_rotation_mode("anchor")


def _thousands(axes: Axes, values: np.ndarray) -> None:
    finite = values[np.isfinite(values)]
    if finite.size and np.abs(finite).max() >= 10_000:
        axes.yaxis.set_major_formatter(StrMethodFormatter("{x:,.0f}"))


def _hist(spec: HistPlotSpec, data: pd.DataFrame, axes: Axes) -> _Drawn:
    values = _numbers(data, spec.x, "x").to_numpy()
    finite = np.isfinite(values)
    edges = np.histogram_bin_edges(values[finite], bins=spec.bins)
    table = pd.DataFrame({"階級の下限": edges[:-1], "階級の上限": edges[1:]})
    drawn = _Drawn(f"{spec.x}の分布", f"ヒストグラム（{spec.bins} 階級）")
    if spec.by is None:
        counts, _ = np.histogram(values[finite], bins=edges)
        axes.stairs(counts, edges, fill=True, alpha=0.85)
        table["件数"] = counts
    else:
        labels = data[spec.by]
        groups = _top_groups(labels, MAX_SERIES)
        for group in groups:
            chosen = _group_mask(labels, group) & finite
            counts, _ = np.histogram(values[chosen], bins=edges)
            axes.stairs(counts, edges, linewidth=1.8, label=display_label(group))
            table[display_label(group)] = counts
        axes.legend(title=spec.by)
        drawn.default_title = f"{spec.by}別の{spec.x}の分布"
        if labels.nunique(dropna=False) > len(groups):
            drawn.description += f"、件数の多い {len(groups)} グループを表示"
    axes.set_xlabel(spec.x)
    axes.set_ylabel("件数")
    drawn.table = table
    drawn.facts = [
        f"{int(finite.sum()):,} 件、平均 {format_number(values[finite].mean())}、"
        f"中央値 {format_number(np.median(values[finite]))}、"
        f"範囲 {format_number(values[finite].min())}〜{format_number(values[finite].max())}。"
    ]
    return drawn


def _scatter(spec: ScatterPlotSpec, data: pd.DataFrame, axes: Axes) -> _Drawn:
    x_values, y_values = _numbers(data, spec.x, "x"), _numbers(data, spec.y, "y")
    keep = np.isfinite(x_values.to_numpy()) & np.isfinite(y_values.to_numpy())
    points = int(keep.sum())
    positions = np.flatnonzero(keep)
    if points > spec.max_points:
        positions = np.sort(np.random.default_rng(0).choice(positions, spec.max_points, False))
    xs, ys = x_values.to_numpy()[positions], y_values.to_numpy()[positions]
    drawn = _Drawn(f"{spec.x}と{spec.y}の散布図", f"散布図（{len(positions):,} 点）")
    size = 12 if len(positions) <= 2000 else 4
    if spec.hue is None:
        axes.scatter(xs, ys, s=size, alpha=0.6)
    elif is_numeric_column(data[spec.hue]):
        hue = data[spec.hue].to_numpy(dtype="float64", na_value=np.nan)[positions]
        paths = axes.scatter(xs, ys, c=hue, cmap="viridis", s=size, alpha=0.7)
        axes.figure.colorbar(paths, ax=axes, label=spec.hue)
    else:
        labels = data[spec.hue].iloc[positions]
        groups = _top_groups(labels, MAX_SERIES)
        rest = np.ones(len(positions), dtype=bool)
        for group in groups:
            chosen = _group_mask(labels, group)
            rest &= ~chosen
            axes.scatter(xs[chosen], ys[chosen], s=size, alpha=0.7, label=display_label(group))
        if rest.any():
            axes.scatter(xs[rest], ys[rest], s=size, alpha=0.4, color="grey", label=_OTHER_LABEL)
        axes.legend(title=spec.hue)
    axes.set_xlabel(spec.x)
    axes.set_ylabel(spec.y)
    r = float(np.corrcoef(x_values[keep], y_values[keep])[0, 1]) if points > 1 else float("nan")
    drawn.facts.append(f"{points:,} 点。相関係数 r={format_number(r)}。")
    if points > spec.max_points:
        drawn.facts.append(f"描画は {spec.max_points:,} 点を無作為抽出（乱数シード 0）。")
        drawn.description += f"、全 {points:,} 点から無作為抽出"
    drawn.details = {"points": points, "plotted_points": len(positions)}
    return drawn


def _line(spec: LinePlotSpec, data: pd.DataFrame, axes: Axes) -> _Drawn:
    check_aggregation(data[spec.y], spec.agg, "y")
    x_column = data[spec.x]
    if spec.freq is not None:
        if not (pd.api.types.is_datetime64_any_dtype(x_column.dtype) or looks_like_dates(x_column)):
            raise SpecError(
                f"x: 期間の集計 freq {spec.freq!r} には日付の列が必要ですが、{spec.x!r} は "
                f"{x_column.dtype} です",
                hint="freq を外すか、x に日付の列を指定してください",
                details={"field": "freq", "value": spec.freq},
            )
        x_column = _period_start(to_datetime_column(x_column), spec.freq)
    frame = pd.DataFrame({"x": x_column, "y": data[spec.y]})
    value_name = f"{spec.y}_{spec.agg}"
    if spec.hue is None:
        series = frame.groupby("x", observed=True)["y"].agg(spec.agg)
        table = series.rename(value_name).to_frame()
    else:
        frame["hue"] = data[spec.hue]
        groups = _top_groups(frame["hue"], MAX_SERIES)
        frame = frame[frame["hue"].isin(groups)]
        grouped = frame.groupby(["x", "hue"], observed=True)["y"].agg(spec.agg)
        table = grouped.unstack("hue")
        table.columns = [display_label(c) for c in table.columns]
    if spec.freq is not None and len(table):
        # Like resample: every period between the first and the last one is a point.
        periods = pd.date_range(table.index.min(), table.index.max(), freq=_FREQ[spec.freq])
        fill = 0 if spec.agg in _EMPTY_IS_ZERO else np.nan
        table = table.reindex(periods, fill_value=fill)
    partial: list[int] = []
    if spec.freq is not None and len(table):
        partial = partial_periods(to_datetime_column(data[spec.x]), table.index, spec.freq)
    table.index.name = spec.x
    positions = _x_positions(table.index, axes, spec.freq)
    _draw_lines(axes, table, positions, partial)
    if spec.hue is not None:
        axes.legend(title=spec.hue)
    axes.set_xlabel(spec.x)
    axes.set_ylabel(agg_label(spec.y, spec.agg))
    _thousands(axes, table.to_numpy(dtype="float64", na_value=np.nan).ravel())
    per = f"{_FREQ_LABELS[spec.freq]}ごと" if spec.freq else f"{spec.x}ごと"
    drawn = _Drawn(
        f"{per}の{spec.y}の{AGG_LABELS[spec.agg]}", f"折れ線（{per}、{len(table):,} 点）"
    )

    def point_label(position: int) -> str:
        value = table.index[position]
        return period_label(value, spec.freq) if spec.freq else display_label(value)

    if partial:
        assert spec.freq is not None
        shown = "、".join(point_label(row) for row in partial)
        note = (
            f"{shown} はデータが期間の一部しかないため途中までの値です"
            "（白抜きの点・点線。減少を示すものではありません）。"
        )
        drawn.facts.append(note)
        drawn.description += f"、{shown} は途中まで"
    drawn.table = table.reset_index()
    drawn.display = TableDisplay(
        labels={} if spec.hue else {value_name: agg_label(spec.y, spec.agg)},
        formats={spec.x: spec.freq} if spec.freq else {},
        partial_rows=partial,
        partial_column=spec.x,
    )
    if spec.hue is None and table[value_name].notna().any():
        values = table[value_name].to_numpy(dtype="float64", na_value=np.nan, copy=True)
        values[partial] = np.nan
        complete = np.flatnonzero(~np.isnan(values))
        if len(complete) == 0:
            return drawn
        if len(complete) == 1:
            # one whole period is neither a maximum nor a minimum of anything
            only = int(complete[0])
            drawn.facts.append(
                f"完全な期間は {point_label(only)} のみ（{format_number(values[only])}）。"
            )
            return drawn
        for word, position in (
            ("最大", int(np.nanargmax(values))),
            ("最小", int(np.nanargmin(values))),
        ):
            drawn.facts.append(
                f"{word}: {point_label(position)}（{format_number(values[position])}）。"
            )
    return drawn


def _draw_lines(axes: Axes, table: pd.DataFrame, positions: Any, partial: list[int]) -> None:
    """One line per column; a partly covered period is a hollow point on a dotted
    segment with the note 途中まで, so it never reads as a collapse."""
    for column in table.columns:
        values = table[column].to_numpy(dtype="float64", na_value=np.nan)
        whole = values.copy()
        whole[partial] = np.nan
        (line,) = axes.plot(
            positions,
            whole,
            marker="o" if len(table) <= 60 else None,
            label=str(column),
        )
        for row in partial:
            neighbour = row - 1 if row == len(table) - 1 else row + 1
            if 0 <= neighbour < len(table) and neighbour not in partial:
                axes.plot(
                    [positions[neighbour], positions[row]],
                    [values[neighbour], values[row]],
                    linestyle=":",
                    color=line.get_color(),
                )
            axes.plot(
                [positions[row]],
                [values[row]],
                marker="o",
                markerfacecolor="white",
                color=line.get_color(),
                linestyle="none",
            )
    for row in partial:
        axes.annotate(
            "途中まで",
            (positions[row], float(np.nanmax(table.iloc[row].to_numpy(dtype="float64")))),
            textcoords="offset points",
            xytext=(0, 8),
            ha="center",
            fontsize=9,
            color="dimgray",
        )


def partial_periods(dates: pd.Series, starts: pd.Index, freq: str) -> list[int]:
    """Positions of the first/last period that the dates cover only in part.

    A period is partial when the days it lacks at its start (first period) or end
    (last period) are more than the data's usual spacing allows: daily data ending on
    the 2nd leaves the month partial, data ending on the last business day (29th) or
    monthly data dated on the 1st does not.
    """
    if getattr(dates.dtype, "tz", None) is not None:
        dates = dates.dt.tz_localize(None)
    days = pd.Series(dates.dropna().dt.normalize().unique()).sort_values()
    if len(days) < 2 or not len(starts) or freq == "D":
        return []
    gaps = days.diff().dropna().dt.days
    allowed = max(3.0, 2.0 * float(gaps.median()))
    step = pd.tseries.frequencies.to_offset(_FREQ[freq])
    partial = []
    first_missing = (days.iloc[0] - starts[0]).days
    if first_missing > allowed:
        partial.append(0)
    last_end = starts[-1] + step - pd.Timedelta(days=1)
    last_missing = (last_end - days.iloc[-1]).days
    if last_missing > allowed and (len(starts) - 1) not in partial:
        partial.append(len(starts) - 1)
    return partial


def _period_start(column: pd.Series, freq: str) -> pd.Series:
    """Each date replaced by the start of its day/week (Monday)/month/quarter/year.

    Vectorised with numpy datetime units: much faster than ``resample`` on millions
    of unsorted rows. Time zones are dropped after converting to local wall time.
    """
    if getattr(column.dtype, "tz", None) is not None:
        column = column.dt.tz_localize(None)
    values = column.to_numpy(dtype="datetime64[ns]")
    missing = np.isnat(values)
    if freq in ("D", "M", "Y"):
        starts = values.astype(f"datetime64[{freq}]")
    elif freq == "Q":
        months = values.astype("datetime64[M]").astype(np.int64)
        starts = (months - months % 3).astype("datetime64[M]")
    else:  # "W": 1970-01-05 (day 4) was a Monday
        days = values.astype("datetime64[D]").astype(np.int64)
        starts = ((days - 4) // 7 * 7 + 4).astype("datetime64[D]")
    result = starts.astype("datetime64[ns]")
    result[missing] = np.datetime64("NaT")
    return pd.Series(result, index=column.index, name=column.name)


def _x_positions(index: pd.Index, axes: Axes, freq: str | None = None) -> Any:
    """Where the points go; periods (``freq``) get one tick each, labelled as the period
    (``2024-01``), thinned only when there are many."""
    if freq is None and (
        pd.api.types.is_numeric_dtype(index.dtype)
        or pd.api.types.is_datetime64_any_dtype(index.dtype)
    ):
        return index.to_numpy()
    if freq is not None:
        labels = [period_label(value, freq) for value in index]
        step = max(1, -(-len(labels) // 24))
    else:
        labels = [display_label(value) for value in index]
        step = max(1, len(labels) // 30)
    axes.set_xticks(range(0, len(labels), step), labels[::step])
    if len(labels) > 6:
        axes.tick_params(axis="x", labelrotation=45)
    return np.arange(len(labels))


def _bar(spec: BarPlotSpec, data: pd.DataFrame, axes: Axes) -> _Drawn:
    grouped = data.groupby(spec.x, sort=False, observed=True, dropna=False)
    if spec.y is None:
        value_name, values = unique_name([spec.x], "件数"), grouped.size()
        what = "件数"
    else:
        check_aggregation(data[spec.y], spec.agg, "y")
        value_name = unique_name([spec.x], f"{spec.y}_{spec.agg}")
        values = grouped[spec.y].agg(spec.agg)
        what = f"{spec.y}の{AGG_LABELS[spec.agg]}"
    values = values.sort_values(ascending=False, kind="stable", na_position="last")
    categories = len(values)
    if spec.top_k is not None:
        values = values.head(spec.top_k)
    description = f"棒グラフ（{what}、大きい順、{categories:,} カテゴリ"
    if len(values) < categories:
        description += f"中の上位 {len(values):,} 件"
    drawn_values = values.head(MAX_BARS)
    if len(drawn_values) < len(values):
        description += f"、描画は上位 {MAX_BARS} 件"
    heights = drawn_values.to_numpy(dtype="float64", na_value=np.nan)
    axes.bar(np.arange(len(heights)), heights)
    _category_axis(axes, [display_label(v) for v in drawn_values.index])
    axes.set_xlabel(spec.x)
    label = "件数" if spec.y is None else agg_label(spec.y, spec.agg)
    axes.set_ylabel(label)
    _thousands(axes, heights)
    drawn = _Drawn(f"{spec.x}別の{what}", description + "）")
    drawn.table = values.rename(value_name).reset_index()
    drawn.display = TableDisplay(labels={value_name: label})
    if len(values) and pd.notna(values.iloc[0]):
        top, top_value = display_label(values.index[0]), format_number(values.iloc[0])
        drawn.facts.append(f"最大: {top}（{label}={top_value}）。")
    drawn.facts.append(f"全 {categories:,} カテゴリ。")
    return drawn


def _box(spec: BoxPlotSpec, data: pd.DataFrame, axes: Axes) -> _Drawn:
    values = _numbers(data, spec.y, "y")
    finite = np.isfinite(values.to_numpy())
    arrays: list[np.ndarray] = []
    names: list[str] = []
    if spec.x is None:
        arrays.append(values.to_numpy()[finite])
        names.append(spec.y)
        drawn = _Drawn(f"{spec.y}の分布（箱ひげ）", "箱ひげ図")
    else:
        labels = data[spec.x]
        groups = _top_groups(labels[finite], spec.top_k or len(labels))
        for group in groups:
            arrays.append(values.to_numpy()[_group_mask(labels, group) & finite])
            names.append(display_label(group))
        drawn = _Drawn(f"{spec.x}別の{spec.y}の分布（箱ひげ）", "箱ひげ図（件数の多い順）")
        if labels[finite].nunique(dropna=False) > len(groups):
            drawn.description = f"箱ひげ図（件数の多い {len(groups)} カテゴリ）"
    stats = boxplot_stats(arrays, labels=names)
    _draw_boxes(axes, stats)
    _category_axis(axes, names, first=1)
    axes.set_xlabel(spec.x or "")
    axes.set_ylabel(spec.y)
    drawn.table = pd.DataFrame(
        {
            spec.x or "列": names,
            unique_name([spec.x or "列"], "件数"): [len(a) for a in arrays],
            "平均": [s["mean"] for s in stats],
            "第1四分位": [s["q1"] for s in stats],
            "中央値": [s["med"] for s in stats],
            "第3四分位": [s["q3"] for s in stats],
            "ひげ下端": [s["whislo"] for s in stats],
            "ひげ上端": [s["whishi"] for s in stats],
            "外れ値の数": [len(s["fliers"]) for s in stats],
        }
    )
    top = max(range(len(stats)), key=lambda i: stats[i]["med"])
    drawn.facts.append(f"中央値が最も大きい: {names[top]}（{format_number(stats[top]['med'])}）。")
    return drawn


def _draw_boxes(axes: Axes, stats: list[dict[str, Any]]) -> None:
    """Draw box-and-whisker glyphs from ``boxplot_stats``.

    ``Axes.bxp`` reads every rcParam, which imports pyplot to resolve the backend;
    drawing the parts directly keeps pyplot (and any GUI backend) out of the process.
    """
    positions = np.arange(1, len(stats) + 1, dtype=float)
    column = {
        key: np.array([s[key] for s in stats], dtype=float)
        for key in stats[0]
        if key not in ("fliers", "label")
    }
    axes.bar(
        positions,
        column["q3"] - column["q1"],
        bottom=column["q1"],
        width=0.5,
        fill=False,
        edgecolor="black",
        linewidth=1.0,
    )
    axes.hlines(column["med"], positions - 0.25, positions + 0.25, color="C1", linewidth=2)
    axes.vlines(positions, column["whislo"], column["q1"], color="black", linewidth=1.0)
    axes.vlines(positions, column["q3"], column["whishi"], color="black", linewidth=1.0)
    for key in ("whislo", "whishi"):
        axes.hlines(column[key], positions - 0.125, positions + 0.125, color="black")
    axes.plot(positions, column["mean"], "^", color="C2", markersize=6, linestyle="none")
    fliers = [np.asarray(s["fliers"], dtype=float) for s in stats]
    if any(len(f) for f in fliers):
        xs = np.concatenate([np.full(len(f), p) for f, p in zip(fliers, positions, strict=True)])
        axes.plot(
            xs,
            np.concatenate(fliers),
            "o",
            markersize=3,
            markerfacecolor="none",
            color="grey",
            alpha=0.6,
            linestyle="none",
        )
    axes.set_xlim(0.5, len(stats) + 0.5)


_DRAWERS: dict[str, Callable[[Any, pd.DataFrame, Axes], _Drawn]] = {
    "hist": _hist,
    "scatter": _scatter,
    "line": _line,
    "bar": _bar,
    "box": _box,
}
