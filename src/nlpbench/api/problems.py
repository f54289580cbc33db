"""RFC 7807 problem objects, and the guard every tool app runs behind.

:func:`problem` builds the ``application/problem+json`` answer every app (the
tool, the data node, the platform) gives for an error, and
:func:`describe_errors` puts a request's validation errors in its ``detail``
without the values refused.

:class:`Guard` is a pure ASGI middleware (no body buffering) that bounds the
request body and keeps failures from leaking a note. A ``Content-Length`` over
``max_body_bytes`` is answered 413 before a byte of the body is read; a body
without one (chunked) is counted as it streams in and refused with 413 as soon
as it passes the limit, so at most ``max_body_bytes`` plus one chunk is ever
read. (FastAPI's own ``max_body_size`` answers a declared oversize body in
plain text, not with a problem object.) Any exception the app does not handle
becomes a 500 problem that names the exception's type only, and one log line
with the request's method, path, the exception's type and where it was raised:
an exception's message may quote the note (a ``ValueError`` of a date parser,
a response validation error), so it is neither sent nor logged.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from http import HTTPStatus
from typing import Any

from fastapi.responses import JSONResponse
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from nlpbench.errors import raised_at
from nlpbench.toolapi import schemas

PROBLEM_MEDIA_TYPE = "application/problem+json"
log = logging.getLogger("nlpbench.api")


class ProblemResponse(JSONResponse):
    media_type = PROBLEM_MEDIA_TYPE


def problem(status: int, detail: str | None = None, title: str | None = None) -> ProblemResponse:
    """An RFC 7807 problem object; the title defaults to the status phrase."""
    body = schemas.Problem(title=title or HTTPStatus(status).phrase, status=status, detail=detail, type="about:blank")
    return ProblemResponse(schemas.dump(body), status_code=status)


#: The ``responses`` of a route: OpenAPI entries by status code.
Responses = dict[int | str, dict[str, Any]]


def problem_doc(description: str) -> dict[str, Any]:
    """An OpenAPI ``responses`` entry: a problem object, in ``application/problem+json``, with ``description``."""
    return {
        "model": schemas.Problem,
        "description": description,
        "content": {PROBLEM_MEDIA_TYPE: {"schema": {"$ref": "#/components/schemas/Problem"}}},
    }


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


def too_large(max_body_bytes: int) -> ProblemResponse:
    detail = f"the request body is over the {max_body_bytes} bytes this service accepts"
    return problem(413, detail, title="Content Too Large")  # RFC 9110's name, whatever Python's HTTPStatus says


class BodyTooLarge(HTTPException):
    """Raised while the body streams in past ``limit``.

    FastAPI lets an ``HTTPException`` through its body parsing, and the app's
    handler of HTTP errors answers it with :func:`too_large` of its ``limit``.
    """

    def __init__(self, limit: int) -> None:
        super().__init__(status_code=413)
        self.limit = limit


class AnnotatorError(RuntimeError):
    """The annotator gave something the tool cannot send; the message names offsets and sizes only."""


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
            log.error("%s %s failed: %s", scope.get("method"), scope.get("path"), raised_at(error))
            if not started:
                await self.answer(error)(scope, receive, send)


def internal_error(error: Exception) -> ProblemResponse:
    detail = str(error) if isinstance(error, AnnotatorError) else f"{type(error).__name__} (see the server log)"
    return problem(500, detail, title="Internal error")
