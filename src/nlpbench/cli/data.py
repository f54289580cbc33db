"""``convert``, ``validate``, ``formats`` and ``profiles``: work on files, not scores."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import typer

from nlpbench import files, formats, profiles, tasks
from nlpbench.cli.common import warn
from nlpbench.cli.options import file_format_option
from nlpbench.errors import collected_warnings

TEXT_DIR_OPTION = typer.Option(
    None,
    "--text-dir",
    readable=False,
    help="Directory of <document id>.txt note texts, for formats that do not carry text.",
)


def convert(
    source: Path = typer.Argument(..., readable=False, help="File or directory to read."),
    target: Path = typer.Argument(..., readable=False, help="File or directory to write."),
    from_format: str = file_format_option(..., "--from", help="Format of SOURCE."),
    to_format: str = file_format_option(..., "--to", help="Format of TARGET."),
    text_dir: Path = TEXT_DIR_OPTION,
) -> None:
    """Convert annotations between formats, checking every span against its text on the way.

    TARGET is written whole or not at all, and never over SOURCE or a file read from it.

    Patient timelines have formats of their own: [bold]--from timelines-tsv --to timelines[/]
    summarises ChemoTimelines system TSV output into timeline JSON as docker_output_to_timeline.py
    does (filtering, de-duplication, generic mentions, label conflicts).
    """
    from nlpbench.formats import timelines as timeline_formats  # imports numpy: only when a command runs

    inputs, outputs = {"SOURCE": source, "--text-dir": text_dir}, {"TARGET": target}
    if from_format in timeline_formats.REGISTRY or to_format in timeline_formats.REGISTRY:
        with collected_warnings() as warnings, files.guarded(inputs, outputs):
            patients, tuples = timeline_formats.convert(source, target, from_format, to_format)
        warn(warnings)
        typer.echo(f"{target}: wrote {patients} patients, {tuples} timeline tuples")
        return
    reader, writer = formats.get(from_format), formats.get(to_format)
    counts: Counter[str] = Counter()

    def counted(documents):
        for document in documents:
            counts["documents"] += 1
            counts["annotations"] += len(document.annotations)
            counts["relations"] += len(document.relations)
            counts["links"] += len(document.links)
            yield document

    with collected_warnings() as warnings, files.guarded(inputs, outputs):
        documents = formats.checked(formats.with_texts(reader.read(source), text_dir), source)
        writer.write(counted(documents), target)
    left_out = [
        f"{counts[what]} {what}" for what in ("relations", "links") if counts[what] and what not in writer.keeps
    ]
    if left_out:
        warnings.append(f"{target}: {to_format} cannot hold them: left out {' and '.join(left_out)}")
    warn(warnings)
    typer.echo(f"{target}: wrote {counts['documents']} documents, {counts['annotations']} annotations")


def validate(
    path: Path = typer.Argument(..., readable=False, help="File or directory to check."),
    fmt: str = file_format_option(..., "--format", "-f", help="Its format."),
    text_dir: Path = TEXT_DIR_OPTION,
) -> None:
    """Read a file as FORMAT and check every span against its note text; exit 2 on the first problem."""
    from nlpbench.formats import timelines as timeline_formats  # imports numpy: only when a command runs

    if fmt in timeline_formats.REGISTRY:
        _validate_timelines(path, fmt)
        return
    labels: Counter[str] = Counter()
    documents = without_text = 0
    with collected_warnings() as warnings:
        for document in formats.checked(formats.with_texts(formats.get(fmt).read(path), text_dir), path):
            documents += 1
            without_text += document.text is None
            labels.update(a.label for a in document.annotations)
    warn(warnings)
    listed = ", ".join(f"{n} {label}" for label, n in sorted(labels.items())) or "no annotations"
    typer.echo(f"{path}: {documents} documents, {listed}")
    if without_text:
        typer.echo(f"{without_text} documents carry no text: their spans were not checked (give --text-dir)")
    else:
        typer.echo("every span matches its text")


def _validate_timelines(path: Path, fmt: str) -> None:
    """Read a patient-timeline file; print its patients and tuples by label."""
    from nlpbench.formats import timelines as timeline_formats

    labels: Counter[str] = Counter()
    patients = 0
    with collected_warnings() as warnings:
        for timeline in timeline_formats.REGISTRY.get(fmt).read(path):
            patients += 1
            labels.update(item.label for item in timeline.tuples)
    warn(warnings)
    listed = ", ".join(f"{n} {label}" for label, n in sorted(labels.items())) or "no tuples"
    typer.echo(f"{path}: {patients} patients, {listed}")


def list_formats() -> None:
    """List the formats that convert, validate and score read and write."""
    from nlpbench.formats import timelines as timeline_formats  # imports numpy: only when a command runs

    for name in formats.names():
        typer.echo(f"{name:18} {formats.get(name).summary}")
    for name in timeline_formats.REGISTRY.names():
        typer.echo(f"{name:18} {timeline_formats.REGISTRY.get(name).summary}")


def list_profiles(task: str = typer.Argument(None, help="Only this task's profiles.")) -> None:
    """List scoring profiles and the documented quirks each one reproduces."""
    known = tasks.load_all()
    for task_name in known if task is None else [task]:
        family = tasks.REGISTRY.get(task_name).profiles
        typer.echo(f"{task_name}:")
        for name in profiles.names(family):
            profile = profiles.get(family, name)
            typer.echo(f"  {name:20} {profile.summary}")
            for field, value, doc in profiles.describe(profile):
                typer.echo(f"      {field} = {value}\n          {doc}")


def add_commands(app: typer.Typer) -> None:
    app.command("convert")(convert)
    app.command("validate")(validate)
    app.command("formats")(list_formats)
    app.command("profiles")(list_profiles)
