"""``nlpbench site``: data sites whose notes never leave them — registered at the centre, served at the site.

At the centre: ``site add`` registers a site and the datasets it holds (its key is printed once), ``site list``
shows them. At the site: ``site serve`` takes the centre's runs and runs them here, sending back counts only;
``site jobs`` lists the runs taken, ``site approve`` lets a held result go.
"""

from __future__ import annotations

from pathlib import Path

import typer

from nlpbench.cli.common import stderr, stopped_by_signal
from nlpbench.cli.db import db_session, open_db
from nlpbench.cli.options import DB_OPTION
from nlpbench.cli.sandboxing import DISK_OPTION, RUNTIME_OPTION, SANDBOX_OPTION, SandboxChoice, sandbox_settings
from nlpbench.cli.submit import FORMAT_OPTION, ListFormat, print_json

NAME = typer.Argument(..., help="The site's name, as the leaderboard shows it (letters, digits and _.:-).")


def add(
    name: str = NAME,
    dataset: list[str] = typer.Option(..., "--dataset", help="A dataset the site holds (repeat for several)."),
    replace: bool = typer.Option(
        False, "--replace", help="Forget the content hash each named dataset had: the next result fixes it again."
    ),
    db: str = DB_OPTION,
) -> None:
    """Register a data site at the centre, and the datasets it holds; a new site's key is printed once.

    A submission to one of those datasets is then run at every site holding it (a command only: the tool comes
    to the notes), and its result pooled when all have returned.
    """
    from nlpbench.platform.sites import add_site

    with db_session(db) as session:
        key = add_site(session, name, dataset, replace=replace)
    if key is not None:
        typer.echo(key)
        stderr().print(f"site {name}: its key, shown once; give it to the site (site serve --key)", markup=False)
    else:
        stderr().print(f"site {name}: holds {', '.join(dataset)}", markup=False)


def list_sites(fmt: ListFormat = FORMAT_OPTION, db: str = DB_OPTION) -> None:
    """The centre's data sites: each one's key (public part), datasets with their content hashes, last seen."""
    from nlpbench.platform.sites import list_sites as listed

    with db_session(db, readonly=True) as session:
        found = listed(session)
    if fmt == ListFormat.json:
        return print_json(
            [
                {
                    "name": s.name,
                    "key": s.key,
                    "datasets": s.datasets,
                    "seenAt": s.seen_at.isoformat() if s.seen_at else None,
                }
                for s in found
            ]
        )
    for site in found:
        held = ", ".join(f"{d} ({h[:12] if h else 'no result yet'})" for d, h in site.datasets.items())
        seen = f"{site.seen_at:%Y-%m-%d %H:%M:%S} UTC" if site.seen_at else "never"
        typer.echo(f"{site.name}  {site.key}  {held}  last seen {seen}")
    if not found:
        stderr().print("no data sites (nlpbench site add NAME --dataset D)", markup=False)
    return None


def serve(
    central: str = typer.Option(..., "--central", help="The centre's base URL (https://…; http to this machine only)."),
    key: str = typer.Option(..., "--key", envvar="NLPBENCH_SITE_KEY", help="The site's key (site add printed it)."),
    db: str = DB_OPTION,
    queue: str = typer.Option("site", "--queue", help="The queue of this site's store its runs are made in."),
    approve: bool = typer.Option(
        False, "--approve", help="Hold each finished result until approved here (nlpbench site approve RUN)."
    ),
    totals_only: bool = typer.Option(
        False,
        "--totals-only",
        help="Send each type's totals, no per-document counts: the centre adds them to every resample as they are "
        "(its pooled interval gets no width from this site's documents, and says so).",
    ),
    until_idle: bool = typer.Option(False, "--until-idle", help="Exit once the centre has no run for this site."),
    poll: float = typer.Option(5.0, "--poll", min=0.05, help="Seconds between looks at the centre when idle."),
    lease: float = typer.Option(60.0, "--lease", min=0.5, help="Seconds a local claim lasts without a heartbeat."),
    beat: float = typer.Option(5.0, "--beat", min=0.05, help="Seconds between two reports of progress."),
    sandbox: SandboxChoice = SANDBOX_OPTION,
    runtime: list[Path] = RUNTIME_OPTION,
    disk: int = DISK_OPTION,
) -> None:
    """Serve a data site: take the centre's runs of this site's datasets, run them here, send back counts only.

    Each run is a submission of --queue in this store, run by a worker of this machine as any other (validation,
    sandbox, time budget, checkpoints). Sent to the centre: the outcome, the dataset's content hash, the number
    of notes, and per-document counts under ids of this site's making (d1, d2, …) — never a note, an annotation,
    a tool's log or a reason. A site stopped, or killed, takes the same run again when it comes back and goes on
    where it stopped.
    """
    from nlpbench.platform.site_runner import SiteRunner

    def said(line: str) -> None:
        stderr().print(f"site: {line}", markup=False)

    store = open_db(db, create=False)
    runner = SiteRunner(
        store, central, key, queue, approve, poll, lease, beat, sandbox=sandbox_settings(sandbox, runtime, disk),
        totals_only=totals_only, said=said,
    )  # fmt: skip

    def stopped(cause: BaseException) -> str:
        return f"site: stopped by {cause or 'Ctrl+C'}; its run goes on when it is served again"

    try:
        with stopped_by_signal(stopped):
            ran = runner.run(until_idle=until_idle)
    finally:
        store.close()
    said(f"{ran} runs; the centre has no other for this site")


def approve(
    run: int = typer.Argument(..., help="The centre's run, as site serve and site jobs name it."),
    central: str | None = typer.Option(None, "--central", help="The centre, when this site serves several."),
    db: str = DB_OPTION,
) -> None:
    """Let a held result go to the centre (site serve --approve holds each): sent at site serve's next look."""
    from nlpbench.platform.site_jobs import approve as approved

    store = open_db(db, create=False)
    try:
        local = approved(store, run, central)
    finally:
        store.close()
    typer.echo(f"run {run} (submission {local} here): approved; site serve sends it")


def jobs(fmt: ListFormat = FORMAT_OPTION, db: str = DB_OPTION) -> None:
    """The centre's runs this site took: the run, the local submission and its status, and held, approved, sent."""
    from nlpbench.platform.site_jobs import jobs as taken

    store = open_db(db, create=False)
    try:
        found = taken(store)
    finally:
        store.close()
    if fmt == ListFormat.json:
        return print_json(found)
    for job in found:
        fields = (f"run {job['run']}", f"submission {job['submission']}", job["status"], job["state"], job["central"])
        typer.echo("  ".join(fields))
    return None


def add_commands(app: typer.Typer) -> None:
    group = typer.Typer(
        help="Data sites whose notes never leave them: register one at the centre (add, list); serve one at the "
        "site (serve, jobs, approve)."
    )
    group.command("add")(add)
    group.command("list")(list_sites)
    group.command("serve")(serve)
    group.command("jobs")(jobs)
    group.command("approve")(approve)
    app.add_typer(group, name="site", no_args_is_help=True)
