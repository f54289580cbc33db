"""A failure of the data node nobody foresaw: a 500 naming the exception's type, a log line naming its place.

The data node runs on a real uvicorn server at debug level, with every logger
captured; its store is made to fail in the ways that quoted notes before: an
exception whose message quotes the note (as a database error quotes its
parameters), and an answer that fails its response model (Pydantic's error
quotes every value). Neither the answer, nor a log record, nor what the
process prints may hold the note's text.
"""

from __future__ import annotations

import httpx

from nlpbench.api.datanode import create_app
from nlpbench.store import repository as repo
from tests.store.backends import db_url, store  # noqa: F401 - the backends' fixtures (no conftest here)
from tests.test_phi_canary_services import CANARIES, TEXT, records  # noqa: F401 - every logger, captured
from tests.toolkit import served

NOTES = "/api/v1/datasets/d-one/fhirStores/evaluation/fhir/Note"


class Quoting:
    """A dataset row whose name is the note: its answer fails the response model, whose error quotes it."""

    name = TEXT
    version = description = license = visibility = TEXT

    class created_at:
        @staticmethod
        def isoformat() -> str:
            return TEXT


def test_a_500_of_the_data_node_quotes_nothing_and_logs_type_and_place(store, records, capfd, monkeypatch):  # noqa: F811
    def failing(*_args, **_kwargs):
        raise ValueError(f"(psycopg.DataError) cannot store [parameters: ({TEXT!r},)]")

    with store.session() as session:
        repo.create_dataset(session, "d-one")
        repo.create_fhir_store(session, "d-one", "evaluation")
    monkeypatch.setattr(repo, "list_notes", failing)
    monkeypatch.setattr(repo, "create_note", failing)
    monkeypatch.setattr(repo, "get_dataset", lambda *_args, **_kwargs: Quoting())
    with served(create_app(store), log_level="debug") as url, httpx.Client(base_url=url, timeout=30) as client:
        answers = [
            client.get(NOTES),
            client.post(NOTES, params={"noteId": "n-1"}, json={"text": TEXT, "type": "t", "patientId": "p-1"}),
            client.get("/api/v1/datasets/d-one"),
        ]
    assert [a.status_code for a in answers] == [500, 500, 500]
    assert [a.json()["detail"] for a in answers] == [
        "ValueError (see the server log)",
        "ValueError (see the server log)",
        "ResponseValidationError (see the server log)",
    ]
    out, err = capfd.readouterr()
    logged = "\n".join(records.lines)
    assert "GET /api/v1/datasets/d-one/fhirStores/evaluation/fhir/Note failed: ValueError raised at" in logged
    assert "GET /api/v1/datasets/d-one failed: ResponseValidationError raised at" in logged
    for canary in CANARIES:
        for where in [logged, out, err, *(a.text for a in answers)]:
            assert canary not in where, (canary, where[:300])
    assert "Traceback" not in logged + out + err
