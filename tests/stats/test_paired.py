"""Paired tests: the randomization test against exact enumeration, the bootstrap's behaviour."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from nlpbench.stats import approximate_randomization, paired_bootstrap, statistic_for
from nlpbench.stats.resample import Draws

F1 = statistic_for("f1")


def _systems(n: int, seed: int, better: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    gold = rng.integers(2, 9, n)
    found_a = np.minimum(gold, rng.integers(0, 9, n) + better)
    found_b = np.minimum(gold, rng.integers(0, 9, n))
    fp_a, fp_b = rng.integers(0, 3, n), rng.integers(0, 3, n)
    a = np.column_stack([found_a, fp_a, gold - found_a])
    b = np.column_stack([found_b, fp_b, gold - found_b])
    return a, b


def _exact_p(a: np.ndarray, b: np.ndarray) -> float:
    observed = abs(F1.compute(a.sum(0)) - F1.compute(b.sum(0)))
    extreme = total = 0
    for swaps in itertools.product([0, 1], repeat=len(a)):
        s = np.array(swaps)[:, None]
        a2, b2 = np.where(s, b, a).sum(0), np.where(s, a, b).sum(0)
        extreme += abs(F1.compute(a2) - F1.compute(b2)) >= observed - 1e-12
        total += 1
    return extreme / total


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_randomization_agrees_with_exact_enumeration(seed):
    a, b = _systems(10, seed)
    exact = _exact_p(a, b)
    approx = approximate_randomization(a, b, F1, trials=40_000, seed=seed).p_value
    assert approx == pytest.approx(exact, abs=4 * np.sqrt(exact * (1 - exact) / 40_000) + 1e-3)


def test_a_system_against_itself_is_never_significant():
    a, _ = _systems(60, 4)
    assert approximate_randomization(a, a, F1, trials=2_000).p_value == 1.0
    result = paired_bootstrap(a, a, F1, resamples=2_000)
    assert result.difference == 0 and result.p_value == 1.0 and result.low == result.high == 0


def test_a_clearly_better_system_is_significant_under_both_tests():
    a, b = _systems(400, 5, better=4)
    randomization = approximate_randomization(a, b, F1, trials=5_000)
    bootstrap = paired_bootstrap(a, b, F1, resamples=5_000)
    assert randomization.difference == bootstrap.difference > 0
    assert randomization.p_value < 0.01 and bootstrap.p_value < 0.01
    assert 0 < bootstrap.low < bootstrap.difference < bootstrap.high


def test_tests_are_deterministic_given_the_seed():
    a, b = _systems(40, 6)
    assert approximate_randomization(a, b, F1, seed=9) == approximate_randomization(a, b, F1, seed=9)
    assert paired_bootstrap(a, b, F1, seed=9) == paired_bootstrap(a, b, F1, seed=9)


def test_systems_on_different_documents_are_refused():
    a, _ = _systems(10, 7)
    with pytest.raises(ValueError, match="different documents"):
        approximate_randomization(a, a[:9], F1)


def test_tests_sharing_one_draw_give_the_numbers_of_each_drawing_its_own():
    """One :class:`Draws` for several pairs over the same documents: the weights are drawn once (kept, or drawn
    again past its limit), and every test's numbers are those it gives alone."""
    a, b = _systems(300, seed=1, better=1)
    c, _ = _systems(300, seed=2)
    for draws in (Draws(), Draws(limit=0)):
        for x, y in ((a, b), (a, c), (c, b)):
            alone = paired_bootstrap(x, y, F1, resamples=500, seed=3)
            assert paired_bootstrap(x, y, F1, resamples=500, seed=3, draws=draws) == alone
    draws = Draws()
    assert draws.weights(300, 500, 3) is draws.weights(300, 500, 3)
    assert Draws(limit=0).weights(300, 500, 3) is not Draws(limit=0).weights(300, 500, 3)


def test_a_paired_bootstrap_within_strata_resamples_each_block_on_its_own():
    """A finds every mention of site a's documents and none of site b's, B the reverse: both recall ½. Resampled
    within each site (50 documents each), every resample keeps 50 of each and the difference is always 0; resampled
    as one sample, how many of each site a resample draws varies, and so does the difference. Shared draws are the
    same numbers, and draws of other strata are not shared."""
    a = np.array([[1, 0, 0]] * 50 + [[0, 0, 1]] * 50, dtype=float)
    b = a[::-1].copy()
    recall = statistic_for("recall")
    stratified = paired_bootstrap(a, b, recall, resamples=500, strata=(50, 50))
    assert (stratified.difference, stratified.low, stratified.high, stratified.p_value) == (0.0, 0.0, 0.0, 1.0)
    plain = paired_bootstrap(a, b, recall, resamples=500)
    assert plain.low is not None and plain.high is not None and plain.low < 0 < plain.high
    draws = Draws()
    assert paired_bootstrap(a, b, recall, resamples=500, strata=(50, 50), draws=draws) == stratified
    assert paired_bootstrap(a, b, recall, resamples=500, draws=draws) == plain
    assert draws.weights(100, 500, 0, (50, 50)) is not draws.weights(100, 500, 0)
