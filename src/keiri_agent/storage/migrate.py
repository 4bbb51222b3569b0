"""Schema migrations of the application database, applied when a store opens it.

``upgrade(engine)`` brings the database to the newest revision the code ships
(``keiri_agent/storage/migrations``; the Alembic ``Config`` is built here, no
``alembic.ini``). It is idempotent and safe when several processes start at
once: on PostgreSQL the migration runs in one transaction holding an advisory
lock; on SQLite a lock file next to the database file (created ``0600``) serialises
the processes (an in-memory database needs none). A database written by a newer keiri-agent
(a revision this code does not know) is a ``DatabaseVersionError`` telling the
user to update, and nothing is changed.
"""

from __future__ import annotations

import logging
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path

import portalocker
import sqlalchemy
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory

from keiri_agent.errors import ConfigurationError
from keiri_agent.private import private_opener
from keiri_agent.storage.schema import VERSION_TABLE

log = logging.getLogger(__name__)

MIGRATIONS_DIR = Path(__file__).with_name("migrations")

POSTGRES_LOCK_KEY = 0x6B6569726931
"""The advisory lock key (``keiri1``) held while PostgreSQL migrations run."""

SQLITE_LOCK_TIMEOUT_S = 60.0
"""How long a process waits for another one migrating the same SQLite file."""


class DatabaseVersionError(ConfigurationError):
    """The database was migrated by a newer keiri-agent than this one."""

    code = "DATABASE_TOO_NEW"


def alembic_config(connection: sqlalchemy.Connection | None = None) -> Config:
    """The Alembic configuration of the shipped migrations (``connection``: the one to use)."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def head_revision() -> str:
    """The newest revision the code ships."""
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert head is not None, "the migrations folder has no revision"
    return head


def current_revision(engine: sqlalchemy.Engine) -> str | None:
    """The revision the database is at, or ``None`` before the first migration."""
    with engine.connect() as connection:
        return _context(connection).get_current_revision()


def upgrade(engine: sqlalchemy.Engine) -> None:
    """Migrate the database of ``engine`` to the head revision (a no-op when it is there).

    Raises ``DatabaseVersionError`` when the database is at a revision this code
    does not know (written by a newer keiri-agent).
    """
    if engine.dialect.name == "postgresql":
        with engine.begin() as connection:
            connection.execute(
                sqlalchemy.text("SELECT pg_advisory_xact_lock(:key)"), {"key": POSTGRES_LOCK_KEY}
            )
            _upgrade(connection, engine)
        return
    lock_file = _sqlite_lock_file(engine)
    lock: AbstractContextManager[object] = (
        nullcontext()
        if lock_file is None
        else portalocker.Lock(
            str(lock_file), mode="a", timeout=SQLITE_LOCK_TIMEOUT_S, opener=private_opener
        )
    )
    with lock, engine.begin() as connection:
        _upgrade(connection, engine)


def _upgrade(connection: sqlalchemy.Connection, engine: sqlalchemy.Engine) -> None:
    config = alembic_config(connection)
    script = ScriptDirectory.from_config(config)
    known = {revision.revision for revision in script.walk_revisions()}
    current = _context(connection).get_current_heads()
    unknown = [revision for revision in current if revision not in known]
    if unknown:
        raise DatabaseVersionError(
            "アプリケーションのデータベース"
            f"（{engine.url.render_as_string(hide_password=True)}）は、"
            f"このバージョンの keiri-agent より新しい形式です（リビジョン {', '.join(unknown)}）",
            hint=(
                "keiri-agent を最新版に更新してください。この版を使い続ける場合は "
                "KEIRI_AGENT_DATABASE_URL で別のデータベースを指定してください"
            ),
            details={"revisions": unknown, "head": script.get_current_head()},
        )
    if current == (script.get_current_head(),):
        return
    log.info("migrating the application database from %s to head", current or "empty")
    command.upgrade(config, "head")


def _context(connection: sqlalchemy.Connection) -> MigrationContext:
    return MigrationContext.configure(connection, opts={"version_table": VERSION_TABLE})


def _sqlite_lock_file(engine: sqlalchemy.Engine) -> Path | None:
    database = engine.url.database
    if not database or database == ":memory:" or database.startswith("file:"):
        return None
    path = Path(database)
    return path.with_name(path.name + ".migrate-lock")
