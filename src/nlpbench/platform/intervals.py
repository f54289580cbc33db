"""A result's confidence intervals, computed once from its per-document counts and stored with it.

Each overall value of each annotation type of a result (every
:class:`~nlpbench.stats.report.Derivation` of its report) gets a BCa bootstrap
interval — :data:`CONFIDENCE` (95 %), :data:`RESAMPLES` resamples of the
documents, seed 0, so the same counts give the same interval — stored as a
:class:`~nlpbench.store.intervals.ResultInterval` row. One of them per
annotation type is marked ``ranked``: the task's primary value
(:func:`primary`), which leaderboards rank by. A primary value that the
per-document counts do not determine is stored as a point (``method``
``none``, no bounds).

:func:`nlpbench.platform.scoring.store_result` stores a result's intervals in
the transaction that stores the result; results stored before intervals were
(and so without them) are given theirs by
:func:`nlpbench.platform.scoring.ensure_intervals`.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from nlpbench.platform import tasks
from nlpbench.report.model import Report, Row
from nlpbench.stats import bootstrap_interval
from nlpbench.stats.report import derivations, overall_rows
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


def compute(result_id: int, annotation_type: str, report: Report) -> list[ResultInterval]:
    """The interval rows of one annotation type of result ``result_id``, from its ``report`` (with per-document rows).

    ``value`` is what the report says (its profile's rounding included), ``estimate`` the statistic of the summed
    counts, ``low``/``high`` the bounds of its bootstrap interval over the documents.
    """
    chosen = primary(report.task, report.scores)
    found: list[ResultInterval] = []
    for derived in derivations(report):
        interval = bootstrap_interval(derived.counts, derived.statistic, confidence=CONFIDENCE, resamples=RESAMPLES)
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
    if chosen is not None and not any(i.ranked for i in found):
        (row,) = [r for r in overall_rows(report) if r["metric"] == chosen[0]]
        value = float(row[chosen[1]] or 0.0)
        found.append(
            ResultInterval(
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
        )
    return found


def stored(session: Session, result_id: int) -> list[ResultInterval]:
    """The stored interval rows of a result, in the order they were computed."""
    query = select(ResultInterval).where(ResultInterval.result_id == result_id).order_by(ResultInterval.id)
    return list(session.scalars(query))
