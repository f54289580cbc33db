"""Bootstrap intervals: against scipy.stats.bootstrap, and their invariants."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as scipy_stats

from nlpbench.stats import STATISTICS, bootstrap_interval, statistic_for
from nlpbench.stats.bootstrap import bootstrap_intervals
from nlpbench.stats.statistics import macro


def _prf_counts(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    tp = rng.poisson(6, n)
    return np.column_stack([tp, rng.poisson(2, n), rng.poisson(3, n)])


@pytest.mark.parametrize("method", ["percentile", "bca"])
@pytest.mark.parametrize("name", ["f1", "precision", "recall"])
def test_intervals_agree_with_scipy_within_monte_carlo_error(method, name):
    counts = _prf_counts(300, seed=1)
    statistic = statistic_for(name)

    def on_columns(tp, fp, fn, axis=-1):
        return statistic.compute(np.stack([tp.sum(axis), fp.sum(axis), fn.sum(axis)], axis=-1))

    theirs = scipy_stats.bootstrap(
        tuple(counts.T), on_columns, paired=True, vectorized=True, n_resamples=20_000, method=method, random_state=7
    ).confidence_interval
    ours = bootstrap_interval(counts, statistic, resamples=20_000, method=method, seed=3)
    width = theirs.high - theirs.low
    assert ours.low == pytest.approx(theirs.low, abs=0.03 * width)
    assert ours.high == pytest.approx(theirs.high, abs=0.03 * width)
    assert ours.low <= ours.estimate <= ours.high


def test_same_seed_same_interval_other_seed_other_interval():
    counts = _prf_counts(50, seed=2)
    first = bootstrap_interval(counts, statistic_for("f1"), resamples=2_000, seed=11)
    assert first == bootstrap_interval(counts, statistic_for("f1"), resamples=2_000, seed=11)
    assert first != bootstrap_interval(counts, statistic_for("f1"), resamples=2_000, seed=12)


def test_estimate_is_the_micro_score_of_the_summed_counts():
    counts = np.array([[3, 1, 0], [0, 2, 4], [5, 0, 1]])
    interval = bootstrap_interval(counts, statistic_for("f1"), resamples=500)
    assert interval.estimate == pytest.approx(2 * 8 / (2 * 8 + 3 + 5))


def test_identical_documents_give_a_point_interval():
    counts = np.tile([[2, 1, 1]], (20, 1))
    for method in ("percentile", "bca"):
        interval = bootstrap_interval(counts, statistic_for("f1"), resamples=500, method=method)
        assert interval.low == interval.high == pytest.approx(interval.estimate)


def test_a_higher_confidence_gives_a_wider_interval():
    counts = _prf_counts(80, seed=4)
    narrow = bootstrap_interval(counts, statistic_for("f1"), confidence=0.8, resamples=4_000)
    wide = bootstrap_interval(counts, statistic_for("f1"), confidence=0.99, resamples=4_000)
    assert wide.low < narrow.low and narrow.high < wide.high


def test_coref_f1_and_conll_from_numerators_and_denominators():
    rng = np.random.default_rng(5)
    den = rng.integers(5, 20, size=(40, 1))
    blocks = [
        np.column_stack([rng.integers(0, 5, 40), den[:, 0], rng.integers(0, 5, 40), den[:, 0] + 1]) for _ in "mbc"
    ]
    counts = np.hstack(blocks)
    conll = bootstrap_interval(counts, statistic_for("conll"), resamples=1_000)
    sums = counts.sum(axis=0)
    expected = []
    for i in range(3):
        r, p = sums[4 * i] / sums[4 * i + 1], sums[4 * i + 2] / sums[4 * i + 3]
        expected.append(2 * r * p / (r + p))
    assert conll.estimate == pytest.approx(sum(expected) / 3)
    assert conll.low < conll.estimate < conll.high


def test_macro_is_the_mean_of_each_label_statistic():
    a, b = _prf_counts(30, 6), _prf_counts(30, 7)
    statistic = macro(statistic_for("f1"), 2)
    f1 = statistic_for("f1").compute
    expected = (f1(a.sum(axis=0)) + f1(b.sum(axis=0))) / 2
    assert bootstrap_interval(np.hstack([a, b]), statistic, resamples=200).estimate == pytest.approx(expected)


def test_bad_arguments_are_clear():
    with pytest.raises(ValueError, match="shape"):
        bootstrap_interval(np.zeros((3, 2)), statistic_for("f1"))
    with pytest.raises(ValueError, match="no documents"):
        bootstrap_interval(np.zeros((0, 3)), statistic_for("f1"))
    with pytest.raises(ValueError, match="confidence"):
        bootstrap_interval(np.ones((3, 3)), statistic_for("f1"), confidence=1.5)


def test_values_resampled_separately_from_one_draw_get_their_lone_intervals_bit_for_bit(monkeypatch):
    from nlpbench.stats import resample

    monkeypatch.setattr(resample, "CHUNK_CELLS", 700)  # several chunks of resamples, as on large corpora
    rng = np.random.default_rng(5)
    prf = rng.integers(0, 9, size=(120, 3)).astype(float)
    pairs = [
        (prf, STATISTICS.get("f1")),
        (prf.copy(), STATISTICS.get("precision")),  # an equal table, multiplied once
        (rng.integers(0, 9, size=(120, 3)), STATISTICS.get("recall")),
        (rng.integers(0, 9, size=(45, 3)), STATISTICS.get("f1")),  # another number of documents
        (np.asfortranarray(rng.integers(0, 9, size=(120, 3)).astype(float)), STATISTICS.get("f1")),
    ]
    together = bootstrap_intervals(pairs, resamples=500, separately=True)
    alone = [bootstrap_interval(counts, statistic, resamples=500) for counts, statistic in pairs]
    assert together == alone
