"""The ``nlpbench`` command: one Typer app, a module per group of subcommands.

A run imports only the module of the command it runs (``nlpbench score coref``
never loads the web server or the note generator); help and ``--version`` load
them all, so that every command is listed.

Errors are handled once, here: the root command runs every subcommand through
:func:`nlpbench.cli.common.handled`, which prints an
:class:`~nlpbench.errors.NlpbenchError` as the one line ``nlpbench: error: …``
and exits with its kind's status (2 for every refusal). No command catches
one to print it.
"""

from __future__ import annotations

import functools
import gc
import importlib
import sys
from collections.abc import Sequence
from typing import Any

import typer
from typer.core import TyperGroup

from nlpbench.version import __version__

# command name -> the module of nlpbench.cli that defines it, in the order help lists them
COMMANDS = {
    "score": "score",
    "convert": "data",
    "validate": "data",
    "formats": "data",
    "profiles": "data",
    "synth": "synth",
    "serve": "serve",
    "llm": "llm",
    "annotate": "annotate",
    "demo": "demo",
    "run": "demo",
    "db": "db",
    "dataset": "dataset",
    "datanode": "datanode",
    "submit": "submit",
    "submissions": "submit",
    "worker": "submit",
    "rescore": "submit",
    "challenge": "challenge",
    "site": "site",
    "compare": "compare",
    "leaderboard": "leaderboard",
}
SUMMARY = "Score, run and rank clinical NLP systems with scorers that reproduce the official ones."


def _version(value: bool) -> None:
    if value:
        typer.echo(f"nlpbench {__version__}")
        raise typer.Exit()


def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version."),
) -> None:
    """Score, run and rank clinical NLP systems with scorers that reproduce the official ones."""


class RootGroup(TyperGroup):
    """The ``nlpbench`` command itself: whichever subcommand runs, it runs inside the one error handler."""

    def invoke(self, ctx: Any) -> Any:  # Typer's own (vendored) click.Context
        from nlpbench.cli.common import handled

        return handled(functools.partial(super().invoke, ctx))


def build_app(argv: Sequence[str] | None = None) -> typer.Typer:
    """The app with the commands ``argv`` can reach: the one it names first, or all when it names none."""
    named = next((word for word in argv or () if not word.startswith("-")), None)
    wanted = [COMMANDS[named]] if named in COMMANDS else list(dict.fromkeys(COMMANDS.values()))
    from nlpbench.cli.options import new_spelling

    app = typer.Typer(
        name="nlpbench",
        cls=RootGroup,
        context_settings={"token_normalize_func": new_spelling},
        help=SUMMARY,
        no_args_is_help=True,
        rich_markup_mode="rich",
        pretty_exceptions_enable=False,
        add_completion=False,
    )
    app.callback()(_root)
    for module in wanted:
        importlib.import_module(f"nlpbench.cli.{module}").add_commands(app)
    return app


def __getattr__(name: str) -> typer.Typer:
    """``nlpbench.cli.app``: the whole app, for tests and tools that drive every command in process."""
    if name == "app":
        return build_app()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main() -> None:
    """Run the command ``sys.argv`` names, then leave the objects still alive out of the exit's garbage collections.

    At exit the interpreter collects garbage a few times over every object still alive (the modules, Typer's
    and numpy's among them): 24 to 42 ms after ``score codiesp`` on 250,000 lines on a loaded 2-core
    machine, 10 ms once they are frozen out of the collector (BENCHMARKS.md). What that gives up: the
    finalizers of objects in reference cycles still alive at exit, which Python does not promise to run
    anyway; nlpbench closes what it writes when it writes it, and Python flushes the standard streams and
    runs ``atexit`` handlers either way.
    """
    try:
        build_app(sys.argv[1:])()
    finally:
        gc.freeze()  # the command is over, its output written (whether it succeeded or not)
