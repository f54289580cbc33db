"""A team holding a data-node key scoped to its public dataset attacks ``nlpbench datanode serve``.

The node runs as a process of two workers on both backends and holds a
public and a private dataset. With its key the team reads its dataset; it
cannot tell the private one from a dataset that does not exist by any route,
cannot write or create, cannot forge a key from the prefix it sees, and loses
access at once when the organiser revokes its key or the key expires — with
no restart of the node.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx
from sqlalchemy import update
from typer.testing import CliRunner

from nlpbench.cli import app
from nlpbench.cli.dataset import import_documents
from nlpbench.store import open_store
from nlpbench.store.keys import create_key
from nlpbench.store.models import ApiKey
from nlpbench.synth import generate
from tests.datanode.server import served
from tests.store.backends import db_url  # noqa: F401 - the backends' fixture (no conftest here)

NOTE = "/datasets/{}/fhirStores/evaluation/fhir/Note"


def _seeded(url: str) -> tuple[str, str, str]:
    """The team's key, an organiser's write key, and a note id of the private dataset."""
    store = open_store(url)
    try:
        private = list(generate(3, seed=2))
        import_documents(store, "open-data", generate(3, seed=1), "synth", public=True)
        import_documents(store, "closed-data", private, "synth")
        with store.session() as session:
            team = create_key(session, "read", "team", datasets=["open-data"])
            organiser = create_key(session, "write", "organiser")
    finally:
        store.close()
    return team, organiser, private[0].id


def _answer(client: httpx.Client, method: str, path: str, key: str | None, **kwargs) -> tuple[int, str]:
    headers = {"X-API-Key": key} if key else {}
    response = client.request(method, path, headers=headers, **kwargs)
    return response.status_code, response.text


def test_a_scoped_key_reaches_its_dataset_only_and_stops_at_once(db_url, tmp_path):  # noqa: F811
    team, organiser, secret_note = _seeded(db_url)
    prefix = team.split("_")[1]
    with served(db_url, tmp_path / "serve.log", "--workers", "2") as (url, _), httpx.Client(base_url=url) as client:
        listed = client.get("/datasets", headers={"X-API-Key": team}).json()
        assert [d["name"] for d in listed["datasets"]] == ["datasets/open-data"]
        assert _answer(client, "get", NOTE.format("open-data"), team)[0] == 200
        for path in (f"{NOTE.format('{}')}/{secret_note}", NOTE.format("{}"), "/datasets/{}",
                     "/datasets/{}/annotationStores/goldstandard/annotations"):  # fmt: skip
            hidden = _answer(client, "get", path.format("closed-data"), team)
            absent = _answer(client, "get", path.format("no-such-data"), team)
            assert hidden[0] in (400, 404) and hidden[1] == absent[1].replace("no-such-data", "closed-data"), path
            assert _answer(client, "get", path.format("closed-data"), organiser)[0] == 200
        assert _answer(client, "post", "/datasets", team, params={"datasetId": "mine"})[0] == 403
        assert _answer(client, "delete", "/datasets/open-data", team)[0] == 403
        for forged in (f"nbk_{prefix}_", f"nbk_{prefix}_{'A' * 43}", f"nbk_{prefix}", prefix, team[:-1], team + "x"):
            assert _answer(client, "get", "/datasets", forged)[0] == 401, forged
        assert client.get("/datasets", params={"api_key": team}).status_code == 401  # keys go in headers only
        assert client.get("/datasets", headers={"Authorization": f"Bearer {team}"}).status_code == 200

        store = open_store(db_url, upgrade=False)
        try:
            with store.session() as session:  # the organiser lets the key expire
                session.execute(update(ApiKey).where(ApiKey.prefix == prefix).values(
                    expires_at=datetime.now(UTC) - timedelta(seconds=1)))  # fmt: skip
            for _ in range(4):  # either worker
                assert _answer(client, "get", "/datasets", team)[0] == 401
            with store.session() as session:
                session.execute(update(ApiKey).where(ApiKey.prefix == prefix).values(expires_at=None))
            assert _answer(client, "get", "/datasets", team)[0] == 200
        finally:
            store.close()
        revoked = CliRunner().invoke(app, ["datanode", "keys", "revoke", prefix, "--db", db_url])
        assert revoked.exit_code == 0, revoked.stderr
        for _ in range(4):
            assert _answer(client, "get", NOTE.format("open-data"), team)[0] == 401
        assert _answer(client, "get", NOTE.format("open-data"), organiser)[0] == 200
