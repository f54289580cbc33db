"""A team's page: its scored submissions."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, Response

from nlpbench.store import Store
from nlpbench.web import board
from nlpbench.web.render import Stored, export, page

router = APIRouter()


def team_rows(store: Store, team: str) -> list[dict[str, Any]]:
    with store.session(readonly=True) as session:
        rows = [
            {"submission": s.id, "task": s.task, "dataset": s.dataset, "tool": board.tool_name(s),
             "status": s.status, "submitted": s.created_at.isoformat()}
            for s, _ in board.scored(session, team=team)
        ]  # fmt: skip
    if not rows:
        raise HTTPException(404, f"no team {board.bounded(team)}")
    return rows


@router.get("/teams/{team}.{fmt}")
def team_export(team: str, fmt: str, store: Stored) -> Response:
    return export(fmt, team_rows(store, team), f"team-{team}")


@router.get("/teams/{team}", response_class=HTMLResponse)
def team_page(request: Request, team: str, store: Stored) -> HTMLResponse:
    return page(request, "team.html", team=team, rows=team_rows(store, team))
