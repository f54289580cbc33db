"""Stored rank groups of leaderboard columns (pages read them instead of testing every pair of tools per process).

Revision ID: 0320
Revises: 0310
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0320"
down_revision = "0310"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "rank_groups",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("task", sa.String(40), nullable=False),
        sa.Column("column_key", sa.String(130), nullable=False),
        sa.Column("compared", sa.String(64), nullable=False),
        sa.Column("ranks", sa.JSON(), nullable=False),
        sa.Column("computed_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_rank_groups")),
        sa.UniqueConstraint("task", "column_key", "compared", name=op.f("uq_rank_groups_task_column_key_compared")),
    )


def downgrade() -> None:
    op.drop_table("rank_groups")
