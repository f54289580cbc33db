"""Entity-linking counts in the strong, weak and flex modes, and the mean similarity of matched pairs."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nlpbench.metrics.counts import PRF
from nlpbench.metrics.linking import MODE, LinkPair, count_first_match, count_one_to_one, mean_similarity
from nlpbench.model import GoldEntity, LinkedMention

FORCED_LANDING = GoldEntity("d", (("FORCED LANDING", "Q1975745"), ("LANDING", "Q844947"), (None, None)))
SUMPS = GoldEntity("d", (("WING FUEL TANK SUMPS", None), ("FUEL TANK SUMPS", None), ("SUMPS", "Q1592793")))
NIL = GoldEntity("d", (("SLING LOAD", None), (None, None), (None, None)))
COUNTINGS = [count_first_match, count_one_to_one]


def link(mention, qid):
    return LinkedMention("d", mention, qid)


@pytest.mark.parametrize("count", COUNTINGS, ids=lambda c: c.__name__)
def test_flex_accepts_a_more_specific_earlier_qid(count):
    assert count([FORCED_LANDING], [link("LANDING", "Q1975745")], MODE["flex"]).prf == PRF(1, 0, 0)
    assert count([FORCED_LANDING], [link("LANDING", "Q844947")], MODE["flex"]).prf == PRF(1, 0, 0)
    # the converse is wrong: the full span with the general QID
    wrong = count([FORCED_LANDING], [link("FORCED LANDING", "Q844947")], MODE["flex"]).prf
    assert wrong.tp == 0 and wrong.fp == 1


def test_strong_weak_flex_on_one_entity():
    pred = [link("LANDING", "Q1975745")]
    assert count_first_match([FORCED_LANDING], pred, MODE["strong"]).prf == PRF(0, 0, 1)
    assert count_first_match([FORCED_LANDING], pred, MODE["weak"]).prf == PRF(1, 0, 0)  # LANDING in FORCED LANDING
    assert count_first_match([FORCED_LANDING], [link("ENG", "Q1")], MODE["weak"]).prf == PRF(0, 0, 1)


def test_choices_without_a_qid_are_pruned_and_empty_entities_not_scored():
    pred = [link("WING FUEL TANK SUMPS", "Q1592793")]
    counts = count_first_match([SUMPS, NIL], pred, MODE["flex"])
    assert counts.prf == PRF(0, 0, 1)  # only (SUMPS, Q1592793) is left: the full span matches nothing
    assert counts.unscored == 1
    assert count_first_match([SUMPS, NIL], pred, MODE["strong"]).unscored == 2


def test_first_match_uses_the_first_matching_row_and_never_uses_rows_up():
    gold = [GoldEntity("d", (("FUEL", "Q42"),)), GoldEntity("d", (("FUEL", "Q42"),))]
    pred = [link("FUEL", "Q1"), link("FUEL", "Q42"), link("TREE", "Q10884")]
    counts = count_first_match(gold, pred, MODE["strong"])
    assert counts.prf == PRF(0, 2, 0)  # the first FUEL row decides both; TREE matches nothing and counts nowhere
    assert [p.predicted_qid for p in counts.pairs] == ["Q1", "Q1"]


def test_one_to_one_counts_every_wrong_or_unmatched_prediction():
    gold = [GoldEntity("d", (("FUEL", "Q42"),)), GoldEntity("d", (("FUEL", "Q42"),))]
    pred = [link("FUEL", "Q1"), link("FUEL", "Q42"), link("TREE", "Q10884")]
    counts = count_one_to_one(gold, pred, MODE["strong"])
    assert counts.prf == PRF(1, 2, 1)
    assert sorted(p.predicted_qid for p in counts.pairs) == ["Q1", "Q42"]


@st.composite
def gold_and_pred(draw):
    names = st.sampled_from(["A", "B", "A B", "C"])
    qids = st.sampled_from(["Q1", "Q2", "Q3", None])
    choices = st.lists(st.tuples(names, qids), min_size=1, max_size=3)
    gold = draw(st.lists(st.builds(lambda c: GoldEntity("d", tuple(c)), choices), max_size=5))
    pred = draw(st.lists(st.builds(link, names, qids.filter(bool)), max_size=5))
    return gold, pred


@pytest.mark.parametrize("mode", list(MODE))
@given(case=gold_and_pred())
def test_one_to_one_counts_add_up_and_pair_every_distinct_correct_link(mode, case):
    gold, pred = case
    one, first = count_one_to_one(gold, pred, MODE[mode]), count_first_match(gold, pred, MODE[mode])
    scored = len(gold) - one.unscored
    assert one.prf.tp + one.prf.fn == scored
    assert one.prf.tp + one.prf.fp == len(pred)
    assert first.prf.tp + first.prf.fp + first.prf.fn == scored
    assert one.unscored == first.unscored
    if mode != "flex":  # there a correct QID may differ from the matched choice's
        correct = {(p.predicted_mention, p.predicted_qid) for p in first.pairs if p.predicted_qid == p.gold_qid}
        assert one.prf.tp >= len(correct)


def pair(doc, mention, gold_qid, pred_qid):
    return LinkPair(doc, mention, mention, gold_qid, pred_qid)


def test_mean_similarity_keeps_the_best_pair_of_each_mention():
    table = {("Q1", "Q1"): 1.0, ("Q2", "Q1"): 0.5, ("Q3", "Q4"): 0.25}
    pairs = [pair("d", "A", "Q1", "Q1"), pair("d", "A", "Q2", "Q1"), pair("d", "B", "Q3", "Q4")]
    pairs.append(pair("d", "C", "Q9", "Q9"))
    best = mean_similarity(pairs, lambda a, b: table.get((a, b)), best_per_mention=True)
    assert (best.pairs, best.unscored, best.averaged, best.similarity) == (4, 1, 2, pytest.approx(0.625))
    every = mean_similarity(pairs, lambda a, b: table.get((a, b)), best_per_mention=False)
    assert (every.averaged, every.similarity) == (3, pytest.approx(1.75 / 3))
    assert mean_similarity(pairs[3:], lambda a, b: None, best_per_mention=True).similarity is None
