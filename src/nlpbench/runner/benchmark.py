"""A benchmark run: send a dataset's notes to each tool, save what each returns, score it against the gold.

For every tool the notes go through the NLP Sandbox tool API
(:class:`~nlpbench.runner.AnnotationRun`), its annotations are written as NLP
Sandbox annotation records, and each PHI annotation type is scored with
:func:`~nlpbench.tasks.sandbox.score_sandbox`, so the numbers are those that
``nlpbench score sandbox`` prints for the same files.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from nlpbench import formats
from nlpbench.errors import collected_warnings
from nlpbench.model import Document
from nlpbench.report import Report
from nlpbench.runner.run import AnnotationRun
from nlpbench.tasks.sandbox import score_sandbox

PHI_LABELS = ("date", "person_name", "location", "id", "contact")


@dataclass
class ToolResult:
    """One tool's run: who it says it is, how fast it answered, and its scores per annotation type."""

    name: str
    tool: str  # name and version, as GET /tool reports them
    notes: int
    seconds: float
    predictions: Path
    reports: dict[str, Report] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

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
    labels: Sequence[str] = PHI_LABELS,
    profile: str = "standard",
    errors: int = 5,
    concurrency: int = 8,
    on_note: Callable[[str, bool], None] | None = None,
) -> ToolResult:
    """Annotate ``notes`` with the tool at ``url`` and score each of ``labels`` against ``gold``."""
    run = AnnotationRun(url, labels=tuple(labels), concurrency=concurrency, on_progress=on_note)
    started = time.perf_counter()
    predicted = run.run(notes)
    seconds = time.perf_counter() - started
    predictions = out_dir / f"{name}.json"
    with collected_warnings() as warnings:
        formats.get("sandbox").write(predicted, predictions)
    tool = f"{run.check.tool.name} {run.check.tool.version}"
    result = ToolResult(name, tool, len(predicted), seconds, predictions, warnings=[*run.stats.warnings, *warnings])
    for label in labels:
        result.reports[label] = score_sandbox(gold, predictions, label, profile=profile, errors=errors)
    return result
