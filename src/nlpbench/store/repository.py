"""Reading and writing the store: datasets, FHIR stores, patients, notes, annotation stores and records.

Every function takes the :class:`~sqlalchemy.orm.Session` of one transaction
(:meth:`nlpbench.store.Store.session`), so that writes that belong together
commit together. Resources are named by the ids of the data-node API: a note is
``(dataset, fhir_store, note)``. Errors are values the API and the command line
turn into a status or a line: :class:`NotFound` (404), :class:`Conflict` (409),
:class:`MissingParent` (400: a resource named in the request does not exist).
No message quotes a note's text. Text the store cannot keep is refused with a
:class:`StoreError` naming the resource and the field: a NUL character
(PostgreSQL's text holds none; SQLite would, so both refuse it and a store
moves between them) and a lone surrogate (not Unicode: no backend encodes it).

A session may be limited to some datasets (a data-node key scoped to them):
``session.info[REACH]`` names them, and every other dataset is absent to it —
the same error, at the same point, as a dataset that does not exist.

:func:`import_notes` writes a whole dataset in batches inside the caller's
transaction; :func:`documents` reads notes and one annotation store back as
:class:`~nlpbench.model.Document` objects; :func:`content_hash` names exactly
what a dataset holds.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import msgspec
from sqlalchemy import Select, bindparam, delete, func, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from nlpbench.model import PHI_TYPES, Annotation, Document, Span
from nlpbench.store.models import (
    AnnotationRecord,
    AnnotationStore,
    Dataset,
    FhirStore,
    Note,
    Patient,
)

T = TypeVar("T")
#: The NLP Sandbox conventions: notes in FHIR store ``evaluation``, gold in annotation store ``goldstandard``.
EVALUATION = "evaluation"
GOLDSTANDARD = "goldstandard"
IMPORT_BATCH = 1000
_BY_ARRAY = {t.array: t for t in PHI_TYPES.values()}
_CORE_KEYS = ("start", "length", "text", "confidence")
#: ``session.info`` key: the names of the only datasets a session may reach (absent or None: every dataset).
REACH = "nlpbench.reach"


class StoreError(Exception):
    """A request the store refuses; ``str(error)`` is one line naming the resource."""

    status = 400


class NotFound(StoreError):
    status = 404


class Conflict(StoreError):
    status = 409


class MissingParent(StoreError):
    """A resource the request names (the dataset of a new FHIR store, the patient of a new note) does not exist."""

    status = 400


@dataclass(frozen=True)
class Page(Generic[T]):
    """One page of a listing: its items and the total count of the listing."""

    items: list[T]
    total: int
    offset: int
    limit: int

    @property
    def has_next(self) -> bool:
        return self.offset + len(self.items) < self.total


@dataclass(frozen=True, slots=True)
class NoteRow:
    """A note as the data node serves it."""

    identifier: str
    patient: str
    type: str
    text: str


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


def _one(session: Session, query: Select, error: StoreError) -> Any:
    found = session.execute(query).first()
    if found is None:
        raise error
    return found[0]


def _page(session: Session, query: Select, offset: int, limit: int) -> Page:
    total = session.execute(select(func.count()).select_from(query.order_by(None).subquery())).scalar_one()
    if offset >= total:  # also keeps offsets beyond any integer column out of SQL
        return Page([], total, offset, limit)
    rows = session.execute(query.offset(offset).limit(limit)).all()
    return Page([row[0] if len(row) == 1 else row for row in rows], total, offset, limit)


def _rows_page(session: Session, model: Any, parent: Any, parent_id: int, query: Select, offset: int, limit: int):
    """A page of a large listing (notes, records): counted on the parent's index, and the offset skipped
    over ids alone (the index on (parent, identifier)), so that only the rows shown are read and joined."""
    total = session.execute(select(func.count()).select_from(model).where(parent == parent_id)).scalar_one()
    if offset >= total:
        return Page([], total, offset, limit)
    ids = select(model.id).where(parent == parent_id).order_by(model.identifier).offset(offset).limit(limit).subquery()
    rows = session.execute(query.join(ids, ids.c.id == model.id)).all()
    return Page([row[0] if len(row) == 1 else row for row in rows], total, offset, limit)


def _insert_new(session: Session, row: Any, what: str) -> Any:
    """Add ``row``; a row with the same name written meanwhile by another transaction is a :class:`Conflict`."""
    try:
        with session.begin_nested():
            session.add(row)
    except IntegrityError:
        raise Conflict(f"{what} already exists") from None
    return row


def gone(error_class: type[StoreError], what: str) -> StoreError:
    """The error for a missing resource: ``… does not exist`` when the request named it as a parent, else
    ``… not found``."""
    return error_class(f"{what} does not exist" if error_class is MissingParent else f"{what} not found")


def check_reach(reach: Collection[str] | None, dataset: str, missing: type[StoreError] = NotFound) -> None:
    """Raise what a missing dataset raises when ``dataset`` is not among ``reach`` (None: every dataset)."""
    if reach is not None and dataset not in reach:
        raise gone(missing, f"dataset {dataset!r}")


def unstorable(value: Any) -> str | None:
    """Why ``value`` (a string, or lists and dicts holding strings) cannot be stored, or None when it can."""
    if isinstance(value, str):
        if "\x00" in value:
            return "holds a NUL character (U+0000), which the store cannot keep"
        if not value.isascii():
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                return "holds a lone surrogate, which is not Unicode text"
        return None
    if isinstance(value, dict):
        value = [*value.keys(), *value.values()]
    if isinstance(value, list | tuple):
        return next(filter(None, map(unstorable, value)), None)
    return None


def _storable(what: str, **fields: Any) -> None:
    """Raise a :class:`StoreError` naming ``what`` and the field when a field's value cannot be stored."""
    for name, value in fields.items():
        reason = unstorable(value)
        if reason:
            raise StoreError(f"{what}: {name} {reason}")


def _touch(session: Session, dataset_id: int) -> None:
    """Forget the dataset's content hash: its notes or gold changed (no row lock when already forgotten)."""
    session.execute(
        update(Dataset).where(Dataset.id == dataset_id, Dataset.content_hash.is_not(None)).values(content_hash=None)
    )


# --- datasets -------------------------------------------------------------------------------


def get_dataset(session: Session, name: str, missing: type[StoreError] = NotFound) -> Dataset:
    check_reach(session.info.get(REACH), name, missing)
    return _one(session, select(Dataset).where(Dataset.name == name), gone(missing, f"dataset {name!r}"))


def create_dataset(
    session: Session,
    name: str,
    *,
    version: str = "1",
    description: str = "",
    license: str = "none",
    visibility: str = "private",
) -> Dataset:
    """A new dataset; :class:`Conflict` when the name is taken."""
    if visibility not in ("public", "private"):
        raise StoreError(f"visibility {visibility!r} is neither public nor private")
    _storable(f"dataset {name!r}", version=version, description=description, license=license)
    if session.execute(select(Dataset.id).where(Dataset.name == name)).first():
        raise Conflict(f"dataset {name!r} already exists")
    row = Dataset(name=name, version=version, description=description, license=license, visibility=visibility)
    return _insert_new(session, row, f"dataset {name!r}")


def list_datasets(session: Session, offset: int = 0, limit: int = 10) -> Page[Dataset]:
    """A page of the datasets the session reaches, by name."""
    query = select(Dataset).order_by(Dataset.name)
    reach = session.info.get(REACH)
    if reach is not None:
        query = query.where(Dataset.name.in_(sorted(reach)))
    return _page(session, query, offset, limit)


def delete_dataset(session: Session, name: str) -> None:
    """Delete a dataset and everything in it (the foreign keys cascade)."""
    session.execute(delete(Dataset).where(Dataset.id == get_dataset(session, name).id))


@dataclass(frozen=True, slots=True)
class DatasetOverview:
    name: str
    version: str
    visibility: str
    created_at: Any
    notes: int
    gold: int


def dataset_overview(session: Session) -> list[DatasetOverview]:
    """Every dataset with its note count (all FHIR stores) and gold record count, by name."""
    notes = (
        select(FhirStore.dataset_id, func.count(Note.id).label("n"))
        .join(Note, Note.fhir_store_id == FhirStore.id)
        .group_by(FhirStore.dataset_id)
        .subquery()
    )
    gold = (
        select(AnnotationStore.dataset_id, func.count(AnnotationRecord.id).label("n"))
        .join(AnnotationRecord, AnnotationRecord.annotation_store_id == AnnotationStore.id)
        .where(AnnotationStore.name == GOLDSTANDARD)
        .group_by(AnnotationStore.dataset_id)
        .subquery()
    )
    query = (
        select(Dataset, func.coalesce(notes.c.n, 0), func.coalesce(gold.c.n, 0))
        .outerjoin(notes, notes.c.dataset_id == Dataset.id)
        .outerjoin(gold, gold.c.dataset_id == Dataset.id)
        .order_by(Dataset.name)
    )
    return [DatasetOverview(d.name, d.version, d.visibility, d.created_at, n, g) for d, n, g in session.execute(query)]


def store_counts(session: Session, dataset: str) -> list[tuple[str, str, int, str]]:
    """``(kind, store, count, unit)`` for each FHIR store (notes) and annotation store (records) of a dataset."""
    parent = get_dataset(session, dataset)
    fhir = (
        select(FhirStore.name, func.count(Note.id))
        .outerjoin(Note, Note.fhir_store_id == FhirStore.id)
        .where(FhirStore.dataset_id == parent.id)
        .group_by(FhirStore.name)
        .order_by(FhirStore.name)
    )
    records = (
        select(AnnotationStore.name, func.count(AnnotationRecord.id))
        .outerjoin(AnnotationRecord, AnnotationRecord.annotation_store_id == AnnotationStore.id)
        .where(AnnotationStore.dataset_id == parent.id)
        .group_by(AnnotationStore.name)
        .order_by(AnnotationStore.name)
    )
    return [("fhirStores", name, n, "notes") for name, n in session.execute(fhir)] + [
        ("annotationStores", name, n, "annotation records") for name, n in session.execute(records)
    ]


# --- FHIR stores, patients, notes ------------------------------------------------------------


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
    deleted = session.execute(delete(Note).where(Note.fhir_store_id == store.id, Note.identifier == identifier))
    if not deleted.rowcount:
        raise NotFound(f"note {identifier!r} in {dataset}/{fhir_store} not found")
    _touch(session, store.dataset_id)


def iter_notes(session: Session, dataset: str, fhir_store: str = EVALUATION, batch: int = 1000) -> Iterator[NoteRow]:
    """Every note of a FHIR store in id order, streamed."""
    store = get_fhir_store(session, dataset, fhir_store)
    for row in session.execute(_notes_query(store.id).execution_options(yield_per=batch)):
        yield NoteRow(*row)


# --- annotation stores and records -----------------------------------------------------------


def get_annotation_store(
    session: Session, dataset: str, name: str, missing: type[StoreError] = NotFound
) -> AnnotationStore:
    parent = get_dataset(session, dataset, missing)
    query = select(AnnotationStore).where(AnnotationStore.dataset_id == parent.id, AnnotationStore.name == name)
    return _one(session, query, gone(missing, f"annotation store {dataset}/{name}"))


def create_annotation_store(session: Session, dataset: str, name: str) -> AnnotationStore:
    parent = get_dataset(session, dataset, MissingParent)
    query = select(AnnotationStore.id).where(AnnotationStore.dataset_id == parent.id, AnnotationStore.name == name)
    if session.execute(query).first():
        raise Conflict(f"annotation store {dataset}/{name} already exists")
    row = AnnotationStore(dataset_id=parent.id, name=name)
    return _insert_new(session, row, f"annotation store {dataset}/{name}")


def list_annotation_stores(session: Session, dataset: str, offset: int = 0, limit: int = 10) -> Page[AnnotationStore]:
    parent = get_dataset(session, dataset, MissingParent)
    query = select(AnnotationStore).where(AnnotationStore.dataset_id == parent.id).order_by(AnnotationStore.name)
    return _page(session, query, offset, limit)


def delete_annotation_store(session: Session, dataset: str, name: str) -> None:
    store = get_annotation_store(session, dataset, name)
    session.execute(delete(AnnotationStore).where(AnnotationStore.id == store.id))
    if name == GOLDSTANDARD:
        _touch(session, store.dataset_id)


def get_annotation(
    session: Session, dataset: str, annotation_store: str, identifier: str, missing: type[StoreError] = NotFound
) -> AnnotationRecord:
    store = get_annotation_store(session, dataset, annotation_store, missing)
    query = select(AnnotationRecord).where(
        AnnotationRecord.annotation_store_id == store.id, AnnotationRecord.identifier == identifier
    )
    return _one(session, query, gone(missing, f"annotation {identifier!r} in {dataset}/{annotation_store}"))


def create_annotation(
    session: Session,
    dataset: str,
    annotation_store: str,
    identifier: str,
    *,
    source: str,
    arrays: dict[str, list[dict[str, Any]]],
) -> AnnotationRecord:
    """A new annotation record; ``source`` is the resource name of its note, ``arrays`` its annotation arrays."""
    store = get_annotation_store(session, dataset, annotation_store, MissingParent)
    _storable(f"annotation {identifier!r} in {dataset}/{annotation_store}", source=source, annotations=arrays)
    query = select(AnnotationRecord.id).where(
        AnnotationRecord.annotation_store_id == store.id, AnnotationRecord.identifier == identifier
    )
    if session.execute(query).first():
        raise Conflict(f"annotation {identifier!r} in {dataset}/{annotation_store} already exists")
    row = AnnotationRecord(
        annotation_store_id=store.id,
        identifier=identifier,
        source=source,
        note_identifier=source.rsplit("/", 1)[-1],
        arrays=arrays,
    )
    _insert_new(session, row, f"annotation {identifier!r} in {dataset}/{annotation_store}")
    if annotation_store == GOLDSTANDARD:
        _touch(session, store.dataset_id)
    return row


def list_annotations(
    session: Session, dataset: str, annotation_store: str, offset: int = 0, limit: int = 10
) -> Page[AnnotationRecord]:
    store = get_annotation_store(session, dataset, annotation_store, MissingParent)
    query = select(AnnotationRecord).order_by(AnnotationRecord.identifier)
    parent = AnnotationRecord.annotation_store_id
    return _rows_page(session, AnnotationRecord, parent, store.id, query, offset, limit)


def delete_annotation(session: Session, dataset: str, annotation_store: str, identifier: str) -> None:
    store = get_annotation_store(session, dataset, annotation_store)
    deleted = session.execute(
        delete(AnnotationRecord).where(
            AnnotationRecord.annotation_store_id == store.id, AnnotationRecord.identifier == identifier
        )
    )
    if not deleted.rowcount:
        raise NotFound(f"annotation {identifier!r} in {dataset}/{annotation_store} not found")
    if annotation_store == GOLDSTANDARD:
        _touch(session, store.dataset_id)


def iter_records(
    session: Session, dataset: str, annotation_store: str, batch: int = 1000
) -> Iterator[AnnotationRecord]:
    """Every record of an annotation store in id order, streamed."""
    store = get_annotation_store(session, dataset, annotation_store)
    query = (
        select(AnnotationRecord)
        .where(AnnotationRecord.annotation_store_id == store.id)
        .order_by(AnnotationRecord.identifier)
        .execution_options(yield_per=batch)
    )
    yield from session.scalars(query)


# --- documents --------------------------------------------------------------------------------


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


# --- import -----------------------------------------------------------------------------------


def _insert_ignoring_duplicates(session: Session, table: Any, rows: list[dict[str, Any]]) -> None:
    dialect = session.get_bind().dialect.name
    statement = (postgresql.insert if dialect == "postgresql" else sqlite.insert)(table).on_conflict_do_nothing()
    session.execute(statement, rows)


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
    if len(set(identifiers)) < len(identifiers):
        seen: set[str] = set()
        duplicate = next(i for i in identifiers if i in seen or seen.add(i))
        raise Conflict(f"note {duplicate!r} appears twice in the input")
    existing = session.execute(
        select(Note.identifier).where(Note.fhir_store_id == notes_store.id, Note.identifier.in_(identifiers)).limit(1)
    ).first()
    if existing:
        raise Conflict(f"note {existing[0]!r} in {where} already exists")
    patients = sorted({item.patient for item in chunk})
    before = session.execute(
        select(func.count()).where(Patient.fhir_store_id == notes_store.id, Patient.identifier.in_(patients))
    ).scalar_one()
    _insert_ignoring_duplicates(
        session, Patient.__table__, [{"fhir_store_id": notes_store.id, "identifier": p} for p in patients]
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
        Note.__table__.insert(),
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
    records = [
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
        session.execute(AnnotationRecord.__table__.insert(), records)
    summary.records += len(records)
    for record in records:
        for array, values in record["arrays"].items():
            summary.annotations += len(values)
            summary.by_array[array] = summary.by_array.get(array, 0) + len(values)


# --- content hash -----------------------------------------------------------------------------


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
