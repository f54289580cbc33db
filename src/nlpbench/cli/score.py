"""``nlpbench score TASK``: one subcommand per scoring task."""

from __future__ import annotations

from datetime import datetime
from enum import Enum
from importlib import resources
from pathlib import Path

import typer

from nlpbench import profiles
from nlpbench.cli.common import FORMAT_OPTION, OUTPUT_OPTION, OutputFormat, emit, fail, one_line_errors, progress
from nlpbench.metrics.timex import Mode
from nlpbench.model import PHI_TYPES
from nlpbench.tasks.sandbox import score_sandbox
from nlpbench.tasks.timelines import score_timelines

app = typer.Typer(help="Score system output against gold.", no_args_is_help=True)

AnnotationType = Enum("AnnotationType", {name: name for name in PHI_TYPES if name != "covid_symptom"}, type=str)


def example_file(name: str) -> Path:
    """A file of the example gold/prediction pair shipped with nlpbench."""
    return Path(str(resources.files("nlpbench.data") / "examples" / name))


@app.command("sandbox")
@one_line_errors
def sandbox(
    gold: Path = typer.Option(None, "--gold", "-g", help="Gold annotations (NLP Sandbox JSON unless --gold-format)."),
    pred: Path = typer.Option(
        None, "--pred", "-p", help="Predicted annotations (NLP Sandbox JSON unless --pred-format)."
    ),
    annotation_type: AnnotationType = typer.Option(
        "location", "--annotation-type", "-t", help="Which annotations to score."
    ),
    profile: str = typer.Option("standard", "--profile", help=f"Scoring rules: {', '.join(profiles.names('spans'))}."),
    relax: int = typer.Option(2, "--relax", min=0, help="Length difference instance_relax accepts."),
    errors: int = typer.Option(0, "--errors", min=0, help="List up to N false positives and N false negatives."),
    gold_format: str = typer.Option("sandbox", "--gold-format", help="Format of --gold (see `nlpbench formats`)."),
    pred_format: str = typer.Option("sandbox", "--pred-format", help="Format of --pred."),
    example: bool = typer.Option(False, "--example", help="Score the example pair shipped with nlpbench."),
    fmt: OutputFormat = FORMAT_OPTION,
    output: Path = OUTPUT_OPTION,
) -> None:
    """PHI span annotation as the NLP Sandbox scored it: instance strict and relaxed, token, type.

    Profiles: [bold]standard[/] (one-to-one matching, whitespace tokens, unrounded),
    [bold]nlpsandbox[/] (nlpsandbox-client 4.3.1 exactly), [bold]nlpsandbox-legacy[/]
    (the scorer before 2022).
    """
    if example:
        gold, pred = example_file("gold.json"), example_file("pred.json")
    if gold is None or pred is None:
        raise fail("give --gold and --pred, or --example")
    with progress("scoring") as tick:
        report = score_sandbox(
            gold,
            pred,
            annotation_type.value,
            profile=profile,
            relax=relax,
            errors=errors,
            gold_format=gold_format,
            pred_format=pred_format,
            on_document=tick,
        )
    emit(report, fmt, output)


@app.command("timelines")
@one_line_errors
def timelines(
    gold: Path = typer.Option(
        ...,
        "--gold",
        "-g",
        help="Gold timelines: a JSON object from patient id to a list of (chemo, label, date) triples.",
    ),
    pred: Path = typer.Option(
        ..., "--pred", "-p", help="Predicted timelines, the same JSON (convert system TSV with `nlpbench convert`)."
    ),
    all_ids: Path = typer.Option(..., "--all-ids", help="Every patient id, one per line."),
    gold_ids: Path = typer.Option(
        None, "--gold-ids", help="Score only these patients (the manually annotated ones), one id per line."
    ),
    mode: Mode = typer.Option(..., "--mode", "-m", help="strict, or relaxed to the day, month or year."),
    profile: str = typer.Option(
        "standard", "--profile", help=f"Scoring rules: {', '.join(profiles.names('timelines'))}."
    ),
    reference_date: datetime = typer.Option(
        None,
        "--reference-date",
        formats=["%Y-%m-%d"],
        help="The day that completes dates without day, month or year under chemotimelines2024, "
        "as eval_timeline.py completes them from the day it runs. Default: today.",
    ),
    fmt: OutputFormat = FORMAT_OPTION,
    output: Path = OUTPUT_OPTION,
) -> None:
    """Patient treatment timelines as ChemoTimelines 2024 scored them: micro, Type A, Type B and official.

    Every predicted patient among the gold ids (all gold patients without
    --gold-ids) is scored; Type A averages over them, Type B over those with
    gold tuples, and official = (Type A F1 + Type B F1) / 2.

    Profiles: [bold]standard[/] (ISO 8601 date intervals that match when they
    share a day, month or year; case-insensitive labels; ids checked by id),
    [bold]chemotimelines2024[/] (eval_timeline.py exactly: dateutil dates
    completed from --reference-date, %W weeks, count checks, the official score
    in strict mode only).
    """
    with progress("scoring") as tick:
        report = score_timelines(
            gold,
            pred,
            all_ids,
            gold_ids=gold_ids,
            mode=mode,
            profile=profile,
            reference_date=reference_date.date() if reference_date else None,
            on_document=tick,
        )
    emit(report, fmt, output)
