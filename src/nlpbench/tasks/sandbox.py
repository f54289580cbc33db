"""``score sandbox``: PHI span annotation scored as the NLP Sandbox did.

For one annotation type, every note is scored on its own (instance strict and
relaxed, token, type and the ``standard`` extras), the counts are summed over
notes (micro), sliced by subtype, and macro-averaged over subtypes. Notes are
scored in batches as they stream in, so memory follows the batch, not the
corpus.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from statistics import fmean

from nlpbench import formats, profiles
from nlpbench.errors import InputError, collected_warnings
from nlpbench.metrics.counts import PRF
from nlpbench.metrics.span_batch import batch_counts
from nlpbench.metrics.spans import SpanRules, instance_matching
from nlpbench.model import Annotation, PhiType, pair_documents, phi_type
from nlpbench.profiles.spans import SpanProfile
from nlpbench.report import Report
from nlpbench.report.model import Row
from nlpbench.tasks import collector_paused, register
from nlpbench.tasks.coverage import listed

#: The metrics that are also reported per subtype.
SLICED = ("instance_strict", "instance_relax", "token")
NO_SUBTYPE = "(none)"
BATCH = 2048


@register("sandbox", "PHI span annotation (NLP Sandbox): instance strict/relax, token, type", "spans")
def score_sandbox(
    gold: Path | str,
    pred: Path | str,
    annotation_type: str,
    *,
    profile: str = "standard",
    relax: int = 2,
    errors: int = 0,
    gold_format: str = "sandbox",
    pred_format: str = "sandbox",
    per_document: bool = True,
    on_document: Callable[[str], None] | None = None,
) -> Report:
    """Score predicted annotations of ``annotation_type`` against gold, note by note.

    ``errors`` asks for up to that many false positives and as many false
    negatives of ``instance_strict``; ``per_document=False`` leaves the
    per-note rows out, so that memory does not grow with the corpus;
    ``on_document`` is called with each note id as it is scored.
    """
    phi = phi_type(annotation_type)
    chosen: SpanProfile = profiles.get("spans", profile)
    run = _Run(phi, chosen.rules(phi, relax), chosen.metrics(phi), errors, per_document)
    with collected_warnings() as warnings, collector_paused():
        gold_docs = formats.get(gold_format).read(Path(gold), labels={phi.name})
        pred_docs = formats.get(pred_format).read(Path(pred), labels={phi.name})
        for doc_id, gold_doc, pred_doc in pair_documents(gold_docs, pred_docs):
            if gold_doc is not None and pred_doc is not None and gold_doc.text is not None:
                run.check_against(gold_doc.text, pred_doc.of_label(phi.name), Path(pred))
            run.add(doc_id, gold_doc and gold_doc.of_label(phi.name), pred_doc and pred_doc.of_label(phi.name))
            if on_document:
                on_document(doc_id)
        run.flush()
    if phi.name in chosen.type_needs_predictions and not run.predicted_typed and "type" in run.metrics:
        run.drop("type")
        warnings.append(
            f"no prediction carries {phi.type_attribute}: the type metric is not computed "
            "(nlpsandbox-client reports NaN)"
        )
    warnings[:0] = run.warnings()
    return Report(
        task="sandbox",
        profile=chosen.name,
        inputs={"gold": str(gold), "pred": str(pred), "annotation_type": phi.name, "relax": relax},
        scores=run.score_rows(chosen),
        per_document=run.per_document,
        warnings=warnings,
        errors=run.errors if errors else None,
    )


@dataclass
class _Run:
    """Scores notes in batches and keeps the running sums of one scoring run."""

    phi: PhiType
    rules: SpanRules
    metrics: list[str]
    error_limit: int
    keep_documents: bool
    totals: dict[str, PRF] = field(default_factory=dict)
    by_label: dict[tuple[str, str], PRF] = field(default_factory=dict)
    per_document: list[Row] = field(default_factory=list)
    errors: list[Row] = field(default_factory=list)
    only_gold: list[str] = field(default_factory=list)
    only_pred: list[str] = field(default_factory=list)
    collapsed: int = 0
    misfits: list[str] = field(default_factory=list)
    predicted_typed: bool = False
    pending: list[tuple[str, list[Annotation], list[Annotation]]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.subtype = _subtype_of(self.phi.type_attribute)

    def add(self, doc_id: str, gold: list[Annotation] | None, pred: list[Annotation] | None) -> None:
        if gold is None:
            self.only_pred.append(doc_id)
        if pred is None:
            self.only_gold.append(doc_id)
        gold, pred = gold or [], pred or []
        self.predicted_typed = self.predicted_typed or any(
            isinstance(v := a.attributes.get(self.phi.type_attribute), str) and v for a in self.rules.instances(pred)
        )
        if len(self.errors) < 2 * self.error_limit:
            self._collect_errors(gold, pred)
        self.pending.append((doc_id, gold, pred))
        if len(self.pending) >= BATCH:
            self.flush()

    def check_against(self, text: str, pred: list[Annotation], path: Path) -> None:
        """Refuse a prediction past the end of the gold note's text; count those whose text differs from it.

        Messages name the note, offsets and lengths, never the text (it is PHI).
        """
        for annotation in pred:
            where = f"note {annotation.doc_id}, annotation at {annotation.start}-{annotation.end}"
            if annotation.end > len(text):
                raise InputError(f"ends beyond the gold note's text ({len(text)} characters)", path, where)
            if annotation.text is not None and annotation.text != annotation.span.covered_text(text):
                self.misfits.append(f"{where} ({len(annotation.text)} characters)")

    def flush(self) -> None:
        """Score the pending notes together and add their counts to the sums."""
        batch = batch_counts([(g, p) for _, g, p in self.pending], self.rules, self.metrics, self.subtype)
        for metric in self.metrics:
            table = batch.documents[metric]
            tp, fp, fn = (int(n) for n in table.sum(axis=0))
            self.totals[metric] = self.totals.get(metric, PRF()) + PRF(tp, fp, fn)
        if self.keep_documents:
            for index, (doc_id, _, _) in enumerate(self.pending):
                for metric in self.metrics:
                    prf = batch.document(metric, index)
                    self.per_document.append({"document": doc_id, "metric": metric, **_count_fields(prf)})
        for key, prf in batch.labels.items():
            self.by_label[key] = self.by_label.get(key, PRF()) + prf
        self.collapsed += batch.collapsed
        self.pending.clear()

    def drop(self, metric: str) -> None:
        self.metrics.remove(metric)
        self.per_document = [row for row in self.per_document if row["metric"] != metric]

    def _collect_errors(self, gold: list[Annotation], pred: list[Annotation]) -> None:
        rules = self.rules
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

    def warnings(self) -> list[str]:
        messages = []
        for side, ids in (("gold", self.only_gold), ("prediction", self.only_pred)):
            if ids:
                messages.append(f"{len(ids)} notes only in the {side}, scored against nothing: {listed(ids)}")
        if self.misfits:
            messages.append(
                f"{len(self.misfits)} predicted annotations whose text differs from what the gold note's text "
                f"covers at their offsets, scored by their offsets (first: {self.misfits[0]})"
            )
        if self.collapsed:
            messages.append(
                f"{self.collapsed} annotations share a start with a later one and were not scored as "
                "instances (this profile keys instances by note and start, last one wins)"
            )
        return messages


def _subtype_of(attribute: str) -> Callable[[Annotation], str]:
    """The slice label of an annotation: its subtype, or ``(none)`` when it has no subtype string."""

    def subtype(annotation: Annotation) -> str:
        value = annotation.attributes.get(attribute)
        return value if value.__class__ is str and value else NO_SUBTYPE

    return subtype


def _count_fields(prf: PRF, values: tuple[float, float, float] | None = None) -> Row:
    precision, recall, f1 = values if values is not None else (prf.precision, prf.recall, prf.f1)
    return {"tp": prf.tp, "fp": prf.fp, "fn": prf.fn, "precision": precision, "recall": recall, "f1": f1}


def _macro(sliced: list[PRF], profile: SpanProfile) -> Row:
    """Unweighted means of the per-subtype precision, recall and F1 (rounded as the profile rounds)."""
    means = [fmean(values) for values in zip(*((p.precision, p.recall, p.f1) for p in sliced), strict=True)]
    if profile.round_digits is not None:
        means = [round(value, profile.round_digits) for value in means]
    return dict(zip(("precision", "recall", "f1"), means, strict=True))
