"""runs and run_events: one table of runs for every kind (research, Plan) and one
event log, replacing research_runs and research_events (their rows are carried over).

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

_BATCH = 1000


def upgrade() -> None:
    runs = op.create_table(
        "runs",
        sa.Column("run_id", sa.String(64), primary_key=True),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("subject", sa.String(128), nullable=False),
        sa.Column("title", sa.Text, nullable=False),
        sa.Column("owner", sa.String(128), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("inputs", sa.JSON, nullable=False),
        sa.Column("result", sa.JSON, nullable=True),
        sa.Column("error", sa.JSON, nullable=True),
        sa.Column("last_seq", sa.Integer, nullable=False),
        sa.Column("attempt", sa.Integer, nullable=False),
        sa.Column("cancel_requested", sa.Boolean, nullable=False),
        sa.Column("worker", sa.String(128), nullable=False),
        sa.Column("lease_until", sa.Float, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_runs_subject", "runs", ["subject"])
    op.create_index("ix_runs_status", "runs", ["status"])
    events = op.create_table(
        "run_events",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("run_id", sa.String(64), nullable=False),
        sa.Column("seq", sa.Integer, nullable=False),
        sa.Column("source", sa.String(16), nullable=False),
        sa.Column("kind", sa.String(64), nullable=False),
        sa.Column("timestamp", sa.String(32), nullable=False),
        sa.Column("payload", sa.JSON, nullable=False),
        sa.UniqueConstraint("run_id", "seq", name="uq_run_events_run_seq"),
    )
    _carry_over_research(runs, events)
    op.drop_table("research_events")
    op.drop_index("ix_research_runs_session_id", table_name="research_runs")
    op.drop_table("research_runs")


def _carry_over_research(runs: sa.Table, events: sa.Table) -> None:
    """Copy the research runs and their events into the new tables. A run that was
    unfinished is copied as it was, with an expired lease: the run service takes it
    up again (its worker is gone)."""
    bind = op.get_bind()
    old = sa.MetaData()
    old_runs = sa.Table("research_runs", old, autoload_with=bind)
    old_events = sa.Table("research_events", old, autoload_with=bind)
    for row in bind.execute(sa.select(old_runs)).mappings():
        bind.execute(
            runs.insert().values(
                run_id=row["run_id"],
                kind="research",
                subject=row["session_id"],
                title=row["question"],
                owner="",
                status=row["status"],
                inputs={
                    "question": row["question"],
                    "session_id": row["session_id"],
                    "kb_names": list(row["kb_names"] or []),
                },
                result=row["result"],
                error=row["error"],
                last_seq=row["last_seq"],
                attempt=0 if row["status"] == "queued" else 1,
                cancel_requested=bool(row["cancel_requested"]),
                worker=row["worker"],
                lease_until=0.0,
                created_at=row["created_at"],
                updated_at=row["updated_at"],
            )
        )
    result = bind.execute(sa.select(old_events).order_by(old_events.c.id))
    while batch := result.mappings().fetchmany(_BATCH):
        bind.execute(
            events.insert(),
            [
                {
                    "run_id": row["run_id"],
                    "seq": row["seq"],
                    "source": "research",
                    "kind": row["kind"],
                    "timestamp": row["timestamp"],
                    "payload": row["payload"],
                }
                for row in batch
            ],
        )


def downgrade() -> None:
    raise NotImplementedError("0003 cannot be undone: research_runs was merged into runs")
