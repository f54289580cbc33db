"""The tool API through HTTP, every response checked against the official 1.2.0 schemas."""

from __future__ import annotations

import httpx
import pytest

from nlpbench.api.tool import create_app, create_deidentifier_app, tool_type
from tests.api.official import spec
from tests.toolkit import NOTE, AsgiClient, DatesOnly, RegexPhi, served

ARRAYS = {
    "date": "textDateAnnotations",
    "person_name": "textPersonNameAnnotations",
    "location": "textLocationAnnotations",
    "id": "textIdAnnotations",
    "contact": "textContactAnnotations",
}
RICH_NOTE = {
    **NOTE,
    "text": "On 12/26/2020, Ms. Chloe Price (SSN 123-45-6789, chloe@example.org, (206) 555-0101) "
    "met with Dr. Prescott in Seattle at Mercy Hospital.",
}


@pytest.fixture(scope="module")
def phi():
    return AsgiClient(create_app(RegexPhi()))


@pytest.fixture(scope="module")
def official(vectors):
    return {name: spec(vectors, name) for name in ("phi-annotator", "date-annotator", "phi-deidentifier")}


@pytest.mark.parametrize("path", ["/tool", "/tool/dependencies", "/healthCheck"])
def test_common_endpoints_follow_the_schema(phi, official, path):
    response = phi.get(f"/api/v1{path}")
    assert response.status_code == 200
    official["phi-annotator"].validate_response("get", path, 200, response.json())


def test_tool_describes_itself(phi):
    assert phi.get("/api/v1/tool").json() == {
        "name": "regex-phi",
        "version": "1.0.0",
        "license": "mit",
        "repository": "github:nlpbench/nlpbench",
        "description": "A PHI annotator for tests: a handful of regular expressions.",
        "author": "The nlpbench team",
        "authorEmail": "team@nlpbench.invalid",
        "url": "https://github.com/nlpbench/nlpbench",
        "type": "nlpsandbox:phi-annotator",
        "apiVersion": "1.2.0",
    }
    assert phi.get("/api/v1/tool/dependencies").json() == {"tools": []}
    assert phi.get("/api/v1/healthCheck").json() == {"status": "pass"}


@pytest.mark.parametrize("label", list(ARRAYS))
def test_phi_annotator_serves_all_five_types(phi, official, label):
    array = ARRAYS[label]
    official["phi-annotator"].validate_request("post", f"/{array}", {"note": RICH_NOTE})
    response = phi.post(f"/api/v1/{array}", json={"note": RICH_NOTE})
    assert response.status_code == 200
    body = response.json()
    official["phi-annotator"].validate_response("post", f"/{array}", 200, body)
    assert list(body) == [array]
    assert body[array], f"no {label} found"
    for annotation in body[array]:
        assert RICH_NOTE["text"][annotation["start"] : annotation["start"] + annotation["length"]] == annotation["text"]


def test_annotations_carry_their_subtypes_and_confidence(phi):
    contacts = phi.post("/api/v1/textContactAnnotations", json={"note": RICH_NOTE}).json()["textContactAnnotations"]
    text = RICH_NOTE["text"]
    assert contacts == [
        {
            "start": text.index("chloe@"),
            "length": 17,
            "text": "chloe@example.org",
            "confidence": 99.0,
            "contactType": "email",
        },
        {
            "start": text.index("(206)"),
            "length": 14,
            "text": "(206) 555-0101",
            "confidence": 60.0,
            "contactType": "phone",
        },
    ]
    dates = phi.post("/api/v1/textDateAnnotations", json={"note": RICH_NOTE}).json()["textDateAnnotations"]
    assert dates == [{"start": 3, "length": 10, "text": "12/26/2020", "confidence": 90.0, "dateFormat": "MM/DD/YYYY"}]


def test_a_single_type_annotator_is_that_type_of_tool(official):
    client = AsgiClient(create_app(DatesOnly()))
    assert client.get("/api/v1/tool").json()["type"] == "nlpsandbox:date-annotator"
    response = client.post("/api/v1/textDateAnnotations", json={"note": NOTE})
    official["date-annotator"].validate_response("post", "/textDateAnnotations", 200, response.json())
    assert client.post("/api/v1/textPersonNameAnnotations", json={"note": NOTE}).status_code == 404


def test_tool_type_of_each_single_type():
    class One(RegexPhi):
        pass

    for label in ARRAYS:
        One.types = (label,)
        assert tool_type(One()) == f"nlpsandbox:{label.replace('_', '-')}-annotator"


BAD_BODIES = {
    "no note": {},
    "note not an object": {"note": "On 12/26/2020"},
    "missing text": {"note": {k: v for k, v in NOTE.items() if k != "text"}},
    "text not a string": {"note": {**NOTE, "text": 12}},
    "identifier not kebab case": {"note": {**NOTE, "identifier": "Note_1"}},
    "identifier too short": {"note": {**NOTE, "identifier": "ab"}},
    "patient id too long": {"note": {**NOTE, "patientId": "p" * 61}},
    "a list": [NOTE],
}


@pytest.mark.parametrize("case", list(BAD_BODIES))
def test_bad_bodies_get_400_problems(phi, official, case):
    response = phi.post("/api/v1/textDateAnnotations", json=BAD_BODIES[case])
    assert response.status_code == 400
    assert response.headers["content-type"] == "application/problem+json"
    problem = response.json()
    official["phi-annotator"].validate_response("post", "/textDateAnnotations", 400, problem)
    assert problem["status"] == 400 and problem["title"] == "Bad Request"
    assert problem["detail"].removeprefix("`").startswith("body")  # the place first, in backticks when a rule is named


def test_malformed_json_gets_a_400_problem(phi):
    response = phi.post(
        "/api/v1/textDateAnnotations", content=b'{"note": {', headers={"content-type": "application/json"}
    )
    assert response.status_code == 400
    assert "JSON" in response.json()["detail"]


def test_unknown_note_properties_are_accepted(phi):
    note = {**NOTE, "note_type": "discharge summary", "extra": {"nested": [1, 2]}}
    response = phi.post("/api/v1/textPersonNameAnnotations", json={"note": note, "also": True})
    assert response.status_code == 200
    assert [a["text"] for a in response.json()["textPersonNameAnnotations"]] == ["Chloe Price", "Prescott"]


def test_unknown_path_and_method_are_problems(phi):
    missing = phi.get("/api/v1/textNothing")
    assert missing.status_code == 404 and missing.json()["status"] == 404
    wrong_method = phi.get("/api/v1/textDateAnnotations")
    assert wrong_method.status_code == 405 and wrong_method.json()["title"] == "Method Not Allowed"


def test_an_annotator_that_fails_gives_a_500_problem(official):
    class Broken(RegexPhi):
        def annotate(self, note):
            raise RuntimeError("the lexicon is missing")

    response = AsgiClient(create_app(Broken())).post("/api/v1/textDateAnnotations", json={"note": NOTE})
    assert response.status_code == 500
    official["phi-annotator"].validate_response("post", "/textDateAnnotations", 500, response.json())
    assert response.json()["detail"] == "RuntimeError (see the server log)"  # the message might quote the note


def test_redirects(phi):
    root = phi.get("/", follow_redirects=False)
    assert root.status_code == 302 and root.headers["location"] == "/api/v1/tool"
    ui = phi.get("/ui", follow_redirects=False)
    assert ui.status_code == 302 and ui.headers["location"] == "/api/v1/ui"
    docs = phi.get("/api/v1/ui")
    assert docs.status_code == 200 and "swagger" in docs.text.lower()


def test_the_docs_page_loads_its_assets_from_the_tool_itself(phi):
    import re

    page = phi.get("/api/v1/ui").text
    urls = re.findall(r"""(?:src|href)=["']([^"']+)["']|url: ?'([^']+)'""", page)
    urls = [src or spec for src, spec in urls]
    assert len(urls) == 4  # the stylesheet, the icon, the script and the OpenAPI document
    assert all(url.startswith("/api/v1/") for url in urls), urls
    assert "://" not in page  # no other host anywhere, inline script included
    for url in urls:
        response = phi.get(url)
        assert response.status_code == 200 and response.content, url
    assert phi.get("/api/v1/ui/assets/swagger-ui-bundle.js").headers["content-type"].startswith("text/javascript")


def test_identical_input_identical_output(phi):
    first = phi.post("/api/v1/textLocationAnnotations", json={"note": RICH_NOTE})
    again = phi.post("/api/v1/textLocationAnnotations", json={"note": RICH_NOTE})
    assert first.content == again.content
    fresh = AsgiClient(create_app(RegexPhi())).post("/api/v1/textLocationAnnotations", json={"note": RICH_NOTE})
    assert fresh.content == first.content


def test_the_annotator_runs_once_for_the_five_endpoints_of_a_note():
    class Counting(RegexPhi):
        calls = 0

        def annotate(self, note):
            Counting.calls += 1
            return super().annotate(note)

    client = AsgiClient(create_app(Counting()))
    for array in ARRAYS.values():
        client.post(f"/api/v1/{array}", json={"note": RICH_NOTE})
    assert Counting.calls == 1
    client.post("/api/v1/textIdAnnotations", json={"note": NOTE})
    assert Counting.calls == 2


def test_deidentifier_common_endpoints(official):
    client = AsgiClient(create_deidentifier_app(RegexPhi()))
    tool = client.get("/api/v1/tool").json()
    official["phi-deidentifier"].validate_response("get", "/tool", 200, tool)
    assert (tool["name"], tool["type"]) == ("regex-phi-deidentifier", "nlpsandbox:phi-deidentifier")
    dependencies = client.get("/api/v1/tool/dependencies").json()
    official["phi-deidentifier"].validate_response("get", "/tool/dependencies", 200, dependencies)
    assert [t["name"] for t in dependencies["tools"]] == ["regex-phi"]
    assert dependencies["tools"][0]["type"] == "nlpsandbox:phi-annotator"


def test_a_real_server_on_localhost(official):
    with served(create_app(RegexPhi())) as url, httpx.Client(base_url=url) as client:
        assert client.get("/api/v1/healthCheck").json() == {"status": "pass"}
        assert client.get("/", follow_redirects=True).json()["name"] == "regex-phi"
        response = client.post("/api/v1/textIdAnnotations", json={"note": RICH_NOTE})
        official["phi-annotator"].validate_response("post", "/textIdAnnotations", 200, response.json())
        assert response.json()["textIdAnnotations"][0]["idType"] == "ssn"
        bad = client.post("/api/v1/textIdAnnotations", json={"note": {}})
        assert bad.status_code == 400 and bad.headers["content-type"] == "application/problem+json"


def test_requests_for_one_note_arriving_together_share_one_pass():
    import asyncio
    import threading
    import time

    class Slow(RegexPhi):
        calls = 0
        lock = threading.Lock()

        def annotate(self, note):
            with Slow.lock:
                Slow.calls += 1
            time.sleep(0.05)
            return super().annotate(note)

    app = create_app(Slow())

    async def five_at_once():
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://tool") as client:
            posts = [client.post(f"/api/v1/{array}", json={"note": RICH_NOTE}) for array in ARRAYS.values()]
            return await asyncio.gather(*posts)

    responses = asyncio.run(five_at_once())
    assert [r.status_code for r in responses] == [200] * 5
    assert Slow.calls == 1
