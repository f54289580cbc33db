"""A result's per-document counts held as integer arrays, for its intervals, instead of its rows.

A PHI result stores a row per document, metric and annotation type (20 per note). Its intervals need of
them only each metric's table of counts over the type's documents (:func:`nlpbench.stats.report.derivations`)::

    table_{t,m}[d] = (tp, fp, fn) of document d's row of metric m and type t

:class:`DocumentCounts` gathers those counts as the rows pass by to be stored
(:func:`nlpbench.platform.scoring.insert_rows`): four 32-bit integers a row in arrays, not a row's dict, so the
rows need not be held, and each note id held once for all the types (the types' rows name the same notes). The
overall type's tables (micro over the types, :mod:`nlpbench.platform.overall`) are the sums of the types' at each
document::

    table_{overall,m}[d] = Σ_t table_{t,m}[d]

A row that is not such a count (a label, other fields: not a PHI task's) leaves the counts incomplete
(:attr:`DocumentCounts.complete` false), and the intervals are computed from the rows.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import numpy as np

from nlpbench.report.model import Row

#: The fields of a row these counts hold whole.
COUNTED = frozenset(("document", "metric", "tp", "fp", "fn", "precision", "recall", "f1"))
_COUNTS = ("tp", "fp", "fn")


@dataclass
class DocumentCounts:
    """Per annotation type, its documents in the order its rows first name them, and per metric each row's
    document position and counts (``array('i')`` columns: 32-bit, as a note's counts and a type's documents
    fit; a larger count raises ``OverflowError`` rather than wrap)."""

    documents: dict[str, dict[str, int]] = field(default_factory=dict)
    columns: dict[str, dict[str, tuple[array, array, array, array]]] = field(default_factory=dict)
    complete: bool = True
    #: Each note id seen, itself: the types' position dicts share one string per note.
    _ids: dict[str, str] = field(default_factory=dict, repr=False)

    def add(self, annotation_type: str, row: Row) -> None:
        """Count one row of ``annotation_type`` (a row not of :data:`COUNTED`'s fields: the counts are incomplete)."""
        if not self.complete:
            return
        if row.keys() != COUNTED:
            self.complete = False
            self.documents.clear()
            self.columns.clear()
            self._ids.clear()
            return
        positions = self.documents.setdefault(annotation_type, {})
        document = row["document"]
        at = positions.get(document)
        if at is None:
            at = positions[self._ids.setdefault(document, document)] = len(positions)
        by_metric = self.columns.setdefault(annotation_type, {})
        metric = row["metric"]
        if metric not in by_metric:
            by_metric[metric] = (array("i"), array("i"), array("i"), array("i"))
        where, *counts = by_metric[metric]
        where.append(at)
        for column, name in zip(counts, _COUNTS, strict=True):
            column.append(row[name])

    def drop(self, annotation_type: str, metric: str) -> None:
        """Forget the counts of ``metric`` of ``annotation_type``."""
        self.columns.get(annotation_type, {}).pop(metric, None)

    def passing(self, rows: Iterable[tuple[str, Row]]) -> Iterator[tuple[str, Row]]:
        """``rows`` (``(annotation type, row)`` pairs), each counted as it passes."""
        for annotation_type, row in rows:
            self.add(annotation_type, row)
            yield annotation_type, row

    def tables(self, annotation_type: str) -> Tables:
        """The type's documents and each metric's table ``[documents, (tp, fp, fn)]``, as floats: a document's
        rows of the metric summed, 0 without one."""
        documents = tuple(self.documents.get(annotation_type, {}))
        tables = {}
        for metric, (where, *counts) in self.columns.get(annotation_type, {}).items():
            table = np.zeros((len(documents), len(_COUNTS)))
            np.add.at(
                table,
                np.frombuffer(where, dtype=np.intc).astype(np.intp),
                np.column_stack([np.frombuffer(c, dtype=np.intc) for c in counts]),
            )
            tables[metric] = table
        return documents, tables


#: A type's documents and each metric's count table over them (:meth:`DocumentCounts.tables`).
Tables = tuple[tuple[str, ...], dict[str, np.ndarray]]


def overall_tables(per_type: Iterable[Tables], metrics: Iterable[str]) -> Tables:
    """The documents of the types' tables ``per_type`` (:meth:`DocumentCounts.tables`, made once for the types'
    own intervals) in the order they first name them, and each of ``metrics``'s table summed over the types at
    each document (see the module)."""
    per_type = list(per_type)
    documents = tuple(dict.fromkeys(document for found, _ in per_type for document in found))
    position = {document: i for i, document in enumerate(documents)}
    tables = {}
    for metric in metrics:
        table = np.zeros((len(documents), len(_COUNTS)))
        for found, by_metric in per_type:
            if metric in by_metric:
                at = np.fromiter((position[d] for d in found), dtype=np.intp, count=len(found))
                table[at] += by_metric[metric]
        tables[metric] = table
    return documents, tables
