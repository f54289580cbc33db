"""Time nlpbench's bootstrap intervals against ``scipy.stats.bootstrap`` on the same counts.

Input: per-document TP/FP/FN counts of ``--documents`` documents (Poisson with
means 6, 2 and 3, seeded). Both compute the 95 % interval of micro F1 with
``--resamples`` resamples, percentile and BCa; scipy gets a vectorised
statistic over the three paired count columns (the fastest way to call it)
and its default batch. The intervals must agree within Monte Carlo error
(3 % of the interval's width); each time is the median of ``--repeat`` runs.
The paired tests (approximate randomization, paired bootstrap) are timed on
two such systems.

    python benchmarks/stats_bench.py [--documents 10000] [--resamples 10000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time

import numpy as np
from scipy import stats as scipy_stats

from nlpbench.stats import approximate_randomization, bootstrap_interval, paired_bootstrap, statistic_for

F1 = statistic_for("f1")


def counts(documents: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.column_stack([rng.poisson(6, documents), rng.poisson(2, documents), rng.poisson(3, documents)])


def timed(repeat: int, work):
    times, result = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        result = work()
        times.append(time.perf_counter() - started)
    return statistics.median(times), result


def scipy_interval(table: np.ndarray, resamples: int, method: str):
    def f1(tp, fp, fn, axis=-1):
        return F1.compute(np.stack([tp.sum(axis), fp.sum(axis), fn.sum(axis)], axis=-1))

    result = scipy_stats.bootstrap(
        tuple(table.T), f1, paired=True, vectorized=True, n_resamples=resamples, method=method, random_state=1
    )
    return result.confidence_interval


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=10_000)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    table, other = counts(args.documents, 0), counts(args.documents, 1)
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, numpy {np.__version__}")
    print(f"{args.documents:,} documents, {args.resamples:,} resamples, median of {args.repeat}")
    print(f"{'work':<32}{'nlpbench s':>12}{'scipy s':>10}{'speed-up':>10}   interval (nlpbench | scipy)")
    for method in ("percentile", "bca"):
        ours_s, ours = timed(
            args.repeat, lambda m=method: bootstrap_interval(table, F1, resamples=args.resamples, method=m)
        )
        theirs_s, theirs = timed(args.repeat, lambda m=method: scipy_interval(table, args.resamples, m))
        width = theirs.high - theirs.low
        agree = abs(ours.low - theirs.low) <= 0.03 * width and abs(ours.high - theirs.high) <= 0.03 * width
        if not agree:
            raise SystemExit(f"{method}: intervals disagree beyond Monte Carlo error: {ours} vs {theirs}")
        print(
            f"{method + ' interval':<32}{ours_s:>12.2f}{theirs_s:>10.2f}{theirs_s / ours_s:>9.1f}x   "
            f"[{ours.low:.4f}, {ours.high:.4f}] | [{theirs.low:.4f}, {theirs.high:.4f}]"
        )
    for name, test in (
        ("approximate randomization", approximate_randomization),
        ("paired bootstrap", paired_bootstrap),
    ):
        seconds, result = timed(args.repeat, lambda t=test: t(table, other, F1))
        print(f"{name:<32}{seconds:>12.2f}{'':>10}{'':>10}   p = {result.p_value:.4f}")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
