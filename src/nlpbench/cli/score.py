"""``nlpbench score TASK``: one subcommand per scoring task."""

from __future__ import annotations

from enum import Enum
from importlib import resources
from pathlib import Path

import typer

from nlpbench import profiles
from nlpbench.cli.common import FORMAT_OPTION, OUTPUT_OPTION, OutputFormat, emit, fail, one_line_errors, progress
from nlpbench.model import PHI_TYPES
from nlpbench.tasks.coref import score_coref
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


@app.command("coref")
@one_line_errors
def coref(
    key: Path = typer.Option(..., "--key", "-k", help="Gold clusters (CoNLL-2012 unless --key-format)."),
    response: Path = typer.Option(..., "--response", "-r", help="System clusters (the key's format unless told)."),
    profile: str = typer.Option("standard", "--profile", help=f"Scoring rules: {', '.join(profiles.names('coref'))}."),
    key_format: str = typer.Option("conll2012", "--key-format", help="Format of --key: conll2012, jsonl, omin-csv."),
    response_format: str = typer.Option(
        None, "--response-format", help="Format of --response (default: --key-format)."
    ),
    remove_singletons: bool = typer.Option(
        False, "--remove-singletons", help="Score without clusters of one mention, on both sides."
    ),
    remove_nested: bool = typer.Option(
        False,
        "--remove-nested",
        help="Drop each mention that lies inside another mention of its own cluster, on both sides.",
    ),
    id_column: str = typer.Option(
        None, "--id-column", help="omin-csv response: the document id column (found by name otherwise: c5_id, c5, …)."
    ),
    clusters_column: str = typer.Option(
        None, "--clusters-column", help="omin-csv response: the clusters column (found by name otherwise: corefs, …)."
    ),
    fmt: OutputFormat = FORMAT_OPTION,
    output: Path = OUTPUT_OPTION,
) -> None:
    r"""Coreference: mention identification, MUC, B³, CEAFm, CEAFe, BLANC, LEA and the CoNLL score.

    Profiles: [bold]standard[/] (the published definitions on clean clusters),
    [bold]conll2012[/] (the reference Perl scorer v8.01 and its LEA branch exactly),
    [bold]e2e[/] (e2e-coref / corefeval, the OMIn / trusted_ke scorer). Formats:
    CoNLL-2012 (coreference in the last column, every part a document), e2e
    jsonlines (doc_key, clusters of inclusive \[start, end]; a response's
    predicted_clusters are read when present), omin-csv (an id column and
    Python-literal cluster lists). Counts are summed over the key's documents.
    """
    with progress("scoring") as tick:
        report = score_coref(
            key,
            response,
            profile=profile,
            key_format=key_format,
            response_format=response_format,
            remove_singletons=remove_singletons,
            remove_nested=remove_nested,
            id_column=id_column,
            clusters_column=clusters_column,
            on_document=tick,
        )
    emit(report, fmt, output)
