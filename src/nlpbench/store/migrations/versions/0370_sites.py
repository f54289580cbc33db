"""Data sites: the centre's sites, the datasets each holds, each submission's run at each site; and, in a site's
own store, the centre's runs it took and the local submissions running them.

Revision ID: 0370
Revises: 0365
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0370"
down_revision = "0365"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")
MOMENT = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "sites",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(60), nullable=False),
        sa.Column("prefix", sa.String(16), nullable=False),
        sa.Column("secret_hash", sa.String(64), nullable=False),
        sa.Column("created_at", MOMENT, nullable=False),
        sa.Column("seen_at", MOMENT, nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sites")),
        sa.UniqueConstraint("name", name=op.f("uq_sites_name")),
        sa.UniqueConstraint("prefix", name=op.f("uq_sites_prefix")),
    )
    op.create_table(
        "site_datasets",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("site_id", sa.Integer(), nullable=False),
        sa.Column("dataset", sa.String(60), nullable=False),
        sa.Column("content_hash", sa.String(80), nullable=True),
        sa.ForeignKeyConstraint(
            ["site_id"], ["sites.id"], name=op.f("fk_site_datasets_site_id_sites"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_site_datasets")),
        sa.UniqueConstraint("site_id", "dataset", name=op.f("uq_site_datasets_site_id_dataset")),
    )
    op.create_index(op.f("ix_site_datasets_dataset"), "site_datasets", ["dataset"])
    op.create_table(
        "site_runs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("submission_id", sa.Integer(), nullable=False),
        sa.Column("site_id", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(12), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("content_hash", sa.String(80), nullable=True),
        sa.Column("reports", JSON, nullable=True),
        sa.Column("intervals", JSON, nullable=True),
        sa.Column("reproducibility", JSON, nullable=True),
        sa.Column("notes_done", sa.Integer(), nullable=False),
        sa.Column("notes_total", sa.Integer(), nullable=False),
        sa.Column("updated_at", MOMENT, nullable=False),
        sa.ForeignKeyConstraint(
            ["submission_id"],
            ["submissions.id"],
            name=op.f("fk_site_runs_submission_id_submissions"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(["site_id"], ["sites.id"], name=op.f("fk_site_runs_site_id_sites"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_site_runs")),
        sa.UniqueConstraint("submission_id", "site_id", name=op.f("uq_site_runs_submission_id_site_id")),
    )
    op.create_index(op.f("ix_site_runs_submission_id"), "site_runs", ["submission_id"])
    op.create_table(
        "site_jobs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("central", sa.Text(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("submission_id", sa.Integer(), nullable=False),
        sa.Column("state", sa.String(12), nullable=False),
        sa.Column("updated_at", MOMENT, nullable=False),
        sa.ForeignKeyConstraint(
            ["submission_id"],
            ["submissions.id"],
            name=op.f("fk_site_jobs_submission_id_submissions"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_site_jobs")),
        sa.UniqueConstraint("central", "run_id", name=op.f("uq_site_jobs_central_run_id")),
    )


def downgrade() -> None:
    op.drop_table("site_jobs")
    op.drop_index(op.f("ix_site_runs_submission_id"), table_name="site_runs")
    op.drop_table("site_runs")
    op.drop_index(op.f("ix_site_datasets_dataset"), table_name="site_datasets")
    op.drop_table("site_datasets")
    op.drop_table("sites")
