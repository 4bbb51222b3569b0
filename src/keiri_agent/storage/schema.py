"""The tables of the application database (SQLAlchemy Core metadata).

The schema changes only through the Alembic migrations in
``keiri_agent.storage.migrations`` (applied by ``keiri_agent.storage.migrate.upgrade``);
this metadata describes the head revision for the code that reads and writes it.
"""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    Column,
    DateTime,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)

SESSION_ID_MAX_LENGTH = 128
"""The longest session id a note can carry (the column's width)."""

VERSION_TABLE = "keiri_agent_alembic_version"
"""Alembic's revision table (named so that it cannot clash with another application's)."""

metadata = MetaData()

research_notes = Table(
    "research_notes",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("session_id", String(SESSION_ID_MAX_LENGTH), nullable=False),
    Column("step_no", Integer, nullable=False),
    Column("query", Text, nullable=False),
    Column("summary_md", Text, nullable=False),
    Column("sources", JSON, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    UniqueConstraint("session_id", "step_no", name="uq_research_notes_session_step"),
    Index("ix_research_notes_session_id", "session_id"),
)
"""One step of a deep-research session (seed 004 §7): partitioned by ``session_id``.

``sources`` is a JSON list of ``DocSnippet.to_dict()``; ``created_at`` is UTC.
"""
