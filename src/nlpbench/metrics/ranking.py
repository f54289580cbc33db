"""Ranking metrics: average precision, precision and recall at a cutoff, and their means.

A *ranking* is a sequence of distinct items, best first (rank 1 is
``ranking[0]``); *relevant* is the set of items that should be found. Each
metric scores one query (in clinical coding, one document and its ranked
codes). With ``r_i`` the item at rank ``i``, ``R`` the relevant set and
``hits(i) = |{r_1, …, r_i} ∩ R|``, the definitions are trec_eval's:

- average precision, ``AP@k = (1/|R|) · Σ_{i ≤ k, r_i ∈ R} hits(i)/i``
  (``k = None``: the whole ranking, trec_eval ``map``; otherwise
  ``map_cut_k``). Relevant items ranked below ``k``, or not ranked at all,
  add 0; the divisor is ``|R|``, not ``min(k, |R|)``.
- ``P@k = hits(k) / k``, even when fewer than ``k`` items are ranked
  (trec_eval ``P_k``).
- ``R@k = hits(k) / |R|`` (trec_eval ``recall_k``).

Each is 0 when ``R`` is empty. A run's score is the mean over queries, kept
as a :class:`Mean` (a sum and a count) so that queries add up with ``+``;
which queries enter the mean is the caller's choice (trec_eval ``-c`` counts
every query of the gold, ranked or not).
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Sequence
from dataclasses import dataclass

from nlpbench.metrics.counts import safe_div


@dataclass(frozen=True, slots=True)
class Mean:
    """A sum of per-query values and the number of queries: ``value = total / count`` (0 when count is 0)."""

    total: float = 0.0
    count: int = 0

    def __add__(self, other: Mean) -> Mean:
        return Mean(self.total + other.total, self.count + other.count)

    @classmethod
    def of(cls, value: float) -> Mean:
        """One query's value."""
        return cls(value, 1)

    @property
    def value(self) -> float:
        return safe_div(self.total, self.count)


def hit_ranks(ranking: Sequence[Hashable], relevant: Collection[Hashable], k: int | None = None) -> list[int]:
    """The ranks (1-based) of the relevant items among the first ``k`` of the ranking, in order."""
    _check(ranking, k)
    top = ranking if k is None else ranking[:k]
    return [rank for rank, item in enumerate(top, start=1) if item in relevant]


def average_precision(ranking: Sequence[Hashable], relevant: Collection[Hashable], k: int | None = None) -> float:
    """``AP@k = (1/|R|) · Σ_{i ≤ k, r_i ∈ R} hits(i)/i``; the whole ranking when ``k`` is None."""
    ranks = hit_ranks(ranking, relevant, k)
    return safe_div(sum(hits / rank for hits, rank in enumerate(ranks, start=1)), len(relevant))


def precision_at_k(ranking: Sequence[Hashable], relevant: Collection[Hashable], k: int) -> float:
    """``P@k = hits(k) / k``."""
    if k is None:
        raise ValueError("precision at k needs a cutoff k")
    return len(hit_ranks(ranking, relevant, k)) / k


def recall_at_k(ranking: Sequence[Hashable], relevant: Collection[Hashable], k: int | None) -> float:
    """``R@k = hits(k) / |R|``; the whole ranking when ``k`` is None."""
    return safe_div(len(hit_ranks(ranking, relevant, k)), len(relevant))


def _check(ranking: Sequence[Hashable], k: int | None) -> None:
    if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 1):
        raise ValueError(f"cutoff k must be a positive integer, not {k!r}")
    if len(set(ranking)) != len(ranking):
        raise ValueError("a ranking lists each item once; remove repeats before scoring")
