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
- ``POST /submissions/{id}/disqualify|hide`` (``{reason}``), ``POST /submissions/{id}/rerun`` — organisers only:
  off every leaderboard with the reason kept, or a FAILED submission run again without spending quota
  (:mod:`nlpbench.platform.moderation`);
- ``POST /submissions/{id}/requeue``, ``GET /admin/queue`` and ``GET /admin/queue.html`` — organisers only: the
  workers, their leases and the submissions stuck past twice their time budget, and a stuck one taken from its
  worker and queued again without spending quota (:mod:`~nlpbench.api.platform.admin`);
- ``POST /challenges``, ``GET /challenges/{name}``, ``POST /challenges/{name}/phases/{phase}/open|close|freeze``
  (organisers only), ``GET /challenges/{name}/phases/{phase}/leaderboard`` — challenges and their phases
  (:mod:`~nlpbench.api.platform.challenges`); a submission names ``challenge`` and ``phase`` to be made to one,
  and while its phase hides scores its team reads its status only;
- ``POST /sites/lease``, ``POST /sites/runs/{run}/progress|result`` — a data site's, with its site key: the runs
  of submissions to the datasets it holds, and the counts it returns (:mod:`~nlpbench.api.platform.sites`);
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

The app mounts a router per resource (:mod:`~nlpbench.api.platform.health`,
:mod:`~nlpbench.api.platform.submissions`, :mod:`~nlpbench.api.platform.archives`,
:mod:`~nlpbench.api.platform.challenges`, :mod:`~nlpbench.api.platform.admin`),
whose routes take the caller and the store as dependencies
(:mod:`nlpbench.api.platform.access`) reading ``app.state``.
"""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import FastAPI

from nlpbench.api.datanode.app import add_store_handlers
from nlpbench.api.platform import admin, archives, challenges, health, sites, submissions
from nlpbench.api.problems import install_problem_handlers
from nlpbench.platform import queue as queues
from nlpbench.platform import webhooks
from nlpbench.platform.submitted import MAX_PREDICTION_BYTES
from nlpbench.store import Store
from nlpbench.version import __version__

BASE_PATH = "/api/v1"


@dataclass(frozen=True)
class Settings:
    #: The largest request body, in bytes: a prediction file and a little more.
    max_body_bytes: int = MAX_PREDICTION_BYTES + 2**20
    #: The largest archive upload (``POST /archives``), in bytes.
    max_archive_bytes: int = queues.MAX_ARCHIVE_BYTES


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
    app.state.settings = settings
    app.state.deliveries = webhooks.slots()  # of a submission cancelled while it waited
    uploads = {f"{BASE_PATH}/archives": settings.max_archive_bytes}
    install_problem_handlers(app, max_body_bytes=settings.max_body_bytes, path_limits=uploads)
    add_store_handlers(app)

    for resource in (health, submissions, archives, challenges, admin, sites):
        app.include_router(resource.router, prefix=BASE_PATH)
    return app
