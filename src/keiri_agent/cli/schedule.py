"""``keiri-agent schedule …``: schedule rules for Plans (``plans.schedule_rules``).

``schedule next "<rule>" --after YYYY-MM-DD --count N [--json]`` prints the next dates a
rule gives, so a user can check a rule (「毎月第5営業日」) before saving it; business
days skip national holidays and the company's closed days (``KEIRI_AGENT_CLOSED_DAYS``).
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated

import typer

from keiri_agent.cli.common import console, print_json, settings
from keiri_agent.cli.common import fail as _fail
from keiri_agent.cli.usage import KeiriTyper
from keiri_agent.errors import KeiriAgentError, UserInputError

schedule_app = KeiriTyper(
    name="schedule", help="Plan の実行予定（営業日のルール）。", no_args_is_help=True
)


def _date(text: str) -> dt.date:
    try:
        return dt.date.fromisoformat(text.strip())
    except ValueError:
        raise typer.BadParameter(
            f"{text!r} は日付として読めません。YYYY-MM-DD（例: 2026-12-01）で指定してください",
            param_hint="--after",
        ) from None


@schedule_app.command("next")
def next_command(
    rule: Annotated[
        str,
        typer.Argument(
            help="予定のルール（例: 毎月第5営業日、毎月末営業日、毎週月曜（祝日なら翌営業日））"
        ),
    ],
    after: Annotated[
        str | None,
        typer.Option("--after", help="この日より後の日付を表示します（YYYY-MM-DD。既定: 今日）。"),
    ] = None,
    count: Annotated[int, typer.Option("--count", min=1, max=366, help="表示する件数。")] = 5,
    as_json: Annotated[
        bool, typer.Option("--json", help="日付（YYYY-MM-DD）の一覧を JSON で出力します。")
    ] = False,
) -> None:
    """RULE が次に実行される日を表示します（祝日と会社の休業日は営業日に数えません）。"""
    from keiri_agent.plans.business_calendar import WEEKDAY_NAMES, BusinessCalendar
    from keiri_agent.plans.schedule_rules import next_dates, parse_rule

    start = _date(after) if after is not None else dt.date.today()
    try:
        calendar = BusinessCalendar.from_setting(settings().closed_days)
        parsed = parse_rule(rule)
        dates = next_dates(parsed, after=start, count=count, calendar=calendar)
        if not dates:
            raise UserInputError(
                f"「{rule}」に当たる日が {start.isoformat()} より後にありません",
                hint="ルールか休業日の設定（KEIRI_AGENT_CLOSED_DAYS）を見直してください",
                code="SCHEDULE_RULE_INVALID",
            )
    except KeiriAgentError as error:
        if as_json:
            from keiri_agent.services.jsonforms import error_json

            print_json(error_json(error))
        raise _fail(error) from None
    if as_json:
        print_json([day.isoformat() for day in dates])
        return
    console.print(f"「{rule}」の {start.isoformat()} より後の {len(dates)} 件:", markup=False)
    for day in dates:
        console.print(f"  {day.isoformat()}（{WEEKDAY_NAMES[day.weekday()]}）", markup=False)
