"""The leaderboard site: :func:`create_app` builds a FastAPI app over one store, pages rendered by Jinja2.

Every page is plain HTML with a local stylesheet; sorting is a query
parameter, so the site works without JavaScript. Every table has a ``.csv``
and a ``.json`` twin. URLs are permanent: ``/submissions/{id}`` and
``/results/{id}`` name a submission and one scoring of it.

The site is public, and teams are adversaries:

- It shows SCORED submissions only: any other submission (and its results) is
  a 404, as an unknown id is, and is left out of team pages and tables. Of a
  submission it shows its team, task, dataset, kind, scores and what its tool
  said of itself (bounded, its URL without credentials: :func:`board.shown_url`)
  — never its command line, tool URL credentials, worker or events.
- Note text (errors in context) and a result's warnings (which may name
  offsets of notes) only for a dataset marked public (:func:`board.public`).
- Every response carries a Content-Security-Policy with no inline script or
  style (the plots' SVG carries presentation attributes, not styles:
  :mod:`nlpbench.web.plots`), ``frame-ancestors 'none'`` and
  ``X-Frame-Options``, ``X-Content-Type-Options: nosniff`` and
  ``Referrer-Policy: no-referrer``.
- A CSV cell that is a string starting with ``=``, ``+``, ``-``, ``@``, a tab
  or a carriage return is written with a leading ``'`` (OWASP's advice against
  formula injection): a spreadsheet shows it as text. Numbers stay numbers —
  a negative score is a number, not a string, and is written as it is.
- A GET never writes: intervals and rank groups are stored with results
  (and by :func:`nlpbench.platform.ranks.refresh`), pages read them.
- A malformed or out-of-range id is a 404 page; a failure nobody foresaw is a
  500 page, logged with its type and place only (:class:`~nlpbench.api.problems.Guard`); an
  :class:`~nlpbench.errors.NlpbenchError` is the problem object its kind names, as every
  service answers it (:func:`~nlpbench.api.problems.install_problem_handlers`).

The app mounts a router per kind of page (:mod:`~nlpbench.web.home`,
:mod:`~nlpbench.web.task_tables`, :mod:`~nlpbench.web.submissions`,
:mod:`~nlpbench.web.teams`); they read the store, the settings, the templates
and the plots drawn from ``app.state`` (:mod:`nlpbench.web.render`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from nlpbench.api.limits import SITE_MAX_BODY_BYTES
from nlpbench.api.problems import install_problem_handlers
from nlpbench.store import Store
from nlpbench.version import __version__
from nlpbench.web import board, home, submissions, task_tables, teams
from nlpbench.web.render import MAX_ID, neutralised, page

__all__ = ["MAX_ID", "SECURITY_HEADERS", "SecurityHeaders", "Settings", "create_app", "neutralised"]

HERE = Path(__file__).resolve().parent
#: Headers of every response (see the module's docstring).
SECURITY_HEADERS = {
    "content-security-policy": (
        "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; "
        "frame-ancestors 'none'"
    ),
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
}
#: The largest request body the site reads: it serves GETs only.
MAX_BODY_BYTES = SITE_MAX_BODY_BYTES
#: The routers, in the order their routes are matched (an export's ``NAME.FMT`` before a page's ``NAME``).
PAGES = (home, task_tables, submissions, teams)


@dataclass(frozen=True)
class Settings:
    """What the site shows: its title, whether a task table keeps each tool's best or latest submission, and
    the teams whose tools the organisers mark as baselines (drawn as such in the forest plots)."""

    title: str = "nlpbench leaderboard"
    pick: str = "best"
    baselines: tuple[str, ...] = ()


class SecurityHeaders:
    """Adds :data:`SECURITY_HEADERS` to every response, static files and errors included."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [
                    *((k, v) for k, v in message.get("headers", []) if k.decode().lower() not in SECURITY_HEADERS),
                    *((k.encode(), v.encode()) for k, v in SECURITY_HEADERS.items()),
                ]
            await send(message)

        await self.app(scope, receive, with_headers if scope["type"] == "http" else send)


def create_app(store: Store, settings: Settings | None = None) -> FastAPI:
    """The site over ``store``; the best-over-time plot of each task is kept, for the results it was drawn from."""
    settings = settings or Settings()
    app = FastAPI(title=settings.title, version=__version__, docs_url=None, redoc_url=None, openapi_url=None)
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")
    pages = Jinja2Templates(directory=HERE / "templates")
    app.state.store = store
    app.state.settings = settings
    app.state.pages = pages
    app.state.drawn = {}  # task → (what its plot was drawn from, the SVG): one plot per task

    def failed(error: Exception) -> Response:
        """The 500 page: the exception's type only (its message may quote what it was given)."""
        html = pages.get_template("error.html").render(settings=settings, status=500, detail=type(error).__name__)
        return HTMLResponse(html, status_code=500)

    install_problem_handlers(app, max_body_bytes=MAX_BODY_BYTES, answer=failed)
    app.add_middleware(SecurityHeaders)
    # pages, not problems, for a missing page and a malformed URL: these replace the handlers installed above

    @app.exception_handler(StarletteHTTPException)
    async def not_found(request: Request, error: StarletteHTTPException) -> Response:
        return page(request, "error.html", error.status_code, status=error.status_code, detail=str(error.detail))

    @app.exception_handler(RequestValidationError)
    async def no_such_page(request: Request, _error: RequestValidationError) -> Response:
        detail = f"no page {board.bounded(request.url.path, board.LONG)}"
        return page(request, "error.html", 404, status=404, detail=detail)

    for pages_router in PAGES:
        app.include_router(pages_router.router)
    return app
