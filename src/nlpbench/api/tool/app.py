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
the schema rejects, 413 for a body over ``max_body_bytes``, and 502 when the service an annotator relies on
(an LLM endpoint) fails or answers what cannot be used (503 with ``Retry-After`` when it is rate-limited). Notes are
protected health information: no problem and no log line quotes a note —
they name fields, offsets, lengths and sizes. ``/`` redirects to
``/api/v1/tool`` and ``/ui`` to the Swagger UI at ``/api/v1/ui``, whose
scripts and styles are served from the ``swagger-ui-bundle-v2`` package, not a
CDN. The annotator is deterministic, so a cache of recent notes' annotations,
bounded in bytes, lets the five endpoints of a PHI annotator share one pass.

Each app mounts module-level routers — :mod:`~nlpbench.api.tool.info`, one
of :mod:`~nlpbench.api.tool.annotate` per type served,
:mod:`~nlpbench.api.tool.deidentified` — that read the tool object, its
dependencies and the note cache (:mod:`~nlpbench.api.tool.cache`) from ``app.state``.
"""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse, RedirectResponse
from starlette.staticfiles import StaticFiles
from swagger_ui_bundle import swagger_ui_path

from nlpbench.annotators import Annotator, ToolInfo
from nlpbench.api.limits import CACHE_BYTES, MAX_BODY_BYTES
from nlpbench.api.problems import install_problem_handlers
from nlpbench.api.tool import deidentified, info
from nlpbench.api.tool.annotate import ROUTERS
from nlpbench.api.tool.answers import PHI_LABELS, tool_model, tool_type
from nlpbench.api.tool.cache import NoteCache
from nlpbench.toolapi import schemas
from nlpbench.version import __version__

BASE_PATH = "/api/v1"
UI_ASSETS = f"{BASE_PATH}/ui/assets"
OPENAPI_PATH = f"{BASE_PATH}/openapi.json"


def create_app(
    annotator: Annotator, *, max_body_bytes: int = MAX_BODY_BYTES, cache_bytes: int = CACHE_BYTES
) -> FastAPI:
    """An NLP Sandbox tool serving ``annotator``; its note cache is ``app.state.note_cache``."""
    type_ = tool_type(annotator)
    labels = PHI_LABELS if type_ == "nlpsandbox:phi-annotator" else tuple(annotator.types)
    app = _base_app(tool_model(annotator.info, type_), [], max_body_bytes)
    app.state.note_cache = NoteCache(annotator, cache_bytes)
    for label in labels:
        app.include_router(ROUTERS[label], prefix=BASE_PATH)
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
    app = _base_app(own, [dependency], max_body_bytes)
    app.state.note_cache = NoteCache(annotator, cache_bytes)
    app.include_router(deidentified.router, prefix=BASE_PATH)
    return app


def _base_app(tool: schemas.Tool, dependencies: list[schemas.Tool], max_body_bytes: int) -> FastAPI:
    """The app with what every tool has: tool info, dependencies, health check, redirects, docs, errors."""
    app = FastAPI(
        title=f"{tool.name} (NLP Sandbox {tool.type.removeprefix('nlpsandbox:')})",
        version=tool.version,
        description=tool.description,
        openapi_url=OPENAPI_PATH,
        docs_url=None,
        redoc_url=None,
    )
    app.state.tool = tool
    app.state.dependencies = dependencies
    install_problem_handlers(app, max_body_bytes=max_body_bytes)
    _add_docs(app)

    @app.get("/", include_in_schema=False)
    def root() -> RedirectResponse:
        return RedirectResponse(f"{BASE_PATH}/tool", status_code=302)

    @app.get("/ui", include_in_schema=False)
    def ui() -> RedirectResponse:
        return RedirectResponse(f"{BASE_PATH}/ui", status_code=302)

    app.include_router(info.router, prefix=BASE_PATH)
    return app


def _add_docs(app: FastAPI) -> None:
    """Swagger UI at ``/api/v1/ui`` with its script, styles and icon served from this app, not a CDN."""
    app.mount(UI_ASSETS, StaticFiles(directory=swagger_ui_path), name="swagger-ui")

    @app.get(f"{BASE_PATH}/ui", include_in_schema=False)
    def docs() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=OPENAPI_PATH,
            title=f"{app.title} - API",
            swagger_js_url=f"{UI_ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{UI_ASSETS}/swagger-ui.css",
            swagger_favicon_url=f"{UI_ASSETS}/favicon-32x32.png",
            swagger_ui_parameters={"validatorUrl": None},  # no badge fetched from the online validator
        )
