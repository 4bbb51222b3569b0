"""Persistence: the application database engine and the LangGraph checkpointer."""

from typing import TYPE_CHECKING

from keiri_agent.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from keiri_agent.storage.checkpointer import (
        checkpointer_kind,
        open_checkpointer,
        postgres_conninfo,
    )
    from keiri_agent.storage.engine import create_engine, database_url
    from keiri_agent.storage.errors import StoreCorruptError

# sqlalchemy (storage.engine) loads only when the application database is used.
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "StoreCorruptError": ".errors",
        "checkpointer_kind": ".checkpointer",
        "open_checkpointer": ".checkpointer",
        "postgres_conninfo": ".checkpointer",
        "create_engine": ".engine",
        "database_url": ".engine",
    },
)

__all__ = [
    "StoreCorruptError",
    "checkpointer_kind",
    "create_engine",
    "database_url",
    "open_checkpointer",
    "postgres_conninfo",
]
