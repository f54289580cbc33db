"""PHI span metrics of the NLP Sandbox, computed one document at a time.

For the annotations of one type in one document:

- ``instance_strict``: a prediction matches a gold annotation with the same
  start and the same length;
- ``instance_relax``: the same start and lengths that differ by at most
  ``tolerance`` characters (2 by default);
- ``token``: every annotation is cut into tokens ``(start, length)`` and the
  tokens are compared (a tokeniser gives each token's offset from the
  annotation's start, :meth:`SpanRules.tokens` places them in the text);
- ``type``, ``date_format``, ``hipaa``: strict location and an equal value of a
  property: the annotation's subtype (``locationType``, ``idType``, …), its
  ``dateFormat``, or the HIPAA flag of its location type.

Instances are matched one to one: a gold annotation is consumed by at most one
prediction, so TP = matches, FP = predictions left over, FN = gold left over.
Among annotations that share a start (and a compared property), lengths are
paired greedily in sorted order, which gives a maximum matching. The official
NLP Sandbox scorer's quirks (collapsing annotations that share a start, its
tokeniser, untyped annotations that never match) are parameters here, set by
the profiles in :mod:`nlpbench.profiles.spans`.

This module is the readable definition: it matches annotation objects one
document at a time and is what error listings use. The counts of a whole
corpus come from :mod:`nlpbench.metrics.span_batch`, which computes the same
numbers for many documents at once.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import TYPE_CHECKING, Any

from nlpbench.metrics.counts import PRF
from nlpbench.model import HIPAA_LOCATION, MISSING, Annotation

if TYPE_CHECKING:  # numpy is loaded by what cuts many texts at once, not by this module
    import numpy as np

#: A token or an instance reduced to what the metrics compare: (start, length).
Unit = tuple[int, int]
#: Cuts an annotation, given its text (None when unknown) and its length, into tokens: (offset from
#: the annotation's start, length) each. Spans scored by tokens are contiguous. A tokenizer may also
#: carry ``many``, which cuts a list of texts (each its own length) in one call: see :func:`cut_many`.
Tokenizer = Callable[[str | None, int], Sequence[Unit]]
#: The tokens of several texts in one piece: how many each text has, then every token's offset and length,
#: text after text.
TokenArrays = tuple["np.ndarray", "np.ndarray", "np.ndarray"]

#: The metrics of this module, in the order reports list them.
SPAN_METRICS = ("instance_strict", "instance_relax", "token", "type", "date_format", "hipaa")
#: The metrics also counted per label (slice), matched as for the whole.
SLICED = ("instance_strict", "instance_relax", "token")
#: The metrics that compare a property of located instances.
EXACT_PROPERTIES = ("type", "date_format", "hipaa")


@dataclass(slots=True)
class Matching:
    """The outcome of matching gold and predicted instances one to one."""

    pairs: list[tuple[Annotation, Annotation]] = field(default_factory=list)
    missed: list[Annotation] = field(default_factory=list)
    spurious: list[Annotation] = field(default_factory=list)

    @property
    def counts(self) -> PRF:
        return PRF(len(self.pairs), len(self.spurious), len(self.missed))


def match_instances(
    gold: Sequence[Annotation],
    pred: Sequence[Annotation],
    *,
    tolerance: int = 0,
    kind: Callable[[Annotation], Hashable] | None = None,
) -> Matching:
    """Match instances one to one: same start, ``|len(g) - len(p)| <= tolerance``
    and, when ``kind`` is given, ``kind(g) == kind(p)``.

    The result's ``counts`` are TP = matched pairs, FP = unmatched
    predictions, FN = unmatched gold annotations.
    """
    if tolerance < 0:
        raise ValueError(f"tolerance must be non-negative, not {tolerance}")
    if tolerance == 0:
        return _match_exact(gold, pred, kind)
    groups: dict[Hashable, tuple[list[Annotation], list[Annotation]]] = {}
    for side, found in enumerate((gold, pred)):
        for annotation in found:
            key = (annotation.span.start, kind(annotation) if kind else None)
            groups.setdefault(key, ([], []))[side].append(annotation)
    matching = Matching()
    for gold_group, pred_group in groups.values():
        _match_lengths(gold_group, pred_group, tolerance, matching)
    return matching


def _match_exact(
    gold: Sequence[Annotation], pred: Sequence[Annotation], kind: Callable[[Annotation], Hashable] | None
) -> Matching:
    """Pair annotations with equal (start, end, kind): each prediction takes a waiting gold one."""
    waiting: dict[Hashable, list[Annotation]] = {}
    for annotation in gold:
        key = (annotation.span.start, annotation.span.end, kind(annotation) if kind else None)
        waiting.setdefault(key, []).append(annotation)
    matching = Matching()
    for annotation in pred:
        bucket = waiting.get((annotation.span.start, annotation.span.end, kind(annotation) if kind else None))
        if bucket:
            matching.pairs.append((bucket.pop(), annotation))
        else:
            matching.spurious.append(annotation)
    matching.missed = [annotation for bucket in waiting.values() for annotation in bucket]
    return matching


def _match_lengths(gold: list[Annotation], pred: list[Annotation], tolerance: int, into: Matching) -> None:
    """Pair two groups by length within ``tolerance``, walking both in sorted order."""
    if len(gold) == 1 and len(pred) == 1:  # the common case, without sorting
        if abs(gold[0].span.length - pred[0].span.length) <= tolerance:
            into.pairs.append((gold[0], pred[0]))
        else:
            into.missed.append(gold[0])
            into.spurious.append(pred[0])
        return
    gold = sorted(gold, key=lambda a: a.span.length)
    pred = sorted(pred, key=lambda a: a.span.length)
    i = j = 0
    while i < len(gold) and j < len(pred):
        difference = gold[i].span.length - pred[j].span.length
        if abs(difference) <= tolerance:
            into.pairs.append((gold[i], pred[j]))
            i += 1
            j += 1
        elif difference < 0:
            into.missed.append(gold[i])
            i += 1
        else:
            into.spurious.append(pred[j])
            j += 1
    into.missed.extend(gold[i:])
    into.spurious.extend(pred[j:])


def greedy_pairs(
    gold_lengths: Sequence[int], pred_lengths: Sequence[int], tolerance: int
) -> tuple[list[int], list[int]]:
    """The positions of the gold and predicted lengths that a walk of both in sorted order
    (ties in their given order) pairs within ``tolerance``: a maximum matching."""
    gold_sorted = sorted(range(len(gold_lengths)), key=gold_lengths.__getitem__)
    pred_sorted = sorted(range(len(pred_lengths)), key=pred_lengths.__getitem__)
    i = j = 0
    gold_matched, pred_matched = [], []
    while i < len(gold_sorted) and j < len(pred_sorted):
        difference = int(gold_lengths[gold_sorted[i]]) - int(pred_lengths[pred_sorted[j]])
        if abs(difference) <= tolerance:
            gold_matched.append(gold_sorted[i])
            pred_matched.append(pred_sorted[j])
            i += 1
            j += 1
        elif difference < 0:
            i += 1
        else:
            j += 1
    return gold_matched, pred_matched


def whitespace_tokens(text: str | None, length: int) -> list[Unit]:
    """The whitespace-separated pieces of the annotation's text (its first ``length`` characters), at their
    true offsets from its start."""
    if text is None:
        raise ValueError("an annotation has no text to cut into tokens")
    return [(m.start(), m.end() - m.start()) for m in _NON_SPACE.finditer(text, 0, length)]


_NON_SPACE = re.compile(r"\S+")


def cut_many(tokenize: Tokenizer, texts: list[str]) -> TokenArrays:
    """The tokens of ``texts`` (each as long as it is) as ``tokenize`` cuts them one at a time: by its ``many``
    when it has one, else a call a text."""
    many = getattr(tokenize, "many", None)
    if many is not None:
        return many(texts)
    cut = list(map(tokenize, texts, map(len, texts)))
    return tokens_as_arrays(cut)


def in_text_order(parts: Sequence[tuple[np.ndarray, TokenArrays]], texts: int) -> TokenArrays:
    """The tokens of ``texts`` texts cut in groups, put back in text order: each part gives the places of
    its texts (ascending) and their tokens."""
    import numpy as np  # loaded for batches only: a small run never cuts texts together

    count = np.zeros(texts, np.int64)
    for places, (counts, _, _) in parts:
        count[places] = counts
    owners = [np.repeat(places, counts) for places, (counts, _, _) in parts]
    order = np.argsort(np.concatenate(owners), kind="stable")
    offset = np.concatenate([offsets for _, (_, offsets, _) in parts])[order]
    length = np.concatenate([lengths for _, (_, _, lengths) in parts])[order]
    return count, offset, length


def tokens_as_arrays(cut: list[Sequence[Unit]]) -> TokenArrays:
    """The tokens of each text, as :data:`TokenArrays`."""
    import numpy as np  # loaded for batches only

    count = np.fromiter(map(len, cut), np.int64, len(cut))
    units = np.fromiter(chain.from_iterable(chain.from_iterable(cut)), np.int64, 2 * int(count.sum())).reshape(-1, 2)
    return count, units[:, 0], units[:, 1]


def hashable(value: Any) -> Hashable:
    """A value as a dictionary key: a JSON list or object as a tagged tuple, equal to another exactly when the
    values are equal; any other value as it is."""
    if isinstance(value, list):
        return (list, tuple(map(hashable, value)))
    if isinstance(value, dict):
        return (dict, frozenset((key, hashable(item)) for key, item in value.items()))
    return value


def hipaa_flag(location_type: object) -> bool | None:
    """Whether a location subtype is a HIPAA identifier; None for an unknown subtype."""
    return HIPAA_LOCATION.get(location_type) if isinstance(location_type, str) else None


class _Untyped:
    """A missing property that equals nothing, not even another missing one."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<untyped>"


@dataclass(frozen=True, slots=True)
class SpanRules:
    """How the span metrics compare two annotation sets; a profile fills these in.

    - ``collapse_by_start``: keep one annotation per start, the last one read;
    - ``tokenize``: cuts an annotation into ``(offset, length)`` tokens, offsets
      counted from the annotation's start;
    - ``distinct_tokens``: a token repeated in one document counts once;
    - ``untyped_never_equal``: a missing subtype equals no other, not even a
      missing one (otherwise two missing subtypes are equal);
    - ``tolerance``: the length difference ``instance_relax`` accepts;
    - ``type_attribute``: the attribute that holds the subtype.
    """

    tokenize: Tokenizer
    type_attribute: str
    collapse_by_start: bool = False
    distinct_tokens: bool = False
    untyped_never_equal: bool = False
    tolerance: int = 2

    def tokens(self, annotation: Annotation) -> list[Unit]:
        """The tokens of a contiguous annotation as ``(start, length)`` in the text."""
        span = annotation.span
        if span.fragments:
            raise ValueError(f"annotation at {span.start} is discontinuous: tokens are cut from contiguous spans")
        return [(span.start + offset, length) for offset, length in self.tokenize(annotation.text, span.length)]

    def compared(self, metric: str) -> Callable[[Any], Hashable]:
        """What ``type``, ``date_format`` or ``hipaa`` compares, from the value of the attribute it reads
        (:meth:`attribute_of`; :data:`~nlpbench.model.MISSING` when the annotation has none): the value
        (:func:`hashable`), a missing one being None or, under ``untyped_never_equal``, a new value equal
        to no other; for ``hipaa`` the HIPAA flag of the location type."""
        if metric == "hipaa":
            return hipaa_flag
        if self.untyped_never_equal:
            return lambda value: _Untyped() if value is MISSING else hashable(value)
        return lambda value: None if value is MISSING else hashable(value)

    def attribute_of(self, metric: str) -> str:
        """The attribute a property metric reads: ``dateFormat`` for ``date_format``, else the type attribute."""
        return "dateFormat" if metric == "date_format" else self.type_attribute

    def property_of(self, metric: str) -> Callable[[Annotation], Hashable]:
        """The property of an annotation that ``type``, ``date_format`` or ``hipaa`` compares."""
        compared, attribute = self.compared(metric), self.attribute_of(metric)
        return lambda a: compared(a.attributes.get(attribute, MISSING))

    def instances(self, annotations: Sequence[Annotation]) -> Sequence[Annotation]:
        """The annotations instance metrics compare: one per start when collapsing."""
        if not self.collapse_by_start:
            return annotations
        return [annotations[i] for i in self.instance_rows([a.span.start for a in annotations])]

    def instance_rows(self, starts: Sequence[int]) -> Sequence[int]:
        """Which of annotations with these starts the instance metrics compare: all, or the last of each start."""
        if not self.collapse_by_start:
            return range(len(starts))
        return list({start: i for i, start in enumerate(starts)}.values())


def instance_matching(
    gold: Sequence[Annotation], pred: Sequence[Annotation], rules: SpanRules, metric: str
) -> Matching:
    """Match instances as the instance metric ``metric`` does."""
    if metric == "instance_strict":
        return match_instances(gold, pred)
    if metric == "instance_relax":
        return match_instances(gold, pred, tolerance=rules.tolerance)
    if metric in ("type", "date_format", "hipaa"):
        return match_instances(gold, pred, kind=rules.property_of(metric))
    raise ValueError(f"unknown span metric {metric!r}; known: {', '.join(SPAN_METRICS)}")
