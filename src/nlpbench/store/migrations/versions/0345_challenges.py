"""Challenges and their phases, registered teams; a submission names the phase it was made to, and whether an organiser
disqualified or hid it, and why; and what its team says of it (a description, links to a paper and the code).

Revision ID: 0345
Revises: 0340
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0345"
down_revision = "0340"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")
MOMENT = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "challenges",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(60), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("created_at", MOMENT, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_challenges")),
        sa.UniqueConstraint("name", name=op.f("uq_challenges_name")),
    )
    op.create_table(
        "phases",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("challenge_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(60), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("tasks", JSON, nullable=False),
        sa.Column("datasets", JSON, nullable=False),
        sa.Column("queue", sa.String(60), nullable=False),
        sa.Column("opens_at", MOMENT, nullable=False),
        sa.Column("closes_at", MOMENT, nullable=False),
        sa.Column("kinds", JSON, nullable=False),
        sa.Column("quota", sa.Integer(), nullable=True),
        sa.Column("quota_window", sa.String(10), nullable=False),
        sa.Column("quota_per_task", sa.Boolean(), nullable=False),
        sa.Column("memory_bytes", sa.BigInteger(), nullable=False),
        sa.Column("cpu_seconds", sa.Float(), nullable=False),
        sa.Column("processes", sa.Integer(), nullable=False),
        sa.Column("wall_seconds", sa.Float(), nullable=False),
        sa.Column("visibility", sa.String(10), nullable=False),
        sa.Column("freeze_at_close", sa.Boolean(), nullable=False),
        sa.Column("frozen_at", MOMENT, nullable=True),
        sa.ForeignKeyConstraint(
            ["challenge_id"], ["challenges.id"], name=op.f("fk_phases_challenge_id_challenges"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_phases")),
        sa.UniqueConstraint("challenge_id", "name", name=op.f("uq_phases_challenge_id_name")),
    )
    op.create_table(
        "teams",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(60), nullable=False),
        sa.Column("affiliation", sa.Text(), nullable=False),
        sa.Column("contact", sa.Text(), nullable=False),
        sa.Column("registered_at", MOMENT, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_teams")),
        sa.UniqueConstraint("name", name=op.f("uq_teams_name")),
    )
    with op.batch_alter_table("submissions") as table:
        table.add_column(sa.Column("phase_id", sa.Integer(), nullable=True))
        table.add_column(sa.Column("removal", sa.String(12), nullable=True))
        for column in ("description", "paper_url", "code_url"):
            table.add_column(sa.Column(column, sa.Text(), nullable=True))
        table.add_column(sa.Column("removal_reason", sa.Text(), nullable=True))
        table.create_foreign_key(
            op.f("fk_submissions_phase_id_phases"), "phases", ["phase_id"], ["id"], ondelete="RESTRICT"
        )
        table.create_index(op.f("ix_submissions_phase_id"), ["phase_id"])


def downgrade() -> None:
    with op.batch_alter_table("submissions") as table:
        table.drop_index(op.f("ix_submissions_phase_id"))
        table.drop_constraint(op.f("fk_submissions_phase_id_phases"), type_="foreignkey")
        for column in ("code_url", "paper_url", "description"):
            table.drop_column(column)
        table.drop_column("removal_reason")
        table.drop_column("removal")
        table.drop_column("phase_id")
    op.drop_table("teams")
    op.drop_table("phases")
    op.drop_table("challenges")
