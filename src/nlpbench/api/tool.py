"""Any :class:`~nlpbench.annotators.Annotator` as an NLP Sandbox 1.2.0 tool (a FastAPI app).

:func:`create_app` serves an annotator: ``GET /api/v1/healthCheck``,
``GET /api/v1/tool``, ``GET /api/v1/tool/dependencies`` and one
``POST /api/v1/text…Annotations`` per annotation type — all five when the
annotator finds more than one type (an ``nlpsandbox:phi-annotator``; types it
does not produce come back as empty arrays). :func:`create_deidentifier_app`
serves ``POST /api/v1/deidentifiedNotes`` on top of a PHI annotator.

Requests are validated against the 1.2.0 schemas (:mod:`nlpbench.toolapi.schemas`);
every error is an RFC 7807 problem object (``title``, ``status``, ``detail``,
``type``) sent as ``application/problem+json``, with status 400 for a body
the schema rejects and 413 for a body over ``max_body_bytes``. Notes are
protected health information: no problem and no log line quotes a note —
they name fields, offsets, lengths and sizes. ``/`` redirects to
``/api/v1/tool`` and ``/ui`` to the Swagger UI at ``/api/v1/ui``, whose
scripts and styles are served from the ``swagger-ui-bundle-v2`` package, not a
CDN. The annotator is deterministic, so a cache of recent notes' annotations,
bounded in bytes, lets the five endpoints of a PHI annotator share one pass.
"""

from __future__ import annotations

import hashlib
import sys
import threading
from collections import OrderedDict
from dataclasses import replace
from typing import Any

from fastapi import APIRouter, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse, RedirectResponse
from starlette.exceptions import HTTPException
from starlette.staticfiles import StaticFiles
from swagger_ui_bundle import swagger_ui_path

from nlpbench.annotators import Annotator, ToolInfo
from nlpbench.api.deidentify import StepError, deidentify
from nlpbench.api.limits import CACHE_BYTES, MAX_BODY_BYTES
from nlpbench.api.problems import (
    AnnotatorError,
    BodyTooLarge,
    Guard,
    ProblemResponse,
    describe_errors,
    problem,
    problem_doc,
    too_large,
)
from nlpbench.model import PHI_TYPES, Annotation, Document
from nlpbench.toolapi import schemas
from nlpbench.version import __version__

BASE_PATH = "/api/v1"
UI_ASSETS = f"{BASE_PATH}/ui/assets"
PHI_LABELS = tuple(schemas.ANNOTATION_MODELS)
#: What one cache entry holds besides its annotations: the key, the entry, its lock, the dict's slot.
ENTRY_BYTES = 256


ERRORS = {
    400: problem_doc("Invalid request"),
    413: problem_doc("Request body too large"),
    500: problem_doc("The tool failed"),
}


def tool_type(annotator: Annotator) -> str:
    """``nlpsandbox:date-annotator`` for one type, ``nlpsandbox:phi-annotator`` for several."""
    types = tuple(annotator.types)
    unknown = [t for t in types if t not in PHI_LABELS]
    if unknown or not types:
        raise ValueError(f"annotator {annotator.info.name!r} produces {types}: not NLP Sandbox PHI types")
    if len(types) == 1:
        return f"nlpsandbox:{types[0].replace('_', '-')}-annotator"
    return "nlpsandbox:phi-annotator"


def tool_model(info: ToolInfo, type_: str) -> schemas.Tool:
    return schemas.Tool(
        name=info.name,
        version=info.version,
        license=info.license,
        repository=info.repository,
        description=info.description,
        author=info.author,
        authorEmail=info.author_email,
        url=info.url,
        type=type_,
        apiVersion=schemas.API_VERSION,
    )


def note_document(note: schemas.Note) -> Document:
    return Document(note.identifier, note.text, metadata={"patientId": note.patientId, "noteType": note.type})


def annotation_json(annotation: Annotation) -> dict[str, Any]:
    """One annotation as its 1.2.0 object, checked against the schema."""
    if annotation.confidence is None:
        raise ValueError(f"the annotator gave no confidence for {annotation.label} at {annotation.start}")
    phi = PHI_TYPES[annotation.label]
    body: dict[str, Any] = {
        "start": annotation.start,
        "length": annotation.span.length,
        "text": annotation.text,
        "confidence": annotation.confidence,
    }
    if phi.type_attribute in annotation.attributes:
        body[phi.type_attribute] = annotation.attributes[phi.type_attribute]
    return schemas.dump(schemas.ANNOTATION_MODELS[annotation.label].model_validate(body))


def annotation_set(annotations: list[Annotation], labels: tuple[str, ...] = PHI_LABELS) -> dict[str, list]:
    """The five arrays of an ``AnnotationSet``; labels not asked for stay empty."""
    ordered = sorted(annotations, key=lambda a: (a.start, a.end, a.label))
    return {
        PHI_TYPES[label].array: [annotation_json(a) for a in ordered if a.label == label and label in labels]
        for label in PHI_LABELS
    }


class _NoteCache:
    """The annotations of recent notes, at most ``max_bytes`` in all: a PHI tool is asked five times per note.

    Entries are keyed by the SHA-256 of the note's text, so the cache never
    keeps a note; each entry's size is estimated from the Python objects of
    its annotations (:func:`annotations_bytes`), and the least recently used
    entries go when the total passes ``max_bytes``. A note whose annotations
    alone exceed ``max_bytes`` is answered but not kept. The five requests for
    one note usually arrive together; the first computes while the others
    wait for its result instead of computing it again.
    """

    def __init__(self, annotator: Annotator, max_bytes: int = CACHE_BYTES):
        self._annotator = annotator
        self.max_bytes = max_bytes
        self.bytes = 0
        self._entries: OrderedDict[bytes, _Entry] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def annotations(self, note: schemas.Note) -> list[Annotation]:
        key = hashlib.sha256(note.text.encode("utf-8", "surrogatepass")).digest()
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                entry = self._entries[key] = _Entry()
            else:
                self._entries.move_to_end(key)
        with entry.lock:
            if entry.annotations is None:
                try:
                    annotations = self._annotate(note)
                except BaseException:
                    with self._lock:
                        if self._entries.get(key) is entry:
                            del self._entries[key]
                    raise
                with self._lock:
                    entry.annotations, entry.size = annotations, ENTRY_BYTES + annotations_bytes(annotations)
                    if self._entries.get(key) is entry:
                        self.bytes += entry.size
                    self._evict()
            return entry.annotations

    def _annotate(self, note: schemas.Note) -> list[Annotation]:
        found = []
        for a in self._annotator.annotate(note_document(note)):
            if a.end > len(note.text):
                raise AnnotatorError(
                    f"the annotator gave a {a.label} span {a.start}-{a.end} "
                    f"past the end of note {note.identifier} ({len(note.text)} characters)"
                )
            found.append(a if a.text is not None else replace(a, text=a.span.covered_text(note.text)))
        return found

    def _evict(self) -> None:
        """Drop least recently used finished entries until the total fits (the lock is held)."""
        for key in list(self._entries):
            if self.bytes <= self.max_bytes:
                return
            entry = self._entries[key]
            if entry.annotations is not None:
                del self._entries[key]
                self.bytes -= entry.size


class _Entry:
    __slots__ = ("annotations", "lock", "size")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.annotations: list[Annotation] | None = None
        self.size = 0


def annotations_bytes(annotations: list[Annotation]) -> int:
    """The bytes the annotations' objects hold: each annotation, span, text, attribute dict and values."""
    size = sys.getsizeof(annotations)
    for a in annotations:
        size += sys.getsizeof(a) + sys.getsizeof(a.span) + sys.getsizeof(a.text) + sys.getsizeof(a.attributes)
        size += sum(sys.getsizeof(value) for value in a.attributes.values())
    return size


def create_app(
    annotator: Annotator, *, max_body_bytes: int = MAX_BODY_BYTES, cache_bytes: int = CACHE_BYTES
) -> FastAPI:
    """An NLP Sandbox tool serving ``annotator``; its note cache is ``app.state.note_cache``."""
    type_ = tool_type(annotator)
    labels = PHI_LABELS if type_ == "nlpsandbox:phi-annotator" else tuple(annotator.types)
    app, router = _base_app(tool_model(annotator.info, type_), [], max_body_bytes)
    cache = app.state.note_cache = _NoteCache(annotator, cache_bytes)
    for label in labels:
        _add_annotation_endpoint(router, label, cache)
    app.include_router(router)
    return app


def deidentifier_info(annotator: Annotator) -> ToolInfo:
    return ToolInfo(
        name=f"{annotator.info.name}-deidentifier"[:60].rstrip("-"),
        version=__version__,
        description=(
            "De-identifies clinical notes (masking character, redaction, annotation type, date offset) "
            f"with the PHI annotations of {annotator.info.name} {annotator.info.version}."
        )[:280],
        license="apache-2.0",
    )


def create_deidentifier_app(
    annotator: Annotator,
    info: ToolInfo | None = None,
    *,
    max_body_bytes: int = MAX_BODY_BYTES,
    cache_bytes: int = CACHE_BYTES,
) -> FastAPI:
    """An NLP Sandbox PHI de-identifier that finds PHI with ``annotator`` (in process)."""
    dependency = tool_model(annotator.info, tool_type(annotator))
    own = tool_model(info or deidentifier_info(annotator), "nlpsandbox:phi-deidentifier")
    app, router = _base_app(own, [dependency], max_body_bytes)
    cache = app.state.note_cache = _NoteCache(annotator, cache_bytes)

    @router.post(
        "/deidentifiedNotes",
        operation_id="createDeidentifiedNotes",
        response_model=schemas.DeidentifyResponse,
        response_model_exclude_none=True,
        responses=ERRORS,
        tags=["DeidentifiedNote"],
        summary="Deidentify a clinical note",
    )
    def create_deidentified_notes(request: schemas.DeidentifyRequest) -> dict[str, Any]:
        requested = {t.removeprefix("text_") for step in request.deidentificationSteps for t in step.annotationTypes}
        labels = tuple(label for label in PHI_LABELS if label in requested)
        found = [a for a in cache.annotations(request.note) if a.label in labels] if labels else []
        text, moved = deidentify(request.note.text, found, request.deidentificationSteps)
        note = request.note.model_dump(mode="json")
        note["text"] = text
        return {
            "originalAnnotations": annotation_set(found, labels),
            "deidentifiedAnnotations": annotation_set(moved, labels),
            "deidentifiedNote": note,
        }

    app.include_router(router)
    return app


def _add_annotation_endpoint(router: APIRouter, label: str, cache: _NoteCache) -> None:
    array = PHI_TYPES[label].array
    name = array[0].upper() + array[1:]
    response_model = schemas.RESPONSE_MODELS[label]

    def annotate(request: schemas.NoteRequest) -> dict[str, Any]:
        found = cache.annotations(request.note)
        return {array: annotation_set(found, (label,))[array]}

    router.post(
        f"/{array}",
        operation_id=f"create{name}",
        response_model=response_model,
        response_model_exclude_none=True,
        responses=ERRORS,
        tags=[name[:-1]],
        summary=f"Annotate {label.replace('_', ' ')}s in a clinical note",
    )(annotate)


def _base_app(tool: schemas.Tool, dependencies: list[schemas.Tool], max_body_bytes: int) -> tuple[FastAPI, APIRouter]:
    """The app with what every tool has: tool info, dependencies, health check, redirects, docs, errors."""
    app = FastAPI(
        title=f"{tool.name} (NLP Sandbox {tool.type.removeprefix('nlpsandbox:')})",
        version=tool.version,
        description=tool.description,
        openapi_url=f"{BASE_PATH}/openapi.json",
        docs_url=None,
        redoc_url=None,
    )
    app.add_middleware(Guard, max_body_bytes=max_body_bytes)
    add_error_handlers(app, max_body_bytes)
    _add_docs(app)
    router = APIRouter(prefix=BASE_PATH)
    common = {"responses": {404: problem_doc("Not found"), 500: ERRORS[500]}, "tags": ["Tool"]}

    @router.get("/tool", operation_id="getTool", response_model=schemas.Tool, summary="Get tool information", **common)
    def get_tool() -> schemas.Tool:
        return tool

    @router.get(
        "/tool/dependencies",
        operation_id="getToolDependencies",
        response_model=schemas.ToolDependencies,
        summary="Get tool dependencies",
        **common,
    )
    def get_tool_dependencies() -> schemas.ToolDependencies:
        return schemas.ToolDependencies(tools=dependencies)

    @router.get(
        "/healthCheck",
        operation_id="getHealthCheck",
        response_model=schemas.HealthCheck,
        summary="Get health check information",
        responses=common["responses"],
        tags=["HealthCheck"],
    )
    def get_health_check() -> schemas.HealthCheck:
        return schemas.HealthCheck(status="pass")

    @app.get("/", include_in_schema=False)
    def root() -> RedirectResponse:
        return RedirectResponse(f"{BASE_PATH}/tool", status_code=302)

    @app.get("/ui", include_in_schema=False)
    def ui() -> RedirectResponse:
        return RedirectResponse(f"{BASE_PATH}/ui", status_code=302)

    return app, router


def _add_docs(app: FastAPI) -> None:
    """Swagger UI at ``/api/v1/ui`` with its script, styles and icon served from this app, not a CDN."""
    app.mount(UI_ASSETS, StaticFiles(directory=swagger_ui_path), name="swagger-ui")

    @app.get(f"{BASE_PATH}/ui", include_in_schema=False)
    def docs() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=app.openapi_url,
            title=f"{app.title} - API",
            swagger_js_url=f"{UI_ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{UI_ASSETS}/swagger-ui.css",
            swagger_favicon_url=f"{UI_ASSETS}/favicon-32x32.png",
            swagger_ui_parameters={"validatorUrl": None},  # no badge fetched from the online validator
        )


def add_error_handlers(app: FastAPI, max_body_bytes: int) -> None:
    @app.exception_handler(RequestValidationError)
    async def invalid_request(_request: Request, error: RequestValidationError) -> ProblemResponse:
        return problem(400, describe_errors(error.errors()))

    @app.exception_handler(StepError)
    async def invalid_step(_request: Request, error: StepError) -> ProblemResponse:
        return problem(400, str(error))

    @app.exception_handler(HTTPException)
    async def http_error(_request: Request, error: HTTPException) -> ProblemResponse:
        if error.status_code == 413:
            return too_large(error.limit if isinstance(error, BodyTooLarge) else max_body_bytes)
        detail = error.detail if isinstance(error.detail, str) else None
        response = problem(error.status_code, detail)
        response.headers.update(error.headers or {})
        return response
