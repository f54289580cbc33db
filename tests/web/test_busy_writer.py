"""Pages and read commands answer while another process holds SQLite's write lock.

A worker storing a large result (per-document rows and intervals of 100,000 notes) holds the one
write lock for minutes; what only reads must not wait for it (nor fail after the busy timeout).
"""

from __future__ import annotations

import sqlite3
from contextlib import contextmanager

from sqlalchemy.engine import make_url


@contextmanager
def write_lock(url: str):
    """Hold the store's write lock, as a writer in the middle of a long transaction does."""
    connection = sqlite3.connect(make_url(url).database, timeout=0, isolation_level=None)
    connection.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        connection.execute("ROLLBACK")
        connection.close()


def test_pages_and_read_commands_do_not_wait_for_a_writer(seeded, client, cli):
    store, ids = seeded
    submission = next(iter(ids.values()))
    with write_lock(store.url):
        assert client.get("/").status_code == 200
        assert client.get("/tasks/date").status_code == 200
        assert client.get(f"/submissions/{submission}").status_code == 200
        listed = cli("submissions", "list", "--db", store.url)
        shown = cli("submissions", "show", str(submission), "--db", store.url)
    assert listed.exit_code == 0, listed.stderr
    assert shown.exit_code == 0 and f"submission {submission}" in shown.stdout, shown.stderr
