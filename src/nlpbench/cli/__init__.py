"""The ``nlpbench`` command: one Typer app, a module per group of subcommands."""

from __future__ import annotations

import typer

from nlpbench import __version__
from nlpbench.cli import annotate, data, demo, score, serve, synth

app = typer.Typer(
    name="nlpbench",
    help="Score, run and rank clinical NLP systems with scorers that reproduce the official ones.",
    no_args_is_help=True,
    rich_markup_mode="rich",
    pretty_exceptions_enable=False,
    add_completion=False,
)
app.add_typer(score.app, name="score")
data.add_commands(app)
synth.add_commands(app)
serve.add_commands(app)
annotate.add_commands(app)
demo.add_commands(app)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"nlpbench {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version."),
) -> None:
    """Score, run and rank clinical NLP systems with scorers that reproduce the official ones."""


def main() -> None:
    app()
