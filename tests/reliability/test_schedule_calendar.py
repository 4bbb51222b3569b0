"""``keiri-agent schedule next``: the dates each rule fires on, checked against the calendar.

Written from the calendar and the command's interface only, not from the code: the
expected dates come from

* ``HOLIDAYS`` below, the Japanese national holidays for 2025–2028 typed by hand from
  the 内閣府「国民の祝日について」list (振替休日 and 国民の休日 included);
* weekdays from ``datetime`` / ``calendar``;
* the company's closed days (``KEIRI_AGENT_CLOSED_DAYS``, default 年末年始
  ``12-29,12-30,12-31,01-02,01-03``).

Two kinds of expectation:

* ``HAND_CASES``: dates typed by hand, reasoned out day by day (the comments show the
  reasoning). They check the command and also the small oracle in this file.
* ``ORACLE_CASES``: dates computed by ``_oracle``, an independent implementation of
  the rules over ``HOLIDAYS`` (no code from the product), for longer runs and spelling
  variants.

The ``sanity`` tests need no product code: ``HOLIDAYS`` against the ``jpholiday``
package for every day of 2025–2028, and the oracle against every hand-typed case.
``jpholiday`` is only a cross-check of the typing, never the source of an expected date.

A date is a date: when two periods are moved onto the same business day (a Monday
closed for 年末年始 moved to the next Monday) the command lists that day once.
"""

from __future__ import annotations

import calendar
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, timedelta

import pytest
from typer.testing import CliRunner

from keiri_agent.cli.app import app

cli = CliRunner()

# --- the calendar -------------------------------------------------------------------

# Typed by hand from the 内閣府「国民の祝日について」list for 2025–2028 (not generated,
# not copied from a package). 振替休日 = a holiday falling on Sunday moves to the next
# non-holiday; 国民の休日 = a weekday between two holidays.
HOLIDAYS: dict[date, str] = {
    # 2025
    date(2025, 1, 1): "元日",
    date(2025, 1, 13): "成人の日",
    date(2025, 2, 11): "建国記念の日",
    date(2025, 2, 23): "天皇誕生日",  # Sunday
    date(2025, 2, 24): "振替休日",
    date(2025, 3, 20): "春分の日",
    date(2025, 4, 29): "昭和の日",
    date(2025, 5, 3): "憲法記念日",
    date(2025, 5, 4): "みどりの日",  # Sunday
    date(2025, 5, 5): "こどもの日",
    date(2025, 5, 6): "振替休日",
    date(2025, 7, 21): "海の日",
    date(2025, 8, 11): "山の日",
    date(2025, 9, 15): "敬老の日",
    date(2025, 9, 23): "秋分の日",
    date(2025, 10, 13): "スポーツの日",
    date(2025, 11, 3): "文化の日",
    date(2025, 11, 23): "勤労感謝の日",  # Sunday
    date(2025, 11, 24): "振替休日",
    # 2026
    date(2026, 1, 1): "元日",
    date(2026, 1, 12): "成人の日",
    date(2026, 2, 11): "建国記念の日",
    date(2026, 2, 23): "天皇誕生日",
    date(2026, 3, 20): "春分の日",
    date(2026, 4, 29): "昭和の日",
    date(2026, 5, 3): "憲法記念日",  # Sunday
    date(2026, 5, 4): "みどりの日",
    date(2026, 5, 5): "こどもの日",
    date(2026, 5, 6): "振替休日",
    date(2026, 7, 20): "海の日",
    date(2026, 8, 11): "山の日",
    date(2026, 9, 21): "敬老の日",
    date(2026, 9, 22): "国民の休日",
    date(2026, 9, 23): "秋分の日",
    date(2026, 10, 12): "スポーツの日",
    date(2026, 11, 3): "文化の日",
    date(2026, 11, 23): "勤労感謝の日",
    # 2027
    date(2027, 1, 1): "元日",
    date(2027, 1, 11): "成人の日",
    date(2027, 2, 11): "建国記念の日",
    date(2027, 2, 23): "天皇誕生日",
    date(2027, 3, 21): "春分の日",  # Sunday
    date(2027, 3, 22): "振替休日",
    date(2027, 4, 29): "昭和の日",
    date(2027, 5, 3): "憲法記念日",
    date(2027, 5, 4): "みどりの日",
    date(2027, 5, 5): "こどもの日",
    date(2027, 7, 19): "海の日",
    date(2027, 8, 11): "山の日",
    date(2027, 9, 20): "敬老の日",
    date(2027, 9, 23): "秋分の日",
    date(2027, 10, 11): "スポーツの日",
    date(2027, 11, 3): "文化の日",
    date(2027, 11, 23): "勤労感謝の日",
    # 2028
    date(2028, 1, 1): "元日",  # Saturday: no 振替休日
    date(2028, 1, 10): "成人の日",
    date(2028, 2, 11): "建国記念の日",
    date(2028, 2, 23): "天皇誕生日",
    date(2028, 3, 20): "春分の日",
    date(2028, 4, 29): "昭和の日",  # Saturday
    date(2028, 5, 3): "憲法記念日",
    date(2028, 5, 4): "みどりの日",
    date(2028, 5, 5): "こどもの日",
    date(2028, 7, 17): "海の日",
    date(2028, 8, 11): "山の日",
    date(2028, 9, 18): "敬老の日",
    date(2028, 9, 22): "秋分の日",
    date(2028, 10, 9): "スポーツの日",
    date(2028, 11, 3): "文化の日",
    date(2028, 11, 23): "勤労感謝の日",
}

FIRST_DAY = date(2025, 1, 1)
LAST_DAY = date(2028, 12, 31)
DEFAULT_CLOSED = "12-29,12-30,12-31,01-02,01-03"
OBON = "08-13,08-14,08-15"
NO_CLOSED = ""


def _closed_days(setting: str | None) -> frozenset[tuple[int, int]]:
    text = DEFAULT_CLOSED if setting is None else setting
    days = set()
    for item in text.split(","):
        if item.strip():
            month, day = item.strip().split("-")
            days.add((int(month), int(day)))
    return frozenset(days)


def _is_business_day(day: date, closed: frozenset[tuple[int, int]]) -> bool:
    assert FIRST_DAY <= day <= LAST_DAY, f"{day} is outside the typed holidays (test data)"
    return day.weekday() < 5 and day not in HOLIDAYS and (day.month, day.day) not in closed


def _moved(day: date, move: str | None, closed: frozenset[tuple[int, int]]) -> date:
    if move is None:
        return day
    step = timedelta(days=1 if move == "next" else -1)
    while not _is_business_day(day, closed):
        day += step
    return day


def _business_days(year: int, month: int, closed: frozenset[tuple[int, int]]) -> list[date]:
    days = calendar.monthrange(year, month)[1]
    every = (date(year, month, d) for d in range(1, days + 1))
    return [d for d in every if _is_business_day(d, closed)]


def _clamped(year: int, month: int, day: int) -> date:
    return date(year, month, min(day, calendar.monthrange(year, month)[1]))


# --- an independent oracle ----------------------------------------------------------

Closed = frozenset[tuple[int, int]]


@dataclass(frozen=True)
class Spec:
    """What a rule means, independently of how it is spelt."""

    kind: str  # "nth" | "last_bd" | "day" | "weekday"
    n: int = 0  # N of 第N営業日, day of month (99 = 末日), weekday (0 = Monday)
    move: str | None = None  # None | "next" | "prev"

    def fires(self, period: date, closed: Closed) -> date | None:
        """The date the rule fires for the month / week starting at ``period``."""
        year, month = period.year, period.month
        if self.kind == "nth":
            days = _business_days(year, month, closed)
            return days[self.n - 1] if len(days) >= self.n else None
        if self.kind == "last_bd":
            days = _business_days(year, month, closed)
            return days[-1] if days else None
        if self.kind == "day":
            return _moved(_clamped(year, month, self.n), self.move, closed)
        if self.kind == "weekday":
            return _moved(period + timedelta(days=self.n), self.move, closed)
        raise AssertionError(self.kind)

    def periods(self, after: date) -> Iterator[date]:
        """Month starts (monthly) or Mondays (weekly), from a little before ``after``."""
        if self.kind == "weekday":
            monday = after - timedelta(days=after.weekday() + 7)
            while True:
                yield monday
                monday += timedelta(days=7)
        year, month = (after.year, after.month - 1) if after.month > 1 else (after.year - 1, 12)
        while True:
            yield date(year, month, 1)
            year, month = (year, month + 1) if month < 12 else (year + 1, 1)


def nth(n: int) -> Spec:
    return Spec("nth", n)


LAST_BD = Spec("last_bd")


def day(n: int, move: str | None = None) -> Spec:
    return Spec("day", n, move)


MONTH_END = 99


def weekday(name: str, move: str | None = None) -> Spec:
    return Spec("weekday", "月火水木金土日".index(name), move)


def _oracle(spec: Spec, after: date, count: int, setting: str | None) -> list[str]:
    closed = _closed_days(setting)
    found: list[date] = []
    for period in spec.periods(after):
        if period < FIRST_DAY:  # the period before 2025-01 never fires after 2025-01-01
            continue
        fired = spec.fires(period, closed)
        if fired is None or fired <= after:
            continue
        if found:
            assert fired >= found[-1], "the oracle assumes fire dates never go backwards"
            if fired == found[-1]:
                continue  # two periods moved onto one day: it fires once
        found.append(fired)
        if len(found) == count:
            return [d.isoformat() for d in found]
    raise AssertionError("unreachable")


# --- the cases ----------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    rule: str
    spec: Spec
    after: str
    count: int
    closed: str | None = None  # None: KEIRI_AGENT_CLOSED_DAYS not set (the default)
    expected: tuple[str, ...] = ()

    @property
    def id(self) -> str:
        closed = "" if self.closed is None else f" closed={self.closed or 'none'}"
        return f"{self.rule} after {self.after} x{self.count}{closed}"


def hand(rule: str, spec: Spec, after: str, closed: str | None, *dates: str) -> Case:
    return Case(rule, spec, after, len(dates), closed, dates)


FIRST_BD, FIFTH_BD, TENTH_BD = nth(1), nth(5), nth(10)
PAYDAY = day(25, "next")
LAST_31_PREV = day(31, "prev")
MON_NEXT, MON_PREV = weekday("月", "next"), weekday("月", "prev")

HAND_CASES = [
    # Jan 2026: 1 元日, 2 closed, 3-4 weekend → 5 (Mon). Feb 1 and Mar 1 are Sundays.
    hand("毎月第1営業日", FIRST_BD, "2025-12-31", None, "2026-01-05", "2026-02-02", "2026-03-02"),
    # With no closed days, Jan 2 2026 (Fri) is a business day.
    hand("毎月第1営業日", FIRST_BD, "2025-12-31", NO_CLOSED, "2026-01-02"),
    # Jan 2028: 1-2 weekend, 3 (Mon) closed → 4; without closed days → 3.
    hand("毎月第1営業日", FIRST_BD, "2027-12-31", None, "2028-01-04"),
    hand("毎月第1営業日", FIRST_BD, "2027-12-31", NO_CLOSED, "2028-01-03"),
    # May 2027: 1-2 weekend, 3-5 GW (Mon-Wed) → 6 (Thu).
    hand("毎月第1営業日", FIRST_BD, "2027-04-30", None, "2027-05-06"),
    # May 2026: 1 Fri, 4-6 GW, 7, 8, 11, 12 → 5th = 12; 13 14 15 18 19 → 10th = 19.
    hand("毎月第5営業日", FIFTH_BD, "2026-04-30", None, "2026-05-12"),
    hand("毎月第10営業日", TENTH_BD, "2026-04-30", None, "2026-05-19"),
    # Jan 2028: 4 5 6 7, 10 成人の日, 11 → 5th; 12 13 14 17 18 → 10th.
    hand("毎月第5営業日", FIFTH_BD, "2027-12-31", None, "2028-01-11"),
    # Jan 2027: 4-8 (5th = 8), 11 成人の日, 12 13 14 15 18 → 10th = 18.
    hand("毎月第10営業日", TENTH_BD, "2026-12-31", None, "2027-01-18"),
    # Nov 2026 starts on Sunday: 2, 3 文化の日, 4 5 6 9 → 5th = 9.
    hand("毎月第5営業日", FIFTH_BD, "2026-10-31", None, "2026-11-09"),
    # Aug 2026 starts on Saturday; お盆 closed: 3-7, 10, 11 山の日, 12, 13-15 closed, 17 18 19.
    hand("毎月第10営業日", TENTH_BD, "2026-07-31", OBON, "2026-08-19"),
    # Only July (22) and October (22) 2025 reach 22 business days in Jul-Oct 2025.
    hand("毎月第22営業日", nth(22), "2025-06-30", None, "2025-07-31", "2025-10-31"),
    # 23 business days only in a Mon/Tue/Wed-starting 31-day month with no holiday:
    # Dec 2025 and Dec 2026 once 年末年始 is not closed.
    hand("毎月第23営業日", nth(23), "2025-01-01", NO_CLOSED, "2025-12-31", "2026-12-31"),
    # Jan 31 and Feb 28 2026 are Saturdays.
    hand("毎月末営業日", LAST_BD, "2026-01-01", None, "2026-01-30", "2026-02-27", "2026-03-31"),
    # Dec 2026: 29-31 closed → 28 (Mon); Jan 31 2027 is Sunday → 29.
    hand("毎月末営業日", LAST_BD, "2026-11-30", None, "2026-12-28", "2027-01-29"),
    # Dec 2025: 29-31 closed, 27-28 weekend → 26 (Fri).
    hand("毎月末営業日", LAST_BD, "2025-11-30", None, "2025-12-26"),
    hand("毎月末営業日", LAST_BD, "2026-11-30", NO_CLOSED, "2026-12-31"),
    hand("毎月末営業日", LAST_BD, "2026-11-30", OBON, "2026-12-31"),
    # 2028 is a leap year: Feb 29 is a Tuesday.
    hand("毎月末営業日", LAST_BD, "2028-01-31", None, "2028-02-29"),
    # A full year of 末営業日 for 2027.
    hand(
        "毎月末営業日",
        LAST_BD,
        "2026-12-31",
        None,
        "2027-01-29",  # 31 Sun
        "2027-02-26",  # 28 Sun
        "2027-03-31",
        "2027-04-30",
        "2027-05-31",
        "2027-06-30",
        "2027-07-30",  # 31 Sat
        "2027-08-31",
        "2027-09-30",
        "2027-10-29",  # 31 Sun
        "2027-11-30",
        "2027-12-28",  # 29-31 closed
    ),
    # 31 clamped to 30-day months; May 31 2026 is Sunday.
    hand(
        "毎月31日（休日なら前営業日）",
        LAST_31_PREV,
        "2026-03-31",
        None,
        "2026-04-30",
        "2026-05-29",
        "2026-06-30",
        "2026-07-31",
        "2026-08-31",
        "2026-09-30",
    ),
    # Feb 28 2027 is Sunday → 26; Feb 29 2028 is a Tuesday.
    hand("毎月31日（休日なら前営業日）", LAST_31_PREV, "2027-01-31", None, "2027-02-26"),
    hand("毎月31日（休日なら前営業日）", LAST_31_PREV, "2028-01-31", None, "2028-02-29"),
    # Dec 31 2025 moves back to 26, before --after 12-27: the next firing is Jan 30 2026.
    hand("毎月31日（休日なら前営業日）", LAST_31_PREV, "2025-12-27", None, "2026-01-30"),
    # May 31 2026 is Sunday → Jun 1, past the month end.
    hand(
        "毎月31日（休日なら翌営業日）",
        day(31, "next"),
        "2026-05-01",
        None,
        "2026-06-01",
        "2026-06-30",
    ),
    # 給与日 2026: 25th on Sun (Jan, Oct) or Sat (Apr, Jul) moves to Monday.
    hand(
        "毎月25日（休日なら翌営業日）",
        PAYDAY,
        "2025-12-31",
        None,
        "2026-01-26",
        "2026-02-25",
        "2026-03-25",
        "2026-04-27",
        "2026-05-25",
        "2026-06-25",
        "2026-07-27",
        "2026-08-25",
        "2026-09-25",
        "2026-10-26",
        "2026-11-25",
        "2026-12-25",
    ),
    # Jan 25 2026 (Sun) is the --after day; it fires on 26, strictly after.
    hand("毎月25日（休日なら翌営業日）", PAYDAY, "2026-01-25", None, "2026-01-26"),
    # Apr 25 2026 is a Saturday.
    hand("毎月25日（休日なら前営業日）", day(25, "prev"), "2026-03-31", None, "2026-04-24"),
    # Aug 13 2026 (Thu) under お盆: 13, 14 closed, 15-16 weekend → 17.
    hand("毎月13日（休日なら翌営業日）", day(13, "next"), "2026-07-31", OBON, "2026-08-17"),
    hand("毎月13日（休日なら翌営業日）", day(13, "next"), "2026-07-31", None, "2026-08-13"),
    # As is, clamped to the month end.
    hand("毎月31日", day(31), "2026-01-31", None, "2026-02-28", "2026-03-31", "2026-04-30"),
    hand("毎月29日", day(29), "2028-01-31", None, "2028-02-29", "2028-03-29"),
    hand("毎月29日", day(29), "2027-01-31", None, "2027-02-28"),
    hand("毎月末日", day(MONTH_END), "2028-01-31", None, "2028-02-29", "2028-03-31", "2028-04-30"),
    hand(
        "毎月末日（休日なら前営業日）",
        day(MONTH_END, "prev"),
        "2026-01-01",
        None,
        "2026-01-30",
        "2026-02-27",
        "2026-03-31",
    ),
    hand("毎月末日（休日なら前営業日）", day(MONTH_END, "prev"), "2026-11-30", None, "2026-12-28"),
    # Weekly as is: holidays included (4/29 昭和の日, 5/6 振替休日).
    hand("毎週水曜", weekday("水"), "2026-04-28", None, "2026-04-29", "2026-05-06"),
    hand("毎週日曜日", weekday("日"), "2026-01-01", None, "2026-01-04", "2026-01-11"),
    # 海の日 Jul 20 2026 → Tue 21.
    hand(
        "毎週月曜（祝日なら翌営業日）",
        MON_NEXT,
        "2026-07-01",
        None,
        "2026-07-06",
        "2026-07-13",
        "2026-07-21",
        "2026-07-27",
        "2026-08-03",
    ),
    # GW 2026: Mon May 4, Tue 5, Wed 6 (振替休日) → Thu 7.
    hand(
        "毎週月曜（祝日なら翌営業日）",
        MON_NEXT,
        "2026-04-26",
        None,
        "2026-04-27",
        "2026-05-07",
        "2026-05-11",
    ),
    # Silver week 2026: 21 敬老の日, 22 国民の休日, 23 秋分の日 → 24; back → Fri 18.
    hand(
        "毎週月曜（祝日なら翌営業日）",
        MON_NEXT,
        "2026-09-13",
        None,
        "2026-09-14",
        "2026-09-24",
        "2026-09-28",
    ),
    hand(
        "毎週月曜（祝日なら前営業日）",
        MON_PREV,
        "2026-09-13",
        None,
        "2026-09-14",
        "2026-09-18",
        "2026-09-28",
    ),
    # 成人の日 Jan 12 2026 → back to Fri 9.
    hand("毎週月曜（祝日なら前営業日）", MON_PREV, "2026-01-01", None, "2026-01-05", "2026-01-09"),
    # Year end: Dec 28 2026 is a business day, Jan 4 2027 too, Jan 11 成人の日 → 12.
    hand(
        "毎週月曜（祝日なら翌営業日）",
        MON_NEXT,
        "2026-12-20",
        None,
        "2026-12-21",
        "2026-12-28",
        "2027-01-04",
        "2027-01-12",
    ),
    # Fri Jan 1 2027 元日 → 2-3 weekend → Mon 4.
    hand(
        "毎週金曜（祝日なら翌営業日）",
        weekday("金", "next"),
        "2026-12-20",
        None,
        "2026-12-25",
        "2027-01-04",
        "2027-01-08",
    ),
    # Wed Dec 30 2026 closed → 29 closed → Mon 28.
    hand(
        "毎週水曜（祝日なら前営業日）",
        weekday("水", "prev"),
        "2026-12-20",
        None,
        "2026-12-23",
        "2026-12-28",
        "2027-01-06",
    ),
    # A closed Monday that is not a holiday still moves; 12-29 is not closed here.
    hand("毎週月曜（祝日なら翌営業日）", MON_NEXT, "2026-12-21", "12-28", "2026-12-29"),
    # Year-end crossing for monthly rules.
    hand("毎月第1営業日", FIRST_BD, "2026-12-20", None, "2027-01-04", "2027-02-01"),
]


def oracle(rule: str, spec: Spec, after: str, count: int, closed: str | None = None) -> Case:
    return Case(rule, spec, after, count, closed)


ORACLE_CASES = [
    # Full years, count 12.
    oracle("毎月第1営業日", FIRST_BD, "2025-12-31", 12),
    oracle("毎月第5営業日", FIFTH_BD, "2026-12-31", 12),
    oracle("毎月第10営業日", TENTH_BD, "2027-12-31", 12),
    oracle("毎月末営業日", LAST_BD, "2025-12-31", 12),
    oracle("毎月末営業日", LAST_BD, "2027-12-31", 12),
    oracle("毎月25日（休日なら翌営業日）", PAYDAY, "2026-12-31", 12),
    oracle("毎月25日（休日なら翌営業日）", PAYDAY, "2027-12-31", 12),
    oracle("毎月31日（休日なら前営業日）", LAST_31_PREV, "2027-12-31", 12),
    oracle("毎月末日（休日なら前営業日）", day(MONTH_END, "prev"), "2027-12-31", 12),
    oracle("毎月10日（休日なら前営業日）", day(10, "prev"), "2025-12-31", 12),
    oracle("毎月30日", day(30), "2027-12-31", 12),
    oracle("毎月末日", day(MONTH_END), "2026-12-31", 12),
    # Count 1 and 3 around GW, ハッピーマンデー and year ends.
    oracle("毎月第1営業日", FIRST_BD, "2028-04-30", 1),
    oracle("毎月第5営業日", FIFTH_BD, "2025-04-30", 3),
    oracle("毎月第10営業日", TENTH_BD, "2025-12-31", 3),
    oracle("毎月第23営業日", nth(23), "2025-01-01", 1, NO_CLOSED),
    oracle("毎週月曜（祝日なら翌営業日）", MON_NEXT, "2025-04-27", 3),
    oracle("毎週月曜（祝日なら翌営業日）", MON_NEXT, "2027-07-10", 12),
    oracle("毎週月曜（祝日なら翌営業日）", MON_NEXT, "2028-09-01", 12),
    oracle("毎週月曜（祝日なら前営業日）", MON_PREV, "2027-12-20", 3),
    oracle("毎週木曜（祝日なら翌営業日）", weekday("木", "next"), "2027-04-25", 3),
    oracle("毎週火曜（祝日なら前営業日）", weekday("火", "prev"), "2025-12-20", 4),
    oracle("毎週金曜", weekday("金"), "2026-04-30", 3),
    oracle("毎週土曜日", weekday("土"), "2028-02-20", 3),
    # Year-end crossing with the closed days.
    oracle("毎月第1営業日", FIRST_BD, "2026-12-20", 3),
    oracle("毎月末営業日", LAST_BD, "2026-12-20", 3),
    oracle("毎月25日（休日なら翌営業日）", PAYDAY, "2026-12-20", 3),
    oracle("毎月31日（休日なら翌営業日）", day(31, "next"), "2026-12-20", 3),
    oracle("毎週木曜（祝日なら翌営業日）", weekday("木", "next"), "2026-12-20", 3),
    oracle("毎週金曜（祝日なら前営業日）", weekday("金", "prev"), "2027-12-20", 3),
    # The closed days changed.
    oracle("毎月第1営業日", FIRST_BD, "2027-12-20", 3, NO_CLOSED),
    oracle("毎月末営業日", LAST_BD, "2025-12-31", 12, NO_CLOSED),
    oracle("毎月第5営業日", FIFTH_BD, "2025-07-31", 1, OBON),
    oracle("毎月第10営業日", TENTH_BD, "2027-07-31", 1, OBON),
    oracle("毎週金曜（祝日なら翌営業日）", weekday("金", "next"), "2027-08-01", 3, OBON),
    oracle("毎月末営業日", LAST_BD, "2027-06-30", 12, OBON),
    # Other spellings of the same rules.
    oracle("毎月1営業日目", FIRST_BD, "2025-12-31", 3),
    oracle("毎月10営業日目", TENTH_BD, "2026-04-30", 3),
    oracle("毎月最終営業日", LAST_BD, "2026-11-30", 3),
    oracle("毎月25日(休日なら翌営業日)", PAYDAY, "2026-03-31", 6),
    oracle("毎月31日(休日なら前営業日)", LAST_31_PREV, "2027-01-01", 3),
    oracle("毎月末日(休日なら前営業日)", day(MONTH_END, "prev"), "2025-04-01", 3),
    oracle("毎週月曜(祝日なら翌営業日)", MON_NEXT, "2026-04-26", 3),
    oracle("毎週月曜日", weekday("月"), "2026-04-26", 3),
]


def _run(case: Case, monkeypatch: pytest.MonkeyPatch, *extra: str):
    if case.closed is not None:
        monkeypatch.setenv("KEIRI_AGENT_CLOSED_DAYS", case.closed)
    args = ["schedule", "next", case.rule, "--after", case.after, "--count", str(case.count)]
    return cli.invoke(app, [*args, *extra])


def _next_dates(case: Case, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    result = _run(case, monkeypatch, "--json")
    assert result.exit_code == 0, (result.stdout, result.stderr)
    return json.loads(result.stdout)


def _ids(cases: list[Case]) -> list[str]:
    return [case.id for case in cases]


# --- sanity: the test's own calendar (no product code) ------------------------------


def _every_day() -> Iterator[date]:
    day_ = FIRST_DAY
    while day_ <= LAST_DAY:
        yield day_
        day_ += timedelta(days=1)


def test_sanity_typed_holidays_match_jpholiday() -> None:
    """Cross-check of the typing, not the oracle: no disagreement found for 2025–2028."""
    import jpholiday

    differences = [
        (d.isoformat(), HOLIDAYS.get(d), jpholiday.is_holiday_name(d))
        for d in _every_day()
        if jpholiday.is_holiday(d) != (d in HOLIDAYS)
    ]
    assert differences == []


def test_sanity_typed_holidays_are_where_the_rules_put_them() -> None:
    """ハッピーマンデー on the right Monday, 振替休日 after a Sunday holiday."""
    week = {"成人の日": (1, 2), "海の日": (7, 3), "敬老の日": (9, 3), "スポーツの日": (10, 2)}
    for day_, name in HOLIDAYS.items():
        if name in week:
            month, nth_monday = week[name]
            assert (day_.month, day_.weekday(), (day_.day - 1) // 7 + 1) == (month, 0, nth_monday)
        if name == "振替休日":
            before = day_ - timedelta(days=1)
            while before in HOLIDAYS and before.weekday() != 6:
                before -= timedelta(days=1)
            assert before in HOLIDAYS and before.weekday() == 6, day_
        if name == "国民の休日":
            assert day_ - timedelta(days=1) in HOLIDAYS and day_ + timedelta(days=1) in HOLIDAYS
    assert len(HOLIDAYS) == 19 + 18 + 17 + 16


@pytest.mark.parametrize("case", HAND_CASES, ids=_ids(HAND_CASES))
def test_sanity_oracle_agrees_with_hand_typed_dates(case: Case) -> None:
    assert _oracle(case.spec, date.fromisoformat(case.after), case.count, case.closed) == list(
        case.expected
    )


def test_sanity_enough_cases() -> None:
    assert len(HAND_CASES) >= 15
    assert len(HAND_CASES) + len(ORACLE_CASES) >= 40


# --- the command --------------------------------------------------------------------


@pytest.mark.parametrize("case", HAND_CASES, ids=_ids(HAND_CASES))
def test_next_dates_typed_by_hand(case: Case, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _next_dates(case, monkeypatch) == list(case.expected)


@pytest.mark.parametrize("case", ORACLE_CASES, ids=_ids(ORACLE_CASES))
def test_next_dates_match_the_calendar(case: Case, monkeypatch: pytest.MonkeyPatch) -> None:
    expected = _oracle(case.spec, date.fromisoformat(case.after), case.count, case.closed)
    assert _next_dates(case, monkeypatch) == expected


def test_two_mondays_moved_onto_the_same_day_fire_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Mon Dec 29 2025 (closed; 30, 31 closed, 1/1 元日, 1/2 closed, weekend) → Mon Jan 5,
    which is itself a Monday: Jan 5 is listed once. Jan 12 成人の日 → 13."""
    case = Case("毎週月曜（祝日なら翌営業日）", MON_NEXT, "2025-12-22", 3)
    assert _next_dates(case, monkeypatch) == ["2026-01-05", "2026-01-13", "2026-01-19"]


def test_the_default_closed_days_are_year_end_holidays(monkeypatch: pytest.MonkeyPatch) -> None:
    """Setting the default explicitly changes nothing."""
    case = Case("毎月末営業日", LAST_BD, "2025-11-30", 3, DEFAULT_CLOSED)
    assert _next_dates(case, monkeypatch) == ["2025-12-26", "2026-01-30", "2026-02-27"]


def test_without_json_the_dates_are_printed_for_people(monkeypatch: pytest.MonkeyPatch) -> None:
    result = _run(HAND_CASES[0], monkeypatch)
    assert result.exit_code == 0, result.output
    assert result.stdout.strip()
    assert not result.stdout.lstrip().startswith("[")


# --- errors -------------------------------------------------------------------------

INVALID_RULES = [
    "毎月第0営業日",
    "毎月第24営業日",
    "毎月24営業日目",
    "毎年4月1日",
    "毎月0日",
    "毎月32日",
    "毎週祝曜",
    "毎月25日（休日なら休み）",
    "every month",
    "",
]
JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")


@pytest.mark.parametrize("rule", INVALID_RULES)
def test_an_unsupported_rule_is_refused(rule: str) -> None:
    result = cli.invoke(app, ["schedule", "next", rule, "--after", "2026-01-01", "--count", "3"])
    assert result.exit_code == 1, result.output
    assert "[SCHEDULE_RULE_INVALID]" in result.stderr
    assert "Traceback" not in result.output


@pytest.mark.parametrize("rule", ["毎月第0営業日", "毎年4月1日"])
def test_an_unsupported_rule_is_refused_in_json(rule: str) -> None:
    args = ["schedule", "next", rule, "--after", "2026-01-01", "--count", "3", "--json"]
    result = cli.invoke(app, args)
    assert result.exit_code == 1, result.output
    reply = json.loads(result.stdout)
    assert reply["ok"] is False
    assert reply["error"]["code"] == "SCHEDULE_RULE_INVALID"


@pytest.mark.parametrize(
    ("after", "count"),
    [
        ("2026-13-01", "3"),
        ("2026-02-30", "3"),
        ("tomorrow", "3"),
        ("2026-01-01", "0"),
        ("2026-01-01", "-1"),
    ],
)
def test_a_bad_after_date_or_count_is_refused(after: str, count: str) -> None:
    args = ["schedule", "next", "毎月第1営業日", "--after", after, "--count", count, "--json"]
    result = cli.invoke(app, args)
    assert result.exit_code in (1, 2), result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output
    assert JAPANESE.search(result.output), result.output
