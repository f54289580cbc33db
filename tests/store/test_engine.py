"""Where the store is: ``--db``, ``$NLPBENCH_DB``, else the per-user SQLite file; what a bad URL says."""

from __future__ import annotations

import sys

import pytest

from nlpbench.errors import InputError
from nlpbench.store import default_path, describe, open_store, resolve_url


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
