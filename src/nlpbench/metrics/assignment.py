"""One-to-one pairing of two lists by the assignment of greatest total weight.

Weights are non-negative numbers; a zero weight means the two items cannot
be paired. :func:`best_pairs` solves the assignment problem and returns the
pairs with a positive weight, so the number of pairs of each weight is the one
the optimum has. Scores that prefer one kind of pair over any number of another
(a correct match over partial ones) give it a weight larger than the number
of items.

:func:`maximum_assignment` is the solver: scipy's ``linear_sum_assignment``
(``maximize=True``), a shortest-augmenting-path (Jonker–Volgenant) solver after
Crouse (2016); or, for a small matrix while numpy is not loaded (the first
:data:`PLAIN_SOLVES` of a process), the same algorithm in plain Python, so that
a small input loads neither numpy nor scipy. When several assignments have the
greatest total, which one a solver returns depends on its order of search, and
a total summed in the assignment's order depends on which pairs it holds (CEAF
adds its pairs' scores in key order): the plain solver therefore makes scipy's
choices step for step —
the weights negated into costs (a wide matrix as it is, a tall one transposed),
rows added in order, each row's search over the columns not yet reached taken
from a list filled in reverse and emptied by moving its last item into the
gap, the lowest reduced cost ``min + c[i][j] − u[i] − v[j]`` (summed in that
order) kept at its first occurrence unless a later equal one ends at a free
column, and the duals updated as ``u[r] += min − d[col(r)]``, ``v[j] −= min −
d[j]`` — with the same floating-point operations, so the pairs are the same
(``tests/metrics/test_assignment.py`` compares them on generated matrices, ties
and equal rows included).
"""

from __future__ import annotations

import itertools
import math
import sys
from collections.abc import Callable, Sequence
from functools import cache
from typing import TypeVar

from nlpbench.loading import import_alone

A = TypeVar("A")
B = TypeVar("B")

#: The most cells (rows × columns) of a matrix solved in plain Python. Once numpy is loaded scipy's solver is the
#: faster (measured in process, square matrices of tied weights, load 6: plain / scipy 3.2 / 1.1 µs at 2 × 2,
#: 8.1 / 1.6 µs at 5 × 5, 18 / 2.5 µs at 8 × 8, 36 / 3.9 µs at 12 × 12), but loading numpy and scipy costs about
#: 0.1 s of CPU, which a run of a few small documents (one note at the command line) need not pay.
SMALL = 64
#: How many matrices a process solves in plain Python at most: then scipy's solver is loaded, as a large input loads
#: numpy first (a reader's batches, a large matrix) and every matrix goes to scipy from then on. The matrices of a
#: linking run of 5,000 small documents (14,766, of 1 to 64 cells) took 0.107 s in plain Python and 0.033 s with
#: scipy (load 10), some 5 µs more each: a run of few documents never loads numpy and scipy (about 0.1 s), and a
#: long run of small ones pays at most some 0.02 s more than it did.
PLAIN_SOLVES = 4096

#: Counts the matrices :func:`in_plain` sends to plain Python in this process (``next`` is atomic under the GIL).
_solved_in_plain = itertools.count()


def best_pairs(left: Sequence[A], right: Sequence[B], weight: Callable[[A, B], float]) -> list[tuple[int, int, float]]:
    """``(i, j, weight)`` of the pairs of a maximum-weight one-to-one assignment, positive weights only."""
    if not left or not right:
        return []
    weights = [[float(weight(a, b)) for b in right] for a in left]
    rows, columns = maximum_assignment(weights)
    return [(i, j, weights[i][j]) for i, j in zip(rows, columns, strict=True) if weights[i][j] > 0]


def maximum_assignment(weights: Sequence[Sequence[float]]) -> tuple[list[int], list[int]]:
    """The rows and the columns of the pairs of a one-to-one assignment of greatest Σ weights[i][j], rows ascending.

    Each of the min(rows, columns) pairs is given, zero weights included: what ``linear_sum_assignment(weights,
    maximize=True)`` returns, computed in plain Python when :func:`in_plain` says so. A weight that is NaN or +∞
    is refused (``ValueError``), as scipy refuses it.
    """
    if not weights or not weights[0]:
        return [], []
    if in_plain(len(weights) * len(weights[0])):
        return _plain_maximum(weights)
    import numpy as np

    rows, columns = solver()(np.array(weights, dtype=float), maximize=True)
    return rows.tolist(), columns.tolist()


def in_plain(cells: int) -> bool:
    """Whether a matrix of ``cells`` cells is solved in plain Python: it has at most :data:`SMALL`, numpy is not
    loaded, and the process has solved fewer than :data:`PLAIN_SOLVES` matrices that way (this one counts)."""
    return cells <= SMALL and "numpy" not in sys.modules and next(_solved_in_plain) < PLAIN_SOLVES


@cache
def solver() -> Callable:
    """scipy's ``linear_sum_assignment``, without the rest of scipy.optimize (0.1 s instead of 0.45 s)."""
    return import_alone("scipy.optimize._lsap", ["scipy.optimize"]).linear_sum_assignment


def _plain_maximum(weights: Sequence[Sequence[float]]) -> tuple[list[int], list[int]]:
    """:func:`maximum_assignment` in plain Python: the costs are the negated weights, a tall matrix transposed."""
    tall = len(weights) > len(weights[0])
    costs = [[-w for w in line] for line in (zip(*weights, strict=True) if tall else weights)]
    if any(c != c or c == -math.inf for line in costs for c in line):
        raise ValueError("matrix contains invalid numeric entries")
    column_of = _shortest_augmenting_paths(costs)
    if not tall:
        return list(range(len(costs))), column_of
    by_row = sorted(range(len(column_of)), key=column_of.__getitem__)  # the columns of the weights, by row
    return [column_of[j] for j in by_row], by_row


def _shortest_augmenting_paths(costs: list[list[float]]) -> list[int]:
    """The column of each row in an assignment of least total cost, no more rows than columns (Crouse 2016).

    Row by row, the shortest path of reduced costs ``c[i][j] − u[i] − v[j]`` from the new row to a free
    column, through the columns already taken and their rows, is found (Dijkstra over the columns); the duals
    u, v are updated along it and the assignment is flipped along the path.
    """
    columns = len(costs[0])
    u, v = [0.0] * len(costs), [0.0] * columns
    row_of, column_of = [-1] * columns, [-1] * len(costs)
    via = [-1] * columns  # the row from which each column was reached
    for start in range(len(costs)):
        distance = [math.inf] * columns
        reached_rows, reached_columns = [], []
        left = list(range(columns - 1, -1, -1))
        lowest, row, free = 0.0, start, -1
        while free < 0:
            reached_rows.append(row)
            base, line, dual, best, at = lowest, costs[row], u[row], math.inf, -1
            for index, column in enumerate(left):
                reduced = base + line[column] - dual - v[column]
                if reduced < distance[column]:
                    via[column], distance[column] = row, reduced
                if distance[column] < best or (distance[column] == best and row_of[column] < 0):
                    best, at = distance[column], index
            if best == math.inf:
                raise ValueError("cost matrix is infeasible")
            lowest, column = best, left[at]
            if row_of[column] < 0:
                free = column
            else:
                row = row_of[column]
            reached_columns.append(column)
            left[at] = left[-1]
            left.pop()
        u[start] += lowest
        for other in reached_rows[1:]:
            u[other] += lowest - distance[column_of[other]]
        for column in reached_columns:
            v[column] -= lowest - distance[column]
        column = free
        while True:
            row = via[column]
            row_of[column] = row
            column_of[row], column = column, column_of[row]
            if row == start:
                break
    return column_of
