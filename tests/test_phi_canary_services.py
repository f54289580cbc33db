"""No failing path of the services quotes a note: canaries planted in note texts appear in no answer or log.

Every request below fails (400, 405, 413, 500) and carries notes whose text holds
canary strings; the tool API and the de-identifier run on a real uvicorn server
at debug log level. The canaries must not appear in any response (body or
headers), any log record (with its traceback, if any), or anything the process
writes to stdout or stderr.
"""

from __future__ import annotations

import json
import logging

import httpx
import pytest

from nlpbench.annotators import Annotator, ToolInfo
from nlpbench.api.tool import create_app, create_deidentifier_app
from nlpbench.model import Annotation, Document, Span
from tests.toolkit import RegexPhi, served

CANARIES = ("Zanzibar", "Quillfeather", "CANARY7Q3X", "12/31/9999")
TEXT = "Patient Zanzibar Quillfeather (MRN CANARY7Q3X) was seen on 12/31/9999 for follow-up."
LIMIT = 2000
JSON = {"content-type": "application/json"}


def note(text: str = TEXT, **fields) -> dict:
    return {"identifier": "n-1", "text": text, "type": "t", "patientId": "p-1", **fields}


class Echoing(RegexPhi):
    """Fails with the note in its exception's message, as careless annotators do."""

    info = ToolInfo("echoing-phi", "1.0.0", "Raises an error quoting the note.", "mit")

    def annotate(self, document: Document) -> list[Annotation]:
        raise ValueError(f"cannot parse {document.text!r}")


class PastTheEnd(RegexPhi):
    """Gives a span past the note's end."""

    info = ToolInfo("past-end-phi", "1.0.0", "A span past the end.", "mit")

    def annotate(self, document: Document) -> list[Annotation]:
        return [Annotation(document.id, Span(8, len(document.text) + 5), "person_name", None, {}, 90.0)]


class BadSubtype(RegexPhi):
    """Gives a location whose ``locationType`` is the note's text: the response fails its schema."""

    info = ToolInfo("bad-subtype-phi", "1.0.0", "A subtype outside the schema.", "mit")

    def annotate(self, document: Document) -> list[Annotation]:
        return [Annotation(document.id, Span(8, 29), "location", None, {"locationType": document.text}, 90.0)]


class Unsure(Annotator):
    info = ToolInfo("unsure-phi", "1.0.0", "No confidence.", "mit")
    types = ("date", "person_name", "location", "id", "contact")

    def annotate(self, document: Document) -> list[Annotation]:
        return [Annotation(document.id, Span(8, 29), "person_name", document.text[8:29])]


BAD_BODIES = [
    {"note": note(identifier="Not An Id")},
    {"note": note(type=5)},
    {"note": {"text": TEXT}},
    {"note": TEXT},
    {"note": note(text=[TEXT])},
    [TEXT],
    TEXT,
]
STEPS = [
    [{"dateOffsetConfig": {"offsetDays": 10**9}, "annotationTypes": ["text_date"]}],
    [{"dateOffsetConfig": {"offsetDays": -(10**9)}, "annotationTypes": ["text_date"]}],
    [{"redactConfig": {}, "maskingCharConfig": {}, "annotationTypes": ["text_date"]}],
    [{"dateOffsetConfig": {"offsetDays": 3}, "annotationTypes": ["text_person_name"]}],
    [{"maskingCharConfig": {"maskingChar": "Zanzibar"}, "annotationTypes": ["text_date"]}],
    [{"redactConfig": {}, "annotationTypes": [TEXT]}],
    [{"redactConfig": {}, "annotationTypes": ["text_date"], "confidenceThreshold": TEXT}],
    {"step": TEXT},
]


class Records(logging.Handler):
    """Every log record of every logger, formatted with its traceback."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


@pytest.fixture
def records():
    handler = Records()
    loggers = [logging.getLogger(name) for name in ("", "uvicorn", "uvicorn.error", "uvicorn.access", "nlpbench")]
    for logger in loggers:
        logger.addHandler(handler)
    yield handler
    for logger in loggers:
        logger.removeHandler(handler)


def failing_requests(client: httpx.Client, paths: list[str]) -> list[httpx.Response]:
    """Every kind of bad request to every path: invalid bodies, broken JSON, oversized bodies."""
    responses = []
    for path in paths:
        responses += [client.post(path, json=body) for body in BAD_BODIES]
        responses.append(client.post(path, content=json.dumps({"note": note()})[:-9], headers=JSON))
        responses.append(client.post(path, content=json.dumps({"note": note(TEXT * 40)}), headers=JSON))
        chunks = iter([json.dumps({"note": note(TEXT * 40)}).encode()[i : i + 500] for i in range(0, 4000, 500)])
        responses.append(client.post(path, content=chunks, headers=JSON))
        responses.append(client.post(path, content=TEXT, headers={"content-type": "text/plain"}))
        responses.append(client.put(path, json={"note": note()}))
    return responses


def test_no_failing_path_of_the_services_quotes_the_note(records, capfd):
    answers: list[httpx.Response] = []
    tool_paths = ["/api/v1/textDateAnnotations", "/api/v1/textPersonNameAnnotations", "/api/v1/tool"]
    with (
        served(create_app(RegexPhi(), max_body_bytes=LIMIT), log_level="debug") as url,
        httpx.Client(base_url=url) as client,
    ):
        answers += failing_requests(client, tool_paths)
    with (
        served(create_deidentifier_app(RegexPhi(), max_body_bytes=LIMIT), log_level="debug") as url,
        httpx.Client(base_url=url) as client,
    ):
        answers += failing_requests(client, ["/api/v1/deidentifiedNotes"])
        for steps in STEPS:
            answers.append(
                client.post("/api/v1/deidentifiedNotes", json={"note": note(), "deidentificationSteps": steps})
            )
    for broken, array in [
        (Echoing(), "textDateAnnotations"),
        (PastTheEnd(), "textDateAnnotations"),
        (BadSubtype(), "textLocationAnnotations"),
        (Unsure(), "textPersonNameAnnotations"),
    ]:
        with served(create_app(broken), log_level="debug") as url, httpx.Client(base_url=url) as client:
            answers.append(client.post(f"/api/v1/{array}", json={"note": note()}))
        with served(create_deidentifier_app(broken), log_level="debug") as url, httpx.Client(base_url=url) as client:
            steps = [{"redactConfig": {}, "annotationTypes": ["text_person_name", "text_location"]}]
            answers.append(
                client.post("/api/v1/deidentifiedNotes", json={"note": note(), "deidentificationSteps": steps})
            )

    statuses = sorted({a.status_code for a in answers})
    assert statuses == [400, 405, 413, 500], statuses  # every request failed, in each of these ways
    assert all(a.headers["content-type"] == "application/problem+json" for a in answers)
    assert sum(a.status_code == 500 for a in answers) == 8
    out, err = capfd.readouterr()
    seen = [a.text for a in answers] + [str(a.headers) for a in answers] + records.lines + [out, err]
    assert any("failed: ValueError raised at" in line for line in records.lines)  # the logs were captured
    for canary in CANARIES:
        leaks = [text[:200] for text in seen if canary in text]
        assert not leaks, f"{canary!r} leaked: {leaks}"


def test_what_the_problems_name_instead(records):
    with served(create_deidentifier_app(RegexPhi()), log_level="debug") as url, httpx.Client(base_url=url) as client:
        shifted = client.post("/api/v1/deidentifiedNotes", json={"note": note(), "deidentificationSteps": STEPS[0]})
        assert shifted.json()["detail"] == (
            "deidentificationSteps[0]: the date at 59-69: shifted by 1000000000 days, "
            "the date is outside the years 1–9999"
        )
        invalid = client.post("/api/v1/deidentifiedNotes", json={"note": note(identifier="Not An Id")})
        assert invalid.json()["detail"].startswith("`body.note.identifier` is not lower-case letters and digits joined")
    with served(create_app(PastTheEnd())) as url:
        past = httpx.post(f"{url}/api/v1/textDateAnnotations", json={"note": note()})
        assert past.status_code == 500 and past.json()["detail"] == (
            f"the annotator gave a person_name span 8-{len(TEXT) + 5} past the end of note n-1 ({len(TEXT)} characters)"
        )
    with served(create_app(Echoing())) as url:
        echoed = httpx.post(f"{url}/api/v1/textDateAnnotations", json={"note": note()})
        assert echoed.status_code == 500 and echoed.json()["detail"] == "ValueError (see the server log)"
    assert any("POST /api/v1/textDateAnnotations failed: ValueError raised at " in line for line in records.lines)
