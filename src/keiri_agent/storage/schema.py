"""The tables of the application database (SQLAlchemy Core metadata).

The schema changes only through the Alembic migrations in
``keiri_agent.storage.migrations`` (applied by ``keiri_agent.storage.migrate.upgrade``);
this metadata describes the head revision for the code that reads and writes it.
"""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    Boolean,
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


RUN_ID_MAX_LENGTH = 64
"""The longest research run id (``run_`` + hex)."""

research_runs = Table(
    "research_runs",
    metadata,
    Column("run_id", String(RUN_ID_MAX_LENGTH), primary_key=True),
    Column("session_id", String(SESSION_ID_MAX_LENGTH), nullable=False),
    Column("question", Text, nullable=False),
    Column("kb_names", JSON, nullable=False),
    Column("status", String(16), nullable=False),
    Column("result", JSON, nullable=True),
    Column("error", JSON, nullable=True),
    Column("last_seq", Integer, nullable=False),
    Column("cancel_requested", Boolean, nullable=False, default=False),
    Column("worker", String(128), nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
    Index("ix_research_runs_session_id", "session_id"),
)
"""One deep-research run started through the API: what was asked, where it stands.

``status`` is ``running``, ``success``, ``failed`` or ``cancelled``; ``result`` the
JSON form of the ``ResearchResult`` once it succeeded, ``error`` the error's
``to_dict()`` once it failed. ``worker`` names the server process running it
(host:pid) and ``updated_at`` is its heartbeat: a ``running`` run whose heartbeat is
old lost its process. ``cancel_requested`` is how any process asks the owner to stop it.
"""

research_events = Table(
    "research_events",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("run_id", String(RUN_ID_MAX_LENGTH), nullable=False),
    Column("seq", Integer, nullable=False),
    Column("kind", String(64), nullable=False),
    Column("timestamp", String(32), nullable=False),
    Column("payload", JSON, nullable=False),
    UniqueConstraint("run_id", "seq", name="uq_research_events_run_seq"),
)
"""Every event of a research run, written once, read by any server process: what an
SSE client that reconnects with ``Last-Event-ID`` is sent (the rows after that seq)."""
