"""Relation triples: strict and boundaries, multisets or sets, per type, micro and macro."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nlpbench.metrics.counts import PRF
from nlpbench.metrics.relations import macro, normalise, relation_counts
from nlpbench.model import Argument, Span, Triple
from nlpbench.profiles.relations import rebel_values


def triple(label, head, tail, head_type="PER", tail_type="LOC", doc="d"):
    return Triple(doc, label, Argument(Span(*head), None, head_type), Argument(Span(*tail), None, tail_type))


def text_triple(label, head, tail, head_type=None, tail_type=None):
    return Triple("d", label, Argument(None, head, head_type), Argument(None, tail, tail_type))


def test_strict_needs_types_boundaries_does_not():
    gold = [triple("lives_in", (0, 4), (10, 15))]
    pred = [triple("lives_in", (0, 4), (10, 15), tail_type="ORG")]
    assert relation_counts(gold, pred, "strict") == {"lives_in": PRF(0, 1, 1)}
    assert relation_counts(gold, pred, "boundaries") == {"lives_in": PRF(1, 0, 0)}


def test_relation_type_and_direction_matter():
    gold = [triple("lives_in", (0, 4), (10, 15))]
    assert relation_counts(gold, [triple("works_in", (0, 4), (10, 15))], "boundaries") == {
        "lives_in": PRF(0, 0, 1),
        "works_in": PRF(0, 1, 0),
    }
    assert relation_counts(gold, [triple("lives_in", (10, 15), (0, 4))], "boundaries") == {"lives_in": PRF(0, 1, 1)}


def test_repeated_triples_count_unless_distinct():
    gold = [triple("r", (0, 1), (2, 3))]
    pred = [triple("r", (0, 1), (2, 3))] * 2
    assert relation_counts(gold, pred, "strict") == {"r": PRF(1, 1, 0)}
    assert relation_counts(gold, pred, "strict", distinct=True) == {"r": PRF(1, 0, 0)}


def test_text_comparison_normalises_arguments_types_and_relation():
    gold = [text_triple("Caused  by", "Fuel siphoned", " Fuel Cap not Secured", "incident", "State")]
    pred = [text_triple("caused by", "FUEL SIPHONED", "fuel cap not secured", "Incident", "state")]
    assert relation_counts(gold, pred, "strict", by="text") == {"caused by": PRF(1, 0, 0)}
    assert normalise("  A \t B ") == "a b"


def test_only_listed_types_are_counted():
    gold = [triple("a", (0, 1), (2, 3)), triple("b", (0, 1), (2, 3))]
    assert set(relation_counts(gold, [], "strict", types=("a",))) == {"a"}


def test_spans_needed_to_compare_by_span():
    with pytest.raises(ValueError, match="without a span"):
        relation_counts([text_triple("r", "a", "b")], [], "strict")


def test_macro_and_rebel_percentages_by_hand():
    per_type = [PRF(2, 2, 0), PRF(0, 1, 1), PRF()]
    # fractions: P = (.5 + 0 + 0) / 3, R = (1 + 0 + 0) / 3, F1 = (2/3 + 0 + 0) / 3
    assert macro(per_type) == pytest.approx((0.5 / 3, 1 / 3, (2 / 3) / 3))
    # REBEL: percentages, and a type without triples counts 0 in its list
    assert rebel_values(PRF(2, 2, 0)) == pytest.approx((50.0, 100.0, 200 / 3))
    assert rebel_values(PRF(0, 3, 0)) == (0.0, 0.0, 0.0)
    assert macro(per_type, rebel_values) == pytest.approx((50 / 3, 100 / 3, (200 / 3) / 3))


@st.composite
def triples(draw):
    spans = st.sampled_from([(0, 1), (2, 3), (4, 6)])
    return draw(
        st.lists(
            st.builds(triple, st.sampled_from("rs"), spans, spans, st.sampled_from(["PER", "ORG"])),
            max_size=6,
        )
    )


@given(gold=triples(), pred=triples())
def test_counts_add_up_and_boundaries_is_at_least_strict(gold, pred):
    strict = sum(relation_counts(gold, pred, "strict").values(), PRF())
    boundaries = sum(relation_counts(gold, pred, "boundaries").values(), PRF())
    assert boundaries.tp >= strict.tp  # (with sets, boundaries may merge triples strict keeps apart)
    assert (strict.tp + strict.fn, strict.tp + strict.fp) == (len(gold), len(pred))
    distinct = sum(relation_counts(gold, pred, "strict", distinct=True).values(), PRF())
    assert distinct.tp + distinct.fn == len(set(gold))
    perfect = sum(relation_counts(gold, gold, "strict").values(), PRF())
    assert perfect.fp == perfect.fn == 0
