"""Mentions known only by their string, located as token sequences in their document.

The OMIn gold standard and the tool outputs scored with it list each mention
as a string; trusted_ke finds it in the document's tokens to give it a span.
A locator takes the mention strings of one side of one document, in order,
and the document's :class:`TokenView`, and returns for each mention its token
span ``(start, end)`` (end exclusive) or None when it is not found.

- :func:`locate_in_order` (``standard``): the k-th mention of a string is its
  k-th occurrence in the tokens; a mention beyond the occurrences is not found.
- :func:`locate_first_then_queue` (``trusted-ke``): trusted_ke's ``get_spans``
  with its possessive merge and its occurrence queue (see its docstring).

A mention is cut into tokens the way trusted_ke cuts it: ``(``, ``)`` and
``,`` become tokens of their own, then the string is split at whitespace.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

TokenSpan = tuple[int, int]


class TokenView:
    """The tokens of one document by index; trusted_ke's possessive merge removes indices from it.

    The view is shared by the gold and the predicted side of a document, in
    that order, as trusted_ke shares (and mutates) its token dictionary.
    """

    def __init__(self, tokens: Sequence[str]):
        self.tokens: dict[int, str] = dict(enumerate(tokens))

    def merge_possessive(self) -> None:
        """trusted_ke: the first token ``'S`` is glued to the token before it and its index deleted.

        trusted_ke finds the position of ``'S`` among the remaining tokens and
        then uses that *position* as a dictionary key, so after a first merge
        the second one may glue or delete other tokens (or fail, when the key
        is gone), exactly as here.
        """
        values = list(self.tokens.values())
        if "'S" not in values:
            return
        position = values.index("'S")
        if position - 1 not in self.tokens or position not in self.tokens:
            raise ValueError(
                "trusted_ke's possessive merge fails on this document: the index before 's is already gone"
            )
        self.tokens[position - 1] += "'S"
        del self.tokens[position]


def trusted_ke_key(mention: str) -> str:
    """The mention as trusted_ke normalises it: blanks around ``(``, ``)`` and ``,``, double blanks closed once."""
    mention = mention.replace("(", " ( ").replace(")", " ) ").replace("  ", " ")
    return mention.replace(",", " , ").replace("  ", " ")


def _occurrences(words: list[str], tokens: list[str]) -> list[int]:
    """Positions (not indices) where ``words`` occurs in ``tokens``, overlapping occurrences included."""
    n = len(words)
    first = words[0]
    return [i for i, token in enumerate(tokens) if token == first and tokens[i : i + n] == words]


def _span(keys: list[int], position: int, length: int) -> TokenSpan:
    return keys[position], keys[position + length - 1] + 1


def locate_first_then_queue(mentions: Sequence[str], view: TokenView) -> list[TokenSpan | None]:
    """trusted_ke's ``get_spans`` for one side of one document.

    First the possessive merge (:meth:`TokenView.merge_possessive`). Then,
    for each mention in order: a string seen for the first time is placed at
    its first occurrence and, when it occurs more than once, the other
    occurrences are queued under the string; a string seen before takes the
    next queued occurrence, or is not found when the queue is empty. A string
    that occurs once has no queue, so every repeat of it lands on that one
    occurrence. The span runs from the index of the first token to the index
    of the last one plus one.
    """
    view.merge_possessive()
    keys, tokens = list(view.tokens), list(view.tokens.values())
    queues: dict[str, list[int]] = {}
    spans: list[TokenSpan | None] = []
    for mention in mentions:
        key = trusted_ke_key(mention)
        words = key.split()
        if key in queues:
            queue = queues[key]
            spans.append(_span(keys, queue.pop(0), len(words)) if queue else None)
            continue
        found = _occurrences(words, tokens)
        if len(found) > 1:
            queues[key] = found[1:]
        spans.append(_span(keys, found[0], len(words)) if found else None)
    return spans


_POSSESSIVE = re.compile(r"(?<=\S)'S\b")


def mention_words(mention: str) -> list[str]:
    """The tokens of a mention: trusted_ke's cut, and a possessive ``'S`` split off as the token source has it."""
    return _POSSESSIVE.sub(" 'S", trusted_ke_key(mention)).split()


def locate_in_order(mentions: Sequence[str], view: TokenView) -> list[TokenSpan | None]:
    """The k-th mention of a string (by its tokens) at the k-th occurrence of those tokens; None beyond them."""
    keys, tokens = list(view.tokens), list(view.tokens.values())
    seen: dict[tuple[str, ...], int] = {}
    spans: list[TokenSpan | None] = []
    for mention in mentions:
        words = mention_words(mention)
        nth = seen.get(tuple(words), 0)
        seen[tuple(words)] = nth + 1
        found = _occurrences(words, tokens) if words else []
        spans.append(_span(keys, found[nth], len(words)) if nth < len(found) else None)
    return spans


Locator = Callable[[Sequence[str], TokenView], list[TokenSpan | None]]
