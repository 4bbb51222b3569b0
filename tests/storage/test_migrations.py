"""Schema migrations of the application database, on SQLite and PostgreSQL."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import sqlalchemy
from sqlalchemy import text

from keiri_agent.config import Settings
from keiri_agent.storage.engine import create_engine
from keiri_agent.storage.migrate import (
    DatabaseVersionError,
    current_revision,
    head_revision,
    upgrade,
)
from keiri_agent.storage.schema import VERSION_TABLE

UPGRADE_SCRIPT = """
import sys
from keiri_agent.config import Settings
from keiri_agent.storage.engine import create_engine
from keiri_agent.storage.migrate import upgrade

print("ready", flush=True)
sys.stdin.readline()  # start together
upgrade(create_engine(Settings()))
print("ok")
"""


@pytest.fixture
def engine(app_database_url: str, monkeypatch: pytest.MonkeyPatch) -> sqlalchemy.Engine:
    monkeypatch.setenv("KEIRI_AGENT_DATABASE_URL", app_database_url)
    engine = create_engine(Settings())
    yield engine  # type: ignore[misc]
    engine.dispose()


def _columns(engine: sqlalchemy.Engine, table: str) -> set[str]:
    return {column["name"] for column in sqlalchemy.inspect(engine).get_columns(table)}


def test_upgrade_creates_research_notes_with_its_session_index(engine: sqlalchemy.Engine) -> None:
    assert current_revision(engine) is None

    upgrade(engine)

    assert current_revision(engine) == head_revision() == "0007"
    assert _columns(engine, "research_notes") == {
        "id", "session_id", "step_no", "query", "summary_md", "sources", "created_at",
    }  # fmt: skip
    indexes = sqlalchemy.inspect(engine).get_indexes("research_notes")
    assert ("ix_research_notes_session_id", ["session_id"]) in [
        (index["name"], index["column_names"]) for index in indexes
    ]


def test_upgrade_creates_the_run_and_event_tables(engine: sqlalchemy.Engine) -> None:
    upgrade(engine)

    assert _columns(engine, "runs") == {
        "run_id", "kind", "subject", "title", "owner", "status", "inputs", "result", "error",
        "last_seq", "attempt", "cancel_requested", "worker", "lease_until", "created_at",
        "updated_at",
    }  # fmt: skip
    assert _columns(engine, "run_events") == {
        "id", "run_id", "seq", "source", "kind", "timestamp", "payload",
    }  # fmt: skip
    names = set(sqlalchemy.inspect(engine).get_table_names())
    assert not names & {"research_runs", "research_events"}  # merged into runs
    # the schema metadata the code writes with matches the migrated tables
    from keiri_agent.storage.schema import metadata

    for table in metadata.tables.values():
        assert _columns(engine, table.name) == {column.name for column in table.columns}


def test_research_runs_of_revision_0002_are_carried_into_runs(engine: sqlalchemy.Engine) -> None:
    """A database written before the run service: its research runs and their events
    are runs of kind ``research`` afterwards; an unfinished one is taken up again."""
    from alembic import command

    from keiri_agent.storage.migrate import alembic_config

    with engine.begin() as connection:
        command.upgrade(alembic_config(connection), "0002")
        connection.execute(
            text(
                "INSERT INTO research_runs (run_id, session_id, question, kb_names, status, "
                "result, error, last_seq, cancel_requested, worker, created_at, updated_at) "
                "VALUES ('run_a', 's1', '登録番号は？', '[\"research\"]', 'running', NULL, "
                "NULL, 2, false, 'host:1', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
            )
        )
        for seq in (1, 2):
            connection.execute(
                text(
                    "INSERT INTO research_events (run_id, seq, kind, timestamp, payload) "
                    f"VALUES ('run_a', {seq}, 'plan', '2026-01-01T00:00:00.000Z', '{{}}')"
                )
            )

    upgrade(engine)

    from keiri_agent.runs.store import RunStore

    store = RunStore(engine)
    run = store.get("run_a")
    assert run is not None
    assert (run.kind, run.subject, run.title, run.status, run.last_seq) == (
        "research", "s1", "登録番号は？", "running", 2,
    )  # fmt: skip
    assert run.inputs == {"question": "登録番号は？", "session_id": "s1", "kb_names": ["research"]}
    assert [(e.seq, e.source, e.kind) for e in store.events_after("run_a", 0)] == [
        (1, "research", "plan"), (2, "research", "plan"),
    ]  # fmt: skip
    assert [r.run_id for r in store.expired(now=10.0)] == ["run_a"]  # its lease has ended


def test_upgrade_is_idempotent_and_keeps_rows(engine: sqlalchemy.Engine) -> None:
    upgrade(engine)
    with engine.begin() as connection:
        connection.execute(
            text(
                "INSERT INTO research_notes (session_id, step_no, query, summary_md, sources, "
                "created_at) VALUES ('s', 1, 'q', 'm', '[]', CURRENT_TIMESTAMP)"
            )
        )

    upgrade(engine)
    upgrade(engine)

    with engine.connect() as connection:
        assert connection.execute(text("SELECT count(*) FROM research_notes")).scalar() == 1
        versions = connection.execute(text(f"SELECT version_num FROM {VERSION_TABLE}")).all()
    assert [row[0] for row in versions] == ["0007"]


def test_processes_starting_at_once_migrate_once(
    app_database_url: str, engine: sqlalchemy.Engine
) -> None:
    env = {**os.environ, "KEIRI_AGENT_DATABASE_URL": app_database_url}
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", UPGRADE_SCRIPT],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    for process in processes:
        assert process.stdout is not None
        assert process.stdout.readline().strip() == "ready"
    for process in processes:
        assert process.stdin is not None
        process.stdin.write("go\n")
        process.stdin.flush()
    results = [process.communicate(timeout=120) for process in processes]

    outcomes = [
        (process.returncode, out.strip())
        for process, (out, _) in zip(processes, results, strict=True)
    ]
    assert outcomes == [(0, "ok")] * 3, [err for _, err in results]
    assert current_revision(engine) == "0007"
    assert "research_notes" in sqlalchemy.inspect(engine).get_table_names()


def test_a_database_newer_than_the_code_is_a_clear_error(engine: sqlalchemy.Engine) -> None:
    upgrade(engine)
    with engine.begin() as connection:
        connection.execute(text(f"UPDATE {VERSION_TABLE} SET version_num = '9999'"))

    with pytest.raises(DatabaseVersionError) as raised:
        upgrade(engine)

    error = raised.value
    assert error.code == "DATABASE_TOO_NEW"
    assert "新しい形式" in error.message and "9999" in error.message
    assert error.hint is not None and "最新版に更新" in error.hint
    assert current_revision(engine) == "9999"


def test_the_sqlite_lock_file_sits_next_to_the_database(keiri_home: Path) -> None:
    engine = create_engine(Settings())
    try:
        upgrade(engine)
    finally:
        engine.dispose()

    database = keiri_home / ".keiri" / "keiri.db"
    assert database.is_file()
    assert (database.parent / "keiri.db.migrate-lock").is_file()
