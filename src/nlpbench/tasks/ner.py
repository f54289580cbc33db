"""``score ner``: named entities scored as SemEval-2013 did (strict, exact, partial, type).

Inputs are documents of any span format (CoNLL BIO, JSONL, brat, …), whose
entities are compared in tokens when both sides carry the same tokens and in
characters otherwise, or OMIn CSVs (``--gold-format omin``), whose mentions
are strings located in the tokens of a token source (``--tokens``) under the
profile's rules. Each document is reduced to SemEval counts by scheme and
label; the rows are their sums over documents (micro).

A mention that cannot be located is kept, with a distinct empty span before
the document that overlaps and equals nothing: a gold one is missed, a
predicted one spurious, and both are reported.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import count
from typing import cast

from nlpbench import files, profiles
from nlpbench.errors import InputError, collected_warnings
from nlpbench.files import Input, Source
from nlpbench.formats import omin
from nlpbench.metrics.mentions import TokenView
from nlpbench.metrics.ner import SCHEMES, Entity, NerCounts, SemEval, score_entities
from nlpbench.model import Document, Mention, pair_documents
from nlpbench.profiles.ner import LABEL_SETS, NerProfile
from nlpbench.report import Report
from nlpbench.report.model import Row
from nlpbench.tasks import collector_paused, register, side_documents
from nlpbench.tasks.coverage import Coverage, listed

OMIN = "omin"
#: The one label of an untyped run (``untyped_gold_label`` None and gold without types).
UNTYPED = "ENTITY"


def label_set(labels: str | None) -> tuple[str, ...] | None:
    """A named label set (``conll03``, ``ontonotes``, ``ace05``, ``ace05_nltk``, ``scierc``) or a comma list."""
    if labels is None:
        return None
    if labels in LABEL_SETS:
        return LABEL_SETS[labels]
    listed = tuple(dict.fromkeys(label.strip() for label in labels.split(",") if label.strip()))
    if not listed:
        raise InputError(f"--labels {labels!r}: give a label set ({', '.join(LABEL_SETS)}) or labels A,B,…")
    return listed


@dataclass
class _Run:
    """What one scoring run needs and collects."""

    profile: NerProfile
    labels: tuple[str, ...] | None
    untyped: bool = False
    total: NerCounts = field(default_factory=NerCounts)
    per_document: list[Row] = field(default_factory=list)
    coverage: Coverage = field(default_factory=Coverage)
    unfound: dict[str, list[str]] = field(default_factory=lambda: {"gold": [], "prediction": []})
    fixes: list[str] = field(default_factory=list)

    def score(self, doc_id: str, gold: Sequence[Entity], pred: Sequence[Entity]) -> None:
        gold = self.profile.order_gold(gold)
        counts = score_entities(gold, pred, self.profile.matcher, None if self.untyped else self.labels)
        self.total += counts
        for scheme in SCHEMES:
            self.per_document.append(
                {"document": doc_id, "metric": scheme, **_fields(counts.get(scheme), self.profile)}
            )


@register(
    "ner",
    "Named entities (SemEval-2013): strict, exact, partial, type",
    "ner",
    formats=("conll", "jsonl", "omin"),
    files=("tokens",),
    in_memory=True,
)
def score_ner(
    gold: Input,
    pred: Input,
    *,
    profile: str = "standard",
    gold_format: str = "conll",
    pred_format: str | None = None,
    labels: str | None = None,
    tokens: Input | None = None,
    gold_documents_only: bool = False,
    on_document: Callable[[str], None] | None = None,
) -> Report:
    """Score predicted entities against gold under a profile of :mod:`nlpbench.profiles.ner`.

    ``labels`` keeps both sides to a label set; ``tokens`` is the token
    source OMIn mentions are located in; ``gold_documents_only`` ignores
    predictions for documents the gold does not have.
    """
    chosen = cast(NerProfile, profiles.get("ner", profile))
    pred_format = pred_format or gold_format
    if chosen.needs_label_set and labels is None:
        raise InputError(f"the {chosen.name} profile needs --labels (one of {', '.join(LABEL_SETS)})")
    run = _Run(chosen, label_set(labels), coverage=Coverage(gold_documents_only or chosen.gold_documents_only))
    inputs: dict = {"gold": str(gold), "pred": str(pred), "gold_format": gold_format, "pred_format": pred_format}
    with collected_warnings() as warnings, collector_paused():
        if OMIN in (gold_format, pred_format):
            if gold_format != pred_format:
                raise InputError("OMIn mention files are scored against OMIn mention files only")
            if tokens is None:
                raise InputError("OMIn mentions need --tokens (the token source, test.english.jsonlines)")
            inputs["tokens"] = str(tokens)
            _score_omin(files.source(gold), files.source(pred), files.source(tokens), run, on_document)
        else:
            gold_docs = side_documents(gold, gold_format)
            pred_docs = side_documents(pred, pred_format)
            _score_documents(gold_docs, pred_docs, run, on_document)
    run.coverage.check_gold(gold)
    inputs["labels"] = labels
    if run.fixes:
        inputs["token_source_fixes"] = sorted(run.fixes)
    return Report(
        task="ner",
        profile=chosen.name,
        inputs=inputs,
        scores=_score_rows(run),
        per_document=run.per_document,
        warnings=_run_warnings(run) + warnings,
    )


# --- documents with spans ----------------------------------------------------------------------------------------


def _score_documents(gold_docs, pred_docs, run: _Run, on_document) -> None:
    for doc_id, gold_doc, pred_doc in pair_documents(gold_docs, pred_docs):
        if not run.coverage.admit(doc_id, gold_doc is not None, pred_doc is not None):
            continue
        unit_tokens = _shared_tokens(gold_doc, pred_doc)
        gold = _entities(gold_doc, unit_tokens, run, gold=True)
        pred = _entities(pred_doc, unit_tokens, run, gold=False)
        run.score(doc_id, gold, pred)
        if on_document:
            on_document(doc_id)


def _shared_tokens(gold_doc: Document | None, pred_doc: Document | None) -> bool:
    """Whether entities are compared in tokens: both sides (that exist) carry tokens, and the same number of them."""
    docs = [d for d in (gold_doc, pred_doc) if d is not None]
    tokenized = [d for d in docs if "tokens" in d.metadata]
    if len(tokenized) != len(docs):
        if (
            gold_doc is not None
            and pred_doc is not None
            and gold_doc.text is not None
            and pred_doc.text is not None
            and gold_doc.text != pred_doc.text
        ):
            raise InputError("the gold and predicted texts differ: offsets cannot be compared", record=_doc(docs[0]))
        return False
    if (
        gold_doc is not None
        and pred_doc is not None
        and len(gold_doc.metadata["tokens"]) != len(pred_doc.metadata["tokens"])
    ):
        raise InputError(
            f"{len(gold_doc.metadata['tokens'])} gold tokens but {len(pred_doc.metadata['tokens'])} predicted ones",
            record=_doc(gold_doc),
        )
    return True


def _doc(document: Document) -> str:
    return f"document {document.id}"


def _entities(document: Document | None, in_tokens: bool, run: _Run, *, gold: bool) -> list[Entity]:
    if document is None:
        return []
    starts = [s for s, _ in document.metadata["tokens"]] if in_tokens else []
    ends = [e for _, e in document.metadata["tokens"]] if in_tokens else []
    entities = []
    for annotation in document.annotations:
        start, end = annotation.start, annotation.end
        if start == end:
            raise InputError(f"empty entity at {start} ({annotation.label})", record=_doc(document))
        if in_tokens:
            first, last = bisect.bisect_left(starts, start), bisect.bisect_left(ends, end)
            if first == len(starts) or starts[first] != start or last == len(ends) or ends[last] != end:
                raise InputError(f"entity {start}-{end} does not start and end on tokens", record=_doc(document))
            start, end = first, last + 1
        entities.append(Entity(start, end, _label(annotation.label, run, gold=gold)))
    return entities


def _label(label: str | None, run: _Run, *, gold: bool) -> str:
    if gold:
        return label if label is not None else (run.profile.untyped_gold_label or UNTYPED)
    if label is None:
        return UNTYPED
    return (run.profile.label_map or {}).get(label, label)


# --- OMIn mention strings ----------------------------------------------------------------------------------------


def _score_omin(gold: Source, pred: Source, tokens: Source, run: _Run, on_document) -> None:
    gold_docs = list(omin.read_ner(gold))
    pred_docs = omin.read_ner(pred)
    untyped = any(m.label is None for d in gold_docs for m in d.metadata["mentions"])
    run.untyped = untyped and run.profile.untyped_gold_label is None
    wanted = {d.id for d in gold_docs}
    sources = _token_sources(tokens, wanted, run.coverage.gold_documents_only)
    for doc_id, gold_doc, pred_doc in pair_documents(gold_docs, pred_docs):
        if not run.coverage.admit(doc_id, gold_doc is not None, pred_doc is not None):
            continue
        if doc_id not in sources:
            raise InputError(f"document {doc_id} is not in the token source", tokens)
        view = TokenView(_fixed_tokens(doc_id, sources[doc_id], run))
        placeholders = count(-1, -1)
        entities = []
        for side, doc in (("gold", gold_doc), ("prediction", pred_doc)):
            mentions: list[Mention] = doc.metadata["mentions"] if doc is not None else []
            entities.append(_located(doc_id, mentions, view, placeholders, run, side))
        run.score(doc_id, *entities)
        if on_document:
            on_document(doc_id)


def _token_sources(path: Source, wanted: set[str], only_gold: bool) -> dict[str, list[str]]:
    """Each document's tokens, upper-cased (all documents, or only ``wanted`` ones)."""
    sources = {}
    for document in omin.read_token_source(path):
        if only_gold and document.id not in wanted:
            continue
        text = document.text or ""
        sources[document.id] = [text[s:e].upper() for s, e in document.metadata["tokens"]]
    return sources


def _fixed_tokens(doc_id: str, tokens: list[str], run: _Run) -> list[str]:
    """The tokens after the profile's ``token_override`` and ``token_restorations``; each change is recorded."""
    override = (run.profile.token_override or {}).get(doc_id)
    if override is not None:
        tokens = list(override)
        run.fixes.append(f"{doc_id}: token_override replaced its tokens ({len(tokens)} tokens)")
    else:
        tokens = list(tokens)
    for fix in run.profile.token_restorations:
        if fix.doc_id == doc_id and fix.index < len(tokens) and tokens[fix.index] == fix.was:
            tokens[fix.index] = fix.becomes
            run.fixes.append(f"{doc_id}: token_restorations turned token {fix.index} {fix.was} into {fix.becomes}")
    return tokens


def _located(
    doc_id: str, mentions: list[Mention], view: TokenView, placeholders: Iterator[int], run: _Run, side: str
) -> list[Entity]:
    gold = side == "gold"
    upper = not gold or run.profile.upper_case_gold
    try:
        spans = run.profile.locate([m.text.upper() if upper else m.text for m in mentions], view)
    except ValueError as error:
        raise InputError(str(error), record=f"document {doc_id}") from None
    entities = []
    for mention, span in zip(mentions, spans, strict=True):
        label = _label(mention.label, run, gold=gold)
        if run.untyped:
            if not gold and run.labels is not None and label not in run.labels:
                continue
            label = UNTYPED
        if span is None:
            run.unfound[side].append(f"{doc_id} (a mention of {len(mention.text)} characters)")
            position = next(placeholders)
            span = (position, position)
        entities.append(Entity(span[0], span[1], label))
    return entities


# --- rows and warnings -------------------------------------------------------------------------------------------


def _fields(counts: SemEval, profile: NerProfile) -> Row:
    return {
        "cor": counts.cor,
        "inc": counts.inc,
        "par": counts.par,
        "mis": counts.mis,
        "spu": counts.spu,
        "possible": counts.possible,
        "actual": counts.actual,
        "precision": profile.value(counts.precision),
        "recall": profile.value(counts.recall),
        "f1": profile.value(counts.f1),
    }


def _score_rows(run: _Run) -> list[Row]:
    rows = [{"metric": scheme, **_fields(run.total.get(scheme), run.profile)} for scheme in SCHEMES]
    if not run.untyped:
        for scheme in SCHEMES:
            for label in run.total.labels():
                rows.append({"metric": scheme, "label": label, **_fields(run.total.get(scheme, label), run.profile)})
    return rows


def _run_warnings(run: _Run) -> list[str]:
    messages = run.coverage.warnings()
    for side, outcome in (("gold", "missed"), ("prediction", "spurious")):
        items = run.unfound[side]
        if items:
            messages.append(
                f"{len(items)} {side} mentions are not in the tokens of their document and count as {outcome}: "
                f"{listed(items)}"
            )
    if run.untyped:
        messages.append("the gold has no types: entities are compared by boundaries only")
    return messages
