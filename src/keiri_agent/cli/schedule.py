"""``keiri-agent schedule …``: Plans that run by themselves (``runs.schedules``).

- ``schedule next "<rule>" --after YYYY-MM-DD --count N [--json]`` prints the next dates
  a rule gives, so a user can check a rule (「毎月第5営業日」) before saving it; business
  days skip national holidays and the company's closed days (``KEIRI_AGENT_CLOSED_DAYS``).
- ``schedule add PLAN "<rule>" [--at HH:MM] [--var NAME=VALUE]`` saves a schedule of a
  registered Plan (a business-day rule at a time of day, or a cron expression);
  ``schedule list``, ``pause``, ``resume`` and ``delete`` manage them. The runs start in
  the process that executes runs (``keiri-agent serve``, or ``keiri-agent worker``).
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Annotated

import typer

from keiri_agent.cli.common import console, needs, print_json, settings
from keiri_agent.cli.common import fail as _fail
from keiri_agent.cli.common import fail_json as _fail_json
from keiri_agent.cli.usage import KeiriTyper
from keiri_agent.errors import KeiriAgentError, UserInputError

if TYPE_CHECKING:
    from keiri_agent.runs.schedules import Schedule, Schedules

schedule_app = KeiriTyper(
    name="schedule",
    help="Plan を自動で実行する予定（営業日のルール・cron）。",
    no_args_is_help=True,
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
    from keiri_agent.accounting.business_calendar import WEEKDAY_NAMES, BusinessCalendar
    from keiri_agent.plans.schedule_rules import next_dates, parse_rule

    start = _date(after) if after is not None else dt.date.today()
    try:
        calendar = BusinessCalendar.from_setting(settings().plans.closed_days)
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


def _login() -> str:
    """Who adds a schedule: the OS user (its runs are theirs, as at the command line)."""
    from keiri_agent.people.operator import os_login

    return os_login()


def _schedules() -> Schedules:
    from keiri_agent.runs.schedules import Schedules

    return Schedules.from_settings(settings())


def _show(schedules: Schedules, schedule: Schedule, as_json: bool, verb: str) -> None:
    data = schedules.to_dict(schedule)
    if as_json:
        print_json(data)
        return
    state = "（一時停止中）" if schedule.paused else ""
    console.print(
        f"{verb}: {schedule.schedule_id}  {schedule.plan_id}  「{schedule.rule}」"
        f"{' ' + schedule.at if schedule.at else ''}  次回 {data['next_at']}{state}",
        markup=False,
    )


JsonOption = Annotated[bool, typer.Option("--json", help="結果を JSON で出力します。")]
IdArgument = Annotated[str, typer.Argument(help="予定の ID（sch_… の形。schedule list で表示）")]


@schedule_app.command("add")
@needs("run")
def add_command(
    plan: Annotated[str, typer.Argument(help="登録済みの Plan の ID（designs/ の中の名前）")],
    rule: Annotated[
        str,
        typer.Argument(
            help="予定のルール（例: 毎月第5営業日、毎月末営業日、毎週月曜（祝日なら翌営業日））"
            'または cron 式（例: "0 9 * * 1-5"）'
        ),
    ],
    at: Annotated[
        str, typer.Option("--at", help="実行する時刻（HH:MM。cron 式では使いません）。")
    ] = "09:00",
    var: Annotated[
        list[str] | None,
        typer.Option("--var", help="実行に渡す変数 NAME=VALUE（値は YAML として読みます）。"),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """登録済みの Plan を、ルールに従って自動で実行する予定を追加します。"""
    from keiri_agent.plans.engine import PlanEngine
    from keiri_agent.runs.schedules import check_plan
    from keiri_agent.services.plan_inputs import locate_plan_id, parse_var_assignments

    try:
        engine = PlanEngine(settings())
        locate_plan_id(engine.store, plan)  # a Plan that is not registered: said now
        values = parse_var_assignments(var)
        check_plan(engine, plan, values)  # a Plan that would fail at its first date: now
        schedules = _schedules()
        schedule = schedules.add(plan, rule, at=at, vars=values, owner=_login())
    except KeiriAgentError as error:
        raise _fail_json(error, as_json) from None
    _show(schedules, schedule, as_json, "追加しました")
    if not as_json:
        console.print(
            "実行は keiri-agent serve（または keiri-agent worker）が動いている間に始まります。",
            markup=False,
        )


@schedule_app.command("list")
def list_command(as_json: JsonOption = False) -> None:
    """予定の一覧（次に実行される順）。"""
    try:
        schedules = _schedules()
        found = schedules.list()
    except KeiriAgentError as error:
        raise _fail_json(error, as_json) from None
    if as_json:
        print_json([schedules.to_dict(schedule) for schedule in found])
        return
    if not found:
        console.print("予定はまだありません（keiri-agent schedule add で追加します）", markup=False)
    for schedule in found:
        _show(schedules, schedule, False, "予定")


def _change(schedule_id: str, action: str, as_json: bool) -> None:
    try:
        schedules = _schedules()
        if action == "delete":
            schedule = schedules.require(schedule_id)
            schedules.delete(schedule_id)
        else:
            schedule = getattr(schedules, action)(schedule_id)
    except KeiriAgentError as error:
        raise _fail_json(error, as_json) from None
    verbs = {"pause": "一時停止しました", "resume": "再開しました", "delete": "削除しました"}
    _show(schedules, schedule, as_json, verbs[action])


@schedule_app.command("pause")
@needs("run")
def pause_command(schedule_id: IdArgument, as_json: JsonOption = False) -> None:
    """予定を一時停止します（再開するまで実行しません）。"""
    _change(schedule_id, "pause", as_json)


@schedule_app.command("resume")
@needs("run")
def resume_command(schedule_id: IdArgument, as_json: JsonOption = False) -> None:
    """一時停止した予定を再開します（止めていた間の分は実行しません）。"""
    _change(schedule_id, "resume", as_json)


@schedule_app.command("delete")
@needs("run")
def delete_command(schedule_id: IdArgument, as_json: JsonOption = False) -> None:
    """予定を削除します（実行済みの記録は残ります）。"""
    _change(schedule_id, "delete", as_json)
