"""Annotation records of an annotation store: create, list, get, delete.

What the store holds is served as it is held, with one gap filled: an annotation stored without a
confidence is served with :data:`SERVED_CONFIDENCE` (see :mod:`nlpbench.api.datanode.app`).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Query, Request
from starlette.responses import Response

from nlpbench.api.datanode import schemas
from nlpbench.api.datanode.access import Reached
from nlpbench.api.datanode.annotation_stores import STORE, store_name
from nlpbench.api.datanode.params import (
    CREATE,
    LIST,
    ONE,
    AnnotationId,
    AnnotationStoreId,
    DatasetId,
    Limit,
    Offset,
    StoredJSON,
    page_json,
    resource_id,
)
from nlpbench.store import repository as repo

router = APIRouter(tags=["Annotation"])
RECORDS = STORE + "/annotations"
#: What an annotation stored without a confidence is served with.
SERVED_CONFIDENCE = 100


def with_confidence(annotation: dict[str, Any]) -> dict[str, Any]:
    """The annotation as stored, with :data:`SERVED_CONFIDENCE` when it has no confidence."""
    return annotation if "confidence" in annotation else {**annotation, "confidence": SERVED_CONFIDENCE}


def record_json(dataset: str, store: str, row) -> dict[str, Any]:
    return {
        "name": f"{store_name(dataset, store)}/annotations/{row.identifier}",
        "annotationSource": {"resourceSource": {"name": row.source}},
        **{array: [with_confidence(value) for value in values] for array, values in row.arrays.items()},
    }


@router.post(
    RECORDS,
    operation_id="createAnnotation",
    status_code=201,
    response_model=schemas.Created,
    responses=CREATE,
    summary="Create an annotation",
)
def create_annotation(
    data: Reached,
    datasetId: DatasetId,
    annotationStoreId: AnnotationStoreId,
    annotationId: Annotated[str, resource_id("annotation", Query)],
    body: Annotated[schemas.AnnotationCreateRequest, Body()],
) -> dict[str, str]:
    arrays = body.model_dump(mode="json", exclude_none=True, include=set(schemas.ARRAYS))
    with data.writing() as session:
        repo.create_annotation(
            session,
            datasetId,
            annotationStoreId,
            annotationId,
            source=body.annotationSource.resourceSource.name,
            arrays=arrays,
        )
    return {"name": f"{store_name(datasetId, annotationStoreId)}/annotations/{annotationId}"}


@router.get(
    RECORDS,
    operation_id="listAnnotations",
    response_model=schemas.PageOfAnnotations,
    response_model_exclude_none=True,
    responses=LIST,
    summary="List the annotations in an annotation store",
)
def list_annotations(
    request: Request,
    data: Reached,
    datasetId: DatasetId,
    annotationStoreId: AnnotationStoreId,
    limit: Limit = 10,
    offset: Offset = 0,
) -> Response:
    with data.reading() as session:
        page = repo.list_annotations(session, datasetId, annotationStoreId, offset, limit)
        items = [record_json(datasetId, annotationStoreId, row) for row in page.items]
    return StoredJSON(page_json(request, page, "annotations", items))


@router.get(
    RECORDS + "/{annotationId}",
    operation_id="getAnnotation",
    response_model=schemas.Annotation,
    response_model_exclude_none=True,
    responses=ONE,
    summary="Get an annotation",
)
def get_annotation(
    data: Reached, datasetId: DatasetId, annotationStoreId: AnnotationStoreId, annotationId: AnnotationId
) -> Response:
    with data.reading() as session:
        row = repo.get_annotation(session, datasetId, annotationStoreId, annotationId)
        return StoredJSON(record_json(datasetId, annotationStoreId, row))


@router.delete(
    RECORDS + "/{annotationId}",
    operation_id="deleteAnnotation",
    response_model=schemas.EmptyObject,
    responses=ONE,
    summary="Delete an annotation",
)
def delete_annotation(
    data: Reached, datasetId: DatasetId, annotationStoreId: AnnotationStoreId, annotationId: AnnotationId
) -> dict[str, Any]:
    with data.writing() as session:
        repo.delete_annotation(session, datasetId, annotationStoreId, annotationId)
    return {}
