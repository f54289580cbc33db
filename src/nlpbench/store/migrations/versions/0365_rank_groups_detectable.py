"""A column's smallest detectable difference, stored with its rank groups (from the same paired bootstrap).

The rank groups stored before have none: they are deleted, and ``db upgrade`` (or ``leaderboard refresh``)
computes every column's groups again, with its difference.

Revision ID: 0365
Revises: 0355
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0365"
down_revision = "0355"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(sa.text("DELETE FROM rank_groups"))
    with op.batch_alter_table("rank_groups") as table:
        table.add_column(sa.Column("detectable", sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("rank_groups") as table:
        table.drop_column("detectable")
