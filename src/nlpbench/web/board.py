"""What the leaderboard shows, read from the store: stored intervals, task tables, rank groups, best over time.

A result's intervals are computed once, when the result is stored
(:mod:`nlpbench.platform.intervals`), so a page reads them instead of
resampling. A task's table has a row per tool (a team's tool by its name, or
its prediction file) and a column per dataset and annotation type; each cell
is the tool's best or latest scored submission there, by the task's primary
value (:func:`nlpbench.platform.intervals.primary`, the ``ranked`` interval
row). Rank groups per column come from paired bootstrap tests of each
group's best against the others, Holm-corrected
(:func:`nlpbench.stats.rank_groups`): seconds of work for large datasets, so
pages never compute them. :func:`refresh` does, for every column whose
results changed, and stores them (:class:`nlpbench.store.ranks.RankGroups`)
with the intervals of results stored without them; a page shows the stored
groups of exactly the results it shows, or no rank until they are computed.
``nlpbench leaderboard refresh`` and ``db upgrade`` run it, and
``leaderboard serve`` runs it in the background every few seconds.

Only SCORED submissions are read. Whatever a team's tool controls (its
``/tool`` metadata, file names) is shown through :func:`bounded`, and a URL
through :func:`shown_url`, which keeps no credentials.
"""

from __future__ import annotations

import hashlib
import unicodedata
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, overload
from urllib.parse import urlsplit, urlunsplit

from sqlalchemy import delete, func, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session, load_only

from nlpbench.platform import scoring, tasks
from nlpbench.platform.golds import find_gold
from nlpbench.platform.scoring import result_report
from nlpbench.report.model import Row
from nlpbench.stats import paired_bootstrap, rank_groups
from nlpbench.stats.report import Derivation, derivations
from nlpbench.store import Store
from nlpbench.store.intervals import ResultInterval
from nlpbench.store.ranks import RankGroups
from nlpbench.store.submissions import SCORED, Result, Submission

#: Paired bootstrap resamples behind a rank group.
TEST_RESAMPLES = 1000
PICKS = ("best", "latest")
#: The most characters a page shows of a name, a version or a licence a tool gave (or a file name).
SHORT = 60
#: The most characters a page shows of a URL or an image reference.
LONG = 200


@overload
def bounded(value: None, limit: int = SHORT) -> None: ...
@overload
def bounded(value: object, limit: int = SHORT) -> str: ...
def bounded(value: Any, limit: int = SHORT) -> str | None:
    """``value`` as text a page may show: control and format characters (bidirectional overrides included)
    replaced by U+FFFD, cut to ``limit`` characters with an ellipsis; None stays None. Escaping is the
    template's (Jinja's autoescape), the CSV writer's or the JSON encoder's."""
    if value is None:
        return None
    text = "".join("\ufffd" if unicodedata.category(c) in ("Cc", "Cf") else c for c in str(value)[: limit + 1])
    return text if len(text) <= limit else text[: limit - 1] + "…"


def shown_url(url: Any) -> str | None:
    """A URL as a page may show it: scheme, host, port and path, bounded — never the userinfo
    (``user:password@``), query or fragment, which may carry credentials. None for None or a URL that
    does not parse."""
    if url is None:
        return None
    try:
        parts = urlsplit(str(url))
    except ValueError:
        return None
    path = parts.path if parts.netloc else parts.path.rpartition("@")[2]  # ``user:pw@host`` without ``//``
    return bounded(urlunsplit((parts.scheme, parts.netloc.rpartition("@")[2], path, "", "")), LONG)


def tool_name(submission: Any) -> str:
    """What a task table calls a submission's tool: its name, else its prediction file, image or URL, bounded."""
    meta = submission.tool_meta or {}
    return bounded(
        meta.get("name")
        or submission.predictions_name
        or submission.image
        or shown_url(submission.tool_url)
        or f"command {submission.id}"
    )


def tool_facts(submission: Any) -> dict[str, str | None] | None:
    """What a tool said of itself (``GET /tool``) that pages show, bounded; its URL without credentials."""
    meta = submission.tool_meta
    if not isinstance(meta, dict):
        return None
    facts = {key: bounded(meta.get(key)) for key in ("name", "version", "license", "apiVersion", "type")}
    return {**facts, "url": shown_url(meta.get("url"))}


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


def task_table(session: Session, task: str, pick: str = "best") -> Table:
    """The task's table: a line per team and tool, each column's cell its best or latest, with the stored rank
    groups of the cells shown (a cell's rank is None until :func:`refresh` has stored them)."""
    table = _unranked(session, task, pick)
    stored = {(row.column_key, row.compared): row.ranks for row in session.scalars(_stored(task))}
    for key, cells in _column_cells(table).items():
        ranks = stored.get((key, _compared(cells)), {})
        for cell in cells:
            cell.rank = ranks.get(str(cell.result_id))
    return table


def _unranked(session: Session, task: str, pick: str) -> Table:
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
    return Table(task, pick, columns, list(lines.values()), history)


def _column_cells(table: Table) -> dict[str, list[Cell]]:
    return {key: [line.cells[key] for line in table.lines if key in line.cells] for key in table.columns}


def _compared(cells: list[Cell]) -> str:
    """The digest that names the results a column compares: SHA-256 of their ids, sorted, joined by commas."""
    return hashlib.sha256(",".join(map(str, sorted(cell.result_id for cell in cells))).encode()).hexdigest()


def _stored(task: str) -> Any:
    return select(RankGroups).where(RankGroups.task == task)


@dataclass(frozen=True)
class Refreshed:
    """What :func:`refresh` computed and stored."""

    intervals: int  # results given the intervals they were stored without
    columns: int  # columns whose rank groups were computed


def refresh(store: Store) -> Refreshed:
    """Compute and store what pages read but never compute: the intervals of results stored without them,
    and the rank groups of every column (of either pick) whose results are not those last ranked.

    Computed in read-only snapshots, written in short transactions (a SQLite writer holds the one write
    lock), so a page never waits for it; two refreshes at once store the same groups once.
    """
    with store.session(readonly=True) as session:
        lacking = scoring.lacking_intervals(session)
    filled = 0
    if lacking:
        with store.session() as session:
            filled = scoring.ensure_intervals(session)
    ranked = 0
    for task in tasks.names():
        with store.session(readonly=True) as session:
            wanted = {
                (key, _compared(cells)): cells
                for pick in PICKS
                for key, cells in _column_cells(_unranked(session, task, pick)).items()
            }
            held = {(row.column_key, row.compared) for row in session.scalars(_stored(task))}
            computed = {found: _rank_groups(session, cells) for found, cells in wanted.items() if found not in held}
        if computed or held - wanted.keys():
            with store.session() as session:
                _store_groups(session, task, computed, set(wanted))
            ranked += len(computed)
    return Refreshed(filled, ranked)


def _store_groups(
    session: Session, task: str, computed: dict[tuple[str, str], dict[int, int]], current: set[tuple[str, str]]
) -> None:
    """Store the computed groups (once, whoever stores them first) and forget groups of results no column shows."""
    rows = [
        {"task": task, "column_key": key, "compared": compared, "ranks": {str(k): v for k, v in ranks.items()}}
        for (key, compared), ranks in computed.items()
    ]
    if rows:
        insert = postgresql.insert if session.get_bind().dialect.name == "postgresql" else sqlite.insert
        session.execute(insert(RankGroups).on_conflict_do_nothing(), rows)
    for row in session.scalars(_stored(task)):
        if (row.column_key, row.compared) not in current:
            session.execute(delete(RankGroups).where(RankGroups.id == row.id))


def _rank_groups(session: Session, cells: list[Cell]) -> dict[int, int]:
    """Each cell's result's rank group among the cells of one column."""
    tables = {cell.result_id: _primary_derivation(session, cell) for cell in cells}
    scores = {cell.result_id: cell.value for cell in cells}

    def p_value(best: int, other: int) -> float:
        a, b = tables[best], tables[other]
        if a is None or b is None or set(a.documents) != set(b.documents):
            return 0.0  # not comparable document by document: not tied
        position = {document: i for i, document in enumerate(b.documents)}
        aligned = b.counts[[position[d] for d in a.documents]]
        return paired_bootstrap(a.counts, aligned, a.statistic, resamples=TEST_RESAMPLES).p_value

    return rank_groups(scores, p_value)


def _primary_derivation(session: Session, cell: Cell) -> Derivation | None:
    result = session.get_one(Result, cell.result_id)
    report = result_report(session, session.get_one(Submission, cell.submission.id), result, cell.annotation_type)
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
    except NotFound:
        return False
