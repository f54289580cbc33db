"""What the leaderboard shows, read from the store: stored intervals, task tables, rank groups, best over time.

A result's intervals are computed once, when the result is stored
(:mod:`nlpbench.platform.intervals`), so a page reads them instead of
resampling. A task's table has a row per tool (a team's tool by its name, or
its prediction file) and a column per dataset and annotation type; each cell
is the tool's best or latest scored submission there, by the task's primary
value (:func:`nlpbench.platform.intervals.primary`, the ``ranked`` interval
row). Rank groups per column come from
paired bootstrap tests of each group's best against the others, Holm-corrected
(:func:`nlpbench.stats.rank_groups`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session, load_only

from nlpbench.platform import tasks
from nlpbench.platform.scoring import result_report
from nlpbench.report.model import Row
from nlpbench.stats import paired_bootstrap, rank_groups
from nlpbench.stats.report import Derivation, derivations
from nlpbench.store.intervals import ResultInterval
from nlpbench.store.submissions import SCORED, Result, Submission

#: Paired bootstrap resamples behind a rank group.
TEST_RESAMPLES = 1000
PICKS = ("best", "latest")


def tool_name(submission: Any) -> str:
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

    submission: Any  # a row of the LISTED columns of the submission
    result_id: int
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
    def shown(self) -> Cell:
        """The cell whose submission's tool facts the row shows: the newest."""
        return max(self.cells.values(), key=lambda c: (c.submission.created_at, c.submission.id))


@dataclass
class Table:
    task: str
    pick: str
    columns: list[str]
    lines: list[Line]
    #: Every scored submission's cells, oldest first.
    history: list[tuple[str, Cell]]


def column_key(dataset: str, annotation_type: str, task: str) -> str:
    """A task table's column: the dataset, and the annotation type where the task has several."""
    return dataset if len(tasks.PHI_TASKS.get(task, (task,))) == 1 else f"{dataset}/{annotation_type}"


#: The columns of a submission that pages list (not its prediction file nor its command).
LISTED = (
    Submission.id,
    Submission.team,
    Submission.task,
    Submission.dataset,
    Submission.dataset_version,
    Submission.kind,
    Submission.tool_url,
    Submission.image,
    Submission.predictions_name,
    Submission.status,
    Submission.created_at,
    Submission.tool_meta,
)


def _first_results() -> Any:
    """Each submission's first result: the queue's profile (a rescore under another profile comes later)."""
    return select(func.min(Result.id)).group_by(Result.submission_id)


def scored(session: Session, task: str | None = None, team: str | None = None) -> list[tuple[Submission, Result]]:
    """Scored submissions with their first result, oldest first."""
    query = (
        select(Submission, Result)
        .join(Result, Result.submission_id == Submission.id)
        .where(Submission.status == SCORED, Result.id.in_(_first_results()))
        .options(load_only(*LISTED))
    )
    if task is not None:
        query = query.where(Submission.task == task)
    if team is not None:
        query = query.where(Submission.team == team)
    return [(s, r) for s, r in session.execute(query.order_by(Submission.created_at, Submission.id))]


def _cells(session: Session, task: str) -> list[tuple[str, Cell]]:
    """Each scored submission's ranked value per column, with its stored interval, oldest first.

    Plain rows, not ORM objects: a cell's ``submission`` is a row of the :data:`LISTED` columns.
    """
    query = (
        select(
            *LISTED,
            ResultInterval.result_id,
            ResultInterval.annotation_type,
            ResultInterval.metric,
            ResultInterval.field,
            ResultInterval.value,
            ResultInterval.low,
            ResultInterval.high,
        )
        .join(Result, Result.id == ResultInterval.result_id)
        .join(Submission, Submission.id == Result.submission_id)
        .where(
            ResultInterval.ranked.is_(True),
            Submission.task == task,
            Submission.status == SCORED,
            Result.id.in_(_first_results()),
        )
        .order_by(Submission.created_at, Submission.id)
    )
    return [
        (
            column_key(row.dataset, row.annotation_type, task),
            Cell(row, row.result_id, row.annotation_type, row.metric, row.field, row.value, row.low, row.high),
        )
        for row in session.execute(query)
    ]


def task_table(session: Session, task: str, pick: str = "best", cache: dict | None = None) -> Table:
    """The task's table: a line per team and tool, each column's cell its best or latest, with rank groups.

    ``cache`` keeps rank groups by column and the results compared (the app keeps one).
    """
    if pick not in PICKS:
        raise ValueError(f"unknown pick {pick!r}; known: {', '.join(PICKS)}")
    lines: dict[tuple[str, str], Line] = {}
    history = _cells(session, task)
    for key, cell in history:
        name = tool_name(cell.submission)
        line = lines.setdefault((cell.submission.team, name), Line(cell.submission.team, name))
        held = line.cells.get(key)
        if held is None or pick == "latest" or cell.value >= held.value:
            line.cells[key] = cell
    columns = sorted({key for key, _ in history})
    for key in columns:
        cells = [line.cells[key] for line in lines.values() if key in line.cells]
        _rank(session, cells, key, {} if cache is None else cache)
    return Table(task, pick, columns, list(lines.values()), history)


def _rank(session: Session, cells: list[Cell], key: str, cache: dict) -> None:
    signature = ("ranks", key, tuple(sorted(cell.result_id for cell in cells)))
    if signature not in cache:
        tables = {cell.result_id: _primary_derivation(session, cell) for cell in cells}
        scores = {cell.result_id: cell.value for cell in cells}

        def p_value(best: int, other: int) -> float:
            a, b = tables[best], tables[other]
            if a is None or b is None or set(a.documents) != set(b.documents):
                return 0.0  # not comparable document by document: not tied
            position = {document: i for i, document in enumerate(b.documents)}
            aligned = b.counts[[position[d] for d in a.documents]]
            return paired_bootstrap(a.counts, aligned, a.statistic, resamples=TEST_RESAMPLES).p_value

        cache[signature] = rank_groups(scores, p_value)
    for cell in cells:
        cell.rank = cache[signature][cell.result_id]


def _primary_derivation(session: Session, cell: Cell) -> Derivation | None:
    result = session.get(Result, cell.result_id)
    report = result_report(session, session.get(Submission, cell.submission.id), result, cell.annotation_type)
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
            return line.shown.submission.created_at
        cell = line.cells.get(sort)
        return cell.value if cell is not None else None

    present = [line for line in table.lines if key(line) is not None]
    missing = [line for line in table.lines if key(line) is None]
    return sorted(present, key=key, reverse=descending) + missing


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
