"""``nlpbench datanode serve --workers 2``: two processes answer on one port, each with the store opened itself."""

from __future__ import annotations

import random

import httpx
import psutil

from nlpbench.cli.dataset import import_documents
from nlpbench.store import open_store
from nlpbench.synth import generate
from tests.datanode.server import served


def test_two_workers_serve_the_notes(db_url, tmp_path):
    documents = list(generate(30, 3))
    store = open_store(db_url)
    try:
        import_documents(store, "synth-w", documents, "synth")
    finally:
        store.close()
    with served(db_url, tmp_path / "serve.log", "--workers", "2") as (url, server):
        workers = [p for p in psutil.Process(server.pid).children() if "spawn_main" in " ".join(p.cmdline())]
        assert len(workers) == 2
        notes = f"{url}/datasets/synth-w/fhirStores/evaluation/fhir/Note"
        for doc in random.Random(0).sample(documents, 20):  # a connection each, so that both workers take some
            note = httpx.get(f"{notes}/{doc.id}", timeout=30).raise_for_status().json()
            assert note == {
                "identifier": doc.id,
                "text": doc.text,
                "type": doc.metadata["noteType"],
                "patientId": doc.metadata["patientId"],
            }
        with httpx.Client(timeout=30) as client:
            page = client.get(notes, params={"limit": 100}).raise_for_status().json()
            assert [n["identifier"] for n in page["notes"]] == sorted(doc.id for doc in documents)
            assert page["links"]["next"] == "" and page["totalResults"] == len(documents)
            missing = client.get(f"{notes}/no-such-note")
            assert missing.status_code == 404 and missing.headers["content-type"] == "application/problem+json"
        assert all(worker.is_running() for worker in workers)
