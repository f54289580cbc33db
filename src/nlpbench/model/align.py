"""Pair the documents of two streams by id, holding only those still unmatched.

Scoring is a map over documents, so gold and prediction streams are joined as
they are read: a document waits in a buffer until its partner arrives. When
both streams list documents in the same order the buffer stays near empty and
memory does not grow with the corpus.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import zip_longest
from typing import Protocol, TypeVar


class Identified(Protocol):
    """A document of any kind: what pairing needs of it is its id."""

    @property
    def id(self) -> str: ...


D = TypeVar("D", bound=Identified)


def pair_documents(gold: Iterable[D], pred: Iterable[D]) -> Iterator[tuple[str, D | None, D | None]]:
    """Yield ``(doc_id, gold_doc, pred_doc)`` for every id on either side.

    A document present on one side only is yielded with ``None`` for the other,
    after both streams are exhausted, gold-only ids first, each group in the
    order it was read. Readers guarantee that an id occurs once per stream; a
    repeat still waiting for its partner raises ``ValueError``.
    """
    waiting_gold: dict[str, D] = {}
    waiting_pred: dict[str, D] = {}
    for gold_doc, pred_doc in zip_longest(gold, pred):
        if gold_doc is not None:
            partner = waiting_pred.pop(gold_doc.id, None)
            if partner is None:
                _wait(waiting_gold, gold_doc, "gold")
            else:
                yield gold_doc.id, gold_doc, partner
        if pred_doc is not None:
            partner = waiting_gold.pop(pred_doc.id, None)
            if partner is None:
                _wait(waiting_pred, pred_doc, "prediction")
            else:
                yield pred_doc.id, partner, pred_doc
    for doc_id, doc in waiting_gold.items():
        yield doc_id, doc, None
    for doc_id, doc in waiting_pred.items():
        yield doc_id, None, doc


def _wait(waiting: dict[str, D], doc: D, side: str) -> None:
    if doc.id in waiting:
        raise ValueError(f"document {doc.id!r} appears twice in the {side}")
    waiting[doc.id] = doc
