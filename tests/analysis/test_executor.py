"""The analysis executor: every op against plain pandas, errors, payload shape, run log."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from keiri_agent.agents.analysis.artifacts import ActionResult, Artifact
from keiri_agent.agents.analysis.ops.executor import run_analysis
from keiri_agent.agents.analysis.ops.results import count_distinct, json_value
from keiri_agent.agents.analysis.ops.specs import ANALYSIS_OPS, parse_analysis_spec
from keiri_agent.errors import SpecError

AssertTable = Callable[[dict[str, Any], pd.DataFrame], None]


def analyse(frame: pd.DataFrame, **raw: Any) -> ActionResult:
    return run_analysis(parse_analysis_spec(raw), frame)


def tables(result: ActionResult) -> list[Artifact]:
    return [a for a in result.artifacts if a["kind"] == "table"]


def payloads(result: ActionResult) -> list[dict[str, Any]]:
    found = [a["payload"] for a in tables(result)]
    assert all(isinstance(p, dict) for p in found)
    return found  # type: ignore[return-value]


def text_of(result: ActionResult) -> str:
    texts = [a["payload"] for a in result.artifacts if a["kind"] == "text"]
    assert len(texts) == 1
    assert isinstance(texts[0], str)
    return texts[0]


def test_dataset_overview(sales_frame: pd.DataFrame, assert_table: AssertTable) -> None:
    result = analyse(sales_frame, op="dataset_overview")
    columns, head = payloads(result)
    expected = pd.DataFrame(
        {
            "列名": list(sales_frame.columns),
            "種類": ["文字列", "文字列", "数値", "数値", "数値", "日付"],
            "型": [str(t) for t in sales_frame.dtypes],
            "非欠損数": sales_frame.count().tolist(),
            "欠損数": sales_frame.isna().sum().tolist(),
            "ユニーク数": sales_frame.nunique().tolist(),
        }
    )
    assert_table(columns, expected)
    assert_table(head, sales_frame.head(5))
    assert f"{len(sales_frame):,} 行 × 6 列" in text_of(result)


def test_missingness(sales_frame: pd.DataFrame, assert_table: AssertTable) -> None:
    result = analyse(sales_frame, op="missingness")
    counts = sales_frame.isna().sum()
    expected = pd.DataFrame(
        {"列名": counts.index, "欠損数": counts.to_numpy(), "欠損率": counts.to_numpy() / 240}
    ).sort_values("欠損数", ascending=False, kind="stable")
    assert_table(payloads(result)[0], expected)
    text = text_of(result)
    assert "欠損がある列: 2 / 6 列" in text
    assert "地域（12 件、5.0%）" in text
    assert f"欠損を含む行: {int(sales_frame.isna().any(axis=1).sum()):,} 行" in text


def test_missingness_of_chosen_columns_without_gaps(sales_frame: pd.DataFrame) -> None:
    result = analyse(sales_frame, op="missingness", columns=["数量", "日付"])
    records = payloads(result)[0]["records"]
    assert [r["欠損数"] for r in records] == [0, 0]
    assert "欠損値はありません" in text_of(result)


def test_column_summary(sales_frame: pd.DataFrame, assert_table: AssertTable) -> None:
    result = analyse(sales_frame, op="column_summary")
    numeric, other = payloads(result)
    described = sales_frame[["売上", "数量", "単価"]].describe().T
    expected = pd.DataFrame(
        {
            "列名": described.index,
            "件数": described["count"].astype(int).to_numpy(),
            "平均": described["mean"].to_numpy(),
            "標準偏差": described["std"].to_numpy(),
            "最小": described["min"].to_numpy(),
            "25%": described["25%"].to_numpy(),
            "中央値": described["50%"].to_numpy(),
            "75%": described["75%"].to_numpy(),
            "最大": described["max"].to_numpy(),
        }
    )
    assert_table(numeric, expected)
    records = {r["列名"]: r for r in other["records"]}
    region = sales_frame["地域"].value_counts()
    assert records["地域"]["最頻値"] == region.index[0]
    assert records["地域"]["最頻値の件数"] == int(region.iloc[0])
    assert records["地域"]["ユニーク数"] == sales_frame["地域"].nunique()
    assert records["地域"]["欠損数"] == 12
    assert records["日付"]["最小"] == sales_frame["日付"].min().isoformat()
    assert records["日付"]["最大"] == sales_frame["日付"].max().isoformat()
    assert "売上: 平均" in text_of(result)


def test_duplicate_check(sales_frame: pd.DataFrame, assert_table: AssertTable) -> None:
    result = analyse(sales_frame, op="duplicate_check", subset=["地域", "店舗"])
    counts = sales_frame.groupby(["地域", "店舗"], dropna=False).size()
    repeated = counts[counts > 1].sort_values(ascending=False, kind="stable")
    extra = int(sales_frame.duplicated(["地域", "店舗"]).sum())
    assert result.run_log["details"]["duplicate_rows"] == extra
    payload = payloads(result)[0]
    assert payload["total_rows"] == len(repeated)
    got = {(r["地域"], r["店舗"]): r["件数"] for r in payload["records"]}
    want = {
        (None if pd.isna(row[0]) else row[0], row[1]): int(row[2])
        for row in repeated.reset_index().itertuples(index=False)
    }
    assert got == want
    assert f"重複: {extra:,} 行" in text_of(result)


def test_duplicate_check_over_all_columns() -> None:
    frame = pd.DataFrame({"伝票": [1, 2, 2, 3, 3, 3], "金額": [10, 20, 20, 30, 30, 31]})
    result = analyse(frame, op="duplicate_check")
    assert result.run_log["details"]["duplicate_rows"] == int(frame.duplicated().sum()) == 2
    records = payloads(result)[0]["records"]
    assert records == [
        {"伝票": 2, "金額": 20, "件数": 2},
        {"伝票": 3, "金額": 30, "件数": 2},
    ]


def test_duplicate_check_without_duplicates() -> None:
    result = analyse(pd.DataFrame({"id": [1, 2, 3]}), op="duplicate_check")
    assert payloads(result)[0]["records"] == []
    assert "重複はありません" in text_of(result)


def test_groupby_agg_matches_pandas(sales_frame: pd.DataFrame, assert_table: AssertTable) -> None:
    result = analyse(
        sales_frame,
        op="groupby_agg",
        group_cols=["地域"],
        metrics={"売上": ["sum", "mean", "max"], "数量": ["count", "median"]},
        sort={"by": "売上_sum", "ascending": False},
    )
    expected = (
        sales_frame.groupby("地域", dropna=False)
        .agg(
            売上_sum=("売上", "sum"),
            売上_mean=("売上", "mean"),
            売上_max=("売上", "max"),
            数量_count=("数量", "count"),
            数量_median=("数量", "median"),
        )
        .reset_index()
        .sort_values("売上_sum", ascending=False)
    )
    # sorted by a metric, the blank group last and unranked (a top-N would leave it out)
    expected = pd.concat([expected[expected["地域"].notna()], expected[expected["地域"].isna()]])
    assert tables(result)[0]["title"] == "地域別の集計"
    assert_table(payloads(result)[0], expected)
    top = expected.iloc[0]
    assert f"最大: {top['地域']}（売上（合計）=" in text_of(result)
    assert result.run_log["details"]["groups"] == 4  # the named groups


def test_groupby_agg_several_keys_sort_ascending_and_top_k(
    sales_frame: pd.DataFrame, assert_table: AssertTable
) -> None:
    result = analyse(
        sales_frame,
        op="groupby_agg",
        group_cols=["店舗", "地域"],
        metrics={"単価": ["std", "min"], "地域": ["nunique"]},
        sort={"by": "単価_min", "ascending": True},
        top_k=4,
    )
    expected = (
        sales_frame.groupby(["店舗", "地域"], dropna=False)
        .agg(単価_std=("単価", "std"), 単価_min=("単価", "min"), 地域_nunique=("地域", "nunique"))
        .reset_index()
        .dropna(subset=["店舗", "地域"])  # a ranking leaves the blank groups out
        .sort_values("単価_min", ascending=True)
        .head(4)
    )
    assert_table(payloads(result)[0], expected)


def test_groupby_agg_without_sort_is_ordered_by_group(
    sales_frame: pd.DataFrame, assert_table: AssertTable
) -> None:
    result = analyse(sales_frame, op="groupby_agg", group_cols=["店舗"], metrics={"数量": ["sum"]})
    expected = sales_frame.groupby("店舗").agg(数量_sum=("数量", "sum")).reset_index()
    assert_table(payloads(result)[0], expected)


def test_groupby_agg_top_k_without_sort_takes_the_largest(sales_frame: pd.DataFrame) -> None:
    result = analyse(
        sales_frame, op="groupby_agg", group_cols=["地域"], metrics={"数量": ["sum"]}, top_k=2
    )
    sums = sales_frame.groupby("地域", dropna=False)["数量"].sum().nlargest(2)
    records = payloads(result)[0]["records"]
    assert [r["数量_sum"] for r in records] == sums.tolist()


def test_groupby_agg_with_filters(sales_frame: pd.DataFrame) -> None:
    result = analyse(
        sales_frame,
        op="groupby_agg",
        group_cols=["地域"],
        metrics={"売上": ["sum"]},
        filters=[
            {"col": "日付", "op": ">=", "value": "2025年3月1日"},
            {"col": "地域", "op": "in", "value": ["東京", "大阪"]},
        ],
    )
    chosen = sales_frame[
        (sales_frame["日付"] >= "2025-03-01") & sales_frame["地域"].isin(["東京", "大阪"])
    ]
    expected = chosen.groupby("地域")["売上"].sum()
    records = payloads(result)[0]["records"]
    assert {r["地域"]: r["売上_sum"] for r in records} == pytest.approx(expected.to_dict())
    assert result.run_log["rows_in"] == 240
    assert result.run_log["rows_after_filters"] == len(chosen)
    assert f"対象: {len(chosen):,} / 240 行" in tables(result)[0]["description"]


def test_groupby_agg_unknown_sort_column_lists_result_columns(sales_frame: pd.DataFrame) -> None:
    with pytest.raises(SpecError) as caught:
        analyse(
            sales_frame,
            op="groupby_agg",
            group_cols=["地域"],
            metrics={"売上": ["sum"]},
            sort={"by": "売上_summ"},
        )
    message = str(caught.value)
    assert "並べ替えの列 '売上_summ' は見つかりません" in message
    assert "もしかして '売上_sum' ですか" in message
    assert caught.value.details["valid"] == ["地域", "売上_sum"]


def test_groupby_agg_sort_by_the_source_column_hints_the_result_name(
    sales_frame: pd.DataFrame,
) -> None:
    with pytest.raises(SpecError) as caught:
        analyse(
            sales_frame,
            op="groupby_agg",
            group_cols=["地域"],
            metrics={"売上": ["mean", "sum"]},
            sort={"by": "売上"},
        )
    assert "指定できるもの: 地域, 売上_mean, 売上_sum" in caught.value.message
    assert caught.value.hint is not None and "'売上_mean'" in caught.value.hint


def test_groupby_agg_sum_of_text_is_an_error(sales_frame: pd.DataFrame) -> None:
    with pytest.raises(SpecError, match="集計 'sum' には数値の列が必要"):
        analyse(sales_frame, op="groupby_agg", group_cols=["店舗"], metrics={"地域": ["sum"]})


def test_share_ratio_of_values(sales_frame: pd.DataFrame, assert_table: AssertTable) -> None:
    result = analyse(sales_frame, op="share_ratio", group_col="地域", value_col="売上")
    sums = sales_frame.groupby("地域", dropna=False)["売上"].sum()
    whole = sums.sum()
    named = sums[sums.index.notna()].sort_values(ascending=False)
    blank = sums[sums.index.isna()].iloc[0]
    expected = named.rename("売上_sum").reset_index()
    expected["構成比"] = named.to_numpy() / whole
    expected["累積構成比"] = expected["構成比"].cumsum()
    # the blank group last, beside the ranking: its share, no cumulative share
    expected.loc[len(expected)] = [None, blank, blank / whole, None]
    assert_table(payloads(result)[0], expected)
    assert expected["構成比"].sum() == pytest.approx(1.0)
    assert f"{named.index[0]} {named.iloc[0] / whole:.1%}" in text_of(result)
    assert f"(欠損) {blank:,.0f}・{blank / whole:.1%} は順位から除いています" in text_of(result)


def test_share_ratio_counts_rows_and_keeps_pareto_after_top_k(
    sales_frame: pd.DataFrame, assert_table: AssertTable
) -> None:
    result = analyse(sales_frame, op="share_ratio", group_col="店舗", top_k=2)
    counts = sales_frame["店舗"].value_counts()
    expected = counts.rename("件数").rename_axis("店舗").reset_index()
    expected["構成比"] = counts.to_numpy() / len(sales_frame)
    expected["累積構成比"] = expected["構成比"].cumsum()
    assert_table(payloads(result)[0], expected.head(2))


def test_share_ratio_of_zero_total_is_an_error() -> None:
    frame = pd.DataFrame({"科目": ["a", "b"], "金額": [5, -5]})
    with pytest.raises(SpecError, match="構成比を計算できません"):
        analyse(frame, op="share_ratio", group_col="科目", value_col="金額")


@pytest.fixture
def twelve_numeric() -> pd.DataFrame:
    """12 numeric columns whose variance grows with their number, plus a text column."""
    rng = np.random.default_rng(3)
    base = rng.normal(size=400)
    data = {f"c{i:02d}": base * (i + 1) + rng.normal(size=400) for i in range(12)}
    return pd.DataFrame({**data, "名前": ["x"] * 400})


def test_correlation_default_picks_top_columns_by_variance(
    twelve_numeric: pd.DataFrame, assert_table: AssertTable
) -> None:
    result = analyse(twelve_numeric, op="correlation_matrix")
    numeric = twelve_numeric.drop(columns="名前")
    top = numeric.var().nlargest(10).index
    chosen = [c for c in numeric.columns if c in set(top)]
    assert chosen == [f"c{i:02d}" for i in range(2, 12)]
    assert result.run_log["details"]["columns"] == chosen
    expected = numeric[chosen].corr().reset_index(names="列")
    assert_table(payloads(result)[0], expected)
    assert "数値列 12 列から 10 列を使用（分散の大きい順）" in text_of(result)


def test_correlation_keeps_named_low_variance_column(twelve_numeric: pd.DataFrame) -> None:
    result = analyse(twelve_numeric, op="correlation_matrix", columns=["c00"], max_columns=4)
    assert result.run_log["details"]["columns"] == ["c00", "c09", "c10", "c11"]
    expected = twelve_numeric[["c00", "c09", "c10", "c11"]].corr()
    records = payloads(result)[0]["records"]
    assert records[0]["c11"] == pytest.approx(expected.loc["c00", "c11"])


def test_correlation_named_columns_beyond_max_are_all_kept(twelve_numeric: pd.DataFrame) -> None:
    named = ["c00", "c01", "c02"]
    result = analyse(twelve_numeric, op="correlation_matrix", columns=named, max_columns=2)
    assert result.run_log["details"]["columns"] == named


@pytest.mark.parametrize("method", ["pearson", "spearman"])
def test_correlation_with_missing_and_constant_values_matches_pandas(method: str) -> None:
    rng = np.random.default_rng(5)
    frame = pd.DataFrame(
        {"a": rng.normal(size=50), "b": rng.normal(size=50), "定数": 1.0, "n": range(50)}
    )
    frame.loc[[3, 7], "a"] = np.nan
    complete = frame.dropna()
    for data in (frame, complete):
        result = analyse(data, op="correlation_matrix", method=method)
        columns = result.run_log["details"]["columns"]
        expected = data[columns].corr(method=method)
        records = payloads(result)[0]["records"]
        got = pd.DataFrame([[r[c] for c in columns] for r in records], dtype=float)
        np.testing.assert_allclose(got.to_numpy(), expected.to_numpy(), rtol=1e-9, atol=1e-12)


def test_correlation_non_numeric_named_column_is_an_error(twelve_numeric: pd.DataFrame) -> None:
    with pytest.raises(SpecError, match="'名前' は数値の列ではありません"):
        analyse(twelve_numeric, op="correlation_matrix", columns=["c01", "名前"])


def test_correlation_needs_two_numeric_columns() -> None:
    frame = pd.DataFrame({"売上": [1.0, 2.0, 3.0], "地域": ["a", "b", "c"]})
    with pytest.raises(SpecError, match="数値の列が 2 つ以上必要"):
        analyse(frame, op="correlation_matrix")


def test_unknown_correlation_method_is_rejected(twelve_numeric: pd.DataFrame) -> None:
    with pytest.raises(SpecError, match="pearson"):
        analyse(twelve_numeric, op="correlation_matrix", method="kendall")


def test_unknown_column_is_an_error_with_suggestion(sales_frame: pd.DataFrame) -> None:
    with pytest.raises(SpecError, match="もしかして '地域' ですか"):
        analyse(sales_frame, op="groupby_agg", group_cols=["地域 "], metrics={"売上": ["sum"]})


def test_records_are_json_and_cut_to_the_display_limit() -> None:
    frame = pd.DataFrame(
        {
            "id": np.arange(1500),
            "値": np.where(np.arange(1500) % 2 == 0, np.nan, 1.5),
            "日": pd.Timestamp("2025-01-01") + pd.to_timedelta(np.arange(1500), unit="D"),
        }
    )
    result = analyse(frame, op="groupby_agg", group_cols=["id"], metrics={"値": ["sum", "max"]})
    payload = payloads(result)[0]
    assert payload["total_rows"] == 1500
    assert len(payload["records"]) == 1000
    assert "先頭 1,000 行を表示" in tables(result)[0]["description"]
    first = payload["records"][0]
    assert first == {"id": 0, "値_sum": 0.0, "値_max": None}
    assert type(first["id"]) is int
    json.dumps([a["payload"] for a in result.artifacts])
    overview = analyse(frame.head(3), op="dataset_overview")
    head = payloads(overview)[1]["records"]
    assert head[0]["日"] == "2025-01-01T00:00:00"
    json.dumps([a["payload"] for a in overview.artifacts])


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (np.int64(3), 3),
        (np.float32(1.5), 1.5),
        (np.nan, None),
        (float("inf"), None),
        (pd.NaT, None),
        (pd.NA, None),
        (np.datetime64("2025-01-02"), "2025-01-02T00:00:00"),
        (pd.Timestamp("2025-01-02 03:04"), "2025-01-02T03:04:00"),
        (np.bool_(True), True),
    ],
)
def test_json_value(value: Any, expected: Any) -> None:
    got = json_value(value)
    assert got == expected
    assert type(got) is type(expected)


def test_run_log_and_artifact_ids(sales_frame: pd.DataFrame) -> None:
    spec = parse_analysis_spec(
        {
            "op": "share_ratio",
            "group_col": "地域",
            "filters": [{"col": "数量", "op": ">", "value": 5}],
        }
    )
    result = run_analysis(spec, sales_frame)
    log = result.run_log
    assert log["spec"] == spec.model_dump(mode="json", exclude_none=True)
    assert log["rows_in"] == 240
    assert log["rows_after_filters"] == int((sales_frame["数量"] > 5).sum())
    assert log["elapsed_ms"] >= 0
    json.dumps(log)
    ids = [a["artifact_id"] for a in result.artifacts]
    again = [a["artifact_id"] for a in run_analysis(spec, sales_frame).artifacts]
    assert all(i.startswith("share_ratio_") for i in ids)
    assert len(set(ids + again)) == len(ids) * 2


def test_dict_specs_are_parsed(sales_frame: pd.DataFrame) -> None:
    result = run_analysis({"op": "missingness", "columns": ["売上"]}, sales_frame)
    assert payloads(result)[0]["records"][0]["欠損数"] == 9


ALL_OPS: list[dict[str, Any]] = [
    {"op": "total", "metrics": {"売上": ["sum"]}},
    {"op": "dataset_overview"},
    {"op": "missingness"},
    {"op": "column_summary"},
    {"op": "duplicate_check", "subset": ["地域"]},
    {"op": "groupby_agg", "group_cols": ["地域"], "metrics": {"売上": ["sum"]}},
    {"op": "share_ratio", "group_col": "地域", "value_col": "売上"},
    {"op": "correlation_matrix"},
]


def test_every_op_gives_a_table_and_japanese_titles_without_writing_files(
    sales_frame: pd.DataFrame, keiri_home: Path, no_file_writes: None
) -> None:
    assert {raw["op"] for raw in ALL_OPS} == set(ANALYSIS_OPS)
    before = sales_frame.copy()
    for raw in ALL_OPS:
        filters = [{"col": "日付", "op": "<", "value": "2025/06/01"}]
        result = run_analysis(parse_analysis_spec({**raw, "filters": filters}), sales_frame)
        assert tables(result), raw
        for artifact in result.artifacts:
            assert set(artifact) == {"artifact_id", "kind", "title", "description", "payload"}
            assert any("\u3040" <= ch <= "\u9fff" for ch in artifact["title"])
        json.dumps([a["payload"] for a in result.artifacts])
    assert list(keiri_home.iterdir()) == []
    pd.testing.assert_frame_equal(sales_frame, before)


@pytest.mark.parametrize(
    "series",
    [
        pd.Series(np.random.default_rng(1).integers(0, 1000, 200_000)),
        pd.Series(np.where(np.arange(200_000) % 10 == 0, np.nan, np.arange(200_000) % 777 / 3)),
        pd.Series(pd.to_datetime(np.arange(200_000) % 5000, unit="D")).where(
            np.arange(200_000) % 7 > 0
        ),
        pd.Series(np.arange(200_000) % 5).astype("Int64").where(np.arange(200_000) % 3 > 0),
        pd.Series([0.0, -0.0] * 60_000),
        pd.Series([np.nan] * 150_000),
        pd.Series(["a", "b", None] * 50_000),
    ],
)
def test_count_distinct_matches_pandas_nunique(series: pd.Series) -> None:
    assert count_distinct(series) == series.nunique(dropna=True)


def test_total_gives_one_headline_with_the_filter_in_words(sales_frame: pd.DataFrame) -> None:
    spec = {
        "type": "analysis",
        "op": "total",
        "metrics": {"売上": ["sum", "mean"]},
        "filters": [
            {"col": "地域", "op": "==", "value": "東京"},
            {"col": "日付", "op": ">=", "value": "2025-03-01"},
        ],
    }
    result = run_analysis(spec, sales_frame)
    kept = sales_frame[(sales_frame["地域"] == "東京") & (sales_frame["日付"] >= "2025-03-01")]
    headline = next(a for a in result.artifacts if a["kind"] == "text")["payload"]
    assert headline.startswith(f"対象 {len(kept):,} 件（地域が東京・日付 2025-03-01以降）。")
    counted = int(kept["売上"].notna().sum())
    assert f"売上の合計: ¥{kept['売上'].sum():,.0f}（{counted:,} 件" in headline
    table = next(a for a in result.artifacts if a["kind"] == "table")["payload"]
    (row,) = table["records"]
    assert row["件数"] == len(kept) and row["売上_sum"] == pytest.approx(kept["売上"].sum())
    assert row["売上_mean"] == pytest.approx(kept["売上"].mean())
    assert "==" not in headline and "total" not in headline


def test_total_with_no_metric_counts_the_rows(sales_frame: pd.DataFrame) -> None:
    spec = {
        "type": "analysis",
        "op": "total",
        "filters": [{"col": "売上", "op": ">", "value": 1200}],
    }
    result = run_analysis(spec, sales_frame)
    expected = int((sales_frame["売上"] > 1200).sum())
    headline = next(a for a in result.artifacts if a["kind"] == "text")["payload"]
    assert headline == f"対象 {expected:,} 件（売上 1,200超）。"


def test_total_refuses_a_sum_of_text(sales_frame: pd.DataFrame) -> None:
    with pytest.raises(SpecError):
        run_analysis({"type": "analysis", "op": "total", "metrics": {"店舗": ["sum"]}}, sales_frame)
