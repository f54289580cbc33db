"""What the leaderboard shows, read from the store: stored intervals, task tables, rank groups, best over time.

A result's intervals are computed once, when the result is stored
(:mod:`nlpbench.platform.intervals`), and so are the rank groups of the
columns it enters (:mod:`nlpbench.platform.ranks`, in the same transaction):
a page reads both and never computes them. A task's table
(:mod:`nlpbench.platform.standings`: a line per team and tool, a column per
dataset and annotation type, each cell the tool's best or latest scored
submission by the task's primary value) is shown with the stored groups of
exactly the results it shows, or no rank for a column whose results were
never ranked — results stored before the worker ranked them, until
:func:`nlpbench.platform.ranks.refresh` has (``nlpbench leaderboard refresh``,
``db upgrade``, and ``leaderboard serve`` in the background every few seconds).

Only SCORED submissions are read. Whatever a team's tool controls (its
``/tool`` metadata, file names) is shown through :func:`bounded`, and a URL
through :func:`shown_url`, which keeps no credentials (both from
:mod:`nlpbench.platform.standings`, re-exported here for the pages).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from nlpbench.platform import tasks
from nlpbench.platform.golds import find_gold
from nlpbench.platform.ranks import stored
from nlpbench.platform.standings import (
    LONG,
    PICKS,
    SHORT,
    Line,
    Table,
    bounded,
    column_cells,
    compared,
    scored,
    shown_url,
    tool_name,
    unranked,
)
from nlpbench.report.model import Row
from nlpbench.store.submissions import Result, Submission

#: What pages use of this module, the names of :mod:`nlpbench.platform.standings` they read through it included.
__all__ = [
    "LONG",
    "PICKS",
    "SHORT",
    "Line",
    "Table",
    "best_over_time",
    "bounded",
    "errors_in_context",
    "public",
    "scored",
    "shown_url",
    "sorted_lines",
    "task_table",
    "tool_facts",
    "tool_name",
]


def tool_facts(submission: Any) -> dict[str, str | None] | None:
    """What a tool said of itself (``GET /tool``) that pages show, bounded; its URL without credentials."""
    meta = submission.tool_meta
    if not isinstance(meta, dict):
        return None
    facts = {key: bounded(meta.get(key)) for key in ("name", "version", "license", "apiVersion", "type")}
    return {**facts, "url": shown_url(meta.get("url"))}


def task_table(session: Session, task: str, pick: str = "best") -> Table:
    """The task's table: a line per team and tool, each column's cell its best or latest, with the stored rank
    groups of the cells shown (a cell's rank is None while its column's results have no stored groups) and each
    column's stored smallest detectable difference."""
    table = unranked(session, task, pick)
    held = {(row.column_key, row.compared): row for row in session.scalars(stored(task))}
    for key, cells in column_cells(table).items():
        row = held.get((key, compared(cells)))
        for cell in cells:
            cell.rank = row.ranks.get(str(cell.result_id)) if row is not None else None
        table.detectable[key] = row.detectable if row is not None else None
    return table


def sorted_lines(table: Table, sort: str, descending: bool) -> list[Line]:
    """The lines by a column (a dataset column, ``team``, ``tool`` or ``date``); lines without a value last.

    By a column whose cells all have a rank, the lines go by rank, and lines of one rank by team and tool.
    """

    def key(line: Line) -> Any:
        if sort == "team":
            return line.team
        if sort == "tool":
            return line.tool
        if sort == "date":
            return line.shown.submission.created_at
        cell = line.cells.get(sort)
        return cell.value if cell is not None else None

    present = sorted((line for line in table.lines if key(line) is not None), key=key, reverse=descending)
    missing = [line for line in table.lines if key(line) is None]
    if sort in table.columns and all(line.cells[sort].rank is not None for line in present):
        # tied lines (one shown rank) by team and tool, never by when they were submitted
        present.sort(key=lambda line: (_rank(line, sort) * (1 if descending else -1), line.team, line.tool))
    return present + missing


def _rank(line: Line, key: str) -> int:
    rank = line.cells[key].rank
    assert rank is not None  # checked by the caller
    return rank


def best_over_time(table: Table) -> dict[str, list[tuple[datetime, float]]]:
    """Per column, each date at which the best value so far rose, and that value; the best holds to the last date."""
    series: dict[str, list[tuple[datetime, float]]] = {}
    for key, cell in table.history:
        points = series.setdefault(key, [])
        if not points or cell.value > points[-1][1]:
            points.append((cell.submission.created_at, cell.value))
    if table.history:
        last = table.history[-1][1].submission.created_at
        for points in series.values():
            if points[-1][0] < last:
                points.append((last, points[-1][1]))
    return series


def errors_in_context(session: Session, submission: Submission, result: Result, limit: int = 10) -> list[Row]:
    """Up to ``limit`` false positives and negatives per annotation type, with the note text around each.

    Only for a PHI task on a dataset marked public: anything else is ``[]``, so
    a private dataset's note text never reaches a page.
    """
    from nlpbench.errors import collected_warnings
    from nlpbench.platform.scoring import StoredSide, predictions_store
    from nlpbench.report.leaderboard import in_context
    from nlpbench.store import repository
    from nlpbench.tasks.sandbox import score_sandbox

    if not tasks.is_phi(submission.task) or not public(session, submission):
        return []
    texts = {note.identifier: note.text for note in repository.iter_notes(session, submission.dataset)}
    found: list[Row] = []
    gold = StoredSide(session, submission.dataset, repository.GOLDSTANDARD, "gold.json")
    pred = StoredSide(session, submission.dataset, predictions_store(submission.id), "pred.json")
    with collected_warnings():
        for annotation_type in result.scores:
            report = score_sandbox(
                gold, pred, annotation_type, profile=result.profile, errors=limit, per_document=False
            )
            for error in report.errors or []:
                before, span, after = in_context(texts.get(error["document"], ""), error["start"], error["end"])
                found.append({"type": annotation_type, **error, "before": before, "span": span, "after": after})
    return found


def public(session: Session, submission: Submission) -> bool:
    """Whether the submission's dataset is marked public: the store dataset of a PHI or ``deid`` task, the gold
    (:class:`~nlpbench.store.submissions.TaskGold`, by its ``visibility``) of a file task. Anything else,
    a dataset or gold since deleted included, is private."""
    from nlpbench.store import repository
    from nlpbench.store.repository import NotFound

    if not tasks.on_dataset(submission.task):
        gold = find_gold(session, submission.task, submission.dataset, submission.dataset_version)
        return gold is not None and gold.visibility == "public"
    try:
        return repository.get_dataset(session, submission.dataset).visibility == "public"
    except NotFound:  # no such dataset: not public
        return False
