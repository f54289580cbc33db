from operator import attrgetter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nlpbench.metrics.coding import code_category, code_kind, contains, found_keys, reference_counts
from nlpbench.metrics.counts import PRF
from nlpbench.model import CodeReference


def ref(code, *fragments, doc="d1"):
    return CodeReference(doc, code, tuple(fragments))


@pytest.mark.parametrize(
    ("prediction", "found"),
    [
        ((100, 200), True),
        ((90, 210), True),  # 10 more characters on each side
        ((89, 200), False),  # 11 before
        ((100, 211), False),  # 11 after
        ((101, 200), False),  # starts inside the reference
        ((100, 199), False),  # ends inside the reference
    ],
)
def test_containment_with_ten_characters_of_slack(prediction, found):
    assert contains((100, 200), prediction, 10) is found


def test_one_found_reference_is_enough_and_repeats_count_once():
    gold = [ref("b02.1", (100, 110)), ref("b02.1", (500, 510)), ref("a01.0", (10, 20), (30, 40)), ref("c03.2", (0, 5))]
    pred = [ref("b02.1", (495, 515)), ref("a01.0", (10, 20)), ref("c03.2", (50, 60)), ref("c03.2", (0, 5))]
    # a01.0 needs 10..40: a prediction of 10..20 stops inside it
    assert reference_counts(gold, pred) == PRF(tp=2, fp=1, fn=1)


def test_bounds_choose_how_a_discontinuous_reference_is_spanned():
    gold = [ref("n32.9", (1208, 1216), (737, 746))]
    pred = [ref("n32.9", (737, 1216))]
    assert reference_counts(gold, pred).tp == 1
    assert reference_counts(gold, pred, bounds=attrgetter("listed_bounds")).tp == 0  # 1208..746 is inverted


def test_key_compares_categories():
    gold = [ref("n39.0", (0, 5)), ref("n39.9", (10, 15))]
    pred = [ref("n39.4", (0, 5))]
    assert reference_counts(gold, pred) == PRF(tp=0, fp=1, fn=2)
    assert reference_counts(gold, pred, key=code_category) == PRF(tp=1, fp=0, fn=0)
    with pytest.raises(ValueError):
        reference_counts(gold, pred, slack=-1)


@pytest.mark.parametrize(
    ("code", "kind", "category"),
    [("n39.0", "D", "n39"), ("r52", "D", "r52"), ("s42.90x", "D", "s42"), ("0dt70zz", "P", "0dt7"),
     ("0ttb", "P", "0ttb"), ("bw40zzz", "P", "bw40")],
)  # fmt: skip
def test_code_kind_and_category(code, kind, category):
    assert code_kind(code) == kind
    assert code_category(code) == code_category(code, kind) == category


offsets = st.integers(0, 300)
spans = st.tuples(offsets, offsets).map(sorted).map(tuple)
codes = st.sampled_from(["a01.0", "b02.1", "c03.2", "0dt70zz"])
references = st.lists(st.tuples(codes, spans).map(lambda c: ref(c[0], c[1])), max_size=8)


@given(references)
def test_gold_against_itself_finds_every_code(gold):
    prf = reference_counts(gold, gold)
    assert prf.fp == prf.fn == 0 and prf.tp == len({r.code for r in gold})


@given(references, references, st.integers(0, 20))
def test_counts_are_consistent_and_grow_with_slack(gold, pred, slack):
    prf = reference_counts(gold, pred, slack=slack)
    assert prf.tp + prf.fn == len({r.code for r in gold})
    assert prf.tp + prf.fp == len({r.code for r in pred})
    assert reference_counts(gold, pred, slack=slack + 1).tp >= prf.tp
    assert reference_counts(gold, pred, slack=slack, key=code_category).tp >= 0


@given(references, references, st.integers(0, 20))
def test_one_document_in_plain_python_finds_what_the_corpus_matching_finds(gold, pred, slack):
    """reference_counts (one document, plain Python) and found_keys (whole corpora, numpy) find the same codes."""
    import numpy as np

    keys = {code: number for number, code in enumerate(sorted({r.code for r in [*gold, *pred]}))}

    def columns(side):
        """Keys, starts and ends."""
        return np.array([(keys[r.code], *r.covering_bounds) for r in side], dtype=np.int64).reshape(-1, 3).T

    found = found_keys(*columns(gold), *columns(pred), slack=slack)
    assert len(found) == reference_counts(gold, pred, slack=slack).tp
    assert found.tolist() == sorted(set(found.tolist()))
