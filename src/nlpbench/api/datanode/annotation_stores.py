"""Annotation stores of a dataset: create, list, get, delete (with their annotations)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Query, Request

from nlpbench.api.datanode import schemas
from nlpbench.api.datanode.access import Reached
from nlpbench.api.datanode.params import (
    CREATE,
    LIST,
    ONE,
    AnnotationStoreId,
    DatasetId,
    Limit,
    Offset,
    page_json,
    resource_id,
)
from nlpbench.store import repository as repo

router = APIRouter(tags=["AnnotationStore"])
STORES = "/datasets/{datasetId}/annotationStores"
#: One annotation store's path, under which its annotations are.
STORE = STORES + "/{annotationStoreId}"


def store_name(dataset: str, store: str) -> str:
    return f"datasets/{dataset}/annotationStores/{store}"


@router.post(
    STORES,
    operation_id="createAnnotationStore",
    status_code=201,
    response_model=schemas.Created,
    responses=CREATE,
    summary="Create an annotation store",
)
def create_annotation_store(
    data: Reached,
    datasetId: DatasetId,
    annotationStoreId: Annotated[str, resource_id("annotation store", Query)],
    body: Annotated[schemas.AnyObject | None, Body()] = None,
) -> dict[str, str]:
    with data.writing() as session:
        repo.create_annotation_store(session, datasetId, annotationStoreId)
    return {"name": store_name(datasetId, annotationStoreId)}


@router.get(
    STORES,
    operation_id="listAnnotationStores",
    response_model=schemas.PageOfAnnotationStores,
    responses=LIST,
    summary="List the annotation stores in a dataset",
)
def list_annotation_stores(
    request: Request, data: Reached, datasetId: DatasetId, limit: Limit = 10, offset: Offset = 0
) -> dict[str, Any]:
    with data.reading() as session:
        page = repo.list_annotation_stores(session, datasetId, offset, limit)
        items = [{"name": store_name(datasetId, row.name)} for row in page.items]
    return page_json(request, page, "annotationStores", items)


@router.get(
    STORE,
    operation_id="getAnnotationStore",
    response_model=schemas.AnnotationStore,
    responses=ONE,
    summary="Get an annotation store",
)
def get_annotation_store(data: Reached, datasetId: DatasetId, annotationStoreId: AnnotationStoreId) -> dict[str, str]:
    with data.reading() as session:
        repo.get_annotation_store(session, datasetId, annotationStoreId)
    return {"name": store_name(datasetId, annotationStoreId)}


@router.delete(
    STORE,
    operation_id="deleteAnnotationStore",
    response_model=schemas.EmptyObject,
    responses=ONE,
    summary="Delete an annotation store",
)
def delete_annotation_store(
    data: Reached, datasetId: DatasetId, annotationStoreId: AnnotationStoreId
) -> dict[str, Any]:
    with data.writing() as session:
        repo.delete_annotation_store(session, datasetId, annotationStoreId)
    return {}
