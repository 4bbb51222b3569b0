"""The SQLAlchemy engine of the application database.

``KEIRI_AGENT_DATABASE_URL`` selects the database; by default a SQLite file at
``<home>/.keiri/keiri.db``. SQLite connections run in WAL mode (readers do not
block the writer) with foreign keys enforced. A SQLite file is created owner-only
(``0600``) before SQLite opens it, so its ``-wal`` / ``-shm`` files are too. A damaged
file, a lock held too long or a server out of reach is raised as the store error it
means (``storage.errors``), on connecting as on every statement.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import sqlalchemy
from sqlalchemy import event
from sqlalchemy.engine import make_url

from keiri_agent.config import Settings
from keiri_agent.private import private_file
from keiri_agent.storage.errors import store_error
from keiri_agent.workspace import Workspace

SQLITE_BUSY_TIMEOUT_MS = 5000
"""How long a SQLite connection waits for a lock held by another writer."""


def database_url(settings: Settings) -> str:
    """The configured database URL, or the workspace SQLite file (its folder created)."""
    if settings.storage.database_url:
        return settings.storage.database_url
    workspace = Workspace.from_settings(settings)
    workspace.ensure(workspace.database_file.parent)
    return f"sqlite:///{workspace.database_file}"


def create_engine(settings: Settings, **kwargs: Any) -> sqlalchemy.Engine:
    """A SQLAlchemy engine for ``database_url(settings)``.

    ``postgresql://`` URLs use the psycopg 3 driver (the one installed).
    SQLite connections get ``journal_mode=WAL``, ``foreign_keys=ON`` and a busy
    timeout. Extra keyword arguments go to ``sqlalchemy.create_engine``.
    """
    url = make_url(database_url(settings))
    if url.drivername == "postgresql":
        url = url.set(drivername="postgresql+psycopg")
    engine = sqlalchemy.create_engine(url, **kwargs)
    if url.get_backend_name() == "sqlite":
        _create_private(url.database)
        event.listen(engine, "connect", _configure_sqlite)
        where = url.database or ":memory:"
    else:
        where = f"{url.host or 'localhost'}:{url.port or 5432}"
    event.listen(engine, "handle_error", lambda context: _raise_store_error(context, where))
    return engine


def _create_private(database: str | None) -> None:
    """Create a missing SQLite file ``0600`` (SQLite gives its side files the same bits).

    Not for an in-memory database or a ``file:`` URI; when the folder is missing or not
    writable, SQLite reports it on connecting, as before."""
    if not database or database == ":memory:" or database.startswith("file:"):
        return
    with contextlib.suppress(OSError):
        private_file(Path(database))


def _raise_store_error(context: sqlalchemy.engine.ExceptionContext, where: str) -> None:
    """``handle_error`` listener: a store fault becomes its ``storage.errors`` error."""
    translated = store_error(context.original_exception, where)
    if translated is not None:
        raise translated from None


def _configure_sqlite(dbapi_connection: Any, _connection_record: Any) -> None:
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
    finally:
        cursor.close()
