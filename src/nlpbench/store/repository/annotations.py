"""Annotation stores and annotation records of a dataset, and records read back as annotations."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, cast

from sqlalchemy import CursorResult, delete, select
from sqlalchemy.orm import Session

from nlpbench.store.models import (
    AnnotationRecord,
    AnnotationStore,
)
from nlpbench.store.repository.common import (
    GOLDSTANDARD,
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
    deleted = cast(
        CursorResult,
        session.execute(
            delete(AnnotationRecord).where(
                AnnotationRecord.annotation_store_id == store.id, AnnotationRecord.identifier == identifier
            )
        ),
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
