"""``nlpbench demo``: the embedded benchmark, end to end, on this machine."""

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
    from nlpbench import annotators, synth  # rules, Faker, httpx and pydantic load only when the demo runs
    from nlpbench.runner.benchmark import PHI_LABELS, run_tool
    from nlpbench.runner.services import local_tools

    names = [name.strip() for name in tools.split(",")] if tools else [BASELINE, *annotators.installed_adapters()]
    unknown = [name for name in names if name not in annotators.load_all()]
    if unknown:
        raise fail(f"unknown annotator {unknown[0]!r}; known: {', '.join(annotators.load_all())}")
    out.mkdir(parents=True, exist_ok=True)
    dataset = synth.embedded()[: notes or None]
    for note in dataset:
        note.annotations = [a for a in note.annotations if a.label in PHI_LABELS]
    gold = out / "gold.json"
    formats.get("sandbox").write(dataset, gold)
    formats.get("sandbox-bundles").write(dataset, out / "notes.json")
    stderr.print(f"dataset: {len(dataset)} synthetic notes, gold annotations in {gold}", markup=False)
    results = []
    with collected_warnings() as warnings, local_tools(names, out / "logs") as urls:
        stderr.print(f"tools: {', '.join(f'{name} at {url}' for name, url in urls.items())}", markup=False)
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
    details = {
        "dataset": f"{len(dataset)} notes of nlpbench's embedded synthetic set",
        "profile": profile,
        "tools": ", ".join(result.tool for result in results),
    }
    page = out / "report.html"
    texts = {note.id: note.text or "" for note in dataset}
    page.write_text(
        leaderboard_html("nlpbench demo: PHI annotators", boards, reports, texts, details), encoding="utf-8"
    )
    typer.echo(f"report: {page}")


def add_commands(app: typer.Typer) -> None:
    app.command("demo")(demo)
