"""What every subcommand shares: one-line errors (:func:`handled`), output, progress."""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from nlpbench import files
from nlpbench.cli import values
from nlpbench.errors import NlpbenchError
from nlpbench.report import Report, render

if TYPE_CHECKING:
    from rich.console import Console


@functools.cache
def stderr() -> Console:
    """Rich's console on standard error (made on first use: scoring commands that print no progress never load Rich)."""
    from rich.console import Console

    return Console(stderr=True, highlight=False)


def said(line: str) -> None:
    """``line`` on standard error as :func:`stderr` prints it without markup: written as it is when Rich would
    print it unchanged on one line, so that a scoring command that writes its report to a file never loads Rich
    (25 ms of CPU); by Rich otherwise (a line it would wrap, or with an emoji code, a control character or a
    trailing blank)."""
    if len(line) <= _narrowest() and _PRINTABLE.issuperset(line) and not line.endswith(" "):
        sys.stderr.write(line + "\n")
    else:
        stderr().print(line, markup=False)


#: Characters Rich prints as they are: printable ASCII but the colon, which may end an emoji code (``:smile:``).
_PRINTABLE = frozenset(map(chr, range(0x20, 0x7F))) - {":"}


def _narrowest() -> int:
    """No more than the width Rich gives the console: 80 (its default, less one on a legacy Windows console),
    ``$COLUMNS``, or any standard stream's terminal, whichever is least."""
    widths = [79]
    columns = os.environ.get("COLUMNS")
    if columns is not None and columns.isdigit():
        widths.append(int(columns) - 1)
    for descriptor in (0, 1, 2):
        try:
            size = os.get_terminal_size(descriptor).columns
        except (OSError, ValueError):  # not a terminal
            continue
        if size:
            widths.append(size - 1)
    return min(widths)


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
OUTPUT_OPTION = typer.Option(
    None, "--output", "-o", readable=False, help="Write the report to this file instead of standard output."
)


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


#: OpenBLAS's wait before an idle thread of its pool sleeps, as a power of two of CPU cycles: 4, the least it takes.
BLAS_THREAD_TIMEOUT = "4"


@contextmanager
def sleeping_blas_threads() -> Iterator[None]:
    """Within: if numpy loads, its OpenBLAS pool's threads sleep as soon as they are idle, instead of spinning.

    OpenBLAS starts a thread per core when it loads, and each spins for 2^28 cycles (about 0.1 s) waiting
    for work before it sleeps. A score command loads numpy to read and count, with no linear algebra then,
    so the spin only takes a core from it: on 2 cores, ``score codiesp --track X`` on 250,000 lines took
    0.1 s of CPU and 0.06 s of wall time more with it (BENCHMARKS.md). ``OPENBLAS_THREAD_TIMEOUT``
    (2^n cycles) is set when numpy is not loaded yet (OpenBLAS reads it when it loads) and the variable is
    unset (a value the user gives wins), and removed again at the end, so that no process started later
    inherits it. The pool keeps its threads: a matrix product (the bootstrap of ``--ci``) wakes them.
    """
    owned = "numpy" not in sys.modules and "OPENBLAS_THREAD_TIMEOUT" not in os.environ
    if owned:
        os.environ["OPENBLAS_THREAD_TIMEOUT"] = BLAS_THREAD_TIMEOUT
    try:
        yield
    finally:
        if owned:
            os.environ.pop("OPENBLAS_THREAD_TIMEOUT", None)


def fail(message: str) -> NlpbenchError:
    """The error a command raises for ``message``: the root app prints ``nlpbench: error: MESSAGE`` and exits 2."""
    return NlpbenchError(message)


def report_error(error: NlpbenchError) -> typer.Exit:
    """Print ``nlpbench: error: MESSAGE`` on standard error; the exit of the error's kind, for the caller to raise."""
    sys.stderr.write(f"nlpbench: error: {error}\n")
    return typer.Exit(code=error.kind.exit_code)


def handled(run: Callable[[], Any]) -> Any:
    """``run()``, with every :class:`~nlpbench.errors.NlpbenchError` one line and the exit status of its kind.

    An operating-system error on a path (one that names its file) is bad input too: the file, and what is
    wrong with it in a few words (:func:`nlpbench.files.os_error`). Anything else is a bug and goes on as it is
    (a traceback, exit status 1). The root app calls this once around every command (:mod:`nlpbench.cli`).
    """
    try:
        return run()
    except NlpbenchError as error:
        raise report_error(error) from None
    except OSError as error:
        if error.filename is None:
            raise
        raise report_error(files.os_error(error)) from None


def emit(report: Report, fmt: OutputFormat, output: Path | None) -> None:
    """Print the report, or write it to ``output`` whole or not at all; warnings also go to standard error."""
    text = render(report, fmt.value)
    if output is not None:
        files.write_text(output, text)
        said(f"wrote {output}")
    else:
        sys.stdout.write(text)
    warn(report.warnings)


def store_file(db: str | None) -> Path | None:
    """The SQLite file of the store ``--db`` names (or ``$NLPBENCH_DB``, or the default), None for a server:
    an input no output may replace."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    from nlpbench.store import resolve_url

    try:
        parsed = make_url(resolve_url(db))
    except ArgumentError:
        return None  # opening it says what is wrong
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    return Path(parsed.database).expanduser()


def choices(names: Iterable[str]) -> str:
    """How an option that takes one of ``names`` shows its value in help, as Typer shows an enumeration's."""
    return "<" + "|".join(names) + ">"


def _flags_take_no_value() -> None:
    """Show no value type for a flag in help: Typer 0.29 shows ``<bool>`` beside every flag (``--help``
    included), though a flag takes no value. Done once, when the first command module loads this one."""
    from typer.core import TyperOption

    shown = TyperOption.display_type_rich
    if getattr(shown, "flags_take_no_value", False):
        return

    def display_type_rich(self: TyperOption, ctx: Any) -> str | None:
        return None if self.is_flag and not self.count else shown(self, ctx)

    display_type_rich.flags_take_no_value = True  # type: ignore[attr-defined]
    TyperOption.display_type_rich = display_type_rich  # type: ignore[method-assign]


_flags_take_no_value()
values.install()


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
        ProgressColumn,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    columns: tuple[ProgressColumn, ...]
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


@contextmanager
def stopped_by_signal(said: Callable[[BaseException], str]) -> Iterator[None]:
    """SIGTERM or Ctrl+C while the block runs (a worker's, a site's loop) stops it as
    :class:`~nlpbench.platform.worker.Stopped` or :class:`KeyboardInterrupt` raised where it was: what the block
    holds unwinds (the tool it started ends, its claim goes back), then ``said(cause)`` is printed and the command
    exits 0 (130 for Ctrl+C). SIGTERM is taken in the main thread only, and given back as it was."""
    import signal
    import threading

    from nlpbench.platform.worker import Stopped

    def stop(number: int, _frame: Any) -> None:
        raise Stopped(signal.Signals(number).name)

    main = threading.current_thread() is threading.main_thread()  # only the main thread may take signals
    previous = signal.signal(signal.SIGTERM, stop) if main else None
    try:
        yield
    except (Stopped, KeyboardInterrupt) as stopped:
        stderr().print(said(stopped), markup=False)
        raise typer.Exit(130 if isinstance(stopped, KeyboardInterrupt) else 0) from None
    finally:
        if main:
            signal.signal(signal.SIGTERM, previous)
