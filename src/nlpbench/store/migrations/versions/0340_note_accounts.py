"""What an LLM tool said of each note (grounding counts, tokens, latency), a queue's token budget and price
table, the model a submission names and an organiser's LLM endpoint's prompt template (issue 22 §1).

Revision ID: 0340
Revises: 0330
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0340"
down_revision = "0330"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "note_accounts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("submission_id", sa.Integer(), nullable=False),
        sa.Column("note_identifier", sa.String(60), nullable=False),
        *(
            sa.Column(name, sa.BigInteger(), nullable=False)
            for name in ("exact", "normalised", "fuzzy", "unplaced", "tokens_in", "tokens_out", "latency_ms")
        ),
        sa.Column("cached", sa.Boolean(), nullable=False),
        sa.Column("by_type", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(
            ["submission_id"],
            ["submissions.id"],
            name=op.f("fk_note_accounts_submission_id_submissions"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_note_accounts")),
        sa.UniqueConstraint(
            "submission_id", "note_identifier", name=op.f("uq_note_accounts_submission_id_note_identifier")
        ),
    )
    with op.batch_alter_table("queues") as table:
        table.add_column(sa.Column("token_budget", sa.BigInteger(), nullable=True))
        table.add_column(sa.Column("prices", sa.JSON(), nullable=False, server_default="{}"))
    with op.batch_alter_table("submissions") as table:
        table.add_column(sa.Column("model", sa.String(120), nullable=True))
        table.add_column(sa.Column("template", sa.String(60), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("submissions") as table:
        table.drop_column("template")
        table.drop_column("model")
    with op.batch_alter_table("queues") as table:
        table.drop_column("prices")
        table.drop_column("token_budget")
    op.drop_table("note_accounts")
