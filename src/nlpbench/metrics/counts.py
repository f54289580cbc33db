"""Counts that add up across documents, and the scores derived from them.

Every metric reduces a document to counts; corpora, slices and bootstrap
samples are sums of those counts, and scores are computed once, at the end.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable
from dataclasses import dataclass


def safe_div(numerator: float, denominator: float) -> float:
    """``numerator / denominator``, or 0.0 when the denominator is 0."""
    return numerator / denominator if denominator else 0.0


@dataclass(frozen=True, slots=True)
class PRF:
    """True positives, false positives and false negatives.

    precision = TP / (TP + FP), recall = TP / (TP + FN),
    F1 = 2·P·R / (P + R) = 2·TP / (2·TP + FP + FN); each is 0 when its
    denominator is 0.
    """

    tp: int = 0
    fp: int = 0
    fn: int = 0

    def __add__(self, other: PRF) -> PRF:
        return PRF(self.tp + other.tp, self.fp + other.fp, self.fn + other.fn)

    @property
    def precision(self) -> float:
        return safe_div(self.tp, self.tp + self.fp)

    @property
    def recall(self) -> float:
        return safe_div(self.tp, self.tp + self.fn)

    @property
    def f1(self) -> float:
        return safe_div(2 * self.tp, 2 * self.tp + self.fp + self.fn)

    def fields(self) -> dict[str, int | float]:
        """The counts and the three values as a report row's fields: ``tp``, ``fp``, ``fn``, ``precision``,
        ``recall``, ``f1``."""
        return {"tp": self.tp, "fp": self.fp, "fn": self.fn, "precision": self.precision, "recall": self.recall,
                "f1": self.f1}  # fmt: skip

    @classmethod
    def from_matches(cls, matched: int, n_gold: int, n_pred: int) -> PRF:
        """Counts from the number of one-to-one matches between ``n_gold`` and ``n_pred`` items."""
        return cls(matched, n_pred - matched, n_gold - matched)


def score_multiset(gold: Iterable[Hashable], pred: Iterable[Hashable]) -> PRF:
    """Score two multisets: an item matches as many times as it occurs on both sides."""
    gold_counts, pred_counts = Counter(gold), Counter(pred)
    matched = sum((gold_counts & pred_counts).values())
    return PRF.from_matches(matched, gold_counts.total(), pred_counts.total())


def score_set(gold: Iterable[Hashable], pred: Iterable[Hashable]) -> PRF:
    """Score two sets: repeated items count once."""
    gold_set, pred_set = set(gold), set(pred)
    matched = len(gold_set & pred_set)
    return PRF.from_matches(matched, len(gold_set), len(pred_set))
