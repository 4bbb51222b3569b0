"""The research note store (``research_notes``) on SQLite and PostgreSQL."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
from datetime import UTC, datetime, timedelta, timezone

import pytest
from sqlalchemy import text

from keiri_agent.agents.research.models import DocSnippet, NoteStore, ResearchNote
from keiri_agent.agents.research.notes import (
    MAX_SOURCES,
    MAX_SUMMARY_BYTES,
    NoteRejectedError,
    SqlNoteStore,
)
from keiri_agent.config import Settings

SNIPPETS = (
    DocSnippet(
        ref="規程.pdf#3",
        text="適格請求書には登録番号を記載する。",
        title="経理規程",
        document="規程.pdf",
        page=3,
        heading="第5条 請求書",
        score=0.82,
        origin="kb:経理",
    ),
    DocSnippet(
        ref="https://www.nta.go.jp/invoice#a",
        text="インボイス制度の概要",
        title="国税庁",
        source="web",
        url="https://www.nta.go.jp/invoice",
        origin="web:tavily",
    ),
)


@pytest.fixture
def store(app_database_url: str, monkeypatch: pytest.MonkeyPatch) -> SqlNoteStore:
    monkeypatch.setenv("KEIRI_AGENT_DATABASE_URL", app_database_url)
    store = SqlNoteStore.from_settings(Settings())
    yield store  # type: ignore[misc]
    store.engine.dispose()


def note(session_id: str, query: str, step_no: int = 0, **kwargs: object) -> ResearchNote:
    return ResearchNote(
        session_id=session_id,
        step_no=step_no,
        query=query,
        summary_md=f"**{query}** の要約",
        **kwargs,  # type: ignore[arg-type]
    )


def test_the_store_is_a_note_store(store: SqlNoteStore) -> None:
    assert isinstance(store, SqlNoteStore)
    kept: NoteStore = store
    assert kept.notes("none") == []


def test_notes_round_trip_with_their_sources(store: SqlNoteStore) -> None:
    before = datetime.now(UTC)
    added = store.add(note("s1", "登録番号の記載", sources=SNIPPETS))

    assert added.id is not None and added.step_no == 1
    [stored] = store.notes("s1")
    assert stored == added
    assert stored.sources == SNIPPETS
    assert stored.sources[0].label() == "規程.pdf p.3 「第5条 請求書」"
    assert stored.created_at is not None and stored.created_at.tzinfo is not None
    assert before - timedelta(seconds=1) <= stored.created_at <= datetime.now(UTC)


def test_created_at_is_kept_in_utc(store: SqlNoteStore) -> None:
    tokyo = timezone(timedelta(hours=9))
    store.add(note("s1", "q", created_at=datetime(2026, 4, 1, 9, 30, tzinfo=tokyo)))

    [stored] = store.notes("s1")
    assert stored.created_at == datetime(2026, 4, 1, 0, 30, tzinfo=UTC)
    assert stored.created_at.utcoffset() == timedelta(0)


def test_steps_are_numbered_per_session_and_listed_in_order(store: SqlNoteStore) -> None:
    store.add(note("a", "a1"))
    store.add(note("b", "b1"))
    store.add(note("a", "a5", step_no=5))
    store.add(note("a", "a6"))
    store.add(note("a", "a3", step_no=3))

    assert [(n.step_no, n.query) for n in store.notes("a")] == [
        (1, "a1"), (3, "a3"), (5, "a5"), (6, "a6"),
    ]  # fmt: skip
    assert [(n.step_no, n.query) for n in store.notes("b")] == [(1, "b1")]


def test_a_step_number_the_session_has_is_refused(store: SqlNoteStore) -> None:
    store.add(note("a", "first", step_no=2))

    with pytest.raises(NoteRejectedError, match="手順 2 の調査メモがすでにあります"):
        store.add(note("a", "again", step_no=2))
    assert [n.query for n in store.notes("a")] == ["first"]


def test_sessions_newest_first_with_counts(store: SqlNoteStore) -> None:
    t0 = datetime(2026, 11, 1, 9, 0, tzinfo=UTC)
    store.add(note("old", "1", created_at=t0))
    store.add(note("old", "2", created_at=t0 + timedelta(minutes=1)))
    store.add(note("new", "1", created_at=t0 + timedelta(hours=2)))

    assert store.sessions() == [
        ("new", 1, t0 + timedelta(hours=2)),
        ("old", 2, t0 + timedelta(minutes=1)),
    ]


def test_delete_session_leaves_the_others(store: SqlNoteStore) -> None:
    for query in ("1", "2", "3"):
        store.add(note("gone", query))
    store.add(note("kept", "k"))

    assert store.delete_session("gone") == 3
    assert store.delete_session("gone") == 0
    assert store.notes("gone") == []
    assert [n.query for n in store.notes("kept")] == ["k"]
    assert [s[0] for s in store.sessions()] == ["kept"]
    assert store.add(note("gone", "again")).step_no == 1


def test_concurrent_adds_get_unique_step_numbers(store: SqlNoteStore) -> None:
    workers, per_worker = 8, 5
    errors: list[BaseException] = []
    start = threading.Barrier(workers)

    def work(worker: int) -> None:
        start.wait()
        try:
            for i in range(per_worker):
                store.add(note("busy", f"w{worker}-{i}"))
        except BaseException as error:  # reported by the assertion below
            errors.append(error)

    threads = [threading.Thread(target=work, args=(w,)) for w in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == []
    stored = store.notes("busy")
    assert sorted(n.step_no for n in stored) == list(range(1, workers * per_worker + 1))
    assert len({n.query for n in stored}) == workers * per_worker


def test_notes_persist_across_engines_and_processes(
    store: SqlNoteStore, app_database_url: str
) -> None:
    store.add(note("s", "in this process", sources=SNIPPETS[:1]))
    script = (
        "from keiri_agent.agents.research.models import ResearchNote\n"
        "from keiri_agent.agents.research.notes import SqlNoteStore\n"
        "from keiri_agent.config import Settings\n"
        "store = SqlNoteStore.from_settings(Settings())\n"
        "print([n.query for n in store.notes('s')])\n"
        "store.add(ResearchNote('s', 0, 'in another process', '要約'))\n"
    )
    env = {**os.environ, "KEIRI_AGENT_DATABASE_URL": app_database_url}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['in this process']"

    again = SqlNoteStore.from_settings(Settings())
    try:
        assert [(n.step_no, n.query) for n in again.notes("s")] == [
            (1, "in this process"),
            (2, "in another process"),
        ]
        assert again.notes("s")[0].sources == SNIPPETS[:1]
    finally:
        again.engine.dispose()


def test_a_damaged_sources_row_is_listed_without_sources(
    store: SqlNoteStore, caplog: pytest.LogCaptureFixture
) -> None:
    store.add(note("s", "good", sources=SNIPPETS))
    damaged = store.add(note("s", "damaged", sources=SNIPPETS))
    store.add(note("s", "not a list", sources=SNIPPETS))
    with store.engine.begin() as connection:
        if store.engine.dialect.name == "sqlite":
            connection.execute(
                text("UPDATE research_notes SET sources = '[{\"ref\": broken' WHERE id = :id"),
                {"id": damaged.id},
            )
        else:  # PostgreSQL validates JSON: a valid value of the wrong shape instead
            connection.execute(
                text('UPDATE research_notes SET sources = \'[{"text": "no ref"}]\' WHERE id = :id'),
                {"id": damaged.id},
            )
        connection.execute(
            text(
                "UPDATE research_notes SET sources = '{\"ref\": \"x\"}' WHERE query = 'not a list'"
            )
        )

    with caplog.at_level(logging.WARNING, logger="keiri_agent.agents.research.notes"):
        listed = store.notes("s")

    assert [(n.query, len(n.sources)) for n in listed] == [
        ("good", 2), ("damaged", 0), ("not a list", 0),
    ]  # fmt: skip
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 2
    assert f"research note {damaged.id} has damaged sources" in warnings[0]


def test_oversized_notes_are_refused_in_japanese(store: SqlNoteStore) -> None:
    fits = "あ" * (MAX_SUMMARY_BYTES // 3)  # 3 bytes each in UTF-8
    store.add(ResearchNote("s", 0, "fits", fits, sources=SNIPPETS * (MAX_SOURCES // 2)))

    with pytest.raises(NoteRejectedError, match="要約が大きすぎる") as too_long:
        store.add(ResearchNote("s", 0, "long", fits + "ああ"))
    assert too_long.value.details["bytes"] == len((fits + "ああ").encode()) > MAX_SUMMARY_BYTES
    with pytest.raises(NoteRejectedError, match="出典が多すぎる") as too_many:
        store.add(ResearchNote("s", 0, "many", "要約", sources=SNIPPETS * 26))
    assert too_many.value.details == {"sources": 52, "limit": MAX_SOURCES}
    with pytest.raises(NoteRejectedError, match="セッションIDが不正"):
        store.add(ResearchNote(" ", 0, "q", "要約"))
    with pytest.raises(NoteRejectedError, match="セッションIDが不正"):
        store.add(ResearchNote("x" * 129, 0, "q", "要約"))
    assert [n.query for n in store.notes("s")] == ["fits"]
