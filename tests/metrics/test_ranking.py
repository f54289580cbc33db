import pytest
from hypothesis import given
from hypothesis import strategies as st

from nlpbench.metrics.ranking import Mean, average_precision, hit_ranks, precision_at_k, recall_at_k

items = st.lists(st.integers(0, 30), unique=True, max_size=25)
cutoffs = st.integers(1, 30)


def test_average_precision_formula():
    # relevant at ranks 1 and 3 of 3 relevant: (1/1 + 2/3) / 3
    assert average_precision(["q64.4", "n48.30", "n39.0", "a53.9"], {"q64.4", "n39.0", "z87.440"}) == pytest.approx(
        (1 + 2 / 3) / 3
    )
    assert average_precision(["x", "a"], {"a"}) == 0.5
    assert average_precision([], {"a"}) == 0.0
    assert average_precision(["a"], set()) == 0.0


def test_cutoff_divides_by_all_relevant_items():
    # trec_eval map_cut: a relevant item below k adds 0; the divisor stays |R|
    assert average_precision(["a", "x", "b"], {"a", "b"}, k=2) == 0.5
    assert average_precision(["a", "x", "b"], {"a", "b"}, k=3) == pytest.approx((1 + 2 / 3) / 2)
    assert hit_ranks(["a", "x", "b"], {"a", "b"}) == [1, 3]


def test_precision_and_recall_at_k():
    ranking = ["a", "x", "b"]
    assert precision_at_k(ranking, {"a", "b", "c"}, 2) == 0.5
    assert precision_at_k(ranking, {"a", "b", "c"}, 10) == 0.2  # divides by k even past the end of the ranking
    assert recall_at_k(ranking, {"a", "b", "c"}, 2) == pytest.approx(1 / 3)
    assert recall_at_k(ranking, {"a", "b", "c"}, None) == pytest.approx(2 / 3)
    assert recall_at_k(ranking, set(), 2) == 0.0


def test_inputs_are_checked():
    with pytest.raises(ValueError, match="each item once"):
        average_precision(["a", "a"], {"a"})
    for bad in (0, -1, True, 2.5):
        with pytest.raises(ValueError, match="positive integer"):
            average_precision(["a"], {"a"}, k=bad)
    with pytest.raises(ValueError, match="cutoff"):
        precision_at_k(["a"], {"a"}, None)


def test_mean_adds_sums_and_counts():
    total = Mean.of(0.5) + Mean.of(1.0) + Mean()
    assert (total.total, total.count, total.value) == (1.5, 2, 0.75)
    assert Mean().value == 0.0


@given(items, st.sets(st.integers(0, 30), max_size=15), cutoffs)
def test_values_are_fractions_and_grow_with_k(ranking, relevant, k):
    ap, ap_k = average_precision(ranking, relevant), average_precision(ranking, relevant, k)
    assert 0.0 <= ap_k <= ap <= 1.0
    assert 0.0 <= precision_at_k(ranking, relevant, k) <= 1.0
    assert 0.0 <= recall_at_k(ranking, relevant, k) <= recall_at_k(ranking, relevant, k + 1) <= 1.0
    # P@k · k and R@k · |R| both count the hits in the top k
    assert round(precision_at_k(ranking, relevant, k) * k) == round(recall_at_k(ranking, relevant, k) * len(relevant))


@given(st.sets(st.integers(0, 30), min_size=1, max_size=15), items)
def test_relevant_items_first_score_one(relevant, others):
    ranking = sorted(relevant) + [item for item in others if item not in relevant]
    assert average_precision(ranking, relevant) == pytest.approx(1.0)
    assert recall_at_k(ranking, relevant, len(relevant)) == 1.0
    assert precision_at_k(ranking, relevant, len(relevant)) == 1.0


@given(items, st.sets(st.integers(0, 30), max_size=15), st.data())
def test_moving_a_relevant_item_up_never_lowers_ap(ranking, relevant, data):
    hits = [i for i, item in enumerate(ranking) if item in relevant and i > 0]
    if not hits:
        return
    i = data.draw(st.sampled_from(hits))
    better = [*ranking[: i - 1], ranking[i], ranking[i - 1], *ranking[i + 1 :]]
    assert average_precision(better, relevant) >= average_precision(ranking, relevant) - 1e-12


@given(st.lists(st.floats(0, 1), max_size=10), st.lists(st.floats(0, 1), max_size=10))
def test_means_of_parts_add_up(left, right):
    a = sum((Mean.of(v) for v in left), Mean())
    b = sum((Mean.of(v) for v in right), Mean())
    both = sum((Mean.of(v) for v in left + right), Mean())
    assert (a + b).count == both.count and (a + b).total == pytest.approx(both.total)
