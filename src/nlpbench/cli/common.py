"""What every subcommand shares: one-line errors with exit status 2, output, progress."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from nlpbench.errors import InputError
from nlpbench.registry import UnknownName
from nlpbench.report import Report, render

if TYPE_CHECKING:
    from rich.console import Console


@functools.cache
def stderr() -> Console:
    """Rich's console on standard error (made on first use: scoring commands that print no progress never load Rich)."""
    from rich.console import Console

    return Console(stderr=True, highlight=False)


class OutputFormat(StrEnum):
    table = "table"
    json = "json"
    markdown = "markdown"
    html = "html"


FORMAT_OPTION = typer.Option(OutputFormat.table, "--format", "-f", help="How to print the scores.")
PER_DOCUMENT_OPTION = typer.Option(
    True,
    "--per-document/--no-per-document",
    help="Include per-document rows in JSON output (leave them out to keep memory flat on huge corpora).",
)
OUTPUT_OPTION = typer.Option(None, "--output", "-o", help="Write the report to this file instead of standard output.")


class IntervalMethod(StrEnum):
    bca = "bca"
    percentile = "percentile"


CI_OPTION = typer.Option(
    False, "--ci", help="Add bootstrap confidence intervals (documents resampled; patients for timelines)."
)
CI_METHOD_OPTION = typer.Option(IntervalMethod.bca, "--ci-method", help="Interval of --ci: BCa or percentile.")
CONFIDENCE_OPTION = typer.Option(0.95, "--confidence", min=0.5, max=0.999, help="Confidence level of --ci.")
RESAMPLES_OPTION = typer.Option(10_000, "--resamples", min=100, help="Bootstrap resamples of --ci.")
SEED_OPTION = typer.Option(0, "--seed", help="Seed of the resampling (the same seed gives the same numbers).")


def fail(message: str) -> typer.Exit:
    """Print ``nlpbench: error: MESSAGE`` on standard error; the caller raises the returned exit 2."""
    sys.stderr.write(f"nlpbench: error: {message}\n")
    return typer.Exit(code=2)


def one_line_errors(command: Callable[..., Any]) -> Callable[..., Any]:
    """Turn bad input into one line on standard error and exit status 2, never a traceback."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except (InputError, UnknownName) as error:
            raise fail(str(error)) from None
        except FileNotFoundError as error:
            raise fail(f"{error.filename}: no such file") from None
        except IsADirectoryError as error:
            raise fail(f"{error.filename}: is a directory, not a file") from None
        except PermissionError as error:
            raise fail(f"{error.filename}: permission denied") from None

    return wrapper


def emit(report: Report, fmt: OutputFormat, output: Path | None) -> None:
    """Print or write the report; warnings also go to standard error."""
    text = render(report, fmt.value)
    if output is not None:
        output.write_text(text, encoding="utf-8")
        stderr().print(f"wrote {output}", markup=False)
    else:
        sys.stdout.write(text)
    warn(report.warnings)


def warn(warnings: list[str]) -> None:
    """Print each warning on one line of standard error."""
    for warning in warnings:
        sys.stderr.write(f"warning: {warning}\n")


@contextmanager
def progress(description: str, total: int | None = None) -> Iterator[Callable[..., None]]:
    """A live count of items done, or a bar when ``total`` is known, on standard error when it is a terminal.

    Yields the callback to call once per item (its arguments are ignored).
    """
    if not sys.stderr.isatty():
        yield lambda *_: None
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    if total is None:
        columns = (SpinnerColumn(), TextColumn("{task.description} {task.completed} documents"), TimeElapsedColumn())
    else:
        columns = (
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
        )
    with Progress(*columns, console=stderr(), transient=True) as bar:
        task = bar.add_task(description, total=total)
        yield lambda *_: bar.advance(task)
