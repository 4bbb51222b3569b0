"""Plans that run by themselves: on a business-day rule or a cron expression.

    schedules = Schedules(ScheduleStore(engine), settings)
    schedule = schedules.add("monthly_close", "毎月第5営業日", at="09:00", vars={...})
    Scheduler(schedules, plan_runs).tick()   # starts the runs that are due (any process)

- A rule is one of the business-day forms of ``plans.schedule_rules`` (「毎月第5営業日」,
  「毎月末営業日」, 「毎週月曜（祝日なら翌営業日）」 …) at a time of day ``at`` (``HH:MM``),
  or a cron expression of five fields (``0 9 * * 1-5``), both in ``time_zone``.
  Business days skip national holidays and ``closed_days`` (年末年始).
- ``Scheduler.tick`` runs in every process that executes runs (``serve``'s recovery
  pass, each ``keiri-agent worker``): a due schedule is claimed by moving its
  ``next_at`` in one conditional update, so one process starts its run however many
  tick at once. The run's first event, ``scheduled``, says when it was due and whether
  it started late.
- A schedule that was due while nothing was running (every worker down) runs once
  when a process returns — not once per missed date — and says it was late; its next
  date is the first one after now.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
import time
import uuid
import zoneinfo
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import sqlalchemy
from sqlalchemy import select, update

from keiri_agent.accounting.business_calendar import BusinessCalendar
from keiri_agent.config import Settings
from keiri_agent.errors import UserInputError
from keiri_agent.plans.schedule_rules import next_dates, parse_rule
from keiri_agent.storage.schema import schedules

if TYPE_CHECKING:
    from keiri_agent.plans.engine import PlanEngine
    from keiri_agent.services.plan_runs import PlanRuns

log = logging.getLogger(__name__)

LATE_AFTER_S = 120.0
"""A run that starts this long after it was due says it was late."""
UPCOMING = 5
"""How many of a schedule's next due times its JSON lists (``upcoming``)."""
_TIME = re.compile(r"(?P<h>[01]?\d|2[0-3]):(?P<m>[0-5]\d)")
_CRON = re.compile(r"[\d*/,\-A-Za-z?]+(\s+[\d*/,\-A-Za-z?]+){4}")


@dataclass(frozen=True)
class Schedule:
    """One schedule as stored."""

    schedule_id: str
    plan_id: str
    rule: str
    at: str
    vars: dict[str, Any]
    paused: bool
    next_at: float
    last_due_at: float | None
    last_run_id: str | None
    last_late: bool
    owner: str

    def to_dict(self, tz: dt.tzinfo) -> dict[str, Any]:
        return {
            "schedule_id": self.schedule_id,
            "plan_id": self.plan_id,
            "rule": self.rule,
            "at": self.at if not is_cron(self.rule) else None,
            "vars": self.vars,
            "paused": self.paused,
            "next_at": _local(self.next_at, tz),
            "last_due_at": _local(self.last_due_at, tz) if self.last_due_at else None,
            "last_run_id": self.last_run_id,
            "last_late": self.last_late,
            "owner": self.owner,
        }


def _local(epoch: float, tz: dt.tzinfo) -> str:
    return dt.datetime.fromtimestamp(epoch, tz).isoformat(timespec="minutes")


def is_cron(rule: str) -> bool:
    """A cron expression (five fields) rather than a business-day rule."""
    return bool(_CRON.fullmatch(rule.strip()))


def next_due(
    rule: str, at: str, after: dt.datetime, *, tz: dt.tzinfo, calendar: BusinessCalendar
) -> dt.datetime:
    """The first moment strictly after ``after`` on which the schedule is due."""
    local = after.astimezone(tz)
    if is_cron(rule):
        from croniter import croniter

        moment: dt.datetime = croniter(rule.strip(), local).get_next(dt.datetime)
        return moment
    parsed = parse_rule(rule)
    hour, minute = _time_of_day(at)
    for day in next_dates(
        parsed, after=local.date() - dt.timedelta(days=1), count=3, calendar=calendar
    ):
        moment = dt.datetime.combine(day, dt.time(hour, minute), tz)
        if moment > after:
            return moment
    raise UserInputError(  # pragma: no cover - next_dates searches years ahead
        f"「{rule}」に当たる日が見つかりません", code="SCHEDULE_RULE_INVALID"
    )


def check_rule(rule: str) -> None:
    """SCHEDULE_RULE_INVALID naming the forms, for a rule that is neither form."""
    text = (rule or "").strip()
    if is_cron(text):
        from croniter import croniter

        if not croniter.is_valid(text):
            raise UserInputError(
                f"cron 式「{text}」を読めません",
                hint="cron 式は「分 時 日 月 曜日」の 5 項目で書いてください（例: 0 9 * * 1-5）",
                code="SCHEDULE_RULE_INVALID",
                details={"rule": text},
            )
        return
    try:
        parse_rule(text)
    except UserInputError as error:
        raise UserInputError(
            error.message,
            hint=f"{error.hint}。または cron 式（分 時 日 月 曜日。例: 0 9 * * 1-5）",
            code="SCHEDULE_RULE_INVALID",
            details=dict(error.details),
        ) from None


def _time_of_day(at: str) -> tuple[int, int]:
    match = _TIME.fullmatch((at or "").strip())
    if match is None:
        raise UserInputError(
            f"時刻「{at}」を読めません",
            hint="24 時間制の HH:MM で指定してください（例: 09:00）",
            code="SCHEDULE_TIME_INVALID",
            details={"at": at},
        )
    return int(match["h"]), int(match["m"])


def check_plan(engine: PlanEngine, plan_id: str, vars: Mapping[str, Any]) -> None:
    """The registered Plan ``plan_id`` loads and validates with ``vars``, now — not at
    its first due date (PLAN_NOT_FOUND, or the Plan's validation errors)."""
    plan = engine.store.load(plan_id)
    engine.validate(plan, vars=vars).raise_for_errors()


class ScheduleStore:
    """``schedules`` over a migrated SQLAlchemy engine."""

    def __init__(self, engine: sqlalchemy.Engine) -> None:
        self.engine = engine

    def insert(self, schedule: Schedule) -> None:
        now = dt.datetime.now(dt.UTC)
        with self.engine.begin() as connection:
            connection.execute(
                schedules.insert().values(
                    schedule_id=schedule.schedule_id,
                    plan_id=schedule.plan_id,
                    rule=schedule.rule,
                    at=schedule.at,
                    vars=schedule.vars,
                    paused=schedule.paused,
                    next_at=schedule.next_at,
                    last_due_at=None,
                    last_run_id=None,
                    last_late=False,
                    owner=schedule.owner,
                    created_at=now,
                    updated_at=now,
                )
            )

    def get(self, schedule_id: str) -> Schedule | None:
        with self.engine.connect() as connection:
            row = connection.execute(
                select(schedules).where(schedules.c.schedule_id == schedule_id)
            ).first()
        return None if row is None else _schedule(row._mapping)

    def find(self, *, plan_id: str | None = None) -> list[Schedule]:
        query = select(schedules).order_by(schedules.c.next_at, schedules.c.schedule_id)
        if plan_id is not None:
            query = query.where(schedules.c.plan_id == plan_id)
        with self.engine.connect() as connection:
            return [_schedule(row._mapping) for row in connection.execute(query)]

    def update(self, schedule_id: str, **values: Any) -> bool:
        with self.engine.begin() as connection:
            changed = connection.execute(
                update(schedules)
                .where(schedules.c.schedule_id == schedule_id)
                .values(updated_at=dt.datetime.now(dt.UTC), **values)
            ).rowcount
        return changed == 1

    def delete(self, schedule_id: str) -> bool:
        with self.engine.begin() as connection:
            deleted = connection.execute(
                schedules.delete().where(schedules.c.schedule_id == schedule_id)
            ).rowcount
        return deleted == 1

    def due(self, now: float) -> list[Schedule]:
        with self.engine.connect() as connection:
            rows = connection.execute(
                select(schedules).where(schedules.c.paused.is_(False), schedules.c.next_at <= now)
            ).all()
        return [_schedule(row._mapping) for row in rows]

    def claim(self, schedule: Schedule, next_at: float) -> bool:
        """Move a due schedule to ``next_at``; False when another process did first."""
        with self.engine.begin() as connection:
            claimed = connection.execute(
                update(schedules)
                .where(
                    schedules.c.schedule_id == schedule.schedule_id,
                    schedules.c.next_at == schedule.next_at,
                    schedules.c.paused.is_(False),
                )
                .values(next_at=next_at, updated_at=dt.datetime.now(dt.UTC))
            ).rowcount
        return claimed == 1


def _schedule(row: Any) -> Schedule:
    return Schedule(
        schedule_id=row["schedule_id"],
        plan_id=row["plan_id"],
        rule=row["rule"],
        at=row["at"],
        vars=dict(row["vars"] or {}),
        paused=bool(row["paused"]),
        next_at=float(row["next_at"]),
        last_due_at=row["last_due_at"],
        last_run_id=row["last_run_id"],
        last_late=bool(row["last_late"]),
        owner=row["owner"],
    )


class Schedules:
    """Adding, listing, pausing and deleting schedules (every surface calls this)."""

    def __init__(self, store: ScheduleStore, settings: Settings) -> None:
        self.store = store
        self.tz = zoneinfo.ZoneInfo(settings.plans.time_zone)
        self.calendar = BusinessCalendar.from_setting(settings.plans.closed_days)

    @classmethod
    def from_settings(cls, settings: Settings) -> Schedules:
        """The schedules of the configured application database (migrated)."""
        from keiri_agent.storage.engine import create_engine
        from keiri_agent.storage.migrate import upgrade

        engine = create_engine(settings)
        upgrade(engine)
        return cls(ScheduleStore(engine), settings)

    def to_dict(self, schedule: Schedule) -> dict[str, Any]:
        """The JSON form of a schedule, its times in ``time_zone``; ``upcoming``: the
        next ``UPCOMING`` times it is due from ``next_at`` on (none while paused)."""
        data = schedule.to_dict(self.tz)
        data["upcoming"] = [] if schedule.paused else self.upcoming(schedule)
        return data

    def upcoming(self, schedule: Schedule, count: int = UPCOMING) -> list[str]:
        """The next ``count`` times ``schedule`` is due, from ``next_at`` on."""
        moment = dt.datetime.fromtimestamp(schedule.next_at, self.tz)
        found = [moment]
        while len(found) < count:
            moment = self.next_due(schedule.rule, schedule.at, moment)
            found.append(moment)
        return [item.astimezone(self.tz).isoformat(timespec="minutes") for item in found]

    def add(
        self,
        plan_id: str,
        rule: str,
        *,
        at: str = "09:00",
        vars: Mapping[str, Any] | None = None,
        owner: str = "",
    ) -> Schedule:
        """A new schedule of the registered Plan ``plan_id`` (checked by the caller:
        ``check_plan``)."""
        rule = (rule or "").strip()
        check_rule(rule)
        if not is_cron(rule):
            _time_of_day(at)
        now = dt.datetime.now(dt.UTC)
        schedule = Schedule(
            schedule_id=f"sch_{uuid.uuid4().hex[:12]}",
            plan_id=plan_id,
            rule=rule,
            at=at.strip() if not is_cron(rule) else "",
            vars=dict(vars or {}),
            paused=False,
            next_at=self.next_due(rule, at, now).timestamp(),
            last_due_at=None,
            last_run_id=None,
            last_late=False,
            owner=owner,
        )
        self.store.insert(schedule)
        return schedule

    def next_due(self, rule: str, at: str, after: dt.datetime) -> dt.datetime:
        return next_due(rule, at, after, tz=self.tz, calendar=self.calendar)

    def list(self, plan_id: str | None = None) -> list[Schedule]:
        return self.store.find(plan_id=plan_id)

    def require(self, schedule_id: str) -> Schedule:
        schedule = self.store.get(schedule_id)
        if schedule is None:
            raise UserInputError(
                f"予定 {schedule_id!r} が見つかりません",
                hint="keiri-agent schedule list で予定の ID（sch_… の形）を確かめてください",
                code="SCHEDULE_NOT_FOUND",
                details={"schedule_id": schedule_id},
            )
        return schedule

    def pause(self, schedule_id: str) -> Schedule:
        self.require(schedule_id)
        self.store.update(schedule_id, paused=True)
        return self.require(schedule_id)

    def resume(self, schedule_id: str) -> Schedule:
        """Unpause: the next date is counted from now (dates missed while paused are
        not run)."""
        schedule = self.require(schedule_id)
        upcoming = self.next_due(schedule.rule, schedule.at, dt.datetime.now(dt.UTC))
        self.store.update(schedule_id, paused=False, next_at=upcoming.timestamp())
        return self.require(schedule_id)

    def delete(self, schedule_id: str) -> None:
        self.require(schedule_id)
        self.store.delete(schedule_id)


class Scheduler:
    """Starts the runs of due schedules (see the module docstring)."""

    def __init__(self, schedules: Schedules, plan_runs: PlanRuns) -> None:
        self.schedules = schedules
        self.plan_runs = plan_runs

    def tick(self, now: float | None = None) -> list[str]:
        """Start every due schedule's run once; the run ids started here."""
        moment = time.time() if now is None else now
        started = []
        for schedule in self.schedules.store.due(moment):
            try:
                run_id = self._fire(schedule, moment)
            except Exception:  # one schedule's failure does not stop the others
                log.exception("schedule %s could not start its run", schedule.schedule_id)
                continue
            if run_id is not None:
                started.append(run_id)
        return started

    def _fire(self, schedule: Schedule, moment: float) -> str | None:
        """Start one due schedule's run (``None`` when another process did)."""
        after = dt.datetime.fromtimestamp(moment, dt.UTC)
        try:
            upcoming = self.schedules.next_due(schedule.rule, schedule.at, after).timestamp()
        except UserInputError as error:  # a rule this version cannot read: pause it
            log.warning("schedule %s paused: %s", schedule.schedule_id, error.message)
            self.schedules.store.update(schedule.schedule_id, paused=True)
            return None
        if not self.schedules.store.claim(schedule, upcoming):
            return None  # another process started it
        late_by = moment - schedule.next_at
        late = late_by > LATE_AFTER_S
        scheduled = {
            "schedule_id": schedule.schedule_id,
            "rule": schedule.rule,
            "due_at": _local(schedule.next_at, self.schedules.tz),
            "late": late,
            "late_by_s": round(max(late_by, 0.0)),
        }
        run_id = self._start(schedule, scheduled)
        self.schedules.store.update(
            schedule.schedule_id,
            last_due_at=schedule.next_at,
            last_run_id=run_id,
            last_late=late,
        )
        return run_id

    def _start(self, schedule: Schedule, scheduled: dict[str, Any]) -> str:
        """The run of one due schedule; a Plan that cannot start is a failed run that
        says why (the schedule goes on)."""
        from keiri_agent.errors import ExecutionError, KeiriAgentError

        try:
            plan = self.plan_runs.engine.store.load(schedule.plan_id)
            return self.plan_runs.start(
                plan, vars=schedule.vars, scheduled=scheduled, started_by=schedule.owner
            )
        except KeiriAgentError as error:
            return self.plan_runs.record_failed_start(
                schedule.plan_id, error, scheduled, owner=schedule.owner
            )
        except Exception as error:  # e.g. the disk is full: still a run that says so
            log.exception("schedule %s: the run could not start", schedule.schedule_id)
            failure = ExecutionError(
                "予定の実行を開始できませんでした",
                hint="サーバーのログを管理者に送ってください。次回の予定は通常どおり実行します",
                details={"type": type(error).__name__},
            )
            return self.plan_runs.record_failed_start(schedule.plan_id, failure, scheduled)
