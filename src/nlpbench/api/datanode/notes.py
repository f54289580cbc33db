"""Notes of a FHIR store: create, list, get (on the event loop), delete."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Query, Request
from starlette.responses import Response

from nlpbench.api.datanode import schemas
from nlpbench.api.datanode.access import Reached
from nlpbench.api.datanode.fhir_stores import STORE, store_name
from nlpbench.api.datanode.params import (
    CREATE,
    LIST,
    ONE,
    DatasetId,
    FhirStoreId,
    Limit,
    NoteId,
    Offset,
    StoredJSON,
    page_json,
    resource_id,
)
from nlpbench.store import repository as repo

router = APIRouter(tags=["Note"])
NOTES = STORE + "/fhir/Note"


def note_json(row: repo.NoteRow) -> dict[str, str]:
    return {"identifier": row.identifier, "text": row.text, "type": row.type, "patientId": row.patient}


@router.post(
    NOTES,
    operation_id="createNote",
    status_code=201,
    response_model=schemas.Created,
    responses=CREATE,
    summary="Create a note",
)
def create_note(
    data: Reached,
    datasetId: DatasetId,
    fhirStoreId: FhirStoreId,
    noteId: Annotated[str, resource_id("note", Query)],
    body: Annotated[schemas.NoteCreateRequest, Body()],
) -> dict[str, str]:
    with data.writing() as session:
        repo.create_note(
            session, datasetId, fhirStoreId, noteId, text=body.text, type=body.type, patient=body.patientId
        )
    return {"name": f"{store_name(datasetId, fhirStoreId)}/Note/{noteId}"}


@router.get(
    NOTES,
    operation_id="listNotes",
    response_model=schemas.PageOfNotes,
    responses=LIST,
    summary="List notes",
)
def list_notes(
    request: Request,
    data: Reached,
    datasetId: DatasetId,
    fhirStoreId: FhirStoreId,
    limit: Limit = 10,
    offset: Offset = 0,
) -> Response:
    with data.reading() as session:
        page = repo.list_notes(session, datasetId, fhirStoreId, offset, limit)
    return StoredJSON(page_json(request, page, "notes", [note_json(row) for row in page.items]))


@router.get(
    NOTES + "/{noteId}",
    operation_id="getNote",
    response_model=schemas.Note,
    responses=ONE,
    summary="Get a note",
)
async def get_note(data: Reached, datasetId: DatasetId, fhirStoreId: FhirStoreId, noteId: NoteId) -> Response:
    # On the event loop, not in the thread pool: one lookup by unique index takes less time than handing
    # the call to a thread and back (which, with the GIL, cost more CPU than the whole query under load).
    repo.check_reach(data.reach, datasetId)
    with data.store.connection() as db:
        return StoredJSON(note_json(repo.get_note(db, datasetId, fhirStoreId, noteId)))


@router.delete(
    NOTES + "/{noteId}",
    operation_id="deleteNote",
    response_model=schemas.EmptyObject,
    responses=ONE,
    summary="Delete a note",
)
def delete_note(data: Reached, datasetId: DatasetId, fhirStoreId: FhirStoreId, noteId: NoteId) -> dict[str, Any]:
    with data.writing() as session:
        repo.delete_note(session, datasetId, fhirStoreId, noteId)
    return {}
