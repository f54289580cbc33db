"""How ``score linking`` pairs links and presents the numbers: ``standard`` and ``trusted-ke``."""

from __future__ import annotations

from dataclasses import dataclass

from nlpbench.metrics.linking import Counting, count_first_match, count_one_to_one
from nlpbench.profiles.base import Profile, quirk, register
from nlpbench.profiles.rounding import significant


@dataclass(frozen=True)
class LinkingProfile(Profile):
    """How gold entities and predicted links are paired, compared and reported."""

    counting: Counting = quirk(count_one_to_one, "How predictions and gold entities are paired and counted.")
    upper_case_gold: bool = quirk(
        True,
        "Predicted mentions are upper-cased before they are compared; trusted_ke leaves the gold mentions "
        "as they are (the OMIn gold is upper case already).",
    )
    best_per_mention: bool = quirk(
        False,
        "Similarity keeps, per document and predicted mention string, only its best-scoring pair, as "
        "trusted_ke's get_class_score and get_jc_score do; otherwise every matched pair counts.",
    )
    significant_digits: int | None = quirk(
        None, "trusted_ke prints every value with the format '.2': two significant digits."
    )

    def value(self, x: float | None) -> float | None:
        """A value as this profile reports it."""
        return significant(x, self.significant_digits)


STANDARD = register(
    LinkingProfile(
        task="linking",
        name="standard",
        summary="One-to-one pairing; a wrong or unmatched link is a false positive, a missed entity a false negative.",
        reference="GERBIL strong annotation match (Usbeck et al. 2015), with trusted_ke's weak and flex modes",
    )
)

TRUSTED_KE = register(
    LinkingProfile(
        task="linking",
        name="trusted-ke",
        summary="trusted_ke's nel_eval.py on OMIn: first matching prediction per gold entity, '.2' values.",
        reference="nd-crane/trusted_ke @ 135462ae evaluations/quantitative/nel_eval.py; similarity as "
        "usc-isi-i2/kgtk-similarity @ 859e9dc computes it",
        counting=count_first_match,
        upper_case_gold=False,
        best_per_mention=True,
        significant_digits=2,
    )
)
