"""nlpbench's patient bundles carry what the NLP Sandbox's seeding script needs, and read back unchanged."""

from __future__ import annotations

import json

import pytest

from nlpbench import formats
from nlpbench.model import Annotation, Document, Span

TEXT = "On 12/26/2020, Ms. Chloe Price met with Dr. Prescott in Seattle."


def notes() -> list[Document]:
    gold = [
        Annotation("note-001", Span(3, 13), "date", "12/26/2020", {"dateFormat": "MM/DD/YYYY"}),
        Annotation("note-001", Span(19, 30), "person_name", "Chloe Price", {}, 80.5),
        Annotation("note-001", Span(56, 63), "location", "Seattle", {"locationType": "city"}),
    ]
    meta = {"patientId": "patient-001", "noteType": "loinc:LP29684-5"}
    return [Document("note-001", TEXT, gold, metadata=meta), Document("note-002", "Nothing here.", [], metadata=meta)]


def test_every_annotation_names_its_note_and_has_a_confidence(tmp_path):
    path = tmp_path / "bundles.json"
    formats.get("sandbox-bundles").write(notes(), path)
    (bundle,) = json.loads(path.read_text())["patient_bundles"]
    first, empty = bundle["note_bundles"]
    assert first["note"] == {"text": TEXT, "type": "loinc:LP29684-5", "patientId": "patient-001"}
    assert "name" not in first["annotation"]
    assert first["annotation"]["textDateAnnotations"] == [
        {"start": 3, "length": 10, "text": "12/26/2020", "dateFormat": "MM/DD/YYYY", "noteId": "note-001"}
    ]  # nothing is invented: written and read back, the dataset is the same
    assert first["annotation"]["textPersonNameAnnotations"][0]["confidence"] == 80.5
    # a note without annotations has no noteId to name it: it keeps its identifier
    assert empty["note"]["identifier"] == "note-002"
    again = list(formats.get("sandbox-bundles").read(path))
    assert [d.id for d in again] == ["note-001", "note-002"]
    assert again[0].annotations == notes()[0].annotations
    assert notes()[0].metadata.items() <= again[0].metadata.items()


def test_seed_bundles_give_a_confidence_to_annotations_without_one(tmp_path):
    path = tmp_path / "seed.json"
    formats.get("sandbox-seed").write(notes(), path)
    (bundle,) = json.loads(path.read_text())["patient_bundles"]
    record = bundle["note_bundles"][0]["annotation"]
    confidences = [a["confidence"] for key in ("textDateAnnotations", "textPersonNameAnnotations") for a in record[key]]
    assert confidences == [100, 80.5]
    assert [d.id for d in formats.get("sandbox").read(path)] == ["note-001", "note-002"]


@pytest.mark.parametrize(("name", "accepted"), [("sandbox-seed", True), ("sandbox-bundles", False)])
def test_the_official_client_accepts_the_seed_bundles_create_requests(tmp_path, name, accepted):
    """The models of nlpsandbox-client 4.3.1 refuse unknown fields and a missing confidence: seed bundles pass."""
    pytest.importorskip("nlpsandboxclient")
    import nlpsandbox
    from nlpsandbox.model.annotation_create_request import AnnotationCreateRequest
    from nlpsandbox.model.note_create_request import NoteCreateRequest
    from nlpsandbox.model_utils import validate_and_convert_types
    from nlpsandboxclient.utils import camelcase_to_snakecase, change_keys

    configuration = nlpsandbox.Configuration(host="http://127.0.0.1/api/v1")
    path = tmp_path / "bundles.json"
    formats.get(name).write(notes()[:1], path)
    (bundle,) = json.loads(path.read_text())["patient_bundles"]
    (note_bundle,) = bundle["note_bundles"]

    def convert(body, model):
        request = change_keys(body, camelcase_to_snakecase)
        return validate_and_convert_types(request, (model,), ["body"], False, True, configuration=configuration)

    assert isinstance(convert(note_bundle["note"], NoteCreateRequest), NoteCreateRequest)
    if accepted:
        assert isinstance(convert(note_bundle["annotation"], AnnotationCreateRequest), AnnotationCreateRequest)
    else:  # the date has no confidence
        with pytest.raises(TypeError, match="confidence"):
            convert(note_bundle["annotation"], AnnotationCreateRequest)
