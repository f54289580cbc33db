"""A failure of the platform API nobody foresaw: a 500 naming the exception's type, a log line naming its place.

The platform API runs on a real uvicorn server at debug level, with every logger captured; after the keys are
checked its store fails with an exception whose message quotes a note (as a database error quotes its
parameters). Neither the answer, nor a log record, nor what the process prints may hold the note's text.
"""

from __future__ import annotations

import httpx

from nlpbench.api.platform import create_app
from tests.platform.conftest import arena, nb  # noqa: F401
from tests.store.backends import db_url  # noqa: F401
from tests.test_phi_canary_services import CANARIES, TEXT, records  # noqa: F401 - every logger, captured
from tests.toolkit import served


def test_a_500_of_the_platform_api_quotes_nothing_and_logs_type_and_place(arena, records, capfd, monkeypatch):  # noqa: F811
    opened = arena.store.session

    def failing(*args, readonly: bool = False, **kwargs):
        if readonly:  # what the routes read; the key check and writes go on
            raise ValueError(f"(psycopg.DataError) cannot read [parameters: ({TEXT!r},)]")
        return opened(*args, readonly=readonly, **kwargs)

    submission = arena.submitted(dataset="open", command="true")
    capfd.readouterr()
    monkeypatch.setattr(arena.store, "session", failing)
    headers = {"X-API-Key": arena.keys["organiser"]}
    with served(create_app(arena.store), log_level="debug") as url, httpx.Client(base_url=url, timeout=30) as client:
        answers = [
            client.get("/api/v1/submissions", headers=headers),
            client.get(f"/api/v1/submissions/{submission}", headers=headers),
            client.get(f"/api/v1/submissions/{submission}/logs", headers=headers),
        ]
    assert [a.status_code for a in answers] == [500, 500, 500], [a.text for a in answers]
    assert {a.json()["detail"] for a in answers} == {"ValueError (see the server log)"}
    assert all(a.headers["content-type"] == "application/problem+json" for a in answers)
    out, err = capfd.readouterr()
    logged = "\n".join(records.lines)
    assert f"GET /api/v1/submissions/{submission} failed: ValueError raised at" in logged
    for canary in CANARIES:
        for where in [logged, out, err, *(a.text for a in answers)]:
            assert canary not in where, (canary, where[:300])
    assert "Traceback" not in logged + out + err
