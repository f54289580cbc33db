"""``nlpbench db``: where the store is and its migrations; how every store command opens it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import typer

from nlpbench.cli.options import DB_OPTION

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from nlpbench.store import Store


def open_db(url: str | None, *, upgrade: bool = True, create: bool = True) -> Store:
    """The store at ``url`` (``--db``), migrated unless told not to; with ``create=False`` (a command that
    reads, or changes only what must already be there) a store that is not there is one line naming it and
    ``nlpbench db upgrade``, and nothing is made."""
    from nlpbench.store import open_store

    return open_store(url, upgrade=upgrade, create=create)


@contextmanager
def db_session(url: str | None, *, readonly: bool = False, create: bool = True) -> Iterator[Session]:
    """One transaction on the store at ``url`` (``--db``), closed afterwards; ``readonly`` waits for no writer
    and never makes a store (nor does ``create=False``)."""
    store = open_db(url, create=create and not readonly)
    try:
        with store.session(readonly=readonly) as session:
            yield session
    finally:
        store.close()


def upgrade(db: str = DB_OPTION) -> None:
    """Create the tables of an empty database, or bring an older one up to this version's schema.

    What the leaderboard reads and an older version did not store is computed and stored too: the
    intervals of results scored without them, and the rank groups of every column.
    """
    from nlpbench.platform import ranks
    from nlpbench.store import describe, resolve_url

    store = open_db(db, upgrade=False)
    try:
        before, after = store.upgrade()
        done = ranks.refresh(store)
    finally:
        store.close()
    where = describe(resolve_url(db))
    if before == after:
        typer.echo(f"{where}: already at revision {after}")
    else:
        typer.echo(f"{where}: upgraded from {before or 'an empty database'} to revision {after}")
    if done.intervals:
        typer.echo(f"{where}: intervals of results stored without them: {done.intervals} computed and stored")
    if done.columns:
        typer.echo(f"{where}: rank groups of the leaderboard: {done.columns} columns computed and stored")


def current(db: str = DB_OPTION) -> None:
    """Print the database URL (without its password) and the revision it is at."""
    from nlpbench.store import describe, resolve_url
    from nlpbench.store.engine import head_revision

    store = open_db(db, upgrade=False, create=False)
    try:
        revision = store.revision()
    finally:
        store.close()
    state = "up to date" if revision == head_revision() else f"behind {head_revision()}: run `nlpbench db upgrade`"
    typer.echo(f"{describe(resolve_url(db))}: revision {revision}, {state}")


def add_commands(app: typer.Typer) -> None:
    group = typer.Typer(help="The store's database: migrations.", no_args_is_help=True)
    group.command("upgrade")(upgrade)
    group.command("current")(current)
    app.add_typer(group, name="db")
