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
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import count
from typing import cast

from nlpbench import files, profiles
from nlpbench.errors import InputError, collected_warnings
from nlpbench.files import Input, Source
from nlpbench.formats import jsonl, omin
from nlpbench.metrics.mentions import TokenView
from nlpbench.metrics.ner import (
    BY_GROUP,
    SCHEMES,
    Entity,
    NerCounts,
    SemEval,
    columns_of,
    entities_of,
    kept,
)
from nlpbench.model import Document, EntityColumns, Mention, TokenDocument, pair_documents
from nlpbench.profiles.ner import LABEL_SETS, NerProfile, keep_order
from nlpbench.report import Report
from nlpbench.report.model import Row
from nlpbench.tasks import InMemory, collector_paused, register, side_documents
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


#: Entities (gold and predicted) a batch gathers before it is scored (:mod:`nlpbench.metrics.ner_batch`).
BATCH = 8192
#: Below this many entities a batch is scored one document at a time in plain Python (the same numbers),
#: which spares a small run loading numpy (about 80 ms of CPU).
SMALL = 256


@dataclass
class _Run:
    """What one scoring run needs and collects; documents are scored in batches as they arrive."""

    profile: NerProfile
    labels: tuple[str, ...] | None
    untyped: bool = False
    total: NerCounts = field(default_factory=NerCounts)
    per_document: list[Row] = field(default_factory=list)
    coverage: Coverage = field(default_factory=Coverage)
    unfound: dict[str, list[str]] = field(default_factory=lambda: {"gold": [], "prediction": []})
    fixes: list[str] = field(default_factory=list)
    on_document: Callable[[str], None] | None = None
    pending: list[tuple[str, EntityColumns, EntityColumns]] = field(default_factory=list)
    pending_entities: int = 0

    def score(self, doc_id: str, gold: EntityColumns, pred: EntityColumns) -> None:
        """Score a document: gold in the profile's order, then both sides kept to the label set in force."""
        if self.profile.order_gold is not keep_order:
            gold = columns_of(self.profile.order_gold(entities_of(gold)))
        labels = None if self.untyped else self.labels
        self.pending.append((doc_id, kept(gold, labels), kept(pred, labels)))
        self.pending_entities += len(gold) + len(pred)
        if self.pending_entities >= BATCH:
            self.flush()

    def flush(self) -> None:
        """Score the pending documents: together when the matcher decides group by group
        (:data:`~nlpbench.metrics.ner.BY_GROUP`) and they are not few, else one by one."""
        rule = BY_GROUP.get(self.profile.matcher)
        labels = None if self.untyped else self.labels
        if rule is None or self.pending_entities < SMALL:
            for doc_id, gold, pred in self.pending:
                counts = self.profile.matcher(entities_of(gold), entities_of(pred), labels)
                self.total += counts
                self._rows(doc_id, [counts.get(scheme) for scheme in SCHEMES])
        else:
            from nlpbench.metrics.ner_batch import batch_counts

            batch = batch_counts([(gold, pred) for _, gold, pred in self.pending], rule)
            self.total += batch.total()
            for (doc_id, _, _), by_scheme in zip(self.pending, batch.document_fields(), strict=True):
                self._rows(doc_id, by_scheme)
        self.pending.clear()
        self.pending_entities = 0

    def _rows(self, doc_id: str, by_scheme: Sequence[SemEval | tuple]) -> None:
        for scheme, counts in zip(SCHEMES, by_scheme, strict=True):
            self.per_document.append({"document": doc_id, "metric": scheme, **_fields(counts, self.profile)})
        if self.on_document:
            self.on_document(doc_id)


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
    coverage = Coverage(gold_documents_only or chosen.gold_documents_only)
    run = _Run(chosen, label_set(labels), coverage=coverage, on_document=on_document)
    inputs: dict = {"gold": str(gold), "pred": str(pred), "gold_format": gold_format, "pred_format": pred_format}
    with collected_warnings() as warnings, collector_paused():
        if OMIN in (gold_format, pred_format):
            if gold_format != pred_format:
                raise InputError("OMIn mention files are scored against OMIn mention files only")
            if tokens is None:
                raise InputError("OMIn mentions need --tokens (the token source, test.english.jsonlines)")
            inputs["tokens"] = str(tokens)
            _score_omin(files.source(gold), files.source(pred), files.source(tokens), run)
        else:
            _score_documents(_side(gold, gold_format), _side(pred, pred_format), run)
        run.flush()
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


def _side(source: Input, fmt: str) -> Iterable[Document | TokenDocument]:
    """A side's documents; JSONL files give their lines of tokens as :class:`~nlpbench.model.TokenDocument`."""
    if fmt == "jsonl" and not isinstance(source, InMemory):
        return jsonl.read_entities(files.source(source))
    return side_documents(source, fmt)


def _score_documents(gold_docs, pred_docs, run: _Run) -> None:
    for doc_id, gold_doc, pred_doc in pair_documents(gold_docs, pred_docs):
        if not run.coverage.admit(doc_id, gold_doc is not None, pred_doc is not None):
            continue
        if _untokenized(gold_doc, pred_doc):
            gold_doc, pred_doc = _alike(gold_doc), _alike(pred_doc)
        unit_tokens = _shared_tokens(gold_doc, pred_doc)
        gold = _entities(gold_doc, unit_tokens, run, gold=True)
        pred = _entities(pred_doc, unit_tokens, run, gold=False)
        run.score(doc_id, gold, pred)


AnyDocument = Document | TokenDocument


def _untokenized(*docs: AnyDocument | None) -> bool:
    """Whether one of the documents (that exist) is a :class:`~nlpbench.model.Document` without tokens."""
    return any(isinstance(d, Document) and "tokens" not in d.metadata for d in docs)


def _alike(document: AnyDocument | None) -> Document | None:
    """A document as :func:`~nlpbench.formats.jsonl.read` gives it: facing one without tokens, the entities of
    both are compared in characters."""
    return document.document() if isinstance(document, TokenDocument) else document


def _token_count(document: AnyDocument) -> int | None:
    if isinstance(document, TokenDocument):
        return len(document.tokens)
    return len(document.metadata["tokens"]) if "tokens" in document.metadata else None


def _shared_tokens(gold_doc: AnyDocument | None, pred_doc: AnyDocument | None) -> bool:
    """Whether entities are compared in tokens: both sides (that exist) carry tokens, and the same number of them."""
    docs = [d for d in (gold_doc, pred_doc) if d is not None]
    counts = [_token_count(d) for d in docs]
    if None in counts:
        if (
            isinstance(gold_doc, Document)
            and isinstance(pred_doc, Document)
            and gold_doc.text is not None
            and pred_doc.text is not None
            and gold_doc.text != pred_doc.text
        ):
            raise InputError("the gold and predicted texts differ: offsets cannot be compared", record=_doc(docs[0]))
        return False
    if len(counts) == 2 and counts[0] != counts[1]:
        raise InputError(f"{counts[0]} gold tokens but {counts[1]} predicted ones", record=_doc(docs[0]))
    return True


def _doc(document: AnyDocument) -> str:
    return f"document {document.id}"


def _entities(document: AnyDocument | None, in_tokens: bool, run: _Run, *, gold: bool) -> EntityColumns:
    if document is None:
        return EntityColumns()
    if isinstance(document, TokenDocument):  # token indices already, labels never None
        columns = document.entities
        label_map = None if gold else run.profile.label_map
        if label_map:
            return EntityColumns(columns.starts, columns.ends, [label_map.get(x, x) for x in columns.labels])
        return columns
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
    return columns_of(entities)


def _label(label: str | None, run: _Run, *, gold: bool) -> str:
    if gold:
        return label if label is not None else (run.profile.untyped_gold_label or UNTYPED)
    if label is None:
        return UNTYPED
    return (run.profile.label_map or {}).get(label, label)


# --- OMIn mention strings ----------------------------------------------------------------------------------------


def _score_omin(gold: Source, pred: Source, tokens: Source, run: _Run) -> None:
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
            entities.append(columns_of(_located(doc_id, mentions, view, placeholders, run, side)))
        run.score(doc_id, *entities)


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


#: The fields of a row, in order: its counts, then its values.
_COUNTS = ("cor", "inc", "par", "mis", "spu", "possible", "actual")
_VALUES = ("precision", "recall", "f1")


def _fields(counts: SemEval | tuple, profile: NerProfile) -> Row:
    """A row's counts and values: of a :class:`~nlpbench.metrics.ner.SemEval`, or given in the order of
    :data:`_COUNTS` and :data:`_VALUES` (:meth:`~nlpbench.metrics.ner_batch.BatchCounts.document_fields`)."""
    if isinstance(counts, SemEval):
        counts = tuple(getattr(counts, name) for name in _COUNTS + _VALUES)
    row: Row = dict(zip(_COUNTS, counts[: len(_COUNTS)], strict=True))
    row.update(zip(_VALUES, map(profile.value, counts[len(_COUNTS) :]), strict=True))
    return row


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
