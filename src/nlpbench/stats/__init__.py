"""Confidence intervals, paired significance tests and rank groups, all from per-document counts.

Every function here takes a table of counts, one row per document (or patient)
and one column per count, and a *statistic*: a vectorised function from summed
counts (``[..., k]``) to scores (``[...]``). Resampling documents is then a
weighted sum of rows, so 10,000 resamples of 10,000 documents are a few matrix
products (see :mod:`nlpbench.stats.resample`). Everything is seeded and
deterministic.
"""

from nlpbench.stats.bootstrap import Interval, bootstrap_interval
from nlpbench.stats.paired import PairedTest, approximate_randomization, paired_bootstrap
from nlpbench.stats.ranking import holm, rank_groups
from nlpbench.stats.statistics import STATISTICS, Statistic, statistic_for

__all__ = [
    "STATISTICS",
    "Interval",
    "PairedTest",
    "Statistic",
    "approximate_randomization",
    "bootstrap_interval",
    "holm",
    "paired_bootstrap",
    "rank_groups",
    "statistic_for",
]
