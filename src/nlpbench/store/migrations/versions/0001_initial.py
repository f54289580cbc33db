"""The NLP Sandbox 1.2.0 data model, dataset metadata and API keys.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "api_keys",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("prefix", sa.String(length=16), nullable=False),
        sa.Column("secret_hash", sa.String(length=64), nullable=False),
        sa.Column("scope", sa.String(length=10), nullable=False),
        sa.Column("label", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_api_keys")),
        sa.UniqueConstraint("prefix", name=op.f("uq_api_keys_prefix")),
    )
    op.create_table(
        "datasets",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=60), nullable=False),
        sa.Column("version", sa.String(length=40), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("license", sa.String(length=40), nullable=False),
        sa.Column("visibility", sa.String(length=10), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("content_hash", sa.String(length=64), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_datasets")),
        sa.UniqueConstraint("name", name=op.f("uq_datasets_name")),
    )
    op.create_table(
        "annotation_stores",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("dataset_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=60), nullable=False),
        sa.ForeignKeyConstraint(
            ["dataset_id"], ["datasets.id"], name=op.f("fk_annotation_stores_dataset_id_datasets"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_annotation_stores")),
        sa.UniqueConstraint("dataset_id", "name", name=op.f("uq_annotation_stores_dataset_id_name")),
    )
    op.create_table(
        "fhir_stores",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("dataset_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=60), nullable=False),
        sa.ForeignKeyConstraint(
            ["dataset_id"], ["datasets.id"], name=op.f("fk_fhir_stores_dataset_id_datasets"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_fhir_stores")),
        sa.UniqueConstraint("dataset_id", "name", name=op.f("uq_fhir_stores_dataset_id_name")),
    )
    op.create_table(
        "annotations",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("annotation_store_id", sa.Integer(), nullable=False),
        sa.Column("identifier", sa.String(length=60), nullable=False),
        sa.Column("source", sa.Text(), nullable=False),
        sa.Column("note_identifier", sa.Text(), nullable=False),
        sa.Column("arrays", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(
            ["annotation_store_id"],
            ["annotation_stores.id"],
            name=op.f("fk_annotations_annotation_store_id_annotation_stores"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_annotations")),
        sa.UniqueConstraint(
            "annotation_store_id", "identifier", name=op.f("uq_annotations_annotation_store_id_identifier")
        ),
    )
    op.create_table(
        "patients",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("fhir_store_id", sa.Integer(), nullable=False),
        sa.Column("identifier", sa.String(length=60), nullable=False),
        sa.Column("gender", sa.String(length=10), nullable=True),
        sa.ForeignKeyConstraint(
            ["fhir_store_id"],
            ["fhir_stores.id"],
            name=op.f("fk_patients_fhir_store_id_fhir_stores"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_patients")),
        sa.UniqueConstraint("fhir_store_id", "identifier", name=op.f("uq_patients_fhir_store_id_identifier")),
    )
    op.create_table(
        "notes",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("fhir_store_id", sa.Integer(), nullable=False),
        sa.Column("patient_id", sa.Integer(), nullable=False),
        sa.Column("identifier", sa.String(length=60), nullable=False),
        sa.Column("type", sa.Text(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["fhir_store_id"], ["fhir_stores.id"], name=op.f("fk_notes_fhir_store_id_fhir_stores"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["patient_id"], ["patients.id"], name=op.f("fk_notes_patient_id_patients"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_notes")),
        sa.UniqueConstraint("fhir_store_id", "identifier", name=op.f("uq_notes_fhir_store_id_identifier")),
    )
    with op.batch_alter_table("notes", schema=None) as batch_op:
        batch_op.create_index("ix_notes_patient", ["patient_id"], unique=False)
    with op.batch_alter_table("annotations", schema=None) as batch_op:
        batch_op.create_index("ix_annotations_note", ["annotation_store_id", "note_identifier"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("annotations", schema=None) as batch_op:
        batch_op.drop_index("ix_annotations_note")
    with op.batch_alter_table("notes", schema=None) as batch_op:
        batch_op.drop_index("ix_notes_patient")

    op.drop_table("notes")
    op.drop_table("patients")
    op.drop_table("annotations")
    op.drop_table("fhir_stores")
    op.drop_table("annotation_stores")
    op.drop_table("datasets")
    op.drop_table("api_keys")
