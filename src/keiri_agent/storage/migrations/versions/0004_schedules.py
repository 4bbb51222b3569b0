"""schedules: Plans that run by themselves on a business-day rule or a cron expression.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "schedules",
        sa.Column("schedule_id", sa.String(64), primary_key=True),
        sa.Column("plan_id", sa.String(128), nullable=False),
        sa.Column("rule", sa.Text, nullable=False),
        sa.Column("at", sa.String(5), nullable=False),
        sa.Column("vars", sa.JSON, nullable=False),
        sa.Column("paused", sa.Boolean, nullable=False),
        sa.Column("next_at", sa.Float, nullable=False),
        sa.Column("last_due_at", sa.Float, nullable=True),
        sa.Column("last_run_id", sa.String(64), nullable=True),
        sa.Column("last_late", sa.Boolean, nullable=False),
        sa.Column("owner", sa.String(128), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_schedules_next_at", "schedules", ["next_at"])


def downgrade() -> None:
    op.drop_index("ix_schedules_next_at", table_name="schedules")
    op.drop_table("schedules")
