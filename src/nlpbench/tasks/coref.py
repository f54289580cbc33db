"""``score coref``: coreference scored document by document, counts summed over the key's documents.

For each document of the key: the mentions are identified the profile's way,
repeated mentions handled by its rule, nested mentions and singletons removed
when asked (in that order), then every metric of the profile counts the
document. The report's rows are the summed counts and the values derived from
them (micro-average, as every coreference scorer does), then the CoNLL score,
the mean of the MUC, B³ and CEAFe F1; ``per_document`` has the
same rows for each document.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import cast

from nlpbench import profiles
from nlpbench.errors import InputError, collected_warnings
from nlpbench.files import Input
from nlpbench.formats import coref as coref_formats
from nlpbench.metrics.coref import BlancCounts, CorefCounts, conll_f1, without_nested, without_singletons
from nlpbench.model import CorefDocument, pair_documents
from nlpbench.profiles.coref import CorefProfile
from nlpbench.report import Report
from nlpbench.report.model import Row
from nlpbench.tasks import collector_paused, register
from nlpbench.tasks.coverage import listed, no_gold

Counts = CorefCounts | BlancCounts


@dataclass
class _Tally:
    """Running sums over the documents of one scoring run, and what the warnings report."""

    totals: dict[str, Counts] = field(default_factory=dict)
    per_document: list[Row] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    unscored: list[str] = field(default_factory=list)
    removed: int = 0
    kept: int = 0
    nested: list[int] = field(default_factory=lambda: [0, 0])
    singletons: list[int] = field(default_factory=lambda: [0, 0])


@register(
    "coref",
    "Coreference: mentions, MUC, B³, CEAFm, CEAFe, BLANC, LEA and the CoNLL score",
    "coref",
    sides=("key", "response"),
    formats=("conll2012", "jsonl", "omin-csv"),
)
def score_coref(
    gold: Input,
    pred: Input,
    *,
    profile: str = "standard",
    key_format: str = "conll2012",
    response_format: str | None = None,
    remove_singletons: bool = False,
    remove_nested: bool = False,
    id_column: str | None = None,
    clusters_column: str | None = None,
    on_document: Callable[[str], None] | None = None,
) -> Report:
    """Score the response's clusters (``pred``) against the key's (``gold``).

    ``response_format`` defaults to ``key_format``; ``id_column`` and
    ``clusters_column`` name the columns of a response in ``omin-csv`` (found
    by name otherwise); ``on_document`` is called with each document id as
    it is scored.
    """
    chosen = cast(CorefProfile, profiles.get("coref", profile))
    response_format = response_format or key_format
    tally = _Tally()
    with collected_warnings() as warnings, collector_paused():
        key_docs = coref_formats.read(key_format, gold, words=False)
        response_docs = coref_formats.read(
            response_format, pred, predicted=True, id_column=id_column, clusters_column=clusters_column, words=False
        )
        for doc_id, key_doc, response_doc in pair_documents(key_docs, response_docs):
            if key_doc is None:
                tally.unscored.append(doc_id)
                continue
            if response_doc is None:
                tally.missing.append(doc_id)
            _score_document(doc_id, key_doc, response_doc, chosen, remove_nested, remove_singletons, tally)
            if chosen.max_removed_repeats is not None and tally.removed > chosen.max_removed_repeats:
                raise InputError(
                    f"more than {chosen.max_removed_repeats} repeated response mentions: the reference scorer "
                    "refuses to score this response (profile standard merges repeats)",
                    pred,
                    f"document {doc_id}",
                )
            if on_document:
                on_document(doc_id)
    if not tally.totals:
        raise no_gold(gold)
    warnings[:0] = _warnings(tally, chosen, remove_nested, remove_singletons)
    inputs = {
        "key": str(gold),
        "response": str(pred),
        "key_format": key_format,
        "response_format": response_format,
        "remove_singletons": remove_singletons,
        "remove_nested": remove_nested,
    }
    inputs.update({k: v for k, v in (("id_column", id_column), ("clusters_column", clusters_column)) if v is not None})
    return Report(
        task="coref",
        profile=chosen.name,
        inputs=inputs,
        scores=_rows(tally.totals, chosen),
        per_document=tally.per_document,
        warnings=warnings,
    )


def _score_document(
    doc_id: str,
    key_doc: CorefDocument,
    response_doc: CorefDocument | None,
    profile: CorefProfile,
    remove_nested: bool,
    remove_singletons: bool,
    tally: _Tally,
) -> None:
    key = profile.identified(key_doc.clusters)
    response = profile.identified(response_doc.clusters) if response_doc else []
    key, response, removed, kept = profile.prepare(key, response)
    tally.removed += removed
    tally.kept += kept
    if remove_nested:
        key, key_nested = without_nested(key, _bounds)
        response, response_nested = without_nested(response, _bounds)
        tally.nested[0] += key_nested
        tally.nested[1] += response_nested
    if remove_singletons:
        key, key_singletons = without_singletons(key)
        response, response_singletons = without_singletons(response)
        tally.singletons[0] += key_singletons
        tally.singletons[1] += response_singletons
    counts = profile.count(key, response)
    for name, value in counts.items():
        tally.totals[name] = tally.totals[name] + value if name in tally.totals else value
    tally.per_document.extend({"document": doc_id, **row} for row in _rows(counts, profile))


def _bounds(mention) -> tuple[int, int]:
    return mention[0], mention[-1]


def _rows(counts: dict[str, Counts], profile: CorefProfile) -> list[Row]:
    """One row per metric, then the CoNLL score, then BLANC's coreference and non-coreference parts.

    A metric row carries its four counts before its values; BLANC's own row
    has its values only, its parts (labelled ``coreference`` and
    ``non-coreference``, as v8.01 prints them) carry the link counts.
    """
    rows: list[Row] = []
    parts: list[Row] = []
    for name in profile.measures():
        value = counts.get(name) or (BlancCounts() if name == "blanc" else CorefCounts())
        rows.append({"metric": name, **({} if isinstance(value, BlancCounts) else _counted(value))})
        rows[-1].update(zip(("recall", "precision", "f1"), profile.values(value), strict=True))
        if isinstance(value, BlancCounts):
            for label, part in (("coreference", value.coref), ("non-coreference", value.noncoref)):
                parts.append({"metric": name, "label": label, **_counted(part)})
                parts[-1].update(zip(("recall", "precision", "f1"), profile.values(part), strict=True))
    f1s = {row["metric"]: row["f1"] for row in rows}
    if {"muc", "bcub", "ceafe"} <= set(f1s):
        rows.append({"metric": "conll", "f1": conll_f1(f1s["muc"], f1s["bcub"], f1s["ceafe"])})
    return rows + parts


def _counted(counts: CorefCounts) -> Row:
    return {
        "recall_num": counts.recall_num,
        "recall_den": counts.recall_den,
        "precision_num": counts.precision_num,
        "precision_den": counts.precision_den,
    }


def _warnings(tally: _Tally, profile: CorefProfile, remove_nested: bool, remove_singletons: bool) -> list[str]:
    messages = []
    for ids, what in (
        (tally.missing, "key documents missing from the response, scored against no clusters"),
        (tally.unscored, "response documents not in the key, not scored"),
    ):
        if ids:
            messages.append(f"{what}: {len(ids)} ({listed(ids)})")
    if tally.removed:
        messages.append(f"repeated mentions removed, the first kept (rule {profile.repeats}): {tally.removed}")
    if tally.kept:
        messages.append(f"repeated mentions kept, counting each time (rule {profile.repeats}): {tally.kept}")
    if remove_nested:
        messages.append(f"nested mentions removed: {tally.nested[0]} in the key, {tally.nested[1]} in the response")
    if remove_singletons:
        messages.append(
            f"singleton clusters removed: {tally.singletons[0]} in the key, {tally.singletons[1]} in the response"
        )
    return messages
