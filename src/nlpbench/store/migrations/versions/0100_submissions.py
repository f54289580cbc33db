"""The submission queue: queues, submissions, events, tool logs, golds of file-scored tasks, results, API keys.

Revision ID: 0100
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0100"
down_revision = "0001"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")
MOMENT = sa.DateTime(timezone=True)


def _id() -> sa.Column:
    return sa.Column("id", sa.Integer(), nullable=False)


def _parent(table: str, column: str, parent: str) -> list:
    return [
        sa.Column(column, sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            [column], [f"{parent}.id"], name=op.f(f"fk_{table}_{column}_{parent}"), ondelete="CASCADE"
        ),
    ]


def upgrade() -> None:
    op.create_table(
        "queues",
        _id(),
        sa.Column("name", sa.String(60), nullable=False),
        sa.Column("time_budget_seconds", sa.Float(), nullable=False),
        sa.Column("quota", sa.Integer(), nullable=True),
        sa.Column("quota_window", sa.String(10), nullable=False),
        sa.Column("profile", sa.String(40), nullable=False),
        sa.Column("api_version_fatal", sa.Boolean(), nullable=False),
        sa.Column("request_timeout", sa.Float(), nullable=False),
        sa.Column("retries", sa.Integer(), nullable=False),
        sa.Column("concurrency", sa.Integer(), nullable=False),
        sa.Column("max_response_bytes", sa.Integer(), nullable=False),
        sa.Column("tool_memory_bytes", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_queues")),
        sa.UniqueConstraint("name", name=op.f("uq_queues_name")),
    )
    op.create_table(
        "submissions",
        _id(),
        sa.Column("queue", sa.String(60), nullable=False),
        sa.Column("team", sa.String(60), nullable=False),
        sa.Column("task", sa.String(40), nullable=False),
        sa.Column("dataset", sa.String(60), nullable=False),
        sa.Column("dataset_version", sa.String(40), nullable=True),
        sa.Column("kind", sa.String(12), nullable=False),
        sa.Column("tool_url", sa.Text(), nullable=True),
        sa.Column("command", sa.Text(), nullable=True),
        sa.Column("image", sa.Text(), nullable=True),
        sa.Column("predictions", sa.Text(), nullable=True),
        sa.Column("predictions_name", sa.Text(), nullable=True),
        sa.Column("status", sa.String(12), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("created_at", MOMENT, nullable=False),
        sa.Column("updated_at", MOMENT, nullable=False),
        sa.Column("validated_at", MOMENT, nullable=True),
        sa.Column("started_at", MOMENT, nullable=True),
        sa.Column("finished_at", MOMENT, nullable=True),
        sa.Column("worker", sa.String(120), nullable=True),
        sa.Column("lease_expires_at", MOMENT, nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("notes_total", sa.Integer(), nullable=False),
        sa.Column("notes_done", sa.Integer(), nullable=False),
        sa.Column("tool_meta", JSON, nullable=True),
        sa.Column("warnings", JSON, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_submissions")),
    )
    op.create_index("ix_submissions_claim", "submissions", ["queue", "status"])
    op.create_index("ix_submissions_quota", "submissions", ["team", "task", "queue", "created_at"])
    op.create_table(
        "submission_events",
        _id(),
        *_parent("submission_events", "submission_id", "submissions"),
        sa.Column("at", MOMENT, nullable=False),
        sa.Column("status", sa.String(12), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_submission_events")),
    )
    op.create_index("ix_submission_events_submission", "submission_events", ["submission_id"])
    op.create_table(
        "submission_logs",
        _id(),
        *_parent("submission_logs", "submission_id", "submissions"),
        sa.Column("stream", sa.String(10), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("truncated", sa.Boolean(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_submission_logs")),
        sa.UniqueConstraint("submission_id", "stream", name=op.f("uq_submission_logs_submission_id")),
    )
    op.create_table(
        "task_golds",
        _id(),
        sa.Column("task", sa.String(40), nullable=False),
        sa.Column("dataset", sa.String(60), nullable=False),
        sa.Column("version", sa.String(40), nullable=False),
        sa.Column("files", JSON, nullable=False),
        sa.Column("options", JSON, nullable=False),
        sa.Column("content_hash", sa.String(64), nullable=False),
        sa.Column("created_at", MOMENT, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_task_golds")),
        sa.UniqueConstraint("task", "dataset", "version", name=op.f("uq_task_golds_task")),
    )
    op.create_table(
        "results",
        _id(),
        *_parent("results", "submission_id", "submissions"),
        sa.Column("profile", sa.String(40), nullable=False),
        sa.Column("scores", JSON, nullable=False),
        sa.Column("reproducibility", JSON, nullable=False),
        sa.Column("warnings", JSON, nullable=False),
        sa.Column("created_at", MOMENT, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_results")),
        sa.UniqueConstraint("submission_id", "profile", name=op.f("uq_results_submission_id")),
    )
    op.create_table(
        "result_documents",
        _id(),
        *_parent("result_documents", "result_id", "results"),
        sa.Column("annotation_type", sa.String(40), nullable=False),
        sa.Column("document", sa.Text(), nullable=False),
        sa.Column("metric", sa.String(60), nullable=False),
        sa.Column("counts", JSON, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_result_documents")),
    )
    op.create_index("ix_result_documents_result", "result_documents", ["result_id"])
    op.create_table(
        "platform_keys",
        _id(),
        sa.Column("prefix", sa.String(16), nullable=False),
        sa.Column("secret_hash", sa.String(64), nullable=False),
        sa.Column("role", sa.String(10), nullable=False),
        sa.Column("team", sa.String(60), nullable=True),
        sa.Column("created_at", MOMENT, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_platform_keys")),
        sa.UniqueConstraint("prefix", name=op.f("uq_platform_keys_prefix")),
    )


def downgrade() -> None:
    for table in (
        "platform_keys",
        "result_documents",
        "results",
        "task_golds",
        "submission_logs",
        "submission_events",
        "submissions",
    ):
        op.drop_table(table)
    op.drop_table("queues")
