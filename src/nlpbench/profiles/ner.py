"""How ``score ner`` matches entities: ``standard``, ``nervaluate`` and ``trusted-ke``.

trusted_ke reports SemEval ``partial`` as "weak" and ``exact`` as "strong".
The named label sets are trusted_ke's ``type2tags``; ``--labels`` accepts
them under every profile, or a comma-separated list of labels.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from nlpbench.metrics.mentions import Locator, locate_first_then_queue, locate_in_order
from nlpbench.metrics.ner import Entity, Matcher, match_first_overlap, match_greedy, match_optimal, nested_first
from nlpbench.profiles.base import Profile, quirk, register
from nlpbench.profiles.rounding import significant

#: trusted_ke's label sets (``ner_semeval.py`` ``type2tags``), in its order.
LABEL_SETS: dict[str, tuple[str, ...]] = {
    "conll03": ("PER", "ORG", "MISC", "LOC"),
    "ontonotes": (
        "PER", "ORG", "LOC", "FAC", "GPE", "PRODUCT", "NORP", "QUANTITY", "EVENT",
        "WORK_OF_ART", "CARDINAL", "DATE", "PERCENT", "TIME", "ORDINAL", "MONEY", "LAW", "LANGUAGE",
    ),
    "ace05": ("PER", "ORG", "LOC", "FAC", "GPE", "VEHICLE", "WEAPON"),
    "ace05_nltk": ("PER", "ORG", "LOC", "FAC", "GPE"),
    # ORG is trusted_ke's addition, so that the dummy label of untyped gold survives the filter
    "scierc": ("OtherScientificTerm", "Method", "Task", "Material", "Generic", "Metric", "ORG"),
}  # fmt: skip

#: trusted_ke's ``load_result`` abbreviations for predicted labels.
TRUSTED_KE_LABEL_MAP: Mapping[str, str] = MappingProxyType(
    {
        "FACILITY": "FAC",
        "ORGANIZATION": "ORG",
        "PERSON": "PER",
        "LOCATION": "LOC",
        "VEH": "VEHICLE",
        "WEA": "WEAPON",
    }
)


@dataclass(frozen=True, slots=True)
class TokenFix:
    """Token ``index`` of document ``doc_id`` reads ``becomes`` instead of ``was``."""

    doc_id: str
    index: int
    was: str
    becomes: str


#: trusted_ke's ``get_faa_tokenized`` replaces this document's tokens by a literal list.
TRUSTED_KE_TOKEN_OVERRIDE: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "19980620030289I": (
        "MR.", "KADERA", "THEN", "ATTEMPTED", "TO", "LAND", "IN", "A", "FIELD", "BUT", "WAS", "FORCED", "TO",
        "LAND", "ON", "HIGHWAY", "93", ".", "THREE", "MILES", "EAST", "OF", "SUNMER", ",", "IOWA",
    ),
})  # fmt: skip

#: Letters the first OMIn preprocessing dropped after a period with no blank, in the three gold documents
#: where it matters; the jsonlines token source still has them dropped, trusted_ke's later faa.conll does not.
OMIN_TOKEN_RESTORATIONS: tuple[TokenFix, ...] = (
    TokenFix("19860530030499A", 7, "NEW", "KNEW"),
    TokenFix("19860706034879A", 13, "ILOT", "PILOT"),
    TokenFix("19920405008919A", 8, "USTY", "GUSTY"),
)


def keep_order(gold: Sequence[Entity]) -> list[Entity]:
    """Gold entities in the order read."""
    return list(gold)


@dataclass(frozen=True)
class NerProfile(Profile):
    """How ``score ner`` locates, filters, orders and matches entities and presents the numbers."""

    matcher: Matcher = quirk(match_optimal, "Which prediction accounts for which gold entity, scheme by scheme.")
    order_gold: Callable[[Sequence[Entity]], list[Entity]] = quirk(
        keep_order, "The order in which gold entities are offered to each prediction."
    )
    label_map: Mapping[str, str] | None = quirk(
        None,
        "Predicted labels renamed before filtering (trusted_ke maps FACILITY to FAC, PERSON to PER, …).",
    )
    needs_label_set: bool = quirk(
        False, "trusted_ke always filters both sides to a named label set (its required -t option)."
    )
    untyped_gold_label: str | None = quirk(
        None,
        "Gold without types (OMIn ner.csv): None scores boundaries only, dropping every type; trusted_ke "
        "instead gives each gold mention the type ORG and keeps the predicted types, so a prediction typed "
        "ORG can match exactly where another type falls to the first overlap.",
    )
    locate: Locator = quirk(
        locate_in_order, "How a mention known only by its string is found in the document's tokens."
    )
    upper_case_gold: bool = quirk(
        True,
        "Tokens and predicted mentions are upper-cased before locating mentions; trusted_ke leaves the "
        "gold strings as they are (the OMIn gold is upper case already).",
    )
    token_override: Mapping[str, tuple[str, ...]] | None = quirk(
        None,
        "Documents whose tokens are replaced outright: trusted_ke's get_faa_tokenized hard-codes "
        "19980620030289I with '93' and '.' as two tokens, which the gold mention 'HIGHWAY 93' needs.",
    )
    token_restorations: tuple[TokenFix, ...] = quirk(
        (),
        "Tokens restored in the OMIn jsonlines token source (applied only where the token still reads as "
        "listed): the jsonlines was built from the first faa.conll, which lost the first letter of a "
        "sentence after a period with no blank; trusted_ke scored the fixed faa.conll, which is not "
        "published. Without KNEW, PILOT and GUSTY the gold mentions PILOT and GUSTY NORTH WIND cannot be "
        "found, and trusted_ke's figures hold only by unfound strings colliding at span (-1, -1).",
    )
    gold_documents_only: bool = quirk(
        False,
        "Only documents of the gold file are scored; trusted_ke loops over the gold ids, so predictions "
        "for other documents (the OMIn tools ran on all 2,748 records) are ignored.",
    )
    significant_digits: int | None = quirk(
        None, "trusted_ke prints every value with the format '.2': two significant digits."
    )

    def value(self, x: float) -> float:
        """A value as this profile reports it."""
        return significant(x, self.significant_digits)


STANDARD = register(
    NerProfile(
        task="ner",
        name="standard",
        summary="One-to-one optimal matching in each scheme; gold order and prediction order do not matter.",
        reference="SemEval-2013 Task 9.1 definitions (Segura-Bedmar et al. 2013)",
    )
)

NERVALUATE = register(
    NerProfile(
        task="ner",
        name="nervaluate",
        summary="nervaluate 1.2 (PyPI): greedy one-to-one, predictions in order, each gold entity taken once.",
        reference="nervaluate 1.2.1, src/nervaluate/strategies.py",
        matcher=match_greedy,
    )
)

TRUSTED_KE = register(
    NerProfile(
        task="ner",
        name="trusted-ke",
        summary="trusted_ke's ner_semeval.py on OMIn: first overlap, many to one, nested gold first, '.2' values.",
        reference="nd-crane/trusted_ke @ 135462ae evaluations/quantitative/ner_semeval.py with "
        "davidsbatista/NER-Evaluation @ 054d52a ner_eval.py",
        matcher=match_first_overlap,
        order_gold=nested_first,
        label_map=TRUSTED_KE_LABEL_MAP,
        needs_label_set=True,
        untyped_gold_label="ORG",
        locate=locate_first_then_queue,
        upper_case_gold=False,
        token_override=TRUSTED_KE_TOKEN_OVERRIDE,
        token_restorations=OMIN_TOKEN_RESTORATIONS,
        gold_documents_only=True,
        significant_digits=2,
    )
)
