"""A dataset read back: its notes and one annotation store as documents, and the hash of what it holds."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Any

import msgspec
from sqlalchemy import Text, cast, null, select
from sqlalchemy.orm import Session

from nlpbench.model import PHI_TYPES, Annotation, Document, Span
from nlpbench.store.models import (
    AnnotationRecord,
    AnnotationStore,
    FhirStore,
    Note,
)
from nlpbench.store.repository.annotations import get_annotation_store, iter_records
from nlpbench.store.repository.common import EVALUATION, GOLDSTANDARD
from nlpbench.store.repository.datasets import get_dataset
from nlpbench.store.repository.fhir import _notes_query, get_fhir_store, iter_notes

_BY_ARRAY = {t.array: t for t in PHI_TYPES.values()}
_CORE_KEYS = ("start", "length", "text", "confidence")


def annotations_of(doc_id: str, arrays: dict[str, list[dict[str, Any]]]) -> list[Annotation]:
    """A record's arrays as model annotations (the store holds them checked: no validation here)."""
    found = []
    for array, values in arrays.items():
        phi = _BY_ARRAY.get(array)
        if phi is None:
            continue
        for value in values:
            attributes = {k: v for k, v in value.items() if k not in _CORE_KEYS}
            span = Span.of(value["start"], value["length"])
            found.append(Annotation(doc_id, span, phi.name, value["text"], attributes, value.get("confidence")))
    return found


def documents(
    session: Session,
    dataset: str,
    annotation_store: str | None = GOLDSTANDARD,
    fhir_store: str = EVALUATION,
    batch: int = 1000,
) -> Iterator[Document]:
    """Each note of ``fhir_store`` with the annotations ``annotation_store`` holds for it, streamed in id order.

    A note without a record has no annotations; ``annotation_store=None`` reads notes only. A record is
    matched to its note by the last segment of its source name.
    """
    store = get_fhir_store(session, dataset, fhir_store)
    query = _notes_query(store.id)
    if annotation_store is not None:
        annotations = get_annotation_store(session, dataset, annotation_store)
        query = query.add_columns(AnnotationRecord.arrays).outerjoin(
            AnnotationRecord,
            (AnnotationRecord.annotation_store_id == annotations.id)
            & (AnnotationRecord.note_identifier == Note.identifier),
        )
    for row in session.execute(query.execution_options(yield_per=batch)):
        identifier, patient, note_type, text = row[:4]
        arrays = row[4] if len(row) > 4 and row[4] is not None else {}
        yield Document(
            identifier,
            text,
            annotations_of(identifier, arrays),
            metadata={"patientId": patient, "noteType": note_type},
        )


def records_json(
    session: Session,
    dataset: str,
    annotation_store: str,
    fhir_store: str = EVALUATION,
    *,
    arrays: bool = True,
    batch: int = 1000,
) -> Iterator[tuple[str, str | None]]:
    """Each note of ``fhir_store`` with each record ``annotation_store`` holds for it, as :func:`documents` pairs
    them (a note without a record once), streamed in note id order: the note's id and the record's ``arrays`` as
    the JSON text the store keeps (None for a note without a record, or without ``arrays``: the ids alone)."""
    store = get_fhir_store(session, dataset, fhir_store)
    annotations = get_annotation_store(session, dataset, annotation_store)
    kept = cast(AnnotationRecord.arrays, Text) if arrays else null()
    query = (
        select(Note.identifier, kept)
        .outerjoin(
            AnnotationRecord,
            (AnnotationRecord.annotation_store_id == annotations.id)
            & (AnnotationRecord.note_identifier == Note.identifier),
        )
        .where(Note.fhir_store_id == store.id)
        .order_by(Note.identifier, AnnotationRecord.identifier)
    )
    # a Row is a tuple (SQLAlchemy 2.1 deprecates Result.tuples())
    yield from session.execute(query.execution_options(yield_per=batch))


def content_hash(session: Session, dataset: str) -> str:
    """SHA-256 over the dataset's notes (every FHIR store) and its gold standard, computed once per content.

    Hashed, in id order: each FHIR store's name, then each note's id, patient, type and text; then each
    record of the ``goldstandard`` store (id, note id, arrays as canonical JSON). The dataset's own name
    is not hashed, so a copy under another name has the same hash. The hash is kept until a note or a
    gold record changes.
    """
    row = get_dataset(session, dataset)
    if row.content_hash is not None:
        return row.content_hash
    digest = hashlib.sha256()

    def add(*parts: Any) -> None:
        digest.update(msgspec.json.encode(parts, order="sorted"))
        digest.update(b"\n")

    stores = session.scalars(select(FhirStore.name).where(FhirStore.dataset_id == row.id).order_by(FhirStore.name))
    for store in list(stores):
        add("fhirStore", store)
        for note in iter_notes(session, dataset, store):
            add("note", note.identifier, note.patient, note.type, note.text)
    gold = session.execute(
        select(AnnotationStore.id).where(AnnotationStore.dataset_id == row.id, AnnotationStore.name == GOLDSTANDARD)
    ).first()
    if gold is not None:
        for record in iter_records(session, dataset, GOLDSTANDARD):
            add("annotation", record.identifier, record.note_identifier, record.arrays)
    row.content_hash = digest.hexdigest()
    return row.content_hash
