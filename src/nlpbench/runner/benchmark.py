"""A benchmark run: send a dataset's notes to each tool, save what each returns, score it against the gold.

For every tool the notes go through the NLP Sandbox tool API
(:class:`~nlpbench.runner.AnnotationRun`) with a checkpoint of its own,
its annotations are written (whole or not at all) as NLP Sandbox annotation
records, and each PHI annotation type the tool serves — its ``GET /tool`` type
says which: a date annotator is asked for dates only — is scored with
:func:`~nlpbench.tasks.sandbox.score_sandbox`, so the numbers are those that
``nlpbench score sandbox`` prints for the same files. A tool that cannot be
reached, fails a note after its retries or answers outside the schemas is a
:class:`ToolResult` with a one-line ``failure``, not an exception: the other
tools go on, and the notes it finished stay in its checkpoint for the next run.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path

from nlpbench import formats
from nlpbench.errors import InputError, collected_warnings
from nlpbench.model import Document
from nlpbench.report import Report
from nlpbench.runner.client import MAX_ANNOTATIONS, MAX_RESPONSE_BYTES, RetryPolicy, ToolError
from nlpbench.runner.output import replaced_atomically
from nlpbench.runner.run import AnnotationRun
from nlpbench.tasks.sandbox import score_sandbox


@dataclass(frozen=True)
class RunSettings:
    """How each tool is asked: the options ``annotate`` and ``run`` share."""

    concurrency: int = 8
    timeout: float = 30.0
    retries: int = 3
    max_response_bytes: int = MAX_RESPONSE_BYTES
    max_annotations: int = MAX_ANNOTATIONS
    restart: bool = False
    show_text: bool = False


@dataclass
class ToolResult:
    """One tool's run: who it says it is, how fast it answered, its scores per type it serves, or why it failed."""

    name: str
    url: str
    checkpoint: Path
    tool: str = ""  # name and version, as GET /tool reports them
    labels: tuple[str, ...] = ()
    notes: int = 0
    seconds: float = 0.0
    predictions: Path | None = None
    reports: dict[str, Report] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    failure: str | None = None

    @property
    def notes_per_second(self) -> float:
        return self.notes / self.seconds if self.seconds else 0.0


def run_tool(
    name: str,
    url: str,
    notes: Sequence[Document],
    gold: Path,
    out_dir: Path,
    *,
    gold_format: str = "sandbox",
    settings: RunSettings = RunSettings(),
    profile: str = "standard",
    errors: int = 5,
    on_note: Callable[[str, bool], None] | None = None,
) -> ToolResult:
    """Annotate ``notes`` with the tool at ``url`` and score each type it serves against ``gold``."""
    result = ToolResult(name, url, out_dir / f"{name}.checkpoint.jsonl")
    run = AnnotationRun(
        url,
        concurrency=settings.concurrency,
        timeout=settings.timeout,
        retry=RetryPolicy(retries=settings.retries),
        max_response_bytes=settings.max_response_bytes,
        max_annotations=settings.max_annotations,
        show_text=settings.show_text,
        checkpoint=result.checkpoint,
        restart=settings.restart,
        on_progress=on_note,
    )
    predictions = out_dir / f"{name}.json"
    started = time.perf_counter()
    try:
        with (
            collected_warnings() as warnings,
            replaced_atomically(predictions) as partial,
            closing(run.iterate(notes)) as annotated,  # closed here, even when writing fails
        ):
            formats.get("sandbox").write(annotated, partial)
    except (ToolError, InputError) as error:
        result.failure = str(error)
        return result
    result.seconds = time.perf_counter() - started
    result.tool = f"{run.checked.tool.name} {run.checked.tool.version}"
    result.labels, result.notes, result.predictions = run.checked.labels, run.stats.notes, predictions
    result.warnings = [*run.stats.warnings, *warnings]
    for label in result.labels:
        result.reports[label] = score_sandbox(
            gold, predictions, label, profile=profile, errors=errors, gold_format=gold_format
        )
    return result
