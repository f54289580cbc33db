"""The tables of the store: the NLP Sandbox 1.2.0 data model, plus what results need to name their data.

A dataset holds FHIR stores (patients and their notes) and annotation stores
(annotation records, one per note: the five PHI arrays and COVID symptoms as
the schema has them). Every child row belongs to its parent through a foreign
key with ``ON DELETE CASCADE``, so deleting a dataset deletes everything in it.
Names are the client-chosen ids of the data-node API (``[a-z0-9]+(-[a-z0-9]+)*``,
3–60 characters); rows are keyed by an integer so that children stay small.

Beyond the original data node, a dataset has a version, a description, a
licence, a visibility (``public`` or ``private``: whether pages may show its
text), its creation time and a content hash over its notes and gold standard
(:func:`nlpbench.store.repository.content_hash`), cleared whenever they change.
API keys are stored as a SHA-256 of their secret, never the secret itself.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

#: Ids of the data-node API: the schemas' ``…Id`` parameters.
NAME_LENGTH = 60
VISIBILITIES = ("public", "private")
GENDERS = ("male", "female", "other", "unknown")

#: Constraint names that Alembic and both backends agree on.
NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}
#: Annotation arrays are stored and served whole, never queried inside: JSON (kept as text) is
#: cheaper to write and to read than JSONB on PostgreSQL.
Json = JSON()


def utcnow() -> datetime:
    return datetime.now(UTC)


class UtcDateTime(TypeDecorator):
    """A moment in UTC, read back with its time zone on every backend (SQLite keeps none)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect) -> datetime | None:
        return value.astimezone(UTC) if value is not None else None

    def process_result_value(self, value: datetime | None, dialect) -> datetime | None:
        if value is not None and value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


def _parent(table: str) -> Mapped[int]:
    return mapped_column(ForeignKey(f"{table}.id", ondelete="CASCADE"), nullable=False)


class Dataset(Base):
    __tablename__ = "datasets"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(NAME_LENGTH), unique=True)
    version: Mapped[str] = mapped_column(String(40), default="1")
    description: Mapped[str] = mapped_column(Text, default="")
    license: Mapped[str] = mapped_column(String(40), default="none")
    visibility: Mapped[str] = mapped_column(String(10), default="private")
    created_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utcnow)
    #: SHA-256 over the notes and the gold standard; NULL until computed and after any change.
    content_hash: Mapped[str | None] = mapped_column(String(64), default=None)


class FhirStore(Base):
    __tablename__ = "fhir_stores"
    __table_args__ = (UniqueConstraint("dataset_id", "name"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    dataset_id: Mapped[int] = _parent("datasets")
    name: Mapped[str] = mapped_column(String(NAME_LENGTH))


class Patient(Base):
    __tablename__ = "patients"
    __table_args__ = (UniqueConstraint("fhir_store_id", "identifier"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    fhir_store_id: Mapped[int] = _parent("fhir_stores")
    identifier: Mapped[str] = mapped_column(String(NAME_LENGTH))
    gender: Mapped[str | None] = mapped_column(String(10), default=None)


class Note(Base):
    __tablename__ = "notes"
    __table_args__ = (UniqueConstraint("fhir_store_id", "identifier"), Index("ix_notes_patient", "patient_id"))

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    fhir_store_id: Mapped[int] = _parent("fhir_stores")
    patient_id: Mapped[int] = _parent("patients")
    identifier: Mapped[str] = mapped_column(String(NAME_LENGTH))
    type: Mapped[str] = mapped_column(Text, default="")
    text: Mapped[str] = mapped_column(Text)


class AnnotationStore(Base):
    __tablename__ = "annotation_stores"
    __table_args__ = (UniqueConstraint("dataset_id", "name"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    dataset_id: Mapped[int] = _parent("datasets")
    name: Mapped[str] = mapped_column(String(NAME_LENGTH))


class AnnotationRecord(Base):
    """One annotation record: the annotations of one note in one store.

    ``source`` is ``annotationSource.resourceSource.name`` (the note's resource
    name) and ``note_identifier`` its last segment; ``arrays`` maps each
    ``text…Annotations`` array the record carries to its list of objects.
    """

    __tablename__ = "annotations"
    __table_args__ = (
        UniqueConstraint("annotation_store_id", "identifier"),
        Index("ix_annotations_note", "annotation_store_id", "note_identifier"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    annotation_store_id: Mapped[int] = _parent("annotation_stores")
    identifier: Mapped[str] = mapped_column(String(NAME_LENGTH))
    source: Mapped[str] = mapped_column(Text)
    note_identifier: Mapped[str] = mapped_column(Text)
    arrays: Mapped[dict[str, Any]] = mapped_column(Json)


class ApiKey(Base):
    """A data-node API key: its public prefix, the SHA-256 of its secret and its scope (``read`` or ``write``).

    ``datasets`` lists the datasets the key may reach (NULL: all); a key past
    ``expires_at`` or with ``revoked_at`` set is refused like an unknown one.
    """

    __tablename__ = "api_keys"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    prefix: Mapped[str] = mapped_column(String(16), unique=True)
    secret_hash: Mapped[str] = mapped_column(String(64))
    scope: Mapped[str] = mapped_column(String(10))
    label: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utcnow)
    expires_at: Mapped[datetime | None] = mapped_column(UtcDateTime, default=None)
    revoked_at: Mapped[datetime | None] = mapped_column(UtcDateTime, default=None)
    datasets: Mapped[list[str] | None] = mapped_column(Json, default=None)
