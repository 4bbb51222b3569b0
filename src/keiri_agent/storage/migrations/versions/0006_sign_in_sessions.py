"""sign_in_sessions: browser sign-ins with an expiry and a CSRF token.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "sign_in_sessions",
        sa.Column("session_id", sa.String(32), primary_key=True),
        sa.Column("user_id", sa.String(64), nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=False),
        sa.Column("csrf_hash", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("revoked", sa.Boolean, nullable=False),
        sa.UniqueConstraint("token_hash", name="uq_sign_in_sessions_token"),
    )
    op.create_index("ix_sign_in_sessions_user_id", "sign_in_sessions", ["user_id"])


def downgrade() -> None:
    op.drop_index("ix_sign_in_sessions_user_id", table_name="sign_in_sessions")
    op.drop_table("sign_in_sessions")
