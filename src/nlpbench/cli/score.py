"""``nlpbench score TASK``: one subcommand per scoring task."""

from __future__ import annotations

from enum import Enum, StrEnum
from importlib import resources
from pathlib import Path

import typer

from nlpbench import profiles
from nlpbench.cli.common import FORMAT_OPTION, OUTPUT_OPTION, OutputFormat, emit, fail, one_line_errors, progress
from nlpbench.model import PHI_TYPES
from nlpbench.tasks.codiesp import DEFAULT_K, score_codiesp
from nlpbench.tasks.sandbox import score_sandbox

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


class Track(StrEnum):
    D = "D"
    P = "P"
    X = "X"


@app.command("codiesp")
@one_line_errors
def codiesp(
    track: Track = typer.Option(..., "--track", "-t", case_sensitive=False, help="CodiEsp track: D, P or X."),
    gold: Path = typer.Option(
        ..., "--gold", "-g", help="Gold TSV: case, code (D, P); case, label, code, reference, 's e[;s e]' (X)."
    ),
    pred: Path = typer.Option(
        ..., "--pred", "-p", help="Predicted TSV: case, code in rank order (D, P); case, 's e', label, code (X)."
    ),
    valid_codes: list[Path] = typer.Option(
        ..., "--valid-codes", "-c", help="Valid-code list (code in the first column); repeat for X's D and P lists."
    ),
    profile: str = typer.Option(
        "standard", "--profile", help=f"Scoring rules: {', '.join(profiles.names('codiesp'))}."
    ),
    k: list[int] = typer.Option(
        list(DEFAULT_K), "--k", min=1, help="Cutoffs of MAP@k, P@k and R@k (standard, D and P)."
    ),
    fmt: OutputFormat = FORMAT_OPTION,
    output: Path = OUTPUT_OPTION,
) -> None:
    """Clinical coding as CodiEsp 2020 scored it: MAP over ranked codes (D, P), F1 with text references (X).

    Codes compare lower-cased; predicted codes in none of the valid-code lists are removed before ranks
    are counted. Profiles: [bold]standard[/] (MAP over every gold document as trec_eval -c, MAP@k, P@k,
    R@k, code categories), [bold]codiesp2020[/] (the official scripts with trectools 0.0.42 exactly).
    """
    report = score_codiesp(gold, pred, valid_codes, track=track.value, profile=profile, k=k)
    emit(report, fmt, output)
