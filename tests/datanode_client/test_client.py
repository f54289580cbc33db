"""The data-node client on what a real data node rarely does: failures, odd paging, oversized or non-JSON answers.

These use httpx's MockTransport because nlpbench's own data node never answers
503, HTML or an endless ``links.next``; everything else is tested against the
real ``nlpbench datanode serve`` (test_end_to_end.py).
"""

from __future__ import annotations

import httpx
import pytest

from nlpbench.errors import InputError
from nlpbench.formats import datanode
from nlpbench.formats.datanode import DataNodeClient, DataNodeError, StoreURL

API = "http://node.test/api/v1"
SECRET = "Ms. Chloe Price met with Dr. Prescott"
NOTES_URL = StoreURL.parse(f"{API}/datasets/demo-set/fhirStores/evaluation")


def note(i: int) -> dict:
    return {"identifier": f"note-{i:03d}", "text": f"{SECRET} ({i})", "type": "loinc:LP29684-5", "patientId": "p-001"}


def client(handler, **kwargs) -> DataNodeClient:
    return DataNodeClient(API, transport=httpx.MockTransport(handler), backoff=0, **kwargs)


def test_store_urls_are_parsed_and_refused_in_one_line():
    url = StoreURL.parse("datanode:http://h:8080/api/v1/datasets/d-1/annotationStores/submission-7/")
    assert (url.api, url.dataset, url.kind, url.store) == (
        "http://h:8080/api/v1",
        "d-1",
        "annotationStores",
        "submission-7",
    )
    assert url.sibling("fhirStores", "evaluation").url == "http://h:8080/api/v1/datasets/d-1/fhirStores/evaluation"
    behind_a_proxy = StoreURL.parse("https://h/nlp/api/v1/datasets/abc/fhirStores/evaluation")
    assert behind_a_proxy.api == "https://h/nlp/api/v1"
    with pytest.raises(DataNodeError, match="not a data-node store URL"):
        StoreURL.parse("http://h/api/v1/datasets/abc")
    with pytest.raises(DataNodeError, match="names an annotationStore; notes"):
        StoreURL.parse("http://h/api/v1/datasets/abc/annotationStores/goldstandard", "fhirStores")
    with pytest.raises(DataNodeError, match="'Bad_Id' is not a data-node id"):
        StoreURL.parse("http://h/api/v1/datasets/Bad_Id/fhirStores/evaluation")
    assert datanode.is_data_node("https://x") and not datanode.is_data_node("notes.json")


def test_pages_end_when_the_total_is_reached_even_if_next_is_always_set():
    """The original data node set ``links.next`` on the last page too; the client stops on totalResults."""
    notes = [note(i) for i in range(23)]
    asked = []

    def handler(request: httpx.Request) -> httpx.Response:
        offset, limit = int(request.url.params["offset"]), int(request.url.params["limit"])
        asked.append((offset, limit))
        page = notes[offset : offset + limit]
        links = {"next": f"{API}/next"}
        return httpx.Response(200, json={"offset": offset, "limit": limit, "links": links, "totalResults": 23,
                                         "notes": page})  # fmt: skip

    with client(handler) as node:
        found = list(node.pages(NOTES_URL.path + "/fhir/Note", "notes", limit=10))
    assert [item["identifier"] for _, item in found] == [n["identifier"] for n in notes]
    assert asked == [(0, 10), (10, 10), (20, 10)]


def test_pages_follow_next_and_stop_on_an_empty_page():
    pages = {0: ([note(0), note(1)], "more"), 2: ([], "more")}

    def handler(request):
        items, following = pages[int(request.url.params["offset"])]
        return httpx.Response(200, json={"links": {"next": following}, "totalResults": 99, "notes": items})

    with client(handler) as node:
        assert [index for index, _ in node.pages("/x", "notes")] == [0, 1]


def test_transient_failures_are_retried_then_reported_with_status_and_size():
    answers = iter([httpx.Response(503, text=SECRET), httpx.Response(200, json={"ok": 1})])
    with client(lambda request: next(answers)) as node:
        assert node.get("/healthCheck") == {"ok": 1}
        assert node.requests == 2
    with client(lambda request: httpx.Response(502, text=SECRET), retries=2) as node, pytest.raises(DataNodeError) as e:
        node.get("/datasets/demo-set/fhirStores/evaluation/fhir/Note", offset=0, limit=100)
    message = str(e.value)
    assert message == (
        f"{API}/datasets/demo-set/fhirStores/evaluation/fhir/Note?offset=0&limit=100: "
        f"GET: HTTP 502 Bad Gateway ({len(SECRET)} bytes) (3 attempts)"
    )


def test_other_errors_are_not_retried_and_never_quote_the_body():
    calls = []

    def handler(request):
        calls.append(request)
        return httpx.Response(404, json={"title": "Not Found", "detail": SECRET})

    with client(handler) as node, pytest.raises(DataNodeError) as e:
        node.get("/datasets/nope")
    assert len(calls) == 1
    assert "HTTP 404 Not Found" in str(e.value) and SECRET not in str(e.value) and "\n" not in str(e.value)


def test_a_timeout_and_a_refused_connection_are_one_line():
    def slow(request):
        raise httpx.ReadTimeout("timed out", request=request)

    with client(slow, retries=1, timeout=0.5) as node, pytest.raises(DataNodeError, match=r"no answer within 0\.5 s"):
        node.get("/healthCheck")
    with DataNodeClient("http://127.0.0.1:9/api/v1", retries=0) as node, pytest.raises(DataNodeError) as e:
        node.get("/healthCheck")
    assert (
        str(e.value)
        == "http://127.0.0.1:9/api/v1/healthCheck: GET: cannot reach the data node (ConnectError) (1 attempt)"
    )


def test_non_json_and_oversized_answers_are_refused_without_quoting_them(monkeypatch):
    html = f"<html><body>{SECRET}</body></html>"
    answer = httpx.Response(200, text=html, headers={"content-type": "text/html"})
    with client(lambda r: answer) as node, pytest.raises(DataNodeError) as e:
        node.get("/healthCheck")
    assert str(e.value).endswith(f"GET: HTTP 200: the response is not JSON ({len(html)} bytes, text/html)")
    monkeypatch.setattr(datanode, "MAX_RESPONSE_BYTES", 100)
    big = httpx.Response(200, json={"notes": [note(0)] * 10})
    with client(lambda r: big) as node, pytest.raises(DataNodeError, match="larger than 100 bytes") as e:
        node.get("/healthCheck")
    assert SECRET not in str(e.value)


@pytest.mark.parametrize(
    ("page", "problem"),
    [
        ({"notes": "x"}, "not a page of notes: no 'notes' list"),
        ({"notes": [], "totalResults": "7"}, "totalResults is not a count"),
        ({"notes": [{**note(1), "text": None}], "links": {}}, "notes[0]: the note has no text string"),
        ({"notes": [7], "links": {}}, "notes[0]: a note must be an object"),
    ],
)
def test_pages_outside_the_schema_are_named(page, problem):
    with client(lambda r: httpx.Response(200, json=page)) as node, pytest.raises(DataNodeError) as e:
        list(datanode.read_notes(NOTES_URL, node))
    assert problem in str(e.value) and SECRET not in str(e.value)


def test_a_record_outside_the_schema_names_the_store_and_record_only():
    records = [{"name": "n", "annotationSource": {"resourceSource": {"name": "x/fhir/Note/note-001"}},
                "textDateAnnotations": [{"start": -1, "length": 3, "text": SECRET, "confidence": 9}]}]  # fmt: skip

    def handler(request):
        if request.url.path.endswith("/annotations"):
            return httpx.Response(200, json={"annotations": records, "links": {}, "totalResults": 1})
        return httpx.Response(200, json={"name": "datasets/demo-set/annotationStores/goldstandard"})

    url = NOTES_URL.sibling("annotationStores", "goldstandard")
    with client(handler) as node, pytest.raises(InputError) as e:
        list(datanode.read_annotations(url, node))
    assert str(e.value) == f"{url}: record 0, textDateAnnotations[0]: negative offset: start -1, length 3"


def test_the_api_key_comes_from_the_environment_only(monkeypatch):
    seen = []

    def handler(request):
        seen.append(request.headers.get("x-api-key"))
        return httpx.Response(200, json={})

    monkeypatch.delenv(datanode.KEY_VARIABLE, raising=False)
    with client(handler) as node:
        node.get("/healthCheck")
    monkeypatch.setenv(datanode.KEY_VARIABLE, "nbk-secret")
    with client(handler) as node:
        node.get("/healthCheck")
    assert seen == [None, "nbk-secret"]


def test_an_answer_that_repeats_a_key_is_refused_naming_the_key_and_where():
    page = '{"annotations": [{"name": "a", "textDateAnnotations": [{"start": 0, "start": 5}]}], "links": {}}'
    answer = httpx.Response(200, content=page.encode(), headers={"content-type": "application/json"})
    with client(lambda r: answer) as node, pytest.raises(DataNodeError) as e:
        node.get("/datasets/d/annotationStores/s/annotations")
    assert str(e.value).endswith(
        "/datasets/d/annotationStores/s/annotations: annotations[0].textDateAnnotations[0]: "
        "GET: an object repeats the key 'start'"
    )


def test_an_answer_nested_too_deep_is_one_line():
    deep = b"[" * 10_000 + b"]" * 10_000  # deeper than msgspec's recursion goes
    answer = httpx.Response(200, content=deep, headers={"content-type": "application/json"})
    with client(lambda r: answer) as node, pytest.raises(DataNodeError) as e:
        node.get("/healthCheck")
    assert str(e.value).endswith("GET: JSON nested deeper than 128 levels")
