"""The NLP Sandbox 1.2.0 data node over the store: a FastAPI app factory.

:func:`create_app` serves the 25 operations of
``nlpsandbox-schemas-1.2.0/openapi/data-node`` under ``/api/v1``, with the
official paths, operation ids, tags and parameters: datasets, FHIR stores,
patients, notes, annotation stores and annotation records. Ids are chosen by
the client in the ``…Id`` query parameter of each create (3–60 characters,
``[a-z0-9]+(-[a-z0-9]+)*``); a create answers 201 ``{name}``, an existing id
409, a missing parent or an invalid body or parameter 400, an unknown resource
404. Deleting a resource deletes what it holds.

Listings page with ``limit`` (10–100, default 10) and ``offset`` (≥ 0) and
answer ``{offset, limit, links: {next}, totalResults, <items>}``; unlike the
original, ``links.next`` is the empty string on the last page. It is built
from ``Settings.base_url``, never from the request's ``Host`` header (which
the client writes).

What the store holds is served as it is held: annotation records are not
validated again on the way out, so a record the import accepted (with a
warning) outside the schema is still served, never a 500. One gap is filled:
the 1.2.0 schema requires every annotation's ``confidence`` and the NLP
Sandbox's client refuses a record without one, so an annotation stored
without it (gold imported from a format that has none, as every dataset
``nlpbench synth`` makes) is served with confidence 100 — what the
``sandbox-seed`` format writes for the NLP Sandbox's own seeding script.

Every error is an RFC 7807 problem object naming the parameter or resource,
never the text of a note; a failure nobody foresaw is a 500 problem naming the
exception's type, logged with its type and where it was raised only
(:class:`nlpbench.api.problems.Guard`). Request bodies are limited to
``Settings.max_body_bytes``.

API keys (``X-API-Key`` or ``Authorization: Bearer``) are required on every
request but the health check with ``Settings.require_keys``, and otherwise as
soon as one key exists: each request looks until the first key is seen (keys
are revoked, never deleted, so once seen they are remembered), so a key made
while the node runs takes effect at once. A ``read`` key may ``GET``, a
``write`` key may also create and delete. A key scoped to datasets sees those
only: listings leave the others out, and every other dataset is answered as
an absent one (:data:`nlpbench.store.repository.REACH`); it may not create a
dataset.

The app mounts one router per resource (:mod:`~nlpbench.api.datanode.datasets`,
``fhir_stores``, ``patients``, ``notes``, ``annotation_stores``,
``annotations``), each behind the key check of
:mod:`nlpbench.api.datanode.access`, and the health check without it; they
read the store, the base URL and whether keys are required from ``app.state``.
"""

import os
from dataclasses import dataclass

from fastapi import Depends, FastAPI, Request
from sqlalchemy.exc import OperationalError

from nlpbench.api.datanode import (
    annotation_stores,
    annotations,
    datasets,
    fhir_stores,
    health,
    notes,
    patients,
)
from nlpbench.api.datanode.access import authorize
from nlpbench.api.datanode.params import BASE_PATH
from nlpbench.api.limits import DATANODE_MAX_BODY_BYTES
from nlpbench.api.problems import ProblemResponse, install_problem_handlers, problem
from nlpbench.errors import Kind
from nlpbench.store import Store
from nlpbench.version import __version__

#: ``1`` when every worker of ``nlpbench datanode serve`` must require API keys (see :func:`app_from_environment`).
REQUIRE_KEYS_VARIABLE = "NLPBENCH_DATANODE_REQUIRE_KEYS"
#: The data node's public address, for every worker of ``nlpbench datanode serve``.
BASE_URL_VARIABLE = "NLPBENCH_DATANODE_BASE_URL"
#: The routers behind the key check, in the order the OpenAPI document lists them.
RESOURCES = (datasets, fhir_stores, patients, notes, annotation_stores, annotations)


@dataclass(frozen=True)
class Settings:
    """How the data node runs; :func:`create_app` takes them explicitly (no global state)."""

    #: Refuse requests without a valid API key even before any key exists (``nlpbench datanode serve`` sets
    #: this when it listens beyond localhost); without it, keys are required as soon as one exists.
    require_keys: bool = False
    #: The largest request body accepted, in bytes.
    max_body_bytes: int = DATANODE_MAX_BODY_BYTES
    #: Where clients reach the node (scheme, host, port): ``links.next`` starts with it
    #: (by default the port ``nlpbench datanode serve`` listens on, 8081).
    base_url: str = "http://127.0.0.1:8081"


def create_app(store: Store, settings: Settings | None = None) -> FastAPI:
    """The data node serving ``store``."""
    settings = settings or Settings()
    app = FastAPI(
        title="nlpbench data node (NLP Sandbox data node 1.2.0)",
        version=__version__,
        description="Datasets, FHIR stores, patients, notes, annotation stores and annotations, "
        "as the NLP Sandbox data node API 1.2.0 serves them.",
        openapi_url=f"{BASE_PATH}/openapi.json",
        docs_url=f"{BASE_PATH}/ui",
        redoc_url=None,
    )
    install_problem_handlers(app, max_body_bytes=settings.max_body_bytes)
    add_store_handlers(app)
    app.state.store = store
    app.state.base_url = settings.base_url.rstrip("/")
    app.state.keys_seen = settings.require_keys
    app.include_router(health.router, prefix=BASE_PATH)
    for resource in RESOURCES:
        app.include_router(resource.router, prefix=BASE_PATH, dependencies=[Depends(authorize)])
    return app


def app_from_environment() -> FastAPI:
    """The data node on the store at ``$NLPBENCH_DB``, requiring API keys from the start when
    ``$NLPBENCH_DATANODE_REQUIRE_KEYS`` is ``1``, at ``$NLPBENCH_DATANODE_BASE_URL``: the factory uvicorn calls in
    each worker process of ``nlpbench datanode serve``, which has migrated the store and set the variables
    before starting them."""
    from nlpbench.store import open_store

    settings = Settings(
        require_keys=os.environ.get(REQUIRE_KEYS_VARIABLE) == "1",
        base_url=os.environ.get(BASE_URL_VARIABLE) or Settings.base_url,
    )
    return create_app(open_store(upgrade=False), settings)


def add_store_handlers(app: FastAPI) -> None:
    """What a service over a store adds to :func:`~nlpbench.api.problems.install_problem_handlers`: a database
    that does not answer is a 503 problem naming the driver's error type (its message may quote a statement)."""

    @app.exception_handler(OperationalError)
    async def unavailable(_request: Request, error: OperationalError) -> ProblemResponse:
        detail = f"the database did not answer ({type(error.orig).__name__})"
        return problem(Kind.unavailable.status, detail, title=Kind.unavailable.title)
