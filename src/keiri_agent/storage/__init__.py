"""Persistence: the application database engine and the LangGraph checkpointer."""

from keiri_agent.storage.checkpointer import (
    StoreCorruptError,
    checkpointer_kind,
    open_checkpointer,
    postgres_conninfo,
)
from keiri_agent.storage.engine import create_engine, database_url

__all__ = [
    "StoreCorruptError",
    "checkpointer_kind",
    "create_engine",
    "database_url",
    "open_checkpointer",
    "postgres_conninfo",
]
