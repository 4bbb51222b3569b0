"""The LangGraph checkpointer, chosen by the database URL.

SQLite (the default, and any ``sqlite://`` database URL) keeps checkpoints in
``<home>/.keiri/checkpoints.db``; a ``postgresql://`` or
``postgresql+psycopg://`` database URL keeps them in that PostgreSQL database.
There is no in-memory default: state survives a restart.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Literal

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.sqlite import SqliteSaver

from keiri_agent.config import Settings
from keiri_agent.errors import ConfigurationError
from keiri_agent.workspace import Workspace

CheckpointerKind = Literal["sqlite", "postgres"]

_POSTGRES_SCHEMES = ("postgresql", "postgresql+psycopg")


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
        f"unsupported database URL scheme {scheme or url!r} for the LangGraph checkpointer",
        hint="use sqlite:///path/to/file.db or postgresql+psycopg://user:password@host/db",
        details={"scheme": scheme, "supported": ["sqlite", *_POSTGRES_SCHEMES]},
    )


def postgres_conninfo(url: str) -> str:
    """The libpq connection string for a SQLAlchemy-style PostgreSQL URL.

    ``postgresql+psycopg://u:p@h/db`` becomes ``postgresql://u:p@h/db``.
    """
    scheme, rest = url.split("://", 1)
    if scheme.lower() not in _POSTGRES_SCHEMES:
        raise ConfigurationError(f"not a PostgreSQL URL: {scheme}://...")
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
    """
    url = settings.database_url
    kind = checkpointer_kind(url)
    serde = JsonPlusSerializer(allowed_msgpack_modules=list(state_types)) if state_types else None
    if kind == "postgres":
        assert url is not None
        with _postgres_saver(postgres_conninfo(url), serde) as saver:
            yield saver
        return
    workspace = Workspace.from_settings(settings)
    workspace.ensure(workspace.checkpoint_file.parent)
    connection = sqlite3.connect(workspace.checkpoint_file, check_same_thread=False)
    try:
        sqlite_saver = SqliteSaver(connection, serde=serde)
        sqlite_saver.setup()
        yield sqlite_saver
    finally:
        connection.close()


@contextmanager
def _postgres_saver(
    conninfo: str, serde: JsonPlusSerializer | None
) -> Iterator[BaseCheckpointSaver[str]]:
    """A PostgresSaver on one autocommit connection (as ``from_conn_string``), set up."""
    import psycopg
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg.rows import dict_row

    with psycopg.Connection.connect(
        conninfo, autocommit=True, prepare_threshold=0, row_factory=dict_row
    ) as connection:
        saver = PostgresSaver(connection, serde=serde)
        saver.setup()
        yield saver
