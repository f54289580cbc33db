"""Counts of the i2b2 2014 de-identification evaluation: tags, their tokens, exact and relaxed ends.

A tag is keyed by a tuple; two lists of keys (gold, system) give one
document's :class:`PRF`. Exact matching compares whole keys, either as sets
(repeated keys count once, as the i2b2 script's Python sets do) or as
multisets (each key matches as often as it occurs on both sides). Relaxed
matching compares keys whose last item is the end offset: the rest must be
equal and the ends at most ``tolerance`` apart.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import cast

from nlpbench.metrics.counts import PRF, score_multiset, score_set

#: What the i2b2 script calls a token: a run of ASCII letters and digits.
_TOKEN = re.compile(r"[a-zA-Z0-9]+")

RelaxedKey = tuple[Hashable, ...]  # (..., end): the end offset last


def tokens(text: str, start: int, end: int, *, empty_token: bool) -> list[tuple[int, int]]:
    """``(start, end)`` of each token of ``text[start:end]``: runs of ASCII letters and digits.

    With ``empty_token``, a stretch with no letter or digit gives one empty
    token where the stretch ends (``start + len(text[start:end])``), as the
    i2b2 script's tokenizer does; without it, no token.
    """
    piece = text[start:end]
    found = [(start + m.start(), start + m.end()) for m in _TOKEN.finditer(piece)]
    if not found and empty_token:
        found.append((start + len(piece), start + len(piece)))
    return found


def exact(gold: Sequence[Hashable], system: Sequence[Hashable], *, sets: bool) -> PRF:
    """Exact matching: as sets (TP = |G ∩ S|) or as multisets (TP = Σ min(count in G, count in S))."""
    return score_set(gold, system) if sets else score_multiset(gold, system)


def relaxed(gold: Sequence[RelaxedKey], system: Sequence[RelaxedKey], tolerance: int, *, sets: bool) -> PRF:
    """Relaxed-end matching of keys ``(..., end)``: equal but for ends at most ``tolerance`` apart.

    ``sets=False``: the largest one-to-one matching (TP), FP = |S| − TP,
    FN = |G| − TP. ``sets=True``: what Python 2 sets do with the i2b2
    script's relaxed equality, which is not transitive. Each side is first
    reduced as ``set(list)`` reduces it, keeping a key unless it equals one
    already kept (file order). Then FP counts the kept system keys equal to
    no kept gold key, FN the kept gold keys equal to no kept system key, and TP
    the keys of the smaller side (the system side when sizes tie) equal to
    some key of the other, which is what ``gold.intersection(system)`` counts
    when it walks the smaller set. TP + FP need not be |S|.
    """
    gold_groups, system_groups = _groups(gold), _groups(system)
    if not sets:
        matched = sum(_one_to_one(ends, system_groups.get(rest, []), tolerance) for rest, ends in gold_groups.items())
        return PRF(matched, len(system) - matched, len(gold) - matched)
    gold_kept = {rest: _kept(ends, tolerance) for rest, ends in gold_groups.items()}
    system_kept = {rest: _kept(ends, tolerance) for rest, ends in system_groups.items()}
    gold_found = _found(gold_kept, system_kept, tolerance)
    system_found = _found(system_kept, gold_kept, tolerance)
    n_gold = sum(map(len, gold_kept.values()))
    n_system = sum(map(len, system_kept.values()))
    tp = gold_found if n_system > n_gold else system_found
    return PRF(tp, n_system - system_found, n_gold - gold_found)


def _groups(keys: Sequence[RelaxedKey]) -> dict[RelaxedKey, list[int]]:
    """Ends by the rest of the key, in order."""
    groups: dict[RelaxedKey, list[int]] = defaultdict(list)
    for key in keys:
        groups[key[:-1]].append(cast(int, key[-1]))
    return groups


def _kept(ends: list[int], tolerance: int) -> list[int]:
    """The ends a Python set keeps from ``ends`` inserted in order when ends within ``tolerance`` are equal."""
    kept: list[int] = []
    for end in ends:
        if all(abs(end - other) > tolerance for other in kept):
            kept.append(end)
    return kept


def _found(side: dict[RelaxedKey, list[int]], other: dict[RelaxedKey, list[int]], tolerance: int) -> int:
    """How many ends of ``side`` are within ``tolerance`` of some end of ``other`` under the same key."""
    return sum(
        any(abs(end - e) <= tolerance for e in other.get(rest, ())) for rest, ends in side.items() for end in ends
    )


def _one_to_one(gold_ends: list[int], system_ends: list[int], tolerance: int) -> int:
    """The size of a largest matching of ends at most ``tolerance`` apart.

    On a line, pairing the smallest unmatched ends greedily is optimal: an end
    that cannot pair with the smallest end of the other side can pair with no
    later one either.
    """
    gold_sorted, system_sorted = sorted(gold_ends), sorted(system_ends)
    i = j = matched = 0
    while i < len(gold_sorted) and j < len(system_sorted):
        if abs(gold_sorted[i] - system_sorted[j]) <= tolerance:
            matched, i, j = matched + 1, i + 1, j + 1
        elif gold_sorted[i] < system_sorted[j]:
            i += 1
        else:
            j += 1
    return matched


@dataclass(frozen=True, slots=True)
class Macro:
    """Mean and population standard deviation of per-document precision and recall, and F1 of the means.

    F1 = 2·P̄·R̄ / (P̄ + R̄); None where a mean has no document to average.
    """

    precision: float | None
    precision_sd: float | None
    recall: float | None
    recall_sd: float | None
    f1: float | None


def macro(counts: Sequence[PRF], *, skip_undefined: bool, f1_nan: bool) -> Macro:
    """Macro averages over documents.

    ``skip_undefined=False`` (the i2b2 script): a document whose precision or
    recall has no denominator counts as 0. ``skip_undefined=True``: it is left
    out of that mean. ``f1_nan``: F1 of two zero means is undefined (None), as
    numpy's 0/0 makes it in the script; otherwise 0. Means and deviations are
    numpy's (:func:`mean_sd`).
    """
    precisions = [c.precision for c in counts if not skip_undefined or c.tp + c.fp]
    recalls = [c.recall for c in counts if not skip_undefined or c.tp + c.fn]
    p, p_sd = mean_sd(precisions)
    r, r_sd = mean_sd(recalls)
    return Macro(p, p_sd, r, r_sd, f1_of(p, r, nan=f1_nan))


#: Below this many values numpy sums an array one value after another (its pairwise summation adds blocks of 8
#: in 8 running sums from 8 values on), so a plain sum in order is numpy's to the bit.
PAIRWISE_FROM = 8


def mean_sd(values: Sequence[float]) -> tuple[float | None, float | None]:
    """numpy's ``mean()`` and ``std()`` (population) of the values, as the i2b2 script computes them; None, None
    for no value.

    m = Σx / n and sd = √(Σ(x − m)² / n), the sums in numpy's order: for fewer than :data:`PAIRWISE_FROM`
    values that is the values' order, and they are summed in plain Python (numpy is not loaded); from there on
    by numpy, whose pairwise summation associates otherwise.
    """
    if not values:
        return None, None
    if len(values) < PAIRWISE_FROM:
        mean = _in_order(values) / len(values)
        return mean, math.sqrt(_in_order([(x - mean) * (x - mean) for x in values]) / len(values))
    import numpy as np

    array = np.array(values, dtype=float)
    return float(array.mean()), float(array.std())


def _in_order(values: Sequence[float]) -> float:
    """Σ values, added one after another from 0.0."""
    total = 0.0
    for value in values:
        total += value
    return total


def f1_of(precision: float | None, recall: float | None, *, nan: bool = False) -> float | None:
    """2·P·R / (P + R) from the two values, as the i2b2 script computes it; 0 (None with ``nan``) when P + R = 0."""
    if precision is None or recall is None:
        return None
    if precision + recall == 0:
        return None if nan else 0.0
    value = 2 * ((precision * recall) / (precision + recall))
    return None if math.isnan(value) else value
