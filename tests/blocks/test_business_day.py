"""date.business_day: business days over holidays, year ends and leap years.

Every expected date is written from the calendar, not computed by the product or by
``jpholiday``:

* ``HOLIDAYS`` below: the national holidays of 2026–2028 typed by hand from the 内閣府
  「国民の祝日について」list (振替休日 and 国民の休日 included; 春分の日・秋分の日 of 2028
  are the dates the 国立天文台 formula gives, announced officially in February 2027);
* weekdays from ``datetime``;
* the company's closed days: the default setting 年末年始 (12-29, 12-30, 12-31, 01-02,
  01-03) unless a test gives ``closed_days``.

The hand cases spell out the days passed over in comments; the sweep tests check every
day of 2026–2028 against a small oracle over ``HOLIDAYS`` written in this file.
"""

from __future__ import annotations

import datetime as dt
import logging
from typing import Any

import pytest
from block_harness import CATALOG, failure, make_context, run

from keiri_agent.blocks.base import BlockContext
from keiri_agent.config import PlanSettings, Settings
from keiri_agent.errors import BlockError, BlockErrorCode
from keiri_agent.plans.catalog.catalog import schema_problems

BLOCK = "date.business_day"

# Typed by hand from the 内閣府 list (not generated, not read from a package).
HOLIDAYS: dict[dt.date, str] = {
    # 2026
    dt.date(2026, 1, 1): "元日",  # Thursday
    dt.date(2026, 1, 12): "成人の日",
    dt.date(2026, 2, 11): "建国記念の日",
    dt.date(2026, 2, 23): "天皇誕生日",  # Monday
    dt.date(2026, 3, 20): "春分の日",
    dt.date(2026, 4, 29): "昭和の日",
    dt.date(2026, 5, 3): "憲法記念日",  # Sunday
    dt.date(2026, 5, 4): "みどりの日",
    dt.date(2026, 5, 5): "こどもの日",
    dt.date(2026, 5, 6): "振替休日",  # for 憲法記念日 on Sunday
    dt.date(2026, 7, 20): "海の日",
    dt.date(2026, 8, 11): "山の日",
    dt.date(2026, 9, 21): "敬老の日",
    dt.date(2026, 9, 22): "国民の休日",  # between 敬老の日 and 秋分の日
    dt.date(2026, 9, 23): "秋分の日",
    dt.date(2026, 10, 12): "スポーツの日",
    dt.date(2026, 11, 3): "文化の日",
    dt.date(2026, 11, 23): "勤労感謝の日",  # Monday
    # 2027
    dt.date(2027, 1, 1): "元日",  # Friday
    dt.date(2027, 1, 11): "成人の日",
    dt.date(2027, 2, 11): "建国記念の日",
    dt.date(2027, 2, 23): "天皇誕生日",  # Tuesday
    dt.date(2027, 3, 21): "春分の日",  # Sunday
    dt.date(2027, 3, 22): "振替休日",
    dt.date(2027, 4, 29): "昭和の日",
    dt.date(2027, 5, 3): "憲法記念日",
    dt.date(2027, 5, 4): "みどりの日",
    dt.date(2027, 5, 5): "こどもの日",
    dt.date(2027, 7, 19): "海の日",
    dt.date(2027, 8, 11): "山の日",
    dt.date(2027, 9, 20): "敬老の日",
    dt.date(2027, 9, 23): "秋分の日",
    dt.date(2027, 10, 11): "スポーツの日",
    dt.date(2027, 11, 3): "文化の日",
    dt.date(2027, 11, 23): "勤労感謝の日",
    # 2028 (a leap year)
    dt.date(2028, 1, 1): "元日",  # Saturday: no 振替休日
    dt.date(2028, 1, 10): "成人の日",
    dt.date(2028, 2, 11): "建国記念の日",
    dt.date(2028, 2, 23): "天皇誕生日",  # Wednesday
    dt.date(2028, 3, 20): "春分の日",
    dt.date(2028, 4, 29): "昭和の日",  # Saturday
    dt.date(2028, 5, 3): "憲法記念日",
    dt.date(2028, 5, 4): "みどりの日",
    dt.date(2028, 5, 5): "こどもの日",
    dt.date(2028, 7, 17): "海の日",
    dt.date(2028, 8, 11): "山の日",
    dt.date(2028, 9, 18): "敬老の日",
    dt.date(2028, 9, 22): "秋分の日",
    dt.date(2028, 10, 9): "スポーツの日",
    dt.date(2028, 11, 3): "文化の日",
    dt.date(2028, 11, 23): "勤労感謝の日",
    # the sweep looks past the end of 2028
    dt.date(2029, 1, 1): "元日",  # Monday
    dt.date(2029, 1, 8): "成人の日",  # the second Monday
}
NEW_YEAR = {(12, 29), (12, 30), (12, 31), (1, 2), (1, 3)}
"""The default closed days (setting ``plans.closed_days``)."""


def one(date: str, operation: str = "next", **inputs: Any) -> tuple[str | None, str | None]:
    """The block on one date: (date, reason)."""
    out = run(BLOCK, make_context(), date=date, operation=operation, **inputs)
    assert out["records"] is None
    return out["date"], out["reason"]


def direct_failure(inputs: dict[str, Any], ctx: BlockContext | None = None) -> BlockError:
    """The error of the block called without the engine's schema check (the block's own)."""
    block = CATALOG.load(CATALOG.resolve(BLOCK))
    values = {**CATALOG.resolve(BLOCK).input_defaults(), **inputs}
    with pytest.raises(BlockError) as exc:
        block.validate(values, ctx or make_context())
        block.run(values, ctx or make_context())
    assert exc.value.code == BlockErrorCode.INPUT_VALIDATION_FAILED
    return exc.value


# --- next / previous -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("date", "operation", "expected", "reason"),
    [
        # Golden Week 2026: 5/2 Sat, 5/3 Sun 憲法記念日, 5/4 みどりの日, 5/5 こどもの日,
        # 5/6 Wed 振替休日 → 5/7 Thu is the first business day; 5/1 Fri the last before.
        ("2026-05-06", "next", "2026-05-07", "振替休日（憲法記念日）のため翌営業日"),
        ("2026-05-06", "previous", "2026-05-01", "振替休日（憲法記念日）のため前営業日"),
        ("2026-05-02", "next", "2026-05-07", "土曜のため翌営業日"),
        ("2026-05-03", "next", "2026-05-07", "日曜のため翌営業日"),  # a Sunday first
        ("2026-05-04", "next", "2026-05-07", "みどりの日のため翌営業日"),
        ("2026-05-05", "previous", "2026-05-01", "こどもの日のため前営業日"),
        ("2026-04-29", "next", "2026-04-30", "昭和の日のため翌営業日"),  # Wednesday
        ("2026-05-01", "next", "2026-05-01", ""),  # Friday between the holidays
        ("2026-05-07", "previous", "2026-05-07", ""),
        # Silver week 2026: 9/19 Sat, 9/20 Sun, 9/21 Mon 敬老の日, 9/22 Tue 国民の休日,
        # 9/23 Wed 秋分の日 → 9/24 Thu; before it 9/18 Fri.
        ("2026-09-22", "next", "2026-09-24", "国民の休日のため翌営業日"),
        ("2026-09-22", "previous", "2026-09-18", "国民の休日のため前営業日"),
        ("2026-09-21", "next", "2026-09-24", "敬老の日のため翌営業日"),
        ("2026-09-23", "previous", "2026-09-18", "秋分の日のため前営業日"),
        # 勤労感謝の日 2026 is a Monday: 11/20 Fri before, 11/24 Tue after.
        ("2026-11-23", "previous", "2026-11-20", "勤労感謝の日のため前営業日"),
        ("2026-11-23", "next", "2026-11-24", "勤労感謝の日のため翌営業日"),
        # 2027: 春分の日 3/21 is a Sunday → 3/22 Mon 振替休日 → 3/23 Tue.
        ("2027-03-22", "next", "2027-03-23", "振替休日（春分の日）のため翌営業日"),
        ("2027-03-22", "previous", "2027-03-19", "振替休日（春分の日）のため前営業日"),
        # an ordinary Sunday and Saturday
        ("2026-05-31", "next", "2026-06-01", "日曜のため翌営業日"),
        ("2026-05-30", "previous", "2026-05-29", "土曜のため前営業日"),
    ],
)
def test_next_and_previous_over_holidays(
    date: str, operation: str, expected: str, reason: str
) -> None:
    assert one(date, operation) == (expected, reason)


@pytest.mark.parametrize(
    ("date", "operation", "expected", "reason"),
    [
        # 年末年始 2026→2027: 12/28 Mon works; 12/29–12/31 closed, 1/1 Fri 元日,
        # 1/2 Sat (closed too), 1/3 Sun → 1/4 Mon.
        ("2026-12-29", "next", "2027-01-04", "会社の休業日のため翌営業日"),
        ("2026-12-31", "next", "2027-01-04", "会社の休業日のため翌営業日"),
        ("2027-01-01", "previous", "2026-12-28", "元日のため前営業日"),
        ("2027-01-03", "previous", "2026-12-28", "日曜のため前営業日"),
        ("2026-12-28", "next", "2026-12-28", ""),
        ("2027-01-04", "previous", "2027-01-04", ""),
        # 2027→2028: 12/28 Tue works; 12/29 Wed–12/31 Fri closed, 1/1 Sat 元日,
        # 1/2 Sun, 1/3 Mon closed → 1/4 Tue.
        ("2027-12-29", "next", "2028-01-04", "会社の休業日のため翌営業日"),
        ("2028-01-01", "next", "2028-01-04", "土曜のため翌営業日"),  # 元日 on a Saturday
        ("2028-01-03", "previous", "2027-12-28", "会社の休業日のため前営業日"),
        # 2025→2026: 12/26 Fri works; 12/27 Sat … 1/1 Thu 元日, 1/2 Fri closed,
        # 1/3 Sat, 1/4 Sun → 1/5 Mon.
        ("2026-01-02", "previous", "2025-12-26", "会社の休業日のため前営業日"),
        ("2025-12-29", "next", "2026-01-05", "会社の休業日のため翌営業日"),
    ],
)
def test_year_end_closed_days_cross_the_year_both_ways(
    date: str, operation: str, expected: str, reason: str
) -> None:
    assert one(date, operation) == (expected, reason)


def test_without_closed_days_only_weekends_and_holidays_count() -> None:
    # closed_days: [] — 12/29–12/31/2026 are plain weekdays (Tue–Thu); 元日 still counts.
    assert one("2026-12-29", closed_days=[]) == ("2026-12-29", "")
    assert one("2026-12-31", closed_days=[]) == ("2026-12-31", "")
    assert one("2027-01-01", closed_days=[]) == ("2027-01-04", "元日のため翌営業日")
    assert one("2026-01-02", closed_days=[]) == ("2026-01-02", "")  # Friday


# --- add (N営業日後 / N営業日前) --------------------------------------------------------------


@pytest.mark.parametrize(
    ("date", "days", "expected", "reason"),
    [
        # Friday + 1 = Monday (June 2026 has no holiday)
        ("2026-06-05", 1, "2026-06-08", "1営業日後（土曜・日曜を除く）"),
        ("2026-06-08", 3, "2026-06-11", "3営業日後"),
        # 11/20 Fri; 11/21 Sat, 11/22 Sun, 11/23 Mon 勤労感謝の日 → 11/24 (1), 11/25, 11/26 (3)
        ("2026-11-20", 1, "2026-11-24", "1営業日後（土曜・日曜・勤労感謝の日を除く）"),
        ("2026-11-20", 3, "2026-11-26", "3営業日後（土曜・日曜・勤労感謝の日を除く）"),
        # from a holiday or a weekend, + 1 is the first business day after it
        ("2026-11-23", 1, "2026-11-24", "1営業日後"),
        ("2026-11-21", 1, "2026-11-24", "1営業日後（日曜・勤労感謝の日を除く）"),
        # Golden Week: 5/1 Fri + 1 passes 5/2–5/6
        (
            "2026-05-01",
            1,
            "2026-05-07",
            "1営業日後（土曜・日曜・みどりの日・こどもの日・振替休日（憲法記念日）を除く）",
        ),
        # 7/17 Fri; 7/18 Sat, 7/19 Sun, 7/20 海の日; 7/21 (1) 22 23 24 (4), 7/27 Mon (5)
        ("2026-07-17", 5, "2026-07-27", "5営業日後（土曜・日曜・海の日を除く）"),
        # negative: 11/24 Tue − 1 = 11/20 Fri; − 3 = 11/18 Wed (11/20, 11/19, 11/18)
        ("2026-11-24", -1, "2026-11-20", "1営業日前（勤労感謝の日・日曜・土曜を除く）"),
        ("2026-11-24", -3, "2026-11-18", "3営業日前（勤労感謝の日・日曜・土曜を除く）"),
        (
            "2026-05-07",
            -1,
            "2026-05-01",
            "1営業日前（振替休日（憲法記念日）・こどもの日・みどりの日・日曜・土曜を除く）",
        ),
        # over 年末年始: 12/28 Mon + 1 = 1/4 Mon (12/29–31 closed, 元日, 1/2 Sat, 1/3 Sun)
        ("2026-12-28", 1, "2027-01-04", "1営業日後（会社の休業日・元日・土曜・日曜を除く）"),
        ("2027-01-04", -1, "2026-12-28", "1営業日前（日曜・土曜・元日・会社の休業日を除く）"),
        # 2027-12-28 Tue + 2: 12/29–31, 1/1 Sat, 1/2 Sun, 1/3 Mon closed; 1/4 Tue (1), 1/5 (2)
        ("2027-12-28", 2, "2028-01-05", "2営業日後（会社の休業日・土曜・日曜を除く）"),
        # leap day: 2028-02-28 Mon + 1 = 2/29 Tue, + 2 = 3/1 Wed
        ("2028-02-28", 1, "2028-02-29", "1営業日後"),
        ("2028-02-28", 2, "2028-03-01", "2営業日後"),
        # 2027 has no 2/29: 2/26 Fri + 1 = 3/1 Mon
        ("2027-02-26", 1, "2027-03-01", "1営業日後（土曜・日曜を除く）"),
        # 天皇誕生日 2028-02-23 Wed: 2/22 Tue + 1 = 2/24 Thu
        ("2028-02-22", 1, "2028-02-24", "1営業日後（天皇誕生日を除く）"),
        # 2/24 Thu − 5: 2/22 (1), 2/21 Mon (2), 2/18 Fri (3), 2/17 (4), 2/16 Wed (5)
        ("2028-02-24", -5, "2028-02-16", "5営業日前（天皇誕生日・日曜・土曜を除く）"),
    ],
)
def test_add_counts_business_days_after_the_date(
    date: str, days: int, expected: str, reason: str
) -> None:
    assert one(date, "add", days=days) == (expected, reason)


# --- month_end / month_start --------------------------------------------------------------


@pytest.mark.parametrize(
    ("date", "operation", "expected", "reason"),
    [
        # 2026-01-31 is a Saturday → Fri 1/30
        ("2026-01-10", "month_end", "2026-01-30", "月末（1月31日）が土曜のため前営業日"),
        ("2026-01-31", "month_end", "2026-01-30", "月末（1月31日）が土曜のため前営業日"),
        ("2026-01-30", "month_end", "2026-01-30", ""),
        # 2026-05-31 Sunday → Fri 5/29; 2027-10-31 Sunday → Fri 10/29
        ("2026-05-06", "month_end", "2026-05-29", "月末（5月31日）が日曜のため前営業日"),
        ("2027-10-01", "month_end", "2027-10-29", "月末（10月31日）が日曜のため前営業日"),
        # 2026-04-30 Thursday is a business day
        ("2026-04-01", "month_end", "2026-04-30", "月末"),
        ("2026-04-30", "month_end", "2026-04-30", ""),
        # December: 12/29–12/31 closed → 2026-12-28 Mon; 2027: 12/28 Tue
        ("2026-12-01", "month_end", "2026-12-28", "月末（12月31日）が会社の休業日のため前営業日"),
        ("2027-12-31", "month_end", "2027-12-28", "月末（12月31日）が会社の休業日のため前営業日"),
        # February: 2027-02-28 Sunday → Fri 2/26; 2028-02-29 Tuesday (leap year)
        ("2027-02-23", "month_end", "2027-02-26", "月末（2月28日）が日曜のため前営業日"),
        ("2028-02-23", "month_end", "2028-02-29", "月末"),
        ("2028-02-29", "month_end", "2028-02-29", ""),
        # month_start after 元日: 2026: 1/1 Thu, 1/2 Fri closed, 1/3 Sat, 1/4 Sun → 1/5 Mon
        ("2026-01-20", "month_start", "2026-01-05", "月初（1月1日）が元日のため翌営業日"),
        # 2027: 1/1 Fri 元日, 1/2 Sat, 1/3 Sun → 1/4 Mon
        ("2027-01-31", "month_start", "2027-01-04", "月初（1月1日）が元日のため翌営業日"),
        # 2028: 1/1 Sat (元日), 1/2 Sun, 1/3 Mon closed → 1/4 Tue
        ("2028-01-04", "month_start", "2028-01-04", ""),
        ("2028-01-15", "month_start", "2028-01-04", "月初（1月1日）が土曜のため翌営業日"),
        # 2026-11-01 Sunday → 11/2 Mon (文化の日 is 11/3); 2026-05-01 Friday
        ("2026-11-30", "month_start", "2026-11-02", "月初（11月1日）が日曜のため翌営業日"),
        ("2026-05-20", "month_start", "2026-05-01", "月初"),
        # 2028-03-01 Wednesday, after the leap day
        ("2028-03-31", "month_start", "2028-03-01", "月初"),
    ],
)
def test_month_end_and_month_start(date: str, operation: str, expected: str, reason: str) -> None:
    assert one(date, operation) == (expected, reason)


# --- the company's own closed days --------------------------------------------------------


def test_closed_dates_are_closed_once() -> None:
    founding = ["2026-06-01"]  # 創立記念日 on Monday 2026-06-01
    # 5/31 Sun → normally 6/1 Mon; closed → 6/2 Tue
    assert one("2026-05-31") == ("2026-06-01", "日曜のため翌営業日")
    assert one("2026-05-31", closed_dates=founding) == ("2026-06-02", "日曜のため翌営業日")
    assert one("2026-06-01", closed_dates=founding) == ("2026-06-02", "会社の休業日のため翌営業日")
    assert one("2026-05-29", "add", days=1, closed_dates=founding) == (
        "2026-06-02",
        "1営業日後（土曜・日曜・会社の休業日を除く）",
    )
    assert one("2026-06-15", "month_start", closed_dates=founding) == (
        "2026-06-02",
        "月初（6月1日）が会社の休業日のため翌営業日",
    )
    # only that year: 2027-06-01 is a Tuesday and a business day
    assert one("2027-06-01", closed_dates=founding) == ("2027-06-01", "")
    # other forms of the date are read too; the default 年末年始 still applies
    assert one("2026-12-28", closed_dates=["2026/12/28"]) == (
        "2027-01-04",
        "会社の休業日のため翌営業日",
    )


def test_closed_days_replace_the_setting() -> None:
    obon = ["08-13", "08-14", "08-15"]
    # 8/11 Tue 山の日, 8/12 Wed works, 8/13 Thu–8/15 Sat closed (8/15 is a Saturday
    # anyway), 8/16 Sun → 8/17 Mon
    assert one("2026-08-12", "add", days=1, closed_days=obon) == (
        "2026-08-17",
        "1営業日後（会社の休業日・土曜・日曜を除く）",
    )
    assert one("2026-08-11", closed_days=obon) == ("2026-08-12", "山の日のため翌営業日")
    # the given list replaces the default 年末年始: 12/29/2026 (Tue) is a business day
    assert one("2026-12-29", closed_days=obon) == ("2026-12-29", "")
    # full-width text and one-digit months are read
    assert one("2026-08-13", closed_days=["０８－１３", "8-14"]) == (
        "2026-08-17",
        "会社の休業日のため翌営業日",
    )


def test_leap_day_as_a_closed_day_only_in_leap_years() -> None:
    # 02-29 every year: closes Tue 2028-02-29 (→ Wed 3/1); 2027 has no such day
    assert one("2028-02-29", closed_days=["02-29"]) == ("2028-03-01", "会社の休業日のため翌営業日")
    assert one("2028-02-10", "month_end", closed_days=["02-29"]) == (
        "2028-02-28",
        "月末（2月29日）が会社の休業日のため前営業日",
    )
    assert one("2027-03-01", closed_days=["02-29"]) == ("2027-03-01", "")


def test_default_closed_days_come_from_the_setting() -> None:
    settings = Settings(plans=PlanSettings(closed_days=("05-01",)))
    ctx = BlockContext(
        run_id="run", plan_id="plan", node_id="node", settings=settings, logger=logging.getLogger()
    )
    # 5/1/2026 Fri closed by the setting → 5/7 Thu after Golden Week
    out = run(BLOCK, ctx, date="2026-05-01")
    assert (out["date"], out["reason"]) == ("2026-05-07", "会社の休業日のため翌営業日")
    # the setting replaced 年末年始: 12/29/2026 (Tue) is a business day
    assert run(BLOCK, ctx, date="2026-12-29")["date"] == "2026-12-29"


# --- one date and tables ------------------------------------------------------------------


def test_one_date_in_other_forms_and_blank() -> None:
    assert one("2026/5/3") == ("2026-05-07", "日曜のため翌営業日")
    assert one("令和8年5月3日") == ("2026-05-07", "日曜のため翌営業日")
    assert one("２０２６年５月３日") == ("2026-05-07", "日曜のため翌営業日")
    assert one("2026-05-03 10:30") == ("2026-05-07", "日曜のため翌営業日")
    assert one("") == (None, "")
    assert one("  ") == (None, "")


def test_table_keeps_columns_and_order_and_adds_the_result() -> None:
    records = [
        {"No": 1, "取引先": "A社", "支払期日": "2026-05-03", "金額": 1000},
        {"No": 2, "取引先": "B社", "支払期日": None, "金額": 2000},
        {"No": 3, "取引先": "C社", "支払期日": "2026/09/22", "金額": 3000},
        {"No": 4, "取引先": "D社", "支払期日": "", "金額": 4000},
        {"No": 5, "取引先": "E社", "支払期日": "2026-05-03", "金額": 5000},
        {"No": 6, "取引先": "F社", "支払期日": "2026-06-30", "金額": 6000},
        {"No": 7, "取引先": "G社", "金額": 7000},  # no cell at all
    ]
    out = run(BLOCK, make_context(), records=records, column="支払期日")
    assert out["date"] is None and out["reason"] is None
    rows = out["records"]
    assert [row["No"] for row in rows] == [1, 2, 3, 4, 5, 6, 7]
    assert list(rows[0]) == [
        "No",
        "取引先",
        "支払期日",
        "金額",
        "支払期日_営業日",
        "支払期日_営業日_理由",
    ]
    for row, given in zip(rows, records, strict=True):
        assert {key: row[key] for key in given} == given  # the input cells unchanged
    assert [row["支払期日_営業日"] for row in rows] == [
        "2026-05-07",
        None,
        "2026-09-24",
        None,
        "2026-05-07",
        "2026-06-30",
        None,
    ]
    assert [row["支払期日_営業日_理由"] for row in rows] == [
        "日曜のため翌営業日",
        "",
        "国民の休日のため翌営業日",
        "",
        "日曜のため翌営業日",
        "",
        "",
    ]
    assert records[0] == {"No": 1, "取引先": "A社", "支払期日": "2026-05-03", "金額": 1000}


def test_table_with_an_output_column_and_in_place() -> None:
    records = [{"請求書": "INV-1", "期日": "2026-01-31"}, {"請求書": "INV-2", "期日": "2026-02-15"}]
    out = run(
        BLOCK,
        make_context(),
        records=records,
        column="期日",
        output_column="支払予定日",
        operation="month_end",
    )
    assert out["records"] == [
        {
            "請求書": "INV-1",
            "期日": "2026-01-31",
            "支払予定日": "2026-01-30",
            "支払予定日_理由": "月末（1月31日）が土曜のため前営業日",
        },
        # 2026-02-28 is a Saturday → Fri 2/27
        {
            "請求書": "INV-2",
            "期日": "2026-02-15",
            "支払予定日": "2026-02-27",
            "支払予定日_理由": "月末（2月28日）が土曜のため前営業日",
        },
    ]
    same = run(BLOCK, make_context(), records=records, column="期日", output_column="期日")
    assert same["records"] == [
        {"請求書": "INV-1", "期日": "2026-02-02", "期日_理由": "土曜のため翌営業日"},
        {"請求書": "INV-2", "期日": "2026-02-16", "期日_理由": "日曜のため翌営業日"},
    ]
    assert list(same["records"][0]) == ["請求書", "期日", "期日_理由"]


def test_table_cells_that_are_dates_and_an_empty_table() -> None:
    block = CATALOG.load(CATALOG.resolve(BLOCK))
    records = [
        {"日付": dt.date(2026, 11, 23)},
        {"日付": dt.datetime(2026, 11, 21, 9, 0)},
        {"日付": float("nan")},
    ]
    values = {**CATALOG.resolve(BLOCK).input_defaults(), "records": records, "column": "日付"}
    out = block.run({**values, "operation": "previous"}, make_context())
    assert [row["日付_営業日"] for row in out["records"]] == ["2026-11-20", "2026-11-20", None]
    assert run(BLOCK, make_context(), records=[], column="日付")["records"] == []


# --- a sweep of 2026–2028 against the hand-typed calendar ---------------------------------


def _is_business_day(day: dt.date) -> bool:
    return day.weekday() < 5 and day not in HOLIDAYS and (day.month, day.day) not in NEW_YEAR


def _step(day: dt.date, direction: int) -> dt.date:
    day += dt.timedelta(days=direction)
    while not _is_business_day(day):
        day += dt.timedelta(days=direction)
    return day


def _expected(day: dt.date, operation: str, days: int = 0) -> dt.date:
    if operation == "next":
        return day if _is_business_day(day) else _step(day, 1)
    if operation == "previous":
        return day if _is_business_day(day) else _step(day, -1)
    if operation == "add":
        for _ in range(abs(days)):
            day = _step(day, 1 if days > 0 else -1)
        return day
    if operation == "month_start":
        return _expected(day.replace(day=1), "next")
    following = (day.replace(day=28) + dt.timedelta(days=4)).replace(day=1)
    return _expected(following - dt.timedelta(days=1), "previous")


ALL_DAYS = [dt.date(2026, 1, 1) + dt.timedelta(days=n) for n in range(3 * 365 + 1)]


def test_sanity_the_sweep_covers_three_years_and_the_oracle_agrees_with_hand_cases() -> None:
    assert ALL_DAYS[0] == dt.date(2026, 1, 1) and ALL_DAYS[-1] == dt.date(2028, 12, 31)
    assert _expected(dt.date(2026, 12, 29), "next") == dt.date(2027, 1, 4)
    assert _expected(dt.date(2026, 11, 24), "add", -3) == dt.date(2026, 11, 18)
    assert _expected(dt.date(2027, 2, 1), "month_end") == dt.date(2027, 2, 26)
    assert _expected(dt.date(2028, 12, 31), "next") == dt.date(2029, 1, 4)


@pytest.mark.parametrize(
    ("operation", "days"),
    [
        ("next", None),
        ("previous", None),
        ("add", 1),
        ("add", -1),
        ("add", 7),
        ("add", -4),
        ("month_end", None),
        ("month_start", None),
    ],
)
def test_every_day_of_2026_to_2028_matches_the_calendar(operation: str, days: int | None) -> None:
    records = [{"日付": day.isoformat()} for day in ALL_DAYS]
    extra = {} if days is None else {"days": days}
    out = run(BLOCK, make_context(), records=records, column="日付", operation=operation, **extra)
    got = [row["日付_営業日"] for row in out["records"]]
    wanted = [_expected(day, operation, days or 0).isoformat() for day in ALL_DAYS]
    wrong = [(day, g, w) for day, g, w in zip(ALL_DAYS, got, wanted, strict=True) if g != w]
    assert wrong == []
    # a reason exactly when the date moved
    for row in out["records"]:
        assert (row["日付_営業日_理由"] == "") == (row["日付_営業日"] == row["日付"])


def test_both_or_neither_of_date_and_records() -> None:
    both = failure(BLOCK, make_context(), date="2026-05-03", records=[{"日付": "x"}], column="日付")
    assert "どちらか一方" in both.message and "両方" in both.message
    neither = failure(BLOCK, make_context())
    assert "どちらか一方" in neither.message and "どちらも指定されていません" in neither.message
    assert neither.hint and "date:" in neither.hint


def test_records_need_a_column_and_a_date_takes_none() -> None:
    error = failure(BLOCK, make_context(), records=[{"日付": "2026-05-03"}])
    assert "column" in error.message and error.details["field"] == "column"
    error = failure(BLOCK, make_context(), date="2026-05-03", column="日付")
    assert "records" in error.message and error.details["field"] == "column"
    error = failure(BLOCK, make_context(), records=[{"日付": "2026-05-03"}], column="期日")
    assert "期日" in error.message and error.details["column"] == "期日"


def test_bad_operation() -> None:
    spec = CATALOG.resolve(BLOCK)
    assert schema_problems("weekly", spec.input_schema("operation")) != []
    error = direct_failure({"date": "2026-05-03", "operation": "weekly"})
    assert "「weekly」" in error.message and error.details["field"] == "operation"
    assert error.hint and "month_end" in error.hint


def test_add_needs_nonzero_days_and_only_add_takes_days() -> None:
    error = failure(BLOCK, make_context(), date="2026-05-03", operation="add")
    assert "days" in error.message and error.details["field"] == "days"
    error = failure(BLOCK, make_context(), date="2026-05-03", operation="add", days=0)
    assert "0 以外" in error.message
    error = failure(BLOCK, make_context(), date="2026-05-03", operation="next", days=3)
    assert "add のときだけ" in error.message
    error = direct_failure({"date": "2026-05-03", "operation": "add", "days": 5000})
    assert "5000" in error.message


@pytest.mark.parametrize("bad", ["12/32", "1229", "13-01", "02-30", "12-29-2026", "年末", ""])
def test_bad_closed_days_name_the_value_and_the_form(bad: str) -> None:
    error = failure(BLOCK, make_context(), date="2026-05-03", closed_days=["12-29", bad])
    assert f"「{bad}」" in error.message and "MM-DD" in error.message
    assert error.details["field"] == "closed_days" and error.details["value"] == f"「{bad}」"


def test_closed_days_as_one_text_is_refused() -> None:
    error = direct_failure({"date": "2026-05-03", "closed_days": "12-29,12-30"})
    assert "リスト" in error.message and error.details["field"] == "closed_days"


@pytest.mark.parametrize("bad", ["2026-13-01", "2027-02-29", "創立記念日", "06-01"])
def test_bad_closed_dates_name_the_value_and_the_form(bad: str) -> None:
    error = failure(BLOCK, make_context(), date="2026-05-03", closed_dates=[bad])
    assert f"「{bad}」" in error.message and error.details["field"] == "closed_dates"
    assert error.hint and "YYYY-MM-DD" in error.hint


def test_unreadable_date_cell_names_the_row_and_the_value() -> None:
    records = [
        {"取引先": "A社", "支払期日": "2026-05-03"},
        {"取引先": "B社", "支払期日": None},
        {"取引先": "C社", "支払期日": "来月末"},
    ]
    error = failure(BLOCK, make_context(), records=records, column="支払期日")
    assert "3 行目" in error.message and "「来月末」" in error.message
    assert "支払期日" in error.message
    assert error.details["row"] == 3 and error.details["field"] == "records[2].支払期日"
    assert error.hint and "2026-04-30" in error.hint and "空欄" in error.hint


def test_impossible_and_numeric_date_cells() -> None:
    error = failure(BLOCK, make_context(), records=[{"日": "2027-02-29"}], column="日")
    assert "1 行目" in error.message and "「2027-02-29」という日付はありません" in error.message
    error = failure(BLOCK, make_context(), records=[{"日": 46000}], column="日")
    assert "46000" in error.message and "数値" in error.message
    assert error.hint and "シリアル値" in error.hint


def test_unreadable_single_date() -> None:
    error = failure(BLOCK, make_context(), date="2026-02-30")
    assert "「2026-02-30」" in error.message and error.details["field"] == "date"


def test_a_calendar_without_business_days() -> None:
    every_day = [
        f"{m:02d}-{d:02d}" for m in range(1, 13) for d in range(1, 32) if d <= 29 or m != 2
    ]
    every_day = [text for text in every_day if text not in {"04-31", "06-31", "09-31", "11-31"}]
    error = failure(BLOCK, make_context(), date="2026-05-03", closed_days=every_day)
    assert "営業日を求められません" in error.message
    error = failure(
        BLOCK,
        make_context(),
        date="2026-02-10",
        operation="month_end",
        closed_dates=[f"2026-02-{d:02d}" for d in range(1, 29)],
    )
    assert "2026年2月には営業日がありません" in error.message


def test_dry_run_sample_is_what_the_block_returns() -> None:
    samples = CATALOG.resolve(BLOCK).dry_run_samples
    assert run(BLOCK, make_context(), **samples["inputs"]) == samples["outputs"]
