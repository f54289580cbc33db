"""The two backends every store and data-node test runs on: a SQLite file and the local PostgreSQL.

PostgreSQL is the server at ``$NLPBENCH_TEST_PG`` (default
``postgresql+psycopg://postgres@127.0.0.1:5432/test``, what ``.ci/run``
starts); each test gets its own schema, dropped afterwards. Its tests are
skipped, saying why, only when the server cannot be reached.
"""

from __future__ import annotations

import functools
import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

PG_URL = os.environ.get("NLPBENCH_TEST_PG", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
BACKENDS = ("sqlite", "postgresql")


@functools.cache
def pg_unreachable() -> str | None:
    """Why the PostgreSQL server cannot be used, or None when it can."""
    import psycopg
    from sqlalchemy.engine import make_url

    url = make_url(PG_URL)
    try:
        with psycopg.connect(**_conninfo(url), connect_timeout=3):
            return None
    except psycopg.OperationalError as error:
        return f"PostgreSQL at {url.render_as_string(hide_password=True)} unreachable: {str(error).strip()[:200]}"


def _conninfo(url) -> dict:
    return {
        "host": url.host or "127.0.0.1",
        "port": url.port or 5432,
        "user": url.username or "postgres",
        "dbname": url.database or "postgres",
        **({"password": url.password} if url.password else {}),
    }


@contextmanager
def database_url(backend: str, tmp_path: Path) -> Iterator[str]:
    """A fresh, empty database of ``backend``, dropped when the block ends."""
    if backend == "sqlite":
        yield f"sqlite:///{tmp_path / 'store.db'}"
        return
    reason = pg_unreachable()
    if reason:
        pytest.skip(reason)
    import psycopg
    from sqlalchemy.engine import make_url

    url = make_url(PG_URL)
    schema = f"nlpbench_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(**_conninfo(url), autocommit=True) as admin:
        admin.execute(f'CREATE SCHEMA "{schema}"')
    try:
        yield url.update_query_dict({"options": f"-csearch_path={schema}"}).render_as_string(hide_password=False)
    finally:
        with psycopg.connect(**_conninfo(url), autocommit=True) as admin:
            admin.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


@pytest.fixture(params=BACKENDS)
def db_url(request, tmp_path):
    """The URL of an empty database, once per backend."""
    with database_url(request.param, tmp_path) as url:
        yield url


@pytest.fixture
def store(db_url):
    """An open, migrated store, once per backend."""
    from nlpbench.store import open_store

    opened = open_store(db_url)
    yield opened
    opened.close()
