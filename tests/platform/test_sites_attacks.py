"""Attacks on the data sites' endpoints: other kinds of key, other sites' runs, and result bodies that are not
counts. Every refusal is a problem (never a 500) quoting nothing that was sent (:data:`CANARY`), nor logged."""

from __future__ import annotations

import json
import logging

import httpx
import pytest

from tests.platform.test_sites import COMMAND, COUNTS, centre, nlpbench, scored  # noqa: F401 (centre: a fixture)

CANARY = "CANARY-Smith-1962"


@pytest.fixture
def site_api(centre):  # noqa: F811 (the fixture)
    """The centre's store URL and its platform API's base URL (through test_sites' proxy)."""
    url, _, central, _ = centre
    return url, f"{central}/api/v1"


def quiet(response: httpx.Response, caplog) -> None:
    assert response.status_code < 500
    assert CANARY not in response.text and CANARY not in caplog.text


def test_no_key_but_a_site_key_reaches_a_site_endpoint(site_api, caplog):
    url, api = site_api
    nlpbench("site", "add", "alpha", "--dataset", "notes", "--db", url)
    with httpx.Client(base_url=api, timeout=60) as client:
        for key in (None, "nbp_000000000000_nope", "nbk_000000000000_nope", CANARY, "x" * 10_000):
            headers = {} if key is None else {"x-api-key": key}
            for path in ("/sites/lease", "/sites/runs/1/progress", "/sites/runs/1/result"):
                response = client.post(path, json={"done": 0, "total": 1}, headers=headers)
                assert response.status_code == 401, (path, response.text)
                quiet(response, caplog)


def test_a_result_that_is_not_counts_is_refused_quoting_nothing(site_api, caplog):
    caplog.set_level(logging.DEBUG)
    url, api = site_api
    alpha = nlpbench("site", "add", "alpha", "--dataset", "notes", "--db", url).stdout.strip()
    beta = nlpbench("site", "add", "beta", "--dataset", "notes", "--db", url).stdout.strip()
    submitted = nlpbench("submit", "--team", "team-a", "--task", "date", "--dataset", "notes",
                         "--command", COMMAND, "--db", url)  # fmt: skip
    assert submitted.returncode == 0, submitted.stderr
    with httpx.Client(base_url=api, headers={"x-api-key": alpha}, timeout=60) as client:  # a loaded machine
        waiting = 2  # beta's run, never leased
        run = client.post("/sites/lease").json()["run"]
        for other in (waiting, 2**31 - 1, 2**31, 0, -1, "Smith"):
            response = client.post(f"/sites/runs/{other}/result", json=scored())
            assert response.status_code in (404, 422, 400), response.text
            assert "Smith" not in response.text  # the client logs the URL it asked itself
        assert client.post(f"/sites/runs/{run}/progress", json={"done": 1, "total": 2},
                           headers={"x-api-key": beta}).status_code == 404  # fmt: skip
        row = {**COUNTS, "label": CANARY + " text"}
        wrong = [
            scored(status=CANARY[:12]),
            scored(status=True),
            scored(notes=-1),
            scored(contentHash=CANARY),
            scored(nlpbench=CANARY + " note"),
            scored(extra=CANARY),
            scored(tool={"name": CANARY + " text"}),
            scored(tool={CANARY: "x"}),
            scored(reports={}),
            scored(reports={**scored()["reports"], CANARY: {"scores": [dict(COUNTS)], "perDocument": []}}),  # a name
            scored(reports={"person_name": scored()["reports"]["date"]}),  # not the task's type
            scored(reports={CANARY + " text": {"scores": [], "perDocument": []}}),
            scored(reports={"date": {"scores": [row], "perDocument": []}}),
            scored(reports={"date": {"scores": [{**COUNTS, "metric": CANARY + " x"}], "perDocument": []}}),
            scored(reports={"date": {"scores": [{**COUNTS, "tp": -1}], "perDocument": []}}),
            scored(reports={"date": {"scores": [{**COUNTS, "tp": True}], "perDocument": []}}),
            scored(reports={"date": {"scores": [{**COUNTS, "tp": CANARY}], "perDocument": []}}),
            scored(reports={"date": {"scores": [{**COUNTS, "tp": {"a": [[[CANARY]]]}}], "perDocument": []}}),
            scored(reports={"date": {"scores": [{**COUNTS, CANARY + " x": 1}], "perDocument": []}}),
            scored(reports={"date": {"scores": [{**COUNTS, CANARY: "x"}], "perDocument": []}}),  # a name as a field
            scored(reports={"date": {"scores": [], "perDocument": [{**COUNTS, "document": CANARY}]}}),
            scored(
                reports={"date": {"scores": [{**COUNTS, **{f"f{i}": 1 for i in range(10_000)}}], "perDocument": []}}
            ),
            scored(reports={"date": {"scores": [], "perDocument": [], CANARY: []}}),
            scored(reports={"date": {"scores": CANARY, "perDocument": []}}),
            scored(reports=CANARY),
        ]
        for body in wrong:
            response = client.post(f"/sites/runs/{run}/result", json=body)
            assert response.status_code in (400, 422), (wrong.index(body), response.text)
            assert response.headers["content-type"].startswith("application/problem+json")
            quiet(response, caplog)
        for number in ("NaN", "Infinity", "-Infinity"):
            raw = json.dumps(scored()).replace('"tp": 1', f'"tp": {number}', 1)
            response = client.post(f"/sites/runs/{run}/result", content=raw,
                                   headers={"content-type": "application/json"})  # fmt: skip
            assert response.status_code in (400, 422), response.text
        huge = scored(reports={f"t{i}": {"scores": [dict(COUNTS)], "perDocument": []} for i in range(100_000)})
        response = client.post(f"/sites/runs/{run}/result", json=huge)
        assert response.status_code in (400, 413, 422), response.text[:200]
        ok = client.post(f"/sites/runs/{run}/result", json=scored())
        assert ok.status_code == 200, ok.text
        again = client.post(f"/sites/runs/{run}/result", json=scored())
        assert again.status_code == 409
        quiet(again, caplog)
