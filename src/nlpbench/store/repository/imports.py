"""A whole dataset written in batches inside the caller's transaction."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from sqlalchemy import Table, func, select
from sqlalchemy.orm import Session

from nlpbench.store.models import (
    AnnotationRecord,
    AnnotationStore,
    FhirStore,
    Note,
    Patient,
)
from nlpbench.store.repository.common import (
    EVALUATION,
    GOLDSTANDARD,
    Conflict,
    MissingParent,
    _storable,
    _touch,
    insert_ignoring_conflicts,
)
from nlpbench.store.repository.datasets import get_dataset

IMPORT_BATCH = 1000


@dataclass(frozen=True, slots=True)
class ImportItem:
    """One note to import and its gold annotation arrays (``None``: the note has no gold record)."""

    identifier: str
    patient: str
    type: str
    text: str
    arrays: dict[str, list[dict[str, Any]]] | None = None


@dataclass
class ImportSummary:
    notes: int = 0
    patients: int = 0
    records: int = 0
    annotations: int = 0
    by_array: dict[str, int] = field(default_factory=dict)


def import_notes(
    session: Session,
    dataset: str,
    items: Iterable[ImportItem],
    *,
    fhir_store: str = EVALUATION,
    annotation_store: str = GOLDSTANDARD,
    batch: int = IMPORT_BATCH,
    advance: Callable[[int], None] | None = None,
) -> ImportSummary:
    """Write notes (creating their patients) and their gold records into an existing dataset, in batches.

    Runs in the caller's transaction: an error raised by ``items`` half-way (a bad span) or a
    duplicate note id leaves nothing behind once the caller rolls back. Memory holds one batch.
    The FHIR store and the annotation store are created when missing.
    """
    parent = get_dataset(session, dataset, MissingParent)
    notes_store = _get_or_create(session, FhirStore, parent.id, fhir_store)
    gold_store = _get_or_create(session, AnnotationStore, parent.id, annotation_store)
    summary = ImportSummary()
    chunk: list[ImportItem] = []
    for item in items:
        chunk.append(item)
        if len(chunk) >= batch:
            _import_batch(session, notes_store, gold_store, chunk, summary, f"{dataset}/{fhir_store}")
            if advance:
                advance(len(chunk))
            chunk = []
    if chunk:
        _import_batch(session, notes_store, gold_store, chunk, summary, f"{dataset}/{fhir_store}")
        if advance:
            advance(len(chunk))
    _touch(session, parent.id)
    return summary


def _get_or_create(session: Session, model: type[FhirStore] | type[AnnotationStore], dataset_id: int, name: str):
    found = session.execute(select(model).where(model.dataset_id == dataset_id, model.name == name)).scalar()
    if found is None:
        found = model(dataset_id=dataset_id, name=name)
        session.add(found)
        session.flush()
    return found


def _import_batch(
    session: Session,
    notes_store: FhirStore,
    gold_store: AnnotationStore,
    chunk: Sequence[ImportItem],
    summary: ImportSummary,
    where: str,
) -> None:
    for item in chunk:
        _storable(f"note {item.identifier!r} in {where}", text=item.text, type=item.type, annotations=item.arrays)
    identifiers = [item.identifier for item in chunk]
    seen: set[str] = set()
    for identifier in identifiers:
        if identifier in seen:
            raise Conflict(f"note {identifier!r} appears twice in the input")
        seen.add(identifier)
    existing = session.execute(
        select(Note.identifier).where(Note.fhir_store_id == notes_store.id, Note.identifier.in_(identifiers)).limit(1)
    ).first()
    if existing:
        raise Conflict(f"note {existing[0]!r} in {where} already exists")
    patients = sorted({item.patient for item in chunk})
    before = session.execute(
        select(func.count()).where(Patient.fhir_store_id == notes_store.id, Patient.identifier.in_(patients))
    ).scalar_one()
    session.execute(
        insert_ignoring_conflicts(session, Patient.__table__),
        [{"fhir_store_id": notes_store.id, "identifier": p} for p in patients],
    )
    summary.patients += len(patients) - before
    patient_ids = dict(
        session.execute(
            select(Patient.identifier, Patient.id).where(
                Patient.fhir_store_id == notes_store.id, Patient.identifier.in_(patients)
            )
        ).all()
    )
    session.execute(
        cast(Table, Note.__table__).insert(),
        [
            {
                "fhir_store_id": notes_store.id,
                "patient_id": patient_ids[item.patient],
                "identifier": item.identifier,
                "type": item.type,
                "text": item.text,
            }
            for item in chunk
        ],
    )
    summary.notes += len(chunk)
    prefix = f"datasets/{where.split('/')[0]}/fhirStores/{notes_store.name}/fhir/Note/"
    records: list[dict[str, Any]] = [
        {
            "annotation_store_id": gold_store.id,
            "identifier": item.identifier,
            "source": prefix + item.identifier,
            "note_identifier": item.identifier,
            "arrays": item.arrays,
        }
        for item in chunk
        if item.arrays is not None
    ]
    if records:
        session.execute(cast(Table, AnnotationRecord.__table__).insert(), records)
    summary.records += len(records)
    for record in records:
        for array, values in record["arrays"].items():
            summary.annotations += len(values)
            summary.by_array[array] = summary.by_array.get(array, 0) + len(values)
