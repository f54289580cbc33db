"""The NLP Sandbox's own client (nlpsandbox-client 4.3.1, unchanged) against ``nlpbench datanode serve``.

The data node runs as a real process on both backends; the client's ``nlp-cli
datanode`` commands (its click group) and the library calls its
``examples/push_dataset.py`` makes (get-or-create of dataset, FHIR store,
annotation store, patient, note and annotation through the generated API
package, keys converted with ``nlpsandboxclient.utils.change_keys``) run in this
process against the server.
"""

from __future__ import annotations

import json

import pytest

from nlpbench.cli.dataset import import_documents
from nlpbench.store import open_store
from nlpbench.synth import generate
from tests.datanode.server import served

nlpsandbox = pytest.importorskip("nlpsandbox", reason="nlpsandbox-client 4.3.1 with its API package's dependencies")
client_utils = pytest.importorskip("nlpsandboxclient.utils")

pytestmark = pytest.mark.reference


@pytest.fixture
def datanode(db_url, tmp_path):
    """``nlpbench datanode serve`` as a process over a store holding 23 synthetic notes; yields its API URL."""
    store = open_store(db_url)
    try:
        import_documents(store, "synth-a", generate(23, 0), "synth")
    finally:
        store.close()
    with served(db_url, tmp_path / "serve.log") as (url, _server):
        yield url


def nlp_cli(*args: str) -> str:
    """``nlp-cli datanode ARGS…``: the client's own click group, run in this process (it starts in seconds)."""
    from click.testing import CliRunner
    from nlpsandboxclient.cli.datanode_cli import cli

    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output[-2000:]
    return result.output


def test_nlp_cli_datanode_commands(datanode, tmp_path):
    host = ("--data_node_host", datanode)
    assert "'name': 'datasets/synth-a'" in nlp_cli("list-datasets", *host)
    assert "'name': 'datasets/d-two'" in nlp_cli("store-dataset", *host, "--dataset_id", "d-two")
    assert "datasets/d-two" in nlp_cli("list-datasets", *host)

    notes_file = tmp_path / "notes.json"
    nlp_cli(
        "list-notes", *host, "--dataset_id", "synth-a", "--fhir_store_id", "evaluation", "--output", str(notes_file)
    )
    notes = json.loads(notes_file.read_text())
    assert len(notes) == 23  # three pages of 10, the last one saying nothing follows
    assert len({note["identifier"] for note in notes}) == 23 and all(note["text"] for note in notes)

    records = [
        {
            "annotationSource": {"resourceSource": {"name": note["note_name"]}},
            "textDateAnnotations": [{"start": 0, "length": 1, "text": note["text"][0], "confidence": 50}],
            "textPersonNameAnnotations": [],
            "textLocationAnnotations": [],
        }
        for note in notes[:12]
    ]
    predictions = tmp_path / "predictions.json"
    predictions.write_text(json.dumps(records))
    store = ("--dataset_id", "synth-a", "--annotation_store_id", "submission-1")
    assert "Created Annotation Store" in nlp_cli(
        "store-annotations", *host, *store, "--annotation_json", str(predictions)
    )
    listed_file = tmp_path / "listed.json"
    nlp_cli("list-annotations", *host, *store, "--output", str(listed_file))
    listed = json.loads(listed_file.read_text())
    assert len(listed) == 12
    assert listed[0]["textDateAnnotations"][0]["confidence"] == 50
    assert nlp_cli("get-annotation-store", *host, *store).strip() == "datasets/synth-a/annotationStores/submission-1"
    fresh = ("--dataset_id", "synth-a", "--annotation_store_id", "fresh", "--create_if_missing")
    assert nlp_cli("get-annotation-store", *host, *fresh).strip() == "datasets/synth-a/annotationStores/fresh"
    first = notes[0]["identifier"]
    got_file = tmp_path / "got.json"
    nlp_cli("get-annotation", *host, *store, "--annotation_id", first, "--output", str(got_file))
    got = json.loads(got_file.read_text())
    assert got["name"] == f"datasets/synth-a/annotationStores/submission-1/annotations/{first}"
    assert got["annotation_source"]["resource_source"]["name"] == notes[0]["note_name"]

    # storing again replaces the store (the client deletes it first): nothing is duplicated
    nlp_cli("store-annotations", *host, *store, "--annotation_json", str(predictions))
    nlp_cli("list-annotations", *host, *store, "--output", str(listed_file))
    assert len(json.loads(listed_file.read_text())) == 12

    nlp_cli("delete-dataset", *host, "--dataset_id", "d-two")
    assert "d-two" not in nlp_cli("list-datasets", *host)


def _get_or_create(get, create, *args, **kwargs):
    """What push_dataset.py does for every resource: get it, create it on 404."""
    try:
        return get(*args)
    except nlpsandbox.ApiException as error:
        assert error.status == 404
        return create(*args, **kwargs)


def test_push_dataset_library_calls(datanode):
    from nlpsandbox import apis

    bundle = {
        "patient": {"identifier": "p-1", "gender": "female"},
        "note_bundles": [
            {
                "note": {"text": "Seen on 12/26/2020 by Dr. Prescott.", "type": "loinc:LP29684-5"},
                "annotation": {
                    "annotationSource": {"resourceSource": {"name": "unset"}},
                    "textDateAnnotations": [
                        {"start": 8, "length": 10, "text": "12/26/2020", "confidence": 95.5, "dateFormat": "MM/DD/YYYY"}
                    ],
                    "textPersonNameAnnotations": [{"start": 26, "length": 8, "text": "Prescott", "confidence": 90}],
                    "textLocationAnnotations": [],
                },
            }
        ],
    }
    dataset_id, fhir_store_id, annotation_store_id, note_id = "pushed", "evaluation", "goldstandard", "note-1"
    with nlpsandbox.ApiClient(nlpsandbox.Configuration(host=datanode)) as api_client:
        dataset_api = apis.DatasetApi(api_client)
        fhir_store_api = apis.FhirStoreApi(api_client)
        annotation_store_api = apis.AnnotationStoreApi(api_client)
        patient_api = apis.PatientApi(api_client)
        note_api = apis.NoteApi(api_client)
        annotation_api = apis.AnnotationApi(api_client)

        dataset = _get_or_create(dataset_api.get_dataset, dataset_api.create_dataset, dataset_id, body={})
        assert str(dataset.name) == "datasets/pushed"
        fhir_store = _get_or_create(
            fhir_store_api.get_fhir_store, fhir_store_api.create_fhir_store, dataset_id, fhir_store_id, body={}
        )
        annotation_store = _get_or_create(
            annotation_store_api.get_annotation_store,
            annotation_store_api.create_annotation_store,
            dataset_id,
            annotation_store_id,
            body={},
        )
        assert str(annotation_store.name) == "datasets/pushed/annotationStores/goldstandard"
        patient = client_utils.change_keys(bundle["patient"], client_utils.camelcase_to_snakecase)
        patient_id = patient.pop("identifier")
        _get_or_create(
            patient_api.get_patient,
            patient_api.create_patient,
            dataset_id,
            fhir_store_id,
            patient_id,
            patient_create_request=patient,
        )
        note_bundle = bundle["note_bundles"][0]
        note = client_utils.change_keys(note_bundle["note"], client_utils.camelcase_to_snakecase)
        note["patient_id"] = patient_id
        _get_or_create(
            note_api.get_note, note_api.create_note, dataset_id, fhir_store_id, note_id, note_create_request=note
        )
        annotation = note_bundle["annotation"]
        annotation["annotationSource"]["resourceSource"]["name"] = f"{fhir_store.name}/fhir/Note/{note_id}"
        new_annotation = client_utils.change_keys(annotation, client_utils.camelcase_to_snakecase)
        _get_or_create(
            annotation_api.get_annotation,
            annotation_api.create_annotation,
            dataset_id,
            annotation_store_id,
            note_id,
            annotation_create_request=new_annotation,
        )
        # a second run finds everything and creates nothing
        assert patient_api.get_patient(dataset_id, fhir_store_id, patient_id).gender == "female"
        stored_note = note_api.get_note(dataset_id, fhir_store_id, note_id)
        assert (str(stored_note.identifier), str(stored_note.patient_id)) == ("note-1", "p-1")
        record = annotation_api.get_annotation(dataset_id, annotation_store_id, note_id)
        assert record.text_date_annotations[0].date_format == "MM/DD/YYYY"
        assert record.annotation_source.resource_source.name == f"{fhir_store.name}/fhir/Note/note-1"
        with pytest.raises(nlpsandbox.ApiException) as conflict:
            dataset_api.create_dataset(dataset_id, body={})
        assert conflict.value.status == 409
