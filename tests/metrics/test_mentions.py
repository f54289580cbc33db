"""Mention strings located in tokens: trusted_ke's queue and possessive merge, and the in-order rule."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nlpbench.metrics.mentions import TokenView, locate_first_then_queue, locate_in_order, mention_words


def words(text: str) -> list[str]:
    return text.split()


TOKENS = words("THE PILOT 'S ENGINE QUIT . THE PILOT LANDED , THEN THE ENGINE ( LEFT ) FAILED")


def test_first_then_queue_takes_later_occurrences_in_turn():
    view = TokenView(["A", "B", "A", "B", "A"])
    assert locate_first_then_queue(["A B", "A B", "A B"], view) == [(0, 2), (2, 4), None]


def test_first_then_queue_repeats_a_single_occurrence():
    view = TokenView(["X", "A", "B"])
    assert locate_first_then_queue(["A B", "A B"], view) == [(1, 3), (1, 3)]


def test_commas_and_parentheses_become_tokens():
    view = TokenView(TOKENS)
    assert locate_first_then_queue(["LANDED, THEN", "ENGINE (LEFT)"], view) == [(8, 11), (12, 16)]


def test_possessive_merge_glues_the_first_s_and_keeps_the_other_indices():
    view = TokenView(TOKENS)
    spans = locate_first_then_queue(["PILOT'S ENGINE", "PILOT", "QUIT"], view)
    # index 1 now reads PILOT'S and index 2 is gone, so the span of PILOT'S ENGINE is 1 to 3 + 1;
    # PILOT alone is left only at 7
    assert spans == [(1, 4), (7, 8), (4, 5)]
    assert 2 not in view.tokens
    # the view is shared with the other side of the document: there is no 's left to merge
    assert locate_first_then_queue(["PILOT'S"], view) == [(1, 2)]


def test_possessive_merge_fails_as_trusted_ke_would():
    view = TokenView(["'S", "X"])
    with pytest.raises(ValueError, match="possessive merge fails"):
        locate_first_then_queue(["X"], view)


def test_in_order_takes_the_kth_occurrence_and_then_gives_up():
    view = TokenView(["X", "A", "B"])
    assert locate_in_order(["A B", "A B"], view) == [(1, 3), None]
    view = TokenView(TOKENS)
    assert locate_in_order(["PILOT'S ENGINE", "PILOT", "PILOT"], view) == [(1, 4), (1, 2), (7, 8)]


def test_mention_words():
    assert mention_words("ACFT'S G/S (LEFT),") == ["ACFT", "'S", "G/S", "(", "LEFT", ")", ","]


@given(st.lists(st.sampled_from("ABC"), min_size=1, max_size=12), st.data())
def test_in_order_spans_cover_the_mention_and_never_repeat(tokens, data):
    mentions = data.draw(st.lists(st.sampled_from(["A", "B", "A B", "C A"]), max_size=6))
    spans = locate_in_order(mentions, TokenView(tokens))
    found = [(m, s) for m, s in zip(mentions, spans, strict=True) if s is not None]
    for mention, (start, end) in found:
        assert tokens[start:end] == mention.split()
    for mention in set(mentions):
        located = [s for m, s in found if m == mention]
        assert len(located) == len(set(located))
