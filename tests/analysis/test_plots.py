"""Plots: every kind draws a real PNG in memory, plotted values match pandas, Japanese renders."""

from __future__ import annotations

import io
import subprocess
import sys
import textwrap
import warnings
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import matplotlib
import matplotlib.image
import numpy as np
import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from keiri_agent.agents.analysis.artifacts import ActionResult, Artifact
from keiri_agent.agents.analysis.ops.plots import FONT_FAMILY, run_plot
from keiri_agent.agents.analysis.ops.specs import PLOT_KINDS, parse_plot_spec
from keiri_agent.errors import SpecError

AssertTable = Callable[[dict[str, Any], pd.DataFrame], None]


def plot(frame: pd.DataFrame, **raw: Any) -> ActionResult:
    return run_plot(parse_plot_spec(raw), frame)


def figure_of(result: ActionResult) -> Artifact:
    figures = [a for a in result.artifacts if a["kind"] == "figure"]
    assert len(figures) == 1
    return figures[0]


def table_of(result: ActionResult) -> dict[str, Any]:
    found = [a for a in result.artifacts if a["kind"] == "table"]
    assert len(found) == 1
    payload = found[0]["payload"]
    assert isinstance(payload, dict)
    return payload


def text_of(result: ActionResult) -> str:
    found = [a["payload"] for a in result.artifacts if a["kind"] == "text"]
    assert len(found) == 1 and isinstance(found[0], str)
    return found[0]


def assert_png(result: ActionResult) -> bytes:
    png = figure_of(result)["payload"]
    assert isinstance(png, bytes)
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    image = matplotlib.image.imread(io.BytesIO(png), format="png")
    assert image.shape[0] > 100 and image.shape[1] > 100
    assert image[..., :3].std() > 0  # something was drawn
    return png


def test_bar_sums_per_category_largest_first(
    sales_frame: pd.DataFrame, assert_table: AssertTable
) -> None:
    result = plot(sales_frame, kind="bar", x="地域", y="売上", top_k=3)
    assert_png(result)
    sums = sales_frame.groupby("地域", dropna=False)["売上"].sum().sort_values(ascending=False)
    expected = sums.head(3).rename("売上_sum").reset_index()
    assert_table(table_of(result), expected)
    figure = figure_of(result)
    assert figure["title"] == "地域別の売上の合計"
    assert "上位 3 件" in figure["description"]
    assert f"最大: {sums.index[0]}" in text_of(result)


def test_bar_without_y_counts_rows(sales_frame: pd.DataFrame, assert_table: AssertTable) -> None:
    result = plot(sales_frame, kind="bar", x="店舗", y=None)
    assert_png(result)
    counts = sales_frame["店舗"].value_counts()
    assert_table(table_of(result), counts.rename("件数").rename_axis("店舗").reset_index())
    assert figure_of(result)["title"] == "店舗別の件数"


@pytest.mark.parametrize("agg", ["mean", "median", "max", "nunique"])
def test_bar_aggregations(sales_frame: pd.DataFrame, agg: str) -> None:
    result = plot(sales_frame, kind="bar", x="店舗", y="数量", agg=agg)
    expected = sales_frame.groupby("店舗")["数量"].agg(agg)
    records = table_of(result)["records"]
    got = {r["店舗"]: r[f"数量_{agg}"] for r in records}
    assert got == pytest.approx(expected.to_dict())
    heights = [r[f"数量_{agg}"] for r in records]
    assert heights == sorted(heights, reverse=True)


def test_line_resamples_dates_by_month(
    sales_frame: pd.DataFrame, assert_table: AssertTable
) -> None:
    result = plot(sales_frame, kind="line", x="日付", y="売上", agg="sum", freq="M")
    assert_png(result)
    monthly = sales_frame.set_index("日付")["売上"].resample("MS").sum()
    expected = monthly.rename("売上_sum").rename_axis("日付").reset_index()
    assert_table(table_of(result), expected)
    assert figure_of(result)["title"] == "月ごとの売上の合計"
    peak = monthly.idxmax()
    assert f"最大: {peak:%Y-%m}" in text_of(result)


@pytest.mark.parametrize(
    ("freq", "rule"),
    [("D", "D"), ("W", "W-MON"), ("M", "MS"), ("Q", "QS"), ("Y", "YS")],
)
@pytest.mark.parametrize("agg", ["sum", "mean", "count"])
def test_line_every_freq_matches_resample(
    sales_frame: pd.DataFrame, freq: str, rule: str, agg: str
) -> None:
    frame = sales_frame.copy()
    frame.loc[[5, 6], "日付"] = pd.NaT
    result = plot(frame, kind="line", x="日付", y="売上", agg=agg, freq=freq)
    resampled = frame.set_index("日付")["売上"].resample(rule, label="left", closed="left")
    expected = resampled.agg(agg)
    records = table_of(result)["records"]
    assert [r["日付"] for r in records] == [t.isoformat() for t in expected.index]
    got = [r[f"売上_{agg}"] for r in records]
    assert got == [None if np.isnan(v) else pytest.approx(v) for v in expected.to_numpy(float)]


def test_line_freq_on_timezone_aware_dates_uses_local_days() -> None:
    frame = pd.DataFrame(
        {
            "時刻": pd.to_datetime(["2025-01-31 23:30", "2025-02-01 08:00"]).tz_localize(
                "Asia/Tokyo"
            ),
            "件数": [1, 2],
        }
    )
    records = table_of(plot(frame, kind="line", x="時刻", y="件数", freq="M"))["records"]
    assert records == [
        {"時刻": "2025-01-01T00:00:00", "件数_sum": 1},
        {"時刻": "2025-02-01T00:00:00", "件数_sum": 2},
    ]


def test_line_with_hue_has_one_series_per_group(sales_frame: pd.DataFrame) -> None:
    result = plot(sales_frame, kind="line", x="日付", y="数量", agg="mean", freq="Q", hue="店舗")
    assert_png(result)
    expected = (
        sales_frame.groupby([pd.Grouper(key="日付", freq="QS"), "店舗"])["数量"]
        .mean()
        .unstack("店舗")
    )
    payload = table_of(result)
    assert sorted(payload["columns"][1:]) == sorted(expected.columns)
    for record, (_, row) in zip(payload["records"], expected.iterrows(), strict=True):
        for store in expected.columns:
            want = row[store]
            assert record[store] == (None if np.isnan(want) else pytest.approx(want))


def test_line_without_freq_orders_by_x(sales_frame: pd.DataFrame) -> None:
    result = plot(sales_frame, kind="line", x="数量", y="単価", agg="median")
    assert_png(result)
    expected = sales_frame.groupby("数量")["単価"].median()
    records = table_of(result)["records"]
    assert [r["数量"] for r in records] == list(expected.index)
    assert [r["単価_median"] for r in records] == pytest.approx(expected.tolist())


def test_line_resamples_text_dates() -> None:
    frame = pd.DataFrame(
        {"計上日": ["2025年1月5日", "2025年1月20日", "2025年2月3日"], "金額": [100, 50, 70]}
    )
    result = plot(frame, kind="line", x="計上日", y="金額", freq="M")
    records = table_of(result)["records"]
    assert records == [
        {"計上日": "2025-01-01T00:00:00", "金額_sum": 150},
        {"計上日": "2025-02-01T00:00:00", "金額_sum": 70},
    ]


def test_line_freq_needs_a_date_column(sales_frame: pd.DataFrame) -> None:
    with pytest.raises(SpecError, match="日付の列が必要"):
        plot(sales_frame, kind="line", x="店舗", y="売上", freq="M")


def test_hist_counts_match_numpy(sales_frame: pd.DataFrame) -> None:
    result = plot(sales_frame, kind="hist", x="売上", bins=12)
    assert_png(result)
    counts, edges = np.histogram(sales_frame["売上"].dropna(), bins=12)
    payload = table_of(result)
    assert [r["件数"] for r in payload["records"]] == counts.tolist()
    assert [r["階級の下限"] for r in payload["records"]] == pytest.approx(edges[:-1].tolist())
    assert figure_of(result)["title"] == "売上の分布"
    assert f"{int(sales_frame['売上'].count()):,} 件" in text_of(result)


def test_hist_by_group_shares_the_bins(sales_frame: pd.DataFrame) -> None:
    result = plot(sales_frame, kind="hist", x="単価", bins=8, by="店舗")
    assert_png(result)
    edges = np.histogram_bin_edges(sales_frame["単価"], bins=8)
    payload = table_of(result)
    for store, rows in sales_frame.groupby("店舗")["単価"]:
        counts, _ = np.histogram(rows, bins=edges)
        assert [r[store] for r in payload["records"]] == counts.tolist()
    assert figure_of(result)["title"] == "店舗別の単価の分布"


def test_hist_of_text_is_an_error(sales_frame: pd.DataFrame) -> None:
    with pytest.raises(SpecError, match="数値の列ではありません"):
        plot(sales_frame, kind="hist", x="地域")


def test_scatter_samples_deterministically(sales_frame: pd.DataFrame) -> None:
    big = pd.concat([sales_frame] * 3, ignore_index=True)
    first = plot(big, kind="scatter", x="単価", y="売上", max_points=100)
    second = plot(big, kind="scatter", x="単価", y="売上", max_points=100)
    assert assert_png(first) == assert_png(second)
    valid = big[["単価", "売上"]].dropna()
    assert first.run_log["details"] == {"points": len(valid), "plotted_points": 100}
    r = valid["単価"].corr(valid["売上"])
    assert f"r={r:.4g}" in text_of(first)
    assert "無作為抽出" in figure_of(first)["description"]


@pytest.mark.parametrize("hue", ["地域", "数量"])
def test_scatter_with_hue(sales_frame: pd.DataFrame, hue: str) -> None:
    result = plot(sales_frame, kind="scatter", x="単価", y="売上", hue=hue)
    assert_png(result)
    assert result.run_log["details"]["plotted_points"] == int(sales_frame["売上"].notna().sum())


def test_box_stats_match_pandas_quantiles(sales_frame: pd.DataFrame) -> None:
    result = plot(sales_frame, kind="box", x="地域", y="売上", top_k=3)
    assert_png(result)
    valid = sales_frame.dropna(subset=["売上"])
    order = valid["地域"].value_counts(dropna=False).head(3).index
    records = table_of(result)["records"]
    assert len(records) == 3
    for record, region in zip(records, order, strict=True):
        values = valid.loc[valid["地域"] == region, "売上"]
        assert record["地域"] == region
        assert record["件数"] == len(values)
        assert record["第1四分位"] == pytest.approx(values.quantile(0.25))
        assert record["中央値"] == pytest.approx(values.median())
        assert record["第3四分位"] == pytest.approx(values.quantile(0.75))
        assert record["平均"] == pytest.approx(values.mean())
    assert figure_of(result)["title"] == "地域別の売上の分布（箱ひげ）"


def test_box_without_x(sales_frame: pd.DataFrame) -> None:
    result = plot(sales_frame, kind="box", y="単価")
    assert_png(result)
    (record,) = table_of(result)["records"]
    assert record["中央値"] == pytest.approx(sales_frame["単価"].median())


def test_title_from_the_spec_is_used(sales_frame: pd.DataFrame) -> None:
    result = plot(sales_frame, kind="bar", x="地域", title="地域別売上（2025年）")
    assert figure_of(result)["title"] == "地域別売上（2025年）"


def test_no_rows_after_filters_is_an_error(sales_frame: pd.DataFrame) -> None:
    with pytest.raises(SpecError, match="グラフにする行がありません"):
        plot(
            sales_frame,
            kind="hist",
            x="売上",
            filters=[{"col": "日付", "op": "<", "value": "2000-01-01"}],
        )


def test_filters_apply_to_plots(sales_frame: pd.DataFrame) -> None:
    result = plot(
        sales_frame, kind="bar", x="店舗", filters=[{"col": "地域", "op": "==", "value": "東京"}]
    )
    expected = sales_frame.loc[sales_frame["地域"] == "東京", "店舗"].value_counts()
    assert {r["店舗"]: r["件数"] for r in table_of(result)["records"]} == expected.to_dict()
    assert result.run_log["rows_after_filters"] == int(expected.sum())


ALL_KINDS: list[dict[str, Any]] = [
    {"kind": "hist", "x": "売上", "by": "地域"},
    {"kind": "scatter", "x": "単価", "y": "売上", "hue": "地域"},
    {"kind": "line", "x": "日付", "y": "売上", "freq": "M", "hue": "店舗"},
    {"kind": "bar", "x": "地域", "y": "売上"},
    {"kind": "box", "x": "地域", "y": "売上"},
]


def test_japanese_renders_without_missing_glyph_warnings(sales_frame: pd.DataFrame) -> None:
    assert {raw["kind"] for raw in ALL_KINDS} == set(PLOT_KINDS)
    assert FONT_FAMILY[0] == "IPAexGothic"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for raw in ALL_KINDS:
            assert_png(plot(sales_frame, **raw, title="売上の推移（東京・大阪）−テスト"))
    messages = [str(w.message) for w in caught]
    assert not [m for m in messages if "missing" in m.lower()], messages


def test_the_warning_check_can_fail_without_our_font() -> None:
    figure = Figure()
    FigureCanvasAgg(figure)
    figure.add_subplot().set_title("地域別の売上", fontfamily="DejaVu Sans")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        figure.savefig(io.BytesIO(), format="png")
    assert any("missing" in str(w.message) for w in caught)


def _global_settings() -> tuple[Any, ...]:
    # Reading every rcParam would resolve the backend and import pyplot; read the
    # settings a plotting module is tempted to change instead.
    params = matplotlib.rcParams
    return (
        params["font.family"],
        params["font.sans-serif"],
        params["axes.unicode_minus"],
        params["figure.figsize"],
        params["figure.dpi"],
    )


def test_plots_leave_global_matplotlib_state_alone(sales_frame: pd.DataFrame) -> None:
    before = _global_settings()
    plot(sales_frame, kind="bar", x="地域", y="売上")
    assert _global_settings() == before


@pytest.mark.slow
def test_plots_do_not_import_pyplot() -> None:
    code = textwrap.dedent(
        """
        import sys
        import numpy as np
        import pandas as pd
        from keiri_agent.agents.analysis.ops.plots import run_plot
        from keiri_agent.agents.analysis.ops.specs import parse_plot_spec
        assert "matplotlib.pyplot" not in sys.modules, "pyplot was imported on import"
        frame = pd.DataFrame({
            "地域": ["東京", "大阪", "東京", "福岡"] * 5,
            "売上": np.arange(20.0),
            "日付": pd.date_range("2025-01-01", periods=20, freq="W"),
        })
        specs = [
            {"kind": "hist", "x": "売上", "by": "地域"},
            {"kind": "scatter", "x": "売上", "y": "売上", "hue": "地域"},
            {"kind": "scatter", "x": "売上", "y": "売上", "hue": "売上"},
            {"kind": "line", "x": "日付", "y": "売上", "freq": "M", "hue": "地域"},
            {"kind": "line", "x": "地域", "y": "売上"},
            {"kind": "bar", "x": "地域", "y": "売上"},
            {"kind": "box", "x": "地域", "y": "売上"},
        ]
        for spec in specs:
            run_plot(parse_plot_spec(spec), frame)
        assert "matplotlib.pyplot" not in sys.modules, "pyplot was imported while plotting"
        assert "matplotlib_fontja" not in sys.modules, "matplotlib_fontja was imported"
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr


def test_plots_run_in_threads(sales_frame: pd.DataFrame) -> None:
    specs = [parse_plot_spec(raw) for raw in ALL_KINDS]
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda spec: run_plot(spec, sales_frame), specs))
    for result in results:
        assert_png(result)


def test_every_kind_writes_no_file(
    sales_frame: pd.DataFrame, keiri_home: Path, no_file_writes: None
) -> None:
    before = sales_frame.copy()
    for raw in ALL_KINDS:
        result = run_plot(raw, sales_frame)
        assert_png(result)
        assert result.run_log["spec"]["kind"] == raw["kind"]
    assert list(keiri_home.iterdir()) == []
    pd.testing.assert_frame_equal(sales_frame, before)


def test_a_user_column_named_like_a_result_column_does_not_clash() -> None:
    frame = pd.DataFrame({"件数": ["A", "A", "B"], "金額": [1.0, 2.0, 3.0]})
    counted = plot(frame, kind="bar", x="件数", y=None)
    assert_png(counted)
    assert table_of(counted)["columns"] == ["件数", "件数_2"]
    boxed = plot(frame, kind="box", x="件数", y="金額")
    assert "件数_2" in table_of(boxed)["columns"]
