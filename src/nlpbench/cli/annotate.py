"""``nlpbench annotate``: send every note of a dataset to an NLP Sandbox tool and save its annotations."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from enum import StrEnum
from pathlib import Path

import typer

from nlpbench import files
from nlpbench.cli.common import fail, progress, report_error, stderr, warn
from nlpbench.cli.options import (
    CONCURRENCY_OPTION,
    MAX_ANNOTATIONS_OPTION,
    MAX_RESPONSE_BYTES_OPTION,
    RETRIES_OPTION,
    SHOW_TEXT_OPTION,
    TIMEOUT_OPTION,
    output_option,
)
from nlpbench.cli.sandboxing import RUNTIME_OPTION, SANDBOX_OPTION, TOOL_DIR_OPTION, SandboxChoice, sandbox_settings
from nlpbench.errors import collected_warnings
from nlpbench.model.phi import PHI_LABELS


class Executor(StrEnum):
    local = "local"
    dask = "dask"


def annotate(
    tool: str = typer.Option(None, "--tool", help="The tool's URL, e.g. http://127.0.0.1:8080 (or …/api/v1)."),
    command: str = typer.Option(
        None,
        "--command",
        help="Instead of --tool: a shell command starting the tool (listening on $PORT, 8080); "
        "it runs in a sandbox without network and is stopped at the end.",
    ),
    tool_log: Path = typer.Option(
        None,
        "--tool-log",
        readable=False,
        help="With --command: where the tool's output goes, capped (default OUT.tool.log).",
    ),
    sandbox: SandboxChoice = SANDBOX_OPTION,
    runtime: list[Path] = RUNTIME_OPTION,
    tool_dir: Path = TOOL_DIR_OPTION,
    notes: str = typer.Option(
        ..., "--notes", "-n", help="The notes to send, with their texts: a file, or a data node's FHIR store URL."
    ),
    out: str = output_option(..., "Where to write the annotations: a file, or datanode:URL of an annotation store."),
    notes_format: str = typer.Option(
        "sandbox-bundles", "--notes-format", help="Format of --notes (see `nlpbench formats`); it must carry texts."
    ),
    out_format: str = typer.Option(
        "sandbox", "--out-format", help="Format of --output: NLP Sandbox annotation records."
    ),
    types: str = typer.Option(
        None, "--types", help="Comma-separated annotation types to ask a PHI annotator for (default: all it serves)."
    ),
    concurrency: int = CONCURRENCY_OPTION,
    timeout: float = TIMEOUT_OPTION,
    retries: int = RETRIES_OPTION,
    max_response_bytes: int = MAX_RESPONSE_BYTES_OPTION,
    max_annotations: int = MAX_ANNOTATIONS_OPTION,
    checkpoint: Path = typer.Option(
        None, "--checkpoint", readable=False, help="Resumable record of finished notes (default: OUT.checkpoint.jsonl)."
    ),
    restart: bool = typer.Option(False, "--restart", help="Start the checkpoint again, whatever it holds."),
    show_text: bool = SHOW_TEXT_OPTION,
    executor: Executor = typer.Option(
        "local", "--executor", help="local: send from this process; dask: from the workers of a Dask cluster."
    ),
    scheduler: str = typer.Option(None, "--scheduler", help="The Dask scheduler's address, e.g. tcp://10.0.0.5:8786."),
    batch_size: int = typer.Option(32, "--batch-size", min=1, help="Notes per Dask task."),
    prices: Path = typer.Option(
        None,
        "--prices",
        help='An LLM tool\'s price table, JSON {"models": {NAME: {"input": $, "output": $}}} per million tokens.',
    ),
    model: str = typer.Option(None, "--model", help="With --prices: the model whose price applies."),
) -> None:
    """Validate a tool, send it every note, and write its annotations; an interrupted run resumes.

    The tool must pass GET /healthCheck and GET /tool and answer a probe note
    within the 1.2.0 schemas before any note is sent. Finished notes go to the
    checkpoint as they finish; running the same command again skips them. OUT
    is written whole or not at all, and the checkpoint is removed once it is.
    No message quotes a note or what the tool sent unless --show-text. A tool
    started with --command runs in a sandbox (bubblewrap unless --sandbox says
    otherwise): it reaches no network, not even this machine, and reads nothing
    of this machine but its runtime (--runtime) and its own directory
    (--tool-dir); it writes only in size-limited folders of its own, under
    memory, CPU, process and time limits; what it prints goes to --tool-log only.

    --notes http://HOST/api/v1/datasets/D/fhirStores/evaluation reads the notes
    from an NLP Sandbox data node; --output datanode:http://HOST/api/v1/datasets/D/annotationStores/S
    stores one annotation record per note there (the store is created if
    missing; a record already stored is kept when equal, an error otherwise).
    --timeout and --retries apply to the data node too.

    An LLM tool (`nlpbench serve --llm`) sends an account of each note; the run
    then ends with one line: mentions placed exactly, after normalising,
    fuzzily, or not at all (invented), tokens in and out, latency per note
    (p50, p95, p99) and, with --prices and --model, the cost.
    """
    # httpx and pydantic load only when used
    from nlpbench.runner.client import MAX_ANNOTATIONS, MAX_RESPONSE_BYTES, RetryPolicy, ToolError, checked_url
    from nlpbench.runner.run import AnnotationRun
    from nlpbench.runner.sources import open_notes, open_output

    labels = type_labels(types)
    price = _price(prices, model)
    if (executor is Executor.dask) != (scheduler is not None):
        raise fail("--executor dask and --scheduler ADDRESS go together")
    if (tool is None) == (command is None):
        raise fail('give the tool as --tool URL or as --command "…", one of the two')
    if command is not None and scheduler is not None:
        raise fail("--command: Dask workers cannot reach a tool sandboxed on this machine; use --tool URL")
    if tool is not None:
        try:
            checked_url(tool)
        except ToolError as error:
            raise fail(f"--tool: {error}") from None
    source = open_notes(notes, notes_format, timeout=timeout, retries=retries)
    output = open_output(out, out_format, notes=notes, timeout=timeout, retries=retries)
    checkpoint = checkpoint or output.checkpoint()
    tool_log = tool_log or checkpoint.with_name(checkpoint.name.removesuffix(".checkpoint.jsonl") + ".tool.log")
    logged = {"tool-log": tool_log} if command else {}
    _distinct(notes=source.path, output=output.path, checkpoint=checkpoint, **logged)
    total = source.count()
    output.check(total)
    started = time.monotonic()
    with (
        _reached(command, tool_log, sandbox_settings(sandbox, runtime), tool_dir) as sandboxed,
        collected_warnings() as warnings,
        progress("annotating", total) as tick,
    ):
        run = AnnotationRun(
            sandboxed.url if sandboxed else tool,
            labels=labels,
            concurrency=concurrency,
            timeout=timeout,
            retry=RetryPolicy(retries=retries),
            max_response_bytes=max_response_bytes or MAX_RESPONSE_BYTES,
            max_annotations=max_annotations or MAX_ANNOTATIONS,
            show_text=show_text,
            checkpoint=checkpoint,
            restart=restart,
            on_progress=tick,
            scheduler=scheduler,
            batch_size=batch_size,
            transport=sandboxed.transport() if sandboxed else None,
        )
        try:
            with closing(run.iterate(source.documents())) as annotated:  # closed here, even when writing fails
                where = output.write(annotated)
        except (ToolError, KeyboardInterrupt) as error:
            ended = sandboxed.wait(1) if sandboxed and isinstance(error, ToolError) else None
            kept = f" ({ended.reason}; its output is in {tool_log})" if ended else ""
            if checkpoint.exists():
                kept += f" (finished notes are kept in {checkpoint}; run again to resume)"
            raise stopped(error, kept) from None
    checkpoint.unlink(missing_ok=True)
    warn([*warnings, *run.stats.warnings])
    stats, tool_info = run.stats, run.check.tool
    resumed = f", {stats.resumed} from the checkpoint" if stats.resumed else ""
    stderr().print(
        f"{tool_info.name} {tool_info.version} ({tool_info.type}): {stats.notes} notes{resumed}, "
        f"{stats.annotations} annotations, {stats.requests} requests, {stats.retries} retries "
        f"in {time.monotonic() - started:.1f} s",
        markup=False,
        soft_wrap=True,
    )
    if stats.usage.latencies_ms:  # an LLM tool sent its accounts (X-Nlpbench-Account)
        stderr().print(f"LLM: {stats.usage.summary(price)}", markup=False, soft_wrap=True)
    typer.echo(f"{where}: wrote {stats.notes} notes, {stats.annotations} annotations")


def _price(prices: Path | None, model: str | None):
    """The price of ``model`` in the table ``prices``, or None without one; a bad table is one line."""
    if prices is None:
        return None
    from nlpbench.toolapi.cost import read_prices

    if model is None:
        raise fail("--prices needs --model NAME: the model whose price applies")
    table = read_prices(prices)  # a bad table is a PriceError: one line, by the command line's one handler
    if model not in table:
        raise fail(f"--prices {prices}: no price for model {model!r}")
    return table[model]


@contextmanager
def _reached(command: str | None, log: Path, settings, tool_dir: Path | None) -> Iterator:
    """None for a tool at a URL; for a command, the tool started in the sandbox."""
    if command is None:
        yield None
        return
    from nlpbench.runner.sandbox import Limits, SandboxError, SandboxUnavailable, start_tool

    if tool_dir is not None and not tool_dir.is_dir():
        raise fail(f"--tool-dir {tool_dir}: not a directory")
    try:
        with start_tool(command, Limits(), log, sandbox=settings, tool_dir=tool_dir and tool_dir.resolve()) as tool:
            yield tool
    except SandboxUnavailable as error:  # nothing started, nothing logged
        raise fail(f"--command: {error}") from None
    except SandboxError as error:
        raise fail(f"--command: {error} (its output is in {log})") from None


def stopped(error: BaseException, kept: str) -> Exception:
    """One line for a run that stopped: exit 2 for a failing tool, 130 for Ctrl-C."""
    if isinstance(error, KeyboardInterrupt):
        report_error(fail(f"interrupted{kept}"))
        return typer.Exit(code=130)
    return fail(f"{error}{kept}")


def _distinct(**paths: Path | None) -> None:
    """Refuse to write over the notes (or the output over the checkpoint): each path is its own file (None: a
    URL), told apart by device and inode (:func:`nlpbench.files.same_file`), not by spelling."""
    seen: list[tuple[str, Path]] = []
    for option, path in paths.items():
        if path is None:
            continue
        for other, earlier in seen:
            if files.same_file(path, earlier):
                raise fail(f"--{option} {path} is --{other} too; give it another path")
        seen.append((option, path))


def type_labels(types: str | None, allowed: tuple[str, ...] = PHI_LABELS) -> tuple[str, ...] | None:
    """The annotation types of ``--types A,B`` (None when not given); a type not in ``allowed`` is one line."""
    if types is None:
        return None
    labels = tuple(t.strip() for t in types.split(",") if t.strip())
    unknown = [label for label in labels if label not in allowed]
    if unknown or not labels:
        raise fail(f"--types: {', '.join(unknown) or 'nothing given'}; choose from {', '.join(allowed)}")
    return labels


def add_commands(app: typer.Typer) -> None:
    app.command("annotate")(annotate)
