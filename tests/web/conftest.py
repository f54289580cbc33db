"""A store seeded once per module through the platform (see :mod:`tests.web.seeding`), and the site over it."""

from __future__ import annotations

import warnings

import pytest
from fastapi.testclient import TestClient

from nlpbench.store import open_store
from nlpbench.web.app import create_app
from tests.runner.faulty import faulty
from tests.web.seeding import seed


@pytest.fixture(scope="package")
def seeded(tmp_path_factory):
    """``(store, ids)``: the seeded SQLite store and the submission ids by ``team/task/dataset``."""
    scratch = tmp_path_factory.mktemp("web")
    store = open_store(f"sqlite:///{scratch}/leaderboard.db")
    with faulty() as tool, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the synthetic notes' age and profession have no NLP Sandbox array
        tool.reset()
        ids = seed(store, scratch, tool.url)
    yield store, ids
    store.close()


@pytest.fixture(scope="package")
def client(seeded):
    store, _ = seeded
    with TestClient(create_app(store)) as client:
        yield client
