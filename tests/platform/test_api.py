"""The platform API over HTTP, on both backends: keys and what each sees, problems, the whole path to a result."""

from __future__ import annotations

import httpx
import pytest
from fastapi.testclient import TestClient

from nlpbench.api.platform import create_app
from nlpbench.platform import queue as queues
from nlpbench.platform.keys import create_key
from nlpbench.platform.worker import Worker
from nlpbench.store import open_store

PROBLEM = "application/problem+json"


@pytest.fixture
def api(dataset, db_url, tool):
    """The API over the 8-note private dataset, its queue ``default`` opened by the organisers, who allow-list
    the test tool's host for team URLs; keys of teams a and b and of an organiser."""
    opened = open_store(db_url)
    tool_host = httpx.URL(tool.url)
    queues.configure_queue(opened, "default", tool_hosts=[f"{tool_host.host}:{tool_host.port}"])
    with opened.session() as session:
        keys = {
            "a": create_key(session, team="team-a"),
            "b": create_key(session, team="team-b"),
            "organiser": create_key(session, team=None),
        }
    with TestClient(create_app(opened)) as client:
        client.keys = keys
        client.store = opened
        yield client
    opened.close()


def call(api, method: str, path: str, who: str | None, **kwargs):
    headers = {"X-API-Key": api.keys[who]} if who else {}
    return api.request(method, f"/api/v1{path}", headers=headers, **kwargs)


def problem(response, status: int, detail: str) -> None:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith(PROBLEM)
    assert detail in response.json()["detail"], response.json()


def test_keys_decide_who_submits_and_sees_what(api, tool):
    body = {"task": "date", "dataset": "notes", "toolUrl": tool.url}
    problem(call(api, "POST", "/submissions", None, json=body), 401, "an API key is required")
    problem(api.get("/api/v1/submissions", headers={"X-API-Key": "nbp_x_y"}), 401, "unknown API key")
    made = call(api, "POST", "/submissions", "a", json=body)
    assert made.status_code == 201 and made.json()["team"] == "team-a" and made.json()["status"] == "RECEIVED"
    mine = made.json()["id"]
    problem(call(api, "POST", "/submissions", "a", json={**body, "team": "team-b"}), 403, "its own team only")
    problem(call(api, "POST", "/submissions", "organiser", json=body), 400, "names its team")
    theirs = call(api, "POST", "/submissions", "organiser", json={**body, "team": "team-b"}).json()["id"]
    assert [s["id"] for s in call(api, "GET", "/submissions", "a").json()["submissions"]] == [mine]
    assert [s["id"] for s in call(api, "GET", "/submissions", "organiser").json()["submissions"]] == [theirs, mine]
    problem(call(api, "GET", f"/submissions/{theirs}", "a"), 404, f"no submission {theirs}")
    assert call(api, "GET", f"/submissions/{mine}", "a").json()["events"][0]["status"] == "RECEIVED"
    problem(call(api, "GET", f"/submissions/{mine}/logs", "a"), 403, "logs are for organisers")
    logs = call(api, "GET", f"/submissions/{mine}/logs", "organiser")
    assert logs.status_code == 200 and logs.json()["events"][0]["reason"] == "tool submission received"
    problem(call(api, "POST", f"/submissions/{theirs}/cancel", "a"), 404, f"no submission {theirs}")
    assert call(api, "POST", f"/submissions/{mine}/cancel", "a").json()["reason"] == "cancelled by team team-a"
    problem(call(api, "POST", f"/submissions/{mine}/cancel", "a"), 409, "can no longer be cancelled")


def test_bad_requests_are_problems_never_500(api, tool):
    cases = [
        ({"task": "date", "dataset": "notes"}, 400, "give exactly one of"),
        ({"task": "date", "dataset": "notes", "toolUrl": tool.url, "extra": 1}, 400, "extra"),
        ({"task": "nope", "dataset": "notes", "toolUrl": tool.url}, 400, "unknown task 'nope'"),
        ({"task": "date", "dataset": "absent", "toolUrl": tool.url}, 400, "no dataset 'absent'"),
        ({"task": "date", "dataset": "notes", "image": "x@sha256:00"}, 400, "not an uploaded image"),
    ]
    for body, status, detail in cases:
        problem(call(api, "POST", "/submissions", "a", json=body), status, detail)
    problem(call(api, "GET", "/submissions?status=DONE", "a"), 400, "status")
    problem(call(api, "GET", "/submissions/abc", "a"), 400, "submission_id")
    problem(call(api, "GET", "/submissions/99999", "organiser"), 404, "no submission 99999")
    queues.configure_queue(api.store, "default", quota=1)
    assert (
        call(api, "POST", "/submissions", "a", json={"task": "id", "dataset": "notes", "toolUrl": tool.url}).status_code
        == 201
    )
    problem(
        call(api, "POST", "/submissions", "a", json={"task": "id", "dataset": "notes", "toolUrl": tool.url}),
        429,
        "has used its 1 submissions of id",
    )


def test_a_submission_made_over_http_is_scored_and_its_per_document_counts_served(api, tool):
    made = call(api, "POST", "/submissions", "a", json={"task": "date", "dataset": "notes", "toolUrl": tool.url})
    Worker(api.store, poll=0.05, lease=10).run(until_idle=True)
    data = call(api, "GET", f"/submissions/{made.json()['id']}", "a").json()
    assert data["status"] == "SCORED", data["reason"]
    problem(call(api, "GET", f"/submissions/{data['id']}/documents", "a"), 403, "aggregate scores only")
    rows = call(api, "GET", f"/submissions/{data['id']}/documents?profile=standard", "organiser").json()["perDocument"]
    assert len(rows) == data["results"][0]["perDocumentRows"] > 0
    assert {"type", "document", "metric", "tp", "fp", "fn"} <= set(rows[0])
    assert call(api, "GET", "/healthCheck", None).json() == {"status": "pass"}
