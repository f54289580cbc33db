"""FHIR stores, patients and notes of a dataset."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import cast

from sqlalchemy import CursorResult, Select, bindparam, delete, select
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session

from nlpbench.store.models import (
    Dataset,
    FhirStore,
    Note,
    Patient,
)
from nlpbench.store.repository.common import (
    EVALUATION,
    Conflict,
    MissingParent,
    NotFound,
    Page,
    StoreError,
    _insert_new,
    _one,
    _page,
    _rows_page,
    _storable,
    _touch,
    gone,
)
from nlpbench.store.repository.datasets import get_dataset


@dataclass(frozen=True, slots=True)
class NoteRow:
    """A note as the data node serves it."""

    identifier: str
    patient: str
    type: str
    text: str


def get_fhir_store(session: Session, dataset: str, name: str, missing: type[StoreError] = NotFound) -> FhirStore:
    parent = get_dataset(session, dataset, missing)
    query = select(FhirStore).where(FhirStore.dataset_id == parent.id, FhirStore.name == name)
    return _one(session, query, gone(missing, f"FHIR store {dataset}/{name}"))


def create_fhir_store(session: Session, dataset: str, name: str) -> FhirStore:
    parent = get_dataset(session, dataset, MissingParent)
    if session.execute(select(FhirStore.id).where(FhirStore.dataset_id == parent.id, FhirStore.name == name)).first():
        raise Conflict(f"FHIR store {dataset}/{name} already exists")
    return _insert_new(session, FhirStore(dataset_id=parent.id, name=name), f"FHIR store {dataset}/{name}")


def list_fhir_stores(session: Session, dataset: str, offset: int = 0, limit: int = 10) -> Page[FhirStore]:
    parent = get_dataset(session, dataset, MissingParent)
    query = select(FhirStore).where(FhirStore.dataset_id == parent.id).order_by(FhirStore.name)
    return _page(session, query, offset, limit)


def delete_fhir_store(session: Session, dataset: str, name: str) -> None:
    store = get_fhir_store(session, dataset, name)
    session.execute(delete(FhirStore).where(FhirStore.id == store.id))
    _touch(session, store.dataset_id)


def get_patient(
    session: Session, dataset: str, fhir_store: str, identifier: str, missing: type[StoreError] = NotFound
) -> Patient:
    store = get_fhir_store(session, dataset, fhir_store, missing)
    query = select(Patient).where(Patient.fhir_store_id == store.id, Patient.identifier == identifier)
    return _one(session, query, gone(missing, f"patient {identifier!r} in {dataset}/{fhir_store}"))


def create_patient(
    session: Session, dataset: str, fhir_store: str, identifier: str, gender: str | None = None
) -> Patient:
    store = get_fhir_store(session, dataset, fhir_store, MissingParent)
    query = select(Patient.id).where(Patient.fhir_store_id == store.id, Patient.identifier == identifier)
    if session.execute(query).first():
        raise Conflict(f"patient {identifier!r} in {dataset}/{fhir_store} already exists")
    row = Patient(fhir_store_id=store.id, identifier=identifier, gender=gender)
    return _insert_new(session, row, f"patient {identifier!r} in {dataset}/{fhir_store}")


def list_patients(session: Session, dataset: str, fhir_store: str, offset: int = 0, limit: int = 10) -> Page[Patient]:
    store = get_fhir_store(session, dataset, fhir_store, MissingParent)
    query = select(Patient).where(Patient.fhir_store_id == store.id).order_by(Patient.identifier)
    return _page(session, query, offset, limit)


def delete_patient(session: Session, dataset: str, fhir_store: str, identifier: str) -> None:
    """Delete a patient and their notes."""
    patient = get_patient(session, dataset, fhir_store, identifier)
    session.execute(delete(Patient).where(Patient.id == patient.id))
    _touch(session, get_dataset(session, dataset).id)


def _notes_query(store_id: int) -> Select:
    return (
        select(Note.identifier, Patient.identifier, Note.type, Note.text)
        .join(Patient, Note.patient_id == Patient.id)
        .where(Note.fhir_store_id == store_id)
        .order_by(Note.identifier)
    )


def _note_by_name() -> Select:
    notes, patients, stores, datasets = (m.__table__.c for m in (Note, Patient, FhirStore, Dataset))
    return (
        select(notes.identifier, patients.identifier, notes.type, notes.text)
        .join_from(Note.__table__, Patient.__table__, notes.patient_id == patients.id)
        .join(FhirStore.__table__, notes.fhir_store_id == stores.id)
        .join(Dataset.__table__, stores.dataset_id == datasets.id)
        .where(
            datasets.name == bindparam("dataset"),
            stores.name == bindparam("fhir_store"),
            notes.identifier == bindparam("note"),
        )
    )


#: Built once, on the tables rather than the ORM classes: reading a note by name is the data node's
#: hottest query, and this way it neither rebuilds the statement nor goes through ORM loading.
_NOTE_BY_NAME = _note_by_name()


def get_note(
    db: Session | Connection, dataset: str, fhir_store: str, identifier: str, missing: type[StoreError] = NotFound
) -> NoteRow:
    """One note, in one query, in a session or (cheaper) a Core connection (:meth:`Store.connection`);
    when it is missing, a second lookup says what is."""
    row = db.execute(_NOTE_BY_NAME, {"dataset": dataset, "fhir_store": fhir_store, "note": identifier}).first()
    if row is None:
        get_fhir_store(db if isinstance(db, Session) else Session(db), dataset, fhir_store, missing)
        raise gone(missing, f"note {identifier!r} in {dataset}/{fhir_store}")
    return NoteRow(*row)


def create_note(
    session: Session, dataset: str, fhir_store: str, identifier: str, *, text: str, type: str, patient: str
) -> NoteRow:
    """A new note of an existing patient (:class:`MissingParent` when the patient does not exist)."""
    store = get_fhir_store(session, dataset, fhir_store, MissingParent)
    _storable(f"note {identifier!r} in {dataset}/{fhir_store}", text=text, type=type)
    owner = get_patient(session, dataset, fhir_store, patient, MissingParent)
    if session.execute(select(Note.id).where(Note.fhir_store_id == store.id, Note.identifier == identifier)).first():
        raise Conflict(f"note {identifier!r} in {dataset}/{fhir_store} already exists")
    row = Note(fhir_store_id=store.id, patient_id=owner.id, identifier=identifier, type=type, text=text)
    _insert_new(session, row, f"note {identifier!r} in {dataset}/{fhir_store}")
    _touch(session, store.dataset_id)
    return NoteRow(identifier, patient, type, text)


def list_notes(session: Session, dataset: str, fhir_store: str, offset: int = 0, limit: int = 10) -> Page[NoteRow]:
    store = get_fhir_store(session, dataset, fhir_store, MissingParent)
    page = _rows_page(session, Note, Note.fhir_store_id, store.id, _notes_query(store.id), offset, limit)
    return Page([NoteRow(*row) for row in page.items], page.total, offset, limit)


def delete_note(session: Session, dataset: str, fhir_store: str, identifier: str) -> None:
    store = get_fhir_store(session, dataset, fhir_store)
    deleted = cast(
        CursorResult, session.execute(delete(Note).where(Note.fhir_store_id == store.id, Note.identifier == identifier))
    )
    if not deleted.rowcount:
        raise NotFound(f"note {identifier!r} in {dataset}/{fhir_store} not found")
    _touch(session, store.dataset_id)


def iter_notes(session: Session, dataset: str, fhir_store: str = EVALUATION, batch: int = 1000) -> Iterator[NoteRow]:
    """Every note of a FHIR store in id order, streamed."""
    store = get_fhir_store(session, dataset, fhir_store)
    for row in session.execute(_notes_query(store.id).execution_options(yield_per=batch)):
        yield NoteRow(*row)
