"""A command that only reads (or changes only what must be there) makes no store: a mistyped ``--db`` is one line
naming the store and ``nlpbench db upgrade``, exit status 2, and no file or folder appears (issue 19 §1)."""

from __future__ import annotations

import sys

import pytest

from tests.cli.errors import one_line_error

#: Commands that read the store, or change only a row that must already be in it.
READERS = [
    ("db", "current"),
    ("dataset", "list"),
    ("dataset", "show", "synth"),
    ("dataset", "export", "synth", "{tmp}/out.json"),
    ("dataset", "delete", "synth", "--yes"),
    ("submissions", "list"),
    ("submissions", "show", "1"),
    ("submissions", "logs", "1"),
    ("submissions", "cancel", "1"),
    ("submissions", "keys", "list"),
    ("datanode", "keys", "list"),
    ("leaderboard", "refresh"),
    ("rescore", "1", "--profile", "standard"),
    (
        "score",
        "sandbox",
        "-g",
        "store:synth/annotationStores/goldstandard",
        "-p",
        "store:synth/annotationStores/goldstandard",
    ),
]


def _run(cli, command: tuple[str, ...], tmp_path, *db: str):
    return cli(*(word.replace("{tmp}", str(tmp_path)) for word in command), *db)


@pytest.mark.parametrize("command", READERS, ids=" ".join)
def test_a_reader_on_a_missing_folder_makes_nothing(cli, tmp_path, command):
    url = f"sqlite:///{tmp_path / 'no-such-folder' / 'x.db'}"
    message = one_line_error(_run(cli, command, tmp_path, "--db", url))
    assert message == f"{url}: no store here: make one with `nlpbench db upgrade --db {url}`"
    assert not (tmp_path / "no-such-folder").exists()


@pytest.mark.parametrize(
    "command", [("db", "current"), ("dataset", "list"), ("submissions", "show", "1")], ids=" ".join
)
def test_a_reader_without_db_makes_no_store_in_the_user_data_folder(cli, tmp_path, monkeypatch, command):
    if not sys.platform.startswith("linux"):
        pytest.skip("XDG_DATA_HOME moves the per-user folder on Linux only")
    monkeypatch.delenv("NLPBENCH_DB", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert "nlpbench db upgrade" in one_line_error(_run(cli, command, tmp_path))
    assert not (tmp_path / "data").exists()


@pytest.mark.parametrize("command", READERS[:4] + READERS[5:7], ids=" ".join)
def test_a_reader_refuses_a_database_without_the_schema_and_leaves_it_empty(cli, db_url, tmp_path, command):
    """An empty SQLite file, or a PostgreSQL database that answers but holds no nlpbench tables."""
    if db_url.startswith("sqlite"):
        (tmp_path / "store.db").touch()
    assert "no store here: make one with `nlpbench db upgrade --db" in one_line_error(
        _run(cli, command, tmp_path, "--db", db_url)
    )
    assert "no store here" in one_line_error(cli("db", "current", "--db", db_url))  # still nothing made
    assert cli("db", "upgrade", "--db", db_url).exit_code == 0
    assert _run(cli, ("dataset", "list"), tmp_path, "--db", db_url).exit_code == 0


def test_a_postgresql_database_that_does_not_exist_is_one_line(cli):
    from tests.store.backends import PG_URL, pg_unreachable

    if pg_unreachable():
        pytest.skip(pg_unreachable())
    url = PG_URL.rsplit("/", 1)[0] + "/nlpbench_no_such_database"
    message = one_line_error(cli("dataset", "list", "--db", url))
    assert message.startswith(url) and "nlpbench_no_such_database" in message
