"""text.normalize and the cell parsers of files.cells: 和暦, office amounts, kana, problems."""

from __future__ import annotations

import datetime as dt

import pytest
from block_harness import CATALOG, failure, make_context, run

from keiri_agent.errors import BlockError
from keiri_agent.files.cells import parse_date, parse_number


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("¥1,234-", 1234),
        ("￥１，２３４－", 1234),
        ("△500", -500),
        ("▲500", -500),
        ("(500)", -500),
        ("（５００）", -500),
        ("1,234円", 1234),
        ("１２３４５", 12345),
        ("-1.5", -1.5),
        ("¥(1,000)", -1000),
    ],
)
def test_office_amounts(text: str, expected: float) -> None:
    assert parse_number(text) == expected
    assert type(parse_number(text)) is type(expected)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("令和5年4月1日", dt.date(2023, 4, 1)),
        ("令和元年5月1日", dt.date(2019, 5, 1)),
        ("R5.4.1", dt.date(2023, 4, 1)),
        ("Ｒ５．４．１", dt.date(2023, 4, 1)),
        ("H31/4/30", dt.date(2019, 4, 30)),
        ("平成元年1月8日", dt.date(1989, 1, 8)),
        ("昭和64年1月7日", dt.date(1989, 1, 7)),
        ("S50.12.31", dt.date(1975, 12, 31)),
        ("2023年4月1日", dt.date(2023, 4, 1)),
        ("2023/4/1", dt.date(2023, 4, 1)),
        ("２０２３／０４／０１", dt.date(2023, 4, 1)),
        ("2025-01-31 10:00", dt.date(2025, 1, 31)),
    ],
)
def test_dates_western_and_wareki(text: str, expected: dt.date) -> None:
    assert parse_date(text) == expected


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("H31/5/1", "平成の期間"),  # 平成 ended on 2019-04-30
        ("令和1年4月30日", "令和の期間"),
        ("2023/2/30", "日付はありません"),
        ("来月末", "日付として読めません"),
    ],
)
def test_bad_dates_say_why(text: str, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        parse_date(text)


def test_block_normalizes_columns_and_lists_unreadable_cells() -> None:
    records = [
        {"日付": "R5.4.1", "金額": "¥1,234-", "取引先": "ｶﾌﾞｼｷｶﾞｲｼｬ　ＡＢＣ", "メモ": "ﾃｽﾄ ＡＢＣ"},
        {"日付": "2023年4月2日", "金額": "△500", "取引先": "山田商事", "メモ": None},
        {"日付": "来月末", "金額": "千円", "取引先": "  B社  ", "メモ": ""},
        {"日付": "", "金額": 1500.0, "取引先": None, "メモ": "ｶﾞｷﾞ"},
    ]
    out = run(
        "text.normalize",
        make_context(),
        records=records,
        columns={"日付": "date", "金額": "amount", "取引先": "text", "メモ": "kana"},
        date_format="%Y/%m/%d",
    )
    assert out["records"] == [
        {
            "日付": "2023/04/01",
            "金額": 1234,
            "取引先": "カブシキガイシャ ABC",
            "メモ": "テスト ＡＢＣ",
        },
        {"日付": "2023/04/02", "金額": -500, "取引先": "山田商事", "メモ": None},
        {"日付": "来月末", "金額": "千円", "取引先": "B社", "メモ": ""},
        {"日付": "", "金額": 1500, "取引先": None, "メモ": "ガギ"},
    ]
    assert [(p["row"], p["column"], p["value"]) for p in out["problems"]] == [
        (3, "日付", "来月末"),
        (3, "金額", "千円"),
    ]
    assert all(p["reason"] for p in out["problems"])
    assert records[0]["金額"] == "¥1,234-"  # input untouched


def test_unknown_column_and_kind_are_refused_in_japanese() -> None:
    ctx = make_context()
    block = CATALOG.load(CATALOG.resolve("text.normalize"))
    with pytest.raises(BlockError) as exc:  # the schema refuses it too; the block says why
        block.run({"records": [{"金額": "1"}], "columns": {"金額": "money"}}, ctx)
    assert "種類" in exc.value.message and "amount" in (exc.value.hint or "")
    error = failure("text.normalize", ctx, records=[{"金額": "1"}], columns={"額": "amount"})
    assert error.details["column"] == "額"


def test_dry_run_sample_is_what_the_block_returns() -> None:
    spec = CATALOG.resolve("text.normalize")
    samples = spec.dry_run_samples
    assert run("text.normalize", make_context(), **samples["inputs"]) == samples["outputs"]
