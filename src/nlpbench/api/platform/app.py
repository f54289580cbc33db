"""The platform API over the store: make, list, read and cancel submissions; organisers read logs.

Under ``/api/v1``:

- ``POST /archives?kind=source|image`` (``team`` for organisers) — the request body is an archive a team's
  tool runs from (a tool's source, or an OCI image archive), up to ``Settings.max_archive_bytes``: 201 and
  ``{digest, kind, size}`` (the same bytes again: the same digest);
- ``POST /submissions`` — ``{task, dataset, team?, queue?, toolUrl | command | image | archive + command |
  predictions, predictionsName?}`` → 201 and the submission; 429 past the quota;
- ``GET /submissions`` (``status``, ``queue``, ``limit``) — newest first;
- ``GET /submissions/{id}`` — with its events and results;
- ``GET /submissions/{id}/documents?profile=P`` — the stored per-document counts (on a private dataset,
  organisers only: its team sees aggregate scores);
- ``POST /submissions/{id}/cancel`` — 409 once it has ended;
- ``GET /submissions/{id}/logs`` — organisers only (a tool's output may hold PHI);
- ``GET /healthCheck`` — the only request without a key.

Every other request needs a platform API key (``X-API-Key`` or
``Authorization: Bearer``): a team key makes and sees its own team's
submissions only (another team's is 404, as if it did not exist), an
organiser key sees all. A team submits to the queues the organisers opened
(naming another is 404), and gives a tool URL only on a public dataset and
to a public address, unless the queue allow-lists its host (else 403; see
:mod:`nlpbench.platform.network`). Keys are looked up at every request: one
made, revoked or expired while the server runs counts at once. Errors are
RFC 7807 problem objects that quote no note text and no tool body; a NUL or
a lone surrogate in a request, or an id past any submission's, is a problem
too (400, 404), never a 500.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, FastAPI, Query, Request
from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException

from nlpbench.api.datanode.app import add_error_handlers
from nlpbench.api.problems import Guard, ProblemResponse, problem
from nlpbench.errors import InputError
from nlpbench.platform import queue as queues
from nlpbench.platform.keys import Caller, caller
from nlpbench.platform.views import logs_json, per_document, submission_json
from nlpbench.registry import UnknownName
from nlpbench.store import Store, artifacts
from nlpbench.store.submissions import STATUSES
from nlpbench.version import __version__

BASE_PATH = "/api/v1"
#: An upload is held in memory up to this size, then in a temporary file, before it goes into the store.
SPOOL_BYTES = 8 * 2**20
PROFILE_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$"


@dataclass(frozen=True)
class Settings:
    #: The largest request body, in bytes: a prediction file and a little more.
    max_body_bytes: int = queues.MAX_PREDICTION_BYTES + 2**20
    #: The largest archive upload (``POST /archives``), in bytes.
    max_archive_bytes: int = queues.MAX_ARCHIVE_BYTES


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


def _who(request: Request) -> Caller:
    """The caller of a request, by its platform API key (``X-API-Key`` or ``Authorization: Bearer``)."""
    key = request.headers.get("x-api-key")
    bearer = request.headers.get("authorization", "")
    if not key and bearer.lower().startswith("bearer "):
        key = bearer[7:].strip()
    if not key:
        raise HTTPException(401, "an API key is required (X-API-Key header)", {"WWW-Authenticate": "Bearer"})
    with request.app.state.store.session(readonly=True) as session:
        found = caller(session, key)
    if found is None:
        raise HTTPException(401, "unknown API key", {"WWW-Authenticate": "Bearer"})
    return found


Who = Annotated[Caller, Depends(_who)]


def create_app(store: Store, settings: Settings | None = None) -> FastAPI:
    """The platform API serving ``store``."""
    settings = settings or Settings()
    app = FastAPI(
        title="nlpbench platform API",
        version=__version__,
        description="Submissions of NLP Sandbox tools and prediction files: queued, validated, run and scored.",
        openapi_url=f"{BASE_PATH}/openapi.json",
        docs_url=f"{BASE_PATH}/ui",
        redoc_url=None,
    )
    app.state.store = store
    add_error_handlers(app, settings.max_body_bytes)
    uploads = {f"{BASE_PATH}/archives": settings.max_archive_bytes}
    app.add_middleware(Guard, max_body_bytes=settings.max_body_bytes, path_limits=uploads)

    @app.exception_handler(InputError)
    async def bad_input(_request: Request, error: InputError) -> ProblemResponse:
        return problem(400, str(error))

    @app.exception_handler(UnknownName)
    async def unknown_name(_request: Request, error: UnknownName) -> ProblemResponse:
        return problem(400, str(error))

    @app.exception_handler(queues.PlatformError)
    async def refused(_request: Request, error: queues.PlatformError) -> ProblemResponse:
        status = {queues.NotFound: 404, queues.QuotaExceeded: 429, queues.Conflict: 409, queues.Forbidden: 403}.get(
            type(error), 400
        )
        return problem(status, str(error))

    router = APIRouter(prefix=BASE_PATH)

    @router.get("/healthCheck", tags=["Health"])
    def health() -> dict[str, str]:
        with store.session(readonly=True) as session:
            queues.listed(session, limit=1)
        return {"status": "pass"}

    @router.post("/submissions", status_code=201, tags=["Submissions"])
    def create(body: Annotated[NewSubmission, Body()], me: Who) -> dict[str, Any]:
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
            organiser=me.organiser,
        )
        submission_id = queues.submit(store, request)
        with store.session(readonly=True) as session:
            return submission_json(session, queues.get(session, submission_id))

    @router.post("/archives", status_code=201, tags=["Submissions"])
    async def upload(
        request: Request,
        me: Who,
        kind: Annotated[str, Query(pattern="^(source|image)$")],
        team: Annotated[str | None, Query(pattern=f"^{queues.NAME_PATTERN}$")] = None,
    ) -> dict[str, Any]:
        """An archive a team's tool runs from, kept by digest for that team: its source, or an OCI image."""
        owner = team if me.organiser else me.team
        if owner is None:
            raise HTTPException(400, "an organiser's upload names its team (?team=NAME)")
        if not me.organiser and team not in (None, me.team):
            raise HTTPException(403, "a team key uploads for its own team only")
        with tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES) as body:
            async for chunk in request.stream():
                body.write(chunk)
            body.seek(0)
            digest = await run_in_threadpool(queues.upload, store, body, kind, owner, limit=settings.max_archive_bytes)
        with store.session(readonly=True) as session:
            artifact = artifacts.get(session, digest, owner)
            return {"digest": artifact.digest, "kind": kind, "size": artifact.size}

    @router.get("/submissions", tags=["Submissions"])
    def listing(
        me: Who,
        status: Annotated[str | None, Query(pattern="^(" + "|".join(STATUSES) + ")$")] = None,
        queue: Annotated[str | None, Query(pattern=f"^{queues.NAME_PATTERN}$")] = None,
        limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    ) -> dict[str, Any]:
        with store.session(readonly=True) as session:
            found = queues.listed(session, team=me.team, queue=queue, status=status, limit=limit)
            return {"submissions": [submission_json(session, s) for s in found]}

    @router.get("/submissions/{submission_id}", tags=["Submissions"])
    def one(submission_id: int, me: Who) -> dict[str, Any]:
        with store.session(readonly=True) as session:
            found = queues.get(session, submission_id, me.team)
            return submission_json(session, found, details=True, team=not me.organiser)

    @router.get("/submissions/{submission_id}/documents", tags=["Submissions"])
    def documents(
        submission_id: int, me: Who, profile: Annotated[str, Query(pattern=PROFILE_PATTERN)] = "standard"
    ) -> dict[str, Any]:
        with store.session(readonly=True) as session:
            found = queues.get(session, submission_id, me.team)
            if not me.organiser and queues.is_private(session, found):
                raise HTTPException(403, "the dataset is private: its team sees aggregate scores only")
            return {"profile": profile, "perDocument": per_document(session, submission_id, profile)}

    @router.post("/submissions/{submission_id}/cancel", tags=["Submissions"])
    def cancel(submission_id: int, me: Who) -> dict[str, Any]:
        by = "organiser" if me.organiser else f"team {me.team}"
        queues.cancel(store, submission_id, team=me.team, by=by)
        with store.session(readonly=True) as session:
            return submission_json(session, queues.get(session, submission_id))

    @router.get("/submissions/{submission_id}/logs", tags=["Submissions"])
    def logs(submission_id: int, me: Who) -> dict[str, Any]:
        if not me.organiser:
            raise HTTPException(403, "logs are for organisers: a tool's output may hold PHI")
        with store.session(readonly=True) as session:
            return logs_json(session, queues.get(session, submission_id))

    app.include_router(router)
    return app
