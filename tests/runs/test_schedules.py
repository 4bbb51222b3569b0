"""Plans that run by themselves (runs.schedules): when a schedule is due (dates from the
calendar, not from the code), one run however many processes tick, a missed date run
once and marked late, a paused schedule silent, a Plan that no longer loads a failed
run that says why; the CLI's errors in Japanese."""

from __future__ import annotations

import datetime as dt
import json
import time
import zoneinfo
from pathlib import Path

import pytest
from typer.testing import CliRunner

from keiri_agent.accounting.business_calendar import BusinessCalendar
from keiri_agent.cli.app import app
from keiri_agent.config import Settings
from keiri_agent.errors import UserInputError
from keiri_agent.plans.engine import PlanEngine
from keiri_agent.runs.executors import LocalExecutor
from keiri_agent.runs.plan_kind import PlanKind
from keiri_agent.runs.schedules import Scheduler, Schedules, ScheduleStore, check_rule, next_due
from keiri_agent.runs.service import RunService, Timing
from keiri_agent.runs.store import RunStore
from keiri_agent.services.plan_runs import PlanRuns

JST = zoneinfo.ZoneInfo("Asia/Tokyo")
CALENDAR = BusinessCalendar.from_setting(("12-29", "12-30", "12-31", "01-02", "01-03"))

PLAN = """\
apiVersion: v1
id: greet
version: 0.1.0
vars:
  name: 経理部
graph:
  - id: g
    block: text.template
    in: {template: "こんにちは {n}", values: {n: "${vars.name}"}}
    out: {text: t}
"""


def _at(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text).replace(tzinfo=JST)


@pytest.mark.parametrize(
    ("rule", "at", "after", "expected"),
    [
        # December 2026: Tue 1, Wed 2, Thu 3, Fri 4, Mon 7 → the 5th business day is the 7th
        ("毎月第5営業日", "09:30", "2026-11-30 12:00", "2026-12-07 09:30"),
        # the same day, before and after its time
        ("毎月第5営業日", "09:30", "2026-12-07 09:00", "2026-12-07 09:30"),
        # January 2027: 1 (元日) closed, 2–3 closed days, 4 Mon … 8 Fri is the 5th
        ("毎月第5営業日", "09:30", "2026-12-07 09:30", "2027-01-08 09:30"),
        # the last business day of December 2026: the 28th (29–31 closed)
        ("毎月末営業日", "17:00", "2026-12-01 00:00", "2026-12-28 17:00"),
        # Monday 2027-01-11 is 成人の日: the next business day, Tuesday the 12th
        ("毎週月曜（祝日なら翌営業日）", "08:00", "2027-01-09 00:00", "2027-01-12 08:00"),
        # cron, in Japan's time: weekdays at 9
        ("0 9 * * 1-5", "", "2026-12-04 10:00", "2026-12-07 09:00"),
    ],
)
def test_next_due_follows_the_calendar(rule: str, at: str, after: str, expected: str) -> None:
    assert next_due(rule, at, _at(after), tz=JST, calendar=CALENDAR) == _at(expected)


@pytest.mark.parametrize("rule", ["毎月32日", "毎日", "0 9 * *", "61 9 * * *"])
def test_rules_neither_form_are_refused_naming_both_forms(rule: str) -> None:
    with pytest.raises(UserInputError) as caught:
        check_rule(rule)
    assert caught.value.code == "SCHEDULE_RULE_INVALID"
    assert "cron" in (caught.value.hint or "")


class World:
    """A workspace with the Plan ``greet`` registered, its run service executing on
    threads, and two schedulers (two processes) over one database."""

    def __init__(self, home: Path) -> None:
        (home / "designs").mkdir(parents=True)
        (home / "designs" / "greet.yaml").write_text(PLAN, encoding="utf-8")
        self.settings = Settings(home=home, provider="offline")
        self.schedules = Schedules.from_settings(self.settings)
        engine = self.schedules.store.engine
        self.plans = PlanEngine(self.settings, env={})
        self.executor = LocalExecutor(workers=2, recover_interval_s=60)
        self.service = RunService(
            RunStore(engine),
            {"plan": PlanKind(self.plans)},
            dispatch=self.executor.dispatch,
            timing=Timing(lease_s=3, heartbeat_s=0.5, poll_interval_s=0.05),
        )
        self.executor.bind(self.service)
        self.runs = PlanRuns(self.plans, self.service)
        self.schedulers = [
            Scheduler(Schedules(ScheduleStore(engine), self.settings), self.runs) for _ in "ab"
        ]

    def wait_settled(self, run_id: str) -> str:
        deadline = time.monotonic() + 30
        while (run := self.service.require(run_id)).status in ("queued", "running"):
            assert time.monotonic() < deadline
            time.sleep(0.05)
        return run.status

    def close(self) -> None:
        self.executor.close()


@pytest.fixture
def world(tmp_path: Path) -> World:
    built = World(tmp_path)
    yield built  # type: ignore[misc]
    built.close()


def test_a_due_schedule_starts_one_run_however_many_processes_tick(world: World) -> None:
    schedule = world.schedules.add("greet", "毎月第5営業日", at="09:00", vars={"name": "総務部"})
    due = schedule.next_at
    started = [run for scheduler in world.schedulers for run in scheduler.tick(now=due + 5)]
    assert len(started) == 1
    assert world.wait_settled(started[0]) == "success"
    assert world.runs.result(started[0]).outputs["g"]["t"] == "こんにちは 総務部"
    first = world.service.store.events_after(started[0], 0)[0]
    assert first.kind == "scheduled"
    assert first.payload["late"] is False and first.payload["schedule_id"] == schedule.schedule_id
    after = world.schedules.require(schedule.schedule_id)
    assert after.next_at > due and after.last_run_id == started[0] and not after.last_late
    assert [s.tick(now=due + 10) for s in world.schedulers] == [[], []]  # nothing more due


def test_two_processes_that_both_saw_a_schedule_due_claim_it_once(world: World) -> None:
    schedule = world.schedules.add("greet", "0 9 * * *")
    store = world.schedules.store
    (seen_by_a,) = store.due(schedule.next_at + 1)
    (seen_by_b,) = store.due(schedule.next_at + 1)
    assert store.claim(seen_by_a, schedule.next_at + 86400) is True
    assert store.claim(seen_by_b, schedule.next_at + 86400) is False


def test_dates_missed_while_nothing_ran_start_one_run_that_says_it_was_late(
    world: World,
) -> None:
    schedule = world.schedules.add("greet", "0 9 * * *", vars={})
    three_days_later = schedule.next_at + 3 * 86400 + 60
    started = world.schedulers[0].tick(now=three_days_later)
    assert len(started) == 1  # not one per missed day
    scheduled = world.service.store.events_after(started[0], 0)[0].payload
    assert scheduled["late"] is True and scheduled["late_by_s"] >= 3 * 86400
    after = world.schedules.require(schedule.schedule_id)
    assert after.next_at > three_days_later and after.last_late
    assert world.schedulers[1].tick(now=three_days_later + 1) == []
    world.wait_settled(started[0])


def test_a_paused_schedule_does_not_run_and_resuming_skips_what_it_missed(world: World) -> None:
    schedule = world.schedules.add("greet", "0 9 * * *")
    world.schedules.pause(schedule.schedule_id)
    assert world.schedulers[0].tick(now=schedule.next_at + 86400 * 2) == []
    resumed = world.schedules.resume(schedule.schedule_id)
    assert resumed.next_at > time.time()  # counted from now, not from the missed dates


def test_a_schedule_whose_plan_is_gone_records_a_failed_run_saying_why(world: World) -> None:
    schedule = world.schedules.add("greet", "0 9 * * *")
    (world.settings.storage.home / "designs" / "greet.yaml").unlink()
    (started,) = world.schedulers[0].tick(now=schedule.next_at + 1)
    run = world.service.require(started)
    assert run.status == "failed" and run.error is not None
    assert run.error["code"] == "PLAN_NOT_FOUND"
    kinds = [event.kind for event in world.service.store.events_after(started, 0)]
    assert kinds == ["scheduled", "failed"]


def test_the_cli_adds_lists_pauses_and_deletes_schedules(keiri_home: Path) -> None:
    (keiri_home / "designs").mkdir()
    (keiri_home / "designs" / "greet.yaml").write_text(PLAN, encoding="utf-8")
    runner = CliRunner()
    added = runner.invoke(
        app, ["schedule", "add", "greet", "毎月末営業日", "--at", "17:00", "--json"]
    )
    assert added.exit_code == 0, added.output
    schedule = json.loads(added.output)
    assert schedule["rule"] == "毎月末営業日" and schedule["next_at"].endswith("17:00+09:00")
    listed = json.loads(runner.invoke(app, ["schedule", "list", "--json"]).output)
    assert [item["schedule_id"] for item in listed] == [schedule["schedule_id"]]
    paused = runner.invoke(app, ["schedule", "pause", schedule["schedule_id"], "--json"])
    assert json.loads(paused.output)["paused"] is True
    assert runner.invoke(app, ["schedule", "delete", schedule["schedule_id"]]).exit_code == 0
    assert json.loads(runner.invoke(app, ["schedule", "list", "--json"]).output) == []


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["schedule", "add", "nope", "毎月末営業日"], "PLAN_NOT_FOUND"),
        (["schedule", "add", "greet", "毎日"], "SCHEDULE_RULE_INVALID"),
        (["schedule", "add", "greet", "毎月末営業日", "--at", "9時"], "SCHEDULE_TIME_INVALID"),
        (["schedule", "pause", "sch_nope"], "SCHEDULE_NOT_FOUND"),
        (["schedule", "add", "broken", "毎月末営業日"], "PLAN_INVALID"),
    ],
)
def test_bad_schedule_input_is_a_japanese_error_with_its_code(
    keiri_home: Path, args: list[str], code: str
) -> None:
    (keiri_home / "designs").mkdir()
    (keiri_home / "designs" / "greet.yaml").write_text(PLAN, encoding="utf-8")
    broken = PLAN.replace("id: greet", "id: broken").replace("text.template", "no.such_block")
    (keiri_home / "designs" / "broken.yaml").write_text(broken, encoding="utf-8")
    result = CliRunner().invoke(app, [*args, "--json"])
    assert result.exit_code != 0
    assert json.loads(result.stdout)["error"]["code"] == code
    assert "Traceback" not in result.output
