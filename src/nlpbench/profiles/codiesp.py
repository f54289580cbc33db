"""Profiles of clinical coding (``nlpbench score codiesp``): CodiEsp 2020 tracks D, P and X.

Rules of the task itself, the same under every profile: codes compare
lower-cased; a code a prediction repeats for one document counts once, at its
first (best) rank; predicted codes that are in none of the valid-code lists
are removed before ranks are counted, while gold codes are never removed (a
gold code outside the lists cannot be found); in CodiEsp-X a prediction finds
a gold code when it contains one of its references with at most 10 more
characters on either side, whatever its label.

- ``standard``: MAP over every gold document as ``trec_eval -c`` computes it
  (a document without predictions scores 0; the whole ranking counts);
  predictions for documents that are not in the gold are not scored; a
  discontinuous gold reference runs from its smallest start to its largest
  end; unrounded values; a ratio whose denominator is 0 is 0, as in every
  ``standard`` profile (precision without a valid predicted code, recall and
  MAP without gold codes), with a warning; extras: MAP@k, P@k, R@k and
  code-category precision/recall/F1.
- ``codiesp2020``: the official scripts of TeMU-BSC/codiesp-evaluation-script
  (976fc11): ``codiespD_P_evaluation.py`` with trectools 0.0.42 (MAP),
  ``comp_f1_diag_proc.py`` (D/P precision, recall, F1) and
  ``codiespX_evaluation.py`` (X), numbers as they print them, ``nan`` as
  null. Where a script fails on valid input (an empty file; no valid predicted
  code in X) the values are those of its formulas and a warning names the
  script and its exception.
"""

from __future__ import annotations

from dataclasses import dataclass

from nlpbench.metrics.counts import PRF
from nlpbench.metrics.ranking import Mean
from nlpbench.profiles.base import Profile, quirk, register

#: (precision, recall, F1); None where the official scripts print nan.
Values = tuple[float | None, float | None, float | None]


@dataclass(frozen=True)
class CodingProfile(Profile):
    """How ``score codiesp`` ranks, matches, averages and presents."""

    depth: int | None = quirk(
        None,
        "codiespD_P_evaluation.py calls trectools 0.0.42 get_map(depth=1000): codes ranked below 1000 "
        "(after repeats and invalid codes are removed) add nothing to AP.",
    )
    map_over_predicted: bool = quirk(
        False,
        "trectools 0.0.42 divides the sum of AP by the number of documents in the filtered predictions: a gold "
        "document without a valid prediction is left out instead of scoring 0, so skipping documents raises MAP.",
    )
    score_unknown_documents: bool = quirk(
        False,
        "The official scripts score predictions for documents that are not in the gold: each such document "
        "adds a 0 to MAP's denominator and its codes are false positives in the micro precision.",
    )
    listed_reference_bounds: bool = quirk(
        False,
        "codiespX_evaluation.py spans a discontinuous gold reference from the start of its first listed piece "
        "to the end of its last; the CodiEsp files list some pieces out of text order (16 of the test set's "
        "codes have only such references), which makes the span end before it starts, so nothing can match it.",
    )
    nan_per_document: bool = quirk(
        False,
        "comp_f1_diag_proc.py and codiespX_evaluation.py print nan (null here) where a per-document denominator "
        "is missing: precision and F1 of a gold document without predictions, every value of a document only "
        "in the predictions, F1 when precision and recall are both 0.",
    )
    nan_without_match: bool = quirk(
        False,
        "codiespX_evaluation.py counts true positives only for documents with at least one, so a gold document "
        "whose predictions found nothing gets nan (null here) precision, recall and F1.",
    )
    nan_when_undefined: bool = quirk(
        False,
        "The official scripts print nan (null here) where a corpus value divides by 0: MAP when no predicted "
        "code is valid (trectools averages over no document), precision and F1 without a valid predicted code; "
        "standard reports 0 and warns. (A gold file without codes is an error under every profile.)",
    )
    official_failures: bool = quirk(
        False,
        "The official scripts fail on some valid input: codiespD_P_evaluation.py and codiespX_evaluation.py on an "
        "empty prediction file (pandas EmptyDataError), codiespX_evaluation.py when no predicted code is valid "
        "(ValueError); nlpbench scores it by their formulas and warns which script fails with which exception. "
        "(An empty gold file, on which they fail too, is an error under every profile.)",
    )
    round_digits: int | None = quirk(None, "The official scripts print every value rounded to 3 decimals.")
    extras: bool = quirk(
        False, "MAP@k, P@k, R@k and code-category precision/recall/F1, which the official scripts do not compute."
    )

    def rounded(self, value: float | None) -> float | None:
        if value is None or self.round_digits is None:
            return value
        return round(value, self.round_digits)

    def mean_value(self, mean: Mean) -> float | None:
        """A mean (MAP, MAP@k, P@k, R@k) as reported: None (nan) over no document under ``nan_when_undefined``."""
        if not mean.count and self.nan_when_undefined:
            return None
        return self.rounded(mean.value)

    def values(self, prf: PRF) -> Values:
        """Corpus (micro) precision, recall and F1 as this profile reports them.

        The official scripts compute F1 as 2·P·R/(P+R) from the unrounded P
        and R (0 when P+R = 0) and round all three for printing; under
        ``nan_when_undefined`` a ratio over 0 is None, and so is F1 then.
        """
        if self.round_digits is None:
            return prf.precision, prf.recall, prf.f1
        return self._official(prf)

    def document_values(self, prf: PRF, in_gold: bool, in_pred: bool, references: bool) -> Values:
        """One document's precision, recall and F1; ``references``: CodiEsp-X rules."""
        if not self.nan_per_document:
            return self.values(prf)
        if not in_gold:
            return None, None, None
        if not in_pred:
            return None, self.rounded(0.0), None
        if references and self.nan_without_match and prf.tp == 0:
            return None, None, None
        precision, recall, f1 = self._official(prf)
        return precision, recall, (f1 if prf.tp else None)

    def _official(self, prf: PRF) -> Values:
        undefined = None if self.nan_when_undefined else 0.0
        precision = prf.tp / (prf.tp + prf.fp) if prf.tp + prf.fp else undefined
        recall = prf.tp / (prf.tp + prf.fn) if prf.tp + prf.fn else undefined
        if precision is None or recall is None:
            f1 = None
        else:
            f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        return self.rounded(precision), self.rounded(recall), self.rounded(f1)


STANDARD = register(
    CodingProfile(
        task="codiesp",
        name="standard",
        summary="MAP over every gold document (trec_eval -c), unrounded, with MAP@k, P@k, R@k and categories.",
        reference="trec_eval map, map_cut, P, recall (-c); CodiEsp-X matching rule",
        extras=True,
    )
)

CODIESP2020 = register(
    CodingProfile(
        task="codiesp",
        name="codiesp2020",
        summary="The official CodiEsp 2020 scripts exactly (trectools 0.0.42 MAP, comp_f1_diag_proc.py, X script).",
        reference="TeMU-BSC/codiesp-evaluation-script 976fc11 with trectools 0.0.42",
        depth=1000,
        map_over_predicted=True,
        score_unknown_documents=True,
        listed_reference_bounds=True,
        nan_per_document=True,
        nan_without_match=True,
        nan_when_undefined=True,
        official_failures=True,
        round_digits=3,
    )
)
