"""research_notes: the notes of deep-research sessions (seed 004 §7).

Revision ID: 0001
Revises:
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "research_notes",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("session_id", sa.String(128), nullable=False),
        sa.Column("step_no", sa.Integer, nullable=False),
        sa.Column("query", sa.Text, nullable=False),
        sa.Column("summary_md", sa.Text, nullable=False),
        sa.Column("sources", sa.JSON, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("session_id", "step_no", name="uq_research_notes_session_step"),
    )
    op.create_index("ix_research_notes_session_id", "research_notes", ["session_id"])


def downgrade() -> None:
    op.drop_index("ix_research_notes_session_id", table_name="research_notes")
    op.drop_table("research_notes")
