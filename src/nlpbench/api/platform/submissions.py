"""Submissions: make, list, read (with events, results and per-document counts), cancel; organisers read logs,
disqualify or hide a submission (the reason kept), run a FAILED one again and re-queue a stuck one, without
spending quota."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Path, Query, Request
from fastapi.responses import RedirectResponse
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException

from nlpbench.api.platform.access import Stored, Who, acting_team, errors
from nlpbench.errors import Kind
from nlpbench.platform import admin, moderation, visibility, webhooks
from nlpbench.platform import queue as queues
from nlpbench.platform.views import logs_json, per_document, submission_json
from nlpbench.store.models import utcnow
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
    challenge: str | None = Field(default=None, max_length=60, description="The challenge it is made to.")
    description: str | None = Field(default=None, max_length=2000, description="Shown on its page.")
    paperUrl: str | None = Field(default=None, max_length=500, description="An http(s) link to its paper.")
    codeUrl: str | None = Field(default=None, max_length=500, description="An http(s) link to its code.")
    phase: str | None = Field(
        default=None, max_length=60, description="The challenge's phase: it decides the queue and the quota."
    )
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
    team = acting_team(me, body.team, "submission", "submits for")
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
        challenge=body.challenge,
        phase=body.phase,
        description=body.description,
        paper_url=body.paperUrl,
        code_url=body.codeUrl,
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
        shown = submission_json(session, found, details=True, team=not me.organiser)
        if not me.organiser and visibility.hidden(session, found, utcnow()):
            shown["results"] = []  # its status only, until its phase closes
            shown["sites"] = [{**run, "values": []} for run in shown["sites"]]  # a site's values are scores too
        return shown


@router.get("/submissions/{submission_id}/documents", responses=errors(Kind.forbidden, Kind.not_found))
def documents(
    submission_id: int, me: Who, store: Stored, profile: Annotated[str, Query(pattern=PROFILE_PATTERN)] = "standard"
) -> dict[str, Any]:
    with store.session(readonly=True) as session:
        found = queues.get(session, submission_id, me.team)
        if not me.organiser and visibility.hidden(session, found, utcnow()):
            raise HTTPException(403, "its challenge phase shows scores to the organisers only until it closes")
        if not me.organiser and queues.is_private(session, found):
            raise HTTPException(403, "the dataset is private: its team sees aggregate scores only")
        return {"profile": profile, "perDocument": per_document(session, submission_id, profile)}


@router.post("/submissions/{submission_id}/cancel", responses=errors(Kind.not_found, Kind.conflict))
def cancel(submission_id: int, me: Who, store: Stored, request: Request) -> dict[str, Any]:
    by = "organiser" if me.organiser else f"team {me.team}"
    waited: list[int] = []  # cancelled while it waited: no worker posts its webhook, this process does
    queues.cancel(store, submission_id, team=me.team, by=by, waited=waited)
    for done in waited:
        webhooks.deliver_later(store, done, request.app.state.deliveries)
    with store.session(readonly=True) as session:
        return submission_json(session, queues.get(session, submission_id))


@router.get("/submissions/{submission_id}/logs", responses=errors(Kind.forbidden, Kind.not_found))
def logs(submission_id: int, me: Who, store: Stored) -> dict[str, Any]:
    if not me.organiser:
        raise HTTPException(403, "logs are for organisers: a tool's output may hold PHI")
    with store.session(readonly=True) as session:
        return logs_json(session, queues.get(session, submission_id))


@router.post("/submissions/{submission_id}/rerun", responses=errors(Kind.forbidden, Kind.not_found, Kind.conflict))
def rerun(submission_id: int, me: Who, store: Stored) -> dict[str, Any]:
    """Organisers only: run a FAILED submission again, without spending its team's quota (declared before
    ``/disqualify`` and ``/hide``, whose path would take ``rerun`` too)."""
    if not me.organiser:
        raise HTTPException(403, "running a submission again is the organisers' to do")
    moderation.rerun(store, submission_id)
    with store.session(readonly=True) as session:
        return submission_json(session, queues.get(session, submission_id))


@router.post(
    "/submissions/{submission_id}/requeue",
    responses=errors(Kind.forbidden, Kind.not_found, Kind.conflict) | {303: {"description": "A form: to the page"}},
)
def requeue(submission_id: int, me: Who, store: Stored, request: Request) -> Any:
    """Organisers only: take a stuck submission from its worker and queue it again, without spending its team's
    quota (:func:`nlpbench.platform.admin.requeue`). A form (the admin page's button) is sent back to the page."""
    if not me.organiser:
        raise HTTPException(403, "re-queueing a submission is the organisers' to do")
    admin.requeue(store, submission_id)
    if request.headers.get("content-type", "").startswith(("application/x-www-form-urlencoded", "multipart/form-data")):
        return RedirectResponse("../../admin/queue.html", status_code=303)
    with store.session(readonly=True) as session:
        return submission_json(session, queues.get(session, submission_id))


class Removal(BaseModel):
    """Why an organiser takes a submission off the leaderboards."""

    model_config = ConfigDict(extra="forbid")

    reason: str = Field(min_length=1, max_length=500)


@router.post(
    "/submissions/{submission_id}/{removal}",
    responses=errors(Kind.forbidden, Kind.not_found, Kind.conflict),
    openapi_extra={"description": "Organisers only: disqualify or hide the submission, with the reason kept."},
)
def remove(
    submission_id: int,
    removal: Annotated[str, Path(pattern="^(disqualify|hide)$")],
    body: Annotated[Removal, Body()],
    me: Who,
    store: Stored,
) -> dict[str, Any]:
    if not me.organiser:
        raise HTTPException(403, "disqualifying or hiding a submission is the organisers' to do")
    moderation.remove(store, submission_id, "disqualified" if removal == "disqualify" else "hidden", body.reason)
    with store.session(readonly=True) as session:
        return submission_json(session, queues.get(session, submission_id))
