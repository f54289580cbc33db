"""``score sandbox``: PHI span annotation scored as the NLP Sandbox did.

For each annotation type, every note is scored on its own (instance strict
and relaxed, token, type and the ``standard`` extras), the counts are summed
over notes (micro), sliced by subtype, and macro-averaged over subtypes.
Several types are scored in one pass: the files are read once, each
annotation tokenised once, and each row carries its ``annotation_type``.
Notes are scored in batches as they stream in, so memory follows the batch,
not the corpus.

Subtype rows slice what the whole matched: true positives and false
negatives by the gold annotation's subtype, false positives by the predicted
one's (``(none)`` when it has none), so recall per gold subtype means the
same for a tool that predicts no subtypes. Dates have no subtype rows: their
``dateFormat`` says how a date is written, not what kind of PHI it is, and
the ``date_format`` metric scores it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field
from statistics import fmean
from typing import TYPE_CHECKING, Protocol, cast

from nlpbench import profiles
from nlpbench.errors import InputError, InputWarning, caught_warnings, warning_lines
from nlpbench.files import Input
from nlpbench.formats import datanode
from nlpbench.metrics.counts import PRF
from nlpbench.metrics.span_small import SMALL, SmallCounts, small_counts
from nlpbench.metrics.spans import SLICED, SpanRules, instance_matching
from nlpbench.model import Document, PhiType, Span, SpanColumns, pair_documents, phi_type
from nlpbench.profiles.spans import SpanProfile
from nlpbench.report import Report
from nlpbench.report.model import Row
from nlpbench.tasks import collector_paused, register
from nlpbench.tasks.coverage import listed, no_gold

if TYPE_CHECKING:  # the batch engine (numpy) is loaded by the first batch of SMALL annotations or more
    from nlpbench.metrics.span_batch import BatchCounts, TokenTable

NO_SUBTYPE = "(none)"
#: The annotations (gold and predicted) a batch gathers before it is scored: few enough that they are
#: still in the processor's cache (a few MB), many enough that numpy's fixed cost per call is spread thin
#: (8,192 scored 20,000 notes 5 to 8 % faster than 2,048, one type or five; BENCHMARKS.md).
BATCH = 8192
#: What ``annotation_type="all"`` scores: the five types of the NLP Sandbox 1.2.0 tool API.
ALL_TYPES = ("date", "person_name", "location", "id", "contact")


@register(
    "sandbox",
    "PHI span annotation (NLP Sandbox): instance strict/relax, token, type",
    "spans",
    formats=("sandbox", "sandbox-bundles", "brat", "bioc", "i2b2", "jsonl"),
    in_memory=True,
)
def score_sandbox(
    gold: Input,
    pred: Input,
    annotation_type: str | Sequence[str] | None = None,
    *,
    profile: str = "standard",
    relax: int = 2,
    errors: int = 0,
    gold_format: str = "sandbox",
    pred_format: str = "sandbox",
    per_document: bool = True,
    on_document: Callable[[str], None] | None = None,
) -> Report:
    """Score predicted annotations of ``annotation_type`` (a type, several, or ``all``) against gold, note by note.

    Without ``annotation_type``, every one of the five types (:data:`ALL_TYPES`) that the
    gold or the predictions hold is scored (:func:`held_types`). ``gold`` and ``pred`` are
    files of ``gold_format`` and ``pred_format``, data-node annotation store URLs, or
    objects whose ``read(labels)`` yields documents.
    ``errors`` asks for up to that many false positives and as many false
    negatives of ``instance_strict`` (per type); ``per_document=False`` leaves
    the per-note rows out, so that memory does not grow with the corpus;
    ``on_document`` is called with each note id as it is scored. With several
    types, every row carries its ``annotation_type``.
    """
    given = [annotation_type] if isinstance(annotation_type, str) else list(annotation_type or ())
    names = list(ALL_TYPES) if "all" in given or not given else list(dict.fromkeys(given))
    scored = _score(gold, pred, names, profile, relax, errors, (gold_format, pred_format), per_document, on_document)
    report = scored.report(scored.runs) if len(names) > 1 else scored.type_report(names[0])
    return report if given else held_types(report)


class DocumentSource(Protocol):
    """One side given as an object, not a file: its ``read(labels)`` yields its documents, those labels read."""

    def read(self, labels: Collection[str] | None = None) -> Iterator[Document]: ...


#: One side of a scoring: a file (on disk or in memory), a data-node annotation store URL, or a :class:`DocumentSource`.
Side = Input | DocumentSource


def score_types(
    gold: Side, pred: Side, annotation_types: Sequence[str], *, profile: str, rows: DocumentRows | None = None
) -> dict[str, Report]:
    """Score each of ``annotation_types`` in one pass, both sides read once as ``-t all`` reads them: each type's
    report, per-document rows and warnings included, is the one ``score_sandbox(gold, pred, that type,
    profile=profile)`` gives. ``rows``: each scored batch's per-document rows are handed to it as they are made,
    not kept in the reports (whose ``per_document`` is then empty)."""
    names = list(dict.fromkeys(annotation_types))
    scored = _score(gold, pred, names, profile, 2, 0, ("sandbox", "sandbox"), True, None, rows)
    return {name: scored.type_report(name) for name in names}


class DocumentRows(Protocol):
    """Where a pass hands each scored batch's per-document rows, instead of keeping them in its reports."""

    def add(self, annotation_type: str, rows: list[Row]) -> None:
        """Take the rows of a batch of notes of ``annotation_type``, in the order a report would hold them."""

    def drop(self, annotation_type: str, metric: str) -> None:
        """Forget the rows of ``metric`` of ``annotation_type`` taken so far: the pass does not report it."""


def _score(
    gold: Side,
    pred: Side,
    names: list[str],
    profile: str,
    relax: int,
    errors: int,
    formats: tuple[str, str],
    per_document: bool,
    on_document: Callable[[str], None] | None,
    rows: DocumentRows | None = None,
) -> _Pass:
    """Read both sides once, in ``formats``, and score every type of ``names`` note by note."""
    chosen = cast(SpanProfile, profiles.get("spans", profile))
    phis = [phi_type(name) for name in names]
    runs = [_Run(phi, chosen.rules(phi, relax), chosen.metrics(phi), errors, per_document, rows) for phi in phis]
    failures: dict[str | None, _OfficialFailure] = {None: _OfficialFailure(chosen)}
    failures.update((phi.name, _OfficialFailure(chosen, phi.array)) for phi in phis)
    scored = _Pass(gold, pred, chosen, relax, errors, runs, failures)
    labels = set(names)
    with caught_warnings() as scored.caught, collector_paused():
        gold_docs = datanode.documents(gold, formats[0], labels=labels, columns=True)
        pred_docs = datanode.documents(pred, formats[1], labels=labels, columns=True)
        gold_notes = 0
        for doc_id, gold_doc, pred_doc in pair_documents(gold_docs, pred_docs):
            gold_notes += gold_doc is not None
            if (gold_doc is not None and gold_doc.metadata) or (pred_doc is not None and pred_doc.metadata):
                for failure in failures.values():  # each looks only at metadata the reader sets
                    failure.check(gold_doc, pred_doc)
            gold_by, pred_by = _by_label(gold_doc, scored.stretched), _by_label(pred_doc, scored.stretched)
            if gold_doc is None:
                scored.only_pred.append(doc_id)
            elif pred_doc is None:
                scored.only_gold.append(doc_id)
            elif gold_doc.text is not None:
                scored.misfits += _misfits(gold_doc.text, doc_id, pred_by, str(pred))
            for run in runs:
                run.add(doc_id, gold_by.get(run.phi.name), pred_by.get(run.phi.name))
            if on_document:
                on_document(doc_id)
        for run in runs:
            run.flush()
    if not gold_notes:
        raise no_gold(str(gold), "notes")
    for run in runs:
        if run.phi.name in chosen.type_needs_predictions and not run.predicted_typed and "type" in run.metrics:
            run.drop("type")
            scored.dropped[run.phi.name] = [
                f"no prediction carries {run.phi.type_attribute}: the type metric is not computed "
                "(nlpsandbox-client reports NaN)"
            ]
    return scored


@dataclass
class _Pass:
    """One pass over both sides that scored several types: each type's run, and what the warnings are made of,
    each thing about annotations tagged with their type so that each type's warnings read as its own pass's."""

    gold: Side
    pred: Side
    profile: SpanProfile
    relax: int
    errors: int
    runs: list[_Run]
    #: the official scorer's failure over every type (key None) and over each type's array alone
    failures: dict[str | None, _OfficialFailure]
    only_gold: list[str] = field(default_factory=list)
    only_pred: list[str] = field(default_factory=list)
    #: (type, where) of each predicted annotation whose text differs from the gold note's
    misfits: list[tuple[str, str]] = field(default_factory=list)
    #: (type, where) of each discontinuous annotation scored as its extent
    stretched: list[tuple[str, str]] = field(default_factory=list)
    #: per type, the message saying its type metric was not computed
    dropped: dict[str, list[str]] = field(default_factory=dict)
    caught: list[InputWarning] = field(default_factory=list)

    def report(self, runs: list[_Run]) -> Report:
        """The report of every type scored: each row carries its ``annotation_type``, each warning counts all types."""
        messages = self._side_warnings(None) + self.failures[None].warnings(self.gold, self.pred)
        messages += [message for run in runs for message in self.dropped.get(run.phi.name, [])]
        messages += [message for run in runs for message in run.warnings(several=True)]
        return self._report(runs, messages + warning_lines(self.caught))

    def type_report(self, name: str) -> Report:
        """The report of type ``name`` alone, as a pass scoring only that type gives it."""
        run = next(run for run in self.runs if run.phi.name == name)
        messages = self._side_warnings(name) + self.failures[name].warnings(self.gold, self.pred)
        messages += self.dropped.get(name, []) + run.warnings(several=False)
        return self._report([run], messages + warning_lines(self.caught, name))

    def _side_warnings(self, name: str | None) -> list[str]:
        misfits = [where for kind, where in self.misfits if name in (None, kind)]
        stretched = [where for kind, where in self.stretched if name in (None, kind)]
        return _side_warnings(self.only_gold, self.only_pred, misfits, stretched)

    def _report(self, runs: list[_Run], messages: list[str]) -> Report:
        several = len(runs) > 1
        names = [run.phi.name for run in runs]
        return Report(
            task="sandbox",
            profile=self.profile.name,
            inputs={
                "gold": str(self.gold),
                "pred": str(self.pred),
                "annotation_type": names if several else names[0],
                "relax": self.relax,
            },
            scores=[row for run in runs for row in run.labelled(run.score_rows(self.profile), several)],
            per_document=[row for run in runs for row in run.labelled(run.per_document, several)],
            warnings=messages,
            errors=[row for run in runs for row in run.labelled(run.errors, several)] if self.errors else None,
        )


def held_types(report: Report) -> Report:
    """A report of every annotation type scored, cut to the types the inputs hold (a gold or predicted
    annotation, instance_strict's TP + FP + FN above 0), with those types as its subject; a report on
    inputs without any annotation keeps them all."""
    held = [
        row["annotation_type"]
        for row in report.scores
        if row["metric"] == "instance_strict" and "label" not in row and "average" not in row
        and row["tp"] + row["fp"] + row["fn"]
    ] or list(ALL_TYPES)  # fmt: skip
    kept = set(held)
    report.scores = [row for row in report.scores if row["annotation_type"] in kept]
    report.per_document = [row for row in report.per_document if row["annotation_type"] in kept]
    if report.errors is not None:
        report.errors = [row for row in report.errors if row["annotation_type"] in kept]
    report.inputs["annotation_type"] = held
    report.subject = ", ".join(held)
    return report


def _by_label(document: Document | None, stretched: list[tuple[str, str]]) -> dict[str, SpanColumns]:
    """A document's annotations as columns per label: those the reader gave as columns, then the objects'.

    The NLP Sandbox's annotations are contiguous: a discontinuous span (brat's fragments) is scored as
    its extent, from the start of its first fragment to the end of its last, covering the note's text
    there; each is named (its type; note, offsets) in ``stretched`` for one warning.
    """
    if document is None:
        return {}
    grouped = dict(document.columns)
    objects: dict[str, list] = {}
    for annotation in document.annotations:
        span = annotation.span
        if span.fragments:
            stretched.append((annotation.label, f"note {document.id}, annotation at {span.start}-{span.end}"))
            text = document.text[span.start : span.end] if document.text is not None else None
            annotation = dataclasses.replace(annotation, span=Span(span.start, span.end), text=text)
        objects.setdefault(annotation.label, []).append(annotation)
    for label, found in objects.items():
        grouped.setdefault(label, SpanColumns()).extend(SpanColumns.of(found, phi_type(label).type_attribute))
    return grouped


def _misfits(text: str, doc_id: str, pred: dict[str, SpanColumns], source: Input) -> list[tuple[str, str]]:
    """Refuse a prediction past the end of the gold note's text; name those whose text differs from it, each
    with its type.

    Messages name the note, offsets and lengths, never the text (it is PHI).
    """
    found = []
    for label, columns in pred.items():
        for row in columns.rows:
            end = row.start + row.length
            where = f"note {doc_id}, annotation at {row.start}-{end}"
            if end > len(text):
                raise InputError(f"ends beyond the gold note's text ({len(text)} characters)", source, where)
            if row.text is not None and row.text != text[row.start : end]:
                found.append((label, f"{where} ({len(row.text)} characters)"))
    return found


def _side_warnings(only_gold: list[str], only_pred: list[str], misfits: list[str], stretched: list[str]) -> list[str]:
    messages = []
    if stretched:
        messages.append(
            f"{len(stretched)} discontinuous annotations scored as their extent, first fragment to last "
            f"(NLP Sandbox spans are contiguous; first: {stretched[0]})"
        )
    for side, ids in (("gold", only_gold), ("prediction", only_pred)):
        if ids:
            messages.append(f"{len(ids)} notes only in the {side}, scored against nothing: {listed(ids)}")
    if misfits:
        messages.append(
            f"{len(misfits)} predicted annotations whose text differs from what the gold note's text "
            f"covers at their offsets, scored by their offsets (first: {misfits[0]})"
        )
    return messages


class _OfficialFailure:
    """Valid input on which the profile's official scorer stops with an exception: the first case met per file.

    The reader marks what the scorer cannot read (see :mod:`nlpbench.formats.sandbox`):
    a file that is not a list of records, a record without the array of a scored type.
    """

    def __init__(self, profile: SpanProfile, array: str | None = None):
        self.profile = profile
        #: the one array looked at (a pass scoring its type alone), or None for every array read
        self.array = array
        self.found: dict[str, str] = {}

    def check(self, gold: Document | None, pred: Document | None) -> None:
        if not (self.profile.list_only or self.profile.array_required):
            return
        for side, document in (("gold", gold), ("pred", pred)):
            if document is None or side in self.found:
                continue
            container = document.metadata.get("container")
            absent = [array for array in document.metadata.get("absentArrays", ()) if self.array in (None, array)]
            if container and self.profile.list_only:
                self.found[side] = (
                    f"TypeError: string indices must be integers (it reads the file as a list of "
                    f"annotation records; this one holds a {_CONTAINERS[container]})"
                )
            elif absent and self.profile.array_required:
                self.found[side] = f"KeyError: {absent[0]!r} (a record of note {document.id} has no {absent[0]} array)"

    def warnings(self, gold: Side, pred: Side) -> list[str]:
        # convert_dict reads the gold file first: its failure is the one the scorer meets
        for side, path in (("gold", gold), ("pred", pred)):
            if side in self.found:
                return [
                    f"{self.profile.reference} would fail on {path}: {self.found[side]}; "
                    "nlpbench scores it (a missing array holds no annotations)"
                ]
        return []


_CONTAINERS = {"page": "data-node page {annotations: …}", "bundles": "patient bundles", "response": "tool response"}


@dataclass
class _Run:
    """Scores notes in batches and keeps the running sums of one scoring run."""

    phi: PhiType
    rules: SpanRules
    metrics: list[str]
    error_limit: int
    keep_documents: bool
    sink: DocumentRows | None = None
    totals: dict[str, PRF] = field(default_factory=dict)
    by_label: dict[tuple[str, str], PRF] = field(default_factory=dict)
    per_document: list[Row] = field(default_factory=list)
    errors: list[Row] = field(default_factory=list)
    collapsed: int = 0
    predicted_typed: bool = False
    pending: list[tuple[str, SpanColumns, SpanColumns]] = field(default_factory=list)
    pending_rows: int = 0

    texts: TokenTable | None = None

    def __post_init__(self) -> None:
        self.subtype = None if self.phi.name == "date" else _slice_label

    def add(self, doc_id: str, gold: SpanColumns | None, pred: SpanColumns | None) -> None:
        gold = SpanColumns() if gold is None else gold
        pred = SpanColumns() if pred is None else pred
        if not self.predicted_typed:
            kept = [pred.rows[i] for i in self.rules.instance_rows([row.start for row in pred.rows])]
            self.predicted_typed = any(isinstance(row.subtype, str) and row.subtype for row in kept)
        if len(self.errors) < 2 * self.error_limit:
            self._collect_errors(doc_id, gold, pred)
        self.pending.append((doc_id, gold, pred))
        self.pending_rows += len(gold.rows) + len(pred.rows)
        if self.pending_rows >= BATCH:
            self.flush()

    def flush(self) -> None:
        """Score the pending notes together and add their counts to the sums: with the batch engine, or in plain
        Python below :data:`~nlpbench.metrics.span_small.SMALL` annotations (the same numbers)."""
        pairs = [(g, p) for _, g, p in self.pending]
        if self.pending_rows < SMALL:
            batch: BatchCounts | SmallCounts = small_counts(pairs, self.rules, self.metrics, self.subtype)
        else:
            from nlpbench.metrics.span_batch import TokenTable, batch_counts

            if self.texts is None:
                self.texts = TokenTable(self.rules.tokenize)
            batch = batch_counts(pairs, self.rules, self.metrics, self.subtype, self.texts)
        for metric in self.metrics:
            self.totals[metric] = self.totals.get(metric, PRF()) + batch.total(metric)
        if self.keep_documents:
            rows = [
                {"document": doc_id, "metric": metric, **_count_fields(batch.document(metric, index))}
                for index, (doc_id, _, _) in enumerate(self.pending)
                for metric in self.metrics
            ]
            if self.sink is None:
                self.per_document.extend(rows)
            else:
                self.sink.add(self.phi.name, rows)
        for key, prf in batch.labels.items():
            self.by_label[key] = self.by_label.get(key, PRF()) + prf
        self.collapsed += batch.collapsed
        self.pending.clear()
        self.pending_rows = 0

    def drop(self, metric: str) -> None:
        self.metrics.remove(metric)
        self.per_document = [row for row in self.per_document if row["metric"] != metric]
        if self.sink is not None:
            self.sink.drop(self.phi.name, metric)

    def _collect_errors(self, doc_id: str, gold_columns: SpanColumns, pred_columns: SpanColumns) -> None:
        rules, phi = self.rules, self.phi
        gold, pred = (c.annotations(doc_id, phi.name, phi.type_attribute) for c in (gold_columns, pred_columns))
        matching = instance_matching(rules.instances(gold), rules.instances(pred), rules, "instance_strict")
        have = {"FP": sum(e["kind"] == "FP" for e in self.errors)}
        have["FN"] = len(self.errors) - have["FP"]
        for kind, found in (("FN", matching.missed), ("FP", matching.spurious)):
            for annotation in sorted(found, key=lambda a: a.span)[: self.error_limit - have[kind]]:
                self.errors.append(
                    {
                        "kind": kind,
                        "document": annotation.doc_id,
                        "start": annotation.start,
                        "end": annotation.end,
                        "text": annotation.text,
                    }
                )

    def score_rows(self, profile: SpanProfile) -> list[Row]:
        rows: list[Row] = []
        for metric in self.metrics:
            prf = self.totals.get(metric, PRF())
            rows.append({"metric": metric, **_count_fields(prf, profile.values(prf))})
        labels = sorted({label for _, label in self.by_label})
        for metric in SLICED:
            sliced = [self.by_label.get((metric, label), PRF()) for label in labels]
            for label, prf in zip(labels, sliced, strict=True):
                rows.append({"metric": metric, "label": label, **_count_fields(prf, profile.values(prf))})
            if len(labels) > 1:
                rows.append({"metric": metric, "average": "macro", **_macro(sliced, profile)})
        return rows

    def warnings(self, several: bool) -> list[str]:
        if not self.collapsed:
            return []
        kind = f"{self.phi.name} annotations" if several else "annotations"
        return [
            f"{self.collapsed} {kind} share a start with a later one and were not scored "
            "as instances (this profile keys instances by note and start, last one wins)"
        ]

    def labelled(self, rows: list[Row], several: bool) -> list[Row]:
        """Rows as they are, or each with this run's ``annotation_type`` first when several types are scored."""
        return [{"annotation_type": self.phi.name, **row} for row in rows] if several else rows


def _slice_label(subtype: object) -> str:
    """The slice label of an annotation: its subtype, or ``(none)`` when it has no subtype string."""
    return subtype if subtype.__class__ is str and subtype else NO_SUBTYPE


def _count_fields(prf: PRF, values: tuple[float, float, float] | None = None) -> Row:
    precision, recall, f1 = values if values is not None else (prf.precision, prf.recall, prf.f1)
    return {"tp": prf.tp, "fp": prf.fp, "fn": prf.fn, "precision": precision, "recall": recall, "f1": f1}


def _macro(sliced: list[PRF], profile: SpanProfile) -> Row:
    """Unweighted means of the per-subtype precision, recall and F1 (rounded as the profile rounds)."""
    means = [fmean(values) for values in zip(*((p.precision, p.recall, p.f1) for p in sliced), strict=True)]
    if profile.round_digits is not None:
        means = [round(value, profile.round_digits) for value in means]
    return dict(zip(("precision", "recall", "f1"), means, strict=True))
