"""The data node over HTTP on both backends, every response checked against the official 1.2.0 schemas."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import update

from nlpbench.api.datanode import Settings, create_app, schemas
from nlpbench.cli.dataset import import_documents
from nlpbench.store import keys
from nlpbench.store import repository as repo
from nlpbench.synth import generate
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
    with store.session() as session:
        assert [k.state() for k in keys.list_keys(session)] == ["revoked", "active"]


def test_an_expired_key_is_refused(store, official):
    with store.session() as session:
        key = keys.create_key(session, "read", expires_at=datetime.now(UTC) + timedelta(hours=1))
    app = create_app(store)
    Node(app, official, {"X-API-Key": key})("get", "/datasets", 200)
    with store.session() as session:
        session.execute(update(keys.ApiKey).values(expires_at=datetime.now(UTC) - timedelta(seconds=1)))
    assert "expired" in Node(app, official, {"X-API-Key": key})("get", "/datasets", 401)["detail"]
    with store.session() as session:
        assert [k.state() for k in keys.list_keys(session)] == ["expired"]


def test_a_key_made_while_the_node_runs_is_required_at_once(store, official):
    app = create_app(store)  # no key yet: open, as on localhost before the first key
    Node(app, official)("post", "/datasets", 201, params={"datasetId": "d-one"})
    with store.session() as session:
        key = keys.create_key(session, "read")
    Node(app, official)("get", "/datasets", 401)
    Node(app, official, {"X-API-Key": key})("get", "/datasets", 200)
    with store.session() as session:
        keys.revoke_key(session, key.split("_")[1])
    Node(app, official)("get", "/datasets", 401)  # every key revoked: still closed, never open again


def test_required_keys_are_required_before_any_exists(store, official):
    Node(create_app(store, Settings(require_keys=True)), official)("get", "/datasets", 401)


def _answer(node, method, path, dataset, **kwargs):
    """Status and body of a request about ``dataset``, the dataset's name in the body replaced by ``DATASET``."""
    path = f"/api/v1{path.format(**{**IDS, 'datasetId': dataset})}"
    response = node.client.request(method, path, headers=node.headers, **kwargs)
    return response.status_code, response.text.replace(dataset, "DATASET")


def test_a_scoped_key_sees_its_datasets_only_and_others_as_absent(store, official):
    admin = Node(create_app(store), official)
    for name in ("d-one", "d-two"):
        admin("post", "/datasets", 201, params={"datasetId": name})
        admin("post", DATASET + "/fhirStores", 201, ids={"datasetId": name}, params={"fhirStoreId": "evaluation"})
        admin("post", PATIENTS, 201, ids={"datasetId": name}, params={"patientId": "p-1"})
        note = {"text": SECRET, "type": "t", "patientId": "p-1"}
        admin("post", NOTES, 201, ids={"datasetId": name}, params={"noteId": "n-1"}, body=note)
    with store.session() as session:
        scoped = keys.create_key(session, "write", datasets=["d-one"])
        whole = keys.create_key(session, "write")
    app = create_app(store)
    node, unscoped = Node(app, official, {"X-API-Key": scoped}), Node(app, official, {"X-API-Key": whole})
    listed = node("get", "/datasets", 200)
    assert listed["datasets"] == [{"name": "datasets/d-one"}] and listed["totalResults"] == 1
    assert node("get", NOTE, 200)["text"] == SECRET
    node("post", PATIENTS, 201, params={"patientId": "p-2"})
    assert "may not create" in node("post", "/datasets", 403, params={"datasetId": "d-new"})["detail"]
    unscoped("post", "/datasets", 201, params={"datasetId": "d-new"})
    # d-two exists and d-nine does not: a scoped key cannot tell them apart, whatever it asks
    bad_note = {"text": 5, "type": "t", "patientId": "p-1"}
    for method, path, kwargs in [
        ("get", DATASET, {}),
        ("delete", DATASET, {}),
        ("get", DATASET + "/fhirStores", {}),
        ("post", DATASET + "/fhirStores", {"params": {"fhirStoreId": "other"}}),
        ("get", NOTES, {}),
        ("get", NOTE, {}),
        ("delete", NOTE, {}),
        ("post", NOTES, {"params": {"noteId": "n-2"}, "json": {"text": "x", "type": "t", "patientId": "p-1"}}),
        ("post", NOTES, {"params": {"noteId": "n-2"}, "json": bad_note}),
        ("get", PATIENT, {}),
        ("get", STORES, {}),
        ("get", RECORDS, {}),
        ("post", RECORDS, {"params": {"annotationId": "n-1"}, "json": RECORD}),
    ]:
        hidden, absent = _answer(node, method, path, "d-two", **kwargs), _answer(node, method, path, "d-nine", **kwargs)
        assert hidden == absent and hidden[0] in (400, 404), (method, path, hidden)
    assert unscoped("get", NOTE, 200, ids={"datasetId": "d-two"})["text"] == SECRET  # untouched


def test_the_next_link_starts_with_the_configured_base_url_never_the_host_header(store, official):
    app = create_app(store, Settings(base_url="https://node.example.org/"))
    node = Node(app, official, {"Host": "attacker.example", "X-Forwarded-Host": "attacker.example"})
    for index in range(12):
        node("post", "/datasets", 201, params={"datasetId": f"d-{index:02d}"})
    link = node("get", "/datasets", 200)["links"]["next"]
    assert link == "https://node.example.org/api/v1/datasets?offset=10&limit=10"


UNSTORABLE = {"nul": r"Chloe\u0000Price", "surrogate": r"Chloe \ud800 Price"}  # as JSON escapes


def _post_raw(node, path, params, body, bad):
    """POST ``body`` as JSON with its ``"@@"`` replaced by the JSON string escape ``bad``: the answer."""
    content = json.dumps(body).replace("@@", bad)
    url, headers = f"/api/v1{path.format(**IDS)}", {"content-type": "application/json"}
    return node.client.request("post", url, params=params, content=content, headers=headers)


@pytest.mark.parametrize("kind", UNSTORABLE)
def test_text_the_store_cannot_keep_is_a_400_that_names_the_field(node, kind):
    _fill(node)
    bad, reason = UNSTORABLE[kind], "NUL character" if kind == "nul" else "lone surrogate"
    for field in ("text", "type"):
        note = {"text": "x", "type": "t", "patientId": "p-1", field: "@@"}
        response = _post_raw(node, NOTES, {"noteId": "n-2"}, note, bad)
        assert response.status_code == 400, response.text
        detail = response.json()["detail"]
        assert detail.startswith(f"note 'n-2' in d-one/evaluation: {field} holds a") and reason in detail
        assert "Chloe" not in detail
    record = {**RECORD, "textDateAnnotations": [{**RECORD["textDateAnnotations"][0], "text": "@@"}]}
    response = _post_raw(node, RECORDS, {"annotationId": "n-2"}, record, bad)
    assert response.status_code == 400 and reason in response.json()["detail"]
    response = _post_raw(node, "/datasets", {"datasetId": "d-two"}, {"description": "@@"}, bad)
    assert response.status_code == 400 and "description" in response.json()["detail"]  # Pydantic may say first
    assert node("get", NOTES, 200)["totalResults"] == 1 and node("get", "/datasets", 200)["totalResults"] == 1


def test_gold_without_confidence_is_served_with_confidence_100(store, official):
    """Every dataset ``nlpbench synth`` makes has gold without confidence; the schema requires one."""
    documents = list(generate(12, seed=3))
    import_documents(store, "synth-a", documents, "synth")
    node = Node(create_app(store), official)
    page = node("get", RECORDS, 200, ids={"datasetId": "synth-a"}, params={"limit": 100})
    served = [a for record in page["annotations"] for array in schemas.ARRAYS for a in record.get(array, [])]
    assert sum(len(d.annotations) for d in documents) > len(served) > 0  # age and profession have no array
    assert {a["confidence"] for a in served} == {100}
    one = node("get", ONE_RECORD, 200, ids={"datasetId": "synth-a", "annotationId": documents[0].id})
    assert one == page["annotations"][0]
    with store.session(readonly=True) as session:  # served so, stored as imported
        stored = next(iter(repo.iter_records(session, "synth-a", "goldstandard")))
        assert all("confidence" not in a for values in stored.arrays.values() for a in values)
