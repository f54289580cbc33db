"""Coreference: mentions as token spans, grouped into clusters, per document.

Coreference data is indexed by tokens, not characters: a mention is the tuple
of the token indices its source wrote, normally ``(start, end)`` with both
ends included and tokens counted from 0 over the whole document (CoNLL-2012
and e2e jsonlines count across sentence boundaries). A source that writes one
index for a one-token mention (OMIn's ``[10]``) is kept as ``(10,)``:
:func:`span_of` reads it as ``(10, 10)``, while the ``e2e`` profile compares
mentions by the tuple as written, as corefeval does.

A :class:`Cluster` (an entity, a CoNLL "chain") keeps its mentions in the
order the source gave them and its id when the source has one; a
:class:`CorefDocument` keeps its clusters in source order. Order matters to the
reference scorer's treatment of repeated mentions, so readers preserve it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

#: Inclusive token indices as written: ``(start, end)``, or ``(index,)`` for a source's one-index mention.
CorefMention = tuple[int, ...]


def span_of(mention: CorefMention) -> tuple[int, int]:
    """``(start, end)`` of a mention; a one-index mention ``(i,)`` is the one-token span ``(i, i)``."""
    return mention if len(mention) == 2 else (mention[0], mention[-1])


def mention_problem(mention: object) -> str | None:
    """What is wrong with a mention read from a file, or None when it is one or two indices ``0 <= start <= end``."""
    if not isinstance(mention, tuple | list) or not 1 <= len(mention) <= 2:
        return f"mention {mention!r} is not [start, end] (or [index])"
    if any(isinstance(i, bool) or not isinstance(i, int) for i in mention):
        return f"mention {list(mention)!r} has an index that is not an integer"
    if mention[0] < 0:
        return f"mention {list(mention)!r} has a negative index"
    if mention[-1] < mention[0]:
        return f"mention {list(mention)!r} ends before it starts"
    return None


@dataclass(frozen=True, slots=True)
class Cluster:
    """The mentions of one entity, in source order; ``id`` is the source's chain id when it has one."""

    mentions: tuple[CorefMention, ...]
    id: str | None = None

    def __len__(self) -> int:
        return len(self.mentions)

    def __iter__(self) -> Iterator[CorefMention]:
        return iter(self.mentions)


@dataclass(frozen=True, slots=True)
class CorefDocument:
    """One document's clusters and, when the source carries them, its tokens sentence by sentence.

    ``sentences`` is empty when the source has no tokens (OMIn's CSV); a token
    whose word the source does not give is ``"_"``.
    """

    id: str
    clusters: tuple[Cluster, ...] = ()
    sentences: tuple[tuple[str, ...], ...] = ()

    @property
    def mentions(self) -> Iterator[CorefMention]:
        """Every mention of every cluster, repeats included."""
        for cluster in self.clusters:
            yield from cluster.mentions

    @property
    def token_count(self) -> int:
        """The number of tokens: those of the sentences, else one past the last mention's end."""
        if self.sentences:
            return sum(len(sentence) for sentence in self.sentences)
        return max((m[-1] + 1 for m in self.mentions), default=0)
