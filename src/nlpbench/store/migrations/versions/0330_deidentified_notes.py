"""The notes a ``deid`` submission's de-identifier returned (the task of ``nlpsandbox:phi-deidentifier`` tools).

Revision ID: 0330
Revises: 0320
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0330"
down_revision = "0320"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    op.create_table(
        "deidentified_notes",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("submission_id", sa.Integer(), nullable=False),
        sa.Column("note_identifier", sa.String(60), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("annotations", JSON, nullable=False),
        sa.ForeignKeyConstraint(
            ["submission_id"],
            ["submissions.id"],
            name=op.f("fk_deidentified_notes_submission_id_submissions"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_deidentified_notes")),
        sa.UniqueConstraint(
            "submission_id", "note_identifier", name=op.f("uq_deidentified_notes_submission_id_note_identifier")
        ),
    )


def downgrade() -> None:
    op.drop_table("deidentified_notes")
