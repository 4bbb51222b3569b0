"""Alembic environment: runs the migrations on the connection ``storage.migrate`` hands over.

``storage.migrate.upgrade`` builds the Alembic ``Config`` in code and puts an open
connection (inside its transaction and lock) into ``config.attributes["connection"]``.
Without one it refuses: the settings (which database) are always the caller's.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy.engine import Connection

from keiri_agent.storage.schema import VERSION_TABLE, metadata


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=metadata,
        version_table=VERSION_TABLE,
        render_as_batch=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = context.config.attributes.get("connection")
    if connection is None:  # the settings are the caller's: see keiri_agent.storage.migrate
        raise RuntimeError(
            "run the migrations with keiri_agent.storage.migrate.upgrade(engine), "
            "which passes the connection of the configured database"
        )
    _run(connection)


run_migrations_online()
