"""Rank groups: systems whose difference from the best of their group is not significant share a rank.

Systems are sorted by score, best first. The best unranked system opens a
group; every other unranked system is compared with it, the p-values are
corrected with Holm's step-down method (Holm 1979: the i-th smallest of m
p-values is multiplied by m − i + 1, and the adjusted values are made
non-decreasing), and those whose adjusted p-value is at least α join the
group. The next group opens with the best system left, its rank being one
more than the number of systems ranked before it (competition ranking).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import TypeVar

import numpy as np


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm–Bonferroni adjusted p-values, in the order given."""
    p = np.asarray(p_values, dtype=float)
    m = len(p)
    if m == 0:
        return []
    order = np.argsort(p, kind="stable")
    adjusted = np.minimum(1.0, np.maximum.accumulate(p[order] * (m - np.arange(m))))
    result = np.empty(m)
    result[order] = adjusted
    return result.tolist()


System = TypeVar("System", bound=Hashable)


def rank_groups(
    scores: Mapping[System, float],
    p_value: Callable[[System, System], float],
    *,
    alpha: float = 0.05,
) -> dict[System, int]:
    """The rank of each system: ``p_value(best, other)`` tests a group's best against each unranked system."""
    remaining = sorted(scores, key=lambda system: (-scores[system], str(system)))
    ranks: dict[System, int] = {}
    while remaining:
        best, others = remaining[0], remaining[1:]
        adjusted = holm([p_value(best, other) for other in others])
        tied = [other for other, p in zip(others, adjusted, strict=True) if p >= alpha]
        rank = len(ranks) + 1
        for system in (best, *tied):
            ranks[system] = rank
        remaining = [system for system in remaining if system not in ranks]
    return ranks
