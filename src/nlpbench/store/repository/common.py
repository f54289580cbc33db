"""What every resource's functions share: the errors, pages, the reach of a session and the checks of
what can be stored."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from sqlalchemy import Select, func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from nlpbench.errors import Kind, NlpbenchError
from nlpbench.store.models import (
    Dataset,
)

T = TypeVar("T")
#: The NLP Sandbox conventions: notes in FHIR store ``evaluation``, gold in annotation store ``goldstandard``.
EVALUATION = "evaluation"
GOLDSTANDARD = "goldstandard"
#: ``session.info`` key: the names of the only datasets a session may reach (absent or None: every dataset).
REACH = "nlpbench.reach"


class StoreError(NlpbenchError):
    """A request the store refuses; ``str(error)`` is one line naming the resource."""

    kind = Kind.input


class NotFound(StoreError):
    """The resource does not exist (or is outside the session's reach)."""

    kind = Kind.not_found


class Conflict(StoreError):
    """A resource with that id exists already, or another depends on it."""

    kind = Kind.conflict


class MissingParent(StoreError):
    """A resource the request names (the dataset of a new FHIR store, the patient of a new note) does not exist."""

    kind = Kind.input


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


def insert_ignoring_conflicts(session: Session, table: Any) -> Any:
    """``INSERT … ON CONFLICT DO NOTHING`` into ``table`` in the session's dialect: a row whose key is taken is left
    out. Each dialect's module loads when used, so a store on SQLite never loads PostgreSQL's (30-40 ms)."""
    if session.get_bind().dialect.name == "postgresql":
        from sqlalchemy.dialects import postgresql

        return postgresql.insert(table).on_conflict_do_nothing()
    from sqlalchemy.dialects import sqlite

    return sqlite.insert(table).on_conflict_do_nothing()


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
            except UnicodeEncodeError:  # the problem, for the caller's message
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
