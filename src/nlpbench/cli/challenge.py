"""``nlpbench challenge``: make a challenge from its spec, show it, open, close and freeze its phases, and show
a phase's leaderboard as an organiser or as a team sees it."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import typer

from nlpbench.cli.db import db_session, open_db
from nlpbench.cli.options import DB_OPTION
from nlpbench.cli.submit import FORMAT_OPTION, ListFormat, future_moment, print_json

CHALLENGE = typer.Argument(..., help="The challenge's name, as its spec gives it.")
PHASE = typer.Argument(..., help="The phase's name, as the challenge's spec gives it.")


def create(
    spec: Path = typer.Argument(
        ...,
        help="The challenge's spec: a YAML file, or JSON when its name ends in .json (the fields: "
        "docs/how-to/challenges.md). Checked whole first: one line naming the file and the field when wrong.",
    ),
    db: str = DB_OPTION,
) -> None:
    """Make a challenge and its phases from a spec file; each phase's datasets must be in the store."""
    from nlpbench.platform.challenge_specs import read_spec
    from nlpbench.platform.challenges import create as make

    checked = read_spec(spec)
    store = open_db(db)
    try:
        make(store, checked)
    finally:
        store.close()
    _print_challenge(checked.name, ListFormat.table, db)


def show(challenge: str = CHALLENGE, fmt: ListFormat = FORMAT_OPTION, db: str = DB_OPTION) -> None:
    """A challenge's phases: state now (scheduled, open, closed, frozen), window, tasks, datasets, kinds,
    quota, limits and visibility."""
    _print_challenge(challenge, fmt, db)


def _print_challenge(name: str, fmt: ListFormat, db: str) -> None:
    from nlpbench.platform.challenges import challenge, challenge_json

    with db_session(db, readonly=True) as session:
        data = challenge_json(session, challenge(session, name), datetime.now(UTC))
    if fmt == ListFormat.json:
        return print_json(data)
    typer.echo(f"challenge {data['name']}" + (f": {data['title']}" if data["title"] else ""))
    for phase in data["phases"]:
        typer.echo(f"  phase {phase['name']}: {phase['state']}, {phase['opens']} to {phase['closes']}")
        typer.echo(f"    {_phase_line(phase)}")
    return None


def _phase_line(phase: dict[str, Any]) -> str:
    quota = phase["quota"]
    quota_text = (
        f"{quota['submissions']} per team {'and task ' if quota['perTask'] else ''}per {quota['window']}"
        if quota
        else "no quota"
    )
    limits = phase["limits"]
    return (
        f"tasks {', '.join(phase['tasks'])} on {', '.join(phase['datasets'])}, queue {phase['queue']}, "
        f"accepts {', '.join(phase['kinds'])}; {quota_text}; tools up to {limits['memoryMb']} MiB, "
        f"{limits['cpuSeconds']:g} s CPU, {limits['processes']} processes, {limits['wallSeconds']:g} s; "
        f"{phase['visibility']}{', freezes at close' if phase['freezeAtClose'] else ''}"
    )


def open_phase(
    challenge: str = CHALLENGE,
    phase: str = PHASE,
    until: str | None = typer.Option(
        None,
        "--until",
        help="When it closes: DAYS from now, or an ISO date or time (UTC unless it says); default its closing "
        "time, which must then be later than now.",
    ),
    db: str = DB_OPTION,
) -> None:
    """Open a phase now: it takes submissions until it closes. A frozen phase never opens again."""
    from nlpbench.platform.challenges import open_phase as opened

    moment = datetime.now(UTC)
    closes = future_moment(until, "--until") if until is not None else None
    _moved(lambda store: opened(store, challenge, phase, moment, until=closes), db)


def close_phase(challenge: str = CHALLENGE, phase: str = PHASE, db: str = DB_OPTION) -> None:
    """Close a phase now (and freeze it, if its spec says so): no more submissions; a private or blind phase's
    scores go on the leaderboard. `challenge open` opens it again unless it froze."""
    from nlpbench.platform.challenges import close_phase as closed

    _moved(lambda store: closed(store, challenge, phase, datetime.now(UTC)), db)


def freeze_phase(challenge: str = CHALLENGE, phase: str = PHASE, db: str = DB_OPTION) -> None:
    """Freeze a phase now: closed for good; a later submission is refused, and it never opens again."""
    from nlpbench.platform.challenges import freeze_phase as frozen

    _moved(lambda store: frozen(store, challenge, phase, datetime.now(UTC)), db)


def _moved(move, db: str) -> None:
    from nlpbench.platform.challenges import moment_text
    from nlpbench.platform.visibility import state

    store = open_db(db, create=False)
    try:
        phase = move(store)
    finally:
        store.close()
    now = datetime.now(UTC)
    typer.echo(
        f"phase {phase.name}: {state(phase, now)}, {moment_text(phase.opens_at)} to {moment_text(phase.closes_at)}"
    )


def leaderboard(
    challenge: str = CHALLENGE,
    phase: str = PHASE,
    team: str | None = typer.Option(
        None, "--as-team", help="Show it as this team sees it (a private or blind phase hides scores until it closes)."
    ),
    fmt: ListFormat = FORMAT_OPTION,
    db: str = DB_OPTION,
) -> None:
    """A phase's leaderboard: per task and column, each team's best scored submission with its 95 % interval."""
    from nlpbench.platform.challenges import leaderboard as board
    from nlpbench.platform.challenges import phase as find
    from nlpbench.platform.keys import Caller

    viewer = Caller("team", team) if team is not None else Caller("organiser", None)
    with db_session(db, readonly=True) as session:
        data = board(session, find(session, challenge, phase), viewer, datetime.now(UTC))
    if fmt == ListFormat.json:
        return print_json(data)
    if data["scoresHidden"]:
        typer.echo(f"phase {data['phase']} is {data['visibility']}: scores are the organisers' until it closes")
        for row in data["submissions"]:
            typer.echo(f"{row['id']:>6}  {row['status']:<10} {row['team']:<16} {row['task']:<12} {row['dataset']}")
        return None
    row_format = "{:<12} {:<20} {:<16} {:<24} {:<24} {}"
    typer.echo(row_format.format("task", "column", "team", "tool", "value [95 % interval]", "submission"))
    for row in data["rows"]:
        interval = f"[{row['low']:.4f}, {row['high']:.4f}]" if row["low"] is not None else ""
        value = f"{row['value']:.4f} {interval}"
        typer.echo(row_format.format(row["task"], row["column"], row["team"], row["tool"], value, row["submission"]))
    return None


def team(
    name: str = typer.Argument(..., help="The team's name, as its key and its submissions give it."),
    contact: str = typer.Option(..., "--contact", help="How to reach its members (shown to organisers only)."),
    affiliation: str = typer.Option("", "--affiliation", help="Its members' institution (shown to everyone)."),
    db: str = DB_OPTION,
) -> None:
    """Register a team (or update what it gave): only a registered team submits to a challenge's phases."""
    from nlpbench.platform.teams import register

    store = open_db(db)
    try:
        made = register(store, name, affiliation=affiliation, contact=contact)
    finally:
        store.close()
    typer.echo(f"team {made.name} registered" + (f" ({made.affiliation})" if made.affiliation else ""))


def teams(fmt: ListFormat = FORMAT_OPTION, db: str = DB_OPTION) -> None:
    """For organisers: every registered team with its affiliation and contact."""
    from nlpbench.platform.teams import team_json
    from nlpbench.platform.teams import teams as listed

    with db_session(db, readonly=True) as session:
        rows = [team_json(found, organiser=True) for found in listed(session)]
    if fmt == ListFormat.json:
        return print_json(rows)
    for row in rows:
        typer.echo(f"{row['name']:<20} {row['affiliation']:<30} {row['contact']}")
    return None


def add_commands(app: typer.Typer) -> None:
    group = typer.Typer(
        help="Challenges: phases with their tasks, datasets, windows, quotas, limits and visibility; "
        "create from a spec, show, open, close, freeze, a phase's leaderboard; register teams."
    )
    group.command("create")(create)
    group.command("show")(show)
    group.command("open")(open_phase)
    group.command("close")(close_phase)
    group.command("freeze")(freeze_phase)
    group.command("leaderboard")(leaderboard)
    group.command("team")(team)
    group.command("teams")(teams)
    app.add_typer(group, name="challenge", no_args_is_help=True)
