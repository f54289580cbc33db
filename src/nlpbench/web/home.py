"""The home page: every task, with its kind, scored submissions and teams."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from nlpbench.platform import tasks
from nlpbench.store import Store
from nlpbench.web import board
from nlpbench.web.render import Stored, export, page

router = APIRouter()


def home_rows(store: Store) -> list[dict[str, Any]]:
    with store.session(readonly=True) as session:
        counts: dict[str, int] = {}
        teams: dict[str, set[str]] = {}
        for submission, _ in board.scored(session):
            counts[submission.task] = counts.get(submission.task, 0) + 1
            teams.setdefault(submission.task, set()).add(submission.team)
    return [
        {"task": task, "kind": _kind(task), "scored": counts.get(task, 0),
         "teams": len(teams.get(task, ()))}
        for task in tasks.names()
    ]  # fmt: skip


@router.get("/tasks.{fmt}")
def home_export(fmt: str, store: Stored) -> Response:
    return export(fmt, home_rows(store), "tasks")


@router.get("/", response_class=HTMLResponse)
def home(request: Request, store: Stored) -> HTMLResponse:
    return page(request, "home.html", rows=home_rows(store))


def _kind(task: str) -> str:
    """How a task is fed: PHI annotators, de-identifiers, or prediction files."""
    if tasks.is_phi(task):
        return "PHI"
    return "de-identifier" if tasks.is_deid(task) else "file"
