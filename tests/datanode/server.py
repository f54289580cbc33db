"""``nlpbench datanode serve`` as a real process, for the tests that talk to it over a socket; and a data node
seeded as the NLP Sandbox's sites seeded theirs (:func:`push_bundles`)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start(db_url: str, log_path: Path, *options: str) -> tuple[str, subprocess.Popen]:
    """``nlpbench datanode serve --db DB_URL OPTIONS…`` started on a free port, its output to ``log_path``: its
    API URL and the process (answering once :func:`ready`)."""
    port = free_port()
    command = [sys.executable, "-m", "nlpbench", "datanode", "serve", "--db", db_url, "--port", str(port), *options]
    with open(log_path, "w") as log:
        server = subprocess.Popen([*command, "--log-level", "warning"], stdout=log, stderr=subprocess.STDOUT)
    return f"http://127.0.0.1:{port}/api/v1", server


def ready(url: str, server: subprocess.Popen, log_path: Path) -> None:
    """Once the data node at ``url`` answers its health check (60 s at most; its log if it died)."""
    deadline = time.monotonic() + 60
    while True:
        try:
            if httpx.get(f"{url}/healthCheck", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        assert server.poll() is None, log_path.read_text()
        assert time.monotonic() < deadline, "the data node did not start within 60 s"
        time.sleep(0.2)


def stop(server: subprocess.Popen) -> None:
    server.terminate()
    server.wait(timeout=20)


@contextmanager
def served(db_url: str, log_path: Path, *options: str) -> Iterator[tuple[str, subprocess.Popen]]:
    """``nlpbench datanode serve --db DB_URL OPTIONS…`` as a process, once its health check answers:
    yields its API URL and the process; stopped afterwards. Its output goes to ``log_path``."""
    url, server = start(db_url, log_path, *options)
    try:
        ready(url, server, log_path)
        yield url, server
    finally:
        stop(server)


def push_bundles(api: str, dataset: str, path: Path, notes: int | None = None) -> None:
    """Seed the data node at ``api`` with dataset ``dataset`` from the patient bundles at ``path`` (the first
    ``notes`` notes, or all) with the NLP Sandbox's own client library (nlpsandbox-client 4.3.1), call for call
    as its ``examples/push_dataset.py`` does: dataset, FHIR store ``evaluation``, annotation store
    ``goldstandard``, then each patient, its notes and each note's gold record."""
    import nlpsandbox
    import nlpsandbox.apis
    from nlpsandboxclient.utils import camelcase_to_snakecase, change_keys

    left = notes
    with nlpsandbox.ApiClient(nlpsandbox.Configuration(host=api)) as client:
        nlpsandbox.apis.DatasetApi(client).create_dataset(dataset, body={})
        fhir_store = nlpsandbox.apis.FhirStoreApi(client).create_fhir_store(dataset, "evaluation", body={})
        nlpsandbox.apis.AnnotationStoreApi(client).create_annotation_store(dataset, "goldstandard", body={})
        patients, note_api = nlpsandbox.apis.PatientApi(client), nlpsandbox.apis.NoteApi(client)
        annotations = nlpsandbox.apis.AnnotationApi(client)
        for bundle in json.loads(path.read_text())["patient_bundles"]:
            if left == 0:
                return
            patient = change_keys(bundle["patient"], camelcase_to_snakecase)
            patient_id = patient.pop("identifier")
            patients.create_patient(dataset, "evaluation", patient_id, patient_create_request=patient)
            for note_bundle in bundle["note_bundles"][:left]:
                record, note = note_bundle["annotation"], dict(note_bundle["note"])
                # the note's id: the noteId its annotations share, or its identifier when it has none
                named = {a["noteId"] for key, values in record.items() if key.startswith("text") for a in values}
                (note_id,) = named or {note.pop("identifier")}
                note = change_keys(note, camelcase_to_snakecase)
                note["patient_id"] = patient_id
                note_api.create_note(dataset, "evaluation", note_id, note_create_request=note)
                record["annotationSource"]["resourceSource"]["name"] = f"{fhir_store.name}/fhir/Note/{note_id}"
                annotations.create_annotation(
                    dataset,
                    "goldstandard",
                    annotation_id=note_id,
                    annotation_create_request=change_keys(record, camelcase_to_snakecase),
                )
            if left is not None:
                left -= min(left, len(bundle["note_bundles"]))
