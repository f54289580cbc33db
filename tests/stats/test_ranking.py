"""Holm's correction and rank groups."""

from __future__ import annotations

import pytest

from nlpbench.stats import holm, rank_groups


def test_holm_multiplies_by_the_number_left_and_stays_monotone():
    # sorted p: 0.01·4 = 0.04, 0.02·3 = 0.06, 0.03·2 = 0.06, 0.04·1 = 0.04 → monotone 0.04, 0.06, 0.06, 0.06
    assert holm([0.03, 0.01, 0.04, 0.02]) == pytest.approx([0.06, 0.04, 0.06, 0.06])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])  # 0.9·1 raised to the 1.0 before it
    assert holm([]) == []


def test_systems_not_significantly_worse_than_the_best_share_its_rank():
    scores = {"a": 0.9, "b": 0.89, "c": 0.7, "d": 0.69, "e": 0.5}
    close = {frozenset("ab"), frozenset("cd")}

    def p_value(x, y):
        return 0.6 if frozenset((x, y)) in close else 0.001

    assert rank_groups(scores, p_value) == {"a": 1, "b": 1, "c": 3, "d": 3, "e": 5}


def test_holm_can_keep_a_borderline_system_in_the_group():
    scores = {"a": 0.9, "b": 0.8, "c": 0.7}
    p = {("a", "b"): 0.03, ("a", "c"): 0.001, ("b", "c"): 0.001}
    # a vs b: 0.03·1 after c's 0.001·2 — significant at 0.05, so b opens its own rank
    assert rank_groups(scores, lambda x, y: p[(x, y)]) == {"a": 1, "b": 2, "c": 3}
    p[("a", "c")] = 0.04
    # 0.03·2 = 0.06 ≥ 0.05: b ties with a; c: max(0.06, 0.04) = 0.06 ties too
    assert rank_groups(scores, lambda x, y: p[(x, y)]) == {"a": 1, "b": 1, "c": 1}
