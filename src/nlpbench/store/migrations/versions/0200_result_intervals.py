"""Stored confidence intervals of results (the leaderboard reads them instead of resampling per request).

Revision ID: 0200
Revises: 0100
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0200"
down_revision = "0100"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "result_intervals",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("result_id", sa.Integer(), nullable=False),
        sa.Column("annotation_type", sa.String(40), nullable=False),
        sa.Column("metric", sa.String(60), nullable=False),
        sa.Column("field", sa.String(20), nullable=False),
        sa.Column("ranked", sa.Boolean(), nullable=False),
        sa.Column("value", sa.Float(), nullable=False),
        sa.Column("estimate", sa.Float(), nullable=False),
        sa.Column("low", sa.Float(), nullable=True),
        sa.Column("high", sa.Float(), nullable=True),
        sa.Column("confidence", sa.Float(), nullable=False),
        sa.Column("method", sa.String(20), nullable=False),
        sa.Column("resamples", sa.Integer(), nullable=False),
        sa.Column("documents", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["result_id"], ["results.id"], name=op.f("fk_result_intervals_result_id_results"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_result_intervals")),
    )
    op.create_index("ix_result_intervals_result", "result_intervals", ["result_id"])
    op.create_index("ix_result_intervals_ranked", "result_intervals", ["ranked", "result_id"])


def downgrade() -> None:
    op.drop_index("ix_result_intervals_ranked", table_name="result_intervals")
    op.drop_index("ix_result_intervals_result", table_name="result_intervals")
    op.drop_table("result_intervals")
