"""What the leaderboard shows, read from the store: stored intervals, task tables, rank groups, best over time.

A result's intervals are computed once, from its per-document counts
(:func:`nlpbench.stats.report.derivations` and
:func:`nlpbench.stats.bootstrap_interval`), and stored as
:class:`~nlpbench.store.intervals.ResultInterval` rows, so a page reads them
instead of resampling. A task's table has a row per tool (a team's tool by
its name, or its prediction file) and a column per dataset and annotation
type; each cell is the tool's best or latest scored submission there, by the
task's primary value (:func:`primary`). Rank groups per column come from
paired bootstrap tests of each group's best against the others, Holm-corrected
(:func:`nlpbench.stats.rank_groups`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
from sqlalchemy import select
from sqlalchemy.orm import Session

from nlpbench.platform import tasks
from nlpbench.report.model import Report, Row
from nlpbench.stats import bootstrap_interval, paired_bootstrap, rank_groups
from nlpbench.stats.report import Derivation, derivations, overall_rows
from nlpbench.store.intervals import ResultInterval
from nlpbench.store.submissions import SCORED, Result, ResultDocument, Submission

CONFIDENCE = 0.95
RESAMPLES = 2000
#: Paired bootstrap resamples behind a rank group.
TEST_RESAMPLES = 1000
PICKS = ("best", "latest")
#: The primary metric of each file-scored task (PHI types: ``token``); a task not here takes its first F1.
PRIMARY_METRIC = {"timelines": "official", "coref": "conll", "ner": "strict", "codiesp": "map"}


def primary(task: str, rows: list[Row]) -> tuple[str, str] | None:
    """``(metric, field)`` of the task's primary value among a result's overall rows (for one annotation type)."""
    overall = overall_rows(Report(task, "", {}, rows))
    wanted = "token" if tasks.is_phi(task) else PRIMARY_METRIC.get(task)
    for row in overall:
        if row["metric"] == wanted:
            return row["metric"], "f1" if "f1" in row else "value"
    for row in overall:
        if "f1" in row:
            return row["metric"], "f1"
    return None


def result_report(session: Session, submission: Submission, result: Result, annotation_type: str) -> Report:
    """The report of one annotation type of a stored result: its score rows and per-document rows."""
    rows = session.scalars(
        select(ResultDocument)
        .where(ResultDocument.result_id == result.id, ResultDocument.annotation_type == annotation_type)
        .order_by(ResultDocument.id)
    )
    per_document = [{"document": row.document, "metric": row.metric, **row.counts} for row in rows]
    return Report(submission.task, result.profile, {}, result.scores[annotation_type], per_document)


def intervals(session: Session, submission: Submission, result: Result) -> list[ResultInterval]:
    """The result's stored intervals, computed and stored first if it has none yet."""
    stored = list(session.scalars(select(ResultInterval).where(ResultInterval.result_id == result.id)))
    if stored:
        return stored
    for annotation_type in result.scores:
        for found in derivations(result_report(session, submission, result, annotation_type)):
            interval = bootstrap_interval(found.counts, found.statistic, confidence=CONFIDENCE, resamples=RESAMPLES)
            stored.append(
                ResultInterval(
                    result_id=result.id,
                    annotation_type=annotation_type,
                    metric=found.metric,
                    field=found.field,
                    estimate=interval.estimate,
                    low=interval.low,
                    high=interval.high,
                    confidence=interval.confidence,
                    method=interval.method,
                    resamples=interval.resamples,
                    documents=len(found.documents),
                )
            )
    session.add_all(stored)
    session.flush()
    return stored


def ensure_intervals(session: Session, task: str | None = None) -> int:
    """Compute and store the intervals of every scored result (of ``task``) that has none; how many results."""
    query = (
        select(Submission, Result)
        .join(Result, Result.submission_id == Submission.id)
        .where(Submission.status == SCORED, ~Result.id.in_(select(ResultInterval.result_id)))
    )
    if task is not None:
        query = query.where(Submission.task == task)
    done = 0
    for submission, result in session.execute(query).all():
        intervals(session, submission, result)
        done += 1
    return done


def tool_name(submission: Submission) -> str:
    """What a task table calls a submission's tool: its name, else its prediction file, image or URL."""
    meta = submission.tool_meta or {}
    return str(
        meta.get("name")
        or submission.predictions_name
        or submission.image
        or submission.tool_url
        or f"command {submission.id}"
    )


@dataclass
class Cell:
    """One tool's value in one column: the submission and result it comes from, its interval and rank."""

    submission: Submission
    result: Result
    annotation_type: str
    metric: str
    field: str
    value: float
    low: float | None = None
    high: float | None = None
    rank: int | None = None


@dataclass
class Line:
    """A row of a task table: a team's tool and its cells by column."""

    team: str
    tool: str
    cells: dict[str, Cell] = field(default_factory=dict)

    @property
    def shown(self) -> Submission:
        """The submission whose tool facts the row shows: the newest of its cells'."""
        return max((cell.submission for cell in self.cells.values()), key=lambda s: (s.created_at, s.id))


@dataclass
class Table:
    task: str
    pick: str
    columns: list[str]
    lines: list[Line]


def column_key(dataset: str, annotation_type: str, task: str) -> str:
    return (
        dataset
        if annotation_type == task or len(tasks.PHI_TASKS.get(task, ())) == 1
        else f"{dataset}/{annotation_type}"
    )


def scored(session: Session, task: str | None = None, team: str | None = None) -> list[tuple[Submission, Result]]:
    """Scored submissions with their first result (the queue's profile), oldest first."""
    query = select(Submission, Result).join(Result, Result.submission_id == Submission.id)
    query = query.where(Submission.status == SCORED)
    if task is not None:
        query = query.where(Submission.task == task)
    if team is not None:
        query = query.where(Submission.team == team)
    seen: dict[int, tuple[Submission, Result]] = {}
    for submission, result in session.execute(query.order_by(Submission.created_at, Submission.id, Result.id)):
        seen.setdefault(submission.id, (submission, result))
    return list(seen.values())


def _plain_cells(pairs: Iterable[tuple[Submission, Result]]) -> Iterable[tuple[str, Cell]]:
    """Each result's primary value per column, without its interval."""
    for submission, result in pairs:
        for annotation_type, rows in result.scores.items():
            chosen = primary(submission.task, rows)
            if chosen is None:
                continue
            metric, value_field = chosen
            (row,) = [r for r in overall_rows(Report(submission.task, "", {}, rows)) if r["metric"] == metric]
            key = column_key(submission.dataset, annotation_type, submission.task)
            yield key, Cell(submission, result, annotation_type, metric, value_field, float(row[value_field] or 0.0))


def _cells(session: Session, pairs: list[tuple[Submission, Result]]) -> Iterable[tuple[str, Cell]]:
    """:func:`_plain_cells` with their stored intervals."""
    stored: dict[tuple[int, str, str, str], ResultInterval] = {}
    ids = [result.id for _, result in pairs]
    for start in range(0, len(ids), 500):
        query = select(ResultInterval).where(ResultInterval.result_id.in_(ids[start : start + 500]))
        for row in session.scalars(query):
            stored[(row.result_id, row.annotation_type, row.metric, row.field)] = row
    for key, cell in _plain_cells(pairs):
        interval = stored.get((cell.result.id, cell.annotation_type, cell.metric, cell.field))
        if interval is not None:
            cell.low, cell.high = interval.low, interval.high
        yield key, cell


def task_table(session: Session, task: str, pick: str = "best", ranks: dict | None = None) -> Table:
    """The task's table: a line per team and tool, each column's cell its best or latest, with rank groups.

    ``ranks`` caches rank groups by column and the result ids compared (the app keeps one per process).
    """
    if pick not in PICKS:
        raise ValueError(f"unknown pick {pick!r}; known: {', '.join(PICKS)}")
    lines: dict[tuple[str, str], Line] = {}
    columns: dict[str, None] = {}
    for key, cell in _cells(session, scored(session, task)):
        columns[key] = None
        line = lines.setdefault(
            (cell.submission.team, tool_name(cell.submission)), Line(cell.submission.team, tool_name(cell.submission))
        )
        held = line.cells.get(key)
        if held is None or (cell.value >= held.value if pick == "best" else True):
            line.cells[key] = cell
    ordered = sorted(columns)
    for key in ordered:
        cells = [line.cells[key] for line in lines.values() if key in line.cells]
        _rank(session, cells, key, {} if ranks is None else ranks)
    return Table(task, pick, ordered, list(lines.values()))


def _rank(session: Session, cells: list[Cell], key: str, cache: dict) -> None:
    signature = (key, tuple(sorted(cell.result.id for cell in cells)))
    if signature not in cache:
        tables = {cell.result.id: _primary_derivation(session, cell) for cell in cells}
        scores = {cell.result.id: cell.value for cell in cells}

        def p_value(best: int, other: int) -> float:
            a, b = tables[best], tables[other]
            if a is None or b is None or set(a.documents) != set(b.documents):
                return 0.0  # not comparable document by document: not tied
            position = {document: i for i, document in enumerate(b.documents)}
            aligned = b.counts[[position[d] for d in a.documents]]
            return paired_bootstrap(a.counts, aligned, a.statistic, resamples=TEST_RESAMPLES).p_value

        cache[signature] = rank_groups(scores, p_value)
    for cell in cells:
        cell.rank = cache[signature][cell.result.id]


def _primary_derivation(session: Session, cell: Cell) -> Derivation | None:
    report = result_report(session, cell.submission, cell.result, cell.annotation_type)
    found = [d for d in derivations(report) if (d.metric, d.field) == (cell.metric, cell.field)]
    return found[0] if found else None


def sorted_lines(table: Table, sort: str, descending: bool) -> list[Line]:
    """The lines by a column (a dataset column, ``team``, ``tool`` or ``date``); lines without a value last."""

    def key(line: Line) -> Any:
        if sort == "team":
            return line.team
        if sort == "tool":
            return line.tool
        if sort == "date":
            return line.shown.created_at
        cell = line.cells.get(sort)
        return cell.value if cell is not None else None

    present = [line for line in table.lines if key(line) is not None]
    missing = [line for line in table.lines if key(line) is None]
    return sorted(present, key=key, reverse=descending) + missing


def best_over_time(pairs: Iterable[tuple[Submission, Result]]) -> dict[str, list[tuple[datetime, float]]]:
    """Per column, the best primary value so far at each scored submission's date (``pairs`` oldest first)."""
    series: dict[str, list[tuple[datetime, float]]] = {}
    best: dict[str, float] = {}
    for key, cell in _plain_cells(pairs):
        best[key] = max(best.get(key, -np.inf), cell.value)
        series.setdefault(key, []).append((cell.submission.created_at, best[key]))
    return series


def errors_in_context(session: Session, submission: Submission, result: Result, limit: int = 10) -> list[Row]:
    """Up to ``limit`` false positives and negatives per annotation type, with the note text around each.

    Only for a PHI task on a dataset marked public: anything else is ``[]``, so
    a private dataset's note text never reaches a page.
    """
    import tempfile
    from pathlib import Path

    from nlpbench import formats
    from nlpbench.errors import collected_warnings
    from nlpbench.platform.scoring import predictions_store
    from nlpbench.report.leaderboard import in_context
    from nlpbench.store import repository
    from nlpbench.tasks.sandbox import score_sandbox

    if not tasks.is_phi(submission.task) or not public(session, submission):
        return []
    texts = {note.identifier: note.text for note in repository.iter_notes(session, submission.dataset)}
    found: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="nlpbench-web-") as scratch, collected_warnings():
        gold, pred = Path(scratch) / "gold.json", Path(scratch) / "pred.json"
        sandbox = formats.get("sandbox")
        sandbox.write(repository.documents(session, submission.dataset), gold)
        sandbox.write(repository.documents(session, submission.dataset, predictions_store(submission.id)), pred)
        for annotation_type in result.scores:
            report = score_sandbox(
                gold, pred, annotation_type, profile=result.profile, errors=limit, per_document=False
            )
            for error in report.errors or []:
                before, span, after = in_context(texts.get(error["document"], ""), error["start"], error["end"])
                found.append({"type": annotation_type, **error, "before": before, "span": span, "after": after})
    return found


def public(session: Session, submission: Submission) -> bool:
    """Whether the submission's dataset is a store dataset marked public (a file task's gold never is)."""
    from nlpbench.store import repository
    from nlpbench.store.repository import NotFound

    if not tasks.is_phi(submission.task):
        return False
    try:
        return repository.get_dataset(session, submission.dataset).visibility == "public"
    except NotFound:
        return False


def digest(submission: Submission) -> str | None:
    """The SHA-256 that pins what was submitted: the command's or the prediction file's (an image names its own)."""
    import hashlib

    value = submission.command if submission.command is not None else submission.predictions
    return hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest() if value is not None else None
