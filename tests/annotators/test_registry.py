"""The registry, the annotator interface, determinism, and the combined annotator."""

import pytest

from nlpbench.annotators import REGISTRY, Annotator
from nlpbench.model import Document, phi_type
from nlpbench.synth import generate

BASELINES = ("date", "person_name", "location", "id", "contact", "phi")


def test_every_baseline_is_registered_with_valid_tool_info():
    assert set(BASELINES) <= set(REGISTRY.names())
    for name in BASELINES:
        annotator = REGISTRY.get(name)()
        assert isinstance(annotator, Annotator)
        assert annotator.info.name.startswith("nlpbench-") and annotator.info.license == "apache-2.0"
        assert len(annotator.info.description) <= 280
    assert REGISTRY.get("phi")().types == ("date", "person_name", "location", "id", "contact")


@pytest.fixture(scope="module")
def notes():
    return list(generate(12, seed=7))


def test_annotations_fit_the_text_carry_subtypes_and_confidence(notes):
    for note in notes:
        annotations = REGISTRY.get("phi")().annotate(Document(note.id, note.text))
        checked = Document(note.id, note.text, annotations)
        assert checked.span_problem() is None
        for annotation in annotations:
            assert annotation.doc_id == note.id and 0 <= annotation.confidence <= 100
            phi = phi_type(annotation.label)
            if phi.subtypes:
                assert annotation.attributes[phi.type_attribute] in phi.subtypes
        assert annotations == sorted(annotations, key=lambda a: (a.start, a.end, a.label))


def test_same_note_same_output_and_single_types_agree_with_phi(notes):
    phi = REGISTRY.get("phi")()
    for note in notes[:4]:
        first = phi.annotate(Document(note.id, note.text))
        assert first == phi.annotate(Document(note.id, note.text))
        for name in BASELINES[:-1]:
            alone = REGISTRY.get(name)().annotate(Document(note.id, note.text))
            assert alone == [a for a in first if a.label == name]


def test_a_phone_number_is_a_contact_not_a_date_or_an_id():
    annotations = REGISTRY.get("phi")().annotate(Document("n", "Call 617-555-1212 on 3/4/2069."))
    assert [(a.label, a.text) for a in annotations] == [("contact", "617-555-1212"), ("date", "3/4/2069")]


def test_empty_note():
    assert REGISTRY.get("phi")().annotate(Document("n", "")) == []
