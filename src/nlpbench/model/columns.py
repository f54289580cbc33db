"""Annotations of one label in one note as light rows: what span scoring reads.

Scoring needs only each annotation's start, length, text and subtype, and
building an :class:`~nlpbench.model.Annotation` costs more than scoring one;
a reader asked for columns (the NLP Sandbox reader, for ``score sandbox``)
fills ``Document.columns[label]`` instead of ``Document.annotations``. Its
rows are what the reader decodes (a :class:`SpanRow` each), and a batch of
notes turns the rows of all of them into columns at once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any

import msgspec

from nlpbench.model.annotation import Annotation
from nlpbench.model.span import Span


class _Missing:
    """The subtype of an annotation that has none (``None`` is a value JSON can give)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<missing>"


MISSING: Any = _Missing()


class SpanRow(msgspec.Struct, gc=False):
    """One contiguous annotation: ``start``, ``length``, ``text`` (None when unknown), ``subtype`` (the value
    of the type's attribute, :data:`MISSING` when absent) and ``confidence``. A reader may decode straight
    into a subclass that names ``subtype`` as its JSON attribute."""

    start: int
    length: int
    text: str | None = None
    subtype: Any = MISSING
    confidence: float | None = None


START, LENGTH, TEXT, SUBTYPE = map(attrgetter, ("start", "length", "text", "subtype"))


@dataclass(slots=True)
class SpanColumns:
    """Contiguous annotations in reading order, as their :class:`SpanRow` rows; a batch of notes reads them a
    field at a time (:data:`START`, :data:`LENGTH`, :data:`TEXT`, :data:`SUBTYPE`) into columns."""

    rows: list[SpanRow] = field(default_factory=list)

    def extend(self, other: SpanColumns) -> None:
        self.rows.extend(other.rows)

    @classmethod
    def of(cls, annotations: Sequence[Annotation], attribute: str) -> SpanColumns:
        """The rows of annotation objects; ``attribute`` holds the subtype. Spans must be contiguous."""
        return cls(
            [
                SpanRow(
                    a.span.start, a.span.end - a.span.start, a.text, a.attributes.get(attribute, MISSING), a.confidence
                )
                for a in annotations
            ]
        )

    def annotations(self, doc_id: str, label: str, attribute: str) -> list[Annotation]:
        """The annotation objects of these rows (the subtype as ``attribute``)."""
        return [
            Annotation(
                doc_id,
                Span(row.start, row.start + row.length),
                label,
                row.text,
                {} if row.subtype is MISSING else {attribute: row.subtype},
                row.confidence,
            )
            for row in self.rows
        ]
