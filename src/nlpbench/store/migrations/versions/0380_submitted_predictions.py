"""A prediction file's text in a table of its own, out of its submission's row.

Each column after a long text in a SQLite row is reached through that text's overflow pages, so every
read of a submission (a leaderboard's table, the queue) stepped through its prediction file: a task page
of 1,000 submissions of 2,000 notes each took over a second. The texts move to ``submitted_predictions``,
one row per prediction-file submission, deleted with it.

Revision ID: 0380
Revises: 0370
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0380"
down_revision = "0370"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "submitted_predictions",
        sa.Column("submission_id", sa.Integer(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(["submission_id"], ["submissions.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("submission_id"),
    )
    op.execute(
        sa.text(
            "INSERT INTO submitted_predictions (submission_id, text) "
            "SELECT id, predictions FROM submissions WHERE predictions IS NOT NULL"
        )
    )
    # in place on both (SQLite 3.35 and later): a batch copy of the table would drop the old one, and with it,
    # through the cascade of its foreign key, every text just moved
    op.execute(sa.text("ALTER TABLE submissions DROP COLUMN predictions"))


def downgrade() -> None:
    op.add_column("submissions", sa.Column("predictions", sa.Text(), nullable=True))
    op.execute(
        sa.text(
            "UPDATE submissions SET predictions = (SELECT text FROM submitted_predictions "
            "WHERE submitted_predictions.submission_id = submissions.id)"
        )
    )
    op.drop_table("submitted_predictions")
