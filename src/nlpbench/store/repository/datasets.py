"""Datasets: create, read, list and delete, with an overview of what each holds."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from nlpbench.store.models import (
    AnnotationRecord,
    AnnotationStore,
    Dataset,
    FhirStore,
    Note,
)
from nlpbench.store.repository.common import (
    GOLDSTANDARD,
    REACH,
    Conflict,
    NotFound,
    Page,
    StoreError,
    _insert_new,
    _one,
    _page,
    _storable,
    check_reach,
    gone,
)


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
