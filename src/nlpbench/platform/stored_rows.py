"""A result's per-document rows written to the store a batch at a time, as they are scored.

:func:`insert_rows` inserts ``(annotation type, row)`` pairs with one ``executemany`` of a Core insert
(compiled once) per :data:`ROWS_BATCH` rows, each statement's rows built as it is sent. :class:`StoredRows` is
where a PHI task's one pass (:func:`nlpbench.tasks.sandbox.score_types`) hands each scored batch's rows: they are
charged the LLM mentions the tool could not place (:func:`nlpbench.platform.accounts.charge_row`), inserted and
counted for the intervals (:class:`~nlpbench.platform.document_counts.DocumentCounts`), and not kept, so that
what the worker holds of them is one batch however many notes the dataset has.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from itertools import islice
from typing import cast

from sqlalchemy import Table, delete
from sqlalchemy.engine import CursorResult
from sqlalchemy.orm import Session

from nlpbench.platform.accounts import charge_row
from nlpbench.platform.document_counts import DocumentCounts
from nlpbench.report.model import Row
from nlpbench.store.submissions import ResultDocument

#: Per-document rows inserted per statement by :func:`insert_rows`.
ROWS_BATCH = 5000
#: The per-document fields that name the row rather than count.
NAMING = ("document", "metric")
#: The columns :func:`insert_rows` fills, in the order of its statement's parameters.
INSERTED = ("result_id", "annotation_type", "document", "metric", "counts")


def insert_rows(session: Session, result_id: int, per_document: Iterable[tuple[str, Row]]) -> int:
    """Insert ``per_document`` (``(annotation type, row)`` pairs) as result ``result_id``'s rows, in their order,
    :data:`ROWS_BATCH` rows per statement, each statement's rows built as it is sent: what is held beside the
    given rows is one batch, never a copy of them all; how many rows. A row is stored as its ``document``, its
    ``metric`` and the rest of its fields as ``counts``.

    The Core insert is compiled once for the session's dialect and run by the driver's ``executemany``
    (``exec_driver_sql``), each row's ``counts`` encoded by the column type's own bind processor, the very one a
    Core insert applies: the same statement and the same values, without SQLAlchemy's per-row parameter
    bookkeeping, which cost more than the driver's insert (the ORM's work per row cost more still)."""
    connection = session.connection()
    dialect = connection.dialect
    table = cast(Table, ResultDocument.__table__)
    compiled = table.insert().compile(dialect=dialect, column_keys=list(INSERTED), for_executemany=True)
    # a positional paramstyle (SQLite's ``?``) numbers the parameters in the order of the columns given
    assert not compiled.positional or compiled.positiontup == list(INSERTED)
    statement = str(compiled)
    encode = table.c.counts.type.dialect_impl(dialect).bind_processor(dialect) or _as_it_is
    pending = iter(per_document)
    inserted = 0
    while batch := [
        (
            result_id,
            annotation_type,
            str(row["document"]),
            str(row["metric"]),
            encode({k: v for k, v in row.items() if k not in NAMING}),
        )
        for annotation_type, row in islice(pending, ROWS_BATCH)
    ]:
        params = batch if compiled.positional else [dict(zip(INSERTED, values, strict=True)) for values in batch]
        connection.exec_driver_sql(statement, params)
        inserted += len(batch)
    return inserted


def _as_it_is(value: object) -> object:
    """A value its column's type does not convert, as it is."""
    return value


@dataclass
class StoredRows:
    """Result ``result_id``'s per-document rows, inserted and counted as a pass hands them on
    (:class:`nlpbench.tasks.sandbox.DocumentRows`); ``charged[type][note]``: the false positives each row of
    ``note`` of that type is charged (the mentions the tool could not place)."""

    session: Session
    result_id: int
    charged: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    counts: DocumentCounts = field(default_factory=DocumentCounts)
    inserted: int = 0

    def add(self, annotation_type: str, rows: list[Row]) -> None:
        charged = self.charged.get(annotation_type, {})
        for row in rows:
            charge_row(row, charged)
        typed = ((annotation_type, row) for row in rows)
        self.inserted += insert_rows(self.session, self.result_id, self.counts.passing(typed))

    def drop(self, annotation_type: str, metric: str) -> None:
        done = self.session.execute(
            delete(ResultDocument).where(
                ResultDocument.result_id == self.result_id,
                ResultDocument.annotation_type == annotation_type,
                ResultDocument.metric == metric,
            )
        )
        self.inserted -= cast(CursorResult, done).rowcount
        self.counts.drop(annotation_type, metric)
