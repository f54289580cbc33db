"""Bootstrap confidence intervals over documents: percentile and BCa.

For counts ``C[n, k]`` and a statistic θ, each resample draws ``n``
documents with replacement and computes θ of their summed counts; the
percentile interval is the (α/2, 1 − α/2) quantiles of those values. BCa
(Efron 1987) moves the quantiles to Φ(z₀ + (z₀ + z_q) / (1 − a·(z₀ + z_q)))
with the bias correction z₀ = Φ⁻¹(share of resampled values below θ̂, ties
counting half) and the acceleration a = Σ(θ̄ − θ₍ᵢ₎)³ / (6·(Σ(θ̄ − θ₍ᵢ₎)²)^{3/2})
from the leave-one-document-out values θ₍ᵢ₎ — the same definitions as
``scipy.stats.bootstrap``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from nlpbench.stats.resample import bootstrap_sums, bootstrap_weights, leave_one_out_sums
from nlpbench.stats.statistics import Statistic

Method = Literal["percentile", "bca"]


@dataclass(frozen=True)
class Interval:
    """A point estimate with its confidence interval."""

    estimate: float
    low: float
    high: float
    confidence: float
    method: str
    resamples: int

    def as_dict(self) -> dict[str, float | str | int]:
        return {
            "estimate": self.estimate,
            "ci_low": self.low,
            "ci_high": self.high,
            "confidence": self.confidence,
            "method": self.method,
            "resamples": self.resamples,
        }


def check_counts(counts: np.ndarray, statistic: Statistic) -> np.ndarray:
    """The counts as a float ``[n, k]`` array, checked against the statistic's columns."""
    counts = np.asarray(counts, dtype=np.float64)
    if counts.ndim != 2 or counts.shape[1] != len(statistic.columns):
        raise ValueError(f"{statistic.name} needs counts of shape [documents, {len(statistic.columns)}]")
    if counts.shape[0] == 0:
        raise ValueError("no documents to resample")
    return counts


def bootstrap_distributions(
    tables: Sequence[np.ndarray], statistics: Sequence[Statistic], resamples: int, seed: int
) -> list[np.ndarray]:
    """θ of each (table, statistic) pair over the same ``resamples`` resamples of their common rows.

    The tables are laid side by side, so each resample's weights are drawn
    once for every value: the drawing, not the sums, is what costs.
    """
    stacked = np.hstack(tables)
    edges = np.cumsum([0, *(table.shape[1] for table in tables)])
    values: list[list[np.ndarray]] = [[] for _ in statistics]
    for sums in bootstrap_sums(stacked, resamples, np.random.default_rng(seed)):
        for i, statistic in enumerate(statistics):
            values[i].append(statistic.compute(sums[:, edges[i] : edges[i + 1]]))
    return [np.concatenate(found) for found in values]


def separate_distributions(
    tables: Sequence[np.ndarray],
    statistics: Sequence[Statistic],
    resamples: int,
    seed: int,
    strata: Sequence[tuple[int, ...]] | None = None,
) -> list[np.ndarray]:
    """θ of each (table, statistic) pair exactly as :func:`bootstrap_interval` computes it alone, bit for bit.

    Alone, each table of ``n`` rows draws its weights ``w`` from a generator seeded ``seed`` and sums
    ``w @ table``; those weights depend only on ``n`` and the table's ``strata`` (one per table; none: one
    stratum each, :func:`~nlpbench.stats.resample.bootstrap_weights`), so they are drawn once for every table of
    ``n`` rows and those strata and multiplied by each table on its own (not laid side by side, whose product
    may round otherwise); equal tables are multiplied once.
    """
    tables = [np.ascontiguousarray(table, dtype=np.float64) for table in tables]
    values: list[list[np.ndarray]] = [[] for _ in statistics]
    by_rows: dict[tuple[int, tuple[int, ...]], list[int]] = {}
    for i, table in enumerate(tables):
        by_rows.setdefault((table.shape[0], strata[i] if strata else ()), []).append(i)
    for (n, blocks), members in by_rows.items():
        distinct: list[int] = []  # the first of each set of equal tables
        same: dict[int, int] = {}
        for i in members:
            same[i] = next((j for j in distinct if np.array_equal(tables[j], tables[i])), i)
            if same[i] == i:
                distinct.append(i)
        for weights in bootstrap_weights(n, resamples, np.random.default_rng(seed), blocks):
            sums = {j: weights @ tables[j] for j in distinct}
            for i in members:
                values[i].append(statistics[i].compute(sums[same[i]]))
            del weights, sums  # not held while the next chunk is drawn
    return [np.concatenate(found) for found in values]


def bootstrap_interval(
    counts: np.ndarray,
    statistic: Statistic,
    *,
    confidence: float = 0.95,
    resamples: int = 10_000,
    method: Method = "bca",
    seed: int = 0,
) -> Interval:
    """The ``confidence`` interval of ``statistic`` over documents (rows of ``counts``)."""
    return bootstrap_intervals(
        [(counts, statistic)], confidence=confidence, resamples=resamples, method=method, seed=seed
    )[0]


def bootstrap_intervals(
    pairs: Sequence[tuple[np.ndarray, Statistic]],
    *,
    confidence: float = 0.95,
    resamples: int = 10_000,
    method: Method = "bca",
    seed: int = 0,
    separately: bool = False,
    strata: Sequence[tuple[int, ...]] | None = None,
) -> list[Interval]:
    """The interval of each (counts, statistic) pair; their rows are the same documents, resampled together.

    ``separately`` gives each pair the interval :func:`bootstrap_interval` gives it alone, bit for bit, from
    one draw per number of rows (:func:`separate_distributions`); the pairs' tables may then differ in rows.
    ``strata`` (with ``separately``), one per pair: the sizes of its table's consecutive blocks of rows, each
    resampled within itself (a stratified bootstrap; BCa's acceleration still leaves out one row at a time).
    """
    if strata is not None and not separately:
        raise ValueError("strata go with separately=True: one per pair")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, not {confidence}")
    if method not in ("percentile", "bca"):
        raise ValueError(f"unknown interval method {method!r}; known: bca, percentile")
    tables = [check_counts(counts, statistic) for counts, statistic in pairs]
    statistics = [statistic for _, statistic in pairs]
    if separately:
        distributions = separate_distributions(tables, statistics, resamples, seed, strata)
    else:
        distributions = bootstrap_distributions(tables, statistics, resamples, seed)
    alpha = (1 - confidence) / 2
    intervals = []
    for counts, statistic, values in zip(tables, statistics, distributions, strict=True):
        estimate = float(statistic.compute(counts.sum(axis=0)))
        quantiles = np.array([alpha, 1 - alpha])
        if method == "bca":
            quantiles = _bca_quantiles(values, estimate, statistic.compute(leave_one_out_sums(counts)), quantiles)
        if np.isnan(quantiles).any():  # every resample equal: the interval is the point
            low = high = estimate
        else:
            low, high = np.quantile(values, quantiles)
        intervals.append(Interval(estimate, float(low), float(high), confidence, method, resamples))
    return intervals


def _bca_quantiles(values: np.ndarray, estimate: float, jackknife: np.ndarray, quantiles: np.ndarray) -> np.ndarray:
    from scipy.special import ndtr, ndtri  # the normal distribution, for BCa only: scipy takes 0.15 s to load

    below = (np.count_nonzero(values < estimate) + np.count_nonzero(values <= estimate)) / (2 * len(values))
    with np.errstate(divide="ignore", invalid="ignore"):
        z0 = ndtri(below)
        spread = jackknife.mean() - jackknife
        acceleration = (spread**3).sum() / (6 * ((spread**2).sum()) ** 1.5)
        if not np.isfinite(acceleration):
            acceleration = 0.0
        z = ndtri(quantiles)
        shifted = ndtr(z0 + (z0 + z) / (1 - acceleration * (z0 + z)))
    return np.where(np.isfinite(shifted), shifted, np.nan)
