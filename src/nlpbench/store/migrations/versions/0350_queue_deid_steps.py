"""The de-identification steps a queue asks its de-identifiers for (a list of 1.2.0 ``DeidentificationStep``
objects; NULL: nlpbench's default steps), so that a queue can ask for date offsets (issue 22 §2); and the steps a
``deid`` submission runs with, its queue's when it is first claimed, so that a rescore uses them whatever the queue
asks later (NULL: not claimed yet).

Revision ID: 0350
Revises: 0345
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0350"
down_revision = "0345"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("queues") as table:
        table.add_column(sa.Column("deid_steps", sa.JSON(), nullable=True))
    with op.batch_alter_table("submissions") as table:
        table.add_column(sa.Column("deid_steps", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("submissions") as table:
        table.drop_column("deid_steps")
    with op.batch_alter_table("queues") as table:
        table.drop_column("deid_steps")
