"""A task's standings as stored results make them: a line per tool, a column per dataset, each cell's result.

A task's table has a row per tool (a team's tool by its name, or its
prediction file: :func:`tool_name`) and a column per dataset and annotation
type (:func:`column_key`; a task of several types has an overall column per dataset,
:mod:`nlpbench.platform.overall`, first); each cell is the tool's best or latest scored
submission there (``pick``, one of :data:`PICKS`), by the task's primary value
(:func:`nlpbench.platform.intervals.primary`, the ``ranked`` interval row).
Only SCORED submissions and each one's first result are read, and only those whose scores anyone may see
now: not those of a private or blind challenge phase that has not closed (:mod:`nlpbench.platform.visibility`).

The leaderboard (:mod:`nlpbench.web.board`) shows these tables, and
:mod:`nlpbench.platform.ranks` ranks each column's cells when a result is
stored: both read the same cells, so the rank groups stored for a column are
those of the results its page shows (:func:`compared` names them). Whatever a
team's tool controls (its ``/tool`` metadata, file names) is named through
:func:`bounded`, and a URL through :func:`shown_url`, which keeps no credentials.
"""

from __future__ import annotations

import hashlib
import unicodedata
from dataclasses import dataclass, field
from typing import Any, overload
from urllib.parse import urlsplit, urlunsplit

from sqlalchemy import and_, func, select
from sqlalchemy.orm import Session, load_only

from nlpbench.platform import tasks, visibility
from nlpbench.platform.overall import OVERALL
from nlpbench.store.intervals import ResultInterval
from nlpbench.store.models import utcnow
from nlpbench.store.submissions import SCORED, Result, Submission

#: How a table picks a tool's cell in a column: its best value, or its latest submission.
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
    except ValueError:  # not a URL: nothing to show
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
    """A task's table under one pick: its columns (sorted), its lines, and every scored cell oldest first."""

    task: str
    pick: str
    columns: list[str]
    lines: list[Line]
    #: Every scored submission's cells, oldest first.
    history: list[tuple[str, Cell]]
    #: Each column's stored smallest detectable difference (:func:`nlpbench.platform.ranks.smallest_difference`),
    #: for a column whose shown results were ranked.
    detectable: dict[str, float | None] = field(default_factory=dict)


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
    """Scored submissions whose scores anyone may see now (:func:`nlpbench.platform.visibility.shown`) with
    their first result, oldest first."""
    query = (
        select(Submission, Result)
        .join(Result, Result.submission_id == Submission.id)
        .where(Submission.status == SCORED, Result.id.in_(_first_results()), visibility.shown(utcnow()))
        .options(load_only(*LISTED))
    )
    if task is not None:
        query = query.where(Submission.task == task)
    if team is not None:
        query = query.where(Submission.team == team)
    return [(s, r) for s, r in session.execute(query.order_by(Submission.created_at, Submission.id))]


def _cells(session: Session, task: str, phase: int | None = None) -> list[tuple[str, Cell]]:
    """Each scored submission's ranked value per column, with its stored interval, oldest first: those whose
    scores anyone may see now (:func:`nlpbench.platform.visibility.shown`), or those of challenge phase ``phase``
    whoever may see them (its caller decides who sees them).

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
            visibility.shown(utcnow()) if phase is None else and_(visibility.kept(), Submission.phase_id == phase),
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


def unranked(session: Session, task: str, pick: str, *, phase: int | None = None) -> Table:
    """The task's table under ``pick``, every cell's rank None: a line per team and tool, each column's cell
    its best (the greatest value, the latest of equals) or latest; a pick not in :data:`PICKS` is a ValueError.
    With ``phase``, of that challenge phase's submissions only (see :func:`_cells`)."""
    if pick not in PICKS:
        raise ValueError(f"unknown pick {pick!r}; known: {', '.join(PICKS)}")
    lines: dict[tuple[str, str], Line] = {}
    history = _cells(session, task, phase)
    for key, cell in history:
        name = tool_name(cell.submission)
        line = lines.setdefault((cell.submission.team, name), Line(cell.submission.team, name))
        held = line.cells.get(key)
        if held is None or pick == "latest" or cell.value >= held.value:
            line.cells[key] = cell
    columns = sorted({key for key, _ in history}, key=_column_order)
    return Table(task, pick, columns, list(lines.values()), history)


def _column_order(key: str) -> tuple[str, bool, str]:
    """A column's place: by dataset, its overall value (micro over types) first, then its types by name."""
    dataset, _, annotation_type = key.rpartition("/")
    return dataset, annotation_type != OVERALL, annotation_type


def column_cells(table: Table) -> dict[str, list[Cell]]:
    """Each column's cells, in the order of the table's lines."""
    return {key: [line.cells[key] for line in table.lines if key in line.cells] for key in table.columns}


def compared(cells: list[Cell]) -> str:
    """The digest that names the results a column compares: SHA-256 of their ids, sorted, joined by commas."""
    return hashlib.sha256(",".join(map(str, sorted(cell.result_id for cell in cells))).encode()).hexdigest()


def shown_columns(session: Session, task: str) -> dict[tuple[str, str], list[Cell]]:
    """The cells of every column either pick shows, by ``(column key, digest of the results compared)``."""
    return {
        (key, compared(cells)): cells
        for pick in PICKS
        for key, cells in column_cells(unranked(session, task, pick)).items()
    }
