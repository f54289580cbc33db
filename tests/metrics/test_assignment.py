"""The plain-Python assignment solver gives the pairs scipy's ``linear_sum_assignment`` gives, ties included.

A total summed in the pairs' order (CEAF) depends on which of several optimal
assignments a solver returns, so the plain solver must return the same pairs,
not only an assignment of the same total: these tests compare the pairs on
matrices made to hold ties (a few distinct weights, repeated rows and columns,
CEAF's φ4 values) as well as on arbitrary floats, wide and tall.
"""

import itertools
import math
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nlpbench.metrics import assignment
from nlpbench.metrics.assignment import (
    PLAIN_SOLVES,
    SMALL,
    _plain_maximum,
    best_pairs,
    in_plain,
    maximum_assignment,
    solver,
)

#: Weights that make ties: zeros, equal small integers, a "heavy" weight, CEAF's φ4 = 2n / (|k| + |r|).
TIED = st.sampled_from([0.0, 0.0, 1.0, 1.0, 2.0, 7.0, 2 * 1 / (1 + 2), 2 * 1 / (2 + 4), 2 * 2 / (3 + 3), 0.5])
FLOATS = st.floats(-1e6, 1e6, allow_nan=False, allow_subnormal=True)


@st.composite
def matrices(draw, values=TIED):
    """A matrix of up to :data:`SMALL` cells, sometimes with repeated rows or columns."""
    rows = draw(st.integers(1, 8))
    columns = draw(st.integers(1, SMALL // rows))
    weights = [[draw(values) for _ in range(columns)] for _ in range(rows)]
    if rows > 1 and draw(st.booleans()):
        weights[draw(st.integers(1, rows - 1))] = list(weights[0])
    if columns > 1 and draw(st.booleans()):
        copied = draw(st.integers(1, columns - 1))
        for line in weights:
            line[copied] = line[0]
    return weights


def scipy_pairs(weights):
    rows, columns = solver()(np.array(weights, dtype=float), maximize=True)
    return rows.tolist(), columns.tolist()


@settings(max_examples=1500)
@given(matrices())
def test_the_plain_solver_chooses_scipys_pairs_among_ties(weights):
    assert _plain_maximum(weights) == scipy_pairs(weights)


@settings(max_examples=500)
@given(matrices(FLOATS))
def test_the_plain_solver_chooses_scipys_pairs_on_any_finite_weights(weights):
    assert _plain_maximum(weights) == scipy_pairs(weights)


@pytest.mark.parametrize("shape", [(1, 1), (1, 6), (6, 1), (4, 4), (3, 7), (7, 3)])
def test_a_constant_matrix_pairs_as_scipy_pairs_it(shape):
    """Every assignment ties: scipy's order of search picks one (the identity on a square matrix)."""
    weights = [[1.0] * shape[1] for _ in range(shape[0])]
    assert _plain_maximum(weights) == scipy_pairs(weights)


@pytest.mark.parametrize("bad", [math.nan, math.inf])
def test_a_weight_scipy_refuses_is_refused_with_its_message(bad):
    weights = [[1.0, bad], [0.0, 2.0]]
    with pytest.raises(ValueError) as plain:
        _plain_maximum(weights)
    with pytest.raises(ValueError) as scipy:
        scipy_pairs(weights)
    assert str(plain.value) == str(scipy.value)


def fresh(monkeypatch, solved=0):
    """The process as it starts: numpy not loaded, ``solved`` matrices solved in plain Python so far."""
    monkeypatch.setattr(assignment, "sys", SimpleNamespace(modules={}))
    monkeypatch.setattr(assignment, "_solved_in_plain", itertools.count(solved))


def test_a_small_matrix_is_solved_in_plain_python_until_numpy_is_loaded(monkeypatch):
    weights = [[1.0, 2.0], [2.0, 1.0], [0.5, 0.0]]
    solved = []
    monkeypatch.setattr(assignment, "_plain_maximum", lambda w: solved.append(w) or _plain_maximum(w))
    assert maximum_assignment(weights) == ([0, 1], [1, 0]) and not solved  # numpy is loaded in this process
    fresh(monkeypatch)
    assert maximum_assignment(weights) == ([0, 1], [1, 0]) and solved == [weights]


def test_plain_python_solves_small_matrices_of_a_fresh_process_up_to_a_number(monkeypatch):
    fresh(monkeypatch)
    assert in_plain(SMALL) and not in_plain(SMALL + 1)
    fresh(monkeypatch, solved=PLAIN_SOLVES - 1)
    assert in_plain(1) and not in_plain(1)  # the last one, then scipy's
    monkeypatch.setattr(assignment, "_solved_in_plain", itertools.count())
    monkeypatch.setattr(assignment, "sys", SimpleNamespace(modules={"numpy": None}))
    assert not in_plain(1)


def test_a_matrix_above_the_bound_goes_to_scipy(monkeypatch):
    weights = [[float((i * 7 + j * 3) % 5) for j in range(SMALL + 1)] for i in range(2)]
    monkeypatch.setattr(assignment, "_plain_maximum", None)  # would fail if called
    fresh(monkeypatch)
    assert maximum_assignment(weights) == scipy_pairs(weights)


def test_best_pairs_keeps_the_positive_pairs_with_their_weights():
    left, right = ["a", "b", "c"], ["b", "a"]
    pairs = best_pairs(left, right, lambda x, y: 2.0 if x == y else 0.0)
    assert pairs == [(0, 1, 2.0), (1, 0, 2.0)]
    assert best_pairs([], right, lambda x, y: 1.0) == []
