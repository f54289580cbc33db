"""SemEval-2013 NER counts under the three matchings."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nlpbench.metrics.ner import (
    SCHEMES,
    Entity,
    SemEval,
    match_first_overlap,
    match_greedy,
    match_optimal,
    nested_first,
    score_entities,
)

MATCHERS = [match_optimal, match_greedy, match_first_overlap]
ONE_TO_ONE = [match_optimal, match_greedy]


def outcome(counts, scheme):
    c = counts.get(scheme)
    return "+".join(kind for kind in ("cor", "inc", "par", "mis", "spu") if getattr(c, kind))


@pytest.mark.parametrize("matcher", MATCHERS, ids=lambda m: m.__name__)
@pytest.mark.parametrize(
    ("gold", "pred", "expected"),
    [
        ([Entity(0, 2, "PER")], [Entity(0, 2, "PER")], ("cor", "cor", "cor", "cor")),
        ([Entity(0, 2, "PER")], [], ("mis", "mis", "mis", "mis")),
        ([], [Entity(0, 2, "PER")], ("spu", "spu", "spu", "spu")),
        ([Entity(0, 2, "PER")], [Entity(0, 2, "ORG")], ("inc", "cor", "cor", "inc")),
        ([Entity(0, 3, "PER")], [Entity(1, 3, "PER")], ("inc", "inc", "par", "cor")),
        ([Entity(0, 3, "PER")], [Entity(1, 3, "ORG")], ("inc", "inc", "par", "inc")),
        ([Entity(0, 3, "PER")], [Entity(3, 5, "PER")], ("mis+spu",) * 4),
    ],
    ids=["correct", "missed", "spurious", "wrong type", "overlap same type", "overlap other type", "adjacent"],
)
def test_semeval_scenarios(matcher, gold, pred, expected):
    counts = matcher(gold, pred)
    assert tuple(outcome(counts, scheme) for scheme in SCHEMES) == expected


def test_formulas_give_half_credit_to_partial():
    counts = SemEval(cor=3, inc=1, par=2, mis=4, spu=2)
    assert (counts.possible, counts.actual) == (10, 8)
    assert counts.precision == 4 / 8
    assert counts.recall == 4 / 10
    assert counts.f1 == pytest.approx(2 * 0.5 * 0.4 / 0.9)
    assert SemEval().f1 == 0.0


def test_first_overlap_is_many_to_one():
    gold = [Entity(0, 4, "A")]
    pred = [Entity(0, 2, "A"), Entity(2, 4, "A")]
    partial = match_first_overlap(gold, pred).get("partial")
    assert (partial.par, partial.mis, partial.possible) == (2, 0, 2)  # one gold entity, POSSIBLE 2
    for matcher in ONE_TO_ONE:
        partial = matcher(gold, pred).get("partial")
        assert (partial.par, partial.spu, partial.possible) == (1, 1, 1)


def test_nested_gold_first_lets_a_shorter_entity_catch_an_exact_prediction():
    gold = [Entity(0, 3, "ORG"), Entity(0, 2, "ORG")]
    pred = [Entity(0, 3, "PER")]  # exact boundaries of the first gold entity, another type
    assert nested_first(gold) == [Entity(0, 2, "ORG"), Entity(0, 3, "ORG")]
    trusted_ke = match_first_overlap(nested_first(gold), pred)
    assert (trusted_ke.get("exact").inc, trusted_ke.get("exact").cor) == (1, 0)
    assert match_first_overlap(gold, pred).get("exact").cor == 1
    assert match_greedy(gold, pred).get("exact").cor == 1


def test_nested_first_collapses_repeats_and_counts_them():
    big, small, other = Entity(0, 4, "A"), Entity(1, 2, "A"), Entity(2, 3, "A")
    # big overlaps two shorter entities, one listed twice: score 3; the repeat of small collapses
    assert nested_first([big, small, small, other]) == [small, other, big]


def test_optimal_finds_the_assignment_greedy_misses():
    gold = [Entity(0, 2, "A"), Entity(2, 4, "A")]
    pred = [Entity(1, 3, "A"), Entity(0, 2, "A")]
    greedy, optimal = match_greedy(gold, pred).get("strict"), match_optimal(gold, pred).get("strict")
    assert (greedy.cor, greedy.inc, greedy.mis, greedy.spu) == (0, 1, 1, 1)
    assert (optimal.cor, optimal.inc, optimal.mis, optimal.spu) == (1, 1, 0, 0)


def test_greedy_type_prefers_closest_boundaries():
    gold = [Entity(0, 5, "A"), Entity(2, 4, "A")]
    counts = match_greedy(gold, [Entity(2, 4, "A"), Entity(0, 5, "A")])
    assert counts.get("type").cor == 2


def test_greedy_minimum_overlap_is_a_share_of_the_gold_entity():
    gold = [Entity(0, 10, "A")]
    assert match_greedy(gold, [Entity(9, 12, "A")], min_overlap_percent=20).get("partial").spu == 1
    assert match_greedy(gold, [Entity(8, 12, "A")], min_overlap_percent=20).get("partial").par == 1


def test_label_filter_and_first_overlap_spurious_go_to_every_label():
    gold = [Entity(0, 2, "PER"), Entity(5, 6, "MISC")]
    pred = [Entity(8, 9, "LOC"), Entity(0, 2, "PER")]
    counts = score_entities(gold, pred, match_first_overlap, labels=("PER", "LOC"))
    assert counts.get("strict") == SemEval(cor=1, spu=1)
    assert counts.get("strict", "PER") == SemEval(cor=1, spu=1)
    assert counts.get("strict", "LOC") == SemEval(spu=1)
    sliced = score_entities(gold, pred, match_greedy, labels=("PER", "LOC"))
    assert sliced.get("strict", "PER") == SemEval(cor=1)
    assert sliced.get("strict", "LOC") == SemEval(spu=1)


# --- properties ---------------------------------------------------------------------------------------------------


@st.composite
def entities(draw, max_size=8):
    items = []
    for _ in range(draw(st.integers(0, max_size))):
        start = draw(st.integers(0, 30))
        items.append(Entity(start, start + draw(st.integers(1, 5)), draw(st.sampled_from("ABC"))))
    return items


@pytest.mark.parametrize("matcher", MATCHERS, ids=lambda m: m.__name__)
@given(gold=entities())
def test_perfect_prediction_scores_one(matcher, gold):
    gold = list(dict.fromkeys(gold))
    counts = matcher(gold, gold)
    for scheme in SCHEMES:
        c = counts.get(scheme)
        assert (c.inc, c.par, c.mis, c.spu) == (0, 0, 0, 0)
        assert c.f1 == (1.0 if gold else 0.0)


@pytest.mark.parametrize("matcher", MATCHERS, ids=lambda m: m.__name__)
@given(gold=entities(), pred=entities())
def test_actual_is_the_number_of_predictions_and_exact_mirrors_partial(matcher, gold, pred):
    counts = matcher(gold, pred)
    for scheme in SCHEMES:
        assert counts.get(scheme).actual == len(pred)
        assert counts.get(scheme).par == 0 or scheme == "partial"
    exact, partial = counts.get("exact"), counts.get("partial")
    assert (exact.cor, exact.inc, exact.mis, exact.spu) == (partial.cor, partial.par, partial.mis, partial.spu)
    assert counts.get("strict").cor <= exact.cor


@pytest.mark.parametrize("matcher", ONE_TO_ONE, ids=lambda m: m.__name__)
@given(gold=entities(), pred=entities())
def test_one_to_one_possible_is_the_number_of_gold_entities(matcher, gold, pred):
    counts = matcher(gold, pred)
    for scheme in SCHEMES:
        assert counts.get(scheme).possible == len(gold)
    for label in counts.labels():
        assert counts.get("strict", label).possible == sum(e.label == label for e in gold)


@given(gold=entities(), pred=entities(), data=st.data())
def test_optimal_is_symmetric_order_free_and_never_below_greedy(gold, pred, data):
    counts = match_optimal(gold, pred)
    swapped = match_optimal(pred, gold)
    shuffled = match_optimal(data.draw(st.permutations(gold)), data.draw(st.permutations(pred)))
    greedy = match_greedy(gold, pred)
    for scheme in SCHEMES:
        c, s = counts.get(scheme), swapped.get(scheme)
        assert (c.mis, c.spu) == (s.spu, s.mis)
        assert (c.precision, c.recall) == pytest.approx((s.recall, s.precision))
        assert shuffled.get(scheme) == c
        assert c.cor >= greedy.get(scheme).cor


@given(docs=st.lists(st.tuples(entities(4), entities(4)), max_size=5))
def test_counts_add_over_documents(docs):
    total = match_optimal([], [])
    for gold, pred in docs:
        total += match_optimal(gold, pred)
    for scheme in SCHEMES:
        assert total.get(scheme).possible == sum(len(g) for g, _ in docs)
        assert total.get(scheme).actual == sum(len(p) for _, p in docs)
