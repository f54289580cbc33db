"""Profiles of the PHI span task (``nlpbench score sandbox``).

- ``standard``: the published definitions done right: one-to-one matching, no
  collapsing, whitespace tokens at their true offsets, unrounded values.
- ``nlpsandbox``: nlpsandbox-client 4.3.1 ``evaluation.py``, the scorer of the
  NLP Sandbox PHI challenges from 2022 on.
- ``nlpsandbox-legacy``: the same scorer before its January 2022 tokeniser
  change (nlpsandbox-client up to 4.2), with its whitespace tokens.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from nlpbench.metrics.counts import PRF
from nlpbench.metrics.spans import (
    SpanRules,
    Tokenizer,
    Unit,
    whitespace_tokens,
)
from nlpbench.model import PhiType
from nlpbench.profiles.base import Profile, quirk, register
from nlpbench.profiles.treebank import treebank_search_tokens


def legacy_whitespace_tokens(text: str | None, length: int) -> list[Unit]:
    """Tokens as nlpsandbox-client up to 4.2 made them, as offsets from the annotation's start.

    The text (whatever its length) is split on runs of whitespace (leading or trailing whitespace
    gives an empty token) and each token is assumed to follow the previous one
    after exactly one character, whatever the whitespace really was.
    """
    tokens: list[Unit] = []
    offset = 0
    for token in re.split(r"\s+", text or ""):
        tokens.append((offset, len(token)))
        offset += len(token) + 1
    return tokens


def round_then_f1(prf: PRF, digits: int) -> tuple[float, float, float]:
    """Precision and recall rounded to ``digits``, then F1 = round(2·(P·R)/(P+R)) of the rounded values.

    Empty denominators give 0, as nlpsandbox-client does.
    """
    precision = round(prf.tp / (prf.tp + prf.fp), digits) if prf.tp + prf.fp else 0
    recall = round(prf.tp / (prf.tp + prf.fn), digits) if prf.tp + prf.fn else 0
    if precision + recall == 0:
        return precision, recall, 0
    return precision, recall, round(2 * ((precision * recall) / (precision + recall)), digits)


@dataclass(frozen=True)
class SpanProfile(Profile):
    """How ``score sandbox`` compares annotations and presents the numbers."""

    tokenize: Tokenizer = quirk(whitespace_tokens, "How an annotation is cut into tokens.")
    collapse_by_start: bool = quirk(
        False,
        "nlpsandbox-client keys instances by (note, start) in a dict, so of several "
        "annotations that share a start only the last one read is scored.",
    )
    distinct_tokens: bool = quirk(
        False,
        "nlpsandbox-client keys tokens by (note, start, length), so a token that two annotations share counts once.",
    )
    untyped_never_equal: bool = quirk(
        False,
        "nlpsandbox-client reads a missing subtype as NaN, which equals nothing: two "
        "annotations without a subtype never match on type.",
    )
    typed_metric: frozenset[str] = quirk(
        frozenset({"location", "physical_address", "id", "contact"}),
        "The annotation types that get a `type` row; nlpsandbox-client prints NaN for date and person names.",
    )
    type_needs_predictions: frozenset[str] = quirk(
        frozenset(),
        "nlpsandbox-client prints NaN for the address type metric when no prediction "
        "carries an addressType (its noAddressType flag).",
    )
    extra_metrics: bool = quirk(False, "Adds `date_format` (dates) and `hipaa` (locations).")
    list_only: bool = quirk(
        False,
        "nlpsandbox-client iterates each file's top level as a list of annotation records: a "
        "data-node page, patient bundles or a tool response stop it with TypeError. nlpbench "
        "reads them and warns that the official scorer would fail.",
    )
    array_required: bool = quirk(
        False,
        "nlpsandbox-client reads the scored type's array of every record of both files "
        "(record['textContactAnnotations']): a record without it, which the 1.2.0 schema "
        "allows, stops it with KeyError. nlpbench reads the record as holding none and warns "
        "that the official scorer would fail.",
    )
    round_digits: int | None = quirk(
        None,
        "nlpsandbox-client rounds precision and recall to 2 decimals, then computes F1 "
        "from the rounded values and rounds it too.",
    )

    def rules(self, phi: PhiType, tolerance: int) -> SpanRules:
        return SpanRules(
            tokenize=self.tokenize,
            type_attribute=phi.type_attribute,
            collapse_by_start=self.collapse_by_start,
            distinct_tokens=self.distinct_tokens,
            untyped_never_equal=self.untyped_never_equal,
            tolerance=tolerance,
        )

    def metrics(self, phi: PhiType) -> list[str]:
        """The metrics this profile reports for an annotation type, in report order."""
        metrics = ["instance_strict", "instance_relax", "token"]
        if phi.name in self.typed_metric:
            metrics.append("type")
        if self.extra_metrics and phi.name == "date":
            metrics.append("date_format")
        if self.extra_metrics and phi.name in ("location", "physical_address"):
            metrics.append("hipaa")
        return metrics

    def values(self, prf: PRF) -> tuple[float, float, float]:
        """(precision, recall, F1) as this profile reports them."""
        if self.round_digits is None:
            return prf.precision, prf.recall, prf.f1
        return round_then_f1(prf, self.round_digits)


STANDARD = register(
    SpanProfile(
        task="spans",
        name="standard",
        summary="One-to-one matching, whitespace tokens at their offsets, unrounded values.",
        reference="NLP Sandbox metric definitions (instance strict/relax, token, type)",
        typed_metric=frozenset({"location", "physical_address", "id", "contact"}),
        extra_metrics=True,
    )
)

NLPSANDBOX = register(
    SpanProfile(
        task="spans",
        name="nlpsandbox",
        summary="nlpsandbox-client 4.3.1 exactly (Treebank tokens, rounding, start-keyed instances).",
        reference="nlpsandbox-client 4.3.1, nlpsandboxclient/evaluation.py",
        tokenize=treebank_search_tokens,
        collapse_by_start=True,
        distinct_tokens=True,
        untyped_never_equal=True,
        type_needs_predictions=frozenset({"physical_address"}),
        round_digits=2,
        list_only=True,
        array_required=True,
    )
)

NLPSANDBOX_LEGACY = register(
    replace(
        NLPSANDBOX,
        name="nlpsandbox-legacy",
        summary="nlpsandbox-client before 2022 (whitespace tokens one character apart).",
        reference="nlpsandbox-client 4.2.0 and earlier, nlpsandboxclient/evaluation.py",
        tokenize=legacy_whitespace_tokens,
    )
)
