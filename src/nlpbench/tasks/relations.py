"""``score relations``: relation triples scored strict and boundaries, per type, micro and macro.

Inputs are documents with entities and relations (brat ``R`` lines, JSONL
``relations``: any format of ``nlpbench formats``), whose arguments are
compared by span, or surface triples (``omin-re``: the OMIn ``re.csv``;
``jsonl-triples``), whose arguments are compared by their normalised text.
Documents pair by id; a document on one side only is scored against nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from nlpbench import files, formats, profiles
from nlpbench.errors import InputError, collected_warnings
from nlpbench.files import Input, Source
from nlpbench.formats import jsonl, omin
from nlpbench.metrics.counts import PRF
from nlpbench.metrics.relations import BY, MODES, macro, relation_counts, type_key
from nlpbench.model import Document, Triple, UnknownArgument, pair_documents, triples_of
from nlpbench.profiles.relations import RelationProfile
from nlpbench.report import Report
from nlpbench.report.model import Row
from nlpbench.tasks import collector_paused, register
from nlpbench.tasks.coverage import Coverage

#: Formats of surface triples, which have no spans; any other name is a document format.
TRIPLE_FORMATS: dict[str, Callable[[Source], Iterator[Triple]]] = {
    "omin-re": omin.read_triples,
    "jsonl-triples": jsonl.read_triples,
}


def _triples(path: Source, fmt: str) -> Iterator[tuple[str, list[Triple]]]:
    """``(doc_id, triples)`` per document, in the order documents first appear."""
    if fmt in TRIPLE_FORMATS:
        grouped: dict[str, list[Triple]] = {}
        for triple in TRIPLE_FORMATS[fmt](path):
            grouped.setdefault(triple.doc_id, []).append(triple)
        yield from grouped.items()
        return
    for document in formats.get(fmt).read(path):
        yield document.id, _document_triples(document, path)


def _document_triples(document: Document, path: Source) -> list[Triple]:
    try:
        return list(triples_of(document))
    except UnknownArgument as error:
        raise InputError(str(error), path, f"document {document.id}") from None


def _as_documents(items: Iterable[tuple[str, list[Triple]]]) -> Iterator[Document]:
    for doc_id, triples in items:
        yield Document(doc_id, metadata={"triples": triples})


@dataclass
class _Tally:
    by_type: dict[tuple[str, str], PRF] = field(default_factory=dict)
    per_document: list[Row] = field(default_factory=list)
    outside: int = 0


def relation_types(value: str | None) -> tuple[str, ...] | None:
    """``A,B,…`` or ``@FILE`` (one type per line) as a tuple of types; None when not given."""
    if value is None:
        return None
    if value.startswith("@"):
        path = Path(value[1:])
        lines = files.check_lines(files.read_text(path), path).splitlines()
        listed_types = tuple(dict.fromkeys(line.strip() for line in lines if line.strip()))
    else:
        listed_types = tuple(dict.fromkeys(t.strip() for t in value.split(",") if t.strip()))
    if not listed_types:
        raise InputError(f"--relation-types {value!r} lists no type")
    return listed_types


@register(
    "relations",
    "Relation extraction: strict and boundaries triples, per type, micro and macro",
    "relations",
    formats=("brat", "jsonl", "omin-re", "jsonl-triples"),
)
def score_relations(
    gold: Input,
    pred: Input,
    *,
    profile: str = "standard",
    gold_format: str = "brat",
    pred_format: str | None = None,
    by: str | None = None,
    types: str | None = None,
    gold_documents_only: bool = False,
    on_document: Callable[[str], None] | None = None,
) -> Report:
    """Score predicted triples against gold.

    ``by`` compares arguments by ``span`` or ``text`` (default: span when
    both sides have spans); ``types`` (``A,B`` or ``@file``) keeps the
    relation types scored, and under ``rebel`` is the list macro averages
    run over.
    """
    chosen = cast(RelationProfile, profiles.get("relations", profile))
    pred_format = pred_format or gold_format
    surface = gold_format in TRIPLE_FORMATS or pred_format in TRIPLE_FORMATS
    by = by or ("text" if surface else "span")
    if by not in BY:
        raise InputError(f"unknown comparison {by!r}; known: {', '.join(BY)}")
    if by == "span" and surface:
        raise InputError(f"{gold_format if gold_format in TRIPLE_FORMATS else pred_format} triples have no spans")
    listed_types = relation_types(types)
    scope = tuple(dict.fromkeys(type_key(t, by) for t in listed_types)) if listed_types else None
    tally, coverage = _Tally(), Coverage(gold_documents_only)
    with collected_warnings() as warnings, collector_paused():
        gold_docs = _as_documents(_triples(files.source(gold), gold_format))
        pred_docs = _as_documents(_triples(files.source(pred), pred_format))
        for doc_id, gold_doc, pred_doc in _paired(gold_docs, pred_docs, gold, pred):
            if not coverage.admit(doc_id, gold_doc is not None, pred_doc is not None):
                continue
            gold_triples = gold_doc.metadata["triples"] if gold_doc else []
            pred_triples = pred_doc.metadata["triples"] if pred_doc else []
            _score_document(doc_id, gold_triples, pred_triples, by, scope, chosen, tally)
            if on_document:
                on_document(doc_id)
    coverage.check_gold(gold)
    messages = coverage.warnings()
    if tally.outside:
        messages.append(f"{tally.outside} triples have a relation type outside --relation-types and were not scored")
    inputs: dict[str, Any] = {
        "gold": str(gold),
        "pred": str(pred),
        "gold_format": gold_format,
        "pred_format": pred_format,
        "by": by,
    }
    if listed_types:
        inputs["relation_types"] = list(listed_types)
    return Report(
        task="relations",
        profile=chosen.name,
        inputs=inputs,
        scores=_score_rows(tally, scope, chosen),
        per_document=tally.per_document,
        warnings=messages + warnings,
    )


def _paired(gold_docs, pred_docs, gold, pred):
    try:
        yield from pair_documents(gold_docs, pred_docs)
    except ValueError as error:
        raise InputError(str(error), f"{gold} / {pred}") from None


def _score_document(
    doc_id: str,
    gold: list[Triple],
    pred: list[Triple],
    by: str,
    scope: tuple[str, ...] | None,
    profile: RelationProfile,
    tally: _Tally,
) -> None:
    if scope is not None:
        tally.outside += sum(1 for t in (*gold, *pred) if type_key(t.label, by) not in scope)
    for mode in MODES:
        try:
            counts = relation_counts(gold, pred, mode, by=by, distinct=profile.distinct, types=scope)
        except ValueError as error:
            raise InputError(str(error), record=f"document {doc_id}") from None
        total = PRF()
        for label, prf in counts.items():
            tally.by_type[mode, label] = tally.by_type.get((mode, label), PRF()) + prf
            total += prf
        tally.per_document.append({"document": doc_id, "metric": mode, **_fields(total, profile)})


def _fields(prf: PRF, profile: RelationProfile) -> Row:
    precision, recall, f1 = (profile.present(v) for v in profile.values(prf))
    return {"tp": prf.tp, "fp": prf.fp, "fn": prf.fn, "precision": precision, "recall": recall, "f1": f1}


def _score_rows(tally: _Tally, scope: tuple[str, ...] | None, profile: RelationProfile) -> list[Row]:
    rows: list[Row] = []
    for mode in MODES:
        seen = sorted(label for m, label in tally.by_type if m == mode)
        averaged = list(scope) if scope is not None and profile.macro_over_listed_types else seen
        per_type = {label: tally.by_type.get((mode, label), PRF()) for label in averaged}
        total = sum((tally.by_type[mode, label] for label in seen), PRF())
        rows.append({"metric": mode, **_fields(total, profile)})
        precision, recall, f1 = (profile.present(v) for v in macro(per_type.values(), profile.values))
        rows.append(
            {
                "metric": mode,
                "average": "macro",
                "types": len(per_type),
                "precision": precision,
                "recall": recall,
                "f1": f1,
            }
        )
        for label in sorted({*seen, *averaged}):
            rows.append({"metric": mode, "label": label, **_fields(tally.by_type.get((mode, label), PRF()), profile)})
    return rows
