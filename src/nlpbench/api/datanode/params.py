"""What the data node's routers share: id and paging parameters, documented errors, pages and stored JSON."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any
from urllib.parse import urlencode

import msgspec
from fastapi import Path, Query, Request
from starlette.responses import Response

from nlpbench.api.problems import Responses, problem_doc
from nlpbench.store import repository as repo
from nlpbench.toolapi.schemas import RESOURCE_ID_PATTERN

BASE_PATH = "/api/v1"


def resource_id(kind: str, where: Callable[..., Any]) -> Any:
    """A client-chosen id of a ``kind`` of resource, as a ``Path`` or ``Query`` parameter (``Annotated[str, …]``)."""
    return where(
        description=f"The ID of the {kind}",
        min_length=3,
        max_length=60,
        pattern=RESOURCE_ID_PATTERN,
        examples=[f"awesome-{kind.lower().replace(' ', '-')}"],
    )


DatasetId = Annotated[str, resource_id("dataset", Path)]
FhirStoreId = Annotated[str, resource_id("FHIR store", Path)]
PatientId = Annotated[str, resource_id("FHIR patient", Path)]
NoteId = Annotated[str, resource_id("note", Path)]
AnnotationStoreId = Annotated[str, resource_id("annotation store", Path)]
AnnotationId = Annotated[str, resource_id("annotation", Path)]
Limit = Annotated[int, Query(ge=10, le=100, description="Maximum number of results returned")]
Offset = Annotated[int, Query(ge=0, description="Index of the first result that must be returned")]


BAD: Responses = {400: problem_doc("Invalid request")}
AUTH: Responses = {401: problem_doc("No valid API key"), 403: problem_doc("The API key may not do this")}
MISSING: Responses = {404: problem_doc("The specified resource was not found")}
CONFLICT: Responses = {409: problem_doc("The resource already exists")}
TOO_LARGE: Responses = {413: problem_doc("The request body is too large")}
UNAVAILABLE: Responses = {503: problem_doc("The database is unavailable")}
LIST: Responses = {**BAD, **AUTH, **UNAVAILABLE}
CREATE: Responses = {**BAD, **AUTH, **CONFLICT, **TOO_LARGE, **UNAVAILABLE}
ONE: Responses = {**BAD, **AUTH, **MISSING, **UNAVAILABLE}


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


def page_json(request: Request, page: repo.Page, key: str, items: list[Any]) -> dict[str, Any]:
    """A listing's answer: ``{offset, limit, links: {next}, totalResults, <key>: items}``."""
    return {
        "offset": page.offset,
        "limit": page.limit,
        "links": _next(request, page),
        "totalResults": page.total,
        key: items,
    }
