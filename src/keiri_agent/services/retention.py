"""Retention: what the workspace keeps is deleted once it is older than ``retention_days``.

    report = purge(settings)                          # dry run: what would be deleted
    report = purge(settings, dry_run=False)           # delete it
    report = purge(settings, days=7, dry_run=False)   # another retention than the setting

Each kind is aged by its own time (``KINDS`` names them, for programs and people):

- ``plan_runs``: ``runs/<plan_id>/<run_id>.state.json`` (a run's answers and vars,
  uploaded bytes included), its ``.lock``, its JSONL run log and any temporary copy
  of the state, by the state's ``updated_at``; files of a run without a state, by
  their modification time. A run is deleted only while this process holds its run
  lock (``plans.run.run_lock``), so a run that a live process owns (running, being
  resumed) is never deleted: it is listed in ``report.kept``. So is a run whose state
  cannot be read (its status is unknown): the report names its file.
- ``datasets``: the saved analysis files (``SavedDatasets``), by when they were last
  saved or loaded (the folder's modification time, as ``SavedDatasets.prune``); the
  conversation links to a deleted copy or a deleted conversation go with them.
- ``conversations``: the analysis conversations (LangGraph checkpoints), by their
  last checkpoint's time.
- ``research_notes``: rows by ``created_at``.
- ``runs`` / ``run_events``: the run service's runs (research, Plan) by ``updated_at``
  (a running run's heartbeat, renewed every few seconds), each with all its events.
- ``helpdesk_answers``: lines of ``.keiri/helpdesk_answers.jsonl`` by ``asked_at``.
- ``design_metrics``: lines of ``logs/design_generations.jsonl`` by ``timestamp``.
- ``design_drafts``: the 設計 drafts (``.keiri/design_drafts/<id>.json``,
  ``services.plan_drafts``), by when each was last saved (the file's modification
  time: every save rewrites it).

What a user registered to keep (Plans in ``designs/``, knowledge bases and their
indexes) and caches without business data (``.keiri/design/``) are not purged.

A dry run deletes nothing and creates nothing that was not there (a store that does
not exist yet is not opened). Deleting is idempotent: two server processes purging
at once skip what the other deleted. A kind that fails (a database out of reach) is
reported with its ``KeiriAgentError``; the other kinds are still purged.

``PurgeSchedule`` is ``keiri-agent serve``'s daily purge: a daemon thread that calls
``scheduled_purge`` at start-up and then every ``PURGE_INTERVAL_S``.
"""

from __future__ import annotations

import json
import logging
import re
import shutil
import threading
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from keiri_agent.config import Settings
from keiri_agent.errors import ExecutionError, KeiriAgentError, RunInProgressError, UserInputError
from keiri_agent.plans.run.run_lock import LOCK_SUFFIX, RunLock
from keiri_agent.plans.run.run_state import read_state
from keiri_agent.private import write_private
from keiri_agent.services.answer_history import AnswerHistory
from keiri_agent.services.saved_datasets import SavedDatasets
from keiri_agent.workspace import Workspace

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver

log = logging.getLogger(__name__)

MIN_DAYS = 1
MAX_DAYS = 3650
PURGE_INTERVAL_S = 24 * 60 * 60
"""How often ``keiri-agent serve`` purges (after the purge at start-up)."""
THREAD_NAME = "retention-purge"

KINDS: dict[str, str] = {
    "plan_runs": "Plan の実行記録（状態・ログ）",
    "datasets": "データ分析の保存ファイル",
    "conversations": "データ分析の会話",
    "research_notes": "調査メモ",
    "runs": "実行の記録（調査・Plan）",
    "run_events": "実行のイベント",
    "helpdesk_answers": "ヘルプデスクの回答履歴",
    "design_metrics": "Plan 生成の記録（logs/）",
    "design_drafts": "設計の下書き",
    "audit_log": "監査ログ（保存期間は audit_retention_days）",
}
"""Each kind purged: its machine name and how it is shown."""

KEPT_REASONS: dict[str, str] = {
    "locked": "ほかの処理が実行中のため残しました（終わってから、もう一度削除してください）",
    "lock_unknown": "実行中かどうかを確かめられないため残しました",
    "unreadable": "状態ファイルを読めないため残しました（不要ならファイルを削除してください）",
    "delete_failed": "削除できませんでした",
}

_STATE = ".state.json"
_RUN_ID = r"(?P<run_id>[A-Za-z0-9_\-]{1,100})"
_RUN_LOG = re.compile(rf"^\d{{8}}T\d{{6}}Z-{_RUN_ID}\.jsonl$")
_STATE_TEMP = re.compile(rf"^\.{_RUN_ID}\.state\.json\..+\.tmp$")
"""A state copy that ``private.write_private`` left when its process died mid-save."""
_DATASET_REF = re.compile(r"^[0-9a-f]{16}$")


@dataclass
class KindSummary:
    """What one kind holds past the retention: how many, how large, since when."""

    kind: str
    count: int = 0
    bytes: int | None = 0
    """Sizes of the files (``None`` for database rows)."""
    oldest: datetime | None = None
    error: KeiriAgentError | None = None

    @property
    def label(self) -> str:
        return KINDS[self.kind]

    def add(self, moment: datetime, size: int | None = None) -> None:
        self.count += 1
        self.bytes = None if size is None or self.bytes is None else self.bytes + size
        if self.oldest is None or moment < self.oldest:
            self.oldest = moment

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "label": self.label,
            "count": self.count,
            "bytes": self.bytes,
            "oldest": self.oldest.isoformat() if self.oldest else None,
            "error": self.error.to_dict() if self.error else None,
        }


@dataclass(frozen=True)
class KeptItem:
    """An item past the retention that was kept, and why (``KEPT_REASONS``)."""

    kind: str
    item: str
    reason: str
    message: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class PurgeReport:
    """What a purge found (dry run) or deleted, kind by kind, and what it kept."""

    days: int
    cutoff: datetime
    dry_run: bool
    kinds: dict[str, KindSummary] = field(
        default_factory=lambda: {kind: KindSummary(kind) for kind in KINDS}
    )
    kept: list[KeptItem] = field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(kind.count for kind in self.kinds.values())

    @property
    def errors(self) -> list[KeiriAgentError]:
        return [kind.error for kind in self.kinds.values() if kind.error is not None]

    def keep(self, kind: str, item: str, reason: str, detail: str = "") -> None:
        message = KEPT_REASONS[reason] + (f": {detail}" if detail else "")
        self.kept.append(KeptItem(kind, item, reason, message))

    def to_dict(self) -> dict[str, Any]:
        return {
            "days": self.days,
            "cutoff": self.cutoff.isoformat(),
            "dry_run": self.dry_run,
            "kinds": [kind.to_dict() for kind in self.kinds.values()],
            "kept": [item.to_dict() for item in self.kept],
        }


def purge(settings: Settings, *, days: int | None = None, dry_run: bool = True) -> PurgeReport:
    """List (``dry_run``) or delete what is older than ``days`` (default the setting
    ``retention_days``); see the module docstring. ``UserInputError`` for ``days``
    out of range; a kind that fails is reported in its ``KindSummary.error``."""
    days = settings.storage.retention_days if days is None else days
    if not MIN_DAYS <= days <= MAX_DAYS:
        raise UserInputError(
            f"保存期間は {MIN_DAYS}〜{MAX_DAYS} 日で指定してください（指定: {days} 日）",
            hint="--days か KEIRI_AGENT_RETENTION_DAYS に日数を指定してください（既定: 30 日）",
            code="RETENTION_DAYS_INVALID",
            details={"days": days},
        )
    report = PurgeReport(days, datetime.now(UTC) - timedelta(days=days), dry_run)
    workspace = Workspace.from_settings(settings)
    purged_threads: set[str] = set()
    steps: list[tuple[str, Callable[[], object]]] = [
        ("plan_runs", lambda: _plan_runs(workspace, report)),
        ("conversations", lambda: purged_threads.update(_conversations(settings, report))),
        ("datasets", lambda: _datasets(workspace, report, purged_threads)),
        ("research_notes", lambda: _research(settings, report)),
        ("helpdesk_answers", lambda: _helpdesk_answers(workspace, report)),
        ("design_metrics", lambda: _design_metrics(workspace, report)),
        ("design_drafts", lambda: _design_drafts(workspace, report)),
        ("audit_log", lambda: _audit_log(settings, report)),
    ]
    for kind, step in steps:
        try:
            step()
        except KeiriAgentError as error:
            report.kinds[kind].error = error
        except OSError as error:
            report.kinds[kind].error = ExecutionError(
                f"{KINDS[kind]}を整理できませんでした: {error.strerror or error}",
                hint="作業フォルダー（KEIRI_AGENT_HOME）の権限とディスクを確認してください",
                code="PURGE_FAILED",
                details={"kind": kind},
            )
    return report


# --- Plan runs ----------------------------------------------------------------------


def _plan_runs(workspace: Workspace, report: PurgeReport) -> None:
    summary = report.kinds["plan_runs"]
    runs_dir = workspace.runs
    for (folder, run_id), files in sorted(_run_files(runs_dir).items()):
        state = folder / f"{run_id}{_STATE}"
        moment = _run_time(state, files)
        if moment is None:
            if _newest(files) < report.cutoff:
                report.keep("plan_runs", run_id, "unreadable", str(state))
            continue
        if moment >= report.cutoff:
            continue
        lock = RunLock(state, run_id)
        if report.dry_run and not lock.path.exists():
            summary.add(moment, _size(files))  # no lock file: nobody holds it
            continue
        try:
            lock.acquire()
        except RunInProgressError:
            report.keep("plan_runs", run_id, "locked")
            continue
        except KeiriAgentError:
            report.keep("plan_runs", run_id, "lock_unknown")
            continue
        try:
            if report.dry_run:
                summary.add(moment, _size(files))
                continue
            if state.exists() and _run_time(state, files) != moment:
                continue  # saved again meanwhile (resumed and ended): no longer old
            size = _size(files)
            try:
                for path in files:
                    if path != lock.path:
                        path.unlink(missing_ok=True)
            except OSError as error:
                report.keep("plan_runs", run_id, "delete_failed", error.strerror or str(error))
                continue
            summary.add(moment, size)
        finally:
            lock.release()
        lock.path.unlink(missing_ok=True)  # the state is gone: nobody locks it again
        _remove_empty_folders(folder, runs_dir)


def _run_files(runs_dir: Path) -> dict[tuple[Path, str], list[Path]]:
    """(folder, run id) → the run's files: state, lock, run log, temporary state copies."""
    groups: dict[tuple[Path, str], list[Path]] = {}
    if not runs_dir.is_dir():
        return groups
    for path in runs_dir.rglob("*"):
        name = path.name
        if name.endswith(_STATE):
            run_id = name.removesuffix(_STATE)
        elif name.endswith(_STATE + LOCK_SUFFIX):
            run_id = name.removesuffix(_STATE + LOCK_SUFFIX)
        elif match := _RUN_LOG.match(name) or _STATE_TEMP.match(name):
            run_id = match["run_id"]
        else:
            continue  # not a run's file: left alone
        if not re.fullmatch(_RUN_ID, run_id) or not path.is_file():
            continue
        groups.setdefault((path.parent, run_id), []).append(path)
    return groups


def _run_time(state: Path, files: list[Path]) -> datetime | None:
    """When the run was last saved (its state's ``updated_at``); for files without a
    state, their newest modification time; None when the state cannot be read."""
    if not state.exists():
        return _newest(files)
    try:
        return _moment(read_state(state).updated_at)
    except KeiriAgentError:
        return None


def _remove_empty_folders(folder: Path, root: Path) -> None:
    while folder != root and folder.is_relative_to(root):
        try:
            folder.rmdir()
        except OSError:  # not empty (or gone): stop
            return
        folder = folder.parent


# --- saved analysis files and conversations -----------------------------------------


def _datasets(workspace: Workspace, report: PurgeReport, purged_threads: set[str]) -> None:
    saved = SavedDatasets(workspace)
    if not saved.folder.is_dir():
        return
    summary = report.kinds["datasets"]
    for folder in sorted(saved.folder.iterdir()):
        if not _DATASET_REF.match(folder.name) or not folder.is_dir():
            continue
        moment = _mtime(folder)
        if moment >= report.cutoff:
            continue
        size = _size(path for path in folder.rglob("*") if path.is_file())
        if not report.dry_run:
            try:
                shutil.rmtree(folder)
            except FileNotFoundError:
                continue
            except OSError as error:
                report.keep("datasets", folder.name, "delete_failed", error.strerror or "")
                continue
        summary.add(moment, size)
    if report.dry_run:
        return
    for link in (saved.folder / "threads").glob("*.json"):
        ref = saved.ref_of(link.stem)
        if link.stem in purged_threads or ref is None or not (saved.folder / ref).is_dir():
            link.unlink(missing_ok=True)


def _conversations(settings: Settings, report: PurgeReport) -> set[str]:
    """Purge the analysis conversations; the ids of those purged (or to be)."""
    workspace = Workspace.from_settings(settings)
    if settings.storage.database_url is None and not workspace.checkpoint_file.exists():
        return set()
    from keiri_agent.storage.checkpointer import open_checkpointer

    summary = report.kinds["conversations"]
    purged: set[str] = set()
    with open_checkpointer(settings) as saver:
        for thread_id in _thread_ids(saver):
            item = saver.get_tuple({"configurable": {"thread_id": thread_id}})
            moment = _moment(item.checkpoint.get("ts")) if item is not None else None
            if moment is None or moment >= report.cutoff:
                continue
            if not report.dry_run:
                saver.delete_thread(thread_id)
            summary.add(moment)
            purged.add(thread_id)
    return purged


def _thread_ids(saver: BaseCheckpointSaver[Any]) -> list[str]:
    from langgraph.checkpoint.sqlite import SqliteSaver

    if isinstance(saver, SqliteSaver):
        with saver.cursor(transaction=False) as cursor:
            rows = cursor.execute("SELECT DISTINCT thread_id FROM checkpoints").fetchall()
        return [str(row[0]) for row in rows]
    found = (str(item.config["configurable"]["thread_id"]) for item in saver.list(None))
    return list(dict.fromkeys(found))


# --- the application database ---------------------------------------------------------


def _research(settings: Settings, report: PurgeReport) -> None:
    """Research notes by ``created_at``; runs by ``updated_at`` with their events."""
    database_file = Workspace.from_settings(settings).database_file
    if settings.storage.database_url is None and not database_file.exists():
        return
    from sqlalchemy import func, select

    from keiri_agent.agents.research.notes import SqlNoteStore
    from keiri_agent.storage.schema import research_notes, run_events, runs

    cutoff = report.cutoff
    old_notes = research_notes.c.created_at < cutoff
    old_runs = runs.c.updated_at < cutoff
    old_run_ids = select(runs.c.run_id).where(old_runs).scalar_subquery()
    old_events = run_events.c.run_id.in_(old_run_ids)
    engine = SqlNoteStore.from_settings(settings).engine
    try:
        with engine.begin() as connection:
            notes, notes_oldest = connection.execute(
                select(func.count(), func.min(research_notes.c.created_at)).where(old_notes)
            ).one()
            run_count, runs_oldest = connection.execute(
                select(func.count(), func.min(runs.c.updated_at)).where(old_runs)
            ).one()
            events = connection.execute(
                select(func.count()).select_from(run_events).where(old_events)
            ).scalar_one()
            if not report.dry_run:
                connection.execute(run_events.delete().where(old_events))
                connection.execute(runs.delete().where(old_runs))
                connection.execute(research_notes.delete().where(old_notes))
    finally:
        engine.dispose()
    for kind, count, oldest in (
        ("research_notes", notes, notes_oldest),
        ("runs", run_count, runs_oldest),
        ("run_events", events, runs_oldest),
    ):
        summary = report.kinds[kind]
        summary.bytes = None
        summary.count = int(count)
        summary.oldest = _utc(oldest) if count and oldest is not None else None


def _audit_log(settings: Settings, report: PurgeReport) -> None:
    """Audit entries older than ``audit_retention_days`` (not ``days``: the trail is
    kept for years), pruned so the chain stays verifiable (``AuditTrail.prune``)."""
    database_file = Workspace.from_settings(settings).database_file
    if settings.storage.database_url is None and not database_file.exists():
        return
    from sqlalchemy import func, select

    from keiri_agent.people.audit import AuditTrail
    from keiri_agent.people.operator import os_login
    from keiri_agent.storage.engine import create_engine
    from keiri_agent.storage.migrate import upgrade
    from keiri_agent.storage.schema import audit_log

    cutoff = datetime.now(UTC) - timedelta(days=settings.storage.audit_retention_days)
    engine = create_engine(settings)
    try:
        upgrade(engine)
        with engine.connect() as connection:
            count, oldest = connection.execute(
                select(func.count(), func.min(audit_log.c.at)).where(audit_log.c.at < cutoff)
            ).one()
        if count and not report.dry_run:
            AuditTrail(engine).prune(cutoff, os_login())
    finally:
        engine.dispose()
    summary = report.kinds["audit_log"]
    summary.bytes = None
    summary.count = int(count)
    summary.oldest = _utc(oldest) if count and oldest is not None else None


# --- JSONL files -----------------------------------------------------------------------


def _helpdesk_answers(workspace: Workspace, report: PurgeReport) -> None:
    _lines(AnswerHistory(workspace).file, "asked_at", report.kinds["helpdesk_answers"], report)


def _design_metrics(workspace: Workspace, report: PurgeReport) -> None:
    from keiri_agent.plans.design.metrics import METRICS_FILE

    _lines(workspace.logs / METRICS_FILE, "timestamp", report.kinds["design_metrics"], report)


def _design_drafts(workspace: Workspace, report: PurgeReport) -> None:
    from keiri_agent.services.plan_drafts import DRAFT_ID, FOLDER

    summary = report.kinds["design_drafts"]
    for path in sorted((workspace.state / FOLDER).glob("*.json")):
        if not DRAFT_ID.fullmatch(path.stem):
            continue
        try:
            stat = path.stat()
        except FileNotFoundError:  # another process purged it
            continue
        moment = datetime.fromtimestamp(stat.st_mtime, UTC)
        if moment >= report.cutoff:
            continue
        summary.add(moment, stat.st_size)
        if not report.dry_run:
            path.unlink(missing_ok=True)


def _lines(path: Path, time_field: str, summary: KindSummary, report: PurgeReport) -> None:
    """Drop the lines of the JSONL file ``path`` whose ``time_field`` is past the
    retention (a line without a readable time is kept)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return
    kept: list[bytes] = []
    for line in data.splitlines(keepends=True):
        try:
            moment = _moment(json.loads(line).get(time_field))
        except (ValueError, AttributeError):
            moment = None
        if moment is not None and moment < report.cutoff:
            summary.add(moment, len(line))
        else:
            kept.append(line)
    if summary.count and not report.dry_run:
        write_private(path, b"".join(kept))


# --- helpers ---------------------------------------------------------------------------


def _moment(value: Any) -> datetime | None:
    """An ISO 8601 time (``Z`` or an offset; none: UTC) in UTC, or None."""
    if not isinstance(value, str):
        return None
    try:
        return _utc(datetime.fromisoformat(value))
    except ValueError:
        return None


def _utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _mtime(path: Path) -> datetime:
    return datetime.fromtimestamp(path.stat().st_mtime, UTC)


def _newest(files: list[Path]) -> datetime:
    times = []
    for path in files:
        try:
            times.append(_mtime(path))
        except FileNotFoundError:
            continue
    return max(times, default=datetime.now(UTC))


def _size(files: Iterator[Path] | list[Path]) -> int:
    total = 0
    for path in files:
        try:
            total += path.stat().st_size
        except FileNotFoundError:
            continue
    return total


# --- the server's daily purge -------------------------------------------------------------


def scheduled_purge(settings: Settings) -> None:
    """One purge of ``PurgeSchedule``: delete, then log one line of counts (no user data)."""
    try:
        report = purge(settings, dry_run=False)
    except Exception as error:  # the server goes on; the next purge tries again
        log.warning("retention: purge failed (%s)", type(error).__name__)
        return
    deleted = ", ".join(f"{k.count} {k.kind}" for k in report.kinds.values() if k.count)
    failed = ", ".join(f"{k.kind} ({k.error.code})" for k in report.kinds.values() if k.error)
    log.info(
        "retention: deleted %s older than %d days; kept %d past retention%s",
        deleted or "nothing",
        report.days,
        len(report.kept),
        f"; failed: {failed}" if failed else "",
    )
    if failed:
        log.warning("retention: could not purge %s", failed)


class PurgeSchedule:
    """A daemon thread that purges at once, then every ``PURGE_INTERVAL_S``, until ``stop``."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=THREAD_NAME, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            scheduled_purge(self.settings)
            if self._stop.wait(PURGE_INTERVAL_S):
                return

    def stop(self, timeout_s: float = 5.0) -> None:
        """Stop purging; waits up to ``timeout_s`` for a purge under way to end."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout_s)
