"""``score linking``: entity links scored strong, weak and flex, and their ontology similarity.

Gold entities and predicted links are grouped by document and counted in
each mode under the profile's pairing (:mod:`nlpbench.metrics.linking`); the
rows sum the counts over documents. With an ontology file, the matched pairs
of each mode also get the mean ``class`` and ``jc`` similarity of gold and
predicted QIDs (:mod:`nlpbench.metrics.ontology`), computed locally.

trusted_ke sent its pairs to KGTK's similarity service, which scores only the
first ``file_api_max_lines`` (25 in its repository's configuration) rows of a
request: the published class and JC values depend on that deployment and on
the live Wikidata counts, and are not reproduced here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from functools import partial
from typing import cast

from nlpbench import files, profiles
from nlpbench.errors import InputError, collected_warnings
from nlpbench.files import Input, Source
from nlpbench.formats import jsonl, omin
from nlpbench.formats import ontology as ontology_format
from nlpbench.metrics.counts import PRF
from nlpbench.metrics.linking import MODE, MODES, LinkPair, mean_similarity
from nlpbench.metrics.ontology import class_similarity, jc_similarity
from nlpbench.model import GoldEntity, LinkedMention, Ontology
from nlpbench.profiles.linking import LinkingProfile
from nlpbench.report import Report
from nlpbench.report.model import Row
from nlpbench.tasks import collector_paused, register
from nlpbench.tasks.coverage import Coverage, listed, no_gold

FORMATS = ("omin", "jsonl")
SIMILARITIES = {"class": class_similarity, "jc": jc_similarity}


@dataclass
class _Tally:
    totals: dict[str, PRF] = field(default_factory=lambda: {mode: PRF() for mode in MODES})
    pairs: dict[str, list[LinkPair]] = field(default_factory=lambda: {mode: [] for mode in MODES})
    unscored: dict[str, int] = field(default_factory=lambda: dict.fromkeys(MODES, 0))
    per_document: list[Row] = field(default_factory=list)


def _read_gold(path: Source, fmt: str) -> Iterable[GoldEntity]:
    return omin.read_gold_links(path) if fmt == "omin" else jsonl.read_gold_links(path)


def _read_pred(path: Source, fmt: str, qid_column: str) -> Iterable[LinkedMention]:
    return omin.read_predicted_links(path, qid_column) if fmt == "omin" else jsonl.read_predicted_links(path)


def _by_document(items: Iterable) -> dict[str, list]:
    grouped: dict[str, list] = {}
    for item in items:
        grouped.setdefault(item.doc_id, []).append(item)
    return grouped


@register(
    "linking",
    "Entity linking: strong, weak and flex P/R/F1, ontology similarity",
    "linking",
    formats=("omin", "jsonl"),
    files=("ontology",),
)
def score_linking(
    gold: Input,
    pred: Input,
    *,
    profile: str = "standard",
    gold_format: str = "omin",
    pred_format: str | None = None,
    qid_column: str = "qids",
    ontology: Input | None = None,
    gold_documents_only: bool = False,
    on_document: Callable[[str], None] | None = None,
) -> Report:
    """Score predicted links against gold entities in the three modes, and their similarity given an ontology.

    ``qid_column`` names the QID column of an OMIn tool file (BLINK:
    ``bi_qid`` or ``cross_qid``); ``gold_documents_only`` ignores predictions
    for documents the gold does not have.
    """
    chosen = cast(LinkingProfile, profiles.get("linking", profile))
    pred_format = pred_format or gold_format
    for fmt in (gold_format, pred_format):
        if fmt not in FORMATS:
            raise InputError(f"unknown entity-linking format {fmt!r}; known: {', '.join(FORMATS)}")
    tally, coverage = _Tally(), Coverage(gold_documents_only)
    with collected_warnings() as warnings, collector_paused():
        known = ontology_format.read(files.source(ontology)) if ontology is not None else None
        gold_docs = _by_document(_read_gold(files.source(gold), gold_format))
        if not gold_docs:
            raise no_gold(gold)
        pred_docs = _by_document(_read_pred(files.source(pred), pred_format, qid_column))
        for doc_id in [*gold_docs, *(d for d in pred_docs if d not in gold_docs)]:
            if not coverage.admit(doc_id, doc_id in gold_docs, doc_id in pred_docs):
                continue
            _score_document(doc_id, gold_docs.get(doc_id, []), pred_docs.get(doc_id, []), chosen, tally)
            if on_document:
                on_document(doc_id)
        rows = _score_rows(tally, chosen)
        if known is not None:
            rows += _similarity_rows(tally, chosen, known, warnings)
    inputs = {"gold": str(gold), "pred": str(pred), "gold_format": gold_format, "pred_format": pred_format}
    if pred_format == "omin":
        inputs["qid_column"] = qid_column
    if ontology is not None:
        inputs["ontology"] = str(ontology)
    return Report(
        task="linking",
        profile=chosen.name,
        inputs=inputs,
        scores=rows,
        per_document=tally.per_document,
        warnings=coverage.warnings() + _unscored(tally) + warnings,
    )


def _score_document(
    doc_id: str, gold: list[GoldEntity], pred: list[LinkedMention], profile: LinkingProfile, tally: _Tally
) -> None:
    pred = [replace(p, mention=p.mention.upper()) for p in pred]
    if profile.upper_case_gold:
        gold = [replace(g, choices=tuple((m and m.upper(), q) for m, q in g.choices)) for g in gold]
    for mode in MODES:
        counts = profile.counting(gold, pred, MODE[mode])
        tally.totals[mode] += counts.prf
        tally.pairs[mode] += counts.pairs
        tally.unscored[mode] += counts.unscored
        tally.per_document.append({"document": doc_id, "metric": mode, **_fields(counts.prf, profile)})


def _fields(prf: PRF, profile: LinkingProfile) -> Row:
    return {
        "tp": prf.tp,
        "fp": prf.fp,
        "fn": prf.fn,
        "precision": profile.value(prf.precision),
        "recall": profile.value(prf.recall),
        "f1": profile.value(prf.f1),
    }


def _score_rows(tally: _Tally, profile: LinkingProfile) -> list[Row]:
    return [{"metric": mode, **_fields(tally.totals[mode], profile)} for mode in MODES]


def _similarity_rows(tally: _Tally, profile: LinkingProfile, known: Ontology, warnings: list[str]) -> list[Row]:
    rows = []
    missing = sorted(
        {q for pairs in tally.pairs.values() for p in pairs for q in (p.gold_qid, p.predicted_qid)} - set(known.nodes)
    )
    if missing:
        warnings.append(
            f"{len(missing)} QIDs are not in the ontology; their pairs get no similarity: {listed(missing)}"
        )
    for name, measure in SIMILARITIES.items():
        for mode in MODES:
            mean = mean_similarity(
                tally.pairs[mode], partial(measure, known), best_per_mention=profile.best_per_mention
            )
            rows.append(
                {
                    "metric": name,
                    "mode": mode,
                    "pairs": mean.pairs,
                    "unscored": mean.unscored,
                    "averaged": mean.averaged,
                    "similarity": profile.value(mean.similarity),
                }
            )
    return rows


def _unscored(tally: _Tally) -> list[str]:
    unscored = ", ".join(f"{n} in {mode}" for mode, n in tally.unscored.items() if n)
    return [f"gold entities without a usable (mention, QID) choice are not scored: {unscored}"] if unscored else []
