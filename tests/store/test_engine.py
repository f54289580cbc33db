"""Where the store is: ``--db``, ``$NLPBENCH_DB``, else the per-user SQLite file; what a bad URL says."""

from __future__ import annotations

import os
import stat
import sys
import uuid

import pytest
from sqlalchemy import insert, text
from sqlalchemy.exc import DBAPIError

from nlpbench.errors import InputError
from nlpbench.store import default_path, describe, open_store, resolve_url
from nlpbench.store.models import Note


def test_the_url_comes_from_the_option_then_the_environment_then_the_user_data_directory(monkeypatch, tmp_path):
    monkeypatch.setenv("NLPBENCH_DB", "sqlite:///from-env.db")
    assert resolve_url("sqlite:///given.db") == "sqlite:///given.db"
    assert resolve_url(None) == "sqlite:///from-env.db"
    monkeypatch.delenv("NLPBENCH_DB")
    if sys.platform.startswith("linux"):
        monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
        assert default_path() == tmp_path / "nlpbench" / "nlpbench.db"
    assert resolve_url(None) == f"sqlite:///{default_path()}"


def test_the_default_file_is_made_with_its_folder(monkeypatch, tmp_path):
    if not sys.platform.startswith("linux"):
        pytest.skip("XDG_DATA_HOME moves the per-user folder on Linux only")
    monkeypatch.delenv("NLPBENCH_DB", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    store = open_store()
    try:
        assert store.revision() is not None
    finally:
        store.close()
    assert (tmp_path / "data" / "nlpbench" / "nlpbench.db").is_file()


def test_messages_never_show_a_password():
    assert (
        describe("postgresql+psycopg://bench:s3cret@db.example/test")
        == "postgresql+psycopg://bench:***@db.example/test"
    )


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("not a url", "not a database URL"),
        ("mysql://nobody@nowhere/db", "unsupported database 'mysql'"),
        ("postgresql+psycopg://nobody:pw@127.0.0.1:1/none", "cannot open the database"),
    ],
)
def test_bad_urls_are_one_line_input_errors(url, message):
    with pytest.raises(InputError, match=message) as raised:
        open_store(url)
    assert "pw" not in str(raised.value) and "\n" not in str(raised.value)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX file modes")
@pytest.mark.parametrize("umask", [0o000, 0o022, 0o777])
def test_a_new_sqlite_store_and_its_folders_are_private_whatever_the_umask(tmp_path, umask):
    path = tmp_path / "made" / "deeper" / "store.db"
    before = os.umask(umask)
    try:
        store = open_store(f"sqlite:///{path}")
        with store.session() as session:  # a write: the -wal and -shm files exist while the store is open
            session.execute(text("CREATE TABLE probe (x INTEGER)"))
        made = {p.name: stat.S_IMODE(p.stat().st_mode) for p in path.parent.iterdir()}
        store.close()
    finally:
        os.umask(before)
    assert made == {"store.db": 0o600, "store.db-wal": 0o600, "store.db-shm": 0o600}
    assert stat.S_IMODE(path.parent.stat().st_mode) == stat.S_IMODE(path.parent.parent.stat().st_mode) == 0o700


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX file modes")
def test_an_existing_store_keeps_its_mode(tmp_path):
    tmp_path.chmod(0o755)
    path = tmp_path / "shared.db"
    open_store(f"sqlite:///{path}").close()
    path.chmod(0o640)
    open_store(f"sqlite:///{path}").close()
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert stat.S_IMODE(tmp_path.stat().st_mode) == 0o755  # the folder existed: its mode is its owner's


def test_a_database_error_quotes_none_of_the_values_it_was_given(store):
    """A statement the database refuses (here a note of no FHIR store) fails with the statement, never its
    parameters: a note's text in a database error would reach whatever logs or shows it."""
    canary = f"canary-{uuid.uuid4().hex}"
    with pytest.raises(DBAPIError) as raised, store.session() as session:
        session.execute(insert(Note).values(fhir_store_id=-1, patient_id=-1, identifier=canary, text=canary))
    assert canary not in str(raised.value) and canary not in repr(raised.value)
    assert "INSERT INTO notes" in str(raised.value)
