"""What is annotated in a document: labelled spans, the relations between them, their normalisations.

Readers make these by the million; :class:`~nlpbench.model.Document` groups them by note, and
:mod:`nlpbench.model.columns` holds a label's annotations as light rows instead.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from nlpbench.model.span import Span


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
