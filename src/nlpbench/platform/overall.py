"""A PHI task's overall value: micro over its annotation types, from the per-document counts summed over them.

A PHI task of several types (``phi``: date, person, location, id, contact) stores a report per type. Its
overall report (annotation type :data:`OVERALL`) is derived from them, never scored apart: for each metric
that every type's report counts with ``tp``/``fp``/``fn`` at its overall row (``instance_strict``,
``instance_relax``, ``token``), each document's counts are the sum over the types::

    tp_d = Σ_t tp_{d,t}    fp_d = Σ_t fp_{d,t}    fn_d = Σ_t fn_{d,t}

and the overall row's precision, recall and F1 are those of the sums over documents
(:class:`~nlpbench.metrics.counts.PRF`: ``F1 = 2·TP / (2·TP + FP + FN)``). Because the overall report has
per-document rows like any other, its intervals are the same bootstrap over the same documents
(:mod:`nlpbench.platform.intervals`), stored with the result, and its column is ranked like the others
(:mod:`nlpbench.platform.ranks`).
"""

from __future__ import annotations

from collections.abc import Mapping

from nlpbench.metrics.counts import PRF
from nlpbench.platform import tasks
from nlpbench.report.model import Report, Row, overall_rows

#: The annotation type of a result's overall (micro over types) value.
OVERALL = "overall"
_COUNTS = ("tp", "fp", "fn")


def applies(task: str) -> bool:
    """Whether ``task`` has an overall value: a PHI task of several annotation types."""
    return len(tasks.PHI_TASKS.get(task, ())) > 1


def overall_report(reports: Mapping[str, Report]) -> Report:
    """The overall report of a result's per-type ``reports`` (see the module), its documents in the order they
    first appear; a metric missing from one type's overall rows is left out."""
    first = next(iter(reports.values()))
    counted = [
        {row["metric"] for row in overall_rows(report) if all(isinstance(row.get(c), int) for c in _COUNTS)}
        for report in reports.values()
    ]
    metrics = [row["metric"] for row in overall_rows(first) if all(row["metric"] in held for held in counted)]
    totals = dict.fromkeys(metrics, PRF())
    documents: dict[tuple[str, str], PRF] = {}
    for report in reports.values():
        for row in report.per_document:
            if row["metric"] in totals and row.get("label") is None:
                key = (str(row["document"]), row["metric"])
                documents[key] = documents.get(key, PRF()) + PRF(*(int(row[c]) for c in _COUNTS))
    for (_, metric), counts in documents.items():
        totals[metric] += counts
    scores = [{"metric": metric, **counts.fields()} for metric, counts in totals.items()]
    per_document = [{"document": document, "metric": metric, **counts.fields()}
                    for (document, metric), counts in documents.items()]  # fmt: skip
    return Report(first.task, first.profile, {}, scores, per_document)


def overall_scores(task: str, scores: Mapping[str, list[Row]]) -> list[Row]:
    """The overall rows of a result's per-type score rows (``{type: rows}``) for a task of several types (none
    otherwise): for each metric every type counts at its overall row, the sums of the types' TP, FP and FN — the
    same totals as :func:`overall_report`'s, whose documents add up to them — with their precision, recall and F1."""
    if not applies(task) or not scores:
        return []
    overall = [overall_rows(Report(task, "", {}, rows)) for rows in scores.values()]
    counted = [
        {row["metric"]: row for row in rows if all(isinstance(row.get(c), int) for c in _COUNTS)} for rows in overall
    ]
    metrics = [row["metric"] for row in overall[0] if all(row["metric"] in held for held in counted)]
    totals = {metric: sum((PRF(*(held[metric][c] for c in _COUNTS)) for held in counted), PRF()) for metric in metrics}
    return [{"metric": metric, **counts.fields()} for metric, counts in totals.items()]


def with_overall(reports: Mapping[str, Report]) -> dict[str, Report]:
    """``reports`` and, for a task of several types (:func:`applies`) whose overall report is not among them,
    the overall report under :data:`OVERALL`."""
    found = dict(reports)
    if found and OVERALL not in found and applies(next(iter(found.values())).task):
        found[OVERALL] = overall_report(reports)
    return found
