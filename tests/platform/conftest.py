"""Every platform test that takes ``db_url`` or ``store`` runs on SQLite and on PostgreSQL.

``nb`` runs ``nlpbench … --db URL`` in process; ``dataset`` puts 8 synthetic
notes (and a 3-note ``-subset``) into the store; ``tool`` is the misbehaving
test tool of the runner's tests, served on 127.0.0.1 and healthy at the start
of each test; ``arena`` is the platform a team attacks in the security tests (:mod:`tests.platform.arena`).
"""

from __future__ import annotations

import pytest

from nlpbench.store import open_store, repository
from tests.platform.arena import Arena, open_arena
from tests.runner.faulty import faulty
from tests.store.backends import db_url, store  # noqa: F401

NOTES = 8
SUBSET = 3


@pytest.fixture
def nb(cli, db_url):  # noqa: F811
    """``nlpbench ARGS… --db URL``."""
    return lambda *args: cli(*args, "--db", db_url)


@pytest.fixture
def dataset(nb, db_url) -> list[str]:  # noqa: F811
    """Dataset ``notes`` of 8 synthetic notes with gold, and ``notes-subset``; the note ids in order."""
    made = nb("synth", "--notes", NOTES, "--seed", "7", "--into-store", "notes", "--subset", SUBSET)
    assert made.exit_code == 0, made.stderr
    opened = open_store(db_url)
    try:
        with opened.session(readonly=True) as session:
            return [note.identifier for note in repository.iter_notes(session, "notes")]
    finally:
        opened.close()


@pytest.fixture(scope="session")
def served_tool():
    with faulty() as tool:
        yield tool


@pytest.fixture
def tool(served_tool):
    served_tool.settle()
    served_tool.reset()
    yield served_tool
    served_tool.settle()
    served_tool.reset()


@pytest.fixture
def arena(nb, db_url) -> Arena:  # noqa: F811
    """Private ``notes`` and public ``open``, queue ``default`` opened, keys of two teams and an organiser."""
    opened = open_store(db_url)
    made = open_arena(nb, opened)
    with made.api:
        yield made
    opened.close()
