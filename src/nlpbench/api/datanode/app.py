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
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Annotated, Any
from urllib.parse import urlencode

import msgspec
from fastapi import APIRouter, Body, Depends, FastAPI, Path, Query, Request
from fastapi.exceptions import RequestValidationError
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session
from starlette.exceptions import HTTPException
from starlette.responses import Response
from starlette.routing import Match

from nlpbench.api.datanode import schemas
from nlpbench.api.problems import (
    BodyTooLarge,
    Guard,
    ProblemResponse,
    describe_errors,
    problem,
    problem_doc,
    too_large,
)
from nlpbench.store import Store, StoreError
from nlpbench.store import repository as repo
from nlpbench.store.keys import any_key, key_access
from nlpbench.toolapi.schemas import RESOURCE_ID_PATTERN
from nlpbench.version import __version__

BASE_PATH = "/api/v1"
READ_METHODS = ("GET", "HEAD", "OPTIONS")
DATASETS = f"{BASE_PATH}/datasets"
#: ``1`` when every worker of ``nlpbench datanode serve`` must require API keys (see :func:`app_from_environment`).
REQUIRE_KEYS_VARIABLE = "NLPBENCH_DATANODE_REQUIRE_KEYS"
#: The data node's public address, for every worker of ``nlpbench datanode serve``.
BASE_URL_VARIABLE = "NLPBENCH_DATANODE_BASE_URL"
#: What an annotation stored without a confidence is served with (see the module's docstring).
SERVED_CONFIDENCE = 100


@dataclass(frozen=True)
class Settings:
    """How the data node runs; :func:`create_app` takes them explicitly (no global state)."""

    #: Refuse requests without a valid API key even before any key exists (``nlpbench datanode serve`` sets
    #: this when it listens beyond localhost); without it, keys are required as soon as one exists.
    require_keys: bool = False
    #: The largest request body accepted, in bytes.
    max_body_bytes: int = 16 * 2**20
    #: Where clients reach the node (scheme, host, port): ``links.next`` starts with it.
    base_url: str = "http://127.0.0.1:8080"


def _id(kind: str, where: Callable[..., Any]) -> Any:
    return Annotated[
        str,
        where(
            description=f"The ID of the {kind}",
            min_length=3,
            max_length=60,
            pattern=RESOURCE_ID_PATTERN,
            examples=[f"awesome-{kind.lower().replace(' ', '-')}"],
        ),
    ]


DatasetId = _id("dataset", Path)
FhirStoreId = _id("FHIR store", Path)
PatientId = _id("FHIR patient", Path)
NoteId = _id("note", Path)
AnnotationStoreId = _id("annotation store", Path)
AnnotationId = _id("annotation", Path)
Limit = Annotated[int, Query(ge=10, le=100, description="Maximum number of results returned")]
Offset = Annotated[int, Query(ge=0, description="Index of the first result that must be returned")]


BAD = {400: problem_doc("Invalid request")}
AUTH = {401: problem_doc("No valid API key"), 403: problem_doc("The API key may not do this")}
MISSING = {404: problem_doc("The specified resource was not found")}
CONFLICT = {409: problem_doc("The resource already exists")}
TOO_LARGE = {413: problem_doc("The request body is too large")}
UNAVAILABLE = {503: problem_doc("The database is unavailable")}
LIST = {**BAD, **AUTH, **UNAVAILABLE}
CREATE = {**BAD, **AUTH, **CONFLICT, **TOO_LARGE, **UNAVAILABLE}
ONE = {**BAD, **AUTH, **MISSING, **UNAVAILABLE}


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
    add_error_handlers(app, settings.max_body_bytes)
    app.add_middleware(Guard, max_body_bytes=settings.max_body_bytes)
    app.state.base_url = settings.base_url.rstrip("/")
    keys_seen = settings.require_keys
    # The datasets the request's key reaches, set by ``authorize`` in the request's own context (an async
    # dependency runs in the request's task; sync routes run in threads that copy its context).
    reach: ContextVar[frozenset[str] | None] = ContextVar("reach", default=None)

    async def authorize(request: Request) -> None:
        # On the event loop, as get_note: one lookup by a unique index costs less than a thread's hand-off.
        nonlocal keys_seen
        reach.set(None)
        if not keys_seen:
            with store.connection() as db:
                keys_seen = any_key(db)
            if not keys_seen:
                return
        key = request.headers.get("x-api-key")
        bearer = request.headers.get("authorization", "")
        if not key and bearer.lower().startswith("bearer "):
            key = bearer[7:].strip()
        if not key:
            raise HTTPException(401, "an API key is required (X-API-Key header)", {"WWW-Authenticate": "Bearer"})
        with store.connection() as db:
            access = key_access(db, key)
        if access is None:
            raise HTTPException(401, "unknown, expired or revoked API key", {"WWW-Authenticate": "Bearer"})
        if request.method not in READ_METHODS and access.scope != "write":
            raise HTTPException(403, "this API key may only read")
        creates_dataset = request.method == "POST" and getattr(request.scope.get("route"), "path", "") == DATASETS
        if access.datasets is not None and creates_dataset:
            raise HTTPException(403, "this API key is scoped to datasets: it may not create one")
        reach.set(access.datasets)

    @contextmanager
    def reading() -> Iterator[Session]:
        with store.session(readonly=True) as session:
            session.info[repo.REACH] = reach.get()
            yield session

    @contextmanager
    def writing() -> Iterator[Session]:
        with store.session() as session:
            session.info[repo.REACH] = reach.get()
            yield session

    router = APIRouter(prefix=BASE_PATH, dependencies=[Depends(authorize)])

    @app.get(
        f"{BASE_PATH}/healthCheck",
        operation_id="getHealthCheck",
        response_model=schemas.HealthCheck,
        tags=["HealthCheck"],
        summary="Get health check information",
        responses={**MISSING, **UNAVAILABLE},
    )
    def get_health_check() -> dict[str, str]:
        with reading() as session:
            repo.list_datasets(session, 0, 10)
        return {"status": "pass"}

    _dataset_routes(router, reading, writing)
    _fhir_routes(router, reading, writing, store.connection, reach)
    _annotation_routes(router, reading, writing)
    app.include_router(router)
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


class StoredJSON(Response):
    """A body built from rows the store holds, encoded by msgspec as it is.

    The store validated them on the way in, so the route's ``response_model`` (kept for the
    OpenAPI document) need not validate them again on every read.
    """

    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return msgspec.json.encode(content)


def _next(request: Request, page: repo.Page) -> dict[str, str]:
    """The next page's URL: the node's configured base URL, the path asked for, the next offset."""
    if not page.has_next:
        return {"next": ""}
    query = urlencode({"offset": page.offset + page.limit, "limit": page.limit})
    return {"next": f"{request.app.state.base_url}{request.url.path}?{query}"}


def _page(request: Request, page: repo.Page, key: str, items: list[Any]) -> dict[str, Any]:
    return {
        "offset": page.offset,
        "limit": page.limit,
        "links": _next(request, page),
        "totalResults": page.total,
        key: items,
    }


def _dataset_json(row) -> dict[str, Any]:
    return {
        "name": f"datasets/{row.name}",
        "version": row.version,
        "description": row.description,
        "license": row.license,
        "visibility": row.visibility,
        "createdAt": row.created_at.isoformat(),
    }


def _dataset_routes(router: APIRouter, reading, writing) -> None:
    tags = ["Dataset"]

    @router.post(
        "/datasets",
        operation_id="createDataset",
        status_code=201,
        response_model=schemas.Created,
        responses=CREATE,
        tags=tags,
        summary="Create a dataset",
    )
    def create_dataset(
        datasetId: _id("dataset", Query),
        body: Annotated[schemas.DatasetCreateRequest | None, Body()] = None,
    ) -> dict[str, str]:
        meta = {k: v for k, v in (body.model_dump(exclude_none=True) if body else {}).items() if k in _META}
        with writing() as session:
            repo.create_dataset(session, datasetId, **meta)
        return {"name": f"datasets/{datasetId}"}

    @router.get(
        "/datasets",
        operation_id="listDatasets",
        response_model=schemas.PageOfDatasets,
        response_model_exclude_none=True,
        responses=LIST,
        tags=tags,
        summary="Get all datasets",
    )
    def list_datasets(request: Request, limit: Limit = 10, offset: Offset = 0) -> dict[str, Any]:
        with reading() as session:
            page = repo.list_datasets(session, offset, limit)
            return _page(request, page, "datasets", [{"name": f"datasets/{row.name}"} for row in page.items])

    @router.get(
        "/datasets/{datasetId}",
        operation_id="getDataset",
        response_model=schemas.Dataset,
        response_model_exclude_none=True,
        responses=ONE,
        tags=tags,
        summary="Get a dataset by ID",
    )
    def get_dataset(datasetId: DatasetId) -> dict[str, Any]:
        with reading() as session:
            return _dataset_json(repo.get_dataset(session, datasetId))

    @router.delete(
        "/datasets/{datasetId}",
        operation_id="deleteDataset",
        response_model=schemas.EmptyObject,
        responses=ONE,
        tags=tags,
        summary="Delete a dataset by ID",
    )
    def delete_dataset(datasetId: DatasetId) -> dict[str, Any]:
        with writing() as session:
            repo.delete_dataset(session, datasetId)
        return {}


_META = ("version", "description", "license", "visibility")


def _fhir_routes(router: APIRouter, reading, writing, connection, reach: ContextVar) -> None:
    stores = "/datasets/{datasetId}/fhirStores"
    store_path = stores + "/{fhirStoreId}"
    patients, notes = store_path + "/fhir/Patient", store_path + "/fhir/Note"

    def store_name(dataset: str, store: str) -> str:
        return f"datasets/{dataset}/fhirStores/{store}"

    @router.post(
        stores,
        operation_id="createFhirStore",
        status_code=201,
        response_model=schemas.Created,
        responses=CREATE,
        tags=["FhirStore"],
        summary="Create a FHIR store",
    )
    def create_fhir_store(
        datasetId: DatasetId,
        fhirStoreId: _id("FHIR store", Query),
        body: Annotated[schemas.AnyObject | None, Body()] = None,
    ) -> dict[str, str]:
        with writing() as session:
            repo.create_fhir_store(session, datasetId, fhirStoreId)
        return {"name": store_name(datasetId, fhirStoreId)}

    @router.get(
        stores,
        operation_id="listFhirStores",
        response_model=schemas.PageOfFhirStores,
        responses=LIST,
        tags=["FhirStore"],
        summary="List the FHIR stores in a dataset",
    )
    def list_fhir_stores(
        request: Request, datasetId: DatasetId, limit: Limit = 10, offset: Offset = 0
    ) -> dict[str, Any]:
        with reading() as session:
            page = repo.list_fhir_stores(session, datasetId, offset, limit)
            items = [{"name": store_name(datasetId, row.name)} for row in page.items]
        return _page(request, page, "fhirStores", items)

    @router.get(
        store_path,
        operation_id="getFhirStore",
        response_model=schemas.FhirStore,
        responses=ONE,
        tags=["FhirStore"],
        summary="Get a FHIR store",
    )
    def get_fhir_store(datasetId: DatasetId, fhirStoreId: FhirStoreId) -> dict[str, str]:
        with reading() as session:
            repo.get_fhir_store(session, datasetId, fhirStoreId)
        return {"name": store_name(datasetId, fhirStoreId)}

    @router.delete(
        store_path,
        operation_id="deleteFhirStore",
        response_model=schemas.EmptyObject,
        responses=ONE,
        tags=["FhirStore"],
        summary="Delete a FHIR store",
    )
    def delete_fhir_store(datasetId: DatasetId, fhirStoreId: FhirStoreId) -> dict[str, Any]:
        with writing() as session:
            repo.delete_fhir_store(session, datasetId, fhirStoreId)
        return {}

    def patient_json(row) -> dict[str, Any]:
        return {"identifier": row.identifier, **({"gender": row.gender} if row.gender else {})}

    @router.post(
        patients,
        operation_id="createPatient",
        status_code=201,
        response_model=schemas.Created,
        responses=CREATE,
        tags=["Patient"],
        summary="Create a FHIR patient",
    )
    def create_patient(
        datasetId: DatasetId,
        fhirStoreId: FhirStoreId,
        patientId: _id("FHIR patient", Query),
        body: Annotated[schemas.PatientCreateRequest | None, Body()] = None,
    ) -> dict[str, str]:
        with writing() as session:
            repo.create_patient(session, datasetId, fhirStoreId, patientId, body.gender if body else None)
        return {"name": f"{store_name(datasetId, fhirStoreId)}/Patient/{patientId}"}

    @router.get(
        patients,
        operation_id="listPatients",
        response_model=schemas.PageOfPatients,
        response_model_exclude_none=True,
        responses=LIST,
        tags=["Patient"],
        summary="List the Patients in a FHIR store",
    )
    def list_patients(
        request: Request, datasetId: DatasetId, fhirStoreId: FhirStoreId, limit: Limit = 10, offset: Offset = 0
    ) -> dict[str, Any]:
        with reading() as session:
            page = repo.list_patients(session, datasetId, fhirStoreId, offset, limit)
            items = [patient_json(row) for row in page.items]
        return _page(request, page, "patients", items)

    @router.get(
        patients + "/{patientId}",
        operation_id="getPatient",
        response_model=schemas.Patient,
        response_model_exclude_none=True,
        responses=ONE,
        tags=["Patient"],
        summary="Get a FHIR patient",
    )
    def get_patient(datasetId: DatasetId, fhirStoreId: FhirStoreId, patientId: PatientId) -> dict[str, Any]:
        with reading() as session:
            return patient_json(repo.get_patient(session, datasetId, fhirStoreId, patientId))

    @router.delete(
        patients + "/{patientId}",
        operation_id="deletePatient",
        response_model=schemas.EmptyObject,
        responses=ONE,
        tags=["Patient"],
        summary="Delete a FHIR patient",
    )
    def delete_patient(datasetId: DatasetId, fhirStoreId: FhirStoreId, patientId: PatientId) -> dict[str, Any]:
        with writing() as session:
            repo.delete_patient(session, datasetId, fhirStoreId, patientId)
        return {}

    def note_json(row: repo.NoteRow) -> dict[str, str]:
        return {"identifier": row.identifier, "text": row.text, "type": row.type, "patientId": row.patient}

    @router.post(
        notes,
        operation_id="createNote",
        status_code=201,
        response_model=schemas.Created,
        responses=CREATE,
        tags=["Note"],
        summary="Create a note",
    )
    def create_note(
        datasetId: DatasetId,
        fhirStoreId: FhirStoreId,
        noteId: _id("note", Query),
        body: Annotated[schemas.NoteCreateRequest, Body()],
    ) -> dict[str, str]:
        with writing() as session:
            repo.create_note(
                session, datasetId, fhirStoreId, noteId, text=body.text, type=body.type, patient=body.patientId
            )
        return {"name": f"{store_name(datasetId, fhirStoreId)}/Note/{noteId}"}

    @router.get(
        notes,
        operation_id="listNotes",
        response_model=schemas.PageOfNotes,
        responses=LIST,
        tags=["Note"],
        summary="List notes",
    )
    def list_notes(
        request: Request, datasetId: DatasetId, fhirStoreId: FhirStoreId, limit: Limit = 10, offset: Offset = 0
    ) -> Response:
        with reading() as session:
            page = repo.list_notes(session, datasetId, fhirStoreId, offset, limit)
        return StoredJSON(_page(request, page, "notes", [note_json(row) for row in page.items]))

    @router.get(
        notes + "/{noteId}",
        operation_id="getNote",
        response_model=schemas.Note,
        responses=ONE,
        tags=["Note"],
        summary="Get a note",
    )
    async def get_note(datasetId: DatasetId, fhirStoreId: FhirStoreId, noteId: NoteId) -> Response:
        # On the event loop, not in the thread pool: one lookup by unique index takes less time than handing
        # the call to a thread and back (which, with the GIL, cost more CPU than the whole query under load).
        repo.check_reach(reach.get(), datasetId)
        with connection() as db:
            return StoredJSON(note_json(repo.get_note(db, datasetId, fhirStoreId, noteId)))

    @router.delete(
        notes + "/{noteId}",
        operation_id="deleteNote",
        response_model=schemas.EmptyObject,
        responses=ONE,
        tags=["Note"],
        summary="Delete a note",
    )
    def delete_note(datasetId: DatasetId, fhirStoreId: FhirStoreId, noteId: NoteId) -> dict[str, Any]:
        with writing() as session:
            repo.delete_note(session, datasetId, fhirStoreId, noteId)
        return {}


def _annotation_routes(router: APIRouter, reading, writing) -> None:
    stores = "/datasets/{datasetId}/annotationStores"
    store_path = stores + "/{annotationStoreId}"
    records = store_path + "/annotations"

    def store_name(dataset: str, store: str) -> str:
        return f"datasets/{dataset}/annotationStores/{store}"

    def record_json(dataset: str, store: str, row) -> dict[str, Any]:
        return {
            "name": f"{store_name(dataset, store)}/annotations/{row.identifier}",
            "annotationSource": {"resourceSource": {"name": row.source}},
            **{array: [_with_confidence(value) for value in values] for array, values in row.arrays.items()},
        }

    @router.post(
        stores,
        operation_id="createAnnotationStore",
        status_code=201,
        response_model=schemas.Created,
        responses=CREATE,
        tags=["AnnotationStore"],
        summary="Create an annotation store",
    )
    def create_annotation_store(
        datasetId: DatasetId,
        annotationStoreId: _id("annotation store", Query),
        body: Annotated[schemas.AnyObject | None, Body()] = None,
    ) -> dict[str, str]:
        with writing() as session:
            repo.create_annotation_store(session, datasetId, annotationStoreId)
        return {"name": store_name(datasetId, annotationStoreId)}

    @router.get(
        stores,
        operation_id="listAnnotationStores",
        response_model=schemas.PageOfAnnotationStores,
        responses=LIST,
        tags=["AnnotationStore"],
        summary="List the annotation stores in a dataset",
    )
    def list_annotation_stores(
        request: Request, datasetId: DatasetId, limit: Limit = 10, offset: Offset = 0
    ) -> dict[str, Any]:
        with reading() as session:
            page = repo.list_annotation_stores(session, datasetId, offset, limit)
            items = [{"name": store_name(datasetId, row.name)} for row in page.items]
        return _page(request, page, "annotationStores", items)

    @router.get(
        store_path,
        operation_id="getAnnotationStore",
        response_model=schemas.AnnotationStore,
        responses=ONE,
        tags=["AnnotationStore"],
        summary="Get an annotation store",
    )
    def get_annotation_store(datasetId: DatasetId, annotationStoreId: AnnotationStoreId) -> dict[str, str]:
        with reading() as session:
            repo.get_annotation_store(session, datasetId, annotationStoreId)
        return {"name": store_name(datasetId, annotationStoreId)}

    @router.delete(
        store_path,
        operation_id="deleteAnnotationStore",
        response_model=schemas.EmptyObject,
        responses=ONE,
        tags=["AnnotationStore"],
        summary="Delete an annotation store",
    )
    def delete_annotation_store(datasetId: DatasetId, annotationStoreId: AnnotationStoreId) -> dict[str, Any]:
        with writing() as session:
            repo.delete_annotation_store(session, datasetId, annotationStoreId)
        return {}

    @router.post(
        records,
        operation_id="createAnnotation",
        status_code=201,
        response_model=schemas.Created,
        responses=CREATE,
        tags=["Annotation"],
        summary="Create an annotation",
    )
    def create_annotation(
        datasetId: DatasetId,
        annotationStoreId: AnnotationStoreId,
        annotationId: _id("annotation", Query),
        body: Annotated[schemas.AnnotationCreateRequest, Body()],
    ) -> dict[str, str]:
        arrays = body.model_dump(mode="json", exclude_none=True, include=set(schemas.ARRAYS))
        with writing() as session:
            repo.create_annotation(
                session,
                datasetId,
                annotationStoreId,
                annotationId,
                source=body.annotationSource.resourceSource.name,
                arrays=arrays,
            )
        return {"name": f"{store_name(datasetId, annotationStoreId)}/annotations/{annotationId}"}

    @router.get(
        records,
        operation_id="listAnnotations",
        response_model=schemas.PageOfAnnotations,
        response_model_exclude_none=True,
        responses=LIST,
        tags=["Annotation"],
        summary="List the annotations in an annotation store",
    )
    def list_annotations(
        request: Request,
        datasetId: DatasetId,
        annotationStoreId: AnnotationStoreId,
        limit: Limit = 10,
        offset: Offset = 0,
    ) -> Response:
        with reading() as session:
            page = repo.list_annotations(session, datasetId, annotationStoreId, offset, limit)
            items = [record_json(datasetId, annotationStoreId, row) for row in page.items]
        return StoredJSON(_page(request, page, "annotations", items))

    @router.get(
        records + "/{annotationId}",
        operation_id="getAnnotation",
        response_model=schemas.Annotation,
        response_model_exclude_none=True,
        responses=ONE,
        tags=["Annotation"],
        summary="Get an annotation",
    )
    def get_annotation(
        datasetId: DatasetId, annotationStoreId: AnnotationStoreId, annotationId: AnnotationId
    ) -> Response:
        with reading() as session:
            row = repo.get_annotation(session, datasetId, annotationStoreId, annotationId)
            return StoredJSON(record_json(datasetId, annotationStoreId, row))

    @router.delete(
        records + "/{annotationId}",
        operation_id="deleteAnnotation",
        response_model=schemas.EmptyObject,
        responses=ONE,
        tags=["Annotation"],
        summary="Delete an annotation",
    )
    def delete_annotation(
        datasetId: DatasetId, annotationStoreId: AnnotationStoreId, annotationId: AnnotationId
    ) -> dict[str, Any]:
        with writing() as session:
            repo.delete_annotation(session, datasetId, annotationStoreId, annotationId)
        return {}


def _with_confidence(annotation: dict[str, Any]) -> dict[str, Any]:
    """The annotation as stored, with :data:`SERVED_CONFIDENCE` when it has no confidence."""
    return annotation if "confidence" in annotation else {**annotation, "confidence": SERVED_CONFIDENCE}


def _methods(app: FastAPI, request: Request) -> set[str]:
    """Every method some route serves at the request's path."""
    methods: set[str] = set()
    for route in app.router.routes:
        match, _ = route.matches(request.scope)
        if match is not Match.NONE:
            methods |= getattr(route, "methods", None) or set()
    return methods


def add_error_handlers(app: FastAPI, max_body_bytes: int | None = None) -> None:
    """Problems for invalid requests, refusals of the store, HTTP errors and an unavailable database; anything
    else reaches :class:`~nlpbench.api.problems.Guard`, which logs its type and place only. A body past
    ``max_body_bytes`` is :func:`~nlpbench.api.problems.too_large` when the limit is given."""

    @app.exception_handler(RequestValidationError)
    async def invalid_request(_request: Request, error: RequestValidationError) -> ProblemResponse:
        return problem(400, describe_errors(error.errors()))

    @app.exception_handler(StoreError)
    async def refused(_request: Request, error: StoreError) -> ProblemResponse:
        return problem(error.status, str(error))

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, error: HTTPException) -> ProblemResponse:
        if isinstance(error, BodyTooLarge):
            return too_large(error.limit)
        if error.status_code == 413 and max_body_bytes is not None:
            return too_large(max_body_bytes)
        detail = error.detail if isinstance(error.detail, str) else None
        response = problem(error.status_code, detail)
        response.headers.update(error.headers or {})
        if error.status_code == 405:  # Starlette names the methods of one route; a path has several
            response.headers["Allow"] = ", ".join(sorted(_methods(app, request)))
        return response

    @app.exception_handler(OperationalError)
    async def unavailable(_request: Request, error: OperationalError) -> ProblemResponse:
        return problem(503, f"the database did not answer ({type(error.orig).__name__})")
