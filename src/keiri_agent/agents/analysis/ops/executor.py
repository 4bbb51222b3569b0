"""Run an analysis spec on an in-memory DataFrame with template code (seed 000 ``act``).

``run_analysis(spec, df)`` checks the spec's columns, applies its filters (one
mask, only the columns the op needs) and runs one of the eight ops. Each op
returns at least one table artifact and a short Japanese text with the key facts;
``run_log`` records the spec, the row counts and the elapsed time. Nothing is
written to disk.
"""

from __future__ import annotations

import numbers
import re
import time
from collections.abc import Callable, Hashable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from keiri_agent.agents.analysis.artifacts import ActionResult, Artifact
from keiri_agent.agents.analysis.formatting import (
    AGG_LABELS,
    MISSING_LABEL,
    agg_label,
    display_label,
    format_number,
)
from keiri_agent.agents.analysis.ops.filters import apply_filters
from keiri_agent.agents.analysis.ops.results import (
    TableDisplay,
    check_aggregation,
    conditions_in_words,
    count_distinct,
    is_numeric_column,
    kind_label,
    make_run_log,
    scope_text,
    table_artifact,
    text_artifact,
    unique_name,
)
from keiri_agent.agents.analysis.ops.row_hash import repeated_mask, row_hashes
from keiri_agent.agents.analysis.ops.specs import (
    ColumnSummarySpec,
    CorrelationMatrixSpec,
    DatasetOverviewSpec,
    DuplicateCheckSpec,
    GroupbyAggSpec,
    MissingnessSpec,
    ShareRatioSpec,
    TotalSpec,
    check_columns,
    parse_analysis_spec,
)
from keiri_agent.errors import SpecError, unknown_choice_message

AnalysisSpecModel = (
    TotalSpec
    | DatasetOverviewSpec
    | MissingnessSpec
    | ColumnSummarySpec
    | DuplicateCheckSpec
    | GroupbyAggSpec
    | ShareRatioSpec
    | CorrelationMatrixSpec
)
_Outcome = tuple[list[Artifact], dict[str, Any]]
_CORR_CHUNK_ROWS = 1 << 18
_METHOD_LABELS = {"pearson": "ピアソン", "spearman": "スピアマン"}


def run_analysis(spec: AnalysisSpecModel | Mapping[str, Any], df: pd.DataFrame) -> ActionResult:
    """Run one analysis spec on ``df``.

    Args:
        spec: A parsed analysis spec (a dict is parsed first).
        df: The dataset; it is never modified.

    Returns:
        The artifacts (tables and a text summary) and the run log.

    Raises:
        SpecError: the spec does not fit the data (unknown column, bad filter value,
            non-numeric column for a numeric aggregation, unknown sort column ...).
    """
    started = time.perf_counter()
    model: AnalysisSpecModel = (
        parse_analysis_spec(dict(spec)) if isinstance(spec, Mapping) else spec
    )
    check_columns(model, df.columns)
    data = apply_filters(df, model.filters, _needed_columns(model, df)) if model.filters else df
    artifacts, details = _HANDLERS[model.op](model, data)
    scope = scope_text(len(df), len(data), model.filters)
    for artifact in artifacts:
        artifact["description"] = f"{artifact['description']} {scope}".strip()
    return ActionResult(artifacts, make_run_log(model, len(df), len(data), started, details))


def _mixed_sort_value(value: Any) -> Any:
    """A comparable key for one value of a column mixing types (Excel codes 101 / "A01").

    Numbers come first in numeric order, then everything else by its text; missing
    values stay missing so ``na_position`` still applies.
    """
    if value is None or (not isinstance(value, str) and bool(pd.isna(value))):
        return None
    if isinstance(value, numbers.Real):
        return (0, float(value), "")
    return (1, 0.0, str(value))


def _mixed_key(column: pd.Series) -> pd.Series:
    if column.dtype != object:
        return column
    return column.map(_mixed_sort_value)


def sort_rows(frame: pd.DataFrame, by: str | list[str], *, ascending: bool = True) -> pd.DataFrame:
    """A stable ``sort_values`` (missing last) that also orders columns mixing types."""
    try:
        return frame.sort_values(by, ascending=ascending, kind="stable", na_position="last")
    except TypeError:
        return frame.sort_values(
            by, ascending=ascending, kind="stable", na_position="last", key=_mixed_key
        )


def _needed_columns(spec: AnalysisSpecModel, df: pd.DataFrame) -> list[str] | None:
    if isinstance(spec, GroupbyAggSpec):
        return list(dict.fromkeys([*spec.group_cols, *spec.metrics]))
    if isinstance(spec, ShareRatioSpec):
        return [spec.group_col] if spec.value_col is None else [spec.group_col, spec.value_col]
    if isinstance(spec, CorrelationMatrixSpec):
        named = spec.columns or []
        return list(dict.fromkeys([*named, *(c for c in df.columns if is_numeric_column(df[c]))]))
    if isinstance(spec, MissingnessSpec | ColumnSummarySpec) and spec.columns:
        return list(spec.columns)
    return None


_MONEY = re.compile(r"(?:金額|額|円|料金|代金|費|価格|価|単価|売上|給|手当|税|残高|jpy|yen)$", re.I)
"""Columns of yen amounts: their sums, averages and extremes are shown as ¥1,234."""
_COUNTED = ("count", "nunique")


def _total_value(column: str, agg: str, value: Any) -> str:
    shown = format_number(value)
    if agg not in _COUNTED and _MONEY.search(column) and shown != "—":
        return f"¥{shown}" if not shown.startswith("-") else f"-¥{shown[1:]}"
    return shown


def _total(spec: TotalSpec, data: pd.DataFrame) -> _Outcome:
    """The row count and each metric over the (filtered) rows, as one headline: 「対象 53 件
    （計上日 2025-04-01以降・金額 100,000超）」「金額の合計: ¥1,234,567（28 件）」."""
    rows = len(data)
    values: dict[str, Any] = {"件数": rows}
    labels = {"件数": "件数"}
    lines: list[str] = []
    for column, aggs in spec.metrics.items():
        for agg in dict.fromkeys(aggs):
            check_aggregation(data[column], agg, f"metrics.{column}")
            series = data[column]
            value = series.nunique(dropna=True) if agg == "nunique" else series.agg(agg)
            name = unique_name(values, f"{column}_{agg}")
            values[name] = value.item() if isinstance(value, np.generic) else value
            labels[name] = agg_label(column, agg)
            counted = int(series.notna().sum())
            blanks = (
                f"、空欄 {rows - counted:,} 件を除く" if agg != "count" and counted < rows else ""
            )
            lines.append(
                f"{column}の{AGG_LABELS.get(agg, agg)}: "
                f"{_total_value(column, agg, values[name])}（{counted:,} 件{blanks}）。"
            )
    scope = (
        f"対象 {rows:,} 件（{conditions_in_words(spec.filters)}）。"
        if spec.filters
        else (f"全 {rows:,} 件。")
    )
    table = pd.DataFrame([values])
    return [
        text_artifact(scope + "".join(lines), "total", "集計値"),
        table_artifact(
            table,
            "total",
            "集計値",
            "条件に合う行の件数と集計値",
            display=TableDisplay(labels=labels),
        ),
    ], {"rows": rows}


def _dataset_overview(spec: DatasetOverviewSpec, data: pd.DataFrame) -> _Outcome:
    rows = len(data)
    info = pd.DataFrame(
        {
            "列名": [str(c) for c in data.columns],
            "種類": [kind_label(data[c]) for c in data.columns],
            "型": [str(data[c].dtype) for c in data.columns],
            "非欠損数": [int(data[c].count()) for c in data.columns],
            "ユニーク数": [count_distinct(data[c]) for c in data.columns],
        }
    )
    info.insert(4, "欠損数", rows - info["非欠損数"])
    memory_mb = float(data.memory_usage(deep=True).sum()) / 1_048_576
    memory = f"約 {memory_mb:,.1f} MB" if memory_mb >= 0.1 else "0.1 MB 未満"
    kinds = info["種類"].value_counts()
    breakdown = "、".join(f"{kind} {count} 列" for kind, count in kinds.items())
    text = f"{rows:,} 行 × {data.shape[1]} 列。メモリ使用量 {memory}。内訳: {breakdown}。"
    return [
        table_artifact(info, "dataset_overview", "列の一覧", "各列の型・欠損数・ユニーク数"),
        table_artifact(data.head(5), "dataset_overview", "先頭5行", "データの先頭5行"),
        text_artifact(text, "dataset_overview", "データの概要"),
    ], {}


def _missingness(spec: MissingnessSpec, data: pd.DataFrame) -> _Outcome:
    columns = list(spec.columns or data.columns)
    rows = len(data)
    counts = [int(data[c].isna().sum()) for c in columns]
    table = pd.DataFrame({"列名": [str(c) for c in columns], "欠損数": counts})
    table["欠損率"] = table["欠損数"] / rows if rows else 0.0
    table = table.sort_values("欠損数", ascending=False, kind="stable").reset_index(drop=True)
    with_missing = table[table["欠損数"] > 0]
    if with_missing.empty:
        text = f"対象 {len(columns)} 列に欠損値はありません。"
    else:
        top = with_missing.iloc[0]
        any_rows = int(data[columns].isna().any(axis=1).sum())
        text = (
            f"欠損がある列: {len(with_missing)} / {len(columns)} 列。"
            f"最も多い列: {top['列名']}（{int(top['欠損数']):,} 件、{top['欠損率']:.1%}）。"
            f"欠損を含む行: {any_rows:,} 行。"
        )
    return [
        table_artifact(
            table,
            "missingness",
            "欠損値の状況",
            "列ごとの欠損数と欠損率",
            display=TableDisplay(formats={"欠損率": "percent"}),
        ),
        text_artifact(text, "missingness", "欠損値の要点"),
    ], {}


def _column_summary(spec: ColumnSummarySpec, data: pd.DataFrame) -> _Outcome:
    columns = list(spec.columns or data.columns)
    numeric = [c for c in columns if is_numeric_column(data[c])]
    others = [c for c in columns if c not in set(numeric)]
    artifacts: list[Artifact] = []
    facts: list[str] = []
    if numeric:
        stats = data[numeric].describe().T
        stats.columns = ["件数", "平均", "標準偏差", "最小", "25%", "中央値", "75%", "最大"]
        stats["件数"] = stats["件数"].astype("int64")
        stats.insert(0, "列名", [str(c) for c in numeric])
        artifacts.append(
            table_artifact(stats, "column_summary", "数値列の要約統計", "件数・平均・四分位など")
        )
        for row in stats.head(5).itertuples(index=False):
            facts.append(
                f"{row[0]}: 平均 {format_number(row[2])}、中央値 {format_number(row[6])}、"
                f"範囲 {format_number(row[4])}〜{format_number(row[8])}"
            )
    if others:
        artifacts.append(
            table_artifact(
                _other_summary(data, others),
                "column_summary",
                "数値以外の列の要約",
                "件数・ユニーク数・最頻値（日付は最小/最大も）",
            )
        )
    facts.append(f"数値列 {len(numeric)} 列、その他 {len(others)} 列を要約しました。")
    artifacts.append(text_artifact("\n".join(facts), "column_summary", "列の要約の要点"))
    return artifacts, {}


def _other_summary(data: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    rows = []
    for column in columns:
        values = data[column]
        counts = values.value_counts(dropna=True)
        is_date = pd.api.types.is_datetime64_any_dtype(values.dtype)
        rows.append(
            {
                "列名": str(column),
                "種類": kind_label(values),
                "件数": int(values.count()),
                "欠損数": int(values.isna().sum()),
                "ユニーク数": len(counts),
                "最頻値": counts.index[0] if len(counts) else None,
                "最頻値の件数": int(counts.iloc[0]) if len(counts) else 0,
                "最小": values.min() if is_date else None,
                "最大": values.max() if is_date else None,
            }
        )
    return pd.DataFrame(rows)


def _duplicate_check(spec: DuplicateCheckSpec, data: pd.DataFrame) -> _Outcome:
    subset = list(spec.subset or data.columns)
    try:
        # Hash each row first (8 bytes a row), then count exact values only among rows
        # whose hash repeats: counting every row's values needs several times the data.
        candidates = data.loc[repeated_mask(row_hashes(data[subset])), subset]
        counts = candidates.value_counts(dropna=False, sort=True)
    except TypeError as error:
        raise SpecError(
            f"重複チェックで列 {subset} の値を比べられません: {error}",
            hint="文字・数値・日付などふつうの値が入った列を subset に指定してください",
        ) from None
    repeated = counts[counts > 1]
    extra_rows = int((repeated - 1).sum())
    table = repeated.rename(unique_name(subset, "件数")).reset_index()
    keys = "、".join(str(c) for c in subset) if spec.subset else "全列"
    if repeated.empty:
        text = f"重複はありません（キー: {keys}、{len(data):,} 行）。"
    else:
        text = (
            f"重複: {extra_rows:,} 行が他の行と同じ値です（キー: {keys}）。"
            f"重複している組み合わせ {len(repeated):,} 通り、"
            f"重複を除くと {len(data) - extra_rows:,} 行。"
        )
    return [
        table_artifact(table, "duplicate_check", "重複している値の組み合わせ", f"キー: {keys}"),
        text_artifact(text, "duplicate_check", "重複の確認"),
    ], {"duplicate_rows": extra_rows}


def _blank_note(parts: list[str]) -> str:
    """「(欠損) 5 件・金額（合計）=82,000 は順位から除いています。」: the blank group beside
    a ranking, never in it."""
    return f"{MISSING_LABEL} {'・'.join(parts)} は順位から除いています。"


def _groupby_agg(spec: GroupbyAggSpec, data: pd.DataFrame) -> _Outcome:
    named: dict[str, tuple[str, str]] = {}
    for column, aggs in spec.metrics.items():
        for agg in dict.fromkeys(aggs):
            check_aggregation(data[column], agg, f"metrics.{column}")
            named[f"{column}_{agg}"] = (column, agg)
    # a count of the grouped column counts the group's rows (a blank group has rows too)
    measures = {
        name: (column, "size" if agg == "count" and column in spec.group_cols else agg)
        for name, (column, agg) in named.items()
    }
    clash = set(named) & set(spec.group_cols)
    if clash:
        raise SpecError(
            f"集計結果の列 {sorted(clash)} がグループの列と同じ名前になります",
            hint="別の列を集計するか、グループにする列を変えてください",
        )
    grouped = data.groupby(spec.group_cols, sort=False, observed=True, dropna=False)
    result = grouped.agg(**measures).reset_index()
    result_columns = [str(c) for c in result.columns]
    metric_names = list(named)
    blank = result[spec.group_cols].isna().any(axis=1)
    ranked = spec.top_k is not None
    blank_values = result[blank]
    result = result[~blank]  # 「取引先別の金額上位5社」: a blank 取引先 is no 取引先 to rank
    if spec.sort is not None:
        if spec.sort.by not in result_columns:
            same_column = [name for name in metric_names if name.startswith(f"{spec.sort.by}_")]
            raise SpecError(
                unknown_choice_message("並べ替えの列", spec.sort.by, result_columns),
                hint=f"sort by {same_column[0]!r}: result columns are {{column}}_{{aggregation}}"
                if same_column
                else "sort by a result column: group columns or {column}_{aggregation}",
                details={"field": "sort.by", "value": spec.sort.by, "valid": result_columns},
            )
        result = sort_rows(result, spec.sort.by, ascending=spec.sort.ascending)
    elif spec.top_k is not None:
        result = sort_rows(result, metric_names[0], ascending=False)
    else:
        result = sort_rows(result, spec.group_cols)
    groups = len(result)
    if spec.top_k is not None:
        result = result.head(spec.top_k)
    elif len(blank_values):  # a whole table keeps the blank group, last and unranked
        result = pd.concat([result, blank_values])
    result = result.reset_index(drop=True)
    by = "・".join(spec.group_cols)
    labels = {name: agg_label(*named[name]) for name in metric_names}
    focus = spec.sort.by if spec.sort is not None and spec.sort.by in named else metric_names[0]
    facts = [f"グループ数: {groups:,}。"]
    # the conclusion never ranks a blank group
    named_groups = result[~result[spec.group_cols].isna().any(axis=1)].reset_index(drop=True)
    if pd.api.types.is_numeric_dtype(result[focus].dtype) and named_groups[focus].notna().any():
        focus_values = named_groups[focus].to_numpy(dtype="float64", na_value=np.nan)
        for label, position in (
            ("最大", int(np.nanargmax(focus_values))),
            ("最小", int(np.nanargmin(focus_values))),
        ):
            row = named_groups.iloc[position]
            key = " / ".join(display_label(row[c]) for c in spec.group_cols)
            facts.append(f"{label}: {key}（{labels[focus]}={format_number(row[focus])}）。")
    if ranked and len(blank_values):
        blank_rows = int(data[spec.group_cols].isna().any(axis=1).sum())
        facts.append(
            _blank_note(
                [
                    f"{blank_rows:,} 件",
                    *(
                        f"{labels[m]}={format_number(blank_values[m].sum())}"
                        for m in metric_names
                        if named[m][1] != "count" or named[m][0] not in spec.group_cols
                    ),
                ],
            )
        )
    shown = f"上位 {spec.top_k} 件" if spec.top_k is not None and groups > spec.top_k else "全件"
    description = (
        f"{by}ごとの "
        + "、".join(labels[m] for m in metric_names)
        + f"（{groups:,} グループ、{shown}）"
    )
    display = TableDisplay(labels=labels)
    return [
        table_artifact(result, "groupby_agg", f"{by}別の集計", description, display=display),
        text_artifact("".join(facts), "groupby_agg", f"{by}別の集計の要点"),
    ], {"groups": groups}


def _share_ratio(spec: ShareRatioSpec, data: pd.DataFrame) -> _Outcome:
    grouped = data.groupby(spec.group_col, sort=False, observed=True, dropna=False)
    taken: list[Hashable] = [spec.group_col]
    if spec.value_col is None:
        value_name, values = unique_name(taken, "件数"), grouped.size()
        whole = "全件数"
    else:
        check_aggregation(data[spec.value_col], "sum", "value_col")
        value_name = unique_name(taken, f"{spec.value_col}_sum")
        values = grouped[spec.value_col].sum()
        whole = f"{spec.value_col}合計"
    negative = values[values < 0]
    if len(negative):
        examples = "、".join(
            f"{display_label(key)}={format_number(value)}"
            for key, value in negative.head(3).items()
        )
        raise SpecError(
            f"{spec.group_col} に {value_name} の合計がマイナスのグループが {len(negative):,} 件"
            "あるため"
            f"構成比を計算できません（{examples}）",
            hint=f"返品などマイナスの行を絞り込み条件 {spec.value_col} >= 0 で除くか、"
            "groupby_agg で符号付きの合計を確かめてください",
            details={"field": "value_col", "value": spec.value_col},
        )
    total = float(values.sum())
    missing = pd.Series(values.index.isna(), index=values.index)
    blank = values[missing]  # a blank group is part of the whole, never ranked
    values = values[~missing].sort_values(ascending=False, kind="stable")
    if len(values) and total == 0:
        raise SpecError(
            f"{value_name} の合計が 0 のため構成比を計算できません",
            hint="別の値の列を指定するか、絞り込み条件を変えてください",
        )
    share_name = unique_name([*taken, value_name], "構成比")
    cumulative_name = unique_name([*taken, value_name, share_name], "累積構成比")
    table = values.rename(value_name).reset_index()
    table[share_name] = values.to_numpy() / total if total else np.nan
    table[cumulative_name] = table[share_name].cumsum()
    groups = len(table)
    title = f"{spec.group_col}別の構成比（パレート）"
    if groups == 0:
        text = "該当する行がありません。"
    else:
        reach = min(int((table[cumulative_name] < 0.8 - 1e-12).sum()) + 1, groups)
        top = "、".join(
            f"{display_label(row[0])} {row[2]:.1%}" for row in table.head(3).itertuples(index=False)
        )
        text = (
            f"{whole}: {format_number(total)}（{groups:,} グループ）。"
            f"{whole}に占める割合の上位: {top}。"
            f"上位 {reach} グループで累積 {table[cumulative_name].iloc[reach - 1]:.1%} に達します。"
        )
    if spec.top_k is not None:
        table = table.head(spec.top_k)
    if len(blank):
        share = float(blank.iloc[0]) / total if total else np.nan
        label = "件" if spec.value_col is None else ""
        text += _blank_note([f"{format_number(blank.iloc[0])}{label}", f"{share:.1%}"])
        row = pd.DataFrame(
            {spec.group_col: [None], value_name: [blank.iloc[0]], share_name: [share]}
        )
        table = pd.concat([table, row], ignore_index=True)
    description = (
        f"{whole}に占める各{spec.group_col}の割合（構成比）と累積の割合（大きい順）、"
        f"{groups:,} グループ"
    )
    display = TableDisplay(
        labels={
            value_name: "件数" if spec.value_col is None else agg_label(spec.value_col, "sum"),
            share_name: f"構成比（{whole}に占める割合）",
            cumulative_name: "累積構成比",
        },
        formats={share_name: "percent", cumulative_name: "percent"},
    )
    return [
        table_artifact(table, "share_ratio", title, description, display=display),
        text_artifact(text, "share_ratio", f"{spec.group_col}別の構成比の要点"),
    ], {"groups": groups}


def _correlation_matrix(spec: CorrelationMatrixSpec, data: pd.DataFrame) -> _Outcome:
    numeric = [c for c in data.columns if is_numeric_column(data[c])]
    named = list(dict.fromkeys(spec.columns or []))
    for index, column in enumerate(named):
        if column not in numeric:
            raise SpecError(
                f"列 {column!r} は数値の列ではありません（{data[column].dtype}）。相関には数値の"
                "列が必要です。"
                f"数値の列: {', '.join(map(str, numeric)) or '（なし）'}",
                hint="数値の列だけを指定するか、columns を空にしてください",
                details={"field": f"columns[{index}]", "value": column, "valid": numeric},
            )
    rest = [c for c in numeric if c not in set(named)]
    slots = max(spec.max_columns - len(named), 0)
    if len(rest) > slots:
        variances = pd.Series([data[c].var() for c in rest], index=range(len(rest)))
        top = set(variances.sort_values(ascending=False, kind="stable").index[:slots])
        rest = [c for i, c in enumerate(rest) if i in top]
    chosen = named + rest
    if len(chosen) < 2:
        raise SpecError(
            f"相関には数値の列が 2 つ以上必要です。数値の列: "
            f"{', '.join(map(str, numeric)) or '（なし）'}",
            hint="数値の列が 2 つ以上あるデータを選ぶか、列の値を数値にしてください",
            details={"valid": numeric},
        )
    matrix = _correlate(data[chosen], spec.method)
    table = matrix.reset_index(names=unique_name(chosen, "列"))
    label = _METHOD_LABELS[spec.method]
    values = matrix.to_numpy(dtype="float64")
    pairs = [
        (abs(r), chosen[i], chosen[j], r)
        for i in range(len(chosen))
        for j in range(i + 1, len(chosen))
        if not np.isnan(r := float(values[i, j]))
    ]
    pairs.sort(key=lambda item: -item[0])
    strongest = "、".join(f"{a} × {b}（r={r:.2f}）" for _, a, b, r in pairs[:3]) or "なし"
    picked = f"数値列 {len(numeric)} 列から {len(chosen)} 列を使用"
    if len(numeric) > len(chosen):
        picked += "（指定列＋分散の大きい順）" if named else "（分散の大きい順）"
    text = f"{picked}。相関が強い組: {strongest}。相関は因果関係を示すものではありません。"
    columns_text = "、".join(map(str, chosen))
    return [
        table_artifact(
            table, "correlation_matrix", f"相関行列（{label}）", f"対象列: {columns_text}"
        ),
        text_artifact(text, "correlation_matrix", "相関の要点"),
    ], {"columns": [str(c) for c in chosen], "method": spec.method}


def _correlate(frame: pd.DataFrame, method: str) -> pd.DataFrame:
    """``frame.corr(method)``, with a faster exact path when no value is missing."""
    complete = len(frame) >= 2 and not any(frame[c].hasnans for c in frame.columns)
    if not complete:
        return frame.corr(method=method)  # type: ignore[arg-type]
    columns = [frame[c] for c in frame.columns]
    if method == "spearman":
        columns = [c.rank() for c in columns]
    arrays = [np.asarray(c.to_numpy(dtype=np.float64)) for c in columns]
    matrix = _pearson(arrays)
    return pd.DataFrame(matrix, index=frame.columns, columns=frame.columns)


def _pearson(arrays: list[np.ndarray]) -> np.ndarray:
    """Pearson correlation of complete columns: centred cross-products in row chunks."""
    rows, width = len(arrays[0]), len(arrays)
    means = np.array([a.mean() for a in arrays])
    gram = np.zeros((width, width))
    block = np.empty((min(rows, _CORR_CHUNK_ROWS), width), order="F")
    for start in range(0, rows, _CORR_CHUNK_ROWS):
        stop = min(start + _CORR_CHUNK_ROWS, rows)
        part = block[: stop - start]
        for j, array in enumerate(arrays):
            np.subtract(array[start:stop], means[j], out=part[:, j])
        gram += part.T @ part
    scale = np.sqrt(np.diag(gram))
    with np.errstate(divide="ignore", invalid="ignore"):
        matrix = gram / np.outer(scale, scale)
    matrix[~np.isfinite(matrix)] = np.nan
    np.clip(matrix, -1.0, 1.0, out=matrix)
    constant = scale == 0
    matrix[constant, :] = np.nan
    matrix[:, constant] = np.nan
    np.fill_diagonal(matrix, np.where(constant, np.nan, 1.0))
    return matrix


_HANDLERS: dict[str, Callable[[Any, pd.DataFrame], _Outcome]] = {
    "total": _total,
    "dataset_overview": _dataset_overview,
    "missingness": _missingness,
    "column_summary": _column_summary,
    "duplicate_check": _duplicate_check,
    "groupby_agg": _groupby_agg,
    "share_ratio": _share_ratio,
    "correlation_matrix": _correlation_matrix,
}
