"""Statistics: vectorised functions from summed counts ``[..., k]`` to scores ``[...]``.

Each statistic names the count columns it reads, in order, so a table of
per-document rows can be turned into the ``[n, k]`` array it needs. A value
whose denominator is 0 is 0, as in :class:`nlpbench.metrics.counts.PRF`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from nlpbench.registry import Registry


def _ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    out = np.zeros(np.broadcast(numerator, denominator).shape)
    return np.divide(numerator, denominator, out=out, where=denominator != 0)


def _harmonic(recall: np.ndarray, precision: np.ndarray) -> np.ndarray:
    return _ratio(2 * recall * precision, recall + precision)


@dataclass(frozen=True)
class Statistic:
    """A score computed from summed counts: ``compute(sums[..., len(columns)]) -> values[...]``."""

    name: str
    columns: tuple[str, ...]
    compute: Callable[[np.ndarray], np.ndarray]
    formula: str


STATISTICS: Registry[Statistic] = Registry("statistic")


def _register(name: str, columns: tuple[str, ...], formula: str) -> Callable:
    def decorate(compute: Callable[[np.ndarray], np.ndarray]) -> Callable[[np.ndarray], np.ndarray]:
        STATISTICS.register(name, Statistic(name, columns, compute, formula))
        return compute

    return decorate


PRF_COLUMNS = ("tp", "fp", "fn")
COREF_COLUMNS = ("recall_num", "recall_den", "precision_num", "precision_den")


@_register("precision", PRF_COLUMNS, "TP / (TP + FP)")
def precision(sums: np.ndarray) -> np.ndarray:
    return _ratio(sums[..., 0], sums[..., 0] + sums[..., 1])


@_register("recall", PRF_COLUMNS, "TP / (TP + FN)")
def recall(sums: np.ndarray) -> np.ndarray:
    return _ratio(sums[..., 0], sums[..., 0] + sums[..., 2])


@_register("f1", PRF_COLUMNS, "2·TP / (2·TP + FP + FN)")
def f1(sums: np.ndarray) -> np.ndarray:
    return _ratio(2 * sums[..., 0], 2 * sums[..., 0] + sums[..., 1] + sums[..., 2])


@_register("coref_recall", COREF_COLUMNS, "recall_num / recall_den")
def coref_recall(sums: np.ndarray) -> np.ndarray:
    return _ratio(sums[..., 0], sums[..., 1])


@_register("coref_precision", COREF_COLUMNS, "precision_num / precision_den")
def coref_precision(sums: np.ndarray) -> np.ndarray:
    return _ratio(sums[..., 2], sums[..., 3])


@_register("coref_f1", COREF_COLUMNS, "2·R·P / (R + P), R and P from their numerators and denominators")
def coref_f1(sums: np.ndarray) -> np.ndarray:
    return _harmonic(coref_recall(sums), coref_precision(sums))


@_register(
    "conll",
    tuple(f"{metric}.{column}" for metric in ("muc", "b_cubed", "ceaf_e") for column in COREF_COLUMNS),
    "(F1(MUC) + F1(B³) + F1(CEAFe)) / 3",
)
def conll(sums: np.ndarray) -> np.ndarray:
    return sum(coref_f1(sums[..., 4 * i : 4 * i + 4]) for i in range(3)) / 3


SEMEVAL_COLUMNS = ("cor", "par", "actual", "possible")


def _semeval_found(sums: np.ndarray) -> np.ndarray:
    return sums[..., 0] + 0.5 * sums[..., 1]


@_register("semeval_precision", SEMEVAL_COLUMNS, "(COR + ½·PAR) / ACTUAL")
def semeval_precision(sums: np.ndarray) -> np.ndarray:
    return _ratio(_semeval_found(sums), sums[..., 2])


@_register("semeval_recall", SEMEVAL_COLUMNS, "(COR + ½·PAR) / POSSIBLE")
def semeval_recall(sums: np.ndarray) -> np.ndarray:
    return _ratio(_semeval_found(sums), sums[..., 3])


@_register("semeval_f1", SEMEVAL_COLUMNS, "2·P·R / (P + R) from the SemEval precision and recall")
def semeval_f1(sums: np.ndarray) -> np.ndarray:
    return _harmonic(semeval_recall(sums), semeval_precision(sums))


RATE_COLUMNS = ("part", "whole")


@_register("rate", RATE_COLUMNS, "PART / WHOLE (de-identification: residual PHI, over-redaction, format, …)")
def rate(sums: np.ndarray) -> np.ndarray:
    return _ratio(sums[..., 0], sums[..., 1])


@_register("mean", ("sum", "count"), "Σ value / number of documents (MAP: mean of per-document average precision)")
def mean(sums: np.ndarray) -> np.ndarray:
    return _ratio(sums[..., 0], sums[..., 1])


def macro(base: Statistic, labels: int) -> Statistic:
    """The unweighted mean of ``base`` over ``labels`` slices laid side by side in the count columns."""
    width = len(base.columns)

    def compute(sums: np.ndarray) -> np.ndarray:
        return np.asarray(sum(base.compute(sums[..., width * i : width * (i + 1)]) for i in range(labels))) / labels

    return Statistic(f"macro_{base.name}", base.columns * labels, compute, f"mean over labels of {base.formula}")


def statistic_for(name: str) -> Statistic:
    return STATISTICS.get(name)


@_register(
    "official_timelines",
    ("f1", "patients", "gold_f1", "gold_patients"),
    "(Σ F1 / patients + Σ F1 of patients with gold / patients with gold) / 2 (ChemoTimelines 2024)",
)
def official_timelines(sums: np.ndarray) -> np.ndarray:
    return (_ratio(sums[..., 0], sums[..., 1]) + _ratio(sums[..., 2], sums[..., 3])) / 2


def _blanc(part: Callable[[np.ndarray], np.ndarray]) -> Callable[[np.ndarray], np.ndarray]:
    """BLANC's value from the coreference (columns 0–3) and non-coreference (4–7) link counts.

    The mean of the two parts' values; a part neither side has links of is
    left out (Luo et al. 2014); with no part left, 0.
    """

    def compute(sums: np.ndarray) -> np.ndarray:
        coref, noncoref = sums[..., :4], sums[..., 4:]
        has_coref = coref[..., 1] + coref[..., 3] > 0
        has_noncoref = noncoref[..., 1] + noncoref[..., 3] > 0
        both = (part(coref) + part(noncoref)) / 2
        one = np.where(has_coref, part(coref), part(noncoref))
        return np.where(has_coref & has_noncoref, both, np.where(has_coref | has_noncoref, one, 0.0))

    return compute


BLANC_COLUMNS = tuple(f"{side}.{column}" for side in ("coreference", "non-coreference") for column in COREF_COLUMNS)
for _value, _part in (("recall", coref_recall), ("precision", coref_precision), ("f1", coref_f1)):
    STATISTICS.register(
        f"blanc_{_value}",
        Statistic(
            f"blanc_{_value}", BLANC_COLUMNS, _blanc(_part), f"mean of the coreference and non-coreference {_value}"
        ),
    )
