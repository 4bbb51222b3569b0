"""The LangGraph checkpointer, chosen by the database URL.

SQLite (the default, and any ``sqlite://`` database URL) keeps checkpoints in
``<home>/.keiri/checkpoints.db`` (created ``0600``, its folder ``0700``, before SQLite
opens it: SQLite gives its ``-wal`` / ``-shm`` files the same bits); a ``postgresql://`` or
``postgresql+psycopg://`` database URL keeps them in that PostgreSQL database.
There is no in-memory default: state survives a restart.

A damaged SQLite file (truncated, overwritten with other bytes, tables of another
shape) is a ``StoreCorruptError`` (code ``STORE_CORRUPT``) naming the file and what
to do, whether the damage shows when it is opened or later when a conversation is
read or written: the file is never deleted or repaired automatically (the user moves
it aside to start fresh conversations). A zero-length file is an empty SQLite
database: the tables are created in it.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Literal

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.sqlite import SqliteSaver

from keiri_agent.config import Settings
from keiri_agent.errors import ConfigurationError
from keiri_agent.private import private_file
from keiri_agent.storage.errors import StoreCorruptError, store_corrupt, store_error
from keiri_agent.workspace import Workspace

CheckpointerKind = Literal["sqlite", "postgres"]

_POSTGRES_SCHEMES = ("postgresql", "postgresql+psycopg")

_EXPECTED_COLUMNS = {
    "checkpoints": {
        "thread_id", "checkpoint_ns", "checkpoint_id", "parent_checkpoint_id", "type",
        "checkpoint", "metadata",
    },
    "writes": {
        "thread_id", "checkpoint_ns", "checkpoint_id", "task_id", "task_path", "idx",
        "channel", "type", "value",
    },
}  # fmt: skip
"""The columns LangGraph's SqliteSaver reads (its ``setup`` creates missing tables only)."""

_SCHEMA_ERRORS = ("no such table", "no such column", "has no column")
"""``sqlite3.OperationalError`` messages that mean the tables have another shape."""


def checkpoint_store_corrupt(file: object, error: BaseException) -> StoreCorruptError:
    """The error for a damaged checkpoint database ``file`` (``error``: what SQLite said)."""
    return store_corrupt(str(file), error, what="会話の保存ファイル")


def _is_damage(error: sqlite3.Error) -> bool:
    """Whether a SQLite error means a damaged file (not a lock or a full disk)."""
    if isinstance(error, sqlite3.OperationalError):
        return any(marker in str(error) for marker in _SCHEMA_ERRORS)
    return isinstance(error, sqlite3.DatabaseError)


class _CheckedSqliteSaver(SqliteSaver):
    """``SqliteSaver`` that reports damage found while reading or writing as
    ``StoreCorruptError`` (every query of the saver goes through ``cursor``)."""

    def __init__(
        self, conn: sqlite3.Connection, file: object, serde: JsonPlusSerializer | None
    ) -> None:
        super().__init__(conn, serde=serde)
        self.file = file

    @contextmanager
    def cursor(self, transaction: bool = True) -> Iterator[sqlite3.Cursor]:
        try:
            with super().cursor(transaction) as cur:
                yield cur
        except sqlite3.Error as exc:
            if _is_damage(exc):
                raise checkpoint_store_corrupt(self.file, exc) from None
            raise


def checkpointer_kind(url: str | None) -> CheckpointerKind:
    """Which checkpointer a database URL selects (``None``: the default SQLite).

    Raises:
        ConfigurationError: The URL scheme is neither SQLite nor PostgreSQL.
    """
    if not url:
        return "sqlite"
    scheme = url.split("://", 1)[0].lower() if "://" in url else ""
    if scheme == "sqlite" or scheme.startswith("sqlite+"):
        return "sqlite"
    if scheme in _POSTGRES_SCHEMES:
        return "postgres"
    raise ConfigurationError(
        f"会話の保存先データベースの URL {scheme or url!r} には対応していません",
        hint="設定ファイルか環境変数 KEIRI_AGENT_DATABASE_URL に sqlite:///path/to/file.db か "
        "postgresql+psycopg://user:password@host/db の形で指定してください",
        details={"scheme": scheme, "supported": ["sqlite", *_POSTGRES_SCHEMES]},
    )


def postgres_conninfo(url: str) -> str:
    """The libpq connection string for a SQLAlchemy-style PostgreSQL URL.

    ``postgresql+psycopg://u:p@h/db`` becomes ``postgresql://u:p@h/db``.
    """
    scheme, rest = url.split("://", 1)
    if scheme.lower() not in _POSTGRES_SCHEMES:
        raise ConfigurationError(
            f"PostgreSQL の URL ではありません: {scheme}://...",
            hint="postgresql+psycopg://user:password@host/db の形で指定してください",
        )
    return f"postgresql://{rest}"


@contextmanager
def open_checkpointer(
    settings: Settings, *, state_types: Sequence[type] = ()
) -> Iterator[BaseCheckpointSaver[str]]:
    """Open the configured checkpointer; closes its connection on exit.

    The SQLite saver's connection is shared across threads (the saver's own lock
    serialises access), so one saver can serve Streamlit's script threads.

    Args:
        settings: ``database_url`` picks the backend; ``home`` the SQLite file.
        state_types: Classes (e.g. Pydantic models) stored in graph state. When
            given, only these and LangGraph's safe types are deserialised, which
            also silences LangGraph's "unregistered type" warning on reload.

    Raises:
        ConfigurationError: The database URL has an unsupported scheme.
        StoreCorruptError: The SQLite file is damaged (also raised later, by the saver,
            when damage shows while reading or writing a conversation).
    """
    url = settings.storage.database_url
    kind = checkpointer_kind(url)
    serde = JsonPlusSerializer(allowed_msgpack_modules=list(state_types)) if state_types else None
    if kind == "postgres":
        assert url is not None
        with _postgres_saver(postgres_conninfo(url), serde) as saver:
            yield saver
        return
    workspace = Workspace.from_settings(settings)
    workspace.ensure(workspace.checkpoint_file.parent)
    file = workspace.checkpoint_file
    with contextlib.suppress(OSError):  # a folder it cannot write in: SQLite says so
        private_file(file)
    connection = sqlite3.connect(file, check_same_thread=False)
    try:
        sqlite_saver = _CheckedSqliteSaver(connection, file, serde)
        try:
            _check_schema(connection)  # before setup: a damaged file is left as it was
            sqlite_saver.setup()
        except sqlite3.Error as exc:
            if not _is_damage(exc):
                raise
            raise checkpoint_store_corrupt(file, exc) from None
        yield sqlite_saver
    finally:
        connection.close()


def _check_schema(connection: sqlite3.Connection) -> None:
    """Raise ``sqlite3.DatabaseError`` when an existing table lacks a column the saver
    reads (missing tables, and ``writes.task_path``, are created by the saver's setup)."""
    for table, expected in _EXPECTED_COLUMNS.items():
        found = {row[1] for row in connection.execute(f"PRAGMA table_info({table})")}
        if not found:
            continue
        missing = sorted(expected - found - {"task_path"})
        if missing:
            raise sqlite3.DatabaseError(f"table {table} has no column {', '.join(missing)}")


@contextmanager
def _postgres_saver(
    conninfo: str, serde: JsonPlusSerializer | None
) -> Iterator[BaseCheckpointSaver[str]]:
    """A PostgresSaver on one autocommit connection (as ``from_conn_string``), set up."""
    import psycopg
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg.rows import dict_row

    try:
        connection = psycopg.Connection.connect(
            conninfo, autocommit=True, prepare_threshold=0, row_factory=dict_row
        )
    except psycopg.Error as exc:
        info = psycopg.conninfo.conninfo_to_dict(conninfo)
        where = f"{info.get('host') or 'localhost'}:{info.get('port') or 5432}"
        translated = store_error(exc, where)
        if translated is None:
            raise
        raise translated from None
    with connection:
        saver = PostgresSaver(connection, serde=serde)
        saver.setup()
        yield saver
