"""The leaderboard site: :func:`create_app` builds a FastAPI app over one store, pages rendered by Jinja2.

Every page is plain HTML with a local stylesheet; sorting is a query
parameter, so the site works without JavaScript. Every table has a ``.csv``
and a ``.json`` twin. URLs are permanent: ``/submissions/{id}`` and
``/results/{id}`` name a submission and one scoring of it.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from sqlalchemy import select
from starlette.exceptions import HTTPException as StarletteHTTPException

from nlpbench import __version__
from nlpbench.platform import intervals, scoring, tasks
from nlpbench.platform.views import submission_json
from nlpbench.report.model import Report
from nlpbench.stats.report import overall_rows
from nlpbench.store import Store
from nlpbench.store.intervals import ResultInterval
from nlpbench.store.submissions import Result, Submission
from nlpbench.web import board, plots

HERE = Path(__file__).resolve().parent
FORMATS = ("csv", "json")


@dataclass(frozen=True)
class Settings:
    """What the site shows: its title, and whether a task table keeps each tool's best or latest submission."""

    title: str = "nlpbench leaderboard"
    pick: str = "best"


def create_app(store: Store, settings: Settings | None = None) -> FastAPI:
    """The site over ``store``; rank groups and plots are cached per app, keyed by what they are computed from."""
    settings = settings or Settings()
    app = FastAPI(title=settings.title, version=__version__, docs_url=None, redoc_url=None, openapi_url=None)
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")
    pages = Jinja2Templates(directory=HERE / "templates")
    cache: dict = {}  # rank groups and plots, keyed by what they were computed from

    def page(request: Request, name: str, code: int = 200, **context: Any) -> HTMLResponse:
        return pages.TemplateResponse(request, name, {"settings": settings, **context}, status_code=code)

    def export(fmt: str, rows: list[dict[str, Any]], name: str) -> Response:
        if fmt == "json":
            return JSONResponse(rows)
        if fmt != "csv":
            raise HTTPException(404, f"no export format {fmt}; known: {', '.join(FORMATS)}")
        out = io.StringIO()
        columns = list(dict.fromkeys(key for row in rows for key in row))
        writer = csv.DictWriter(out, columns, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        headers = {"content-disposition": f'inline; filename="{name}.csv"'}
        return Response(out.getvalue(), media_type="text/csv; charset=utf-8", headers=headers)

    @app.exception_handler(StarletteHTTPException)
    async def not_found(request: Request, error: StarletteHTTPException) -> Response:
        return page(request, "error.html", error.status_code, status=error.status_code, detail=str(error.detail))

    # --- home ---------------------------------------------------------------------------------

    def home_rows() -> list[dict[str, Any]]:
        with store.session(readonly=True) as session:
            counts: dict[str, int] = {}
            teams: dict[str, set[str]] = {}
            for submission, _ in board.scored(session):
                counts[submission.task] = counts.get(submission.task, 0) + 1
                teams.setdefault(submission.task, set()).add(submission.team)
        return [
            {"task": task, "kind": "PHI" if tasks.is_phi(task) else "file", "scored": counts.get(task, 0),
             "teams": len(teams.get(task, ()))}
            for task in tasks.names()
        ]  # fmt: skip

    @app.get("/tasks.{fmt}")
    def home_export(fmt: str) -> Response:
        return export(fmt, home_rows(), "tasks")

    @app.get("/", response_class=HTMLResponse)
    def home(request: Request) -> HTMLResponse:
        return page(request, "home.html", rows=home_rows())

    # --- task ---------------------------------------------------------------------------------

    def fill_intervals(**which: Any) -> None:
        """Store the intervals of results stored before intervals were; a write only when one lacks them, so
        that pages never wait for a worker's write (SQLite has one writer at a time)."""
        with store.session(readonly=True) as session:
            lacking = scoring.lacking_intervals(session, **which)
        if lacking:
            with store.session() as session:
                scoring.ensure_intervals(session, **which)

    def table(task: str, pick: str | None) -> tuple[board.Table, dict[int, dict[str, Any]]]:
        if not tasks.known(task):
            raise HTTPException(404, f"no task {task}")
        pick = pick or settings.pick
        if pick not in board.PICKS:
            raise HTTPException(404, f"no setting pick={pick}; known: {', '.join(board.PICKS)}")
        fill_intervals(task=task)
        with store.session(readonly=True) as session:
            found = board.task_table(session, task, pick, cache)
            shown = [line.shown.result_id for line in found.lines]
            query = select(Result.id, Result.reproducibility).where(Result.id.in_(shown))
            facts = {result_id: reproducibility for result_id, reproducibility in session.execute(query)}
        return found, facts

    def line_row(line: board.Line, columns: list[str], facts: dict[int, dict[str, Any]]) -> dict[str, Any]:
        shown = line.shown.submission
        meta = shown.tool_meta or {}
        made = facts.get(line.shown.result_id, {})
        row: dict[str, Any] = {"team": line.team, "tool": line.tool}
        for key in columns:
            cell = line.cells.get(key)
            row[key] = cell.value if cell else None
            row[f"{key} ci_low"] = cell.low if cell else None
            row[f"{key} ci_high"] = cell.high if cell else None
            row[f"{key} rank"] = cell.rank if cell else None
            row[f"{key} submission"] = cell.submission.id if cell else None
        row |= {
            "version": meta.get("version"),
            "license": meta.get("license"),
            "url": meta.get("url") or shown.tool_url,
            "apiVersion": meta.get("apiVersion"),
            "digest": made.get("image") or made.get("commandSha256") or made.get("predictionsSha256"),
            "submitted": shown.created_at.isoformat(),
        }
        return row

    @app.get("/tasks/{task}.{fmt}")
    def task_export(task: str, fmt: str, sort: str | None = None, order: str = "desc", pick: str | None = None):
        found, facts = table(task, pick)
        lines = board.sorted_lines(found, sort or _default_sort(found), order != "asc")
        return export(fmt, [line_row(line, found.columns, facts) for line in lines], task)

    @app.get("/tasks/{task}", response_class=HTMLResponse)
    def task_page(request: Request, task: str, sort: str | None = None, order: str = "desc", pick: str | None = None):
        found, facts = table(task, pick)
        sort = sort if sort in (*found.columns, "team", "tool", "date") else _default_sort(found)
        lines = board.sorted_lines(found, sort, order != "asc")
        series = board.best_over_time(found)
        drawn = ("plot", task, tuple((key, tuple(points)) for key, points in series.items()))
        if series and drawn not in cache:
            cache[drawn] = plots.best_over_time(f"{task}: best score over time", series)
        rows = [line_row(line, found.columns, facts) for line in lines]
        return page(
            request, "task.html", table=found, lines=lines, rows=rows, sort=sort, order=order, plot=cache.get(drawn),
            metric=_metric_name(task),
        )  # fmt: skip

    # --- submissions and results --------------------------------------------------------------

    def submission_view(submission_id: int, only_result: int | None = None) -> dict[str, Any]:
        fill_intervals(submission_id=submission_id)
        with store.session(readonly=True) as session:
            submission = session.get(Submission, submission_id)
            if submission is None:
                raise HTTPException(404, f"no submission {submission_id}")
            results = list(session.scalars(select(Result).where(Result.submission_id == submission_id)))
            if only_result is not None:
                results = [r for r in results if r.id == only_result]
            views = [_result_view(session, submission, result) for result in results]
            return {
                "submission": submission_json(session, submission, details=True),
                "public": board.public(session, submission),
                "results": views,
            }

    @app.get("/submissions/{submission_id}.{fmt}")
    def submission_export(submission_id: int, fmt: str) -> Response:
        view = submission_view(submission_id)
        if fmt == "json":
            return JSONResponse({**view["submission"], "results": [_result_json(r) for r in view["results"]]})
        return export(fmt, [row for r in view["results"] for row in r["rows"]], f"submission-{submission_id}")

    @app.get("/submissions/{submission_id}", response_class=HTMLResponse)
    def submission_page(request: Request, submission_id: int) -> HTMLResponse:
        return page(request, "submission.html", **submission_view(submission_id))

    def result_owner(result_id: int) -> int:
        with store.session(readonly=True) as session:
            result = session.get(Result, result_id)
            if result is None:
                raise HTTPException(404, f"no result {result_id}")
            return result.submission_id

    @app.get("/results/{result_id}.{fmt}")
    def result_export(result_id: int, fmt: str) -> Response:
        (view,) = submission_view(result_owner(result_id), result_id)["results"]
        if fmt == "json":
            return JSONResponse(_result_json(view))
        return export(fmt, view["rows"], f"result-{result_id}")

    @app.get("/results/{result_id}", response_class=HTMLResponse)
    def result_page(request: Request, result_id: int) -> HTMLResponse:
        return page(request, "submission.html", **submission_view(result_owner(result_id), result_id))

    # --- teams --------------------------------------------------------------------------------

    def team_rows(team: str) -> list[dict[str, Any]]:
        with store.session(readonly=True) as session:
            listed = session.scalars(
                select(Submission).where(Submission.team == team).order_by(Submission.created_at, Submission.id)
            )
            rows = [
                {"submission": s.id, "task": s.task, "dataset": s.dataset, "tool": board.tool_name(s),
                 "status": s.status, "submitted": s.created_at.isoformat()}
                for s in listed
            ]  # fmt: skip
        if not rows:
            raise HTTPException(404, f"no team {team}")
        return rows

    @app.get("/teams/{team}.{fmt}")
    def team_export(team: str, fmt: str) -> Response:
        return export(fmt, team_rows(team), f"team-{team}")

    @app.get("/teams/{team}", response_class=HTMLResponse)
    def team_page(request: Request, team: str) -> HTMLResponse:
        return page(request, "team.html", team=team, rows=team_rows(team))

    return app


def _default_sort(found: board.Table) -> str:
    return found.columns[0] if found.columns else "team"


def _metric_name(task: str) -> str:
    if tasks.is_phi(task):
        return "token F1"
    return {"timelines": "official score", "coref": "CoNLL F1", "codiesp": "MAP (D, P) or F1 (X)"}.get(task, "F1")


def _result_view(session, submission: Submission, result: Result) -> dict[str, Any]:
    """A result's score rows with their stored intervals, per type; its plots; errors in context if public."""
    stored = {(i.annotation_type, i.metric, i.field): i for i in intervals.stored(session, result.id)}
    rows: list[dict[str, Any]] = []
    types: dict[str, dict[str, Any]] = {}
    for annotation_type, score_rows in result.scores.items():
        overall, sliced, points = [], [], []
        for row in score_rows:
            out = {"type": annotation_type, **row}
            for value_field in ("precision", "recall", "f1", "value"):
                interval: ResultInterval | None = stored.get((annotation_type, row["metric"], value_field))
                whole = row.get("label") is None and row.get("average") is None
                if interval is not None and interval.low is not None and whole:
                    out[f"{value_field}_ci_low"], out[f"{value_field}_ci_high"] = interval.low, interval.high
            rows.append(out)
            (sliced if row.get("label") is not None or row.get("average") is not None else overall).append(out)
            if row in overall_rows(Report(submission.task, "", {}, score_rows)):
                value_field = "f1" if "f1" in row else "value"
                if isinstance(row.get(value_field), int | float):
                    points.append((row["metric"], float(row[value_field]), out.get(f"{value_field}_ci_low"),
                                   out.get(f"{value_field}_ci_high")))  # fmt: skip
        types[annotation_type] = {
            "overall": overall,
            "sliced": sliced,
            "plot": plots.whiskers(f"{submission.task} · {annotation_type}", points) if points else None,
        }
    return {
        "id": result.id,
        "profile": result.profile,
        "createdAt": result.created_at.isoformat(),
        "reproducibility": result.reproducibility,
        "warnings": result.warnings,
        "types": types,
        "rows": rows,
        "errors": board.errors_in_context(session, submission, result),
    }


def _result_json(view: dict[str, Any]) -> dict[str, Any]:
    return {key: view[key] for key in ("id", "profile", "createdAt", "reproducibility", "warnings", "rows", "errors")}
