"""The NER batch engine against the matchings it stands for, document by document (differential, Hypothesis)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nlpbench.metrics.ner import (
    BY_GROUP,
    SCHEMES,
    Entity,
    GroupRule,
    NerCounts,
    columns_of,
    match_greedy,
    match_optimal,
)
from nlpbench.metrics.ner_batch import batch_counts

LABELS = ("A", "B", "C")


@st.composite
def document_side(draw, max_size: int = 8):
    """Entities within a short document, so that they overlap, nest and repeat often; some are the empty
    spans before the document the ner task gives mentions it cannot locate (each its own, counting down)."""
    entities = []
    for placeholder in draw(st.lists(st.booleans(), max_size=max_size)):
        if placeholder:
            position = -1 - sum(e.start < 0 for e in entities)
            entities.append(Entity(position, position, draw(st.sampled_from(LABELS))))
        else:
            start = draw(st.integers(0, 12))
            end = draw(st.integers(start + 1, start + 8))
            entities.append(Entity(start, end, draw(st.sampled_from(LABELS))))
    return entities


def by_document(matcher, docs, **options) -> tuple[list[list], NerCounts]:
    counts = [matcher(gold, pred, **options) for gold, pred in docs]
    return [[c.get(scheme) for scheme in SCHEMES] for c in counts], sum(counts, NerCounts())


def assert_same(docs, rule: GroupRule, matcher, **options) -> None:
    batch = batch_counts([(columns_of(gold), columns_of(pred)) for gold, pred in docs], rule)
    documents, total = by_document(matcher, docs, **options)
    assert [batch.document(i) for i in range(len(docs))] == documents
    assert batch.total() == total


docs = st.lists(st.tuples(document_side(), document_side()), min_size=1, max_size=6)


@pytest.mark.parametrize("matcher", [match_greedy, match_optimal], ids=lambda m: m.__name__)
@given(docs=docs)
def test_the_batch_counts_each_document_and_label_as_its_matching_does(matcher, docs):
    assert_same(docs, BY_GROUP[matcher], matcher)


@given(docs=docs, percent=st.sampled_from([0.5, 20.0, 50.0, 100.0, 150.0]))
def test_the_greedy_overlap_threshold_is_the_matchings(docs, percent):
    rule = GroupRule(
        lambda gold, pred, scheme: match_greedy(gold, pred, min_overlap_percent=percent).get(scheme),
        percent,
        in_order=True,
    )
    assert_same(docs, rule, match_greedy, min_overlap_percent=percent)


@pytest.mark.parametrize("matcher", [match_greedy, match_optimal], ids=lambda m: m.__name__)
def test_groups_of_one_gold_entity_and_larger_ones(matcher):
    gold = [Entity(0, 4, "A"), Entity(10, 12, "A"), Entity(11, 14, "B"), Entity(20, 22, "C")]
    pred = [Entity(1, 4, "B"), Entity(0, 4, "A"), Entity(10, 14, "B"), Entity(20, 21, "C"), Entity(30, 31, "A")]
    assert_same([(gold, pred), ([], pred), (gold, []), ([], [])], BY_GROUP[matcher], matcher)


def test_a_batch_without_entities_counts_zeros():
    batch = batch_counts([(columns_of([]), columns_of([]))], BY_GROUP[match_greedy])
    assert batch.document(0) == [match_greedy([], []).get(scheme) for scheme in SCHEMES]
    assert batch.total() == NerCounts({(scheme, None): match_greedy([], []).get(scheme) for scheme in SCHEMES})
