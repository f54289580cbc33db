"""Relation triples whose arguments are known by span, by surface string, or both.

Span-based formats (brat, JSONL) give :class:`~nlpbench.model.Relation`
between annotation ids; the relation task turns them into triples with
:func:`triples_of`. Free-text data such as the OMIn ``re.csv`` gives the
triples directly, with strings and no spans.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from nlpbench.errors import Kind, NlpbenchError
from nlpbench.model.document import Document
from nlpbench.model.span import Span


@dataclass(frozen=True, slots=True)
class Argument:
    """One end of a relation: its span (when known), its text and its entity type."""

    span: Span | None
    text: str | None
    label: str | None


@dataclass(frozen=True, slots=True)
class Triple:
    """``head --label--> tail`` in one document."""

    doc_id: str
    label: str
    head: Argument
    tail: Argument


class UnknownArgument(NlpbenchError, LookupError):
    """A relation names an annotation id the document does not have."""

    kind = Kind.input


def triples_of(document: Document) -> Iterator[Triple]:
    """The document's relations as triples of its annotations; ``UnknownArgument`` names a missing id."""
    by_id = {a.id: a for a in document.annotations if a.id is not None}
    for relation in document.relations:
        ends = []
        for role, ref in (("head", relation.head), ("tail", relation.tail)):
            if ref not in by_id:
                name = relation.id or relation.label
                raise UnknownArgument(f"relation {name}: {role} {ref!r} is not an annotation of the document")
            annotation = by_id[ref]
            ends.append(Argument(annotation.span, annotation.text, annotation.label))
        yield Triple(document.id, relation.label, ends[0], ends[1])
