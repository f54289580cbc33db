"""How ``score relations`` counts triples and presents the numbers: ``standard`` and ``rebel``."""

from __future__ import annotations

from dataclasses import dataclass

from nlpbench.metrics.counts import PRF
from nlpbench.metrics.relations import Values, prf_values
from nlpbench.profiles.base import Profile, quirk, register


def rebel_values(prf: PRF) -> tuple[float, float, float]:
    """REBEL's percentages: P and R are 0 unless TP > 0, F1 = 2·P·R / (P + R) of the percentages."""
    if not prf.tp:
        return 0.0, 0.0, 0.0
    precision = 100 * prf.tp / (prf.fp + prf.tp)
    recall = 100 * prf.tp / (prf.fn + prf.tp)
    return precision, recall, 2 * precision * recall / (precision + recall)


@dataclass(frozen=True)
class RelationProfile(Profile):
    """How triples are counted, averaged and printed."""

    distinct: bool = quirk(
        False,
        "REBEL's re_score puts a document's triples of one type in a set, so a triple listed twice counts "
        "once; otherwise every listed triple counts.",
    )
    values: Values = quirk(
        prf_values,
        "How precision, recall and F1 come from the counts: fractions; REBEL gives percentages, 0 unless "
        "TP > 0, with F1 computed from the two percentages.",
    )
    macro_over_listed_types: bool = quirk(
        False,
        "REBEL's macro means run over every relation type of its list, types without gold or predicted "
        "triples counting 0; otherwise over the types that occur in the gold or the predictions.",
    )
    decimals: int | None = quirk(None, "REBEL prints every value with '{:.2f}' (of a percentage).")

    def present(self, value: float) -> float:
        return value if self.decimals is None else round(value, self.decimals)


STANDARD = register(
    RelationProfile(
        task="relations",
        name="standard",
        summary="Every listed triple counts; fractions; macro over the relation types that occur.",
        reference="strict and boundaries evaluation of Taillé et al. (2020), 'Let's stop incorrect comparisons'",
    )
)

REBEL = register(
    RelationProfile(
        task="relations",
        name="rebel",
        summary="REBEL's re_score: sets per document and type, percentages to 2 decimals, macro over the list.",
        reference="Babelscape/rebel @ 54ea5fd src/score.py re_score (after btaille/sincere)",
        distinct=True,
        values=rebel_values,
        macro_over_listed_types=True,
        decimals=2,
    )
)
