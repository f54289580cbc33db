"""``nlpbench demo`` (the embedded benchmark, end to end, here) and ``nlpbench run`` (any tools, any data)."""

from __future__ import annotations

from pathlib import Path

import typer

from nlpbench import formats
from nlpbench.cli.common import fail, one_line_errors, progress, stderr, warn
from nlpbench.errors import collected_warnings
from nlpbench.report.leaderboard import leaderboard, leaderboard_html
from nlpbench.report.render import table_text

BASELINE = "phi"


@one_line_errors
def demo(
    out: Path = typer.Option(
        Path("nlpbench-demo"), "--out", "-o", help="Directory for the dataset, outputs and report."
    ),
    notes: int = typer.Option(0, "--notes", "-n", min=0, help="Use only the first N notes (0: all 300)."),
    tools: str = typer.Option(
        None, "--tools", help="Comma-separated annotators to benchmark (default: phi and every installed adapter)."
    ),
    profile: str = typer.Option("standard", "--profile", help="Scoring profile of the span metrics."),
    concurrency: int = typer.Option(8, "--concurrency", "-c", min=1, help="Requests in flight per tool."),
) -> None:
    """Benchmark PHI annotators on the embedded synthetic dataset, through the NLP Sandbox tool API.

    Writes the 300-note dataset, starts each annotator as an HTTP service on
    localhost, sends it every note, scores its dates, person names,
    locations, ids and contacts with every span metric, prints a leaderboard
    and writes an HTML report with per-type breakdowns and errors in context.
    """
    from nlpbench import annotators, synth  # the rules and Faker load only when the demo runs
    from nlpbench.runner.services import local_tools

    names = [name.strip() for name in tools.split(",")] if tools else [BASELINE, *annotators.installed_adapters()]
    unknown = [name for name in names if name not in annotators.load_all()]
    if unknown:
        raise fail(f"unknown annotator {unknown[0]!r}; known: {', '.join(annotators.load_all())}")
    dataset = synth.embedded()[: notes or None]
    stderr().print(f"dataset: {len(dataset)} notes of nlpbench's embedded synthetic set", markup=False)
    with local_tools(names, out / "logs") as urls:
        _benchmark(
            urls, dataset, out, profile, concurrency, f"{len(dataset)} notes of nlpbench's embedded synthetic set"
        )


@one_line_errors
def run(
    notes: str = typer.Option(
        ...,
        "--notes",
        "-n",
        help="The dataset, notes with their texts and gold annotations: a file, or a data node's FHIR store URL.",
    ),
    tool: list[str] = typer.Option(..., "--tool", "-t", help="NAME=URL of an NLP Sandbox tool; repeat for several."),
    notes_format: str = typer.Option(
        "sandbox-bundles", "--notes-format", help="Format of --notes (see `nlpbench formats`); it must carry texts."
    ),
    out: Path = typer.Option(Path("nlpbench-run"), "--out", "-o", help="Directory for the outputs and the report."),
    profile: str = typer.Option("standard", "--profile", help="Scoring profile of the span metrics."),
    concurrency: int = typer.Option(8, "--concurrency", "-c", min=1, help="Requests in flight per tool."),
) -> None:
    """Benchmark running NLP Sandbox tools on a dataset: annotate, score, rank, report.

    Every tool gets every note of --notes through the tool API; its dates,
    person names, locations, ids and contacts are scored against the notes'
    own annotations with every span metric. Prints a leaderboard and writes
    an HTML report, as `nlpbench demo` does on the embedded dataset. With
    --notes http://HOST/api/v1/datasets/D/fhirStores/evaluation the notes come
    from an NLP Sandbox data node and the gold from the dataset's annotation
    store goldstandard.
    """
    from nlpbench.formats.datanode import open_notes  # httpx loads only when used

    urls = dict(_name_and_url(given) for given in tool)
    with collected_warnings() as warnings:
        dataset = list(open_notes(notes, notes_format).documents(gold=True))
    warn(warnings)
    if not dataset:
        raise fail(f"{notes}: no notes")
    _benchmark(urls, dataset, out, profile, concurrency, f"{len(dataset)} notes of {notes}")


def _name_and_url(given: str) -> tuple[str, str]:
    name, _, url = given.partition("=")
    if not name or not url.startswith(("http://", "https://")):
        raise fail(f"--tool {given!r}: give NAME=URL, e.g. phi=http://127.0.0.1:8080")
    return name, url


def _benchmark(urls: dict[str, str], dataset: list, out: Path, profile: str, concurrency: int, described: str) -> None:
    """Send ``dataset`` to each tool, score it, print the leaderboards and write the report into ``out``."""
    from nlpbench.runner.benchmark import PHI_LABELS, run_tool  # httpx and pydantic load only when used

    out.mkdir(parents=True, exist_ok=True)
    for note in dataset:
        note.annotations = [a for a in note.annotations if a.label in PHI_LABELS]
    gold = out / "gold.json"
    formats.get("sandbox").write(dataset, gold)
    formats.get("sandbox-bundles").write(dataset, out / "notes.json")
    stderr().print(f"tools: {', '.join(f'{name} at {url}' for name, url in urls.items())}", markup=False)
    results = []
    with collected_warnings() as warnings:
        for name, url in urls.items():
            with progress(f"annotating with {name}", len(dataset)) as tick:
                results.append(
                    run_tool(name, url, dataset, gold, out, profile=profile, concurrency=concurrency, on_note=tick)
                )
    for result in results:
        warn([f"{result.name}: {message}" for message in result.warnings])
    warn(warnings)
    reports = {result.name: result.reports for result in results}
    speed = {result.name: {"notes_per_second": round(result.notes_per_second, 1)} for result in results}
    boards = {
        f"{metric} F1 ({profile})": leaderboard(reports, metric, speed) for metric in ("token", "instance_strict")
    }
    for title, rows in boards.items():
        typer.echo(table_text(title, rows))
    details = {"dataset": described, "profile": profile, "tools": ", ".join(result.tool for result in results)}
    texts = {note.id: note.text or "" for note in dataset}
    page = out / "report.html"
    page.write_text(leaderboard_html("nlpbench: PHI annotators", boards, reports, texts, details), encoding="utf-8")
    typer.echo(f"report: {page}")


def add_commands(app: typer.Typer) -> None:
    app.command("demo")(demo)
    app.command("run")(run)
