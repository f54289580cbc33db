"""The leaderboard site: :func:`create_app` builds a FastAPI app over one store, pages rendered by Jinja2.

Every page is plain HTML with a local stylesheet; sorting is a query
parameter, so the site works without JavaScript. Every table has a ``.csv``
and a ``.json`` twin. URLs are permanent: ``/submissions/{id}`` and
``/results/{id}`` name a submission and one scoring of it.

The site is public, and teams are adversaries:

- It shows SCORED submissions only: any other submission (and its results) is
  a 404, as an unknown id is, and is left out of team pages and tables. Of a
  submission it shows its team, task, dataset, kind, scores and what its tool
  said of itself (bounded, its URL without credentials: :func:`board.shown_url`)
  — never its command line, tool URL credentials, worker or events.
- Note text (errors in context) and a result's warnings (which may name
  offsets of notes) only for a dataset marked public (:func:`board.public`).
- Every response carries a Content-Security-Policy with no inline script or
  style (the plots' SVG carries presentation attributes, not styles:
  :mod:`nlpbench.web.plots`), ``frame-ancestors 'none'`` and
  ``X-Frame-Options``, ``X-Content-Type-Options: nosniff`` and
  ``Referrer-Policy: no-referrer``.
- A CSV cell that is a string starting with ``=``, ``+``, ``-``, ``@``, a tab
  or a carriage return is written with a leading ``'`` (OWASP's advice against
  formula injection): a spreadsheet shows it as text. Numbers stay numbers —
  a negative score is a number, not a string, and is written as it is.
- A GET never writes: intervals and rank groups are stored when results are
  (and by :func:`board.refresh`), pages read them.
- A malformed or out-of-range id is a 404 page; a failure nobody foresaw is a
  500 page, logged with its type and place only (:class:`~nlpbench.api.problems.Guard`).
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fastapi import FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from sqlalchemy import select
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from nlpbench.api.problems import Guard
from nlpbench.platform import intervals, tasks
from nlpbench.platform.views import moment
from nlpbench.report.model import Report
from nlpbench.stats.report import overall_rows
from nlpbench.store import Store
from nlpbench.store.intervals import ResultInterval
from nlpbench.store.submissions import SCORED, Result, Submission
from nlpbench.version import __version__
from nlpbench.web import board, plots

HERE = Path(__file__).resolve().parent
FORMATS = ("csv", "json")
#: The largest id a page looks up: PostgreSQL's ``integer``; anything beyond is a 404 without a query.
MAX_ID = 2**31 - 1
#: Headers of every response (see the module's docstring).
SECURITY_HEADERS = {
    "content-security-policy": (
        "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; "
        "frame-ancestors 'none'"
    ),
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
}
#: What a CSV cell may not start with, lest a spreadsheet run it as a formula.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
#: The largest request body the site reads: it serves GETs only.
MAX_BODY_BYTES = 64 * 2**10


@dataclass(frozen=True)
class Settings:
    """What the site shows: its title, and whether a task table keeps each tool's best or latest submission."""

    title: str = "nlpbench leaderboard"
    pick: str = "best"


class SecurityHeaders:
    """Adds :data:`SECURITY_HEADERS` to every response, static files and errors included."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [
                    *((k, v) for k, v in message.get("headers", []) if k.decode().lower() not in SECURITY_HEADERS),
                    *((k.encode(), v.encode()) for k, v in SECURITY_HEADERS.items()),
                ]
            await send(message)

        await self.app(scope, receive, with_headers if scope["type"] == "http" else send)


def neutralised(cell: Any) -> Any:
    """A CSV cell that a spreadsheet will not run as a formula: a string starting with one of
    :data:`FORMULA_STARTS` gets a leading ``'``; anything else is returned as it is."""
    return f"'{cell}" if isinstance(cell, str) and cell.startswith(FORMULA_STARTS) else cell


def create_app(store: Store, settings: Settings | None = None) -> FastAPI:
    """The site over ``store``; the best-over-time plot of each task is kept, for the results it was drawn from."""
    settings = settings or Settings()
    app = FastAPI(title=settings.title, version=__version__, docs_url=None, redoc_url=None, openapi_url=None)
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")
    pages = Jinja2Templates(directory=HERE / "templates")
    drawn: dict[str, tuple[Any, str]] = {}  # task → (what its plot was drawn from, the SVG): one plot per task

    def page(request: Request, name: str, code: int = 200, **context: Any) -> HTMLResponse:
        return pages.TemplateResponse(request, name, {"settings": settings, **context}, status_code=code)

    def failed(error: Exception) -> Response:
        """The 500 page: the exception's type only (its message may quote what it was given)."""
        html = pages.get_template("error.html").render(settings=settings, status=500, detail=type(error).__name__)
        return HTMLResponse(html, status_code=500)

    app.add_middleware(Guard, max_body_bytes=MAX_BODY_BYTES, answer=failed)
    app.add_middleware(SecurityHeaders)

    def export(fmt: str, rows: list[dict[str, Any]], name: str) -> Response:
        if fmt == "json":
            return JSONResponse(rows)
        if fmt != "csv":
            raise HTTPException(404, f"no export format {fmt}; known: {', '.join(FORMATS)}")
        out = io.StringIO()
        columns = list(dict.fromkeys(key for row in rows for key in row))
        writer = csv.DictWriter(out, [neutralised(column) for column in columns], lineterminator="\n")
        writer.writeheader()
        writer.writerows({neutralised(k): neutralised(v) for k, v in row.items()} for row in rows)
        safe = re.sub(r"[^A-Za-z0-9._-]", "_", name)[:80]  # a header: nothing of a path but plain characters
        headers = {"content-disposition": f'inline; filename="{safe}.csv"'}
        return Response(out.getvalue(), media_type="text/csv; charset=utf-8", headers=headers)

    @app.exception_handler(StarletteHTTPException)
    async def not_found(request: Request, error: StarletteHTTPException) -> Response:
        return page(request, "error.html", error.status_code, status=error.status_code, detail=str(error.detail))

    @app.exception_handler(RequestValidationError)
    async def no_such_page(request: Request, _error: RequestValidationError) -> Response:
        detail = f"no page {board.bounded(request.url.path, board.LONG)}"
        return page(request, "error.html", 404, status=404, detail=detail)

    def checked_id(value: int, what: str) -> int:
        if not 1 <= value <= MAX_ID:
            raise HTTPException(404, f"no {what} {value}")
        return value

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

    def table(task: str, pick: str | None) -> tuple[board.Table, dict[int, dict[str, Any]]]:
        if not tasks.known(task):
            raise HTTPException(404, f"no task {board.bounded(task)}")
        pick = pick or settings.pick
        if pick not in board.PICKS:
            raise HTTPException(404, f"no setting pick={board.bounded(pick)}; known: {', '.join(board.PICKS)}")
        with store.session(readonly=True) as session:
            found = board.task_table(session, task, pick)
            shown = [line.shown.result_id for line in found.lines]
            query = select(Result.id, Result.reproducibility).where(Result.id.in_(shown))
            facts = {result_id: reproducibility for result_id, reproducibility in session.execute(query)}
        return found, facts

    def line_row(line: board.Line, columns: list[str], facts: dict[int, dict[str, Any]]) -> dict[str, Any]:
        shown = line.shown.submission
        tool = board.tool_facts(shown) or {}
        made = facts.get(line.shown.result_id, {})
        row: dict[str, Any] = {"team": line.team, "tool": line.tool}
        for key in columns:
            cell = line.cells.get(key)
            row[key] = cell.value if cell else None
            row[f"{key} ci_low"] = cell.low if cell else None
            row[f"{key} ci_high"] = cell.high if cell else None
            row[f"{key} rank"] = cell.rank if cell else None
            row[f"{key} submission"] = cell.submission.id if cell else None
        digest = made.get("image") or made.get("commandSha256") or made.get("predictionsSha256")
        row |= {
            "version": tool.get("version"),
            "license": tool.get("license"),
            "url": tool.get("url") or board.shown_url(shown.tool_url),
            "apiVersion": tool.get("apiVersion"),
            "digest": board.bounded(digest, board.LONG),
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
        order = "asc" if order == "asc" else "desc"
        lines = board.sorted_lines(found, sort, order == "desc")
        series = board.best_over_time(found)
        source = tuple((key, tuple(points)) for key, points in series.items())
        if series and drawn.get(task, (None,))[0] != source:
            drawn[task] = (source, plots.best_over_time(f"{task}: best score over time", series))
        plot = drawn[task][1] if series else None
        rows = [line_row(line, found.columns, facts) for line in lines]
        return page(
            request, "task.html", table=found, lines=lines, rows=rows, sort=sort, order=order, plot=plot,
            metric=_metric_name(task),
        )  # fmt: skip

    # --- submissions and results --------------------------------------------------------------

    def submission_view(submission_id: int, only_result: int | None = None) -> dict[str, Any]:
        with store.session(readonly=True) as session:
            submission = session.get(Submission, checked_id(submission_id, "submission"))
            if submission is None or submission.status != SCORED:  # as if absent: no status is told
                raise HTTPException(404, f"no submission {submission_id}")
            results = list(session.scalars(select(Result).where(Result.submission_id == submission_id)))
            if only_result is not None:
                results = [r for r in results if r.id == only_result]
            public = board.public(session, submission)
            views = [_result_view(session, submission, result, public) for result in results]
            return {"submission": _submission_json(submission), "public": public, "results": views}

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
            query = (
                select(Result.submission_id)
                .join(Submission, Submission.id == Result.submission_id)
                .where(Result.id == checked_id(result_id, "result"), Submission.status == SCORED)
            )
            owner = session.execute(query).scalar()
        if owner is None:
            raise HTTPException(404, f"no result {result_id}")
        return owner

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
            rows = [
                {"submission": s.id, "task": s.task, "dataset": s.dataset, "tool": board.tool_name(s),
                 "status": s.status, "submitted": s.created_at.isoformat()}
                for s, _ in board.scored(session, team=team)
            ]  # fmt: skip
        if not rows:
            raise HTTPException(404, f"no team {board.bounded(team)}")
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


def _submission_json(submission: Submission) -> dict[str, Any]:
    """What the public site tells of a scored submission: never its command, credentials, worker or events."""
    return {
        "id": submission.id,
        "team": submission.team,
        "task": submission.task,
        "dataset": submission.dataset,
        "datasetVersion": submission.dataset_version,
        "kind": submission.kind,
        "status": submission.status,
        "createdAt": moment(submission.created_at),
        "tool": board.tool_facts(submission),
        "toolUrl": board.shown_url(submission.tool_url),
        "image": board.bounded(submission.image, board.LONG),
        "predictions": board.bounded(submission.predictions_name) if submission.kind == "predictions" else None,
    }


def _reproducibility(made: dict[str, Any]) -> dict[str, Any]:
    """A result's reproducibility fields as the public site shows them: URLs without credentials, tool facts
    bounded; digests, dataset, profile and version as stored."""
    tool = made.get("tool")
    return {
        **made,
        "tool": {k: board.shown_url(v) if k == "url" else board.bounded(v) for k, v in tool.items()}
        if isinstance(tool, dict)
        else None,
        "toolUrl": board.shown_url(made.get("toolUrl")),
        "image": board.bounded(made.get("image"), board.LONG),
    }


def _result_view(session, submission: Submission, result: Result, public: bool) -> dict[str, Any]:
    """A result's score rows with their stored intervals, per type; its plots; errors in context and warnings
    for a public dataset only."""
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
        "createdAt": moment(result.created_at),
        "reproducibility": _reproducibility(result.reproducibility),
        "warnings": result.warnings if public else [],
        "warningsWithheld": 0 if public else len(result.warnings),
        "types": types,
        "rows": rows,
        "errors": board.errors_in_context(session, submission, result) if public else [],
    }


def _result_json(view: dict[str, Any]) -> dict[str, Any]:
    keys = ("id", "profile", "createdAt", "reproducibility", "warnings", "warningsWithheld", "rows", "errors")
    return {key: view[key] for key in keys}
