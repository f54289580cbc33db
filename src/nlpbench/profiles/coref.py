"""Profiles of the coreference task (``nlpbench score coref``).

- ``conll2012``: the reference coreference scorer v8.01
  (conll/reference-coreference-scorers, master f49f3f8) and, for LEA, its
  ``LEA-scorer`` branch (772e5a3). Mentions are (start, end) token spans; a
  response mention that repeats a key mention is removed after its first
  occurrence (more than 10 such removals and v8.01 refuses to score), while
  repeats in the key, and repeats of response mentions absent from the key,
  stay and count as often as they occur. Every metric runs on those clusters,
  singletons and twinless mentions included: v8.01 still builds the Cai &
  Strube (2010) clusters but hands them to MUC alone, where singletons carry
  no link, so no metric is affected. BLANC leaves out a link type the key
  lacks, whatever the response has (Recasens & Hovy 2011). The counts are
  the ``(n / d)`` v8.01 prints; recall, precision and F1 are the unrounded
  values its test suite asserts (v8.01 prints them as percentages truncated
  to two decimals, ``int(x · 10000) / 100``).
- ``e2e``: e2e-coref's ``metrics.py`` as PyPI ``coreference-eval`` 0.0.2
  (corefeval) has it, the scorer behind the OMIn / trusted_ke figures: MUC,
  B³ and LEA without clusters of size 1, CEAFe without response clusters of
  size 1, mentions compared by the token indices exactly as written (OMIn's
  ``[10]`` is not ``[10, 10]``), nothing deduplicated. trusted_ke prints
  these values with two significant digits.
- ``standard``: the published definitions (Pradhan et al. 2014 for MUC, B³,
  CEAF and BLANC; Moosavi & Strube 2016 for LEA) on clean clusterings. It
  differs from ``conll2012`` in two ways: every repeated mention, in the key
  as in the response, is merged into its first occurrence (and scoring never
  refuses); BLANC leaves out a link type only when neither key nor response
  has such links (Luo et al. 2014), so a response that links mentions of an
  all-singleton key is penalised.

Recall, precision and F1 are never rounded; the CoNLL score is the mean of
the three unrounded F1.

In every profile the key decides which documents are scored: a key document
missing from the response is scored against an empty response, and a document
found only in the response is left out (v8.01 and trusted_ke do both); each is
reported in the warnings.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from nlpbench.metrics import coref as reference
from nlpbench.metrics import coref_e2e as e2e
from nlpbench.metrics.coref import BlancCounts, CorefCounts, blanc_scores
from nlpbench.model import Cluster, CorefMention, span_of
from nlpbench.profiles.base import Profile, quirk, register

#: The report rows of the coreference task, in order.
METRICS = ("mentions", "muc", "bcub", "ceafm", "ceafe", "blanc", "lea")

#: Each family of definitions: metric name → function of (key, response) clusterings.
DEFINITIONS: MappingProxyType[str, MappingProxyType[str, Callable[..., Any]]] = MappingProxyType(
    {
        "reference": MappingProxyType(
            {
                "mentions": reference.mention_identification,
                "muc": reference.muc,
                "bcub": reference.b_cubed,
                "ceafm": reference.ceaf_m,
                "ceafe": reference.ceaf_e,
                "blanc": reference.blanc,
                "lea": reference.lea,
            }
        ),
        "e2e": MappingProxyType({"muc": e2e.muc, "bcub": e2e.b_cubed, "ceafe": e2e.ceaf_e, "lea": e2e.lea}),
    }
)

#: How a mention is identified when key and response are compared.
MENTION_IDENTITY: MappingProxyType[str, Callable[[CorefMention], Hashable]] = MappingProxyType(
    {"span": span_of, "as-written": tuple}
)

#: What happens to a mention that occurs more than once on a side.
REPEATS = MappingProxyType(
    {
        "merge": reference.without_repeats,
        "response-repeats-of-key-mentions": reference.without_response_repeats_of_key_mentions,
        "keep": reference.with_repeats,
    }
)


@dataclass(frozen=True)
class CorefProfile(Profile):
    """How ``score coref`` prepares the clusters and which definitions and BLANC cases it applies."""

    definitions: str = quirk(
        "reference",
        "Which definitions compute the metrics: `reference` (the CoNLL reference scorer's, v8.01 and its LEA "
        "branch) or `e2e` (e2e-coref's metrics.py as corefeval has it, which skips singletons in B³ and LEA and "
        "drops response singletons before CEAFe).",
    )
    metrics: tuple[str, ...] = quirk(METRICS, "The metrics reported, before the CoNLL average of MUC, B³ and CEAFe.")
    mention_identity: str = quirk(
        "span",
        "`span`: a mention is its (start, end) tokens, so a one-index mention [i] is [i, i]; `as-written`: the "
        "indices exactly as the file gives them, as corefeval compares tuples ([10] and [10, 10] differ).",
    )
    repeats: str = quirk(
        "merge",
        "A mention occurring twice on one side: `merge` keeps its first occurrence on each side; "
        "`response-repeats-of-key-mentions` is v8.01's rule (only response repeats of key mentions are removed, "
        "other repeats count twice); `keep` removes nothing, as corefeval.",
    )
    max_removed_repeats: int | None = quirk(
        None,
        "v8.01 refuses to score when it removes more than 10 repeated response mentions (counted over the whole "
        "file pair for one metric).",
    )
    blanc_parts: str = quirk(
        "both",
        "BLANC leaves out the coreference (or non-coreference) part when `key` (v8.01, Recasens & Hovy 2011) or "
        "`both` key and response (Luo et al. 2014) have no such links.",
    )

    def __post_init__(self) -> None:
        for name, table in (
            ("definitions", DEFINITIONS),
            ("mention_identity", MENTION_IDENTITY),
            ("repeats", REPEATS),
        ):
            if getattr(self, name) not in table:
                raise ValueError(f"{self.name}: {name} must be one of {', '.join(table)}")
        unknown = set(self.metrics) - set(DEFINITIONS[self.definitions])
        if unknown:
            raise ValueError(f"{self.name}: no {self.definitions} definition of {', '.join(sorted(unknown))}")

    def measures(self) -> dict[str, Callable]:
        """Metric name → the function that counts it on one document, in report order."""
        table = DEFINITIONS[self.definitions]
        return {name: table[name] for name in METRICS if name in self.metrics}

    def count(self, key, response) -> dict[str, CorefCounts | BlancCounts]:
        """Each metric's counts on one document's clusterings, in report order; the reference definitions
        share one :class:`~nlpbench.metrics.coref.Overlap` of the two."""
        measures = self.measures()
        if self.definitions == "reference":
            overlap = reference.Overlap(key, response)
            return {name: measure(key, response, overlap=overlap) for name, measure in measures.items()}
        return {name: measure(key, response) for name, measure in measures.items()}

    def identify(self, mention: CorefMention) -> Hashable:
        return MENTION_IDENTITY[self.mention_identity](mention)

    def identified(self, clusters: Iterable[Cluster]) -> list[tuple[Hashable, ...]]:
        """Each cluster's mentions as :meth:`identify` gives them."""
        identify = MENTION_IDENTITY[self.mention_identity]
        clusters = list(clusters)
        if identify is span_of and set(map(len, itertools.chain.from_iterable(clusters))) <= {2}:
            return [cluster.mentions for cluster in clusters]  # span_of gives each (start, end) itself
        return [tuple(map(identify, cluster.mentions)) for cluster in clusters]

    def prepare(self, key, response) -> reference.Prepared:
        """Apply this profile's rule for repeated mentions: ``(key, response, removed, kept)``."""
        return REPEATS[self.repeats](key, response)

    def values(self, counts: CorefCounts | BlancCounts) -> tuple[float, float, float]:
        """(recall, precision, F1) of summed counts under this profile."""
        if isinstance(counts, BlancCounts):
            return blanc_scores(counts, self.blanc_parts)
        return counts.recall, counts.precision, counts.f1


STANDARD = register(
    CorefProfile(
        task="coref",
        name="standard",
        summary="Published definitions on clean clusters: repeats merged, BLANC parts from both sides.",
        reference="Pradhan et al. 2014 (MUC, B³, CEAF, BLANC), Luo et al. 2014 (BLANC), Moosavi & Strube 2016 (LEA)",
    )
)

CONLL2012 = register(
    CorefProfile(
        task="coref",
        name="conll2012",
        summary="The reference scorer v8.01 and its LEA branch exactly (its counts, its unrounded values).",
        reference="conll/reference-coreference-scorers v8.01 (master f49f3f8), LEA-scorer branch (772e5a3)",
        repeats="response-repeats-of-key-mentions",
        max_removed_repeats=10,
        blanc_parts="key",
    )
)

E2E = register(
    CorefProfile(
        task="coref",
        name="e2e",
        summary="e2e-coref metrics.py as corefeval 0.0.2 has it (the OMIn / trusted_ke scorer).",
        reference="PyPI coreference-eval 0.0.2 (tollefj/coreference-eval 8d785bd), from kentonl/e2e-coref metrics.py",
        definitions="e2e",
        metrics=("muc", "bcub", "ceafe", "lea"),
        mention_identity="as-written",
        repeats="keep",
    )
)
