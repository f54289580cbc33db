"""``nlpbench annotate``: send every note of a dataset to an NLP Sandbox tool and save its annotations."""

from __future__ import annotations

import time
from enum import StrEnum
from pathlib import Path

import typer

from nlpbench.cli.common import fail, one_line_errors, progress, stderr, warn
from nlpbench.errors import collected_warnings

PHI_LABELS = ("date", "person_name", "location", "id", "contact")


class Executor(StrEnum):
    local = "local"
    dask = "dask"


@one_line_errors
def annotate(
    tool: str = typer.Option(..., "--tool", "-t", help="The tool's URL, e.g. http://127.0.0.1:8080 (or …/api/v1)."),
    notes: str = typer.Option(
        ..., "--notes", "-n", help="The notes to send, with their texts: a file, or a data node's FHIR store URL."
    ),
    out: str = typer.Option(
        ..., "--out", "-o", help="Where to write the annotations: a file, or datanode:URL of an annotation store."
    ),
    notes_format: str = typer.Option(
        "sandbox-bundles", "--notes-format", help="Format of --notes (see `nlpbench formats`); it must carry texts."
    ),
    out_format: str = typer.Option("sandbox", "--out-format", help="Format of --out: NLP Sandbox annotation records."),
    types: str = typer.Option(
        None, "--types", help="Comma-separated annotation types to ask a PHI annotator for (default: all it serves)."
    ),
    concurrency: int = typer.Option(8, "--concurrency", "-c", min=1, help="Requests in flight at once."),
    timeout: float = typer.Option(30.0, "--timeout", min=0.1, help="Seconds to wait for one answer."),
    retries: int = typer.Option(3, "--retries", min=0, help="Retries after a timeout, 429, 502, 503 or 504."),
    checkpoint: Path = typer.Option(
        None, "--checkpoint", help="Resumable record of finished notes (default: OUT.checkpoint.jsonl)."
    ),
    executor: Executor = typer.Option(
        "local", "--executor", help="local: send from this process; dask: from the workers of a Dask cluster."
    ),
    scheduler: str = typer.Option(None, "--scheduler", help="The Dask scheduler's address, e.g. tcp://10.0.0.5:8786."),
    batch_size: int = typer.Option(32, "--batch-size", min=1, help="Notes per Dask task."),
) -> None:
    """Validate a tool, send it every note, and write its annotations; an interrupted run resumes.

    The tool must pass GET /healthCheck and GET /tool and answer a probe note
    within the 1.2.0 schemas before any note is sent. Finished notes go to the
    checkpoint as they finish; running the same command again skips them. The
    checkpoint is removed once OUT is written.

    --notes http://HOST/api/v1/datasets/D/fhirStores/evaluation reads the notes
    from an NLP Sandbox data node; --out datanode:http://HOST/api/v1/datasets/D/annotationStores/S
    stores one annotation record per note there (the store is created if
    missing; a record already stored is kept when equal, an error otherwise).
    """
    from nlpbench.formats.datanode import open_notes, open_output  # httpx and pydantic load only when used
    from nlpbench.runner import AnnotationRun, RetryPolicy, ToolError

    labels = _labels(types)
    if (executor is Executor.dask) != (scheduler is not None):
        raise fail("--executor dask and --scheduler ADDRESS go together")
    source = open_notes(notes, notes_format, timeout=timeout, retries=retries)
    output = open_output(out, out_format, notes=notes, timeout=timeout, retries=retries)
    checkpoint = checkpoint or output.checkpoint()
    total = source.count()
    started = time.monotonic()
    with collected_warnings() as warnings, progress("annotating", total) as tick:
        run = AnnotationRun(
            tool,
            labels=labels,
            concurrency=concurrency,
            timeout=timeout,
            retry=RetryPolicy(retries=retries),
            checkpoint=checkpoint,
            on_progress=tick,
            scheduler=scheduler,
            batch_size=batch_size,
        )
        try:
            documents = run.run(source.documents())
        except ToolError as error:
            raise fail(f"{error} (finished notes are kept in {checkpoint}; run again to resume)") from None
        where = output.write(documents)
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
    typer.echo(f"{where}: wrote {stats.notes} notes, {stats.annotations} annotations")


def _labels(types: str | None) -> tuple[str, ...] | None:
    if types is None:
        return None
    labels = tuple(t.strip() for t in types.split(",") if t.strip())
    unknown = [label for label in labels if label not in PHI_LABELS]
    if unknown or not labels:
        raise fail(f"--types: {', '.join(unknown) or 'nothing given'}; choose from {', '.join(PHI_LABELS)}")
    return labels


def add_commands(app: typer.Typer) -> None:
    app.command("annotate")(annotate)
