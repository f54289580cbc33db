"""Submissions: make, list, read (with events, results and per-document counts), cancel; organisers read logs."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Query
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException

from nlpbench.api.platform.access import Stored, Who, errors
from nlpbench.errors import Kind
from nlpbench.platform import queue as queues
from nlpbench.platform.views import logs_json, per_document, submission_json
from nlpbench.store.submissions import STATUSES

router = APIRouter(tags=["Submissions"])
PROFILE_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$"


class NewSubmission(BaseModel):
    """A submission as a team makes it: exactly one of ``toolUrl``, ``command``, ``image``, ``predictions``."""

    model_config = ConfigDict(extra="forbid")

    task: str = Field(max_length=40)
    dataset: str = Field(max_length=101)
    team: str | None = Field(default=None, max_length=60, description="Organisers only: the team submitting.")
    queue: str = Field(default=queues.DEFAULT_QUEUE, max_length=60)
    toolUrl: str | None = Field(default=None, max_length=2000)
    command: str | None = Field(default=None, max_length=10000)
    image: str | None = Field(
        default=None, max_length=500, description="An uploaded image's sha256:…, or REGISTRY/NAME@sha256:…."
    )
    archive: str | None = Field(
        default=None, max_length=71, description="An uploaded source archive's sha256:…; command starts it."
    )
    predictions: str | None = Field(default=None, description="The prediction file's text.")
    predictionsName: str | None = Field(default=None, max_length=255)
    model: str | None = Field(
        default=None, max_length=queues.MODEL_LENGTH, description="The model an LLM tool runs: its price's name."
    )
    llmUrl: str | None = Field(
        default=None, max_length=2000, description="Organisers only: an OpenAI-compatible endpoint the worker serves."
    )
    template: str | None = Field(default=None, max_length=60, description="With llmUrl: the prompt template.")


@router.post(
    "/submissions", status_code=201, responses=errors(Kind.forbidden, Kind.not_found, Kind.quota, Kind.too_large)
)
def create(body: Annotated[NewSubmission, Body()], me: Who, store: Stored) -> dict[str, Any]:
    team = body.team if me.organiser else me.team
    if team is None:
        raise HTTPException(400, "an organiser's submission names its team")
    if not me.organiser and body.team not in (None, me.team):
        raise HTTPException(403, "a team key submits for its own team only")
    request = queues.Request(
        team=team,
        task=body.task,
        dataset=body.dataset,
        queue=body.queue,
        tool_url=body.toolUrl,
        command=body.command,
        image=body.image,
        predictions=body.predictions,
        predictions_name=body.predictionsName,
        archive=body.archive,
        model=body.model,
        llm_url=body.llmUrl,
        template=body.template,
        organiser=me.organiser,
    )
    submission_id = queues.submit(store, request)
    with store.session(readonly=True) as session:
        return submission_json(session, queues.get(session, submission_id))


@router.get("/submissions", responses=errors())
def listing(
    me: Who,
    store: Stored,
    status: Annotated[str | None, Query(pattern="^(" + "|".join(STATUSES) + ")$")] = None,
    queue: Annotated[str | None, Query(pattern=f"^{queues.NAME_PATTERN}$")] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> dict[str, Any]:
    with store.session(readonly=True) as session:
        found = queues.listed(session, team=me.team, queue=queue, status=status, limit=limit)
        return {"submissions": [submission_json(session, s) for s in found]}


@router.get("/submissions/{submission_id}", responses=errors(Kind.not_found))
def one(submission_id: int, me: Who, store: Stored) -> dict[str, Any]:
    with store.session(readonly=True) as session:
        found = queues.get(session, submission_id, me.team)
        return submission_json(session, found, details=True, team=not me.organiser)


@router.get("/submissions/{submission_id}/documents", responses=errors(Kind.forbidden, Kind.not_found))
def documents(
    submission_id: int, me: Who, store: Stored, profile: Annotated[str, Query(pattern=PROFILE_PATTERN)] = "standard"
) -> dict[str, Any]:
    with store.session(readonly=True) as session:
        found = queues.get(session, submission_id, me.team)
        if not me.organiser and queues.is_private(session, found):
            raise HTTPException(403, "the dataset is private: its team sees aggregate scores only")
        return {"profile": profile, "perDocument": per_document(session, submission_id, profile)}


@router.post("/submissions/{submission_id}/cancel", responses=errors(Kind.not_found, Kind.conflict))
def cancel(submission_id: int, me: Who, store: Stored) -> dict[str, Any]:
    by = "organiser" if me.organiser else f"team {me.team}"
    queues.cancel(store, submission_id, team=me.team, by=by)
    with store.session(readonly=True) as session:
        return submission_json(session, queues.get(session, submission_id))


@router.get("/submissions/{submission_id}/logs", responses=errors(Kind.forbidden, Kind.not_found))
def logs(submission_id: int, me: Who, store: Stored) -> dict[str, Any]:
    if not me.organiser:
        raise HTTPException(403, "logs are for organisers: a tool's output may hold PHI")
    with store.session(readonly=True) as session:
        return logs_json(session, queues.get(session, submission_id))
