"""``score sandbox``: PHI span annotation scored as the NLP Sandbox did.

For one annotation type, every note is scored on its own (instance strict and
relaxed, token, type and the ``standard`` extras), the counts are summed over
notes (micro), sliced by subtype, and macro-averaged over subtypes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from statistics import fmean

from nlpbench import formats, profiles
from nlpbench.errors import collected_warnings
from nlpbench.metrics.counts import PRF
from nlpbench.metrics.spans import SpanRules, instance_matching, span_counts
from nlpbench.model import Annotation, Document, PhiType, pair_documents, phi_type
from nlpbench.profiles.spans import SpanProfile
from nlpbench.report import Report
from nlpbench.report.model import Row
from nlpbench.tasks import register

#: The metrics that are also reported per subtype.
SLICED = ("instance_strict", "instance_relax", "token")
NO_SUBTYPE = "(none)"


@dataclass
class _Tally:
    """Running sums over the notes of one scoring run."""

    totals: dict[str, PRF] = field(default_factory=dict)
    by_label: dict[tuple[str, str], PRF] = field(default_factory=dict)
    per_document: list[Row] = field(default_factory=list)
    errors: list[Row] = field(default_factory=list)
    only_gold: list[str] = field(default_factory=list)
    only_pred: list[str] = field(default_factory=list)
    collapsed: int = 0
    predicted_typed: bool = False


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
    on_document: Callable[[str], None] | None = None,
) -> Report:
    """Score predicted annotations of ``annotation_type`` against gold, note by note.

    ``errors`` asks for up to that many false positives and as many false
    negatives of ``instance_strict``; ``on_document`` is called with each note
    id as it is scored.
    """
    phi = phi_type(annotation_type)
    chosen: SpanProfile = profiles.get("spans", profile)
    rules = chosen.rules(phi, relax)
    metrics = chosen.metrics(phi)
    tally = _Tally()
    with collected_warnings() as warnings:
        gold_docs = formats.get(gold_format).read(Path(gold))
        pred_docs = formats.get(pred_format).read(Path(pred))
        for doc_id, gold_doc, pred_doc in pair_documents(gold_docs, pred_docs):
            _score_note(doc_id, gold_doc, pred_doc, phi, rules, metrics, errors, tally)
            if on_document:
                on_document(doc_id)
    if phi.name in chosen.type_needs_predictions and not tally.predicted_typed and "type" in metrics:
        metrics.remove("type")
        tally.per_document = [row for row in tally.per_document if row["metric"] != "type"]
        warnings.append(
            f"no prediction carries {phi.type_attribute}: the type metric is not computed "
            "(nlpsandbox-client reports NaN)"
        )
    warnings[:0] = _pairing_warnings(tally)
    return Report(
        task="sandbox",
        profile=chosen.name,
        inputs={"gold": str(gold), "pred": str(pred), "annotation_type": phi.name, "relax": relax},
        scores=_score_rows(tally, metrics, chosen),
        per_document=tally.per_document,
        warnings=warnings,
        errors=tally.errors if errors else None,
    )


def _score_note(
    doc_id: str,
    gold_doc: Document | None,
    pred_doc: Document | None,
    phi: PhiType,
    rules: SpanRules,
    metrics: list[str],
    errors: int,
    tally: _Tally,
) -> None:
    if gold_doc is None:
        tally.only_pred.append(doc_id)
    if pred_doc is None:
        tally.only_gold.append(doc_id)
    gold = gold_doc.of_label(phi.name) if gold_doc else []
    pred = pred_doc.of_label(phi.name) if pred_doc else []
    pred_instances = rules.instances(pred)
    tally.collapsed += len(gold) - len(rules.instances(gold)) + len(pred) - len(pred_instances)
    tally.predicted_typed = tally.predicted_typed or any(
        isinstance(v := a.attributes.get(phi.type_attribute), str) and v for a in pred_instances
    )
    counts = span_counts(gold, pred, rules, metrics)
    for metric, prf in counts.items():
        tally.totals[metric] = tally.totals.get(metric, PRF()) + prf
        tally.per_document.append({"document": doc_id, "metric": metric, **_count_fields(prf)})
    for label in sorted({_subtype(a, phi) for a in gold + pred}):
        sliced = span_counts(
            [a for a in gold if _subtype(a, phi) == label],
            [a for a in pred if _subtype(a, phi) == label],
            rules,
            SLICED,
        )
        for metric, prf in sliced.items():
            tally.by_label[metric, label] = tally.by_label.get((metric, label), PRF()) + prf
    if errors and (len(tally.errors) < 2 * errors):
        _collect_errors(gold, pred, rules, errors, tally)


def _subtype(annotation: Annotation, phi: PhiType) -> str:
    value = annotation.attributes.get(phi.type_attribute)
    return value if isinstance(value, str) and value else NO_SUBTYPE


def _collect_errors(
    gold: list[Annotation], pred: list[Annotation], rules: SpanRules, limit: int, tally: _Tally
) -> None:
    matching = instance_matching(rules.instances(gold), rules.instances(pred), rules, "instance_strict")
    have = {"FP": sum(e["kind"] == "FP" for e in tally.errors)}
    have["FN"] = len(tally.errors) - have["FP"]
    for kind, found in (("FN", matching.missed), ("FP", matching.spurious)):
        for annotation in sorted(found, key=lambda a: a.span)[: limit - have[kind]]:
            tally.errors.append(
                {
                    "kind": kind,
                    "document": annotation.doc_id,
                    "start": annotation.start,
                    "end": annotation.end,
                    "text": annotation.text,
                }
            )


def _count_fields(prf: PRF, values: tuple[float, float, float] | None = None) -> Row:
    precision, recall, f1 = values if values is not None else (prf.precision, prf.recall, prf.f1)
    return {"tp": prf.tp, "fp": prf.fp, "fn": prf.fn, "precision": precision, "recall": recall, "f1": f1}


def _score_rows(tally: _Tally, metrics: list[str], profile: SpanProfile) -> list[Row]:
    rows: list[Row] = []
    for metric in metrics:
        prf = tally.totals.get(metric, PRF())
        rows.append({"metric": metric, **_count_fields(prf, profile.values(prf))})
    labels = sorted({label for _, label in tally.by_label})
    for metric in SLICED:
        sliced = [tally.by_label.get((metric, label), PRF()) for label in labels]
        for label, prf in zip(labels, sliced, strict=True):
            rows.append({"metric": metric, "label": label, **_count_fields(prf, profile.values(prf))})
        if len(labels) > 1:
            rows.append({"metric": metric, "average": "macro", **_macro(sliced, profile)})
    return rows


def _macro(sliced: list[PRF], profile: SpanProfile) -> Row:
    """Unweighted means of the per-subtype precision, recall and F1 (rounded as the profile rounds)."""
    means = [fmean(values) for values in zip(*((p.precision, p.recall, p.f1) for p in sliced), strict=True)]
    if profile.round_digits is not None:
        means = [round(value, profile.round_digits) for value in means]
    return dict(zip(("precision", "recall", "f1"), means, strict=True))


def _pairing_warnings(tally: _Tally) -> list[str]:
    messages = []
    for side, ids in (("gold", tally.only_gold), ("prediction", tally.only_pred)):
        if ids:
            shown = ", ".join(ids[:5]) + (", …" if len(ids) > 5 else "")
            messages.append(f"{len(ids)} notes only in the {side}, scored against nothing: {shown}")
    if tally.collapsed:
        messages.append(
            f"{tally.collapsed} annotations share a start with a later one and were not scored as "
            "instances (this profile keys instances by note and start, last one wins)"
        )
    return messages
