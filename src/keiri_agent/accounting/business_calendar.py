"""The business-day calendar of a Japanese company: weekdays that are neither national
holidays nor the company's own closed days. One calendar for the schedules, the
``date.business_day`` block and the 総合振込 file's 振込指定日.

National holidays (国民の祝日, 振替休日, 国民の休日) come from ``jpholiday``, a maintained
package following the 内閣府 list; the closed days are the setting ``closed_days``
(``MM-DD``, default 年末年始: 12-29 … 01-03) and, for a block, one-off ``closed_dates``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass

import jpholiday

WEEKDAY_NAMES = "月火水木金土日"
"""Japanese weekday names, Monday first (``date.weekday()`` indexes them)."""
_SUBSTITUTE = "振替休日"
MAX_STEPS = 400
"""Days searched for a business day before giving up (no calendar closes that long)."""


@dataclass(frozen=True)
class BusinessCalendar:
    """Which days are business days (see the module docstring)."""

    closed_days: frozenset[tuple[int, int]] = frozenset()
    """(month, day) pairs the company is closed every year."""
    closed_dates: frozenset[dt.date] = frozenset()
    """Dates the company is closed once (創立記念日 of one year, 臨時休業)."""

    @classmethod
    def from_setting(cls, closed_days: Iterable[str]) -> BusinessCalendar:
        """From ``MM-DD`` texts (validated by the settings; ``1-3`` is 01-03)."""
        pairs = set()
        for text in closed_days:
            month, _, day = text.partition("-")
            pairs.add((int(month), int(day)))
        return cls(frozenset(pairs))

    def is_business_day(self, day: dt.date) -> bool:
        return self.why_closed(day) is None

    def why_closed(self, day: dt.date) -> str | None:
        """Why ``day`` is not a business day (土曜, 祝日の名前, 振替休日（憲法記念日）,
        会社の休業日), or ``None``."""
        if day.weekday() >= 5:
            return f"{WEEKDAY_NAMES[day.weekday()]}曜"
        holiday = jpholiday.is_holiday_name(day)
        if holiday:
            name = str(holiday)
            if name.endswith(_SUBSTITUTE):  # jpholiday: "憲法記念日 振替休日"
                observed = name.removesuffix(_SUBSTITUTE).strip()
                return f"振替休日（{observed}）" if observed else _SUBSTITUTE
            return name
        if (day.month, day.day) in self.closed_days or day in self.closed_dates:
            return "会社の休業日"
        return None

    def next_business_day(self, day: dt.date, *, include: bool = True) -> dt.date:
        """``day`` itself when it is one (``include``), else the next business day."""
        current = day if include else day + dt.timedelta(days=1)
        for _ in range(MAX_STEPS):
            if self.is_business_day(current):
                return current
            current += dt.timedelta(days=1)
        raise ValueError(f"no business day within {MAX_STEPS} days after {day}")

    def previous_business_day(self, day: dt.date, *, include: bool = True) -> dt.date:
        """``day`` itself when it is one (``include``), else the previous business day."""
        current = day if include else day - dt.timedelta(days=1)
        for _ in range(MAX_STEPS):
            if self.is_business_day(current):
                return current
            current -= dt.timedelta(days=1)
        raise ValueError(f"no business day within {MAX_STEPS} days before {day}")

    def business_days_of_month(self, year: int, month: int) -> list[dt.date]:
        """Every business day of the month, in order."""
        day = dt.date(year, month, 1)
        days: list[dt.date] = []
        while day.month == month:
            if self.is_business_day(day):
                days.append(day)
            day += dt.timedelta(days=1)
        return days


def month_end(year: int, month: int) -> dt.date:
    """The last calendar day of the month."""
    following = dt.date(year + month // 12, month % 12 + 1, 1)
    return following - dt.timedelta(days=1)
