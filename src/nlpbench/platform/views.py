"""Submissions as JSON, the same for the command line and the platform API (no note text, no tool body)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from nlpbench.platform import accounts, at_sites
from nlpbench.platform import queue as queues
from nlpbench.platform.tasks import PHI_TASKS
from nlpbench.store import intervals
from nlpbench.store.intervals import ResultInterval
from nlpbench.store.submissions import Result, ResultDocument, Submission, SubmissionLog

#: The log stream that keeps the organisers' line of why a submission ended, when its team reads less.
REASON_STREAM = "reason"


#: What stands for a result's warnings when its team reads it on a private dataset.
PRIVATE_WARNINGS = "the scorer's warnings name notes of a private dataset: the organisers can read them"


def moment(value: datetime | None) -> str | None:
    """A stored moment as JSON shows it: ISO 8601 in UTC, ``Z`` at the end; None stays None."""
    return value.isoformat().replace("+00:00", "Z") if value is not None else None


def submission_json(
    session: Session, submission: Submission, *, details: bool = False, team: bool = False
) -> dict[str, Any]:
    """A submission's fields; with ``details``, its events and results (score rows, intervals, reproducibility),
    its run at each data site (:func:`nlpbench.platform.at_sites.runs_of`; none for a dataset held here), and, for
    an LLM tool, ``llm``: its grounding counts, tokens, latency percentiles and cost
    (:meth:`nlpbench.platform.accounts.Usage.as_json`; None for other tools).

    Seen by its ``team`` on a private dataset, the results keep their aggregate scores but not the
    scorer's warnings, which name notes of the gold.
    """
    data: dict[str, Any] = {
        "id": submission.id,
        "queue": submission.queue,
        "team": submission.team,
        "task": submission.task,
        "dataset": submission.dataset,
        "datasetVersion": submission.dataset_version,
        "kind": submission.kind,
        "toolUrl": submission.tool_url,
        "command": submission.command,
        "image": submission.image,
        "predictions": submission.predictions_name if submission.kind == "predictions" else None,
        "status": submission.status,
        "reason": submission.reason,
        "createdAt": moment(submission.created_at),
        "updatedAt": moment(submission.updated_at),
        "validatedAt": moment(submission.validated_at),
        "startedAt": moment(submission.started_at),
        "finishedAt": moment(submission.finished_at),
        "progress": {"done": submission.notes_done, "total": submission.notes_total},
        "attempts": submission.attempts,
        "worker": submission.worker,
        "tool": submission.tool_meta,
        "warnings": submission.warnings,
        "description": submission.description,
        "paperUrl": submission.paper_url,
        "codeUrl": submission.code_url,
        "removal": None
        if submission.removal is None
        else {"removal": submission.removal, "reason": submission.removal_reason},
        "model": submission.model,
    }
    if details:
        used = accounts.usage(session, submission)
        data["llm"] = used.as_json() if used is not None else None
        data["events"] = [
            {"at": moment(event.at), "status": event.status, "reason": event.reason}
            for event in queues.events(session, submission.id)
        ]
        data["results"] = [_result_json(session, result) for result in _results(session, submission.id)]
        data["sites"] = at_sites.runs_of(session, submission.id)
        if team and queues.is_private(session, submission):
            for result in data["results"]:
                result["warnings"] = [PRIVATE_WARNINGS] if result["warnings"] else []
    return data


def _results(session: Session, submission_id: int) -> list[Result]:
    return list(session.scalars(select(Result).where(Result.submission_id == submission_id).order_by(Result.profile)))


def _result_json(session: Session, result: Result) -> dict[str, Any]:
    documents = session.execute(select(func.count()).where(ResultDocument.result_id == result.id)).scalar_one()
    return {
        "id": result.id,
        "profile": result.profile,
        "createdAt": moment(result.created_at),
        "scores": result.scores,
        "reproducibility": result.reproducibility,
        "warnings": result.warnings,
        "perDocumentRows": documents,
        "intervals": [_interval_json(interval) for interval in intervals.of_result(session, result.id)],
    }


def _interval_json(interval: ResultInterval) -> dict[str, Any]:
    """A stored interval: which value of which type, the value, its bounds and how they were computed."""
    return {
        "type": interval.annotation_type,
        "metric": interval.metric,
        "field": interval.field,
        "ranked": interval.ranked,
        "value": interval.value,
        "estimate": interval.estimate,
        "low": interval.low,
        "high": interval.high,
        "confidence": interval.confidence,
        "method": interval.method,
        "resamples": interval.resamples,
        "documents": interval.documents,
    }


def per_document(session: Session, submission_id: int, profile: str) -> list[dict[str, Any]]:
    """The stored per-document rows of a submission's result under ``profile``: type by type, in the order of
    its task's types (:data:`~nlpbench.platform.tasks.PHI_TASKS`; any other type after them, by name), each
    type's rows in the order they were stored. The worker stores a batch of rows as each type's fills, so the
    order of the stored rows alone would interleave the types."""
    task = session.scalar(select(Submission.task).where(Submission.id == submission_id))
    rank = {annotation_type: index for index, annotation_type in enumerate(PHI_TASKS.get(task or "", ()))}
    rows = session.execute(
        select(ResultDocument)
        .join(Result, Result.id == ResultDocument.result_id)
        .where(Result.submission_id == submission_id, Result.profile == profile)
        .order_by(ResultDocument.id)
    ).scalars()
    ordered = sorted(rows, key=lambda row: (rank.get(row.annotation_type, len(rank)), row.annotation_type))
    return [
        {"type": row.annotation_type, "document": row.document, "metric": row.metric, **row.counts} for row in ordered
    ]


def logs_json(session: Session, submission: Submission) -> dict[str, Any]:
    """For organisers: the events, the whole line of why it ended where its team reads less (``reason``, see
    :class:`~nlpbench.platform.validation.Disclosure`), and what a tool nlpbench started printed (it may hold PHI)."""
    logs = {
        log.stream: log
        for log in session.scalars(select(SubmissionLog).where(SubmissionLog.submission_id == submission.id))
    }
    reason = logs.pop(REASON_STREAM, None)
    return {
        "id": submission.id,
        "events": submission_json(session, submission, details=True)["events"],
        "reason": reason.content if reason is not None else None,
        "tool": {stream: {"content": log.content, "truncated": log.truncated} for stream, log in logs.items()},
    }
