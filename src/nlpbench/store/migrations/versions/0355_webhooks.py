"""A queue's webhook: where a worker posts each submission's completion, and the secret it is signed with.

Revision ID: 0355
Revises: 0350
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0355"
down_revision = "0350"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("queues") as table:
        table.add_column(sa.Column("webhook_url", sa.Text(), nullable=True))
        table.add_column(sa.Column("webhook_secret", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("queues") as table:
        table.drop_column("webhook_secret")
        table.drop_column("webhook_url")
