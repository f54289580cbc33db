"""Who made a submission, a team or an organiser: a worker reaches a team's tool URL through public
addresses only (unless the queue allow-lists its host) and keeps what the network said from the team.

Submissions made before are counted as a team's: the safe reading.

Revision ID: 0310
Revises: 0300
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0310"
down_revision = "0300"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("submissions") as table:
        table.add_column(sa.Column("submitted_by", sa.String(10), nullable=False, server_default="team"))


def downgrade() -> None:
    with op.batch_alter_table("submissions") as table:
        table.drop_column("submitted_by")
