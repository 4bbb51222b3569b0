"""The note store of the deep-research agent: ``research_notes`` in the application database.

``SqlNoteStore`` implements ``models.NoteStore`` over a SQLAlchemy engine (SQLite
under the workspace or PostgreSQL by ``KEIRI_AGENT_DATABASE_URL``). Notes are
partitioned by session: listed in step order, deleted per session. A note's step
number is assigned atomically per session when it is not given (``step_no`` 0),
so concurrent adds from threads or processes never share a number. Sizes are
bounded (``MAX_SUMMARY_BYTES``, ``MAX_SOURCES``); a row whose ``sources`` JSON is
damaged is still listed, without sources, and a warning is logged.

Personal data (``pii``: マイナンバー, phone numbers, e-mail addresses, bank account and
card numbers — the kinds of the ``pii_filter`` setting) in a note's summary and in its
sources' passages, titles and headings is replaced by typed placeholders before the
note is stored; the stored note says how many of each kind (``pii_redacted``).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import sqlalchemy
from sqlalchemy import Text, cast, func, select
from sqlalchemy.exc import IntegrityError

from keiri_agent.agents.research.models import DocSnippet, ResearchNote
from keiri_agent.config import Settings
from keiri_agent.errors import UserInputError
from keiri_agent.pii import KINDS, PiiKind, add_counts, checked_kinds, redact
from keiri_agent.storage.engine import create_engine
from keiri_agent.storage.migrate import upgrade
from keiri_agent.storage.schema import SESSION_ID_MAX_LENGTH, research_notes

log = logging.getLogger(__name__)

SESSION_ID = re.compile(r"[\w.\-]+")
"""A session id: letters (Japanese too), digits, ``_``, ``.`` and ``-`` — it is one
segment of the API's paths (``/api/research/sessions/<id>/notes``), so ``/``, ``?``,
``#``, ``%`` and spaces would make its notes unreachable."""


def checked_session_id(session_id: str | None) -> str | None:
    """``session_id`` stripped (``None`` when empty); ``UserInputError`` when it is
    longer than ``SESSION_ID_MAX_LENGTH`` or has a character outside ``SESSION_ID``."""
    value = (session_id or "").strip()
    if not value:
        return None
    only_dots = not value.strip(".")  # "." and ".." are path steps, not a segment
    if len(value) > SESSION_ID_MAX_LENGTH or not SESSION_ID.fullmatch(value) or only_dots:
        raise UserInputError(
            "セッション ID が正しくありません（使える文字: 英数字・かな漢字・_ . -）",
            hint=f"{SESSION_ID_MAX_LENGTH} 文字以内で / ? # % や空白を含まない ID にするか、"
            "空にして新しく始めてください",
            details={"session_id": value[:SESSION_ID_MAX_LENGTH]},
        )
    return value


MAX_SUMMARY_BYTES = 100_000
"""The largest ``summary_md`` a note keeps (UTF-8 bytes)."""

MAX_SOURCES = 50
"""The most sources one note keeps."""

STEP_RETRIES = 20
"""How often an add retries when another writer took the same step number first."""


class NoteRejectedError(UserInputError):
    """A note that cannot be kept: too large, or without a usable session id."""

    code = "NOTE_REJECTED"


class SqlNoteStore:
    """``models.NoteStore`` over the ``research_notes`` table of ``engine``.

    The engine's database must be migrated (``storage.migrate.upgrade``);
    ``from_settings`` does that. ``pii_kinds``: the personal data replaced before a
    note is stored (default every kind of ``pii.KINDS``; empty: none).
    """

    def __init__(self, engine: sqlalchemy.Engine, *, pii_kinds: Iterable[str] = KINDS) -> None:
        self.engine = engine
        self.pii_kinds = checked_kinds(pii_kinds)

    @classmethod
    def from_settings(cls, settings: Settings) -> SqlNoteStore:
        """The store of the configured application database, migrated to the head revision."""
        engine = create_engine(settings)
        upgrade(engine)
        return cls(engine, pii_kinds=settings.logs.pii_filter)

    def add(self, note: ResearchNote) -> ResearchNote:
        """Keep ``note``; the stored note (with ``id``, ``created_at`` and its step number).

        ``step_no`` 0 (or less) takes the session's next number. Raises
        ``NoteRejectedError`` for a summary over ``MAX_SUMMARY_BYTES``, more than
        ``MAX_SOURCES`` sources, an empty or too long session id, or a step number
        the session already has. The stored note has its personal data replaced
        (``pii_kinds``) and counted in ``pii_redacted``.
        """
        note = self.redacted(note)  # before the size check: a placeholder may be longer
        _check(note)
        created_at = _utc(note.created_at or datetime.now(UTC))
        values: dict[str, Any] = {
            "session_id": note.session_id,
            "query": note.query,
            "summary_md": note.summary_md,
            "sources": [snippet.to_dict() for snippet in note.sources],
            "created_at": created_at,
        }
        if note.step_no > 0:
            try:
                with self.engine.begin() as connection:
                    row_id = connection.execute(
                        research_notes.insert()
                        .values(step_no=note.step_no, **values)
                        .returning(research_notes.c.id)
                    ).scalar_one()
            except IntegrityError as error:
                raise _step_taken(note.session_id, note.step_no) from error
            return replace(note, id=row_id, created_at=created_at)
        for _attempt in range(STEP_RETRIES):
            try:
                with self.engine.begin() as connection:
                    row_id, step_no = connection.execute(
                        research_notes.insert()
                        .from_select(
                            [*values, "step_no"],
                            select(
                                *(
                                    sqlalchemy.literal(value, research_notes.c[name].type)
                                    for name, value in values.items()
                                ),
                                func.coalesce(func.max(research_notes.c.step_no), 0) + 1,
                            ).where(research_notes.c.session_id == note.session_id),
                        )
                        .returning(research_notes.c.id, research_notes.c.step_no)
                    ).one()
            except IntegrityError:
                continue
            return replace(note, id=row_id, step_no=step_no, created_at=created_at)
        raise NoteRejectedError(
            "調査メモを保存できませんでした（同じセッションへの書き込みが集中しています）",
            hint="少し待ってからもう一度実行してください",
            details={"session_id": note.session_id},
        )

    def redacted(self, note: ResearchNote) -> ResearchNote:
        """``note`` with the personal data of ``pii_kinds`` replaced in its summary and
        its sources' passages, titles and headings; ``pii_redacted`` counts them."""
        if not self.pii_kinds:
            return note
        counts: list[dict[PiiKind, int]] = []

        def clean(text: str) -> str:
            found = redact(text, self.pii_kinds)
            counts.append(dict(found.counts))
            return found.text

        summary = clean(note.summary_md)
        sources = tuple(
            replace(
                snippet,
                text=clean(snippet.text),
                title=clean(snippet.title),
                heading=None if snippet.heading is None else clean(snippet.heading),
            )
            for snippet in note.sources
        )
        return replace(note, summary_md=summary, sources=sources, pii_redacted=add_counts(*counts))

    def notes(self, session_id: str) -> list[ResearchNote]:
        """The session's notes in step order."""
        table = research_notes
        query = (
            select(
                table.c.id,
                table.c.session_id,
                table.c.step_no,
                table.c.query,
                table.c.summary_md,
                cast(table.c.sources, Text).label("sources"),
                table.c.created_at,
            )
            .where(table.c.session_id == session_id)
            .order_by(table.c.step_no)
        )
        with self.engine.connect() as connection:
            rows = connection.execute(query).all()
        return [
            ResearchNote(
                session_id=row.session_id,
                step_no=row.step_no,
                query=row.query,
                summary_md=row.summary_md,
                sources=_sources(row.sources, row.id),
                created_at=_utc(row.created_at),
                id=row.id,
            )
            for row in rows
        ]

    def sessions(self) -> list[tuple[str, int, datetime]]:
        """(session id, note count, last note time), newest first."""
        table = research_notes
        last = func.max(table.c.created_at)
        query = (
            select(table.c.session_id, func.count(), last)
            .group_by(table.c.session_id)
            .order_by(last.desc(), table.c.session_id)
        )
        with self.engine.connect() as connection:
            rows = connection.execute(query).all()
        return [(session_id, count, _utc(when)) for session_id, count, when in rows]

    def delete_session(self, session_id: str) -> int:
        """Delete a session's notes; how many were deleted."""
        with self.engine.begin() as connection:
            result = connection.execute(
                research_notes.delete().where(research_notes.c.session_id == session_id)
            )
        return result.rowcount


def _check(note: ResearchNote) -> None:
    if not note.session_id.strip() or len(note.session_id) > SESSION_ID_MAX_LENGTH:
        raise NoteRejectedError(
            f"調査メモのセッションIDが不正です（空か、{SESSION_ID_MAX_LENGTH} 文字を超えています）",
            hint=f"{SESSION_ID_MAX_LENGTH} 文字以内のセッションIDを指定してください",
            details={"session_id": note.session_id[:SESSION_ID_MAX_LENGTH]},
        )
    size = len(note.summary_md.encode("utf-8"))
    if size > MAX_SUMMARY_BYTES:
        raise NoteRejectedError(
            f"調査メモの要約が大きすぎるため保存できません（{size:,} バイト、上限 "
            f"{MAX_SUMMARY_BYTES:,} バイト）",
            hint="要約の長さの設定を小さくするか、質問を絞ってもう一度実行してください",
            details={"bytes": size, "limit": MAX_SUMMARY_BYTES},
        )
    if len(note.sources) > MAX_SOURCES:
        raise NoteRejectedError(
            f"調査メモの出典が多すぎるため保存できません（{len(note.sources)} 件、上限 "
            f"{MAX_SOURCES} 件）",
            hint="検索の取得件数を減らしてもう一度実行してください",
            details={"sources": len(note.sources), "limit": MAX_SOURCES},
        )


def _step_taken(session_id: str, step_no: int) -> NoteRejectedError:
    return NoteRejectedError(
        f"セッション {session_id} には手順 {step_no} の調査メモがすでにあります",
        hint="手順番号を指定せず（0 のまま）保存すると次の番号が付きます",
        details={"session_id": session_id, "step_no": step_no},
    )


def _sources(raw: str | None, row_id: int) -> tuple[DocSnippet, ...]:
    try:
        data = json.loads(raw) if raw is not None else []
        if not isinstance(data, list):
            raise ValueError(f"a JSON {type(data).__name__}, not a list")
        return tuple(DocSnippet.from_dict(item) for item in data)
    except (ValueError, TypeError, KeyError, AttributeError) as error:
        log.warning(
            "research note %s has damaged sources (%s): listed without sources", row_id, error
        )
        return ()


def _utc(value: datetime) -> datetime:
    """``value`` in UTC; a naive one is taken as UTC (SQLite returns what was written so)."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
