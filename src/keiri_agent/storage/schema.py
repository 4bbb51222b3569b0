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
    Float,
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
"""The longest run id (``run_`` + hex)."""

runs = Table(
    "runs",
    metadata,
    Column("run_id", String(RUN_ID_MAX_LENGTH), primary_key=True),
    Column("kind", String(32), nullable=False),
    Column("subject", String(SESSION_ID_MAX_LENGTH), nullable=False),
    Column("title", Text, nullable=False),
    Column("owner", String(128), nullable=False),
    Column("status", String(16), nullable=False),
    Column("inputs", JSON, nullable=False),
    Column("result", JSON, nullable=True),
    Column("error", JSON, nullable=True),
    Column("last_seq", Integer, nullable=False),
    Column("attempt", Integer, nullable=False),
    Column("cancel_requested", Boolean, nullable=False),
    Column("worker", String(128), nullable=False),
    Column("lease_until", Float, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
    Index("ix_runs_subject", "subject"),
    Index("ix_runs_status", "status"),
)
"""Every long task started through the run service (``keiri_agent.runs``): research
runs and Plan runs, whatever process or machine executes them.

``kind`` names the executor (``research``, ``plan``); ``subject`` what the run belongs
to (the research session id, the Plan id) and ``title`` how it is shown (the question,
the Plan's name); ``owner`` who started it. ``status`` is ``queued``, ``running``,
``waiting`` (a Plan paused for answers), ``success``, ``failed`` or ``cancelled``;
``inputs`` what the executor needs to (re)start it, ``result`` / ``error`` how it
ended. ``attempt`` counts the times a worker claimed the run; the worker holding
attempt *n* owns it until ``lease_until`` (epoch seconds, renewed by its heartbeat),
and every write it makes is checked against that attempt, so a worker that lost its
lease can no longer change the run. ``cancel_requested`` is how any process asks the
owner to stop it.
"""

run_events = Table(
    "run_events",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("run_id", String(RUN_ID_MAX_LENGTH), nullable=False),
    Column("seq", Integer, nullable=False),
    Column("source", String(16), nullable=False),
    Column("kind", String(64), nullable=False),
    Column("timestamp", String(32), nullable=False),
    Column("payload", JSON, nullable=False),
    UniqueConstraint("run_id", "seq", name="uq_run_events_run_seq"),
)
"""Every event of a run, numbered 1, 2, … without gaps, written once, read by any
process: what an SSE client that reconnects with ``Last-Event-ID`` is sent (the rows
after that seq)."""

SCHEDULE_ID_MAX_LENGTH = 64

schedules = Table(
    "schedules",
    metadata,
    Column("schedule_id", String(SCHEDULE_ID_MAX_LENGTH), primary_key=True),
    Column("plan_id", String(SESSION_ID_MAX_LENGTH), nullable=False),
    Column("rule", Text, nullable=False),
    Column("at", String(5), nullable=False),
    Column("vars", JSON, nullable=False),
    Column("paused", Boolean, nullable=False),
    Column("next_at", Float, nullable=False),
    Column("last_due_at", Float, nullable=True),
    Column("last_run_id", String(RUN_ID_MAX_LENGTH), nullable=True),
    Column("last_late", Boolean, nullable=False),
    Column("owner", String(128), nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
    Index("ix_schedules_next_at", "next_at"),
)
"""Plans that run by themselves (``runs.schedules``): the registered Plan, its rule (a
business-day rule such as 「毎月第5営業日」 or a cron expression), the time of day
(``HH:MM``, in ``time_zone``; unused by cron), the vars of its runs, whether it
is paused, when it is next due (``next_at``, epoch seconds) and its last run (when it
was due, which run, whether it started late)."""


USER_ID_MAX_LENGTH = 64
LOGIN_MAX_LENGTH = 128

users = Table(
    "users",
    metadata,
    Column("user_id", String(USER_ID_MAX_LENGTH), primary_key=True),
    Column("login", String(LOGIN_MAX_LENGTH), nullable=False),
    Column("display_name", String(200), nullable=False),
    Column("roles", JSON, nullable=False),
    Column("password_hash", Text, nullable=True),
    Column("source", String(16), nullable=False),
    Column("disabled", Boolean, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
    UniqueConstraint("login", name="uq_users_login"),
)
"""The people of a team (``people.accounts``, issue 33): a login, a name, their roles
(``people.roles``), an argon2 hash of their password (None: they sign in another way),
where the account comes from (``local``, ``oidc``, ``service``) and whether it is
disabled (kept, never deleted: the audit trail names it)."""

user_tokens = Table(
    "user_tokens",
    metadata,
    Column("token_id", String(32), primary_key=True),
    Column("user_id", String(USER_ID_MAX_LENGTH), nullable=False),
    Column("token_hash", String(64), nullable=False),
    Column("label", String(200), nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("last_used_at", DateTime(timezone=True), nullable=True),
    Column("revoked", Boolean, nullable=False),
    UniqueConstraint("token_hash", name="uq_user_tokens_hash"),
    Index("ix_user_tokens_user_id", "user_id"),
)
"""Access tokens of machine clients (shown once; only their SHA-256 is kept)."""

audit_log = Table(
    "audit_log",
    metadata,
    Column("seq", Integer, primary_key=True, autoincrement=True),
    Column("at", DateTime(timezone=True), nullable=False),
    Column("actor", String(LOGIN_MAX_LENGTH), nullable=False),
    Column("kind", String(64), nullable=False),
    Column("subject", String(256), nullable=False),
    Column("details", JSON, nullable=False),
    Column("prev_hash", String(64), nullable=False),
    Column("hash", String(64), nullable=False),
    UniqueConstraint("prev_hash", name="uq_audit_log_prev_hash"),
    Index("ix_audit_log_actor", "actor"),
    Index("ix_audit_log_kind", "kind"),
    Index("ix_audit_log_at", "at"),
)
"""The audit trail (``people.audit``): who did what, when, to what; each entry's hash
covers the previous entry's hash, so an entry edited or removed is detected. One entry
follows each hash (``uq_audit_log_prev_hash``): two writers appending at once cannot
fork the chain — the second retries on the new head."""

sign_in_sessions = Table(
    "sign_in_sessions",
    metadata,
    Column("session_id", String(32), primary_key=True),
    Column("user_id", String(USER_ID_MAX_LENGTH), nullable=False),
    Column("token_hash", String(64), nullable=False),
    Column("csrf_hash", String(64), nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("expires_at", DateTime(timezone=True), nullable=False),
    Column("revoked", Boolean, nullable=False),
    UniqueConstraint("token_hash", name="uq_sign_in_sessions_token"),
    Index("ix_sign_in_sessions_user_id", "user_id"),
)
"""Browser sign-ins (``people.sessions``): only the SHA-256 of the cookie's token and of
the CSRF token are kept; a session ends at ``expires_at`` or when signed out."""

oidc_pending = Table(
    "oidc_pending",
    metadata,
    Column("state_hash", String(64), primary_key=True),
    Column("nonce", String(128), nullable=False),
    Column("code_verifier", String(128), nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
)
"""OpenID Connect sign-ins under way (``people.oidc``): the state (its SHA-256), nonce
and PKCE verifier of an authorization request, used once by its callback."""
