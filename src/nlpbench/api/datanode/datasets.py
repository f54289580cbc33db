"""Datasets: create (with its metadata), list, get, delete (with everything it holds)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Query, Request

from nlpbench.api.datanode import schemas
from nlpbench.api.datanode.access import Reached
from nlpbench.api.datanode.params import CREATE, LIST, ONE, DatasetId, Limit, Offset, page_json, resource_id
from nlpbench.store import repository as repo

router = APIRouter(tags=["Dataset"])
#: The fields of a create request the store keeps.
META = ("version", "description", "license", "visibility")


def dataset_json(row) -> dict[str, Any]:
    return {
        "name": f"datasets/{row.name}",
        "version": row.version,
        "description": row.description,
        "license": row.license,
        "visibility": row.visibility,
        "createdAt": row.created_at.isoformat(),
    }


@router.post(
    "/datasets",
    operation_id="createDataset",
    status_code=201,
    response_model=schemas.Created,
    responses=CREATE,
    summary="Create a dataset",
)
def create_dataset(
    data: Reached,
    datasetId: Annotated[str, resource_id("dataset", Query)],
    body: Annotated[schemas.DatasetCreateRequest | None, Body()] = None,
) -> dict[str, str]:
    meta = {k: v for k, v in (body.model_dump(exclude_none=True) if body else {}).items() if k in META}
    with data.writing() as session:
        repo.create_dataset(session, datasetId, **meta)
    return {"name": f"datasets/{datasetId}"}


@router.get(
    "/datasets",
    operation_id="listDatasets",
    response_model=schemas.PageOfDatasets,
    response_model_exclude_none=True,
    responses=LIST,
    summary="Get all datasets",
)
def list_datasets(request: Request, data: Reached, limit: Limit = 10, offset: Offset = 0) -> dict[str, Any]:
    with data.reading() as session:
        page = repo.list_datasets(session, offset, limit)
        return page_json(request, page, "datasets", [{"name": f"datasets/{row.name}"} for row in page.items])


@router.get(
    "/datasets/{datasetId}",
    operation_id="getDataset",
    response_model=schemas.Dataset,
    response_model_exclude_none=True,
    responses=ONE,
    summary="Get a dataset by ID",
)
def get_dataset(data: Reached, datasetId: DatasetId) -> dict[str, Any]:
    with data.reading() as session:
        return dataset_json(repo.get_dataset(session, datasetId))


@router.delete(
    "/datasets/{datasetId}",
    operation_id="deleteDataset",
    response_model=schemas.EmptyObject,
    responses=ONE,
    summary="Delete a dataset by ID",
)
def delete_dataset(data: Reached, datasetId: DatasetId) -> dict[str, Any]:
    with data.writing() as session:
        repo.delete_dataset(session, datasetId)
    return {}
