"""The key check the data node and the platform API share: the key a request presents, or a 401 problem.

A request presents its key in ``X-API-Key`` or as ``Authorization: Bearer KEY``
(the header wins). Each service looks the key up in its own table — data-node
keys (:mod:`nlpbench.store.keys`) and platform keys (:mod:`nlpbench.platform.keys`)
are kept apart, so that a team's key never reads a private dataset's notes —
and refuses an unknown one with :func:`refused`.
"""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.requests import Request

#: What a 401 tells the client about how to authenticate.
CHALLENGE = {"WWW-Authenticate": "Bearer"}


def refused(detail: str) -> HTTPException:
    """The 401 of a request without a valid key, with :data:`CHALLENGE`."""
    return HTTPException(401, detail, CHALLENGE)


def presented_key(request: Request) -> str:
    """The key in ``X-API-Key``, else after ``Bearer`` in ``Authorization``; a 401 when there is none."""
    key = request.headers.get("x-api-key")
    bearer = request.headers.get("authorization", "")
    if not key and bearer.lower().startswith("bearer "):
        key = bearer[7:].strip()
    if not key:
        raise refused("an API key is required (X-API-Key header)")
    return key
