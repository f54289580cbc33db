"""``nlpbench leaderboard``: serve the site over a store's scored submissions; store what its pages read."""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Annotated

import typer

from nlpbench.cli.common import choices, fail, stderr
from nlpbench.cli.db import open_db
from nlpbench.cli.options import DB_OPTION, LEADERBOARD_PORT, LogLevel, host_option, log_level_option, port_option
from nlpbench.cli.serve import listen

if TYPE_CHECKING:
    from nlpbench.store import Store

PICKS = ("best", "latest")
#: Seconds between two rounds of :func:`refreshing` in ``leaderboard serve`` (a plain default: ``demo`` calls it).
REFRESH_SECONDS = 10.0
log = logging.getLogger("nlpbench.web")


def refreshing(store: Store, seconds: float) -> threading.Event:
    """Run :func:`nlpbench.platform.ranks.refresh` now and every ``seconds`` in a thread, until the returned event
    is set. A failed round (a writer holding SQLite's lock past the busy timeout) is logged by its type and
    tried again at the next."""
    from nlpbench.platform import ranks

    stop = threading.Event()

    def loop() -> None:
        while True:
            try:
                ranks.refresh(store)
            except Exception as error:  # the next round tries again; its message may quote a statement
                log.warning("refreshing the leaderboard failed: %s", type(error).__name__)
            if stop.wait(seconds):
                return

    threading.Thread(target=loop, name="nlpbench-leaderboard-refresh", daemon=True).start()
    return stop


def serve(
    db: str = DB_OPTION,
    host: str = host_option(),
    port: int = port_option(LEADERBOARD_PORT),
    pick: str = typer.Option(
        "best", "--pick", metavar=choices(PICKS), help="Each tool's best or latest scored submission per dataset."
    ),
    title: str = typer.Option("nlpbench leaderboard", "--title", help="The site's title."),
    baseline: list[str] = typer.Option(
        [], "--baseline", metavar="TEAM", help="A team whose tools the forest plots mark as baselines (repeatable)."
    ),
    log_level: LogLevel = log_level_option(LogLevel.warning),
    refresh: Annotated[
        float,
        typer.Option(
            "--refresh",
            min=0,
            help="Seconds between two refreshes of the rank groups (and missing intervals) pages read; 0: never "
            "(run `nlpbench leaderboard refresh` instead).",
        ),
    ] = REFRESH_SECONDS,
) -> None:
    """Serve the leaderboard: tasks, ranked tables with intervals and rank groups, submissions, teams, exports.

    Pages are rendered on the server and work without JavaScript; every table
    has .csv and .json twins. A private dataset's pages show counts, never note text.
    Pages only read: the worker stores the rank groups of a new result with it; those of
    results stored without them (by an older version) are computed in the background
    (--refresh), and such a column shows no rank until they are.
    """
    if pick not in PICKS:
        raise fail(f"unknown --pick {pick!r}; known: {', '.join(PICKS)}")
    from nlpbench.api.server import run
    from nlpbench.web.app import Settings, create_app

    store = open_db(db, create=False)
    sock = listen(host, port)
    bound = sock.getsockname()[1]
    stderr().print(f"leaderboard at http://{host}:{bound}/ — Ctrl+C to stop", markup=False, soft_wrap=True)
    stop = refreshing(store, refresh) if refresh else None
    try:
        with sock:
            run(
                create_app(store, Settings(title=title, pick=pick, baselines=tuple(baseline))),
                sock,
                log_level=log_level,
            )
    finally:
        if stop is not None:
            stop.set()
        store.close()


def refresh_(db: str = DB_OPTION) -> None:
    """Compute and store what the site's pages read but never compute: the rank groups of every column whose
    results changed, and the intervals of results stored without them (by an older version)."""
    from nlpbench.platform import ranks
    from nlpbench.store import describe, resolve_url

    store = open_db(db, create=False)
    try:
        done = ranks.refresh(store)
    finally:
        store.close()
    typer.echo(
        f"{describe(resolve_url(db))}: rank groups of {done.columns} columns and intervals of "
        f"{done.intervals} results computed and stored"
    )


def add_commands(app: typer.Typer) -> None:
    group = typer.Typer(help="The leaderboard site.", no_args_is_help=True)
    group.command("serve")(serve)
    group.command("refresh")(refresh_)
    app.add_typer(group, name="leaderboard")
