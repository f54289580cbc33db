"""``nlpbench serve``: run an annotator, an LLM endpoint, or the de-identifier, as an NLP Sandbox tool over HTTP."""

from __future__ import annotations

import os
import socket
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from nlpbench.api.limits import CACHE_BYTES, MAX_BODY_BYTES
from nlpbench.cli.common import fail, stderr
from nlpbench.cli.options import TOOL_PORT, LogLevel, host_option, log_level_option, port_option

if TYPE_CHECKING:
    from nlpbench.annotators import Annotator
    from nlpbench.annotators.llm import LLMAnnotator

DEIDENTIFIER = "deidentifier"


class Structured(StrEnum):
    """Whether an LLM endpoint is asked for JSON-schema output (``response_format``)."""

    auto = "auto"
    on = "on"
    off = "off"


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


def build_llm_annotator(
    url: str,
    model: str | None,
    template: str,
    types: str | None,
    *,
    concurrency: int,
    timeout: float,
    structured: Structured,
    cache: Path | None,
) -> LLMAnnotator:
    """The :class:`~nlpbench.annotators.llm.LLMAnnotator` of ``--llm URL --model NAME``; bad options, one line."""
    from importlib.util import find_spec

    from nlpbench.annotators.llm import LLMAnnotator, prompts
    from nlpbench.annotators.llm.cache import AnswerCache
    from nlpbench.annotators.llm.client import ChatClient
    from nlpbench.cli.annotate import type_labels
    from nlpbench.runner.client import ToolError, checked_url

    if model is None:
        raise fail("--llm URL needs --model NAME: the model the endpoint serves")
    try:
        checked_url(url)
    except ToolError as error:
        raise fail(f"--llm: {error}") from None
    if find_spec("rapidfuzz") is None:
        raise fail("--llm places mentions with rapidfuzz, which is not installed: pip install 'nlpbench[llm]'")
    try:
        chosen = prompts.load(template)
    except LookupError as error:
        raise fail(f"--template: {error.args[0]}") from None
    labels = type_labels(types, chosen.types)
    client = ChatClient(url, model, concurrency=concurrency, timeout=timeout, structured=structured.value)
    answers = None if cache is None else AnswerCache(cache)
    return LLMAnnotator(client, chosen, answers, labels)


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
    llm: str = typer.Option(
        None,
        "--llm",
        help=f"An OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1: instead of --annotator, or with "
        f"--annotator {DEIDENTIFIER} as the PHI annotator it finds PHI with.",
    ),
    model: str = typer.Option(None, "--model", help="With --llm: the model the endpoint serves, as it names it."),
    template: str = typer.Option(
        "phi-entities-v1", "--template", help="With --llm: the prompt template (see `nlpbench llm templates`)."
    ),
    types: str = typer.Option(
        None, "--types", help="With --llm: comma-separated PHI types to serve (default: all the template asks for)."
    ),
    llm_concurrency: int = typer.Option(4, "--llm-concurrency", min=1, help="With --llm: requests in flight at once."),
    llm_timeout: float = typer.Option(
        120.0, "--llm-timeout", min=0.1, help="With --llm: seconds one request to the endpoint may take."
    ),
    structured: Structured = typer.Option(
        Structured.auto,
        "--structured",
        help="With --llm: ask for JSON-schema output (auto: ask, and stop asking if the endpoint refuses).",
    ),
    llm_cache: Path = typer.Option(
        None,
        "--llm-cache",
        readable=False,
        help="With --llm: the answer cache, a SQLite file (default: llm-answers.sqlite in the data directory).",
    ),
    no_llm_cache: bool = typer.Option(False, "--no-llm-cache", help="With --llm: ask the model for every note."),
) -> None:
    """Serve an annotator as an NLP Sandbox 1.2.0 tool: /api/v1/tool, /healthCheck, /text…Annotations.

    The API is under http://HOST:PORT/api/v1; / redirects to /api/v1/tool and /ui to
    the interactive API documentation. [bold]deidentifier[/] serves
    POST /api/v1/deidentifiedNotes on top of --phi-annotator. Bodies over
    --max-body-bytes get 413; errors name fields, offsets and sizes, never note text.

    --llm URL --model NAME serves a model behind an OpenAI-compatible
    chat-completions endpoint (vLLM, llama.cpp, Ollama) as a PHI annotator:
    each note is asked about with --template, the mentions the model lists
    are placed at every occurrence in the note, and each answer carries the
    X-Nlpbench-Account header (mentions placed exactly, after normalising,
    fuzzily, or not at all; tokens; latency). Answers are cached on disk by
    (template hash, model, note hash), so a rerun costs nothing. With
    --annotator deidentifier it serves the de-identifier on the model's
    placed mentions instead (its tool object names the model and template).
    """
    if list_names:
        from nlpbench import annotators

        for name in [*annotators.load_all(), DEIDENTIFIER]:
            typer.echo(name)
        return
    if annotator is None if llm is None else annotator not in (None, DEIDENTIFIER):
        raise fail(
            "give --annotator NAME (see `nlpbench serve --list`) or --llm URL --model NAME, one of the two "
            f"(both only for --annotator {DEIDENTIFIER} on a model)"
        )
    if llm is not None and phi_annotator != "phi":
        raise fail(f"--phi-annotator with --llm: the {DEIDENTIFIER} finds PHI with the model; give one of the two")
    from nlpbench.api.server import run

    if llm is not None:
        from nlpbench.annotators.llm.cache import default_path as default_cache_path
        from nlpbench.api.tool import create_app, create_deidentifier_app
        from nlpbench.runner.client import checked_url

        found = build_llm_annotator(
            llm,
            model,
            template,
            types,
            concurrency=llm_concurrency,
            timeout=llm_timeout,
            structured=structured,
            cache=None if no_llm_cache else llm_cache or default_cache_path(),
        )
        on = f"model {model} at {checked_url(llm)}"
        if annotator == DEIDENTIFIER:
            annotator = f"{DEIDENTIFIER} on {on}"
            app = create_deidentifier_app(
                found, found.deidentifier_info(), max_body_bytes=max_body_bytes, cache_bytes=cache_bytes
            )
        else:
            annotator = on
            app = create_app(found, max_body_bytes=max_body_bytes, cache_bytes=cache_bytes)
    else:
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
