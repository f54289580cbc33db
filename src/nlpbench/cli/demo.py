"""``nlpbench demo`` (the embedded benchmark through the platform, here) and ``nlpbench run`` (any tools, any data)."""

from __future__ import annotations

import functools
import html
import posixpath
import re
import urllib.parse
from pathlib import Path

import typer

from nlpbench import files, formats, profiles
from nlpbench.cli import options
from nlpbench.cli.annotate import stopped
from nlpbench.cli.common import choices, fail, progress, stderr, store_file, warn
from nlpbench.cli.serve import listen
from nlpbench.errors import collected_warnings
from nlpbench.report.leaderboard import leaderboard, leaderboard_html
from nlpbench.report.render import table_text

BASELINE = "phi"
#: The demo's dataset at its sites, the task its tools are submitted to, and their queue at the centre.
DATASET, TASK, QUEUE = "synthetic", "phi", "demo"
#: The demo's data sites: each holds a share of the embedded notes, in its own store, and runs the tools there.
SITES = ("north", "south")
TITLE = "nlpbench demo leaderboard"
#: The script inlined into every page of the static site: its tables sort (click a heading) and filter (type
#: in the box above) in the browser, as the served site's query parameters would.
OFFLINE_SCRIPT = Path(__file__).resolve().parent.parent / "web" / "offline" / "tables.js"


def demo(
    out: Path = options.output_option(
        Path("nlpbench-demo"), "Directory for the centre's store, the sites' stores (sites/) and the static pages."
    ),
    notes: int = typer.Option(0, "--notes", "-n", min=0, help="Use only the first N notes (0: all 300)."),
    tools: str = typer.Option(
        None, "--tools", help="Comma-separated annotators to benchmark (default: phi and every installed adapter)."
    ),
    profile: str = typer.Option(
        "standard", "--profile", metavar=choices(profiles.names("spans")), help="Scoring profile of the span metrics."
    ),
    concurrency: int = options.CONCURRENCY_OPTION,
    serve: bool = typer.Option(
        True, "--serve/--no-serve", help="Serve the leaderboard, or write it as static pages to OUT/site and exit."
    ),
    port: int = typer.Option(0, "--port", min=0, max=65535, help="The leaderboard's port (0: any free port)."),
) -> None:
    """Benchmark PHI annotators on the embedded synthetic dataset at two data sites, then show the leaderboard.

    The embedded 300 synthetic notes, with their gold, are split between two
    data sites on this machine (north and south: OUT/sites/NAME.db, their notes
    never in the centre's store, OUT/nlpbench.db; both made anew each run). Each
    annotator is submitted once to the centre, as a command; each site runs it
    in its sandbox on its own notes (validation, annotation, scoring) and sends
    back per-document counts only; the centre pools them. Prints each PHI type's
    token F1 with its 95 % interval (stratified by site) and rank group, and
    each site's own overall F1; then serves the leaderboard (a column per site
    beside the pooled score) or writes it as static pages.
    """
    from nlpbench import annotators, synth  # the rules and Faker load only when the demo runs
    from nlpbench.cli.db import open_db

    names = [name.strip() for name in tools.split(",")] if tools else [BASELINE, *annotators.installed_adapters()]
    unknown = [name for name in names if name not in annotators.load_all()]
    if unknown:
        raise fail(_unknown_tool(unknown[0]))
    if 0 < notes < len(SITES):
        raise fail(f"--notes {notes}: at least {len(SITES)}, a note for each data site")
    if serve:  # a busy port fails now, not after minutes of benchmark
        listen("127.0.0.1", port).close()
    database = out / "nlpbench.db"
    stores = {name: out / "sites" / f"{name}.db" for name in SITES}
    files.refuse_inputs({"the store": store_file(None)}, {"--output's store": database})  # rebuilt, never the user's
    dataset = synth.embedded()[: notes or None]
    (out / "sites").mkdir(parents=True, exist_ok=True)
    for path in (database, *stores.values()):
        path.unlink(missing_ok=True)
    url = f"sqlite:///{database}"
    store = open_db(url)
    try:
        _at_sites(store, {name: open_db(f"sqlite:///{path}") for name, path in stores.items()}, dataset, names,
                  profile, concurrency)  # fmt: skip
        typer.echo(table_text(f"token F1 ({profile}), 95 % intervals, rank groups", _ranked(store)))
        typer.echo(table_text("overall token F1 at each site (its own notes), 95 % intervals", _by_site(store)))
        if not serve:
            typer.echo(f"leaderboard: {_write_site(store, out / 'site')}")
    finally:
        store.close()
    if serve:
        from nlpbench.cli.leaderboard import serve as serve_leaderboard

        serve_leaderboard(
            db=url,
            host="127.0.0.1",
            port=port,
            pick="best",
            title=TITLE,
            baseline=[BASELINE],
            log_level=options.LogLevel.warning,
        )


def _at_sites(store, sites: dict, dataset: list, names: list[str], profile: str, concurrency: int) -> None:
    """Import each site's share of ``dataset``, register the sites at the centre ``store``, submit each tool as a
    command, and run every site until the centre has no run left; the site stores are closed on the way out."""
    import sys

    from nlpbench.cli.dataset import import_documents, report
    from nlpbench.cli.local_sites import SITE_QUEUE, centre_served, serve_sites
    from nlpbench.platform.queue import Request, configure_queue, submit
    from nlpbench.platform.sites import add_site

    try:
        keys = {}
        share = -(-len(dataset) // len(sites))
        for position, (name, site) in enumerate(sites.items()):
            notes = dataset[position * share : (position + 1) * share]
            described = f"site {name}'s share of the synthetic notes nlpbench ships"
            imported = import_documents(site, DATASET, notes, "synth", description=described, public=True,
                                        subset=min(len(notes), 5))  # fmt: skip
            typer.echo(f"site {name}:")
            report(DATASET, imported)
            # synthetic notes: where no sandbox is installed, the weaker fallback may run the tools on them
            configure_queue(site, SITE_QUEUE, concurrency=concurrency, weak_sandbox=True)
            with store.session() as session:
                key = add_site(session, name, [DATASET])
            assert key is not None  # the centre's store is new: so is the site
            keys[name] = key
        configure_queue(store, QUEUE, profile=profile)
        for name in names:
            command = f"{sys.executable} -m nlpbench serve --annotator {name} --port 8080"
            request = Request(team=name, task=TASK, dataset=DATASET, queue=QUEUE, command=command)
            stderr().print(f"submission {submit(store, request)}: {name}, run at {', '.join(sites)}", markup=False)
        with centre_served(store) as central:
            said = functools.partial(stderr().print, markup=False)
            serve_sites({name: (site, keys[name]) for name, site in sites.items()}, central, said)
    finally:
        for site in sites.values():
            site.close()


def _ranked(store) -> list[dict]:
    """A row per column (the overall value, then each PHI type) and tool of the demo's task table, by rank group,
    with the tool's interval."""
    from nlpbench.web import board

    with store.session(readonly=True) as session:
        table = board.task_table(session, TASK)
        rows = []
        for column in table.columns:
            cells = [(line.team, line.tool, line.cells[column]) for line in table.lines if column in line.cells]
            for team, tool, cell in sorted(cells, key=lambda found: (found[2].rank, -found[2].value)):
                rows.append(
                    {"type": cell.annotation_type, "rank": cell.rank, "annotator": team, "tool": tool,
                     "token F1": round(cell.value, 4),
                     "95 % low": cell.low and round(cell.low, 4), "95 % high": cell.high and round(cell.high, 4),
                     "submission": cell.submission.id}
                )  # fmt: skip
    return rows


def _by_site(store) -> list[dict]:
    """A row per tool and site: the site's own overall token F1 (its notes only) with its interval."""
    from sqlalchemy import select

    from nlpbench.platform.at_sites import site_columns
    from nlpbench.platform.overall import OVERALL
    from nlpbench.store.submissions import Submission

    with store.session(readonly=True) as session:
        teams = {sid: team for sid, team in session.execute(select(Submission.id, Submission.team))}
        found = site_columns(session, sorted(teams))
    return [
        {"annotator": teams[submission], "site": c.site, "token F1": round(c.value, 4),
         "95 % low": c.low and round(c.low, 4), "95 % high": c.high and round(c.high, 4), "notes": c.documents}
        for submission, columns in sorted(found.items())
        for c in columns
        if c.annotation_type == OVERALL
    ]  # fmt: skip


def _write_site(store, site: Path) -> Path:
    """The leaderboard's pages (and their CSV and JSON twins) as files linked to each other; the home page's path.

    Every page the home page leads to is requested from the site's app in
    process, each variant a link selects by query (a task table's pick, its
    rows of every submission) as a file of its own; links become relative ones
    to the written files, and each page gets :data:`OFFLINE_SCRIPT` inline, so
    that its tables sort and filter without a server.
    """
    import asyncio

    return asyncio.run(_crawl(store, site))


#: A link of a written page to the site (an absolute path, a query on the page itself, or both, then perhaps a
#: fragment): its path, query and fragment. A link to another host (``//host``, ``https:``) is left as it is.
LINK = re.compile(r'((?:href|src)=")(/(?!/)[^"?#]*)?(\?[^"#]*)?(#[^"]*)?(")')
#: A task page's rows: a team's each (the page itself) or every submission (its forest plot's ``rows=all``).
ROWS = ("teams", "all")


def _selecting(pick: str) -> dict[str, tuple[str, ...]]:
    """The query parameters that select what a page shows, each with its values, the page's own first (``pick``,
    the site's setting; a row per team): each other value is a variant written as a file of its own, the value
    suffixed to its name (:func:`_file_of`). The other parameters (sort, order) the offline script does in the page."""
    from nlpbench.web.board import PICKS

    return {"pick": (pick, *(other for other in PICKS if other != pick)), "rows": ROWS}


def _target(found: re.Match, page: str, selecting: dict[str, tuple[str, ...]]) -> str | None:
    """The URL a link ``found`` on ``page`` (a path) selects: its path (``page`` for a query alone) with the
    selecting parameters of its query that differ from their first value, in :func:`_selecting`'s order; None
    for a link to a fragment of the page alone."""
    path, query = found.group(2, 3)
    if path is None and query is None:
        return None
    given = urllib.parse.parse_qs(html.unescape(query or "?")[1:])
    chosen = []
    for name, values in selecting.items():
        value = given.get(name, values[:1])[-1]
        if value not in values:
            raise fail(f"leaderboard link {found.group(0)!r}: no static page for {name}={value!r}")
        if value != values[0]:
            chosen.append(f"{name}={value}")
    return (html.unescape(path) if path else page) + ("?" + "&".join(chosen) if chosen else "")


def _file_of(url: str) -> str:
    """Where the page at ``url`` (a path with the query of :func:`_target`) is written, relative to the site: ``/``
    as index.html, a page without a suffix as PATH.html, a variant with each selected value suffixed to its name
    (``/tasks/phi?pick=latest&rows=all`` as tasks/phi-latest-all.html, ``/tasks/phi.csv?pick=latest`` as
    tasks/phi-latest.csv); never outside the site."""
    path, _, query = url.partition("?")
    stem, suffix = posixpath.splitext(urllib.parse.unquote(path).strip("/") or "index")
    name = posixpath.normpath(
        stem + "".join(f"-{value}" for _, value in urllib.parse.parse_qsl(query)) + (suffix or ".html")
    )
    if name == ".." or name.startswith(("../", "/")):
        raise fail(f"leaderboard link {url!r}: outside the site")
    return name


def _pointed(found: re.Match, targets: dict[str, str | None], here: str) -> str:
    """A link ``found`` on a page written in directory ``here`` pointing at the written file of its target in
    ``targets`` (by the link's text), its fragment kept; as it was without a target."""
    target = targets[found.group(0)]
    if target is None:
        return found.group(0)
    relative = urllib.parse.quote(posixpath.relpath(_file_of(target), here))
    return f"{found.group(1)}{relative}{found.group(4) or ''}{found.group(5)}"


async def _crawl(store, site: Path) -> Path:
    import httpx

    from nlpbench.web.app import Settings, create_app

    script = OFFLINE_SCRIPT.read_text(encoding="utf-8")  # sorting and filtering without a server
    settings = Settings(title=TITLE, baselines=(BASELINE,))  # the rules, submitted as team phi
    selecting = _selecting(settings.pick)
    app = create_app(store, settings)
    # each URL is a page's path with its selecting query: finitely many, each fetched and written once, to its file
    seen, waiting = {"/"}, ["/"]
    written: dict[str, str] = {}  # each file's URL
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://demo") as client:
        while waiting:
            url = waiting.pop()
            name = _file_of(url)
            if written.setdefault(name, url) != url:
                raise fail(f"leaderboard pages {written[name]!r} and {url!r}: both would be {name!r}")
            answer = await client.get(url)
            if answer.status_code != 200:
                raise fail(f"leaderboard page {url!r}: status {answer.status_code}")
            (site / name).parent.mkdir(parents=True, exist_ok=True)
            if not answer.headers["content-type"].startswith("text/html"):
                files.write_bytes(site / name, answer.content)
                continue
            page = url.partition("?")[0]
            targets = {found.group(0): _target(found, page, selecting) for found in LINK.finditer(answer.text)}
            links = [target for target in dict.fromkeys(targets.values()) if target is not None]
            waiting += [target for target in links if target not in seen]
            seen.update(links)
            here = posixpath.dirname(name) or "."
            text = LINK.sub(functools.partial(_pointed, targets=targets, here=here), answer.text)
            files.write_text(site / name, text.replace("</body>", f"<script>{script}</script>\n</body>", 1))
    return site / "index.html"


def _unknown_tool(name: str) -> str:
    """Why ``name`` cannot run: an adapter whose extra is not installed, or no such annotator."""
    from nlpbench import annotators
    from nlpbench.annotators.adapters import EXTRAS

    if name in EXTRAS:
        return f"annotator {name!r} needs its package: pip install 'nlpbench[{EXTRAS[name]}]'"
    return f"unknown annotator {name!r}; known: {', '.join(annotators.load_all())}"


def run(
    notes: str = typer.Option(
        ...,
        "--notes",
        "-n",
        help="The dataset, notes with their texts and gold annotations: a file, or a data node's FHIR store URL.",
    ),
    tool: list[str] = typer.Option(..., "--tool", help="NAME=URL of an NLP Sandbox tool; repeat for several."),
    notes_format: str = typer.Option(
        "sandbox-bundles", "--notes-format", help="Format of --notes (see `nlpbench formats`); it must carry texts."
    ),
    out: Path = options.output_option(Path("nlpbench-run"), "Directory for the outputs and the report."),
    profile: str = typer.Option(
        "standard", "--profile", metavar=choices(profiles.names("spans")), help="Scoring profile of the span metrics."
    ),
    concurrency: int = options.CONCURRENCY_OPTION,
    timeout: float = options.TIMEOUT_OPTION,
    retries: int = options.RETRIES_OPTION,
    max_response_bytes: int = options.MAX_RESPONSE_BYTES_OPTION,
    max_annotations: int = options.MAX_ANNOTATIONS_OPTION,
    restart: bool = typer.Option(False, "--restart", help="Start every tool's checkpoint again, whatever it holds."),
    show_text: bool = options.SHOW_TEXT_OPTION,
) -> None:
    """Benchmark running NLP Sandbox tools on a dataset: annotate, score, rank, report.

    Every tool gets every note of --notes through the tool API and is scored
    on the types its GET /tool type serves (dates only for a date annotator)
    against the notes' own annotations, with every span metric. A tool that
    fails is reported as failed and the others go on; each tool's finished
    notes are checkpointed in --output, so the same command resumes. Prints a
    leaderboard and writes an HTML report, as `nlpbench demo` does on the
    embedded dataset. With --notes http://HOST/api/v1/datasets/D/fhirStores/evaluation
    the notes come from an NLP Sandbox data node and the gold from the
    dataset's annotation store goldstandard (written to --output as gold.json).
    """
    from nlpbench.runner.benchmark import RunSettings
    from nlpbench.runner.client import MAX_ANNOTATIONS, MAX_RESPONSE_BYTES
    from nlpbench.runner.sources import open_notes

    source = open_notes(notes, notes_format, timeout=timeout, retries=retries)
    urls = _tools(tool)
    written = [out / f"{name}{suffix}" for name in urls for suffix in (".json", ".checkpoint.jsonl")]
    files.refuse_inputs({"--notes": source.path}, [("--output", path) for path in [*written, out / "report.html"]])
    with collected_warnings() as warnings:
        dataset = list(source.documents(gold=True))
    warn(warnings)
    if not dataset:
        raise fail(f"{notes}: no notes")
    settings = RunSettings(
        concurrency=concurrency,
        timeout=timeout,
        retries=retries,
        max_response_bytes=max_response_bytes or MAX_RESPONSE_BYTES,
        max_annotations=max_annotations or MAX_ANNOTATIONS,
        restart=restart,
        show_text=show_text,
    )
    out.mkdir(parents=True, exist_ok=True)
    if source.path is None:  # scoring reads the gold from a file
        gold = (out / "gold.json", "sandbox")
        formats.get("sandbox").write(dataset, gold[0])
    else:
        gold = (source.path, notes_format)
    _benchmark(
        urls,
        dataset,
        gold,
        out,
        profile,
        settings,
        f"{len(dataset)} notes of {notes}",
        show_text=show_text,
    )


def _tools(given: list[str]) -> dict[str, str]:
    """``{NAME: URL}`` of the --tool options: names that can name files, URLs that reach a tool."""
    from nlpbench.runner.client import ToolError, checked_url

    urls: dict[str, str] = {}
    for one in given:
        name, _, url = one.partition("=")
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,59}", name) or not url:
            raise fail(
                f"--tool {one!r}: give NAME=URL (NAME of letters, digits, . _ -), e.g. phi=http://127.0.0.1:8080"
            )
        if name in urls:
            raise fail(f"--tool {name}: given twice")
        try:
            checked_url(url)
        except ToolError as error:
            raise fail(f"--tool {name}: {error}") from None
        urls[name] = url
    return urls


def _benchmark(
    urls: dict[str, str],
    dataset: list,
    gold: tuple[Path, str],
    out: Path,
    profile: str,
    settings,
    described: str,
    *,
    show_text: bool,
) -> None:
    """Send ``dataset`` to each tool, score it against ``gold`` (path, format), print leaderboards, write the report.

    Exit status 2 with one line when every tool failed; otherwise the failed
    ones are rows of their own, with their reasons below the tables and in the
    report. Each tool's checkpoint is kept until every tool has finished.
    """
    from nlpbench.model.phi import PHI_LABELS
    from nlpbench.report.leaderboard import NOT_SERVED
    from nlpbench.runner.benchmark import run_tool  # httpx and pydantic load only when used
    from nlpbench.runner.client import checked_url
    from nlpbench.runner.output import replaced_atomically

    results = []
    with collected_warnings() as warnings:
        for name, url in urls.items():
            with progress(f"annotating with {name}", len(dataset)) as tick:
                try:
                    results.append(
                        run_tool(
                            name,
                            url,
                            dataset,
                            gold[0],
                            out,
                            gold_format=gold[1],
                            settings=settings,
                            profile=profile,
                            on_note=tick,
                        )
                    )
                except KeyboardInterrupt:
                    kept = f"; finished notes are kept in {out}: run again to resume"
                    raise stopped(KeyboardInterrupt(), kept) from None
    failed = [result for result in results if result.failure]
    checkpoints = any(result.checkpoint.exists() for result in results)
    kept = f"; each tool's finished notes are kept in {out}: run the same command again to resume" * checkpoints
    if len(failed) == len(results):
        raise fail(f"every tool failed: {'; '.join(f'{r.name}: {r.failure}' for r in failed)}{kept}")
    shown = ", ".join(f"{name} at {checked_url(url)}" for name, url in urls.items())  # no password
    stderr().print(f"tools: {shown}", markup=False)
    done = [result for result in results if not result.failure]
    for result in done:
        warn([f"{result.name}: {message}" for message in result.warnings])
    warn(warnings)
    reports = {result.name: result.reports for result in done}
    speed = {result.name: {"notes_per_second": round(result.notes_per_second, 1)} for result in done}
    boards = {
        f"{metric} F1 ({profile})": leaderboard(
            reports, metric, speed, labels=PHI_LABELS, failed=[result.name for result in failed]
        )
        for metric in ("token", "instance_strict")
    }
    for title, rows in boards.items():
        typer.echo(table_text(title, rows))
    notes = [
        f"{result.name}: {result.tool} serves {', '.join(result.labels)} only ({NOT_SERVED}: not served)"
        for result in done
        if len(result.labels) < len(PHI_LABELS)
    ] + [f"{result.name}: failed: {result.failure}" for result in failed]
    for line in notes:
        typer.echo(line)
    details = {"dataset": described, "profile": profile, "tools": ", ".join(result.tool for result in done)}
    if notes:
        details["notes"] = "; ".join(notes)
    texts = {note.id: note.text or "" for note in dataset} if show_text else {}
    page = out / "report.html"
    with replaced_atomically(page) as partial:
        partial.write_text(
            leaderboard_html("nlpbench: PHI annotators", boards, reports, texts, details), encoding="utf-8"
        )
    typer.echo(f"report: {page}")
    if failed:
        stderr().print(f"{len(failed)} of {len(results)} tools failed{kept}", markup=False, soft_wrap=True)
    else:
        for result in results:
            result.checkpoint.unlink(missing_ok=True)


def add_commands(app: typer.Typer) -> None:
    app.command("demo")(demo)
    app.command("run")(run)
