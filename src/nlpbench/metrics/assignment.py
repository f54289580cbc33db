"""One-to-one pairing of two lists by the assignment of greatest total weight.

Weights are non-negative numbers; a zero weight means the two items cannot
be paired. :func:`best_pairs` solves the assignment problem (scipy's
``linear_sum_assignment``, a Jonker–Volgenant solver) and returns the pairs
with a positive weight, so the number of pairs of each weight is the one the
optimum has. Scores that prefer one kind of pair over any number of another
(a correct match over partial ones) give it a weight larger than the number
of items.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache
from typing import TypeVar

from nlpbench.loading import import_alone

A = TypeVar("A")
B = TypeVar("B")


def best_pairs(left: Sequence[A], right: Sequence[B], weight: Callable[[A, B], float]) -> list[tuple[int, int, float]]:
    """``(i, j, weight)`` of the pairs of a maximum-weight one-to-one assignment, positive weights only."""
    if not left or not right:
        return []
    import numpy as np

    linear_sum_assignment = solver()
    weights = np.array([[weight(a, b) for b in right] for a in left], dtype=float)
    rows, cols = linear_sum_assignment(weights, maximize=True)
    return [(int(i), int(j), float(weights[i, j])) for i, j in zip(rows, cols, strict=True) if weights[i, j] > 0]


@cache
def solver() -> Callable:
    """scipy's ``linear_sum_assignment``, without the rest of scipy.optimize (0.1 s instead of 0.45 s)."""
    return import_alone("scipy.optimize._lsap", ["scipy.optimize"]).linear_sum_assignment
