"""research_runs and research_events: research runs started through the API and their
events, shared by every server process (SSE resume with Last-Event-ID).

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "research_runs",
        sa.Column("run_id", sa.String(64), primary_key=True),
        sa.Column("session_id", sa.String(128), nullable=False),
        sa.Column("question", sa.Text, nullable=False),
        sa.Column("kb_names", sa.JSON, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("result", sa.JSON, nullable=True),
        sa.Column("error", sa.JSON, nullable=True),
        sa.Column("last_seq", sa.Integer, nullable=False),
        sa.Column("cancel_requested", sa.Boolean, nullable=False),
        sa.Column("worker", sa.String(128), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_research_runs_session_id", "research_runs", ["session_id"])
    op.create_table(
        "research_events",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("run_id", sa.String(64), nullable=False),
        sa.Column("seq", sa.Integer, nullable=False),
        sa.Column("kind", sa.String(64), nullable=False),
        sa.Column("timestamp", sa.String(32), nullable=False),
        sa.Column("payload", sa.JSON, nullable=False),
        sa.UniqueConstraint("run_id", "seq", name="uq_research_events_run_seq"),
    )


def downgrade() -> None:
    op.drop_table("research_events")
    op.drop_index("ix_research_runs_session_id", table_name="research_runs")
    op.drop_table("research_runs")
