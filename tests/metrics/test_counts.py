import pytest
from hypothesis import given
from hypothesis import strategies as st

from nlpbench.metrics.counts import PRF, score_multiset, score_set

counts = st.builds(PRF, st.integers(0, 50), st.integers(0, 50), st.integers(0, 50))


def test_formulas():
    prf = PRF(tp=3, fp=1, fn=2)
    assert prf.precision == 0.75
    assert prf.recall == 0.6
    assert prf.f1 == pytest.approx(2 * 0.75 * 0.6 / (0.75 + 0.6))


def test_empty_denominators_give_zero():
    assert (PRF().precision, PRF().recall, PRF().f1) == (0.0, 0.0, 0.0)
    assert PRF(fp=2).precision == 0.0


@given(counts, counts)
def test_counts_add_up_and_f1_is_harmonic_mean(a, b):
    total = a + b
    assert (total.tp, total.fp, total.fn) == (a.tp + b.tp, a.fp + b.fp, a.fn + b.fn)
    if total.precision + total.recall:
        harmonic = 2 * total.precision * total.recall / (total.precision + total.recall)
        assert abs(total.f1 - harmonic) < 1e-12


@given(st.lists(st.integers(0, 5)))
def test_perfect_prediction_scores_one(items):
    prf = score_multiset(items, items)
    assert prf.fp == prf.fn == 0
    assert prf.f1 == (1.0 if items else 0.0)


def test_multiset_counts_repeats_set_does_not():
    assert score_multiset([1, 1, 2], [1, 3]) == PRF(1, 1, 2)
    assert score_set([1, 1, 2], [1, 1, 3]) == PRF(1, 1, 1)


@given(st.lists(st.integers(0, 6)), st.lists(st.integers(0, 6)))
def test_swapping_gold_and_prediction_swaps_fp_and_fn(gold, pred):
    forward, backward = score_multiset(gold, pred), score_multiset(pred, gold)
    assert (forward.tp, forward.fp, forward.fn) == (backward.tp, backward.fn, backward.fp)
    assert forward.f1 == backward.f1
