"""A scored submission's page, and one result's: scores with intervals per type, plots, reproducibility; errors in
context and warnings for a public dataset only."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from sqlalchemy import select

from nlpbench.platform import accounts, at_sites, visibility
from nlpbench.platform.overall import OVERALL, overall_scores
from nlpbench.platform.queue import MAX_DESCRIPTION
from nlpbench.platform.views import moment
from nlpbench.report.model import Report, overall_rows
from nlpbench.store import Store, intervals
from nlpbench.store.intervals import ResultInterval
from nlpbench.store.models import utcnow
from nlpbench.store.submissions import SCORED, Result, Submission
from nlpbench.web import board
from nlpbench.web.forest import Row, forest
from nlpbench.web.render import Stored, checked_id, export, page

router = APIRouter()


def submission_view(store: Store, submission_id: int, only_result: int | None = None) -> dict[str, Any]:
    with store.session(readonly=True) as session:
        submission = session.get(Submission, checked_id(submission_id, "submission"))
        # as if absent: no status is told, nor that a phase hides its scores
        if (
            submission is None
            or submission.status != SCORED
            or submission.removal is not None
            or visibility.hidden(session, submission, utcnow())
        ):
            raise HTTPException(404, f"no submission {submission_id}")
        results = list(session.scalars(select(Result).where(Result.submission_id == submission_id)))
        if only_result is not None:
            results = [r for r in results if r.id == only_result]
        public = board.public(session, submission)
        views = [_result_view(session, submission, result, public) for result in results]
        used = accounts.usage(session, submission)
        shown = {**_submission_json(submission), "model": board.bounded(submission.model, board.LONG),
                 "llm": used.as_json() if used is not None else None}  # fmt: skip
        return {
            "submission": shown,
            "public": public,
            "results": views,
            "sites": at_sites.runs_of(session, submission.id),
        }


@router.get("/submissions/{submission_id}.{fmt}")
def submission_export(submission_id: int, fmt: str, store: Stored) -> Response:
    view = submission_view(store, submission_id)
    if fmt == "json":
        results = [_result_json(r) for r in view["results"]]
        return JSONResponse({**view["submission"], "results": results, "sites": view["sites"]})
    return export(fmt, [row for r in view["results"] for row in r["rows"]], f"submission-{submission_id}")


@router.get("/submissions/{submission_id}", response_class=HTMLResponse)
def submission_page(request: Request, submission_id: int, store: Stored) -> HTMLResponse:
    return page(request, "submission.html", **submission_view(store, submission_id))


def result_owner(store: Store, result_id: int) -> int:
    with store.session(readonly=True) as session:
        query = (
            select(Result.submission_id)
            .join(Submission, Submission.id == Result.submission_id)
            .where(
                Result.id == checked_id(result_id, "result"), Submission.status == SCORED, visibility.shown(utcnow())
            )
        )
        owner = session.execute(query).scalar()
    if owner is None:
        raise HTTPException(404, f"no result {result_id}")
    return owner


@router.get("/results/{result_id}.{fmt}")
def result_export(result_id: int, fmt: str, store: Stored) -> Response:
    (view,) = submission_view(store, result_owner(store, result_id), result_id)["results"]
    if fmt == "json":
        return JSONResponse(_result_json(view))
    return export(fmt, view["rows"], f"result-{result_id}")


@router.get("/results/{result_id}", response_class=HTMLResponse)
def result_page(request: Request, result_id: int, store: Stored) -> HTMLResponse:
    return page(request, "submission.html", **submission_view(store, result_owner(store, result_id), result_id))


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
        "description": board.bounded(submission.description, MAX_DESCRIPTION),
        "paperUrl": board.shown_url(submission.paper_url),
        "codeUrl": board.shown_url(submission.code_url),
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
    stored = {(i.annotation_type, i.metric, i.field): i for i in intervals.of_result(session, result.id)}
    rows: list[dict[str, Any]] = []
    types: dict[str, dict[str, Any]] = {}
    micro = overall_scores(submission.task, result.scores)  # a task of several types: its overall value first
    for annotation_type, score_rows in (({OVERALL: micro} if micro else {}) | result.scores).items():
        overall: list[dict[str, Any]] = []
        sliced: list[dict[str, Any]] = []
        points: list[Row] = []
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
                    points.append(Row(row["metric"], float(row[value_field]), out.get(f"{value_field}_ci_low"),
                                      out.get(f"{value_field}_ci_high"), rank=None))  # fmt: skip
        types[annotation_type] = {
            "overall": overall,
            "sliced": sliced,
            "plot": forest(f"{submission.task} · {annotation_type}", points, ranked=False) if points else None,
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
