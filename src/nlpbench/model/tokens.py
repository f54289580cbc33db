"""Documents given as tokens, and entities as columns: what named-entity scoring reads.

A document of tokens has the text of its tokens joined by single blanks, and
each token's offsets ``(start, end)`` in ``metadata["tokens"]``
(:func:`tokens_document`). Scoring entities in tokens needs neither: only the
number of tokens and each entity's token range and label, so a reader may give
a :class:`TokenDocument` instead, whose entities are three columns
(:class:`EntityColumns`), and build the full :class:`~nlpbench.model.Document`
only when it is asked for one.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from nlpbench.model.annotation import Annotation
from nlpbench.model.document import Document
from nlpbench.model.span import Span


def tokens_document(doc_id: str, tokens: list[str]) -> Document:
    """A document made of tokens: text = tokens joined by single blanks, ``metadata["tokens"]`` their offsets.

    Token ``i`` starts at ``sum(len(token) + 1 for token in tokens[:i])`` and ends ``len(tokens[i])`` later.
    """
    offsets, position = [], 0
    for token in tokens:
        offsets.append((position, position + len(token)))
        position += len(token) + 1
    return Document(doc_id, " ".join(tokens), metadata={"tokens": offsets})


@dataclass(slots=True)
class EntityColumns:
    """Entities ``[start, end)`` with their labels, in reading order, as three columns of equal length."""

    starts: list[int] = field(default_factory=list)
    ends: list[int] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.starts)


@dataclass(slots=True)
class TokenDocument:
    """A document of ``tokens`` whose entities are token ranges ``[start, end)`` (token indices, end exclusive),
    each with an id of its index, no text of its own and no attributes."""

    id: str
    tokens: list[str]
    entities: EntityColumns

    def document(self) -> Document:
        """The same document as a :class:`~nlpbench.model.Document`: its text, token offsets and annotations
        in characters (entity ``i`` spans from its first token's start to its last token's end, id ``"i"``)."""
        document = tokens_document(self.id, self.tokens)
        offsets = document.metadata["tokens"]
        columns = self.entities
        document.annotations = [
            Annotation(self.id, Span(offsets[start][0], offsets[end - 1][1]), label, None, {}, id=str(index))
            for index, (start, end, label) in enumerate(zip(columns.starts, columns.ends, columns.labels, strict=True))
        ]
        return document
