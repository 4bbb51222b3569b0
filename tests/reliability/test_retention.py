"""Retention (不要な永続化は禁止): nothing is kept longer than ``KEIRI_AGENT_RETENTION_DAYS``.

Before: there was no retention setting and no purge. Uploaded bytes stayed in Plan run
state files, analysis uploads under ``.keiri/datasets/``, conversations, research notes
and research runs in the databases, answers and generation records in their JSONL
files — until someone deleted them by hand.

Now ``keiri-agent purge`` lists (dry run) or deletes (``--yes``) what is older than the
retention, kind by kind, by each item's own time; a Plan run locked by a live process
is kept and named in the report; what is newer stays and still works. ``keiri-agent
serve`` purges at start-up and then once a day, and stops doing so on shutdown.

The workspace is built through the product (``plan run``, ``analyze``, ``research
--sample``, the stores), then some items are aged by rewriting their timestamps.
"""

from __future__ import annotations

import json
import os
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy
from typer.testing import CliRunner

from keiri_agent.cli.app import app
from keiri_agent.config import Settings
from keiri_agent.events import utc_timestamp
from keiri_agent.plans.design.metrics import METRICS_FILE, record_generation
from keiri_agent.plans.run.run_lock import RunLock
from keiri_agent.plans.run.run_state import find_state
from keiri_agent.services.answer_history import AnswerHistory
from keiri_agent.services.plan_drafts import DraftChanges, PlanDrafts
from keiri_agent.services.saved_datasets import SavedDatasets
from keiri_agent.storage.schema import research_notes, run_events, runs
from keiri_agent.workspace import Workspace

runner = CliRunner()

OLD = datetime.now(UTC) - timedelta(days=60)
"""Well past the default retention (30 days)."""

SALES = "地域,店舗,売上\n関東,新宿店,1200\n近畿,梅田店,800\n"

FILE_PLAN = """
apiVersion: v1
id: sales_upload
version: 1.0.0
vars: {sales_csv: null}
graph:
  - id: read
    block: csv.read
    in: {file: "${vars.sales_csv}"}
    out: {records: rows}
exports:
  - {from: read.rows, as: rows}
"""

ASKING_PLAN = """
apiVersion: v1
id: approval
version: 1.0.0
graph:
  - id: ask
    block: ui.interactive_input
    in:
      mode: collect
      message: 金額を入力してください
      requirements:
        - {id: amount, type: number, label: 金額}
    out: {collected_data: collected}
exports:
  - {from: ask.collected, as: collected}
"""


# --- building the workspace -------------------------------------------------------


def _plan_run(plan: Path, *args: str) -> dict[str, Any]:
    result = runner.invoke(app, ["plan", "run", str(plan), *args, "--json", "--no-prompt"])
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def _age_run(home: Path, run_id: str) -> None:
    path = find_state(Workspace(home).runs, run_id)
    state = json.loads(path.read_text(encoding="utf-8"))
    state["created_at"] = state["updated_at"] = utc_timestamp(OLD)
    path.write_text(json.dumps(state, ensure_ascii=False), encoding="utf-8")


def _age_conversation(settings: Settings, thread_id: str) -> None:
    from keiri_agent.storage.checkpointer import open_checkpointer

    with open_checkpointer(settings) as saver:
        items = list(saver.list({"configurable": {"thread_id": thread_id}}))
        assert items
        for item in items:
            checkpoint = {**item.checkpoint, "ts": OLD.isoformat()}
            saver.put(item.parent_config or item.config, checkpoint, item.metadata, {})


def _conversations(settings: Settings) -> set[str]:
    from keiri_agent.storage.checkpointer import open_checkpointer

    with open_checkpointer(settings) as saver:
        return {str(item.config["configurable"]["thread_id"]) for item in saver.list(None)}


def _engine(settings: Settings) -> sqlalchemy.Engine:
    from keiri_agent.agents.research.notes import SqlNoteStore

    return SqlNoteStore.from_settings(settings).engine


def _rows(settings: Settings) -> dict[str, list[Any]]:
    engine = _engine(settings)
    with engine.connect() as connection:
        found = {
            "notes": sorted(
                connection.execute(
                    sqlalchemy.select(research_notes.c.session_id, research_notes.c.step_no)
                ).all()
            ),
            "runs": sorted(connection.execute(sqlalchemy.select(runs.c.run_id)).all()),
            "events": sorted(
                connection.execute(sqlalchemy.select(run_events.c.run_id, run_events.c.seq)).all()
            ),
        }
    engine.dispose()
    return found


def _files(home: Path) -> dict[str, bytes]:
    """Every file of the workspace but the databases (which a reader may touch)."""
    return {
        str(path.relative_to(home)): path.read_bytes()
        for path in sorted(home.rglob("*"))
        if path.is_file() and ".db" not in path.name
    }


def _research_run(settings: Settings, run_id: str, events: int) -> None:
    from keiri_agent.runs.store import NewEvent, RunStore

    store = RunStore(_engine(settings))
    store.create(
        run_id,
        kind="research",
        subject=f"session_of_{run_id}",
        title="インボイス制度の変更点",
        owner="",
        inputs={"kb_names": ["research"]},
    )
    claimed = store.claim(run_id, "test:1", lease_s=60)
    assert claimed is not None
    progress = [NewEvent("research", "progress", {"n": seq}) for seq in range(1, events + 1)]
    store.settle(run_id, claimed.attempt, "success", events=progress)
    store.engine.dispose()


@pytest.fixture
def workspace(keiri_home: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """A workspace with an old and a new item of every kind (and one old locked run)."""
    home = keiri_home
    settings = Settings()
    sales = home / "売上.csv"
    sales.write_text(SALES, encoding="utf-8")
    file_plan = home / "upload.yaml"
    file_plan.write_text(FILE_PLAN, encoding="utf-8")
    asking_plan = home / "approval.yaml"
    asking_plan.write_text(ASKING_PLAN, encoding="utf-8")

    # Plan runs: uploaded bytes kept in the state (finished) and runs waiting for input
    old_done = _plan_run(file_plan, "--file", f"sales_csv={sales}")
    new_done = _plan_run(file_plan, "--file", f"sales_csv={sales}")
    old_paused = _plan_run(asking_plan)
    old_locked = _plan_run(asking_plan)
    new_paused = _plan_run(asking_plan)
    assert old_done["status"] == "success" and old_paused["status"] == "paused"
    for run in (old_done, old_paused, old_locked):
        _age_run(home, run["run_id"])

    # saved analysis files: one last used long ago, linked to a conversation
    saved = SavedDatasets(Workspace(home))
    old_ref = saved.save(b"a,b\n1,2\n", "old.csv", sheet=None, keep_total_rows=False)
    new_ref = saved.save(b"a,b\n3,4\n", "new.csv", sheet=None, keep_total_rows=False)
    saved.link("thread-old", old_ref)
    saved.link("thread-new", new_ref)
    old_time = OLD.timestamp()
    os.utime(saved.folder / old_ref, (old_time, old_time))

    # analysis conversations
    threads = []
    for question in ("地域別の売上の合計を見せて", "店舗別の売上の合計を見せて"):
        result = runner.invoke(app, ["analyze", str(sales), question, "--json"])
        assert result.exit_code == 0, result.output
        threads.append(json.loads(result.stdout)["thread_id"])
    _age_conversation(settings, threads[0])

    # research notes (two sessions) and research runs with their events
    sessions = []
    for question in ("請求書の記載事項は？", "経費精算の締め日は？"):
        result = runner.invoke(app, ["research", "--sample", question, "--json"])
        assert result.exit_code == 0, result.output
        sessions.append(json.loads(result.stdout)["session_id"])
    engine = _engine(settings)
    with engine.begin() as connection:
        connection.execute(
            research_notes.update()
            .where(research_notes.c.session_id == sessions[0])
            .values(created_at=OLD)
        )
        old_notes = connection.execute(
            sqlalchemy.select(sqlalchemy.func.count()).where(
                research_notes.c.session_id == sessions[0]
            )
        ).scalar_one()
    _research_run(settings, "run_old", events=3)
    _research_run(settings, "run_new", events=2)
    with engine.begin() as connection:
        connection.execute(runs.update().where(runs.c.run_id == "run_old").values(updated_at=OLD))
    engine.dispose()

    # helpdesk answers and Plan generation records (logs/)
    history = AnswerHistory(Workspace(home))
    history.append("古い質問", "古い回答")
    history.append("新しい質問", "新しい回答")
    lines = history.file.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["asked_at"] = OLD.isoformat(timespec="seconds")
    lines[0] = json.dumps(first, ensure_ascii=False)
    history.file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    logs = Workspace(home).logs
    record_generation(logs, {"timestamp": OLD.isoformat(timespec="seconds"), "plan_id": "old"})
    record_generation(logs, {"timestamp": utc_timestamp(), "plan_id": "new"})

    # 設計 drafts: one last saved long ago
    drafts = PlanDrafts(Workspace(home))
    for draft_id in ("d-00000000000000000old", "d-00000000000000000new"):
        drafts.save(draft_id, "yamada", DraftChanges(instruction="経費を部署別に集計"))
    old_draft = drafts.folder / "d-00000000000000000old.json"
    os.utime(old_draft, (old_time, old_time))

    return {
        "home": home,
        "settings": settings,
        "old_done": old_done["run_id"],
        "new_done": new_done["run_id"],
        "old_paused": old_paused["run_id"],
        "old_locked": old_locked["run_id"],
        "new_paused": new_paused["run_id"],
        "old_ref": old_ref,
        "new_ref": new_ref,
        "old_thread": threads[0],
        "new_thread": threads[1],
        "old_session": sessions[0],
        "new_session": sessions[1],
        "old_notes": old_notes,
    }


def _expected_counts(built: dict[str, Any]) -> dict[str, int]:
    return {
        "plan_runs": 2,  # old_done and old_paused; old_locked is kept
        "datasets": 1,
        "conversations": 1,
        "research_notes": built["old_notes"],
        "runs": 1,
        "run_events": 3,
        "helpdesk_answers": 1,
        "design_metrics": 1,
        "design_drafts": 1,
    }


def _counts(report: dict[str, Any]) -> dict[str, int]:
    return {kind["kind"]: kind["count"] for kind in report["kinds"] if kind["count"]}


def _locked(built: dict[str, Any]) -> RunLock:
    path = find_state(Workspace(built["home"]).runs, built["old_locked"])
    return RunLock(path, built["old_locked"])


# --- the command ------------------------------------------------------------------


def test_dry_run_lists_exactly_the_old_items_and_deletes_nothing(
    workspace: dict[str, Any],
) -> None:
    home, settings = workspace["home"], workspace["settings"]
    files, rows = _files(home), _rows(settings)
    threads = _conversations(settings)
    assert len(rows["notes"]) > workspace["old_notes"] > 0

    with _locked(workspace):  # a live process owns this old run
        result = runner.invoke(app, ["purge", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["dry_run"] is True
    assert report["days"] == 30
    assert _counts(report) == _expected_counts(workspace)
    runs = next(kind for kind in report["kinds"] if kind["kind"] == "plan_runs")
    assert runs["bytes"] > len(SALES)  # the uploaded file is in the old run's state
    assert runs["oldest"].startswith(OLD.date().isoformat())
    kept = [(item["kind"], item["item"], item["reason"]) for item in report["kept"]]
    assert kept == [("plan_runs", workspace["old_locked"], "locked")]

    assert _files(home) == files
    assert _rows(settings) == rows
    assert _conversations(settings) == threads


def test_dry_run_says_in_japanese_what_would_be_deleted(workspace: dict[str, Any]) -> None:
    with _locked(workspace):
        result = runner.invoke(app, ["purge"])
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "削除していません" in out and "--yes" in out
    for label in ("Plan の実行記録", "データ分析の保存ファイル", "調査メモ", "ヘルプデスク"):
        assert label in out
    assert workspace["old_locked"] in out and "実行中" in out


def test_yes_deletes_exactly_the_old_items_and_the_new_ones_still_work(
    workspace: dict[str, Any],
) -> None:
    home, settings = workspace["home"], workspace["settings"]
    runs_dir = Workspace(home).runs

    with _locked(workspace):
        result = runner.invoke(app, ["purge", "--yes", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["dry_run"] is False
    assert _counts(report) == _expected_counts(workspace)

    # Plan runs: the old ones are gone with their log and lock; the rest stay
    left = {path.name for path in runs_dir.rglob("*") if path.is_file()}
    for run_id in (workspace["old_done"], workspace["old_paused"]):
        assert not any(run_id in name for name in left), run_id
    for run_id in (workspace["new_done"], workspace["old_locked"], workspace["new_paused"]):
        assert f"{run_id}.state.json" in left
        assert any(name.endswith(f"-{run_id}.jsonl") for name in left)
    answers = home / "answers.yaml"
    answers.write_text("ask: {amount: 1200}\n", encoding="utf-8")
    resumed = runner.invoke(
        app, ["plan", "resume", workspace["new_paused"], "--inputs", str(answers), "--json"]
    )
    assert resumed.exit_code == 0, resumed.output
    assert json.loads(resumed.stdout)["status"] == "success"

    # saved analysis files: the old copy and its link are gone; the new one loads
    saved = SavedDatasets(Workspace(home))
    assert not (saved.folder / workspace["old_ref"]).exists()
    assert saved.ref_of("thread-old") is None
    assert saved.load(workspace["new_ref"]).name == "new.csv"
    assert saved.ref_of("thread-new") == workspace["new_ref"]

    # conversations
    assert _conversations(settings) == {workspace["new_thread"]}

    # research notes, runs and their events
    listed = runner.invoke(app, ["research", "notes", "list", "--json"])
    assert listed.exit_code == 0, listed.output
    assert [item["session_id"] for item in json.loads(listed.stdout)] == [workspace["new_session"]]
    rows = _rows(settings)
    assert rows["runs"] == [("run_new",)]
    assert rows["events"] == [("run_new", 1), ("run_new", 2)]

    # helpdesk answers and generation records
    assert [answer.question for answer in AnswerHistory(Workspace(home)).recent()] == ["新しい質問"]
    metrics = (Workspace(home).logs / METRICS_FILE).read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["plan_id"] for line in metrics] == ["new"]

    # 設計 drafts: the old one is gone, the new one opens
    drafts = PlanDrafts(Workspace(home))
    assert [draft.draft_id for draft in drafts.of("yamada")] == ["d-00000000000000000new"]

    # once the lock is free, the old locked run goes too; nothing else is left to delete
    again = runner.invoke(app, ["purge", "--yes", "--json"])
    assert again.exit_code == 0, again.output
    assert _counts(json.loads(again.stdout)) == {"plan_runs": 1}
    assert not any(workspace["old_locked"] in p.name for p in runs_dir.rglob("*"))


def test_days_option_and_setting_choose_the_retention(
    workspace: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    long = runner.invoke(app, ["purge", "--days", "90", "--json"])
    assert long.exit_code == 0, long.output
    assert json.loads(long.stdout)["days"] == 90
    assert _counts(json.loads(long.stdout)) == {}

    monkeypatch.setenv("KEIRI_AGENT_RETENTION_DAYS", "90")
    by_setting = runner.invoke(app, ["purge", "--json"])
    assert by_setting.exit_code == 0, by_setting.output
    assert _counts(json.loads(by_setting.stdout)) == {}


@pytest.mark.parametrize("days", ["0", "3651"])
def test_a_retention_out_of_range_is_a_japanese_error(keiri_home: Path, days: str) -> None:
    result = runner.invoke(app, ["purge", "--days", days])
    assert result.exit_code != 0
    assert "保存期間" in result.output
    assert "Traceback" not in result.output


def test_the_setting_is_validated(keiri_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KEIRI_AGENT_RETENTION_DAYS", "0")
    result = runner.invoke(app, ["purge"])
    assert result.exit_code == 1
    assert "KEIRI_AGENT_RETENTION_DAYS" in result.output


def test_an_empty_workspace_has_nothing_to_purge_and_gets_no_files(keiri_home: Path) -> None:
    result = runner.invoke(app, ["purge", "--yes"])
    assert result.exit_code == 0, result.output
    assert "ありません" in result.stdout
    assert list(keiri_home.rglob("*")) == []


# --- the server -------------------------------------------------------------------


def test_the_server_purges_at_start_up_and_stops_on_close(
    keiri_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from keiri_agent.api.context import ApiContext
    from keiri_agent.services import retention

    calls: list[Settings] = []
    called = threading.Event()

    def scheduled(settings: Settings) -> None:
        calls.append(settings)
        if len(calls) >= 2:
            called.set()

    monkeypatch.setattr(retention, "PURGE_INTERVAL_S", 0.05)
    monkeypatch.setattr(retention, "scheduled_purge", scheduled)
    settings = Settings()
    context = ApiContext(settings)
    context.start()
    try:
        assert called.wait(10), calls  # at start-up, then again after the interval
    finally:
        context.close()
    assert calls[0] is settings
    count = len(calls)
    time.sleep(0.3)
    assert len(calls) == count  # stopped with the server
    assert not [t for t in threading.enumerate() if t.name == retention.THREAD_NAME]


def test_the_start_up_purge_deletes_what_is_old(keiri_home: Path) -> None:
    from keiri_agent.api.context import ApiContext

    history = AnswerHistory(Workspace(keiri_home))
    history.append("古い質問", "古い回答")
    history.append("新しい質問", "新しい回答")
    lines = history.file.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["asked_at"] = OLD.isoformat(timespec="seconds")
    history.file.write_text(
        "\n".join([json.dumps(first, ensure_ascii=False), lines[1]]) + "\n", encoding="utf-8"
    )
    context = ApiContext(Settings())
    context.start()
    try:
        deadline = time.monotonic() + 10
        while len(history.recent()) > 1 and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        context.close()
    assert [answer.question for answer in history.recent()] == ["新しい質問"]
