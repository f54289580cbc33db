from itertools import permutations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nlpbench.metrics.counts import PRF
from nlpbench.metrics.span_batch import span_counts
from nlpbench.metrics.spans import SpanRules, match_instances, whitespace_tokens
from nlpbench.model import Annotation, Span


def ann(start, length, text=None, **attributes):
    return Annotation("n", Span.of(start, length), "location", text or "x" * length, attributes)


RULES = SpanRules(tokenize=whitespace_tokens, type_attribute="locationType")


def test_strict_needs_same_start_and_length():
    matching = match_instances([ann(0, 5), ann(10, 4)], [ann(0, 5), ann(10, 5), ann(20, 2)])
    assert matching.counts == PRF(tp=1, fp=2, fn=1)
    assert [(g.start, p.start) for g, p in matching.pairs] == [(0, 0)]


def test_relax_accepts_lengths_within_tolerance_one_to_one():
    gold = [ann(0, 5), ann(0, 9)]
    pred = [ann(0, 6), ann(0, 7), ann(0, 7)]
    assert match_instances(gold, pred, tolerance=2).counts == PRF(tp=2, fp=1, fn=0)
    assert match_instances(gold, pred, tolerance=1).counts == PRF(tp=1, fp=2, fn=1)


def test_typed_matching_compares_the_kind():
    gold = [ann(0, 5, locationType="city"), ann(9, 2, locationType="state")]
    pred = [ann(0, 5, locationType="city"), ann(9, 2, locationType="zip")]
    counts = span_counts(gold, pred, RULES, ["instance_strict", "type", "hipaa"])
    assert counts["instance_strict", None] == PRF(2, 0, 0)
    assert counts["type", None] == PRF(1, 1, 1)
    # city is a HIPAA identifier; state and zip disagree (no / yes)
    assert counts["hipaa", None] == PRF(1, 1, 1)


def test_untyped_never_equal_is_a_rule():
    gold, pred = [ann(0, 5)], [ann(0, 5)]
    assert span_counts(gold, pred, RULES, ["type"])["type", None] == PRF(1, 0, 0)
    strict = SpanRules(tokenize=whitespace_tokens, type_attribute="locationType", untyped_never_equal=True)
    assert span_counts(gold, pred, strict, ["type"])["type", None] == PRF(0, 1, 1)


def test_collapse_keeps_the_last_annotation_per_start():
    rules = SpanRules(tokenize=whitespace_tokens, type_attribute="t", collapse_by_start=True)
    gold = [ann(0, 5)]
    pred = [ann(0, 5), ann(0, 8)]
    assert span_counts(gold, pred, rules, ["instance_strict"])["instance_strict", None] == PRF(0, 1, 1)
    assert span_counts(gold, pred, RULES, ["instance_strict"])["instance_strict", None] == PRF(1, 1, 0)


def test_whitespace_tokens_sit_at_their_true_offsets():
    annotation = Annotation("n", Span.of(10, 17), "location", "88  Harbor\tStreet")
    assert whitespace_tokens(annotation.text, 17) == [(0, 2), (4, 6), (11, 6)]  # from the annotation's start
    assert RULES.tokens(annotation) == [(10, 2), (14, 6), (21, 6)]
    assert whitespace_tokens("88  Harbor", 6) == [(0, 2), (4, 2)]  # the text the span covers
    discontinuous = Annotation("n", Span(0, 14, ((0, 4), (8, 14))), "x", "left right!")
    with pytest.raises(ValueError, match="discontinuous"):
        RULES.tokens(discontinuous)


def test_token_counts_multiset_or_distinct():
    gold = [ann(0, 3, "a b"), ann(0, 3, "a b")]
    pred = [ann(0, 1, "a")]
    assert span_counts(gold, pred, RULES, ["token"])["token", None] == PRF(1, 0, 3)
    distinct = SpanRules(tokenize=whitespace_tokens, type_attribute="t", distinct_tokens=True)
    assert span_counts(gold, pred, distinct, ["token"])["token", None] == PRF(1, 0, 1)


def brute_force_matches(gold_lengths, pred_lengths, tolerance):
    """The largest one-to-one matching, by trying every assignment (small inputs only)."""
    small, large = sorted([gold_lengths, pred_lengths], key=len)
    best = 0
    for chosen in permutations(range(len(large)), len(small)):
        best = max(best, sum(abs(small[i] - large[j]) <= tolerance for i, j in enumerate(chosen)))
    return best


@given(
    st.lists(st.integers(1, 12), max_size=5),
    st.lists(st.integers(1, 12), max_size=5),
    st.integers(0, 3),
)
def test_greedy_length_matching_is_maximum(gold_lengths, pred_lengths, tolerance):
    gold = [ann(0, n) for n in gold_lengths]
    pred = [ann(0, n) for n in pred_lengths]
    matched = match_instances(gold, pred, tolerance=tolerance).counts.tp
    assert matched == brute_force_matches(gold_lengths, pred_lengths, tolerance)


@given(st.lists(st.tuples(st.integers(0, 30), st.integers(1, 6)), max_size=8))
def test_perfect_prediction_scores_one_on_every_metric(spans):
    gold = [ann(s, n, locationType="city") for s, n in spans]
    metrics = ["instance_strict", "instance_relax", "token", "type", "hipaa"]
    for key, prf in span_counts(gold, list(gold), RULES, metrics, label=str).items():
        assert prf.fp == prf.fn == 0, key


def test_label_slices_split_what_the_whole_matched():
    # matched as a whole; TP and FN go to the gold label, FP to the predicted label
    gold = [ann(0, 5, "a b c", locationType="city"), ann(9, 2, "zz", locationType="state")]
    pred = [ann(0, 5, "a b c", locationType="state"), ann(20, 2, "yy", locationType="state")]
    counts = span_counts(gold, pred, RULES, ["instance_strict", "token"], label=str)
    assert counts["instance_strict", None] == PRF(1, 1, 1)
    assert counts["instance_strict", "city"] == PRF(1, 0, 0)
    assert counts["instance_strict", "state"] == PRF(0, 1, 1)
    assert counts["token", "city"] == PRF(3, 0, 0)
    assert counts["token", "state"] == PRF(0, 1, 1)
    assert ("instance_relax", None) not in counts and ("instance_relax", "state") in counts
