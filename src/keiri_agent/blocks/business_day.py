"""``date.business_day``: move dates onto business days (営業日) for 支払予定表 and schedules.

Takes either one ``date`` or a table (``records`` + ``column``) and applies one
``operation`` to each date:

* ``next`` — the date itself when it is a business day, else the following one (翌営業日);
* ``previous`` — likewise backwards (前営業日);
* ``add`` with ``days`` — the ``days``-th business day after the date (N営業日後), or
  before it when ``days`` is negative (N営業日前). The date itself is never counted:
  Friday + 1 is Monday, and from a holiday + 1 is the first business day after it;
* ``month_end`` / ``month_start`` — the last / first business day of the date's month.

A business day is a weekday that is neither a national holiday (国民の祝日, 振替休日,
国民の休日, from the maintained ``jpholiday`` package that follows the 内閣府 list) nor
one of the company's closed days: ``closed_days`` every year (``MM-DD``; default the
setting ``plans.closed_days``, 年末年始) and ``closed_dates`` once (``YYYY-MM-DD``:
創立記念日, 臨時休業) — the schedules' calendar
(:class:`keiri_agent.accounting.business_calendar.BusinessCalendar`).

Each result comes with a Japanese reason saying why the date moved (「日曜のため翌営業日」,
「3営業日後（土曜・日曜を除く）」), empty when it did not. Dates are written
``YYYY-MM-DD``; blank cells stay null. A table keeps its columns and order and gains
``output_column`` (default ``<column>_営業日``) and ``<output_column>_理由``.
"""

from __future__ import annotations

import calendar as gregorian
import datetime as dt
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from keiri_agent.accounting.business_calendar import BusinessCalendar
from keiri_agent.blocks.base import BlockContext, ProcessingBlock
from keiri_agent.blocks.records import check_columns, invalid, is_null, kind_label, records_input
from keiri_agent.files.cells import nfkc, parse_date

OPERATIONS = ("next", "previous", "add", "month_end", "month_start")
MAX_DAYS = 1000
"""The largest ``days`` of ``add`` (about four years of business days)."""
REASON_SUFFIX = "_理由"
DATE_FORMS = "2026-04-30 / 2026/4/30 / 2026年4月30日 / 令和8年4月30日"
_MONTH_DAY_RE = re.compile(r"(\d{1,2})[-/](\d{1,2})")
_SUBSTITUTE = "振替休日"
WEEKDAY_NAMES = "月火水木金土日"
"""Japanese weekday names, Monday first (``date.weekday()`` indexes them)."""
MAX_STEPS = 400
"""Days searched for a business day before giving up (no calendar closes that long)."""


@dataclass(frozen=True)
class Options:
    """The checked inputs besides the dates themselves."""

    operation: str
    days: int | None
    calendar: BusinessCalendar


def adjust(
    calendar: BusinessCalendar, day: dt.date, operation: str, days: int | None
) -> tuple[dt.date, str]:
    """``day`` moved by ``operation`` and why (empty when it did not move).

    Raises:
        ValueError: when no business day is found (a calendar closed for a year, a date
            at the end of the calendar).
    """
    if operation == "next":
        moved = calendar.next_business_day(day)
        return moved, "" if moved == day else f"{calendar.why_closed(day)}のため翌営業日"
    if operation == "previous":
        moved = calendar.previous_business_day(day)
        return moved, "" if moved == day else f"{calendar.why_closed(day)}のため前営業日"
    if operation == "add":
        return _add(calendar, day, days or 0)
    if operation == "month_end":
        last = day.replace(day=gregorian.monthrange(day.year, day.month)[1])
        moved = calendar.previous_business_day(last)
        if moved.month != day.month:
            raise ValueError(f"{day.year}年{day.month}月には営業日がありません")
        why = calendar.why_closed(last)
        reason = (
            "月末" if why is None else f"月末（{last.month}月{last.day}日）が{why}のため前営業日"
        )
        return moved, "" if moved == day else reason
    if operation == "month_start":
        first = day.replace(day=1)
        moved = calendar.next_business_day(first)
        if moved.month != day.month:
            raise ValueError(f"{day.year}年{day.month}月には営業日がありません")
        why = calendar.why_closed(first)
        reason = "月初" if why is None else f"月初（{first.month}月1日）が{why}のため翌営業日"
        return moved, "" if moved == day else reason
    raise ValueError(f"unknown operation {operation!r}")


def _add(calendar: BusinessCalendar, day: dt.date, days: int) -> tuple[dt.date, str]:
    """The ``days``-th business day after ``day`` (before it when negative), and why."""
    step = calendar.next_business_day if days > 0 else calendar.previous_business_day
    direction = dt.timedelta(days=1 if days > 0 else -1)
    skipped: dict[str, None] = {}  # why the days passed over were closed, in order
    current = day
    for _ in range(abs(days)):
        found = step(current, include=False)
        for offset in range(1, abs((found - current).days)):
            skipped.setdefault(calendar.why_closed(current + direction * offset) or "", None)
        current = found
    reason = f"{abs(days)}営業日{'後' if days > 0 else '前'}"
    if skipped:
        reason += f"（{'・'.join(skipped)}を除く）"
    return current, reason


class BusinessDayBlock(ProcessingBlock):
    """``date.business_day``: one date or a table's date column moved onto business days."""

    def validate(self, inputs: Mapping[str, Any], ctx: BlockContext) -> None:
        _mode(inputs)
        _options(inputs, ctx)

    def run(self, inputs: Mapping[str, Any], ctx: BlockContext) -> dict[str, Any]:
        single = _mode(inputs) == "date"
        options = _options(inputs, ctx)
        if single:
            value = inputs.get("date")
            day = _date_or_none(value)
            if day is None and not _blank(value):
                raise invalid(
                    f"date {_shown(value)} を日付として読めません（{_date_problem(value)}）",
                    hint=f"{DATE_FORMS} のどれかの形で書いてください",
                    field="date",
                    value=_shown(value),
                )
            if day is None:
                return {"date": None, "reason": "", "records": None}
            moved, reason = _adjusted(options, day, "date")
            return {"date": moved.isoformat(), "reason": reason, "records": None}

        records = records_input(inputs)
        column = _text(inputs, "column")
        assert column is not None  # _mode checked it
        output_column = _text(inputs, "output_column") or f"{column}_営業日"
        reason_column = f"{output_column}{REASON_SUFFIX}"
        check_columns([column], records, "column")
        cache: dict[dt.date, tuple[str, str]] = {}
        rows: list[dict[str, Any]] = []
        for index, row in enumerate(records):
            if index % 10_000 == 0:
                ctx.check_cancelled()
            value = row.get(column)
            if _blank(value):
                rows.append({**row, output_column: None, reason_column: ""})
                continue
            day = _date_or_none(value)
            if day is None:
                raise invalid(
                    f"records の {index + 1} 行目: 列「{column}」の {_shown(value)} を"
                    f"日付として読めません（{_date_problem(value)}）",
                    hint=f"{DATE_FORMS} のどれかの形に直すか、空欄にしてください。"
                    "Excel の日付が数値（シリアル値）になっているときは、"
                    "セルの書式を日付にしてください",
                    field=f"records[{index}].{column}",
                    row=index + 1,
                    column=column,
                    value=_shown(value),
                )
            if day not in cache:
                moved, reason = _adjusted(options, day, f"records[{index}].{column}")
                cache[day] = (moved.isoformat(), reason)
            shown, reason = cache[day]
            rows.append({**row, output_column: shown, reason_column: reason})
        return {"date": None, "reason": None, "records": rows}


# --- inputs -----------------------------------------------------------------------------


def _mode(inputs: Mapping[str, Any]) -> str:
    """``"date"`` or ``"records"``: exactly one of them is given."""
    has_date = inputs.get("date") is not None
    has_records = inputs.get("records") is not None
    if has_date == has_records:
        given = "両方が指定されています" if has_date else "どちらも指定されていません"
        raise invalid(
            f"date（1つの日付）と records（表）のどちらか一方だけを指定してください（{given}）",
            hint="1つの日付なら date: 2026-04-30、表の日付列なら records と column: 支払期日",
            field="date" if has_date else "records",
        )
    if has_records:
        if _text(inputs, "column") is None:
            raise invalid(
                "records を渡すときは column に日付の列名を指定してください",
                hint="例: column: 支払期日",
                field="column",
            )
        _text(inputs, "output_column")
        return "records"
    for name in ("column", "output_column"):
        if inputs.get(name) is not None:
            raise invalid(
                f"{name} は records（表）と一緒に使います。date（1つの日付）のときは外してください",
                field=name,
            )
    return "date"


def _text(inputs: Mapping[str, Any], name: str) -> str | None:
    value = inputs.get(name)
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise invalid(
            f"{name} は列名（空でない文字列）で指定してください"
            f"（渡されたのは {kind_label(value)}）",
            hint=f"例: {name}: 支払期日" if name == "column" else f"例: {name}: 支払予定日",
            field=name,
        )
    return value


def _options(inputs: Mapping[str, Any], ctx: BlockContext) -> Options:
    operation = inputs.get("operation", "next")
    if operation not in OPERATIONS:
        raise invalid(
            f"operation {_shown(operation)} は使えません",
            hint="next（翌営業日）、previous（前営業日）、add（days 営業日後）、"
            "month_end（月末営業日）、month_start（月初の営業日）のどれかです",
            field="operation",
        )
    days = inputs.get("days")
    if operation == "add":
        if isinstance(days, bool) or not isinstance(days, int) or days == 0:
            raise invalid(
                "operation: add には days に 0 以外の整数を指定してください"
                f"（渡されたのは {_shown(days)}）",
                hint="例: days: 3（3営業日後）、days: -2（2営業日前）。"
                "その日が休日なら翌営業日にするだけのときは operation: next です",
                field="days",
            )
        if abs(days) > MAX_DAYS:
            raise invalid(
                f"days は -{MAX_DAYS} から {MAX_DAYS} までで指定してください"
                f"（渡されたのは {days}）",
                field="days",
            )
    elif days is not None:
        raise invalid(
            f"days は operation: add のときだけ使います（operation は {operation}）",
            hint="N営業日後にするなら operation: add にしてください",
            field="days",
        )
    given = inputs.get("closed_days")
    closed_days = _month_days(
        ctx.settings.plans.closed_days if given is None else given, "closed_days"
    )
    closed_dates = _dates(inputs.get("closed_dates"))
    return Options(str(operation), days, BusinessCalendar(closed_days, closed_dates))


def _month_days(value: Any, field: str) -> frozenset[tuple[int, int]]:
    if isinstance(value, str) or not isinstance(value, list | tuple):
        raise invalid(
            f"{field} は月-日（MM-DD）の文字列のリストで指定してください"
            f"（渡されたのは {kind_label(value)}）",
            hint=f"例: {field}: [12-29, 12-30, 12-31, 01-02, 01-03]（休業日がなければ []）",
            field=field,
        )
    pairs: set[tuple[int, int]] = set()
    for text in value:
        pair = _month_day(text)
        if pair is None:
            raise invalid(
                f"{field} の {_shown(text)} は月-日（MM-DD、例: 12-31）の形ではありません",
                hint="毎年の休業日を 12-29 のように月-日で書いてください"
                "（1回だけの休業日は closed_dates に YYYY-MM-DD で書きます）",
                field=field,
                value=_shown(text),
            )
        pairs.add(pair)
    return frozenset(pairs)


def _month_day(text: Any) -> tuple[int, int] | None:
    """``MM-DD`` (or ``M/D``, full-width digits) as (month, day), None when it is no day."""
    match = _MONTH_DAY_RE.fullmatch(nfkc(text)) if isinstance(text, str) else None
    if match is None:
        return None
    month, day = int(match.group(1)), int(match.group(2))
    try:
        dt.date(2024, month, day)  # a leap year: 02-29 is a day
    except ValueError:
        return None
    return month, day


def _dates(value: Any) -> frozenset[dt.date]:
    if value is None:
        return frozenset()
    if isinstance(value, str) or not isinstance(value, list | tuple):
        raise invalid(
            "closed_dates は日付（YYYY-MM-DD）の文字列のリストで指定してください"
            f"（渡されたのは {kind_label(value)}）",
            hint="例: closed_dates: [2026-06-01]",
            field="closed_dates",
        )
    dates: set[dt.date] = set()
    for item in value:
        day = _date_or_none(item)
        if day is None:
            raise invalid(
                f"closed_dates の {_shown(item)} を日付として読めません（{_date_problem(item)}）",
                hint="YYYY-MM-DD（例: 2026-06-01）の形で書いてください"
                "（毎年の休業日は closed_days に MM-DD で書きます）",
                field="closed_dates",
                value=_shown(item),
            )
        dates.add(day)
    return frozenset(dates)


# --- values -----------------------------------------------------------------------------


def _blank(value: Any) -> bool:
    return is_null(value) or (isinstance(value, str) and not value.strip())


def _date_or_none(value: Any) -> dt.date | None:
    """A cell as a date (a date, or date text in any form :func:`parse_date` reads), else None."""
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if isinstance(value, str) and value.strip():
        try:
            return parse_date(value)
        except ValueError:
            return None
    return None


def _date_problem(value: Any) -> str:
    """Why ``value`` is no date (a Japanese phrase)."""
    if isinstance(value, str):
        try:
            parse_date(value)
        except ValueError as error:
            return str(error)
    return f"{kind_label(value)}の値です"


def _shown(value: Any) -> str:
    return f"「{value}」" if isinstance(value, str) else repr(value)


def _adjusted(options: Options, day: dt.date, field: str) -> tuple[dt.date, str]:
    try:
        return adjust(options.calendar, day, options.operation, options.days)
    except (ValueError, OverflowError) as error:
        detail = str(error) if isinstance(error, ValueError) and "営業日" in str(error) else ""
        raise invalid(
            f"{day.isoformat()} の営業日を求められません"
            + (f"（{detail}）" if detail else "（休業日が続くか、扱える日付の範囲を超えます）"),
            hint="closed_days・closed_dates で休業日にしすぎていないか、"
            "日付が正しいか確かめてください",
            field=field,
        ) from None
