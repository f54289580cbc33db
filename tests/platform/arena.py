"""The arena of the security tests: a platform a team attacks with its team key only.

Two datasets of 8 synthetic notes each (and their 3-note ``-subset``): ``notes``, private, and ``open``,
public. The organisers opened queue ``default`` (fast limits and no quota, so that a test may submit many
times; the quota is tested on a queue of its own) and made three keys: ``team`` (team-a), ``other``
(team-b) and ``organiser``. Requests go through the platform API's app; workers run as ``nlpbench worker``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from fastapi.testclient import TestClient

from nlpbench.api.platform import create_app
from nlpbench.platform.keys import create_key
from nlpbench.store import Store, repository

PROBLEM = "application/problem+json"
# a tool in this process answers in milliseconds, but two suites at once on two cores can hold it for seconds
FAST = ("--timeout", "15", "--retries", "0", "--concurrency", "2", "--quota", "0")


@dataclass
class Arena:
    api: TestClient
    store: Store
    nb: Callable[..., Any]
    keys: dict[str, str]

    def call(self, method: str, path: str, who: str | None = "team", **kwargs) -> httpx.Response:
        headers = ({"X-API-Key": self.keys[who]} if who else {}) | kwargs.pop("headers", {})
        return self.api.request(method, f"/api/v1{path}", headers=headers, **kwargs)

    def submit(self, who: str = "team", **body: Any) -> httpx.Response:
        """``POST /submissions`` of task ``date`` on ``notes`` unless ``body`` says otherwise."""
        return self.call("POST", "/submissions", who, json={"task": "date", "dataset": "notes", **body})

    def submitted(self, who: str = "team", **body: Any) -> int:
        response = self.submit(who, **body)
        assert response.status_code == 201, response.text
        return response.json()["id"]

    def work(self, *extra: str):
        """``nlpbench worker --until-idle``: it must end on its own, with status 0, whatever it met."""
        result = self.nb("worker", "--until-idle", "--poll", "0.05", "--lease", "10", *extra)
        assert result.exit_code == 0, result.stderr
        return result

    def shown(self, submission: int, who: str = "team") -> dict:
        response = self.call("GET", f"/submissions/{submission}", who)
        assert response.status_code == 200, response.text
        return response.json()

    def logs(self, submission: int) -> dict:
        result = self.nb("submissions", "logs", str(submission), "--format", "json")
        assert result.exit_code == 0, result.stderr
        return json.loads(result.stdout)

    def queue(self, *args: str) -> str:
        result = self.nb("submissions", "queue", "default", *args)
        assert result.exit_code == 0, result.stderr
        return result.stdout

    def exported(self, dataset: str, folder: Path) -> list[dict]:
        """The dataset's gold as NLP Sandbox JSON records: the perfect prediction file."""
        path = folder / f"{dataset}.json"
        assert self.nb("dataset", "export", dataset, path, "--format", "sandbox").exit_code == 0
        return json.loads(path.read_text())

    def note_texts(self, dataset: str = "notes") -> list[str]:
        with self.store.session(readonly=True) as session:
            return [note.text for note in repository.iter_notes(session, dataset)]

    def note_ids(self, dataset: str = "notes") -> list[str]:
        with self.store.session(readonly=True) as session:
            return [note.identifier for note in repository.iter_notes(session, dataset)]


def problem(response: httpx.Response, status: int, detail: str | None = None) -> str:
    """The problem's ``detail``, after checking it is an RFC 7807 problem of ``status`` (containing ``detail``)."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith(PROBLEM), response.headers
    said = response.json()["detail"]
    assert detail is None or detail in said, said
    assert "\n" not in said
    return said


def host_of(url: str) -> str:
    """``127.0.0.1:PORT`` of a served URL: an allow-list entry."""
    parsed = httpx.URL(url)
    return f"{parsed.host}:{parsed.port}"


def open_arena(nb, store: Store) -> Arena:
    for name, seed, public in (("notes", "7", ()), ("open", "8", ("--public",))):
        made = nb("synth", "--notes", 8, "--seed", seed, "--into-store", name, "--subset", 3, *public)
        assert made.exit_code == 0, made.stderr
    assert nb("submissions", "queue", "default", *FAST).exit_code == 0
    with store.session() as session:
        keys = {
            "team": create_key(session, team="team-a"),
            "other": create_key(session, team="team-b"),
            "organiser": create_key(session, team=None),
        }
    return Arena(TestClient(create_app(store)), store, nb, keys)
