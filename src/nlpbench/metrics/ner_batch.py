"""The one-to-one matchings of :mod:`nlpbench.metrics.ner` (greedy, optimal) for many documents at once.

A matching of :data:`~nlpbench.metrics.ner.BY_GROUP` decides each overlap group
on its own (:class:`~nlpbench.metrics.ner.GroupRule`), and a document's counts
by label are the same matching run on each label's entities alone. So every
entity of a batch is a row twice, once in the *slice* of its document and once
in the slice of its document and label, and within a slice:

- rows sorted by start form a group until a row starts at or after the
  furthest end so far (``reach``): entities that overlap share a group;
- a group with one side empty counts each gold entity MIS and each predicted
  one SPU, in every scheme;
- a group of one gold entity is settled by the rule's formula over whole
  columns: what each prediction may take it as (overlap, same boundaries, same
  type, sufficient overlap), then which one takes it (the first in reading
  order, or the best);
- any larger group is scored by the rule's ``scheme_counts``, in plain Python,
  each side in reading order.

A slice's counts are the sums of its groups'; those of a document's slice are
its counts, those of its label slices add up to the batch's counts by label.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np

from nlpbench.metrics.ner import SCHEMES, Entity, GroupRule, NerCounts, SemEval
from nlpbench.model import EntityColumns

#: The counts of a scheme, in the order of :class:`~nlpbench.metrics.ner.SemEval`.
KINDS = ("cor", "inc", "par", "mis", "spu")
COR, INC, PAR, MIS, SPU = range(len(KINDS))
_PARTIAL = SCHEMES.index("partial")


@dataclass
class BatchCounts:
    """Counts of one batch: ``documents[i, s, k]`` is kind ``k`` (:data:`KINDS`) of scheme ``s``
    (:data:`~nlpbench.metrics.ner.SCHEMES`) in document ``i``; ``labels[label]`` the same for a label,
    summed over the batch's documents, for every label of the batch."""

    documents: np.ndarray
    labels: dict[str, np.ndarray]

    def document(self, index: int) -> list[SemEval]:
        """Document ``index``'s counts, a :class:`~nlpbench.metrics.ner.SemEval` per scheme."""
        return [SemEval(*row) for row in self.documents[index].tolist()]

    def document_fields(self) -> list[list[tuple[int, ...]]]:
        """Per document, per scheme: COR, INC, PAR, MIS, SPU, POSSIBLE, ACTUAL, precision, recall and F1,
        by :class:`~nlpbench.metrics.ner.SemEval`'s formulas over whole columns (the same operations in the
        same order, so the same floats): POSSIBLE = COR + INC + PAR + MIS, ACTUAL = COR + INC + PAR + SPU,
        P = (COR + ½·PAR) / ACTUAL, R = (COR + ½·PAR) / POSSIBLE, F1 = 2·P·R / (P + R), 0 on a zero denominator.
        """
        cor, inc, par, mis, spu = (self.documents[..., kind] for kind in range(len(KINDS)))
        possible, actual = cor + inc + par + mis, cor + inc + par + spu
        credit = cor + 0.5 * par
        precision, recall = _ratio(credit, actual), _ratio(credit, possible)
        f1 = _ratio(2 * precision * recall, precision + recall)
        columns = (cor, inc, par, mis, spu, possible, actual, precision, recall, f1)
        return [list(zip(*by_scheme, strict=True)) for by_scheme in zip(*(c.tolist() for c in columns), strict=True)]

    def total(self) -> NerCounts:
        """The batch's counts by scheme and label (label None: every entity)."""
        counts: dict[tuple[str, str | None], SemEval] = {}
        for label, table in [(None, self.documents.sum(axis=0)), *self.labels.items()]:
            counts.update({(scheme, label): SemEval(*row) for scheme, row in zip(SCHEMES, table.tolist(), strict=True)})
        return NerCounts(counts)


def _ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """``numerator / denominator``, 0.0 where the denominator is 0 (:func:`~nlpbench.metrics.counts.safe_div`)."""
    return np.divide(numerator, denominator, out=np.zeros(numerator.shape), where=denominator != 0)


@dataclass
class _Rows:
    """Entities of a batch as columns: side (0 gold, 1 predicted), slice, start, end, label code, and the
    position in its document's side (its reading order)."""

    side: np.ndarray
    slice: np.ndarray
    start: np.ndarray
    end: np.ndarray
    label: np.ndarray
    position: np.ndarray

    def take(self, index: np.ndarray) -> _Rows:
        return _Rows(*(column[index] for column in vars(self).values()))


def batch_counts(pairs: Sequence[tuple[EntityColumns, EntityColumns]], rule: GroupRule) -> BatchCounts:
    """The counts of each ``(gold, predicted)`` pair of documents, and by label, under ``rule``."""
    names = sorted(set(chain.from_iterable(columns.labels for pair in pairs for columns in pair)))
    documents = np.zeros((len(pairs), len(SCHEMES), len(KINDS)), np.int64)
    if not names:
        return BatchCounts(documents, {})
    rows, slice_doc, slice_label = _sliced(pairs, {name: code for code, name in enumerate(names)})
    group = _groups(rows)
    counts = _group_counts(rows, group, rule, names)
    first_group = np.flatnonzero(np.diff(group, prepend=-1))  # groups are numbered in slice order
    group_slice = rows.slice[first_group]
    starts = np.flatnonzero(np.diff(group_slice, prepend=-1))
    by_slice = np.add.reduceat(counts, starts, axis=0)  # every slice has a group
    whole = slice_label < 0
    documents[slice_doc[whole]] = by_slice[whole]
    by_label = np.zeros((len(names), len(SCHEMES), len(KINDS)), np.int64)
    np.add.at(by_label, slice_label[~whole], by_slice[~whole])
    return BatchCounts(documents, dict(zip(names, by_label, strict=True)))


def _column(pairs: Sequence[tuple[EntityColumns, EntityColumns]], side: int, field: str) -> list:
    return list(chain.from_iterable(getattr(pair[side], field) for pair in pairs))


def _sliced(
    pairs: Sequence[tuple[EntityColumns, EntityColumns]], codes: dict[str, int]
) -> tuple[_Rows, np.ndarray, np.ndarray]:
    """Every entity as a row of its document's slice and of its document and label's slice, sorted by slice
    and start; and each slice's document and label code (-1: the whole document). A slice is numbered
    ``document · (labels + 1) + label code + 1`` and then by rank, so the numbers stay few."""
    sides = []
    for which in (0, 1):
        sizes = np.array([len(pair[which]) for pair in pairs], np.int64)
        total = int(sizes.sum())
        first = np.repeat(np.cumsum(sizes) - sizes, sizes)
        sides.append(
            (
                np.full(total, which, np.int8),
                np.repeat(np.arange(len(pairs), dtype=np.int64), sizes),
                np.array(_column(pairs, which, "starts"), np.int64).reshape(total),
                np.array(_column(pairs, which, "ends"), np.int64).reshape(total),
                np.fromiter(map(codes.__getitem__, _column(pairs, which, "labels")), np.int64, total),
                np.arange(total, dtype=np.int64) - first,
            )
        )
    side, doc, start, end, label, position = (np.concatenate(parts) for parts in zip(*sides, strict=True))
    width = len(codes) + 1
    keys = np.concatenate((doc * width, doc * width + label + 1))
    numbers, slices = np.unique(keys, return_inverse=True)
    rows = _Rows(np.tile(side, 2), slices.reshape(-1), *(np.tile(c, 2) for c in (start, end, label, position)))
    rows = rows.take(np.lexsort((rows.start, rows.slice)))
    return rows, numbers // width, numbers % width - 1


def _groups(rows: _Rows) -> np.ndarray:
    """The overlap group of each row (rows sorted by slice and start), numbered from 0 in row order.

    A row opens a group when its start is at or past the furthest end of the rows before it in its slice.
    Coordinates are replaced by their ranks, so that ``slice · ranks + rank`` orders slices first and the
    running maximum of ends never carries over from one slice to the next.
    """
    ranks, coordinates = np.unique(np.concatenate((rows.start, rows.end)), return_inverse=True)
    start_rank, end_rank = coordinates.reshape(2, -1)
    base = rows.slice.astype(np.int64) * len(ranks)
    reach = np.maximum.accumulate(base + end_rank)
    opens = np.ones(len(reach), bool)
    opens[1:] = base[1:] + start_rank[1:] >= reach[:-1]
    return np.cumsum(opens) - 1


def _group_counts(rows: _Rows, group: np.ndarray, rule: GroupRule, names: list[str]) -> np.ndarray:
    """Each group's counts, ``(groups, schemes, kinds)``."""
    groups = int(group[-1]) + 1
    gold = rows.side == 0
    n_gold = np.bincount(group[gold], minlength=groups)
    n_pred = np.bincount(group[~gold], minlength=groups)
    counts = np.zeros((groups, len(SCHEMES), len(KINDS)), np.int64)
    one_sided = (n_gold == 0) | (n_pred == 0)
    counts[one_sided, :, MIS] = n_gold[one_sided, None]
    counts[one_sided, :, SPU] = n_pred[one_sided, None]
    one_gold = (n_gold == 1) & (n_pred > 0)
    in_one = one_gold[group]
    one = np.flatnonzero(one_gold)
    taken = _taken(rows.take(in_one & gold), rows.take(in_one & ~gold), group[in_one & ~gold], rule)
    settled = np.zeros((len(one), len(SCHEMES), len(KINDS)), np.int64)
    for scheme, (cor, weak) in enumerate(taken):
        matched = cor | weak
        settled[:, scheme, COR] = cor
        settled[:, scheme, PAR if scheme == _PARTIAL else INC] = weak
        settled[:, scheme, MIS] = ~matched
        settled[:, scheme, SPU] = n_pred[one] - matched
    counts[one] = settled
    larger = ~one_sided & ~one_gold
    if larger.any():
        counts[larger] = _scored(rows.take(larger[group]), group[larger[group]], rule, names)
    return counts


def _taken(gold: _Rows, pred: _Rows, pred_group: np.ndarray, rule: GroupRule) -> list[tuple[np.ndarray, np.ndarray]]:
    """For groups of one gold entity (``gold``, one row per group in group order) and their predictions:
    per scheme, whether each group's gold entity is taken as COR and whether as INC (PAR)
    (:class:`~nlpbench.metrics.ner.GroupRule`'s formula)."""
    order = np.lexsort((pred.position, pred_group))  # each group's predictions in reading order
    pred, pred_group = pred.take(order), pred_group[order]
    facing = np.cumsum(np.diff(pred_group, prepend=-1) > 0) - 1  # the group of each prediction, from 0
    taken = []
    for cor, weak in _may_take(gold.take(facing), pred, rule.min_overlap_percent):
        group_cor, group_weak = np.zeros(len(gold.start), bool), np.zeros(len(gold.start), bool)
        if rule.in_order:
            able = np.flatnonzero(cor | weak)
            first = able[np.unique(facing[able], return_index=True)[1]]
            group_cor[facing[first]] = cor[first]
            group_weak[facing[first]] = weak[first]
        else:
            group_cor[facing[cor]] = True
            group_weak[facing[weak]] = True
            group_weak &= ~group_cor
        taken.append((group_cor, group_weak))
    return taken


def _may_take(gold: _Rows, pred: _Rows, min_overlap_percent: float | None) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per scheme, whether each prediction may take the gold entity facing it (row ``i`` of each side) as
    COR, and whether as INC (PAR), by :class:`~nlpbench.metrics.ner.GroupRule`'s formula."""
    overlap = (gold.start < pred.end) & (pred.start < gold.end)
    same_bounds = overlap & (gold.start == pred.start) & (gold.end == pred.end)
    same_type = gold.label == pred.label
    sufficient = overlap
    if min_overlap_percent is not None:
        shared = np.minimum(gold.end, pred.end) - np.maximum(gold.start, pred.start)
        ratio = np.divide(shared, gold.end - gold.start, out=np.zeros(len(shared)), where=overlap)
        sufficient = overlap & (ratio * 100.0 >= min_overlap_percent)
    by_scheme = {
        "strict": same_bounds & same_type,
        "exact": same_bounds,
        "partial": same_bounds,
        "type": sufficient & same_type,
    }
    return [(by_scheme[scheme], sufficient & ~by_scheme[scheme]) for scheme in SCHEMES]


def _scored(rows: _Rows, group: np.ndarray, rule: GroupRule, names: list[str]) -> np.ndarray:
    """The counts of larger groups, each scored by ``rule.scheme_counts`` on its entities in reading order."""
    order = np.lexsort((rows.position, rows.side, group))
    members: dict[int, tuple[list[Entity], list[Entity]]] = {}
    for number, side, start, end, label in zip(
        *(column[order].tolist() for column in (group, rows.side, rows.start, rows.end, rows.label)),
        strict=True,
    ):
        members.setdefault(number, ([], []))[side].append(Entity(start, end, names[label]))
    return np.array(
        [
            [[getattr(rule.scheme_counts(gold, pred, scheme), kind) for kind in KINDS] for scheme in SCHEMES]
            for gold, pred in members.values()
        ],
        np.int64,
    ).reshape(-1, len(SCHEMES), len(KINDS))
