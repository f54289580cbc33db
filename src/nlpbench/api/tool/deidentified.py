"""``POST /deidentifiedNotes``: a note de-identified by the steps asked, with the annotations before and after."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from nlpbench.api.tool.answers import ERRORS, PHI_LABELS, annotation_set
from nlpbench.api.tool.notes import Cached
from nlpbench.toolapi import schemas
from nlpbench.toolapi.deidentify import deidentify

router = APIRouter()


@router.post(
    "/deidentifiedNotes",
    operation_id="createDeidentifiedNotes",
    response_model=schemas.DeidentifyResponse,
    response_model_exclude_none=True,
    responses=ERRORS,
    tags=["DeidentifiedNote"],
    summary="Deidentify a clinical note",
)
def create_deidentified_notes(request: schemas.DeidentifyRequest, cache: Cached) -> dict[str, Any]:
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
