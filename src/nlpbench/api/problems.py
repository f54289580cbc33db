"""RFC 7807 problem objects, and the one error handling and request-size guard every service runs behind.

:func:`install_problem_handlers` is what every service's ``create_app`` calls
(the tool, the data node, the platform API, the leaderboard). It answers

- an :class:`~nlpbench.errors.NlpbenchError` with the problem its
  :class:`~nlpbench.errors.Kind` names: ``status`` and ``title`` from the kind,
  ``detail`` the error's one-line message (which never quotes a note);
- an invalid request (Pydantic's errors) with 400, naming where and never the
  value refused (:func:`describe_errors`), and an HTTP error with its status;
- anything else with a 500 that names the exception's type only, and one log
  line with the request's method, path, the exception's type and where it was
  raised (:func:`~nlpbench.errors.raised_at`): an unexpected exception's message
  may quote the note (a ``ValueError`` of a date parser, a response validation
  error), so it is neither sent nor logged.

Every answer is :func:`problem`, ``application/problem+json``.

:class:`Guard`, the middleware it installs, is the one request-size guard: a
pure ASGI middleware (no body buffering). A ``Content-Length`` over
``max_body_bytes`` is answered 413 before a byte of the body is read; a body
without one (chunked) is counted as it streams in and refused with 413 as soon
as it passes the limit, so at most ``max_body_bytes`` plus one chunk is ever
read. (FastAPI's own ``max_body_size`` answers a declared oversize body in
plain text, not with a problem object.)
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.responses import Response
from starlette.routing import Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from nlpbench.errors import Kind, NlpbenchError, raised_at
from nlpbench.toolapi import schemas

PROBLEM_MEDIA_TYPE = "application/problem+json"
log = logging.getLogger("nlpbench.api")


class ProblemResponse(JSONResponse):
    media_type = PROBLEM_MEDIA_TYPE


def problem(status: int, detail: str | None = None, title: str | None = None) -> ProblemResponse:
    """An RFC 7807 problem object; the title defaults to the status phrase."""
    body = schemas.Problem(title=title or HTTPStatus(status).phrase, status=status, detail=detail, type="about:blank")
    return ProblemResponse(schemas.dump(body), status_code=status)


def problem_of(error: NlpbenchError) -> ProblemResponse:
    """The problem an error's kind names: ``kind.status``, ``kind.title`` and the error's one line as ``detail``,
    with the error's :meth:`~nlpbench.errors.NlpbenchError.problem_headers`."""
    response = problem(error.kind.status, str(error), title=error.kind.title)
    response.headers.update(error.problem_headers())
    return response


#: The ``responses`` of a route: OpenAPI entries by status code.
Responses = dict[int | str, dict[str, Any]]


def problem_doc(description: str) -> dict[str, Any]:
    """An OpenAPI ``responses`` entry: a problem object, in ``application/problem+json``, with ``description``."""
    return {
        "model": schemas.Problem,
        "description": description,
        "content": {PROBLEM_MEDIA_TYPE: {"schema": {"$ref": "#/components/schemas/Problem"}}},
    }


def problem_docs(kinds: Iterable[Kind], also: dict[int, str] | None = None) -> Responses:
    """The OpenAPI ``responses`` of a route that may answer the problems of ``kinds``, of the statuses ``also``
    describes (a 401 of the key check) and a 500: each a problem object, in status order."""
    documented = {kind.status: kind.title for kind in kinds} | (also or {})
    documented[Kind.internal.status] = "Internal error: the exception's type only (see the server log)"
    return {status: problem_doc(documented[status]) for status in sorted(documented)}


def describe_errors(errors: Sequence[dict[str, Any]], limit: int = 3) -> str:
    """Pydantic's errors in one line: "`body.note.identifier` is not lower-case letters and digits …".

    Only where (the field path) and the rule broken
    (:func:`~nlpbench.toolapi.schemas.rule_broken`) are named, never the value
    (``input``) that was refused: it may be a note.
    """
    parts = []
    for error in errors[:limit]:
        parts.append(schemas.rule_broken(".".join(_field(part) for part in error.get("loc", ())), error))
    more = len(errors) - limit
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")


def _field(part: Any) -> str:
    """A location part as given when it is an index or a field-like name, else ``?``."""
    text = str(part)
    return text if isinstance(part, int) or (text.isidentifier() and len(text) <= 40) else "?"


class BodyTooLarge(NlpbenchError, HTTPException):
    """A request body past ``limit`` bytes: raised by :class:`Guard` while the body streams in.

    It is an ``HTTPException`` too, because FastAPI lets only those through its body parsing (any other
    exception there becomes a 400); the handler of :class:`~nlpbench.errors.NlpbenchError` answers it.
    """

    kind = Kind.too_large

    def __init__(self, limit: int) -> None:
        HTTPException.__init__(self, status_code=413, detail=self.message(limit))
        self.limit = limit

    def __str__(self) -> str:
        return self.message(self.limit)

    @staticmethod
    def message(limit: int) -> str:
        """The one line a body over ``limit`` bytes is refused with."""
        return f"the request body is over the {limit} bytes this service accepts"


def too_large(max_body_bytes: int) -> ProblemResponse:
    """The 413 problem of a body over ``max_body_bytes``."""
    return problem(Kind.too_large.status, BodyTooLarge.message(max_body_bytes), title=Kind.too_large.title)


class AnnotatorError(NlpbenchError, RuntimeError):
    """The annotator gave something the tool cannot send; the message names offsets and sizes only."""

    kind = Kind.internal


class Guard:
    """Bounds request bodies to ``max_body_bytes`` (``path_limits`` gives some paths another bound: an
    upload's); turns an unhandled exception into a PHI-free 500.

    The 500 is ``answer(error)``: by default a problem object naming the exception's type (a site gives
    a page instead).
    """

    def __init__(
        self,
        app: ASGIApp,
        max_body_bytes: int,
        answer: Callable[[Exception], Response] | None = None,
        path_limits: dict[str, int] | None = None,
    ):
        self.app = app
        self.max_body_bytes = max_body_bytes
        self.answer = answer or internal_error
        self.path_limits = path_limits or {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.path_limits.get(scope.get("path", ""), self.max_body_bytes)
        declared = Headers(scope=scope).get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            await too_large(limit)(scope, receive, send)
            return
        received = 0
        started = False

        async def limited_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise BodyTooLarge(limit)
            return message

        async def watched_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, limited_receive, watched_send)
        except Exception as error:  # every failure becomes a problem, never a traceback
            _log_failure(scope.get("method"), scope.get("path"), error)
            if not started:
                await self.answer(error)(scope, receive, send)


def _log_failure(method: Any, path: Any, error: BaseException) -> None:
    """The one log line of a failure: the request, the exception's type and place, never its message."""
    log.error("%s %s failed: %s", method, path, raised_at(error))


def internal_error(error: Exception) -> ProblemResponse:
    """The 500 of an exception nobody expected: its type only (its message may quote what it was given)."""
    return problem(500, f"{type(error).__name__} (see the server log)", title=Kind.internal.title)


def install_problem_handlers(
    app: FastAPI,
    *,
    max_body_bytes: int,
    path_limits: dict[str, int] | None = None,
    answer: Callable[[Exception], Response] | None = None,
) -> None:
    """Every service's error handling, in one place: problems for :class:`~nlpbench.errors.NlpbenchError` (by its
    kind), invalid requests (400) and HTTP errors (their status; 413 as :func:`too_large`, and a 405's ``Allow``
    naming every method served at the path), behind :class:`Guard` with ``max_body_bytes`` (``path_limits``) and
    ``answer`` (the 500 of anything else).

    A site that answers pages rather than problems registers its own handlers of HTTP errors and invalid
    requests after this call (those replace these).
    """
    app.add_middleware(Guard, max_body_bytes=max_body_bytes, answer=answer, path_limits=path_limits)

    @app.exception_handler(NlpbenchError)
    async def refused(request: Request, error: NlpbenchError) -> Response:
        if error.kind is Kind.internal:  # a bug: logged as one, by type and place
            _log_failure(request.method, request.url.path, error)
        return problem_of(error)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(_request: Request, error: RequestValidationError) -> Response:
        return problem(400, describe_errors(error.errors()))

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, error: HTTPException) -> Response:
        if error.status_code == 413:
            return too_large(max_body_bytes)
        detail = error.detail if isinstance(error.detail, str) else None
        response = problem(error.status_code, detail)
        response.headers.update(error.headers or {})
        if error.status_code == 405:  # Starlette names the methods of one route; a path has several
            response.headers["Allow"] = ", ".join(sorted(_methods(app, request)))
        return response


def _methods(app: FastAPI, request: Request) -> set[str]:
    """Every method some route serves at the request's path."""
    methods: set[str] = set()
    for route in app.router.routes:
        match, _ = route.matches(request.scope)
        if match is not Match.NONE:
            methods |= getattr(route, "methods", None) or set()
    return methods
