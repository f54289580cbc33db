"""Documents: a note's text with the annotations, relations and normalisations made on it.

A :class:`Document` holds its text (when the format carries it) and groups the
annotations, relations and normalisations made on it. Every reader produces
documents; every metric takes the annotations of one document at a time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from nlpbench.model.annotation import Annotation, Link, Relation

if TYPE_CHECKING:
    from nlpbench.model.columns import SpanColumns


@dataclass(slots=True)
class Document:
    """One document, its text when known, and its annotations.

    ``columns`` holds the annotations of a label as columns instead of objects,
    when a reader was asked for them (see :mod:`nlpbench.model.columns`).
    """

    id: str
    text: str | None = None
    annotations: list[Annotation] = field(default_factory=list)
    relations: list[Relation] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    columns: dict[str, SpanColumns] = field(default_factory=dict)

    def of_label(self, label: str) -> list[Annotation]:
        return [a for a in self.annotations if a.label == label]

    def span_problem(self) -> str | None:
        """The first annotation that does not fit the text, described; None when all fit.

        An annotation fits when it ends within the text and, if it carries its
        own ``text``, that text is what the span covers.
        """
        if self.text is None:
            return None
        for index, annotation in enumerate(self.annotations):
            name = annotation.id or f"annotation {index}"
            if annotation.end > len(self.text):
                return (
                    f"{name} ({annotation.label}) at {annotation.start}-{annotation.end} "
                    f"ends beyond the text ({len(self.text)} characters)"
                )
            covered = annotation.span.covered_text(self.text)
            if annotation.text is not None and annotation.text != covered:
                return (
                    f"{name} ({annotation.label}) at {annotation.start}-{annotation.end}: its text "
                    f"({len(annotation.text)} characters) differs from the note's ({len(covered)} characters)"
                )
        return None
