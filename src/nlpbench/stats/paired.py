"""Paired significance tests between two systems scored on the same documents.

Both take per-document counts ``A[n, k]`` and ``B[n, k]`` (row i of each is
document i) and the observed difference δ = θ(ΣA) − θ(ΣB).

- **Approximate randomization** (Noreen 1989; Yeh 2000): under the null
  hypothesis the systems are exchangeable on each document, so each trial
  swaps the two systems' rows of a random half of the documents; the two-sided
  p-value is (1 + #{trials with |δ′| ≥ |δ|}) / (1 + trials).
- **Paired bootstrap** (Efron and Tibshirani 1993, §16.4): documents are
  resampled jointly; the resampled differences δ* centred on δ estimate the
  null distribution, and p = (1 + #{|δ* − δ| ≥ |δ|}) / (1 + resamples). The
  percentile interval of δ* is reported beside it. With strata (documents pooled
  from several sites), each site's documents are resampled within the site, as
  the pooled value's interval resamples them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from nlpbench.stats.bootstrap import check_counts
from nlpbench.stats.resample import CHUNK_CELLS, Draws, bootstrap_weights, weighted_sums
from nlpbench.stats.statistics import Statistic


@dataclass(frozen=True)
class PairedTest:
    """The outcome of a paired test of system A against system B."""

    a: float
    b: float
    difference: float
    p_value: float
    test: str
    trials: int
    low: float | None = None
    high: float | None = None

    def as_dict(self) -> dict[str, float | str | int | None]:
        return {
            "a": self.a,
            "b": self.b,
            "difference": self.difference,
            "ci_low": self.low,
            "ci_high": self.high,
            "p_value": self.p_value,
            "test": self.test,
            "trials": self.trials,
        }


def _pair(a: np.ndarray, b: np.ndarray, statistic: Statistic) -> tuple[np.ndarray, np.ndarray]:
    a, b = check_counts(a, statistic), check_counts(b, statistic)
    if a.shape != b.shape:
        raise ValueError(f"the systems were scored on different documents ({a.shape[0]} and {b.shape[0]})")
    return a, b


def approximate_randomization(
    a: np.ndarray, b: np.ndarray, statistic: Statistic, *, trials: int = 10_000, seed: int = 0
) -> PairedTest:
    """Two-sided approximate randomization test of θ(A) = θ(B)."""
    a, b = _pair(a, b, statistic)
    total_a, total_b = a.sum(axis=0), b.sum(axis=0)
    score_a, score_b = float(statistic.compute(total_a)), float(statistic.compute(total_b))
    observed = abs(score_a - score_b)
    swing = b - a  # what swapping document i moves from A's sums to B's
    rng = np.random.default_rng(seed)
    n = a.shape[0]
    chunk = max(1, CHUNK_CELLS // max(n, 1))
    extreme = 0
    for start in range(0, trials, chunk):
        swapped = rng.integers(0, 2, size=(min(chunk, trials - start), n)).astype(np.float64)
        moved = swapped @ swing
        shuffled = statistic.compute(total_a + moved) - statistic.compute(total_b - moved)
        extreme += int(np.count_nonzero(np.abs(shuffled) >= observed - 1e-12))
    p_value = (extreme + 1) / (trials + 1)
    return PairedTest(score_a, score_b, score_a - score_b, p_value, "randomization", trials)


def paired_bootstrap(
    a: np.ndarray,
    b: np.ndarray,
    statistic: Statistic,
    *,
    resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
    draws: Draws | None = None,
    strata: tuple[int, ...] = (),
) -> PairedTest:
    """Paired bootstrap test of θ(A) = θ(B), with the percentile interval of the difference.

    Resample ``r`` weighs the ``n`` documents by ``w_r`` (multiplicities summing to ``n``, drawn from a generator
    seeded ``seed``, :func:`~nlpbench.stats.resample.bootstrap_weights`) and gives
    ``δ*_r = θ(w_r · A) − θ(w_r · B)``. ``strata``: the sizes of consecutive blocks of documents (one per site),
    each resampled within itself, so that ``w_r`` sums to each block's size over the block; empty: one block. The
    weights depend on ``n``, ``resamples``, ``seed`` and ``strata`` only: ``draws``
    (:class:`~nlpbench.stats.resample.Draws`) hands the same ones to every test that shares it, drawn once —
    the same numbers as drawing them here.
    """
    a, b = _pair(a, b, statistic)
    score_a, score_b = float(statistic.compute(a.sum(axis=0))), float(statistic.compute(b.sum(axis=0)))
    observed = score_a - score_b
    n = a.shape[0]
    weights = (
        draws.weights(n, resamples, seed, strata)
        if draws is not None
        else bootstrap_weights(n, resamples, np.random.default_rng(seed), strata)
    )
    both = np.stack([a, b], axis=1)  # [n, 2, k]: both systems drawn with the same documents
    differences = np.concatenate(
        [statistic.compute(sums[:, 0]) - statistic.compute(sums[:, 1]) for sums in weighted_sums(both, weights)]
    )
    extreme = np.count_nonzero(np.abs(differences - observed) >= abs(observed) - 1e-12)
    alpha = (1 - confidence) / 2
    low, high = np.quantile(differences, [alpha, 1 - alpha])
    p_value = (int(extreme) + 1) / (resamples + 1)
    return PairedTest(score_a, score_b, observed, p_value, "bootstrap", resamples, float(low), float(high))
