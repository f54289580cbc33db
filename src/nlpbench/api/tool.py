"""Any :class:`~nlpbench.annotators.Annotator` as an NLP Sandbox 1.2.0 tool (a FastAPI app).

:func:`create_app` serves an annotator: ``GET /api/v1/healthCheck``,
``GET /api/v1/tool``, ``GET /api/v1/tool/dependencies`` and one
``POST /api/v1/text…Annotations`` per annotation type — all five when the
annotator finds more than one type (an ``nlpsandbox:phi-annotator``; types it
does not produce come back as empty arrays). :func:`create_deidentifier_app`
serves ``POST /api/v1/deidentifiedNotes`` on top of a PHI annotator.

Requests are validated against the 1.2.0 schemas (:mod:`nlpbench.api.schemas`);
every error is an RFC 7807 problem object (``title``, ``status``, ``detail``,
``type``) sent as ``application/problem+json``, with status 400 for a body
the schema rejects. ``/`` redirects to ``/api/v1/tool`` and ``/ui`` to the
Swagger UI at ``/api/v1/ui``. The annotator is deterministic, so a small cache
of recent notes lets the five endpoints of a PHI annotator share one pass.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import replace
from http import HTTPStatus
from typing import Any

from fastapi import APIRouter, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, RedirectResponse
from starlette.exceptions import HTTPException

from nlpbench import __version__
from nlpbench.annotators import Annotator, ToolInfo
from nlpbench.api import schemas
from nlpbench.api.deidentify import StepError, deidentify
from nlpbench.model import PHI_TYPES, Annotation, Document

BASE_PATH = "/api/v1"
PHI_LABELS = tuple(schemas.ANNOTATION_MODELS)
PROBLEM_MEDIA_TYPE = "application/problem+json"
NOTE_CACHE_SIZE = 64


class ProblemResponse(JSONResponse):
    media_type = PROBLEM_MEDIA_TYPE


def problem(status: int, detail: str | None = None, title: str | None = None) -> ProblemResponse:
    """An RFC 7807 problem object; the title defaults to the status phrase."""
    body = schemas.Problem(title=title or HTTPStatus(status).phrase, status=status, detail=detail, type="about:blank")
    return ProblemResponse(schemas.dump(body), status_code=status)


def _problem_doc(description: str) -> dict[str, Any]:
    schema = {"$ref": "#/components/schemas/Problem"}
    return {
        "model": schemas.Problem,
        "description": description,
        "content": {PROBLEM_MEDIA_TYPE: {"schema": schema}},
    }


ERRORS = {400: _problem_doc("Invalid request"), 500: _problem_doc("The tool failed")}


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
    """The annotations of the last few notes, keyed by text: a PHI tool is asked five times per note.

    The five requests for one note usually arrive together; the first computes
    while the others wait for its result instead of computing it again.
    """

    def __init__(self, annotator: Annotator, size: int = NOTE_CACHE_SIZE):
        self._annotator = annotator
        self._size = size
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._lock = threading.Lock()

    def annotations(self, note: schemas.Note) -> list[Annotation]:
        with self._lock:
            entry = self._entries.get(note.text)
            if entry is None:
                entry = self._entries[note.text] = _Entry()
                while len(self._entries) > self._size:
                    self._entries.popitem(last=False)
            else:
                self._entries.move_to_end(note.text)
        with entry.lock:
            if entry.annotations is None:
                entry.annotations = [
                    a if a.text is not None else replace(a, text=a.span.covered_text(note.text))
                    for a in self._annotator.annotate(note_document(note))
                ]
            return entry.annotations


class _Entry:
    __slots__ = ("annotations", "lock")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.annotations: list[Annotation] | None = None


def create_app(annotator: Annotator) -> FastAPI:
    """An NLP Sandbox tool serving ``annotator``."""
    type_ = tool_type(annotator)
    labels = PHI_LABELS if type_ == "nlpsandbox:phi-annotator" else tuple(annotator.types)
    app, router = _base_app(tool_model(annotator.info, type_), [])
    cache = _NoteCache(annotator)
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


def create_deidentifier_app(annotator: Annotator, info: ToolInfo | None = None) -> FastAPI:
    """An NLP Sandbox PHI de-identifier that finds PHI with ``annotator`` (in process)."""
    dependency = tool_model(annotator.info, tool_type(annotator))
    own = tool_model(info or deidentifier_info(annotator), "nlpsandbox:phi-deidentifier")
    app, router = _base_app(own, [dependency])
    cache = _NoteCache(annotator)

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


def _base_app(tool: schemas.Tool, dependencies: list[schemas.Tool]) -> tuple[FastAPI, APIRouter]:
    """The app with what every tool has: tool info, dependencies, health check, redirects, errors."""
    app = FastAPI(
        title=f"{tool.name} (NLP Sandbox {tool.type.removeprefix('nlpsandbox:')})",
        version=tool.version,
        description=tool.description,
        openapi_url=f"{BASE_PATH}/openapi.json",
        docs_url=f"{BASE_PATH}/ui",
        redoc_url=None,
    )
    _add_error_handlers(app)
    router = APIRouter(prefix=BASE_PATH)
    common = {"responses": {404: _problem_doc("Not found"), 500: ERRORS[500]}, "tags": ["Tool"]}

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


def _add_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(RequestValidationError)
    async def invalid_request(_request: Request, error: RequestValidationError) -> ProblemResponse:
        return problem(400, _describe(error.errors()))

    @app.exception_handler(StepError)
    async def invalid_step(_request: Request, error: StepError) -> ProblemResponse:
        return problem(400, str(error))

    @app.exception_handler(HTTPException)
    async def http_error(_request: Request, error: HTTPException) -> ProblemResponse:
        detail = error.detail if isinstance(error.detail, str) else None
        response = problem(error.status_code, detail)
        response.headers.update(error.headers or {})
        return response

    @app.exception_handler(Exception)
    async def internal_error(_request: Request, error: Exception) -> ProblemResponse:
        return problem(500, f"{type(error).__name__}: {error}", title="Internal error")


def _describe(errors: Sequence[dict[str, Any]], limit: int = 3) -> str:
    """Pydantic's errors in one line: ``body.note.identifier: String should match pattern …``."""
    parts = []
    for error in errors[:limit]:
        where = ".".join(str(part) for part in error.get("loc", ()))
        parts.append(f"{where}: {error.get('msg', 'invalid')}" if where else error.get("msg", "invalid"))
    more = len(errors) - limit
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")
