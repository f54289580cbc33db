"""``POST /deidentifiedNotes``: a note de-identified by the steps asked, with the annotations before and after.

A de-identifier that finds PHI with an annotator keeping accounts (an LLM endpoint) sends the note's account in
the ``X-Nlpbench-Account`` header (:meth:`nlpbench.toolapi.account.Account.of_note`): the grounding counts of
the types the steps ask for, and the note's tokens, latency and caching once.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Response

from nlpbench.api.tool.answers import ERRORS, PHI_LABELS, annotation_set
from nlpbench.api.tool.notes import Cached
from nlpbench.toolapi import schemas
from nlpbench.toolapi.account import HEADER, Account
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
def create_deidentified_notes(request: schemas.DeidentifyRequest, cache: Cached, response: Response) -> dict[str, Any]:
    requested = {t.removeprefix("text_") for step in request.deidentificationSteps for t in step.annotationTypes}
    labels = tuple(label for label in PHI_LABELS if label in requested)
    annotations, accounts = cache.accounted(request.note) if labels else ([], None)
    found = [a for a in annotations if a.label in labels]
    asked = [accounts[label] for label in labels if label in accounts] if accounts is not None else []
    if asked:  # an LLM de-identifier's grounding counts of the types asked for, and the note's cost: see HEADER
        response.headers[HEADER] = Account.of_note(asked).header()
    text, moved = deidentify(request.note.text, found, request.deidentificationSteps)
    note = request.note.model_dump(mode="json")
    note["text"] = text
    return {
        "originalAnnotations": annotation_set(found, labels),
        "deidentifiedAnnotations": annotation_set(moved, labels),
        "deidentifiedNote": note,
    }
