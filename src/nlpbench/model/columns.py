"""Annotations of one label in one note as columns: what span scoring reads.

Scoring needs only each annotation's start, length, text and subtype, and
building an :class:`~nlpbench.model.Annotation` costs more than scoring one;
a reader asked for columns (the NLP Sandbox reader, for ``score sandbox``)
fills ``Document.columns[label]`` instead of ``Document.annotations``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from nlpbench.model.document import Annotation
from nlpbench.model.span import Span


class _Missing:
    """The subtype of an annotation that has none (``None`` is a value JSON can give)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<missing>"


MISSING: Any = _Missing()


@dataclass(slots=True)
class SpanColumns:
    """Contiguous annotations in reading order, a list per field: ``start``, ``length``, ``text`` (None when
    unknown), ``subtype`` (the value of the type's attribute, :data:`MISSING` when absent), ``confidence``."""

    start: list[int] = field(default_factory=list)
    length: list[int] = field(default_factory=list)
    text: list[str | None] = field(default_factory=list)
    subtype: list[Any] = field(default_factory=list)
    confidence: list[float | None] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.start)

    def extend(self, other: SpanColumns) -> None:
        for name in _FIELDS:
            getattr(self, name).extend(getattr(other, name))

    @classmethod
    def of(cls, annotations: Sequence[Annotation], attribute: str) -> SpanColumns:
        """The columns of annotation objects; ``attribute`` holds the subtype. Spans must be contiguous."""
        return cls(
            [a.span.start for a in annotations],
            [a.span.end - a.span.start for a in annotations],
            [a.text for a in annotations],
            [a.attributes.get(attribute, MISSING) for a in annotations],
            [a.confidence for a in annotations],
        )

    def annotations(self, doc_id: str, label: str, attribute: str) -> list[Annotation]:
        """The annotation objects of these columns (the subtype as ``attribute``)."""
        return [
            Annotation(doc_id, Span(start, start + length), label, text, {} if v is MISSING else {attribute: v}, c)
            for start, length, text, v, c in zip(
                self.start, self.length, self.text, self.subtype, self.confidence, strict=True
            )
        ]


_FIELDS = tuple(f.name for f in fields(SpanColumns))
