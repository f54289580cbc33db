"""``POST /text…Annotations``: one router per PHI type, of which a tool mounts those it serves (:data:`ROUTERS`).

An annotator that keeps accounts (an LLM endpoint) has its account of the note for the endpoint's type sent in
the ``X-Nlpbench-Account`` header (:mod:`nlpbench.toolapi.account`).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Response

from nlpbench.api.tool.answers import ERRORS, PHI_LABELS, annotation_set
from nlpbench.api.tool.notes import Cached
from nlpbench.model import PHI_TYPES
from nlpbench.toolapi import schemas
from nlpbench.toolapi.account import HEADER


def _router(label: str) -> APIRouter:
    """The router of ``POST /text{Type}Annotations``, answering the note's annotations of ``label``."""
    array = PHI_TYPES[label].array
    name = array[0].upper() + array[1:]
    router = APIRouter()

    @router.post(
        f"/{array}",
        operation_id=f"create{name}",
        response_model=schemas.RESPONSE_MODELS[label],
        response_model_exclude_none=True,
        responses=ERRORS,
        tags=[name[:-1]],
        summary=f"Annotate {label.replace('_', ' ')}s in a clinical note",
    )
    def annotate(request: schemas.NoteRequest, cache: Cached, response: Response) -> dict[str, Any]:
        found, accounts = cache.accounted(request.note)
        if accounts is not None and label in accounts:  # an LLM tool's grounding counts and cost: see HEADER
            response.headers[HEADER] = accounts[label].header()
        return {array: annotation_set(found, (label,))[array]}

    return router


#: The router of each PHI type, by label.
ROUTERS = {label: _router(label) for label in PHI_LABELS}
