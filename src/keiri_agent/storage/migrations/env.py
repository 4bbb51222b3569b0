"""Alembic environment: runs the migrations on the connection ``storage.migrate`` hands over.

``storage.migrate.upgrade`` builds the Alembic ``Config`` in code and puts an open
connection (inside its transaction and lock) into ``config.attributes["connection"]``.
Run by the ``alembic`` command line instead, the environment connects to the
database the settings select.
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
    if connection is not None:
        _run(connection)
        return
    from keiri_agent.config import Settings
    from keiri_agent.storage.engine import create_engine

    engine = create_engine(Settings())
    try:
        with engine.begin() as own_connection:
            _run(own_connection)
    finally:
        engine.dispose()


run_migrations_online()
