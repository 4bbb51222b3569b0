"""Schedule rules written as a back office says them, and the dates they give.

    rule = parse_rule("毎月第5営業日")
    next_dates(rule, after=date(2026, 11, 30), count=3, calendar=BusinessCalendar())

The forms (full- or half-width, digits or kanji numerals 一〜三十一):

- ``毎月第N営業日`` / ``毎月N営業日目`` — the N-th business day of the month (1–23; a
  month with fewer business days is skipped);
- ``毎月末営業日`` / ``毎月最終営業日`` — the last business day of the month;
- ``毎月N日`` / ``毎月末日`` — that calendar day (a month without day N gives its last
  day), optionally ``（休日なら翌営業日）`` or ``（休日なら前営業日）``;
- ``毎週X曜`` / ``毎週X曜日`` — every such weekday, optionally ``（祝日なら翌営業日）`` /
  ``（祝日なら前営業日）`` (休日 and 祝日 mean the same: any day that is not a business day).

Business days come from ``BusinessCalendar``. Anything else is ``SCHEDULE_RULE_INVALID``
naming the forms, never a guess.
"""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
from dataclasses import dataclass
from typing import Literal

from keiri_agent.accounting.business_calendar import WEEKDAY_NAMES, BusinessCalendar, month_end
from keiri_agent.errors import UserInputError

Shift = Literal["next", "previous"] | None
MAX_NTH = 23
MAX_YEARS = 50
"""How far ahead dates are searched (a rule that fires less often is refused)."""
RULE_FORMS = (
    "毎月第5営業日",
    "毎月末営業日",
    "毎月25日（休日なら翌営業日）",
    "毎月末日（休日なら前営業日）",
    "毎週月曜（祝日なら翌営業日）",
)

_SHIFT = r"(?:\((?:休日|祝日|休業日)(?:の場合は?|なら)(?P<shift>翌|前)営業日(?:にずらす)?\))?"
_NTH = re.compile(r"毎月(?:第(?P<a>\d+)営業日目?|(?P<b>\d+)営業日目)")
_LAST_BUSINESS = re.compile(r"毎月(?:末|最終)営業日")
_DAY = re.compile(rf"毎月(?:(?P<day>\d+)日|(?P<end>末日?)){_SHIFT}")
_WEEKLY = re.compile(rf"毎週(?P<weekday>[{WEEKDAY_NAMES}])曜日?{_SHIFT}")
_KANJI_DIGITS = {"一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_KANJI_NUMBER = re.compile(
    r"(?P<tens>[二三])?十(?P<ones>[一二三四五六七八九])?|(?P<single>[一二三四五六七八九])"
)


@dataclass(frozen=True)
class ScheduleRule:
    """A parsed rule: ``kind`` nth_business_day | last_business_day | day_of_month |
    weekday, with its number (N, day of month — 0 for the month's last — or weekday
    index) and the shift for a day that is not a business day."""

    text: str
    kind: Literal["nth_business_day", "last_business_day", "day_of_month", "weekday"]
    number: int = 0
    shift: Shift = None


def parse_rule(text: str) -> ScheduleRule:
    """The rule ``text`` states (``UserInputError`` SCHEDULE_RULE_INVALID otherwise)."""
    plain = _arabic(re.sub(r"\s+", "", unicodedata.normalize("NFKC", text or "")))
    if match := _NTH.fullmatch(plain):
        number = int(match["a"] or match["b"])
        if not 1 <= number <= MAX_NTH:
            raise _invalid(text, f"第{number}営業日はありません（1〜{MAX_NTH} で指定します）")
        return ScheduleRule(text, "nth_business_day", number)
    if _LAST_BUSINESS.fullmatch(plain):
        return ScheduleRule(text, "last_business_day")
    if match := _DAY.fullmatch(plain):
        day = 0 if match["end"] else int(match["day"])
        if not 0 <= day <= 31 or (day == 0 and not match["end"]):
            raise _invalid(text, f"{day}日はありません（1〜31 日か「末日」で指定します）")
        return ScheduleRule(text, "day_of_month", day, _shift(match["shift"]))
    if match := _WEEKLY.fullmatch(plain):
        weekday = WEEKDAY_NAMES.index(match["weekday"])
        return ScheduleRule(text, "weekday", weekday, _shift(match["shift"]))
    raise _invalid(text, "この書き方の予定には対応していません")


def next_dates(
    rule: ScheduleRule, *, after: dt.date, count: int, calendar: BusinessCalendar
) -> list[dt.date]:
    """The first ``count`` dates strictly after ``after`` on which ``rule`` fires."""
    dates: list[dt.date] = []
    for candidate in _candidates(rule, after, calendar):
        if candidate > after and (not dates or candidate > dates[-1]):
            dates.append(candidate)
            if len(dates) == count:
                break
    return dates


def _candidates(rule: ScheduleRule, after: dt.date, calendar: BusinessCalendar) -> list[dt.date]:
    """The rule's dates from the week or month of ``after`` on, up to ``MAX_YEARS`` (a
    shift may move a date back before ``after``: ``next_dates`` drops those)."""
    if rule.kind == "weekday":
        start = after - dt.timedelta(days=(after.weekday() - rule.number) % 7)
        return [
            _shifted(start + dt.timedelta(weeks=week), rule.shift, calendar)
            for week in range(MAX_YEARS * 53)
        ]
    found: list[dt.date] = []
    for offset in range(MAX_YEARS * 12):
        year, month = divmod(after.month - 1 + offset, 12)
        year, month = after.year + year, month + 1
        day = _monthly(rule, year, month, calendar)
        if day is not None:
            found.append(day)
    return found


def _monthly(
    rule: ScheduleRule, year: int, month: int, calendar: BusinessCalendar
) -> dt.date | None:
    if rule.kind == "nth_business_day":
        days = calendar.business_days_of_month(year, month)
        return days[rule.number - 1] if len(days) >= rule.number else None
    last = month_end(year, month)
    if rule.kind == "last_business_day":
        return calendar.previous_business_day(last)
    day = dt.date(year, month, min(rule.number, last.day)) if rule.number else last
    return _shifted(day, rule.shift, calendar)


def _shifted(day: dt.date, shift: Shift, calendar: BusinessCalendar) -> dt.date:
    if shift == "next":
        return calendar.next_business_day(day)
    if shift == "previous":
        return calendar.previous_business_day(day)
    return day


def _shift(mark: str | None) -> Shift:
    if mark == "翌":
        return "next"
    return "previous" if mark == "前" else None


def _arabic(text: str) -> str:
    """Kanji numerals 一〜三十九 written as digits (第五 → 第5, 二十五日 → 25日)."""

    def number(match: re.Match[str]) -> str:
        if match["single"]:
            return str(_KANJI_DIGITS[match["single"]])
        tens = _KANJI_DIGITS.get(match["tens"] or "", 1)
        return str(10 * tens + _KANJI_DIGITS.get(match["ones"] or "", 0))

    return _KANJI_NUMBER.sub(number, text)


def _invalid(text: str, why: str) -> UserInputError:
    return UserInputError(
        f"予定の書き方「{text}」を読み取れません: {why}",
        hint="次のような書き方にしてください: " + "、".join(RULE_FORMS),
        code="SCHEDULE_RULE_INVALID",
        details={"rule": text, "forms": list(RULE_FORMS)},
    )
