"""``POST /text…Annotations``: one router per PHI type, of which a tool mounts those it serves (:data:`ROUTERS`)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from nlpbench.api.tool.answers import ERRORS, PHI_LABELS, annotation_set
from nlpbench.api.tool.notes import Cached
from nlpbench.model import PHI_TYPES
from nlpbench.toolapi import schemas


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
    def annotate(request: schemas.NoteRequest, cache: Cached) -> dict[str, Any]:
        found = cache.annotations(request.note)
        return {array: annotation_set(found, (label,))[array]}

    return router


#: The router of each PHI type, by label.
ROUTERS = {label: _router(label) for label in PHI_LABELS}
