"""The home page: every task, with its kind, scored submissions, teams and current leaders.

A task's leaders are read from its table (:func:`nlpbench.web.board.task_table`: stored intervals and rank
groups, nothing computed per request): per dataset column, the lines of rank group 1 (up to
:data:`LEADERS`, best first), each its tool, team, score and 95 % interval. A task whose types are columns
of their own (the ``phi`` task) shows the leaders of its first column only, named on the page.

Above the tasks, each challenge (:mod:`nlpbench.platform.challenges`) and its phases, with their state and,
while anyone may see a phase's scores (:func:`nlpbench.platform.visibility.scores_hidden`), the leaders of
each of its tasks among that phase's submissions (the best per column: a phase's table has no stored rank
groups).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response
from sqlalchemy import select
from sqlalchemy.orm import Session

from nlpbench.platform import challenges, tasks, visibility
from nlpbench.platform.standings import unranked
from nlpbench.store import Store
from nlpbench.store.challenges import Challenge
from nlpbench.store.models import utcnow
from nlpbench.web import board
from nlpbench.web.render import Stored, export, page

router = APIRouter()

#: The most leaders the home page shows of a column.
LEADERS = 3


@dataclass(frozen=True)
class Leader:
    """A line of a task's table at the top of a column: its tool, team, score, interval and rank group."""

    column: str
    tool: str
    team: str
    value: float
    low: float | None
    high: float | None
    rank: int | None


def leaders(table: board.Table) -> list[Leader]:
    """The leaders of each dataset column of ``table`` (only the first column of a task with a column per
    type): the cells of rank group 1, best first, at most :data:`LEADERS`; the best cell alone while the
    column has no stored groups."""
    found: list[Leader] = []
    for key in _leading_columns(table):
        cells = sorted(
            ((line, line.cells[key]) for line in table.lines if key in line.cells),
            key=lambda pair: (-pair[1].value, pair[1].submission.created_at),
        )
        top = [(line, cell) for line, cell in cells if cell.rank == 1] or cells[:1]
        found.extend(
            Leader(key, line.tool, line.team, cell.value, cell.low, cell.high, cell.rank)
            for line, cell in top[:LEADERS]
        )
    return found


def _leading_columns(table: board.Table) -> list[str]:
    if len(tasks.PHI_TASKS.get(table.task, (table.task,))) == 1:
        return table.columns
    return table.columns[:1]


def home_rows(store: Store) -> list[dict[str, Any]]:
    """A row per task: its name, kind, scored submissions, teams and :func:`leaders`."""
    with store.session(readonly=True) as session:
        counts: dict[str, int] = {}
        teams: dict[str, set[str]] = {}
        for submission, _ in board.scored(session):
            counts[submission.task] = counts.get(submission.task, 0) + 1
            teams.setdefault(submission.task, set()).add(submission.team)
        led = {task: leaders(board.task_table(session, task)) for task in counts}
    return [
        {"task": task, "kind": _kind(task), "scored": counts.get(task, 0),
         "teams": len(teams.get(task, ())), "leaders": led.get(task, [])}
        for task in tasks.names()
    ]  # fmt: skip


def _exported(row: dict[str, Any]) -> dict[str, Any]:
    """A home row for the exports: its first leader's fields as columns of their own."""
    first = row["leaders"][0] if row["leaders"] else None
    fields = ("column", "tool", "team", "value", "low", "high")
    return {key: value for key, value in row.items() if key != "leaders"} | {
        f"leader {name}": getattr(first, name) if first else None for name in fields
    }


@router.get("/tasks.{fmt}")
def home_export(fmt: str, store: Stored) -> Response:
    return export(fmt, [_exported(row) for row in home_rows(store)], "tasks")


def challenge_rows(session: Session) -> list[dict[str, Any]]:
    """Each challenge, its phases (name, state) and, where anyone may see the phase's scores now, the
    :func:`leaders` of each of its tasks among the phase's submissions (``None`` while they are hidden)."""
    moment = utcnow()
    found = []
    for challenge in session.scalars(select(Challenge).order_by(Challenge.created_at, Challenge.id)):
        shown = []
        for phase in challenges.phases(session, challenge):
            hidden = visibility.scores_hidden(phase, moment)
            led = None if hidden else {task: leaders(unranked(session, task, "best", phase=phase.id))
                                       for task in phase.tasks}  # fmt: skip
            shown.append({"name": phase.name, "state": visibility.state(phase, moment), "leaders": led})
        found.append({"name": challenge.name, "title": challenge.title, "phases": shown})
    return found


@router.get("/", response_class=HTMLResponse)
def home(request: Request, store: Stored) -> HTMLResponse:
    with store.session(readonly=True) as session:
        held = challenge_rows(session)
    return page(request, "home.html", rows=home_rows(store), challenges=held)


def _kind(task: str) -> str:
    """How a task is fed: PHI annotators, de-identifiers, or prediction files."""
    if tasks.is_phi(task):
        return "PHI"
    return "de-identifier" if tasks.is_deid(task) else "file"
