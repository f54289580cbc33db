"""The counts of :func:`~nlpbench.metrics.span_batch.batch_counts` for a few documents, in plain Python.

The batch engine is numpy throughout: loading numpy costs about 0.08 s of CPU and each
of its calls a fixed few microseconds, which a batch of thousands of annotations spreads
thin but a single note does not. Below :data:`SMALL` annotations a batch is counted
here instead, one document at a time, with the same rules and the same numbers:

- exact matches (``instance_strict``, ``type``, ``date_format``, ``hipaa``, and
  ``token`` unless tokens are distinct): of the rows sharing a key, the first
  predicted rows match the last gold rows, ``min(g, p)`` of them;
- ``instance_relax`` within a tolerance: rows sharing a start pair off by length,
  walking both sides in length order (ties in reading order);
- distinct tokens: the first row of each (start, length) on each side, matched when
  the other side holds that token too;
- collapsing by start keeps the last annotation read of each start for the instance
  metrics; tokens are cut from every annotation.

True positives and false negatives are sliced by the gold row's label, false
positives by the predicted row's; every label met on either side gets a slice for
each of :data:`~nlpbench.metrics.spans.SLICED`, zeros included, as the batch
engine gives them.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

from nlpbench.metrics.counts import PRF
from nlpbench.metrics.spans import EXACT_PROPERTIES, SLICED, SpanRules, greedy_pairs
from nlpbench.model import SpanColumns, SpanRow

#: Below this many annotations (gold and predicted, every note of the batch together) a batch is counted in
#: plain Python. Measured per batch of location annotations (standard profile, numpy already loaded): 1.1 ms
#: plain against 1.0 ms batched at 128, 2.1 against 1.3 ms at 256, 3.9 against 1.6 ms at 512. At 256 the plain
#: way costs a large run under 1 ms more on its last batch, while a run of small batches saves loading numpy
#: (about 80 ms of CPU).
SMALL = 256

#: One side's rows reduced to what a metric compares: a key and a slice label each.
_Keyed = list[tuple[Hashable, str | None]]


@dataclass
class SmallCounts:
    """Counts of a few documents, read as :class:`~nlpbench.metrics.span_batch.BatchCounts` are:
    ``documents[metric]`` a :class:`PRF` per document, ``labels[metric, label]`` a metric's slice."""

    documents: dict[str, list[PRF]] = field(default_factory=dict)
    labels: dict[tuple[str, str], PRF] = field(default_factory=dict)
    #: annotations left out of the instance metrics because a later one shares their start
    collapsed: int = 0

    def document(self, metric: str, index: int) -> PRF:
        return self.documents[metric][index]

    def total(self, metric: str) -> PRF:
        """The counts of ``metric`` summed over the documents."""
        return sum(self.documents[metric], PRF())


def small_counts(
    pairs: Sequence[tuple[SpanColumns, SpanColumns]],
    rules: SpanRules,
    metrics: Sequence[str],
    label: Callable[[Any], str] | None = None,
) -> SmallCounts:
    """The counts :func:`~nlpbench.metrics.span_batch.batch_counts` gives for ``pairs`` (with a token table),
    computed without numpy; meant for fewer than :data:`SMALL` annotations."""
    properties = {m: rules.compared(m) for m in metrics if m in EXACT_PROPERTIES}
    if "date_format" in properties and rules.type_attribute != "dateFormat":
        raise ValueError("date_format compares the subtype of dates: rules whose type attribute is dateFormat")
    wanted = list(metrics) + [m for m in SLICED if label is not None and m not in metrics]
    counts = SmallCounts(documents={metric: [] for metric in metrics})
    names: dict[str | None, None] = {}
    sliced: dict[tuple[str, str | None], list[int]] = {}
    for gold_columns, pred_columns in pairs:
        gold, pred = gold_columns.rows, pred_columns.rows
        gold_labels: list[str | None] = [label(row.subtype) for row in gold] if label else [None] * len(gold)
        pred_labels: list[str | None] = [label(row.subtype) for row in pred] if label else [None] * len(pred)
        names.update(dict.fromkeys(gold_labels + pred_labels))
        kept = [list(rules.instance_rows([row.start for row in side])) for side in (gold, pred)]
        counts.collapsed += len(gold) + len(pred) - len(kept[0]) - len(kept[1])
        gold_kept = [(gold[i], gold_labels[i]) for i in kept[0]]
        pred_kept = [(pred[i], pred_labels[i]) for i in kept[1]]
        for metric in wanted:
            if metric == "token":
                gold_side, pred_side = _tokens(gold, gold_labels, rules), _tokens(pred, pred_labels, rules)
                hits = _distinct(gold_side, pred_side) if rules.distinct_tokens else _exact(gold_side, pred_side)
            elif metric == "instance_relax" and rules.tolerance:
                hits = _within(gold_kept, pred_kept, rules.tolerance)
            else:
                compared = properties.get(metric)
                gold_side, pred_side = (_instances(side, compared) for side in (gold_kept, pred_kept))
                hits = _exact(gold_side, pred_side)
            if metric in metrics:
                counts.documents[metric].append(PRF(*_count(hits, None)))
            if label is not None and metric in SLICED:
                for name in dict.fromkeys(hits[0]) | dict.fromkeys(hits[1]):
                    found = sliced.setdefault((metric, name), [0, 0, 0])
                    for total, more in zip(range(3), _count(hits, name), strict=True):
                        found[total] += more
    if label is not None:
        for metric in SLICED:
            for name in (name for name in names if name is not None):
                counts.labels[metric, name] = PRF(*sliced.get((metric, name), (0, 0, 0)))
    return counts


#: How each side's rows fared, per label: label -> [matched rows, unmatched rows], for gold then predicted rows.
_Hits = tuple[dict[str | None, list[int]], dict[str | None, list[int]]]


def _count(hits: _Hits, name: str | None) -> tuple[int, int, int]:
    """TP, FP, FN of every row (``name`` None) or of the rows of label ``name``."""
    gold, pred = hits
    if name is None:  # every label together
        tp = sum(matched for matched, _ in gold.values())
        fn = sum(unmatched for _, unmatched in gold.values())
        return tp, sum(unmatched for _, unmatched in pred.values()), fn
    tp, fn = gold.get(name, (0, 0))
    return tp, pred.get(name, (0, 0))[1], fn


def _outcomes(side: _Keyed, hit: list[bool]) -> dict[str | None, list[int]]:
    """Per label, how many rows of a side were matched and how many were not."""
    found: dict[str | None, list[int]] = {}
    for (_, name), matched in zip(side, hit, strict=True):
        found.setdefault(name, [0, 0])[not matched] += 1
    return found


def _instances(side: list[tuple[SpanRow, str | None]], compared: Callable[[Any], Hashable] | None) -> _Keyed:
    """Each instance keyed by its start and end, and the compared value of its subtype (a missing one that equals
    nothing is compared afresh on each row)."""
    if compared is None:
        return [((row.start, row.start + row.length), name) for row, name in side]
    return [((row.start, row.start + row.length, compared(row.subtype)), name) for row, name in side]


def _tokens(rows: list[SpanRow], labels: list[str | None], rules: SpanRules) -> _Keyed:
    """Every token of every annotation (collapsed or not) keyed by its start in the text and its length, in
    reading order, with its annotation's label."""
    return [
        ((row.start + offset, length), name)
        for row, name in zip(rows, labels, strict=True)
        for offset, length in rules.tokenize(row.text, row.length)
    ]


def _exact(gold: _Keyed, pred: _Keyed) -> _Hits:
    """Rows with equal keys pair off one to one: each predicted row, in order, takes the gold row waiting last."""
    waiting: dict[Hashable, list[int]] = {}
    for index, (key, _) in enumerate(gold):
        waiting.setdefault(key, []).append(index)
    gold_hit, pred_hit = [False] * len(gold), [False] * len(pred)
    for index, (key, _) in enumerate(pred):
        bucket = waiting.get(key)
        if bucket:
            gold_hit[bucket.pop()] = pred_hit[index] = True
    return _outcomes(gold, gold_hit), _outcomes(pred, pred_hit)


def _distinct(gold: _Keyed, pred: _Keyed) -> _Hits:
    """The first row of each distinct key on each side, matched when the other side holds the key."""
    firsts = [dict(reversed(side)) for side in (gold, pred)]
    gold_first, pred_first = firsts
    return (
        _outcomes(list(gold_first.items()), [key in pred_first for key in gold_first]),
        _outcomes(list(pred_first.items()), [key in gold_first for key in pred_first]),
    )


def _within(gold: list[tuple[SpanRow, str | None]], pred: list[tuple[SpanRow, str | None]], tolerance: int) -> _Hits:
    """Rows sharing a start pair off by length within ``tolerance``, both sides walked in length order (ties in
    reading order), as :func:`~nlpbench.metrics.spans.match_instances` pairs them."""
    groups: dict[int, tuple[list[int], list[int]]] = {}
    for side, rows in enumerate((gold, pred)):
        for index, (row, _) in enumerate(rows):
            groups.setdefault(row.start, ([], []))[side].append(index)
    gold_hit, pred_hit = [False] * len(gold), [False] * len(pred)
    for gold_group, pred_group in groups.values():
        gold_lengths, pred_lengths = [gold[i][0].length for i in gold_group], [pred[i][0].length for i in pred_group]
        gold_matched, pred_matched = greedy_pairs(gold_lengths, pred_lengths, tolerance)
        for i in gold_matched:
            gold_hit[gold_group[i]] = True
        for i in pred_matched:
            pred_hit[pred_group[i]] = True
    keyed: list[_Keyed] = [[(None, name) for _, name in side] for side in (gold, pred)]
    return _outcomes(keyed[0], gold_hit), _outcomes(keyed[1], pred_hit)
