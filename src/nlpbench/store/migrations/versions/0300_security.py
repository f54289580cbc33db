"""What the threat model needs stored: keys that expire and are revoked, data-node keys scoped to datasets,
queue limits on attempts, tool hosts and image registries, team tools uploaded as archives (stored by digest, per
team), gold visibility.

Revision ID: 0300
Revises: 0200
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0300"
down_revision = "0200"
branch_labels = None
depends_on = None

MOMENT = sa.DateTime(timezone=True)


def upgrade() -> None:
    with op.batch_alter_table("platform_keys") as table:
        table.add_column(sa.Column("label", sa.Text(), nullable=False, server_default=""))
        table.add_column(sa.Column("expires_at", MOMENT, nullable=True))
        table.add_column(sa.Column("revoked_at", MOMENT, nullable=True))
    with op.batch_alter_table("api_keys") as table:
        table.add_column(sa.Column("expires_at", MOMENT, nullable=True))
        table.add_column(sa.Column("revoked_at", MOMENT, nullable=True))
        table.add_column(sa.Column("datasets", sa.JSON(), nullable=True))
    with op.batch_alter_table("queues") as table:
        table.add_column(sa.Column("max_attempts", sa.Integer(), nullable=False, server_default="3"))
        table.add_column(sa.Column("tool_hosts", sa.JSON(), nullable=False, server_default="[]"))
        table.add_column(sa.Column("weak_sandbox", sa.Boolean(), nullable=False, server_default=sa.false()))
        table.add_column(sa.Column("image_registries", sa.JSON(), nullable=False, server_default="[]"))
    with op.batch_alter_table("submissions") as table:
        table.add_column(sa.Column("artifact", sa.String(71), nullable=True))
    with op.batch_alter_table("task_golds") as table:
        table.add_column(sa.Column("visibility", sa.String(10), nullable=False, server_default="private"))
    op.create_table(
        "artifacts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("digest", sa.String(71), nullable=False),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("team", sa.String(60), nullable=True),
        sa.Column("created_at", MOMENT, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_artifacts")),
        sa.UniqueConstraint("digest", "team", name=op.f("uq_artifacts_digest")),
    )
    op.create_table(
        "artifact_chunks",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("artifact_id", sa.Integer(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.ForeignKeyConstraint(
            ["artifact_id"], ["artifacts.id"], name=op.f("fk_artifact_chunks_artifact_id_artifacts"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_artifact_chunks")),
        sa.UniqueConstraint("artifact_id", "seq", name=op.f("uq_artifact_chunks_artifact_id")),
    )


def downgrade() -> None:
    op.drop_table("artifact_chunks")
    op.drop_table("artifacts")
    with op.batch_alter_table("task_golds") as table:
        table.drop_column("visibility")
    with op.batch_alter_table("submissions") as table:
        table.drop_column("artifact")
    with op.batch_alter_table("queues") as table:
        table.drop_column("image_registries")
        table.drop_column("weak_sandbox")
        table.drop_column("tool_hosts")
        table.drop_column("max_attempts")
    with op.batch_alter_table("api_keys") as table:
        table.drop_column("datasets")
        table.drop_column("revoked_at")
        table.drop_column("expires_at")
    with op.batch_alter_table("platform_keys") as table:
        table.drop_column("revoked_at")
        table.drop_column("expires_at")
        table.drop_column("label")
