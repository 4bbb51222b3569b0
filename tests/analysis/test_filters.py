"""Spec filters: every operator, type coercion, dates, errors, one mask and no needless copy."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest

from keiri_agent.agents.analysis.ops.filters import apply_filters, filter_mask, parse_date_value
from keiri_agent.agents.analysis.ops.specs import Filter
from keiri_agent.errors import SpecError


@pytest.fixture
def frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "地域": pd.Series(["東京", "大阪", None, "東京", "福岡", "名古屋"], dtype="str"),
            "売上": [120.0, 80.0, np.nan, 300.0, 95.5, 1000.0],
            "数量": [1, 12, 3, 21, 5, 11],
            "日付": pd.to_datetime(
                pd.Series(
                    [
                        "2024-12-31 23:00",
                        "2025-01-01 00:00",
                        "2025-01-01 18:45",
                        "2025-01-31 12:00",
                        None,
                        "2025-02-10 08:00",
                    ]
                )
            ),
            "伝票日": ["2024/12/31", "2025/01/01", "2025/01/15", None, "2025/02/01", "2025/03/01"],
            "区分": pd.Categorical(["A", "B", "A", None, "C", "B"], categories=["A", "B", "C"]),
            "確定": [True, False, True, True, False, False],
            "摘要": ["家賃 1月", "交通費", None, "家賃 2月", "会議費", "家賃 3月"],
        }
    )


def run(frame: pd.DataFrame, *conditions: dict[str, Any]) -> pd.DataFrame:
    return apply_filters(frame, [Filter(**condition) for condition in conditions])


OPERATOR_CASES: list[tuple[dict[str, Any], Callable[[pd.DataFrame], pd.Series]]] = [
    ({"col": "売上", "op": "==", "value": 80}, lambda d: d["売上"] == 80),
    ({"col": "売上", "op": "!=", "value": 80}, lambda d: d["売上"] != 80),
    ({"col": "売上", "op": ">", "value": 95.5}, lambda d: d["売上"] > 95.5),
    ({"col": "売上", "op": ">=", "value": 95.5}, lambda d: d["売上"] >= 95.5),
    ({"col": "売上", "op": "<", "value": 120}, lambda d: d["売上"] < 120),
    ({"col": "売上", "op": "<=", "value": 120}, lambda d: d["売上"] <= 120),
    ({"col": "数量", "op": "in", "value": [1, 21, 99]}, lambda d: d["数量"].isin([1, 21, 99])),
    (
        {"col": "数量", "op": "contains", "value": "1"},
        lambda d: d["数量"].astype(str).str.contains("1", regex=False),
    ),
    ({"col": "売上", "op": "is_null"}, lambda d: d["売上"].isna()),
    ({"col": "売上", "op": "not_null"}, lambda d: d["売上"].notna()),
    ({"col": "地域", "op": "==", "value": "東京"}, lambda d: d["地域"] == "東京"),
    ({"col": "地域", "op": "!=", "value": "東京"}, lambda d: d["地域"] != "東京"),
    ({"col": "地域", "op": ">", "value": "大阪"}, lambda d: (d["地域"] > "大阪").fillna(False)),
    ({"col": "地域", "op": "<=", "value": "大阪"}, lambda d: (d["地域"] <= "大阪").fillna(False)),
    (
        {"col": "地域", "op": "in", "value": ["東京", "福岡"]},
        lambda d: d["地域"].isin(["東京", "福岡"]),
    ),
    (
        {"col": "地域", "op": "in", "value": ["東京", None]},
        lambda d: d["地域"].isin(["東京"]) | d["地域"].isna(),
    ),
    (
        {"col": "摘要", "op": "contains", "value": "家賃"},
        lambda d: d["摘要"].str.contains("家賃", regex=False, na=False),
    ),
    ({"col": "摘要", "op": "is_null"}, lambda d: d["摘要"].isna()),
    ({"col": "摘要", "op": "not_null"}, lambda d: d["摘要"].notna()),
    ({"col": "区分", "op": "==", "value": "B"}, lambda d: d["区分"] == "B"),
    ({"col": "区分", "op": "!=", "value": "B"}, lambda d: d["区分"] != "B"),
    ({"col": "区分", "op": "in", "value": ["A", "C"]}, lambda d: d["区分"].isin(["A", "C"])),
    (
        {"col": "区分", "op": ">=", "value": "B"},
        lambda d: d["区分"].astype(object).map(lambda v: isinstance(v, str) and v >= "B"),
    ),
    ({"col": "区分", "op": "is_null"}, lambda d: d["区分"].isna()),
    ({"col": "確定", "op": "==", "value": True}, lambda d: d["確定"]),
    ({"col": "確定", "op": "!=", "value": "true"}, lambda d: ~d["確定"]),
    ({"col": "日付", "op": "is_null"}, lambda d: d["日付"].isna()),
    ({"col": "日付", "op": "not_null"}, lambda d: d["日付"].notna()),
]


@pytest.mark.parametrize(
    ("condition", "expected"),
    OPERATOR_CASES,
    ids=[f"{c['col']} {c['op']} {c.get('value')}" for c, _ in OPERATOR_CASES],
)
def test_operator_matches_pandas(
    frame: pd.DataFrame, condition: dict[str, Any], expected: Callable[[pd.DataFrame], pd.Series]
) -> None:
    got = run(frame, condition)
    want = frame[expected(frame).astype(bool).to_numpy()]
    pd.testing.assert_frame_equal(got, want)


def test_every_operator_is_covered() -> None:
    from keiri_agent.agents.analysis.ops.specs import FILTER_OPS

    assert {case["op"] for case, _ in OPERATOR_CASES} == set(FILTER_OPS)


def test_filters_are_combined_with_and(frame: pd.DataFrame) -> None:
    got = run(
        frame,
        {"col": "売上", "op": ">", "value": 90},
        {"col": "地域", "op": "!=", "value": "福岡"},
        {"col": "数量", "op": "<", "value": 20},
    )
    want = frame[(frame["売上"] > 90) & (frame["地域"] != "福岡") & (frame["数量"] < 20)]
    pd.testing.assert_frame_equal(got, want)
    assert got["売上"].tolist() == [120.0, 1000.0]


def test_no_filters_returns_the_same_frame_without_copy(frame: pd.DataFrame) -> None:
    assert apply_filters(frame, []) is frame
    assert filter_mask(frame, []) is None


def test_mask_is_one_numpy_boolean_array(frame: pd.DataFrame) -> None:
    mask = filter_mask(
        frame, [Filter(col="売上", op=">", value=90), Filter(col="地域", op="not_null")]
    )
    assert isinstance(mask, np.ndarray)
    assert mask.dtype == bool
    assert mask.tolist() == [True, False, False, True, True, True]


def test_columns_selection_keeps_only_named_columns(frame: pd.DataFrame) -> None:
    got = apply_filters(frame, [Filter(col="数量", op=">", value=10)], columns=["地域", "売上"])
    pd.testing.assert_frame_equal(got, frame.loc[frame["数量"] > 10, ["地域", "売上"]])


def test_dict_filters_are_accepted(frame: pd.DataFrame) -> None:
    got = apply_filters(frame, [{"col": "数量", "op": ">=", "value": 12}])
    pd.testing.assert_frame_equal(got, frame[frame["数量"] >= 12])


@pytest.mark.parametrize("value", ["1,000", "１０００", "1000", 1000, 1000.0])
def test_numeric_strings_are_numbers(frame: pd.DataFrame, value: Any) -> None:
    got = run(frame, {"col": "売上", "op": "==", "value": value})
    assert got["売上"].tolist() == [1000.0]


@pytest.mark.parametrize("value", ["たくさん", "2025-01-01", "abc", "nan"])
def test_numeric_column_with_non_numeric_string_is_an_error(
    frame: pd.DataFrame, value: str
) -> None:
    with pytest.raises(SpecError) as caught:
        run(
            frame,
            {"col": "数量", "op": ">", "value": 1},
            {"col": "売上", "op": ">", "value": value},
        )
    message = str(caught.value)
    assert "filters[1]" in message
    assert repr(value) in message
    assert caught.value.details["field"] == "filters[1].value"


@pytest.mark.parametrize(
    "value", ["2025-01-01", "2025/01/01", "2025年1月1日", "２０２５年１月１日"]
)
def test_date_strings_parse_in_every_common_form(frame: pd.DataFrame, value: str) -> None:
    got = run(frame, {"col": "日付", "op": ">=", "value": value})
    want = frame[frame["日付"] >= pd.Timestamp("2025-01-01")]
    pd.testing.assert_frame_equal(got, want)
    assert len(got) == 4


def test_date_equality_covers_the_whole_day(frame: pd.DataFrame) -> None:
    got = run(frame, {"col": "日付", "op": "==", "value": "2025/01/01"})
    day = frame["日付"].dt.normalize() == pd.Timestamp("2025-01-01")
    pd.testing.assert_frame_equal(got, frame[day])
    assert len(got) == 2


def test_date_upper_bound_includes_that_day(frame: pd.DataFrame) -> None:
    got = run(frame, {"col": "日付", "op": "<=", "value": "2025-01-31"})
    want = frame[frame["日付"] < pd.Timestamp("2025-02-01")]
    pd.testing.assert_frame_equal(got, want)
    after = run(frame, {"col": "日付", "op": ">", "value": "2025-01-31"})
    pd.testing.assert_frame_equal(after, frame[frame["日付"] >= pd.Timestamp("2025-02-01")])


def test_month_value_means_the_whole_month(frame: pd.DataFrame) -> None:
    got = run(frame, {"col": "日付", "op": "==", "value": "2025年1月"})
    month = frame["日付"].dt.to_period("M") == pd.Period("2025-01")
    pd.testing.assert_frame_equal(got, frame[month.fillna(False).to_numpy(dtype=bool)])
    assert len(got) == 3


def test_instant_with_time_compares_exactly(frame: pd.DataFrame) -> None:
    got = run(frame, {"col": "日付", "op": "<", "value": "2025-01-01 18:45"})
    pd.testing.assert_frame_equal(got, frame[frame["日付"] < pd.Timestamp("2025-01-01 18:45")])


def test_date_in_list(frame: pd.DataFrame) -> None:
    got = run(frame, {"col": "日付", "op": "in", "value": ["2024-12-31", "2025/02/10"]})
    days = frame["日付"].dt.normalize()
    want = frame[days.isin([pd.Timestamp("2024-12-31"), pd.Timestamp("2025-02-10")])]
    pd.testing.assert_frame_equal(got, want)


@pytest.mark.parametrize("value", ["来月", "2025-13-45", "2025年13月", "not a date", 20250101])
def test_date_value_that_does_not_parse_is_an_error(frame: pd.DataFrame, value: Any) -> None:
    with pytest.raises(SpecError) as caught:
        run(frame, {"col": "日付", "op": ">=", "value": value})
    message = str(caught.value)
    assert "filters[0]" in message
    assert "日付" in message
    assert repr(value) in message


def test_text_dates_are_compared_as_dates(frame: pd.DataFrame) -> None:
    got = run(frame, {"col": "伝票日", "op": ">=", "value": "2025-01-15"})
    parsed = pd.to_datetime(frame["伝票日"], format="%Y/%m/%d")
    pd.testing.assert_frame_equal(got, frame[parsed >= pd.Timestamp("2025-01-15")])
    assert got["伝票日"].tolist() == ["2025/01/15", "2025/02/01", "2025/03/01"]
    same_day = run(frame, {"col": "伝票日", "op": "==", "value": "2025年2月1日"})
    assert same_day["伝票日"].tolist() == ["2025/02/01"]


def test_text_dates_with_non_date_ordering_value_is_an_error(frame: pd.DataFrame) -> None:
    with pytest.raises(SpecError, match=r"filters\[0\].*'先月'"):
        run(frame, {"col": "伝票日", "op": "<", "value": "先月"})


def test_timezone_aware_column(frame: pd.DataFrame) -> None:
    aware = frame.assign(日付=frame["日付"].dt.tz_localize("Asia/Tokyo"))
    got = run(aware, {"col": "日付", "op": ">=", "value": "2025-01-31"})
    want = aware[aware["日付"] >= pd.Timestamp("2025-01-31", tz="Asia/Tokyo")]
    pd.testing.assert_frame_equal(got, want)


def test_unknown_column_suggests_the_closest(frame: pd.DataFrame) -> None:
    with pytest.raises(SpecError) as caught:
        run(frame, {"col": "売り上げ", "op": ">", "value": 1})
    assert "もしかして '売上' ですか" in str(caught.value)
    assert caught.value.details["field"] == "filters[0].col"


def test_text_column_ordered_against_a_number_is_an_error(frame: pd.DataFrame) -> None:
    with pytest.raises(SpecError, match="holds text"):
        run(frame, {"col": "地域", "op": ">", "value": 5})


@pytest.mark.parametrize("op", ["==", ">", "contains"])
def test_missing_value_is_an_error(frame: pd.DataFrame, op: str) -> None:
    with pytest.raises(SpecError):
        run(frame, {"col": "売上", "op": op, "value": None})


def test_list_value_outside_in_is_an_error(frame: pd.DataFrame) -> None:
    with pytest.raises(SpecError, match="use 'in'"):
        run(frame, {"col": "売上", "op": "==", "value": [1, 2]})


def test_bool_column_rejects_unclear_values(frame: pd.DataFrame) -> None:
    with pytest.raises(SpecError, match="true/false"):
        run(frame, {"col": "確定", "op": "==", "value": "たぶん"})


def test_contains_on_dates_uses_their_text(frame: pd.DataFrame) -> None:
    got = run(frame, {"col": "日付", "op": "contains", "value": "2025-01-01"})
    want = frame["日付"].astype(str).str.contains("2025-01-01", regex=False, na=False)
    pd.testing.assert_frame_equal(got, frame[want.to_numpy(dtype=bool)])
    assert len(got) == 2


def test_parse_date_value() -> None:
    assert parse_date_value("2025年3月5日") == pd.Timestamp("2025-03-05")
    assert parse_date_value("20250305") == pd.Timestamp("2025-03-05")
    assert parse_date_value("2025/3") == pd.Timestamp("2025-03-01")
    with pytest.raises(ValueError):
        parse_date_value("そのうち")


def test_filters_do_not_modify_the_input(frame: pd.DataFrame) -> None:
    before = frame.copy()
    run(frame, {"col": "伝票日", "op": ">=", "value": "2025-01-01"})
    pd.testing.assert_frame_equal(frame, before)


@pytest.mark.parametrize("dtype", ["object", "string", "category"])
def test_contains_is_blind_to_full_and_half_width(dtype: str) -> None:
    # bank statements write kana half width: 「デンキ」 must find 「ﾃﾞﾝｷﾘｮｳｷﾝ」 and back
    memo = pd.Series(["ﾃﾞﾝｷﾘｮｳｷﾝ 4ｶﾞﾂ", "ガス代", None, "デンキ代", "ＡＢＣ商事"], dtype=dtype)
    frame = pd.DataFrame({"摘要": memo})
    kept = apply_filters(frame, [{"col": "摘要", "op": "contains", "value": "デンキ"}])
    assert list(kept.index) == [0, 3]
    kept = apply_filters(frame, [{"col": "摘要", "op": "contains", "value": "ﾃﾞﾝｷ"}])
    assert list(kept.index) == [0, 3]
    kept = apply_filters(frame, [{"col": "摘要", "op": "contains", "value": "ABC"}])
    assert list(kept.index) == [4]
