"""Relation extraction: predicted triples against gold triples, per relation type, micro and macro.

A triple is compared by a key built from its two arguments:

- ``strict``: head, head type, tail, tail type (and the relation type, by
  which the triples are grouped);
- ``boundaries``: head and tail only.

An argument is its span (``by="span"``) or its text normalised — blanks
collapsed and trimmed, case folded — (``by="text"``), for triples known only
by their words such as the OMIn ``re.csv``; in text mode the types and the
relation are normalised the same way.

Within one document and one relation type, gold and predicted keys are
compared as multisets (every listed triple counts) or, with ``distinct``, as
sets (a repeated triple counts once, as REBEL's ``re_score`` does): TP =
keys on both sides, FP = predicted keys left, FN = gold keys left.
Micro-averaged scores sum the counts over documents and types; macro
averages are the unweighted means of the per-type precision, recall and F1.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Hashable, Iterable, Sequence
from statistics import fmean
from typing import overload

from nlpbench.metrics.counts import PRF, score_multiset, score_set
from nlpbench.model import Argument, Triple

MODES = ("strict", "boundaries")
BY = ("span", "text")


@overload
def normalise(text: str) -> str: ...
@overload
def normalise(text: None) -> None: ...
def normalise(text: str | None) -> str | None:
    """Blanks collapsed to one and trimmed, case folded; None stays None."""
    return " ".join(text.split()).casefold() if text is not None else None


def _argument(argument: Argument, by: str) -> Hashable:
    if by == "span":
        if argument.span is None:
            raise ValueError("an argument without a span cannot be compared by span")
        return argument.span.parts
    if argument.text is None:
        raise ValueError("an argument without text cannot be compared by text")
    return normalise(argument.text)


def _type(label: str | None, by: str) -> str | None:
    return normalise(label) if by == "text" else label


def type_key(label: str, by: str) -> str:
    """A relation type as it is compared: normalised when comparing text."""
    return normalise(label) if by == "text" else label


def triple_key(triple: Triple, mode: str, by: str) -> Hashable:
    """What a mode compares of a triple, apart from its relation type."""
    head, tail = _argument(triple.head, by), _argument(triple.tail, by)
    if mode == "boundaries":
        return head, tail
    if mode == "strict":
        return head, _type(triple.head.label, by), tail, _type(triple.tail.label, by)
    raise ValueError(f"unknown mode {mode!r}; known: {', '.join(MODES)}")


def relation_counts(
    gold: Sequence[Triple],
    pred: Sequence[Triple],
    mode: str,
    *,
    by: str = "span",
    distinct: bool = False,
    types: Collection[str] | None = None,
) -> dict[str, PRF]:
    """TP/FP/FN by relation type for one document; only ``types`` when given."""
    grouped: dict[str, tuple[list[Hashable], list[Hashable]]] = {}
    for side, triples in enumerate((gold, pred)):
        for triple in triples:
            label = type_key(triple.label, by)
            if types is None or label in types:
                grouped.setdefault(label, ([], []))[side].append(triple_key(triple, mode, by))
    compare = score_set if distinct else score_multiset
    return {label: compare(g, p) for label, (g, p) in sorted(grouped.items())}


Values = Callable[[PRF], tuple[float, float, float]]


def prf_values(prf: PRF) -> tuple[float, float, float]:
    """Precision, recall and F1 of the counts."""
    return prf.precision, prf.recall, prf.f1


def macro(per_type: Iterable[PRF], values: Values = prf_values) -> tuple[float, float, float]:
    """Means of the per-type precision, recall and F1 (0 with no type)."""
    rows = [values(prf) for prf in per_type]
    if not rows:
        return 0.0, 0.0, 0.0
    p, r, f = (fmean(column) for column in zip(*rows, strict=True))
    return p, r, f
