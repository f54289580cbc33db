"""``nlpbench serve``: run an annotator, or the de-identifier, as an NLP Sandbox tool over HTTP."""

from __future__ import annotations

import os
import socket
from typing import TYPE_CHECKING

import typer

from nlpbench.api.limits import CACHE_BYTES, MAX_BODY_BYTES
from nlpbench.cli.common import fail, stderr
from nlpbench.cli.options import TOOL_PORT, LogLevel, host_option, log_level_option, port_option

if TYPE_CHECKING:
    from nlpbench.annotators import Annotator

DEIDENTIFIER = "deidentifier"


def build_annotator(name: str) -> Annotator:
    """The registered annotator called ``name``, built; a missing optional package is a one-line error."""
    from nlpbench import annotators  # the rules and word lists load only when an annotator is served

    annotators.load_all()
    factory = annotators.REGISTRY.get(name)
    try:
        return factory()
    except ImportError as error:
        raise fail(f"annotator {name!r} needs a package that does not import: {error}") from None


def build_app(name: str, phi_annotator: str = "phi", *, max_body_bytes: int, cache_bytes: int):
    """The FastAPI app of ``name``: a registered annotator, or ``deidentifier`` on ``phi_annotator``, with its
    limits (:func:`nlpbench.api.tool.create_app`)."""
    from nlpbench.api.tool import create_app, create_deidentifier_app

    if name == DEIDENTIFIER:
        annotator = build_annotator(phi_annotator)
        return create_deidentifier_app(annotator, max_body_bytes=max_body_bytes, cache_bytes=cache_bytes)
    return create_app(build_annotator(name), max_body_bytes=max_body_bytes, cache_bytes=cache_bytes)


def listen(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port`` and listening; a port in use or an unknown host is a one-line error."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        return socket.create_server((host, port), family=family)
    except OSError as error:
        reason = (
            os.strerror(error.errno) if error.errno is not None and error.errno > 0 else error.strerror or str(error)
        )
        raise fail(f"cannot listen on {host}:{port}: {reason}") from None


def serve(
    annotator: str = typer.Option(
        None, "--annotator", "-a", help=f"A registered annotator (see --list), or {DEIDENTIFIER}."
    ),
    host: str = host_option(),
    port: int = port_option(TOOL_PORT),
    phi_annotator: str = typer.Option(
        "phi", "--phi-annotator", help=f"The PHI annotator the {DEIDENTIFIER} finds PHI with."
    ),
    list_names: bool = typer.Option(False, "--list", help="List the annotators that can be served, and exit."),
    log_level: LogLevel = log_level_option(),
    max_body_bytes: int = typer.Option(
        MAX_BODY_BYTES, "--max-body-bytes", min=1, help="Refuse request bodies over this many bytes (413)."
    ),
    cache_bytes: int = typer.Option(
        CACHE_BYTES, "--cache-bytes", min=0, help="Keep recent notes' annotations up to this many bytes in all."
    ),
) -> None:
    """Serve an annotator as an NLP Sandbox 1.2.0 tool: /api/v1/tool, /healthCheck, /text…Annotations.

    The API is under http://HOST:PORT/api/v1; / redirects to /api/v1/tool and /ui to
    the interactive API documentation. [bold]deidentifier[/] serves
    POST /api/v1/deidentifiedNotes on top of --phi-annotator. Bodies over
    --max-body-bytes get 413; errors name fields, offsets and sizes, never note text.
    """
    if list_names:
        from nlpbench import annotators

        for name in [*annotators.load_all(), DEIDENTIFIER]:
            typer.echo(name)
        return
    if annotator is None:
        raise fail("give --annotator NAME (see `nlpbench serve --list`)")
    from nlpbench.api.server import run

    app = build_app(annotator, phi_annotator, max_body_bytes=max_body_bytes, cache_bytes=cache_bytes)
    sock = listen(host, port)
    bound = sock.getsockname()[1]
    stderr().print(
        f"serving {annotator} ({app.title}) at http://{host}:{bound}/api/v1 — docs at /ui, Ctrl+C to stop",
        markup=False,
        soft_wrap=True,
    )
    with sock:
        run(app, sock, log_level=log_level)


def add_commands(app: typer.Typer) -> None:
    app.command("serve")(serve)
