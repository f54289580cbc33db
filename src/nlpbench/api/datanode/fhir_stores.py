"""FHIR stores of a dataset: create, list, get, delete (with their patients and notes)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Query, Request

from nlpbench.api.datanode import schemas
from nlpbench.api.datanode.access import Reached
from nlpbench.api.datanode.params import (
    CREATE,
    LIST,
    ONE,
    DatasetId,
    FhirStoreId,
    Limit,
    Offset,
    page_json,
    resource_id,
)
from nlpbench.store import repository as repo

router = APIRouter(tags=["FhirStore"])
STORES = "/datasets/{datasetId}/fhirStores"
#: One FHIR store's path, under which its patients and notes are.
STORE = STORES + "/{fhirStoreId}"


def store_name(dataset: str, store: str) -> str:
    return f"datasets/{dataset}/fhirStores/{store}"


@router.post(
    STORES,
    operation_id="createFhirStore",
    status_code=201,
    response_model=schemas.Created,
    responses=CREATE,
    summary="Create a FHIR store",
)
def create_fhir_store(
    data: Reached,
    datasetId: DatasetId,
    fhirStoreId: Annotated[str, resource_id("FHIR store", Query)],
    body: Annotated[schemas.AnyObject | None, Body()] = None,
) -> dict[str, str]:
    with data.writing() as session:
        repo.create_fhir_store(session, datasetId, fhirStoreId)
    return {"name": store_name(datasetId, fhirStoreId)}


@router.get(
    STORES,
    operation_id="listFhirStores",
    response_model=schemas.PageOfFhirStores,
    responses=LIST,
    summary="List the FHIR stores in a dataset",
)
def list_fhir_stores(
    request: Request, data: Reached, datasetId: DatasetId, limit: Limit = 10, offset: Offset = 0
) -> dict[str, Any]:
    with data.reading() as session:
        page = repo.list_fhir_stores(session, datasetId, offset, limit)
        items = [{"name": store_name(datasetId, row.name)} for row in page.items]
    return page_json(request, page, "fhirStores", items)


@router.get(
    STORE,
    operation_id="getFhirStore",
    response_model=schemas.FhirStore,
    responses=ONE,
    summary="Get a FHIR store",
)
def get_fhir_store(data: Reached, datasetId: DatasetId, fhirStoreId: FhirStoreId) -> dict[str, str]:
    with data.reading() as session:
        repo.get_fhir_store(session, datasetId, fhirStoreId)
    return {"name": store_name(datasetId, fhirStoreId)}


@router.delete(
    STORE,
    operation_id="deleteFhirStore",
    response_model=schemas.EmptyObject,
    responses=ONE,
    summary="Delete a FHIR store",
)
def delete_fhir_store(data: Reached, datasetId: DatasetId, fhirStoreId: FhirStoreId) -> dict[str, Any]:
    with data.writing() as session:
        repo.delete_fhir_store(session, datasetId, fhirStoreId)
    return {}
