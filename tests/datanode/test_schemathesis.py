"""Property-based API tests: schemathesis against the data node's own OpenAPI document.

The app runs over a SQLite store holding one dataset with a note and a gold
record, so that generated requests reach existing resources as well as
missing ones; stateful links are not followed (the ids are free strings).
"""

from __future__ import annotations

import tempfile

import pytest

from nlpbench.api.datanode import create_app
from nlpbench.store import open_store
from nlpbench.store import repository as repo

schemathesis = pytest.importorskip("schemathesis")
hypothesis = pytest.importorskip("hypothesis")

SETTINGS = hypothesis.settings(
    max_examples=20,
    deadline=None,
    derandomize=True,
    suppress_health_check=list(hypothesis.HealthCheck),
)


def _filled_store(folder: str):
    store = open_store(f"sqlite:///{folder}/store.db")
    with store.session() as session:
        repo.create_dataset(session, "abc")
        repo.create_fhir_store(session, "abc", "abc")
        repo.create_patient(session, "abc", "abc", "abc")
        repo.create_note(session, "abc", "abc", "abc", text="Seen on 01/02/2020.", type="", patient="abc")
        repo.create_annotation_store(session, "abc", "abc")
        record = {"textDateAnnotations": [{"start": 8, "length": 10, "text": "01/02/2020", "confidence": 90.0}]}
        repo.create_annotation(session, "abc", "abc", "abc", source="abc", arrays=record)
    return store


# schemathesis builds its tests when the module is collected: the store lives as long as the module
_FOLDER = tempfile.TemporaryDirectory(prefix="nlpbench-schemathesis-")
# A schema-valid request whose parent (dataset, FHIR store, patient) does not exist gets 400, as the
# data-node contract says: for this API that is an accepted answer to positive data, beside 404 and 409.
CONFIG = schemathesis.config.SchemathesisConfig.from_dict(
    {"checks": {"positive_data_acceptance": {"expected-statuses": ["2xx", "400", "401", "403", "404", "409"]}}}
)
schema = schemathesis.openapi.from_asgi("/api/v1/openapi.json", create_app(_filled_store(_FOLDER.name)), config=CONFIG)


@schema.parametrize()
@SETTINGS
def test_datanode(case):
    case.call_and_validate()
