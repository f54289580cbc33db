"""Timeline counts and scores: the rules on small lists, and invariants over random ones."""

from __future__ import annotations

import math
from datetime import date

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nlpbench.metrics.counts import PRF
from nlpbench.metrics.timelines import (
    TimelineRules,
    macro_values,
    official_score,
    patient_values,
    timeline_counts,
    timeline_values,
)
from nlpbench.metrics.timex import IsoScale, ScriptScale, TimexError
from nlpbench.model import TimelineTuple
from nlpbench.model.timelines import Mode

REFERENCE = date(2026, 11, 21)
MODES = list(Mode)


def script(mode: Mode) -> TimelineRules:
    return TimelineRules(mode, ScriptScale(mode, REFERENCE), casefold_labels=False, script_arithmetic=True)


def iso(mode: Mode) -> TimelineRules:
    return TimelineRules(mode, IsoScale(mode), casefold_labels=True)


def t(chemo: str, label: str, when: str) -> TimelineTuple:
    return TimelineTuple(chemo, label, when)


def test_empty_gold_counts_every_prediction_as_false_positive_without_reading_it():
    assert timeline_counts([], [t("taxol", "contains-1", "not a date")] * 2, script(Mode.day)) == PRF(0, 2, 0)


def test_strict_lists_and_the_single_count_rule():
    gold = [t("taxol", "contains-1", "2013-05-12"), t("carboplatin", "contains-1", "2013-06-01")]
    pred = [t("taxol", "begins-on", "2013-05-12"), t("taxol", "contains-1", "2013-05-13")]
    # taxol begins-on 05-12 shares chemo and date with the missed contains-1: dropped; 05-13 stays FP
    assert timeline_counts(gold, pred, script(Mode.strict)) == PRF(0, 1, 2)


def test_relaxed_label_and_range_rules():
    gold = [
        t("taxol", "begins-on", "2013-01-10"),
        t("taxol", "ends-on", "2013-06-20"),
        t("cis", "contains-1", "2013-02-02"),
    ]
    pred = [
        t("taxol", "contains-1", "2013-01-10"),  # in the gold range (inclusive): a TP
        t("taxol", "ends-on", "2013-01-10"),  # an ends-on at the start: no rescue, dropped as a single count
        t("taxol", "begins-on", "2013-06-20"),  # a begins-on at the end: the same
        t("cis", "begins-on", "2013-02-02"),  # gold has cis contains-1 that day: a TP
    ]
    # gold taxol begins-on and cis contains-1 are rescued by the predicted contains-1 and begins-on on their
    # days; taxol ends-on 06-20 is not: the predicted range (06-20 to 01-10) excludes an ends-on at its start
    assert timeline_counts(gold, pred, script(Mode.day)) == PRF(2, 0, 1)


def test_month_mode_summarises_before_matching():
    gold = [
        t("taxol", "contains-1", "2013-05-01"),
        t("taxol", "contains-1", "2013-05-20"),
        t("chemo", "contains-1", "2013-05-03"),
    ]
    pred = [t("taxol", "contains-1", "2013-05-31")]
    assert timeline_counts(gold, pred, script(Mode.month)) == PRF(1, 0, 0)
    assert timeline_counts(gold, pred, script(Mode.day)) == PRF(0, 1, 3)


def test_an_unreadable_date_names_its_side():
    with pytest.raises(TimexError) as raised:
        timeline_counts(
            [t("taxol", "contains-1", "2013-05-12")], [t("taxol", "contains-1", "2013-SU")], script(Mode.strict)
        )
    assert (raised.value.side, raised.value.value) == ("pred", "2013-SU")


def test_dates_with_and_without_a_time_zone_cannot_be_ordered():
    gold = [t("taxol", "begins-on", "2013-01-10"), t("taxol", "ends-on", "2013-06-20")]
    pred = [t("taxol", "contains-1", "2013-03-03T10:00Z")]
    with pytest.raises(TimexError, match="cannot be ordered against the range of taxol"):
        timeline_counts(gold, pred, script(Mode.day))


def test_values_and_averages():
    assert timeline_values(PRF(3, 2, 0), script_arithmetic=True) == (0.6, 1.0, 0.7499999999999999)
    assert timeline_values(PRF(3, 2, 0)) == (0.6, 1.0, 0.75)
    assert patient_values(PRF(0, 0, 0), 0) == (1.0, 1.0, 1.0)
    assert patient_values(PRF(0, 3, 0), 0) == (0.0, 0.0, 0.0)
    assert patient_values(PRF(0, 2, 0), 1) == (0.0, 0.0, 0.0)  # TP+FN = 0 after rescues
    assert macro_values([]) == (0.0, 0.0, 0.0)
    values = [(0.1, 0.2, 0.7), (0.2, 0.2, 0.2), (0.3, 0.3, 0.3)]
    assert macro_values(values, script_arithmetic=True)[0] == (0.1 + 0.2 + 0.3) / 3 == 0.20000000000000004
    assert macro_values(values)[0] == math.fsum([0.1, 0.2, 0.3]) / 3 == 0.19999999999999998
    assert official_score(0.5, 0.25) == 0.375


chemos = st.sampled_from(["taxol", "carboplatin", "chemo", "chemotherapy", "Chemotherapy"])
labels = st.sampled_from(["contains-1", "contains-1", "begins-on", "ends-on", "before"])
days = st.dates(date(2012, 11, 1), date(2013, 3, 1)).map(date.isoformat)
dates = st.one_of(
    days,
    st.sampled_from(["2013-01", "2013-02", "2012-12", "2013", "2012", "2013-W05", "2013-W01", "2013-01-15T10:00"]),
)
tuples = st.lists(st.builds(TimelineTuple, chemos, labels, dates), max_size=8)
day_tuples = st.lists(
    st.builds(TimelineTuple, chemos, st.sampled_from(["contains-1", "begins-on", "ends-on"]), days), max_size=8
)


@settings(max_examples=60)
@given(tuples.filter(bool), st.sampled_from(MODES), st.booleans())
def test_a_perfect_prediction_has_no_error(gold, mode, parity):
    counts = timeline_counts(gold, gold, script(mode) if parity else iso(mode))
    assert counts.fp == counts.fn == 0
    assert patient_values(counts, len(gold)) == ((1.0, 1.0, 1.0) if counts.tp else (0.0, 0.0, 0.0))


@settings(max_examples=60)
@given(tuples, tuples, st.sampled_from(MODES), st.randoms())
def test_counts_do_not_depend_on_the_order_of_the_tuples(gold, pred, mode, rng):
    shuffled_gold, shuffled_pred = gold[:], pred[:]
    rng.shuffle(shuffled_gold)
    rng.shuffle(shuffled_pred)
    for rules in (script(mode), iso(mode)):
        assert timeline_counts(gold, pred, rules) == timeline_counts(shuffled_gold, shuffled_pred, rules)


@settings(max_examples=80)
@given(tuples, tuples)
def test_relaxing_to_the_day_never_scores_lower_than_strict(gold, pred):
    strict, day = timeline_counts(gold, pred, script(Mode.strict)), timeline_counts(gold, pred, script(Mode.day))
    assert day.tp >= strict.tp and day.fp <= strict.fp and day.fn <= strict.fn


@settings(max_examples=80)
@given(day_tuples, day_tuples, st.sampled_from([Mode.strict, Mode.day]))
def test_both_readings_agree_on_lower_case_labels_and_full_dates(gold, pred, mode):
    assert timeline_counts(gold, pred, script(mode)) == timeline_counts(gold, pred, iso(mode))


@settings(max_examples=80)
@given(tuples, tuples, st.sampled_from(MODES))
def test_counts_stay_within_the_lists(gold, pred, mode):
    for rules in (script(mode), iso(mode)):
        counts = timeline_counts(gold, pred, rules)
        assert counts.tp + counts.fp <= len(pred)  # each prediction is a TP, an FP or dropped, once
        assert counts.fn <= len(gold)


@given(st.integers(0, 40), st.integers(0, 40), st.integers(0, 40))
def test_script_and_exact_f1_differ_in_the_last_bits_only(tp, fp, fn):
    script_f1 = timeline_values(PRF(tp, fp, fn), script_arithmetic=True)[2]
    assert math.isclose(script_f1, PRF(tp, fp, fn).f1, abs_tol=1e-12)


@settings(max_examples=50)
@given(st.lists(st.tuples(tuples, tuples), min_size=1, max_size=6), st.sampled_from(MODES))
def test_rules_reused_across_patients_on_plain_tuples_count_as_fresh_rules_on_named_tuples(patients, mode):
    """What a run's rules note on first use (date readings, which chemos are generic) changes no count, and plain
    tuples, as ``score timelines`` decodes them, count as :class:`TimelineTuple` do."""
    for make in (script, iso):
        shared = make(mode)
        for gold, pred in patients:
            plain_gold, plain_pred = [tuple(item) for item in gold], [tuple(item) for item in pred]
            assert timeline_counts(plain_gold, plain_pred, shared) == timeline_counts(gold, pred, make(mode))
    generic = script(mode).generic
    assert [generic[chemo] for chemo in ("chemo", "chemotherapy", "Chemotherapy", "chem", "taxol")] == [
        True, True, False, False, False,
    ]  # fmt: skip
