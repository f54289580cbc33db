"""A result's confidence intervals, computed once from its per-document counts and stored with it.

Each overall value of each annotation type of a result (every
:class:`~nlpbench.stats.report.Derivation` of its report) gets a BCa bootstrap
interval — :data:`CONFIDENCE` (95 %), :data:`RESAMPLES` resamples of the
documents, seed 0, so the same counts give the same interval — stored as a
:class:`~nlpbench.store.intervals.ResultInterval` row. One of them per
annotation type is marked ``ranked``: the task's primary value
(:func:`primary`), which leaderboards rank by. A primary value that the
per-document counts do not determine is stored as a point (``method``
``none``, no bounds). A PHI task of several types has one more annotation type,
:data:`~nlpbench.platform.overall.OVERALL` (micro over its types,
:mod:`nlpbench.platform.overall`), whose intervals are computed the same way.

:func:`nlpbench.platform.scoring.store_result` stores a result's intervals in
the transaction that stores the result; results stored before intervals were
(and so without them) are given theirs by
:func:`nlpbench.platform.scoring.ensure_intervals`.
"""

from __future__ import annotations

from collections.abc import Mapping

from nlpbench.platform import tasks
from nlpbench.platform.document_counts import DocumentCounts, overall_tables
from nlpbench.platform.overall import OVERALL, overall_scores, with_overall
from nlpbench.platform.pooling import strata
from nlpbench.report.model import Report, Row, overall_rows
from nlpbench.stats.bootstrap import Interval, bootstrap_intervals
from nlpbench.stats.report import Derivation, counted_derivations, derivations
from nlpbench.store.intervals import ResultInterval

CONFIDENCE = 0.95
RESAMPLES = 2000
#: The primary metric of each file-scored task (PHI types: ``token``); a task not here takes its first F1.
PRIMARY_METRIC = {"timelines": "official", "coref": "conll", "ner": "strict", "codiesp": "map", "deid": "hipaa_token"}
#: The primary field of a task's primary metric when it is not F1 (or ``value``): de-identification ranks by the
#: HIPAA-token recall, the share of HIPAA PHI tokens removed or replaced.
PRIMARY_FIELD = {"deid": "recall"}


def primary(task: str, rows: list[Row]) -> tuple[str, str] | None:
    """``(metric, field)`` of the task's primary value among a result's overall rows (for one annotation type)."""
    overall = overall_rows(Report(task, "", {}, rows))
    wanted = "token" if tasks.is_phi(task) else PRIMARY_METRIC.get(task)
    for row in overall:
        if row["metric"] == wanted:
            return row["metric"], PRIMARY_FIELD.get(task, "f1" if "f1" in row else "value")
    for row in overall:
        if "f1" in row:
            return row["metric"], "f1"
    return None


def compute(result_id: int, reports: Mapping[str, Report], *, by_site: bool = False) -> list[ResultInterval]:
    """The interval rows of result ``result_id``, from the report (with per-document rows) of each annotation type.

    ``value`` is what the report says (its profile's rounding included), ``estimate`` the statistic of the summed
    counts, ``low``/``high`` the bounds of its bootstrap interval over the documents. Every value is resampled as
    if alone (seed 0, :data:`RESAMPLES`), from one draw of the resamples shared by all the values over as many
    documents (:func:`~nlpbench.stats.bootstrap.separate_distributions`): the same bounds, bit for bit. The
    overall report of a task of several types is added to ``reports`` (:func:`~nlpbench.platform.overall.with_overall`).
    ``by_site``: the reports pool several sites' documents (``SITE/…``), resampled within each site
    (:func:`nlpbench.platform.pooling.strata`).
    """
    reports = with_overall(reports)
    values = [(kind, primary(r.task, r.scores), derived) for kind, r in reports.items() for derived in derivations(r)]
    return _rows(result_id, reports, values, by_site)


def compute_counted(
    result_id: int,
    task: str,
    profile: str,
    scores: Mapping[str, list[Row]],
    counts: DocumentCounts,
    *,
    by_site: bool = False,
    ranked: dict[str, Derivation] | None = None,
) -> list[ResultInterval]:
    """:func:`compute` of the reports of ``scores`` (score rows per annotation type) whose per-document rows were
    counted in ``counts`` (complete), from its count tables rather than from rows: the same intervals, bit for
    bit (:func:`~nlpbench.stats.report.counted_derivations`). The overall report of a task of several types is
    its overall score rows (:func:`~nlpbench.platform.overall.overall_scores`: the same totals as the documents'
    sums) with the types' tables summed at each document (:func:`~nlpbench.platform.document_counts.overall_tables`).

    ``ranked``: filled with each annotation type's primary value's derivation (the first, as
    :func:`nlpbench.platform.scoring.result_derivation` reads it from the stored rows), what ranking the result
    needs (:func:`nlpbench.platform.ranks.rank`), so that it is not read back."""
    reports = {kind: Report(task, profile, {}, rows) for kind, rows in scores.items()}
    tables = {kind: counts.tables(kind) for kind in reports}
    overall = overall_scores(task, scores)
    if overall:
        reports[OVERALL] = Report(task, profile, {}, overall)
        tables[OVERALL] = overall_tables([tables[kind] for kind in scores], [row["metric"] for row in overall])
    values = [
        (kind, primary(task, report.scores), derived)
        for kind, report in reports.items()
        for derived in counted_derivations(report, *tables[kind])
    ]
    if ranked is not None:
        for kind, chosen, derived in values:
            if (derived.metric, derived.field) == chosen:
                ranked.setdefault(kind, derived)
    return _rows(result_id, reports, values, by_site)


#: An annotation type, its primary (metric, field) and one of its derivable values.
_Value = tuple[str, tuple[str, str] | None, Derivation]


def _rows(result_id: int, reports: Mapping[str, Report], values: list[_Value], by_site: bool) -> list[ResultInterval]:
    """The interval rows of ``values`` (bootstrapped together, :func:`_bootstrapped`) and a point for each report's
    primary value that none of them is, in the reports' order."""
    found: list[ResultInterval] = []
    for (annotation_type, chosen, derived), interval in _bootstrapped(values, by_site):
        found.append(
            ResultInterval(
                result_id=result_id,
                annotation_type=annotation_type,
                metric=derived.metric,
                field=derived.field,
                ranked=(derived.metric, derived.field) == chosen,
                value=derived.reported if isinstance(derived.reported, int | float) else interval.estimate,
                estimate=interval.estimate,
                low=interval.low,
                high=interval.high,
                confidence=interval.confidence,
                method=interval.method,
                resamples=interval.resamples,
                documents=len(derived.documents),
            )
        )
    for annotation_type, report in reports.items():
        chosen = primary(report.task, report.scores)
        if chosen is None or any(i.ranked for i in found if i.annotation_type == annotation_type):
            continue
        found.append(_point(result_id, annotation_type, report, chosen))
    order = {annotation_type: i for i, annotation_type in enumerate(reports)}
    found.sort(key=lambda interval: order[interval.annotation_type])  # stable: each type's rows as computed
    return found


def _bootstrapped(values: list[_Value], by_site: bool) -> list[tuple[_Value, Interval]]:
    """Every value with its interval, in order: one draw of the resamples shared by all the values over as many
    documents (:func:`~nlpbench.stats.bootstrap.separate_distributions`)."""
    if not values:
        return []
    found = bootstrap_intervals(
        [(derived.counts, derived.statistic) for *_, derived in values],
        confidence=CONFIDENCE,
        resamples=RESAMPLES,
        separately=True,
        strata=[strata(derived.documents) for *_, derived in values] if by_site else None,
    )
    return list(zip(values, found, strict=True))


def _point(result_id: int, annotation_type: str, report: Report, chosen: tuple[str, str]) -> ResultInterval:
    """The primary value that the per-document counts do not determine, stored as a point (method ``none``)."""
    (row,) = [r for r in overall_rows(report) if r["metric"] == chosen[0]]
    value = float(row[chosen[1]] or 0.0)
    return ResultInterval(
        result_id=result_id,
        annotation_type=annotation_type,
        metric=chosen[0],
        field=chosen[1],
        ranked=True,
        value=value,
        estimate=value,
        confidence=CONFIDENCE,
        method="none",
        resamples=0,
        documents=0,
    )
