"""``nlpbench dataset``: datasets in the store — import, list, show, export, delete.

An import follows the NLP Sandbox conventions: notes go into FHIR store
``evaluation``, gold annotations into annotation store ``goldstandard``. It
streams the input in batches inside one transaction, checking every span
against its note, so a bad span or a duplicate note leaves nothing behind.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from nlpbench import files
from nlpbench.cli.common import fail, progress, stderr, store_file, warn
from nlpbench.cli.db import db_session, open_db
from nlpbench.cli.options import DB_OPTION, file_format_option
from nlpbench.errors import InputError, collected_warnings
from nlpbench.model import Document

if TYPE_CHECKING:
    from nlpbench.store import ImportItem, ImportSummary, Store

ID_PATTERN = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
SUBSET_SUFFIX = "-subset"


#: A reader's span message quotes both texts; the import names the offsets only.
def check_id(value: str, what: str, source: str | Path | None = None, record: str | None = None) -> str:
    """``value`` if it is a data-node id (3–60 lower-case letters, digits, single hyphens), else InputError."""
    if not (3 <= len(value) <= 60 and ID_PATTERN.fullmatch(value)):
        raise InputError(
            f"{what} {value!r} is not a data-node id (3–60 lower-case letters and digits joined by single hyphens)",
            source,
            record,
        )
    return value


@dataclass
class Imported:
    """What an import wrote."""

    summary: ImportSummary
    content_hash: str
    subset: ImportSummary | None = None
    left_out: Counter[str] = field(default_factory=Counter)


def import_documents(
    store: Store,
    name: str,
    documents: Iterable[Document],
    source: str | Path,
    *,
    version: str = "1",
    description: str = "",
    license: str = "none",
    public: bool = False,
    subset: int = 0,
    advance: Callable[..., None] | None = None,
) -> Imported:
    """Create dataset ``name`` from ``documents`` in one transaction (and ``name-subset`` with the first ``subset``).

    Each document needs its text; every annotation is checked against it; annotations that have no NLP
    Sandbox array (profession, age) are left out and counted.
    """
    from nlpbench.store import repository as repo

    check_id(name, "dataset name", record="--name")
    if subset:
        check_id(name + SUBSET_SUFFIX, "subset name", record="--name")
    left_out: Counter[str] = Counter()
    first: list[ImportItem] = []
    meta = {"version": version, "description": description, "license": license}
    visibility = "public" if public else "private"
    with store.session() as session:
        repo.create_dataset(session, name, visibility=visibility, **meta)
        items = _items(documents, source, left_out, first, subset, advance)
        summary = repo.import_notes(session, name, items)
        subset_summary = None
        if subset:
            repo.create_dataset(session, name + SUBSET_SUFFIX, visibility=visibility, **meta)
            subset_summary = repo.import_notes(session, name + SUBSET_SUFFIX, first)
        digest = repo.content_hash(session, name)
        if subset:
            repo.content_hash(session, name + SUBSET_SUFFIX)
    store.optimize()
    return Imported(summary, digest, subset_summary, left_out)


def _items(
    documents: Iterable[Document],
    source: str | Path,
    left_out: Counter[str],
    first: list,
    subset: int,
    advance: Callable[..., None] | None,
) -> Iterator[ImportItem]:
    from nlpbench.formats.sandbox import BY_ARRAY, record_json
    from nlpbench.store import ImportItem

    for document in documents:
        where = f"note {document.id}"
        if document.text is None:
            raise InputError("the note has no text (give --text-dir for formats without it)", source, where)
        check_id(document.id, "note id", source, where)
        patient = check_id(str(document.metadata.get("patientId") or document.id), "patient id", source, where)
        problem = document.span_problem()
        if problem:
            raise InputError(problem, source, where)
        record = record_json(document, left_out)
        arrays = {key: values for key, values in record.items() if key in BY_ARRAY}
        item = ImportItem(document.id, patient, str(document.metadata.get("noteType", "")), document.text, arrays)
        if len(first) < subset:
            first.append(item)
        if advance is not None:
            advance()
        yield item


def report(name: str, imported: Imported) -> None:
    summary = imported.summary
    arrays = ", ".join(f"{n} {array}" for array, n in sorted(summary.by_array.items()) if n)
    typer.echo(
        f"dataset {name}: {summary.notes} notes of {summary.patients} patients in fhirStores/evaluation, "
        f"{summary.annotations} gold annotations in annotationStores/goldstandard ({arrays or 'none'})"
    )
    if imported.subset is not None:
        typer.echo(f"dataset {name}{SUBSET_SUFFIX}: the first {imported.subset.notes} notes and their gold")
    typer.echo(f"content hash sha256:{imported.content_hash}")
    if imported.left_out:
        listed = ", ".join(f"{n} {label}" for label, n in sorted(imported.left_out.items()))
        typer.echo(f"left out {listed} annotations: the NLP Sandbox data model has no array for them")


def import_(
    path: Path = typer.Argument(..., readable=False, help="File or directory to import."),
    fmt: str = file_format_option(..., "--format", "-f", help="Its format."),
    name: str = typer.Option(..., "--name", help="The dataset id (3–60 lower-case letters, digits, hyphens)."),
    version: str = typer.Option("1", "--version", help="The dataset's version."),
    description: str = typer.Option("", "--description", help="What the dataset is."),
    license: str = typer.Option("none", "--license", help="Its licence (a GitHub licence keyword)."),
    public: bool = typer.Option(False, "--public", help="Mark the dataset public: pages may show its text."),
    subset: int = typer.Option(0, "--subset", min=0, help="Also create NAME-subset with the first N notes."),
    text_dir: Path = typer.Option(None, "--text-dir", readable=False, help="Directory of <note id>.txt texts."),
    db: str = DB_OPTION,
) -> None:
    """Import notes and gold annotations as a dataset: notes into FHIR store evaluation, gold into goldstandard.

    Streams the input in batches inside one transaction: a bad span (named by file, note and offsets)
    or a duplicate note leaves nothing behind.
    """
    from nlpbench import formats

    reader = formats.get(fmt)
    store = open_db(db)
    try:
        with collected_warnings() as warnings, progress(f"importing {path.name}") as advance:
            documents = formats.with_texts(reader.read(path), text_dir)
            imported = import_documents(
                store,
                name,
                documents,
                path,
                version=version,
                description=description,
                license=license,
                public=public,
                subset=subset,
                advance=advance,
            )
    finally:
        store.close()
    warn(warnings)
    report(name, imported)


def list_(db: str = DB_OPTION) -> None:
    """List the datasets: name, version, visibility, notes, gold records, creation time."""
    from nlpbench.store import repository as repo

    with db_session(db, readonly=True) as session:
        rows = repo.dataset_overview(session)
    if not rows:
        stderr().print("no datasets", markup=False)
        return
    typer.echo("name\tversion\tvisibility\tnotes\tgold\tcreated")
    for row in rows:
        created = f"{row.created_at:%Y-%m-%dT%H:%M:%SZ}"
        typer.echo(f"{row.name}\t{row.version}\t{row.visibility}\t{row.notes}\t{row.gold}\t{created}")


def show(name: str = typer.Argument(..., help="The dataset id."), db: str = DB_OPTION) -> None:
    """Show a dataset: its metadata, content hash, FHIR stores and annotation stores with their counts."""
    from nlpbench.store import repository as repo

    with db_session(db, readonly=True) as session:
        dataset = repo.get_dataset(session, name)
        digest = repo.content_hash(session, name)
        stores = repo.store_counts(session, name)
        lines = [
            f"dataset: {dataset.name}",
            f"version: {dataset.version}",
            f"description: {dataset.description}",
            f"license: {dataset.license}",
            f"visibility: {dataset.visibility}",
            f"created: {dataset.created_at:%Y-%m-%dT%H:%M:%SZ}",
            f"content hash: sha256:{digest}",
        ]
    for kind, store_name, count, unit in stores:
        lines.append(f"{kind}/{store_name}: {count} {unit}")
    typer.echo("\n".join(lines))


def export(
    name: str = typer.Argument(..., help="The dataset id."),
    output: Path = typer.Argument(..., readable=False, help="File or directory to write."),
    fmt: str = file_format_option("sandbox-bundles", "--format", "-f", help="Output format."),
    annotation_store: str = typer.Option("goldstandard", "--annotation-store", help="Which annotations to write."),
    fhir_store: str = typer.Option("evaluation", "--fhir-store", help="Which notes to write."),
    db: str = DB_OPTION,
) -> None:
    """Write a dataset's notes and one annotation store (the gold standard by default) in any format.

    OUTPUT is written whole or not at all, never over the store's own file.
    """
    from nlpbench import formats
    from nlpbench.store import repository as repo

    writer = formats.get(fmt)
    counts: Counter[str] = Counter()

    def counted(documents: Iterable[Document]) -> Iterator[Document]:
        for document in documents:
            counts["notes"] += 1
            counts["annotations"] += len(document.annotations)
            yield document

    with (
        collected_warnings() as warnings,
        files.guarded({"--db": store_file(db)}, {"OUTPUT": output}),
        db_session(db, readonly=True) as session,
    ):
        writer.write(counted(repo.documents(session, name, annotation_store, fhir_store)), output)
    warn(warnings)
    typer.echo(f"{output}: wrote {counts['notes']} notes, {counts['annotations']} annotations of {annotation_store}")


def delete(
    name: str = typer.Argument(..., help="The dataset id."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
    db: str = DB_OPTION,
) -> None:
    """Delete a dataset with its notes, patients, annotation stores and annotations."""
    from nlpbench.store import repository as repo

    with db_session(db, create=False) as session:
        repo.get_dataset(session, name)
        if not yes and not typer.confirm(f"delete dataset {name} and everything in it?"):
            raise fail("not deleted")
        repo.delete_dataset(session, name)
    typer.echo(f"deleted dataset {name}")


def add_commands(app: typer.Typer) -> None:
    group = typer.Typer(help="Datasets in the store: import, list, show, export, delete.", no_args_is_help=True)
    group.command("import")(import_)
    group.command("list")(list_)
    group.command("show")(show)
    group.command("export")(export)
    group.command("delete")(delete)
    app.add_typer(group, name="dataset")
