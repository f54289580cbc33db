"""``nlpbench leaderboard serve``: the leaderboard site over a store's scored submissions."""

from __future__ import annotations

import typer

from nlpbench.cli.common import fail, stderr
from nlpbench.cli.db import DB_OPTION, open_db, store_errors
from nlpbench.cli.serve import listen

PICKS = ("best", "latest")


@store_errors
def serve(
    db: str = DB_OPTION,
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on (0.0.0.0 for every interface)."),
    port: int = typer.Option(8000, "--port", "-p", min=0, max=65535, help="Port to listen on (0: any free port)."),
    pick: str = typer.Option("best", "--pick", help="Each tool's best or latest scored submission per dataset."),
    title: str = typer.Option("nlpbench leaderboard", "--title", help="The site's title."),
    log_level: str = typer.Option("warning", "--log-level", help="uvicorn's log level: debug, info, warning, error."),
) -> None:
    """Serve the leaderboard: tasks, ranked tables with intervals and rank groups, submissions, teams, exports.

    Pages are rendered on the server and work without JavaScript; every table
    has .csv and .json twins. A private dataset's pages show counts, never note text.
    """
    if pick not in PICKS:
        raise fail(f"unknown --pick {pick!r}; known: {', '.join(PICKS)}")
    import uvicorn

    from nlpbench.web.app import Settings, create_app

    store = open_db(db)
    sock = listen(host, port)
    bound = sock.getsockname()[1]
    stderr().print(f"leaderboard at http://{host}:{bound}/ — Ctrl+C to stop", markup=False, soft_wrap=True)
    try:
        with sock:
            app = create_app(store, Settings(title=title, pick=pick))
            uvicorn.Server(uvicorn.Config(app, log_level=log_level)).run(sockets=[sock])
    finally:
        store.close()


def add_commands(app: typer.Typer) -> None:
    group = typer.Typer(help="The leaderboard site.", no_args_is_help=True)
    group.command("serve")(serve)
    app.add_typer(group, name="leaderboard")
