"""Documents and what is annotated in them.

A :class:`Document` holds its text (when the format carries it) and groups the
annotations, relations and normalisations made on it. Every reader produces
documents; every metric takes the annotations of one document at a time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from nlpbench.model.span import Span

if TYPE_CHECKING:
    from nlpbench.model.columns import SpanColumns


@dataclass(slots=True, unsafe_hash=True)
class Annotation:
    """A labelled span of one document.

    ``label`` is the annotation type (``date``, ``person_name``, ``location``,
    ``id``, ``contact``, …); ``attributes`` hold its typed properties such as
    ``locationType`` or ``dateFormat``; ``confidence`` runs from 0 to 100.

    Treat an annotation as a value: change one with :func:`dataclasses.replace`.
    It is not frozen only because readers make them by the million and a frozen
    dataclass takes four times as long to build; it hashes as a frozen one would.
    """

    doc_id: str
    span: Span
    label: str
    text: str | None = None
    attributes: dict[str, Any] = field(default_factory=dict, hash=False)
    confidence: float | None = None
    id: str | None = None

    def __post_init__(self) -> None:
        if self.confidence is not None and not 0 <= self.confidence <= 100:
            raise ValueError(f"confidence {self.confidence} is outside 0–100")

    @property
    def start(self) -> int:
        return self.span.start

    @property
    def end(self) -> int:
        return self.span.end


@dataclass(frozen=True, slots=True)
class Relation:
    """A labelled, directed link from the annotation ``head`` to ``tail`` (annotation ids)."""

    label: str
    head: str
    tail: str
    id: str | None = None


@dataclass(frozen=True, slots=True)
class Link:
    """A normalisation: annotation ``target`` refers to ``identifier`` in ``resource``."""

    target: str
    resource: str
    identifier: str
    text: str | None = None
    id: str | None = None


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
