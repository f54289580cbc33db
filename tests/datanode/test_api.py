"""The data node over HTTP on both backends, every response checked against the official 1.2.0 schemas."""

from __future__ import annotations

import re

import pytest

from nlpbench.api.datanode import Settings, create_app
from nlpbench.store import keys
from tests.api.official import spec
from tests.toolkit import AsgiClient

SECRET = "Ms. Chloe Price met Dr. Prescott in Seattle on 12/26/2020."
DATASET = "/datasets/{datasetId}"
FHIR = DATASET + "/fhirStores/{fhirStoreId}"
PATIENTS = FHIR + "/fhir/Patient"
NOTES = FHIR + "/fhir/Note"
STORES = DATASET + "/annotationStores"
STORE = STORES + "/{annotationStoreId}"
RECORDS = STORE + "/annotations"
PATIENT, NOTE, ONE_RECORD = PATIENTS + "/{patientId}", NOTES + "/{noteId}", RECORDS + "/{annotationId}"
IDS = {
    "datasetId": "d-one",
    "fhirStoreId": "evaluation",
    "annotationStoreId": "goldstandard",
    "patientId": "p-1",
    "noteId": "n-1",
    "annotationId": "n-1",
}
RECORD = {
    "annotationSource": {"resourceSource": {"name": "datasets/d-one/fhirStores/evaluation/fhir/Note/n-1"}},
    "textDateAnnotations": [
        {"start": 47, "length": 10, "text": "12/26/2020", "confidence": 99.5, "dateFormat": "MM/DD/YYYY"}
    ],
    "textPersonNameAnnotations": [{"start": 4, "length": 11, "text": "Chloe Price", "confidence": 100}],
    "textLocationAnnotations": [
        {"start": 36, "length": 7, "text": "Seattle", "confidence": 90, "locationType": "city"}
    ],
    "textIdAnnotations": [],
    "textContactAnnotations": [],
    "textCovidSymptomAnnotations": [],
}


@pytest.fixture(scope="module")
def official(vectors):
    return spec(vectors, "data-node")


class Node:
    """Calls the data node by the official path template and validates each answer against the official schema."""

    def __init__(self, app, official, headers=None):
        self.client = AsgiClient(app)
        self.official = official
        self.headers = headers or {}

    def __call__(self, method, template, status, *, ids=None, params=None, body=None, headers=None):
        path = template.format(**{**IDS, **(ids or {})})
        response = self.client.request(
            method, f"/api/v1{path}", params=params, json=body, headers={**self.headers, **(headers or {})}
        )
        assert response.status_code == status, response.text
        payload = response.json()
        if status >= 400:
            assert set(payload) >= {"title", "status", "detail"} and payload["status"] == status
            assert response.headers["content-type"] == "application/problem+json"
        if str(status) in _documented(self.official, method, template):
            self.official.validate_response(method, template, status, payload)
        return payload


def _documented(official, method, template):
    operation, _ = official._operation(method, template)
    return operation["responses"]


@pytest.fixture
def node(store, official):
    return Node(create_app(store), official)


def _fill(node):
    node("post", "/datasets", 201, params={"datasetId": "d-one"}, body={})
    node("post", DATASET + "/fhirStores", 201, params={"fhirStoreId": "evaluation"}, body={})
    node("post", PATIENTS, 201, params={"patientId": "p-1"}, body={"gender": "female"})
    note = {"text": SECRET, "type": "loinc:LP29684-5", "patientId": "p-1"}
    node("post", NOTES, 201, params={"noteId": "n-1"}, body=note)
    node("post", STORES, 201, params={"annotationStoreId": "goldstandard"}, body={})
    node("post", RECORDS, 201, params={"annotationId": "n-1"}, body=RECORD)


def test_all_25_operations(node):
    assert node("get", "/healthCheck", 200) == {"status": "pass"}
    assert node("post", "/datasets", 201, params={"datasetId": "d-one"}, body={}) == {"name": "datasets/d-one"}
    created = node("post", DATASET + "/fhirStores", 201, params={"fhirStoreId": "evaluation"})
    assert created == {"name": "datasets/d-one/fhirStores/evaluation"}
    created = node("post", PATIENTS, 201, params={"patientId": "p-1"}, body={"gender": "female"})
    assert created == {"name": "datasets/d-one/fhirStores/evaluation/Patient/p-1"}
    note = {"text": SECRET, "type": "loinc:LP29684-5", "patientId": "p-1"}
    created = node("post", NOTES, 201, params={"noteId": "n-1"}, body=note)
    assert created == {"name": "datasets/d-one/fhirStores/evaluation/Note/n-1"}
    created = node("post", STORES, 201, params={"annotationStoreId": "goldstandard"}, body={})
    assert created == {"name": "datasets/d-one/annotationStores/goldstandard"}
    created = node("post", RECORDS, 201, params={"annotationId": "n-1"}, body=RECORD)
    assert created == {"name": "datasets/d-one/annotationStores/goldstandard/annotations/n-1"}

    dataset = node("get", DATASET, 200)
    assert dataset["name"] == "datasets/d-one" and dataset["visibility"] == "private"
    assert node("get", "/datasets", 200)["datasets"] == [{"name": "datasets/d-one"}]
    assert node("get", FHIR, 200) == {"name": "datasets/d-one/fhirStores/evaluation"}
    assert node("get", DATASET + "/fhirStores", 200)["fhirStores"] == [{"name": "datasets/d-one/fhirStores/evaluation"}]
    assert node("get", PATIENT, 200) == {"identifier": "p-1", "gender": "female"}
    assert node("get", PATIENTS, 200)["patients"] == [{"identifier": "p-1", "gender": "female"}]
    assert node("get", NOTE, 200) == {"identifier": "n-1", **note}
    assert node("get", NOTES, 200)["notes"] == [{"identifier": "n-1", **note}]
    assert node("get", STORE, 200) == {"name": "datasets/d-one/annotationStores/goldstandard"}
    assert len(node("get", STORES, 200)["annotationStores"]) == 1
    record = node("get", ONE_RECORD, 200)
    assert record == {"name": "datasets/d-one/annotationStores/goldstandard/annotations/n-1", **RECORD}
    assert node("get", RECORDS, 200)["annotations"] == [record]

    assert node("delete", ONE_RECORD, 200) == {}
    assert node("delete", STORE, 200) == {}
    assert node("delete", NOTE, 200) == {}
    assert node("delete", PATIENT, 200) == {}
    assert node("delete", FHIR, 200) == {}
    assert node("delete", DATASET, 200) == {}
    assert node("get", "/datasets", 200)["totalResults"] == 0


def test_dataset_metadata_is_kept(node):
    body = {"version": "2.1", "description": "synthetic", "license": "cc-by-4.0", "visibility": "public"}
    node("post", "/datasets", 201, params={"datasetId": "d-one"}, body=body)
    dataset = node("get", DATASET, 200)
    assert {k: dataset[k] for k in body} == body
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?\+00:00", dataset["createdAt"])


def test_paging_and_next_link(node):
    node("post", "/datasets", 201, params={"datasetId": "d-one"})
    node("post", DATASET + "/fhirStores", 201, params={"fhirStoreId": "evaluation"})
    node("post", PATIENTS, 201, params={"patientId": "p-1"})
    for index in range(23):
        node(
            "post", NOTES, 201, params={"noteId": f"n-{index:02d}"}, body={"text": "x", "type": "", "patientId": "p-1"}
        )
    first = node("get", NOTES, 200)
    assert (first["offset"], first["limit"], first["totalResults"], len(first["notes"])) == (0, 10, 23, 10)
    assert first["links"]["next"].endswith("/fhir/Note?offset=10&limit=10")
    seen, url = [], f"/api/v1{NOTES.format(**IDS)}?limit=20"
    while url:
        page = node.client.get(url).json()
        seen += [n["identifier"] for n in page["notes"]]
        url = page["links"]["next"]
    assert seen == [f"n-{i:02d}" for i in range(23)]
    last = node("get", NOTES, 200, params={"offset": 20, "limit": 100})
    assert (len(last["notes"]), last["links"]["next"]) == (3, "")
    assert node("get", NOTES, 200, params={"offset": 50})["notes"] == []


@pytest.mark.parametrize(
    ("params", "field"),
    [({"limit": 9}, "limit"), ({"limit": 101}, "limit"), ({"offset": -1}, "offset"), ({"limit": "ten"}, "limit")],
)
def test_page_parameters_out_of_range(node, params, field):
    node("post", "/datasets", 201, params={"datasetId": "d-one"})
    problem = node("get", "/datasets", 400, params=params)
    assert f"query.{field}" in problem["detail"]


@pytest.mark.parametrize("bad", ["ab", "a" * 61, "Upper", "under_score", "-lead", "trail-", "two--dashes"])
def test_ids_follow_the_schema(node, bad):
    problem = node("post", "/datasets", 400, params={"datasetId": bad})
    assert "query.datasetId" in problem["detail"]
    assert node("get", "/datasets", 200)["totalResults"] == 0


def test_conflicts_missing_parents_and_missing_resources(node):
    _fill(node)
    assert "already exists" in node("post", "/datasets", 409, params={"datasetId": "d-one"})["detail"]
    node("post", NOTES, 409, params={"noteId": "n-1"}, body={"text": "x", "type": "", "patientId": "p-1"})
    node("post", RECORDS, 409, params={"annotationId": "n-1"}, body=RECORD)
    missing = {"datasetId": "nope"}
    assert (
        "does not exist"
        in node("post", DATASET + "/fhirStores", 400, ids=missing, params={"fhirStoreId": "abc"})["detail"]
    )
    node("get", DATASET + "/fhirStores", 400, ids=missing)
    node("get", NOTES, 400, ids={"fhirStoreId": "nope"})
    node("get", RECORDS, 400, ids={"annotationStoreId": "nope"})
    problem = node("post", NOTES, 400, params={"noteId": "n-2"}, body={"text": SECRET, "type": "", "patientId": "p-9"})
    assert "patient 'p-9'" in problem["detail"]
    node("get", DATASET, 404, ids=missing)
    assert "note 'n-9' in d-one/evaluation not found" in node("get", NOTE, 404, ids={"noteId": "n-9"})["detail"]
    assert "FHIR store d-one/nope not found" in node("get", NOTE, 404, ids={"fhirStoreId": "nope"})["detail"]
    assert "dataset 'nope' not found" in node("get", NOTE, 404, ids=missing)["detail"]
    node("delete", NOTE, 404, ids={"noteId": "n-9"})
    node("get", PATIENT, 404, ids={"patientId": "p-9"})
    node("get", ONE_RECORD, 404, ids={"annotationId": "n-9"})
    node("delete", STORE, 404, ids={"annotationStoreId": "nope"})
    node("get", FHIR, 404, ids={"fhirStoreId": "nope"})


@pytest.mark.parametrize(
    "body",
    [
        {"type": "", "patientId": "p-1"},
        {"text": SECRET, "type": "", "patientId": "P_1"},
        {"text": 5, "type": "", "patientId": "p-1"},
        [SECRET],
    ],
)
def test_bad_note_bodies_are_refused_without_quoting_them(node, body):
    _fill(node)
    problem = node("post", NOTES, 400, params={"noteId": "n-2"}, body=body)
    assert "Chloe" not in problem["detail"] and "body" in problem["detail"]


@pytest.mark.parametrize(
    "change",
    [
        {"annotationSource": {}},
        {"annotationSource": {"resourceSource": {"name": "x"}, "s3Source": {}}},
        {"textDateAnnotations": [{"start": 0, "length": 1, "text": "x", "confidence": 101}]},
        {"textLocationAnnotations": [{"start": 0, "length": 1, "text": "x", "confidence": 1, "locationType": "moon"}]},
        {"textCovidSymptomAnnotations": [{"start": 0, "length": 1, "text": "x", "confidence": 1}]},
        {"textIdAnnotations": [{"start": "0", "length": 1, "text": "x", "confidence": 1, "idType": "ssn"}]},
    ],
)
def test_bad_annotation_bodies(node, change):
    _fill(node)
    node("post", RECORDS, 400, params={"annotationId": "n-2"}, body={**RECORD, **change})


def test_cascading_delete_of_a_patient_removes_their_notes(node):
    _fill(node)
    node("delete", PATIENT, 200)
    assert node("get", NOTES, 200)["totalResults"] == 0
    node("delete", DATASET, 200)
    node("get", STORES, 400)


def test_request_bodies_are_limited(store, official):
    node = Node(create_app(store, Settings(max_body_bytes=1000)), official)
    node("post", "/datasets", 201, params={"datasetId": "d-one"})
    node("post", DATASET + "/fhirStores", 201, params={"fhirStoreId": "evaluation"})
    node("post", PATIENTS, 201, params={"patientId": "p-1"})
    node("post", NOTES, 413, params={"noteId": "n-1"}, body={"text": "x" * 2000, "type": "", "patientId": "p-1"})


def test_api_keys(store, official):
    with store.session() as session:
        reader = keys.create_key(session, "read", "a reader")
        writer = keys.create_key(session, "write")
    app = create_app(store, Settings(require_keys=True))
    anonymous = Node(app, official)
    anonymous("get", "/healthCheck", 200)
    assert "API key" in anonymous("get", "/datasets", 401)["detail"]
    Node(app, official, {"X-API-Key": reader + "x"})("get", "/datasets", 401)
    Node(app, official, {"X-API-Key": reader})("get", "/datasets", 200)
    Node(app, official, {"X-API-Key": reader})("post", "/datasets", 403, params={"datasetId": "d-one"})
    Node(app, official, {"Authorization": f"Bearer {writer}"})("post", "/datasets", 201, params={"datasetId": "d-one"})
    with store.session() as session:
        listed = keys.list_keys(session)
        assert {k.scope for k in listed} == {"read", "write"}
        assert all(reader not in k.secret_hash for k in session.scalars(keys.select(keys.ApiKey)))
        keys.revoke_key(session, reader.split("_")[1])
    Node(app, official, {"X-API-Key": reader})("get", "/datasets", 401)
