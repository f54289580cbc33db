"""FHIR patients of a FHIR store: create (with a gender), list, get, delete."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Query, Request

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
    Offset,
    PatientId,
    page_json,
    resource_id,
)
from nlpbench.store import repository as repo

router = APIRouter(tags=["Patient"])
PATIENTS = STORE + "/fhir/Patient"


def patient_json(row) -> dict[str, Any]:
    return {"identifier": row.identifier, **({"gender": row.gender} if row.gender else {})}


@router.post(
    PATIENTS,
    operation_id="createPatient",
    status_code=201,
    response_model=schemas.Created,
    responses=CREATE,
    summary="Create a FHIR patient",
)
def create_patient(
    data: Reached,
    datasetId: DatasetId,
    fhirStoreId: FhirStoreId,
    patientId: Annotated[str, resource_id("FHIR patient", Query)],
    body: Annotated[schemas.PatientCreateRequest | None, Body()] = None,
) -> dict[str, str]:
    with data.writing() as session:
        repo.create_patient(session, datasetId, fhirStoreId, patientId, body.gender if body else None)
    return {"name": f"{store_name(datasetId, fhirStoreId)}/Patient/{patientId}"}


@router.get(
    PATIENTS,
    operation_id="listPatients",
    response_model=schemas.PageOfPatients,
    response_model_exclude_none=True,
    responses=LIST,
    summary="List the Patients in a FHIR store",
)
def list_patients(
    request: Request,
    data: Reached,
    datasetId: DatasetId,
    fhirStoreId: FhirStoreId,
    limit: Limit = 10,
    offset: Offset = 0,
) -> dict[str, Any]:
    with data.reading() as session:
        page = repo.list_patients(session, datasetId, fhirStoreId, offset, limit)
        items = [patient_json(row) for row in page.items]
    return page_json(request, page, "patients", items)


@router.get(
    PATIENTS + "/{patientId}",
    operation_id="getPatient",
    response_model=schemas.Patient,
    response_model_exclude_none=True,
    responses=ONE,
    summary="Get a FHIR patient",
)
def get_patient(data: Reached, datasetId: DatasetId, fhirStoreId: FhirStoreId, patientId: PatientId) -> dict[str, Any]:
    with data.reading() as session:
        return patient_json(repo.get_patient(session, datasetId, fhirStoreId, patientId))


@router.delete(
    PATIENTS + "/{patientId}",
    operation_id="deletePatient",
    response_model=schemas.EmptyObject,
    responses=ONE,
    summary="Delete a FHIR patient",
)
def delete_patient(
    data: Reached, datasetId: DatasetId, fhirStoreId: FhirStoreId, patientId: PatientId
) -> dict[str, Any]:
    with data.writing() as session:
        repo.delete_patient(session, datasetId, fhirStoreId, patientId)
    return {}
