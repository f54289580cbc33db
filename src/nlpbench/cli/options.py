"""The option sets commands share, each defined once: store, server, client, output and input formats.

A short flag has one meaning across every command (``-o`` is ``--output``, ``-p`` ``--pred``, ``-t``
``--annotation-type``…: ``tests/cli/test_options.py`` holds the table and checks it); an option that takes
one of a few names lists them in help; each service listens on a port of its own by default, so that all
four run side by side on one machine: a tool 8080, a data node 8081, the platform API 8082, the
leaderboard 8083.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

import typer

from nlpbench.cli.common import choices

TOOL_PORT, DATANODE_PORT, PLATFORM_PORT, LEADERBOARD_PORT = 8080, 8081, 8082, 8083

#: Old spellings of options, still read (hidden from help): ``--out`` was ``--output`` in annotate, run, demo.
OLD_SPELLINGS = {"out": "output"}


def new_spelling(name: str) -> str:
    """The option name ``name`` stands for (a command-line token without its dashes): itself, or the
    current spelling of an old one. Click calls it on every option name, declared or given."""
    return OLD_SPELLINGS.get(name, name)


# --- store -------------------------------------------------------------------------------------------

DB_OPTION = typer.Option(
    None,
    "--db",
    envvar="NLPBENCH_DB",
    show_envvar=True,
    help="Database URL: sqlite:///FILE or postgresql+psycopg://USER@HOST/DB "
    "(default: nlpbench.db in the per-user data directory).",
)

# --- server ------------------------------------------------------------------------------------------


class LogLevel(StrEnum):
    """uvicorn's log levels, most to least quiet."""

    critical = "critical"
    error = "error"
    warning = "warning"
    info = "info"
    debug = "debug"
    trace = "trace"


def host_option(help: str = "Address to listen on (0.0.0.0 for every interface).") -> Any:
    """``--host`` of a service: localhost unless told otherwise."""
    return typer.Option("127.0.0.1", "--host", help=help)


def port_option(default: int) -> Any:
    """``--port`` of a service, ``default`` its own (see the module's ports)."""
    return typer.Option(default, "--port", min=0, max=65535, help="Port to listen on (0: any free port).")


def log_level_option(default: LogLevel = LogLevel.info) -> Any:
    """``--log-level`` of a service, one of :class:`LogLevel`."""
    return typer.Option(default, "--log-level", help="uvicorn's log level.")


# --- client of NLP Sandbox tools ------------------------------------------------------------------------

CONCURRENCY_OPTION = typer.Option(8, "--concurrency", min=1, help="Requests in flight at once to each tool.")
TIMEOUT_OPTION = typer.Option(30.0, "--timeout", min=0.1, help="Seconds one request may take, whole answer read.")
RETRIES_OPTION = typer.Option(
    3, "--retries", min=0, help="Retries after a timeout, a broken connection, 429, 502, 503 or 504."
)
MAX_RESPONSE_BYTES_OPTION = typer.Option(
    None, "--max-response-bytes", min=1, help="The most one response may take (default 32 MiB); past it, a failure."
)
MAX_ANNOTATIONS_OPTION = typer.Option(
    None, "--max-annotations", min=1, help="The most annotations one note's answers may hold (default 10,000)."
)
SHOW_TEXT_OPTION = typer.Option(
    False, "--show-text", help="Debugging, on this machine only: let messages quote what tools sent, in context."
)

# --- output and input formats ----------------------------------------------------------------------------


def output_option(default: object, help: str) -> Any:
    """``-o/--output`` of a command that writes files (``--out``, its old spelling, is still read)."""
    return typer.Option(default, "--output", "-o", readable=False, help=help)


def file_format_option(default: object, *decls: str, help: str) -> Any:
    """An option (``decls``: ``--from``, ``-f/--format``…) naming one of the file formats of ``nlpbench formats``."""
    from nlpbench import formats

    return typer.Option(default, *decls, metavar=choices(formats.names()), help=help)


def side_format_option(
    default: object, decl: str, names: tuple[str, ...], help: str, *, any_format: bool = False
) -> Any:
    """``--gold-format`` and its kin: one of ``names`` (a task's formats, :attr:`nlpbench.tasks.Task.formats`),
    and, when the task reads any format of ``nlpbench formats`` (``any_format``), one of those too."""
    from nlpbench import formats

    shown = list(dict.fromkeys([*names, *(formats.names() if any_format else ())]))
    return typer.Option(default, decl, metavar=choices(shown), help=help)


def any_profile_option(default: object, help: str) -> Any:
    """``--profile`` where the task is not known before it runs: every profile of every task is a choice."""
    from nlpbench import profiles

    return typer.Option(default, "--profile", metavar=choices(profiles.every_name()), help=help)
