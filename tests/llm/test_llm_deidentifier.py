"""An LLM endpoint as an NLP Sandbox de-identifier (issue 22 §1): ``nlpbench serve --annotator deidentifier --llm``
over the local OpenAI-compatible server of :mod:`tests.llm.server`, through HTTP, its answers scored by
``nlpbench score deid``."""

from __future__ import annotations

import json

import pytest

from nlpbench import formats
from nlpbench.annotators.llm import prompts
from nlpbench.model import Annotation, Document, Span
from nlpbench.toolapi.account import HEADER, Account
from tests.llm.server import regex_entities
from tests.llm.test_llm_tool import NOTE, note_body, serve_llm

pytest.importorskip("rapidfuzz")

SECOND = "Dr. Prescott wrote on 1/2/2021 to Ms. Rachel Amber."
#: Dates moved by 30 days, then names, locations, ids and contacts masked with ``*``.
STEPS = [
    {"annotationTypes": ["text_date"], "dateOffsetConfig": {"offsetDays": 30}},
    {
        "annotationTypes": ["text_person_name", "text_location", "text_id", "text_contact"],
        "maskingCharConfig": {"maskingChar": "*"},
    },
]


def gold_note(identifier: str, text: str, phi: list[tuple[str, str]]) -> Document:
    """A note of patient p-1 with its gold PHI: each (label, mention) at every occurrence in ``text`` (a location
    a city, one of HIPAA's geographic subdivisions)."""
    annotations = []
    for label, mention in phi:
        start = text.find(mention)
        while start >= 0:
            city = {"locationType": "city"} if label == "location" else {}
            span = Span(start, start + len(mention))
            annotations.append(Annotation(identifier, span, label, mention, attributes=city))
            start = text.find(mention, start + 1)
    annotations.sort(key=lambda a: a.start)
    return Document(identifier, text, annotations, metadata={"patientId": "p-1"})


def serve_deidentifier(cli, monkeypatch, url: str):
    """``nlpbench serve --annotator deidentifier --llm URL --model test-model``, as a client of its app."""
    return serve_llm(cli, monkeypatch, url, "--annotator", "deidentifier", "--no-llm-cache")


def test_serve_deidentifier_on_a_model_names_it_and_its_prompt(cli, monkeypatch, endpoint):
    _, url = endpoint
    client = serve_deidentifier(cli, monkeypatch, url)
    tool = client.get("/api/v1/tool").json()
    template = prompts.load("phi-entities-v1")
    assert tool["type"] == "nlpsandbox:phi-deidentifier" and tool["name"] == "llm-test-model-deidentifier"
    assert tool["version"] == f"1.0.0+{template.sha256[:12]}"
    assert "model test-model" in tool["description"] and template.sha256 in tool["description"]
    (dependency,) = client.get("/api/v1/tool/dependencies").json()["tools"]
    assert (dependency["name"], dependency["type"]) == ("llm-test-model", "nlpsandbox:phi-annotator")
    assert client.post("/api/v1/textDateAnnotations", json=note_body()).status_code == 404


def test_the_model_deidentifies_notes_that_score_deid_scores(cli, monkeypatch, endpoint, tmp_path):
    app, url = endpoint
    gold = [
        gold_note("note-0", NOTE, [("date", "12/26/2020"), ("date", "12/27/2020"), ("person_name", "Chloe Price"),
                                   ("person_name", "Prescott"), ("location", "Seattle")]),
        gold_note("note-1", SECOND, [("date", "1/2/2021"), ("person_name", "Prescott"),
                                     ("person_name", "Rachel Amber")]),
    ]  # fmt: skip
    bundles = tmp_path / "notes.json"
    formats.get("sandbox-bundles").write(gold, bundles)
    client = serve_deidentifier(cli, monkeypatch, url)
    answers = []
    for document in gold:
        body = {**note_body(document.text, document.id), "deidentificationSteps": STEPS}
        response = client.post("/api/v1/deidentifiedNotes", json=body)
        assert response.status_code == 200, response.text
        answers.append(response.json())
    assert len(app.state.calls) == 2  # one model call per note
    first = answers[0]["deidentifiedNote"]["text"]
    assert first == (
        "On 01/25/2021, Ms. *********** met with Dr. ******** in Seattle. ******** called back on 01/26/2021."
    )
    original = answers[0]["originalAnnotations"]
    assert [a["text"] for a in original["textPersonNameAnnotations"]] == ["Chloe Price", "Prescott", "Prescott"]
    assert answers[0]["deidentifiedAnnotations"]["textDateAnnotations"][0]["text"] == "01/25/2021"
    pred = tmp_path / "deidentified.json"
    pred.write_text(json.dumps(answers))
    config = tmp_path / "steps.json"
    config.write_text(json.dumps({"deidentificationSteps": STEPS}))
    scored = cli("score", "deid", "--gold", bundles, "--gold-format", "sandbox-bundles", "--pred", pred,
                 "--config", config, "--format", "json")  # fmt: skip
    assert scored.exit_code == 0, scored.stderr
    rows = {(r["metric"], r.get("label")): r for r in json.loads(scored.stdout)["scores"] if "average" not in r}
    assert rows[("residual", "location")]["part"] == 1  # the test model lists no locations: Seattle is left
    assert rows[("residual", "person_name")]["part"] == 0 and rows[("residual", "date")]["part"] == 0
    assert rows[("date_shift", None)]["rate"] == 1  # every date of the patient moved by the same 30 days
    assert rows[("over_redaction", None)]["part"] == 0
    fmt = rows[("format", None)]  # "Seattle. Prescott" is one replaced stretch, which should be all masked
    assert (fmt["part"], fmt["whole"]) == (7, 8)
    hipaa = rows[("hipaa_token", None)]
    assert hipaa["fn"] == 1 and hipaa["tp"] == 16 and hipaa["recall"] == pytest.approx(16 / 17)


def test_an_unparseable_answer_is_a_502_naming_the_model_and_its_size(cli, monkeypatch, endpoint):
    app, url = endpoint
    app.state.malformed = True
    client = serve_deidentifier(cli, monkeypatch, url)
    response = client.post("/api/v1/deidentifiedNotes", json={**note_body(), "deidentificationSteps": STEPS})
    content = json.dumps({"entities": regex_entities(NOTE)})
    assert response.status_code == 502 and response.headers["content-type"] == "application/problem+json"
    assert response.json()["detail"] == f"model test-model: its answer ({len(content) // 2} bytes) is not JSON"
    assert "Chloe" not in response.text and "12/26/2020" not in response.text


def test_deidentifier_is_the_only_annotator_served_on_a_model(cli):
    result = cli("serve", "--annotator", "phi", "--llm", "http://127.0.0.1:9/v1", "--model", "m", "--port", "0")
    assert result.exit_code == 2 and len(result.stderr.splitlines()) == 1
    assert "both only for --annotator deidentifier on a model" in result.stderr
    other = cli("serve", "-a", "deidentifier", "--phi-annotator", "date", "--llm", "http://127.0.0.1:9/v1",
                "--model", "m", "--port", "0")  # fmt: skip
    assert other.exit_code == 2 and "--phi-annotator with --llm" in other.stderr


def test_its_answer_carries_the_notes_account_grounding_of_the_types_asked_tokens_once(cli, monkeypatch, endpoint):
    app, url = endpoint
    annotator = serve_llm(cli, monkeypatch, url, "--no-llm-cache")
    per_type = {
        label: Account.parse(annotator.post(f"/api/v1/{array}", json=note_body()).headers[HEADER])
        for label, array in (("date", "textDateAnnotations"), ("person_name", "textPersonNameAnnotations"))
    }
    assert per_type["date"].exact == 2 and per_type["person_name"].exact == 2  # the model's mentions of NOTE
    client = serve_deidentifier(cli, monkeypatch, url)
    both = client.post("/api/v1/deidentifiedNotes", json={**note_body(), "deidentificationSteps": STEPS})
    account = Account.parse(both.headers[HEADER])
    call = app.state.calls[-1]
    content = json.dumps({"entities": regex_entities(NOTE)})
    assert (account.tokens_in, account.tokens_out) == (sum(len(m["content"]) for m in call["messages"]) // 4,
                                                       len(content) // 4)  # fmt: skip
    assert (account.tokens_in, account.tokens_out) == (per_type["date"].tokens_in, per_type["date"].tokens_out)
    assert account.exact == per_type["date"].exact + per_type["person_name"].exact and account.unplaced == 0
    dates_only = [{"annotationTypes": ["text_date"], "annotationTypeMaskConfig": {}}]
    dated = client.post("/api/v1/deidentifiedNotes", json={**note_body(), "deidentificationSteps": dates_only})
    assert Account.parse(dated.headers[HEADER]).exact == per_type["date"].exact
