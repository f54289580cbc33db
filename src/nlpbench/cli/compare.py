"""``nlpbench compare``: two systems on the same gold, with the difference's interval and a paired test."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

import typer

from nlpbench import files, tasks
from nlpbench.cli.common import FORMAT_OPTION, OUTPUT_OPTION, OutputFormat, emit, fail, store_file
from nlpbench.cli.options import DB_OPTION, any_profile_option
from nlpbench.errors import InputError
from nlpbench.report import Report


class Test(StrEnum):
    randomization = "randomization"
    bootstrap = "bootstrap"


def compare(
    context: typer.Context,
    a: str = typer.Argument(..., help="System A's output, or submission:ID of a scored submission in --db."),
    b: str = typer.Argument(..., help="System B's output, or submission:ID."),
    task: str = typer.Option(None, "--task", "-T", help="The scoring task, as `nlpbench score TASK` names it."),
    gold: Path = typer.Option(None, "--gold", "-g", readable=False, help="The gold both systems are scored against."),
    profile: str = any_profile_option(
        None, "With submission:ID, the stored result of this profile (default: the first)."
    ),
    db: str = DB_OPTION,
    metric: list[str] = typer.Option(None, "--metric", "-m", help="Compare only this metric (repeatable)."),
    test: Test = typer.Option(Test.randomization, "--test", help="The paired test that gives the p-value."),
    trials: int = typer.Option(10_000, "--trials", min=100, help="Randomization trials and bootstrap resamples."),
    confidence: float = typer.Option(0.95, "--confidence", min=0.5, max=0.999, help="Of the difference's interval."),
    seed: int = typer.Option(0, "--seed", help="Seed of the resampling (same seed, same numbers)."),
    fmt: OutputFormat = FORMAT_OPTION,
    output: Path = OUTPUT_OPTION,
) -> None:
    """Score A and B against the same gold, then test every overall score's difference A − B.

    Options after [bold]--[/] go to `nlpbench score TASK` for both systems, e.g.
    [bold]nlpbench compare a.json b.json -T sandbox -g gold.json -- -t person_name --profile nlpsandbox[/].
    The difference's interval is the paired bootstrap's (documents resampled
    together, patients for timelines); the p-value is two-sided: approximate
    randomization (swapping the systems' outputs document by document) or the
    paired bootstrap. Both systems must be scored on the same documents.

    Two stored submissions (submission:3 submission:5) are compared from the
    per-document counts of their results, without scoring anything again.
    """
    from nlpbench.stats.compare import compare_reports

    stored = [side.startswith(STORED) for side in (a, b)]
    if any(stored) and not all(stored):
        raise fail("compare two files or two submissions (submission:ID), not one of each")
    if not all(stored) and (task is None or gold is None):
        raise fail("give --task and --gold to score two files (or compare submission:ID with submission:ID)")
    store = store_file(db) if all(stored) else None
    with files.guarded({"A": a, "B": b, "--gold": gold, "--db": store}, {"--output": output}):
        if all(stored):
            reports = _stored([a, b], db, profile)
        else:
            extra = list(context.args)
            reports = [_score(task, gold, Path(path), extra, name) for name, path in (("A", a), ("B", b))]
        compared = compare_reports(
            *reports, metrics=metric or (), test=test.value, trials=trials, confidence=confidence, seed=seed
        )
        emit(compared, fmt, output)


def _score(task: str, gold: Path, pred: Path, extra: list[str], name: str) -> Report:
    """Score one system through the task, ``extra`` being options of `nlpbench score TASK`; its warnings
    are marked with the system's ``name``."""
    from nlpbench.cli.score import command_report

    if task not in tasks.load_all():
        raise fail(f"unknown task {task!r}; known: {', '.join(tasks.REGISTRY.names())}")
    report = command_report(task, gold, pred, extra)
    report.warnings = [f"{name}: {warning}" for warning in report.warnings]
    return report


STORED = "submission:"


def _stored(references: list[str], db: str | None, profile: str | None) -> list[Report]:
    """The stored results of two submissions on the same dataset, as reports with their per-document rows."""
    from sqlalchemy import select

    from nlpbench.cli.db import db_session
    from nlpbench.platform.queue import get
    from nlpbench.platform.scoring import result_report
    from nlpbench.store.submissions import Result

    numbers = []
    for reference in references:
        digits = reference.removeprefix(STORED)
        if not digits.isdigit():
            raise InputError(f"{reference}: a submission is submission:ID, ID a number")
        numbers.append(int(digits))
    reports, datasets = [], []
    with db_session(db, readonly=True) as session:
        for number in numbers:
            submission = get(session, number)
            query = select(Result).where(Result.submission_id == number).order_by(Result.id)
            result = next((r for r in session.scalars(query) if profile in (None, r.profile)), None)
            if result is None:
                under = f" under profile {profile}" if profile else ""
                raise InputError(f"submission {number} has no result{under} ({submission.status})")
            parts = {kind: result_report(session, submission, result, kind) for kind in result.scores}
            reports.append(_joined(parts, {"submission": number, "team": submission.team}))
            datasets.append(f"{submission.dataset}@{submission.dataset_version or 'latest'}")
    if datasets[0] != datasets[1]:
        raise InputError(f"the submissions were scored on different datasets: {datasets[0]} and {datasets[1]}")
    return reports


def _joined(parts: dict[str, Report], inputs: dict) -> Report:
    """One report of a result's annotation types (PHI), each row labelled with its type; one type as it is."""
    first = next(iter(parts.values()))
    if len(parts) == 1:
        return Report(first.task, first.profile, inputs, first.scores, first.per_document)
    scores = [{"annotation_type": kind, **row} for kind, part in parts.items() for row in part.scores]
    per_document = [{"annotation_type": kind, **row} for kind, part in parts.items() for row in part.per_document]
    return Report(first.task, first.profile, inputs, scores, per_document)


def add_commands(app: typer.Typer) -> None:
    app.command("compare", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})(compare)
