import itertools
from types import SimpleNamespace
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nlpbench.metrics import assignment
from nlpbench.metrics import coref as reference
from nlpbench.metrics import coref_e2e as e2e
from nlpbench.metrics.coref import BlancCounts, CorefCounts, blanc_scores, conll_f1

KEY = [("a", "b", "c"), ("d", "e")]
RESPONSE = [("a", "b"), ("c", "d"), ("f",)]
COUNTED = {
    "mentions": reference.mention_identification,
    "muc": reference.muc,
    "bcub": reference.b_cubed,
    "ceafm": reference.ceaf_m,
    "ceafe": reference.ceaf_e,
    "lea": reference.lea,
}


def counts(c: CorefCounts) -> tuple:
    return c.recall_num, c.recall_den, c.precision_num, c.precision_den


def test_hand_computed_example():
    """K = {abc}{de}, R = {ab}{cd}{f}, worked out by hand from the definitions in the module docstring."""
    assert counts(reference.mention_identification(KEY, RESPONSE)) == (4, 5, 4, 5)
    assert counts(reference.muc(KEY, RESPONSE)) == (1, 3, 1, 2)
    assert counts(reference.b_cubed(KEY, RESPONSE)) == pytest.approx((13 / 6, 5, 3, 5))
    assert counts(reference.ceaf_m(KEY, RESPONSE)) == (3, 5, 3, 5)
    assert counts(reference.ceaf_e(KEY, RESPONSE)) == pytest.approx((1.3, 2, 1.3, 3))
    assert reference.blanc(KEY, RESPONSE) == BlancCounts(1, 4, 2, 2, 6, 8)
    assert counts(reference.lea(KEY, RESPONSE)) == (1, 5, 2, 5)


def test_counts_add_and_give_zero_on_empty_denominators():
    total = CorefCounts(1, 2, 3, 4) + CorefCounts(1, 2, 0, 0)
    assert counts(total) == (2, 4, 3, 4)
    assert (total.recall, total.precision, total.f1) == pytest.approx((0.5, 0.75, 0.6))
    assert (CorefCounts().recall, CorefCounts().precision, CorefCounts().f1) == (0, 0, 0)
    assert BlancCounts(1, 2, 3, 4, 5, 6) + BlancCounts(1, 1, 1, 1, 1, 1) == BlancCounts(2, 3, 4, 5, 6, 7)


def test_blanc_cases():
    both = BlancCounts(1, 4, 2, 2, 6, 8)
    coref_f, noncoref_f = 2 * 0.25 * 0.5 / 0.75, 2 * (1 / 3) * 0.25 / (1 / 3 + 0.25)
    for parts in ("key", "both"):
        assert blanc_scores(both, parts) == pytest.approx(
            ((0.25 + 1 / 3) / 2, (0.5 + 0.25) / 2, (coref_f + noncoref_f) / 2)
        )
    all_singletons_key = BlancCounts(0, 0, 4, 11, 15, 11)
    assert blanc_scores(all_singletons_key, "key") == pytest.approx((11 / 15, 1, 2 * (11 / 15) / (1 + 11 / 15)))
    assert blanc_scores(all_singletons_key, "both") == pytest.approx((11 / 30, 0.5, (11 / 13) / 2))
    assert blanc_scores(BlancCounts(3, 3, 3, 0, 0, 0), "key") == (1, 1, 1)
    assert blanc_scores(BlancCounts(), "both") == (0, 0, 0)
    with pytest.raises(ValueError, match="parts_from"):
        blanc_scores(both, "response")


def test_conll_is_the_mean_of_three_f1():
    assert conll_f1(0.5, 0.6, 0.7) == pytest.approx(0.6)


def test_repeats_count_where_v801_counts_them():
    """TC-A-9's shape: a twinless mention repeated in one response cluster counts twice."""
    key, response = [("k1", "k2")], [("k1", "k2"), ("x", "x")]
    assert counts(reference.muc(key, response)) == (1, 1, 1, 2)
    assert counts(reference.b_cubed(key, response)) == (2, 2, 2, 4)
    assert counts(reference.lea(key, response)) == (2, 2, 2, 4)
    assert reference.blanc(key, response) == BlancCounts(1, 1, 2, 0, 0, 2)


def test_preparing_repeats():
    key, response = [("a", "b", "a")], [("a", "x"), ("a", "x", "b"), ("x",)]
    assert reference.without_repeats(key, response) == ([("a", "b")], [("a", "x"), ("b",)], 4, 0)
    assert reference.without_response_repeats_of_key_mentions(key, response) == (
        [("a", "b", "a")], [("a", "x"), ("x", "b"), ("x",)], 1, 3,
    )  # fmt: skip
    assert reference.with_repeats(key, response) == ([("a", "b", "a")], [("a", "x"), ("a", "x", "b"), ("x",)], 0, 4)


def test_removing_nested_mentions_and_singletons():
    clusters = [((0, 4), (1, 2), (1, 2), (6, 6)), ((1, 1), (8, 9))]
    assert reference.without_nested(clusters, lambda m: m) == ([((0, 4), (6, 6)), ((1, 1), (8, 9))], 2)
    assert reference.without_singletons([("a",), ("b", "c"), ("d",)]) == ([("b", "c")], 2)


# ---------------------------------------------------------------- properties

mentions = st.integers(0, 14)


@st.composite
def clusterings(draw, min_size=1, max_mentions=15):
    """A partition of a random set of mentions into clusters (no mention repeated)."""
    chosen = draw(st.lists(mentions, unique=True, min_size=min_size, max_size=max_mentions))
    labels = draw(st.lists(st.integers(0, 5), min_size=len(chosen), max_size=len(chosen)))
    groups: dict[int, list[int]] = {}
    for mention, label in zip(chosen, labels, strict=True):
        groups.setdefault(label, []).append(mention)
    return [tuple(group) for group in groups.values()]


def without_singletons(clusters):
    return [c for c in clusters if len(c) > 1]


@settings(max_examples=150, deadline=None)
@given(clusterings())
def test_a_perfect_response_scores_one(key):
    has_links = any(len(c) > 1 for c in key)
    for name, metric in COUNTED.items():
        result = metric(key, key)
        expected = 1.0 if name != "muc" or has_links else 0.0
        assert (result.recall, result.precision, result.f1) == pytest.approx((expected,) * 3), name
    if sum(map(len, key)) > 1:
        for parts in ("key", "both"):
            assert blanc_scores(reference.blanc(key, key), parts) == pytest.approx((1, 1, 1))


@settings(max_examples=200, deadline=None)
@given(clusterings(min_size=0), clusterings(min_size=0))
def test_swapping_key_and_response_swaps_recall_and_precision(key, response):
    for name, metric in COUNTED.items():
        forward, backward = counts(metric(key, response)), counts(metric(response, key))
        assert forward == pytest.approx(backward[2:] + backward[:2]), name
    forward, backward = reference.blanc(key, response), reference.blanc(response, key)
    assert (forward.coref_key, forward.noncoref_key) == (backward.coref_response, backward.noncoref_response)
    assert (forward.coref_common, forward.noncoref_common) == (backward.coref_common, backward.noncoref_common)


@settings(max_examples=200, deadline=None)
@given(clusterings(min_size=0), clusterings(min_size=0))
def test_values_lie_between_0_and_1_and_numerators_within_denominators(key, response):
    for name, metric in COUNTED.items():
        result = metric(key, response)
        assert 0 <= result.recall_num <= result.recall_den + 1e-9, name
        assert 0 <= result.precision_num <= result.precision_den + 1e-9, name
        assert 0 <= result.f1 <= 1, name
    for parts in ("key", "both"):
        assert all(0 <= v <= 1 for v in blanc_scores(reference.blanc(key, response), parts))


def pair_sets(clusters):
    coref = {frozenset(p) for c in clusters for p in itertools.combinations(c, 2)}
    mentions = [m for c in clusters for m in c]
    every = {frozenset(p) for p in itertools.combinations(mentions, 2)}
    return coref, every - coref


@settings(max_examples=200, deadline=None)
@given(clusterings(min_size=0), clusterings(min_size=0))
def test_blanc_counts_equal_the_enumerated_link_sets(key, response):
    key_coref, key_noncoref = pair_sets(key)
    response_coref, response_noncoref = pair_sets(response)
    assert reference.blanc(key, response) == BlancCounts(
        len(key_coref & response_coref), len(key_coref), len(response_coref),
        len(key_noncoref & response_noncoref), len(key_noncoref), len(response_noncoref),
    )  # fmt: skip


@settings(max_examples=100, deadline=None)
@given(clusterings(min_size=0, max_mentions=9), clusterings(min_size=0, max_mentions=9))
def test_ceaf_finds_the_best_alignment(key, response):
    def best(phi):
        small, large = (key, response) if len(key) <= len(response) else (response, key)
        return max(
            (
                sum(phi(set(a), set(b)) for a, b in zip(small, chosen, strict=False))
                for chosen in itertools.permutations(large, len(small))
            ),
            default=0,
        )

    assert reference.ceaf_m(key, response).recall_num == best(lambda a, b: len(a & b))
    assert reference.ceaf_e(key, response).recall_num == pytest.approx(
        best(lambda a, b: 2 * len(a & b) / (len(a) + len(b)))
    )


@settings(max_examples=150, deadline=None)
@given(clusterings(min_size=0), clusterings(min_size=0))
def test_e2e_agrees_with_the_reference_without_singletons(key, response):
    key, response = without_singletons(key), without_singletons(response)
    for metric in ("muc", "b_cubed", "ceaf_e", "lea"):
        assert counts(getattr(e2e, metric)(key, response)) == pytest.approx(
            counts(getattr(reference, metric)(key, response))
        ), metric


def test_e2e_skips_singletons():
    key, response = [("a", "b"), ("c",)], [("a", "b"), ("c",), ("x",)]
    assert counts(e2e.b_cubed(key, response)) == (2, 2, 2, 2)
    assert counts(e2e.lea(key, response)) == (2, 2, 2, 2)
    assert counts(e2e.ceaf_e(key, response)) == (1, 2, 1, 1)
    assert counts(reference.b_cubed(key, response)) == (3, 3, 3, 4)
    assert counts(reference.ceaf_e(key, response)) == (2, 2, 2, 3)


# ---------------------------------------------------------------- shared tables, against what they replaced


@st.composite
def repeating_clusterings(draw):
    """Clusters whose mentions may repeat, within a cluster or across clusters (v8.01 counts such repeats)."""
    return [tuple(c) for c in draw(st.lists(st.lists(st.integers(0, 9), min_size=1, max_size=5), max_size=6))]


def _alignment_pair_by_pair(key, response, phi):
    """CEAF's alignment as it was computed before its matrix was filled with arrays: a Python φ per pair."""
    import numpy as np

    in_response = {}
    for j, cluster in enumerate(response):
        for mention in dict.fromkeys(cluster):
            in_response.setdefault(mention, []).append(j)
    common = {}
    for i, cluster in enumerate(key):
        for mention in cluster:
            for j in in_response.get(mention, ()):
                common[i, j] = common.get((i, j), 0) + 1
    if not common:
        return 0.0
    rows, columns = sorted({i for i, _ in common}), sorted({j for _, j in common})
    scores = np.zeros((len(rows), len(columns)))
    for (i, j), shared in common.items():
        scores[rows.index(i), columns.index(j)] = phi(shared, len(key[i]), len(response[j]))
    assigned = assignment.solver()(scores, maximize=True)
    total = 0.0
    for row, column in zip(*(a.tolist() for a in assigned), strict=True):
        total += 1 - (1 - float(scores[row, column]))
    return total


#: How CEAF's matrix is solved: built as lists and solved in plain Python (as a process that has not loaded numpy
#: solves it), built as lists and solved by scipy, or built as arrays and solved by scipy (a large matrix).
ROUTES = {
    "plain": {"in_plain": lambda cells: cells <= assignment.SMALL},
    "lists": {"in_plain": lambda cells: False},
    "arrays": {"SMALL": 0},
}


@settings(max_examples=300, deadline=None)
@given(repeating_clusterings(), repeating_clusterings(), st.sampled_from(sorted(ROUTES)))
def test_ceaf_is_what_the_pair_by_pair_alignment_gave(key, response, route):
    """By each of the :data:`ROUTES`: the same totals, bit for bit."""
    by_pairs = _alignment_pair_by_pair(key, response, lambda c, k, r: c)
    by_e = _alignment_pair_by_pair(key, response, lambda c, k, r: 2 * c / (k + r))
    with mock.patch.multiple(assignment, **ROUTES[route]):
        assert reference.ceaf_m(key, response).recall_num == round(by_pairs)
        assert reference.ceaf_e(key, response).recall_num == by_e


@pytest.mark.parametrize(("clusters", "unused"), [(2, "solver"), (10, "_plain_maximum")])
def test_a_small_alignment_is_solved_in_plain_python_and_a_large_one_with_scipy(clusters, unused):
    """As a fresh process solves them: 2 key clusters sharing mentions with 4 response clusters (8 cells) in
    plain Python, 10 with 20 (200 cells) by scipy; the total of the arrays' path either way."""
    key = [(n, n + 1, n + 2) for n in range(0, 3 * clusters, 3)]
    response = [(n, n + 1) for n in range(0, 3 * clusters, 3)] + [(n + 2,) for n in range(0, 3 * clusters, 3)]
    expected = _alignment_pair_by_pair(key, response, lambda c, k, r: 2 * c / (k + r))
    fresh = {"sys": SimpleNamespace(modules={}), "_solved_in_plain": itertools.count()}
    with mock.patch.multiple(assignment, **fresh), mock.patch.object(assignment, unused, side_effect=AssertionError):
        assert reference.ceaf_e(key, response).recall_num == expected


@settings(max_examples=300, deadline=None)
@given(repeating_clusterings(), repeating_clusterings())
def test_metrics_sharing_one_overlap_count_what_each_alone_counts(key, response):
    from nlpbench import profiles

    for name in ("conll2012", "standard"):
        profile = profiles.get("coref", name)
        prepared_key, prepared_response, _, _ = profile.prepare(key, response)
        alone = {metric: f(prepared_key, prepared_response) for metric, f in profile.measures().items()}
        assert profile.count(prepared_key, prepared_response) == alone


@settings(max_examples=300, deadline=None)
@given(repeating_clusterings(), st.one_of(repeating_clusterings(), clusterings(min_size=0)))
def test_the_response_repeats_rule_is_the_walk_mention_by_mention(key, response):
    expected = reference._response_repeats_walked(key, response)
    assert reference.without_response_repeats_of_key_mentions(key, response) == expected


@settings(max_examples=300, deadline=None)
@given(clusterings(min_size=0), clusterings(min_size=0))
def test_b_cubed_s_shortcut_without_repeats_is_its_walk_over_members(key, response):
    walked = reference.Overlap(key, response)
    walked.repeats = True  # the case the walk over each key cluster's members is kept for
    assert reference.b_cubed(key, response) == reference.b_cubed(key, response, overlap=walked)
