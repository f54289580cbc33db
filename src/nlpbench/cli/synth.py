"""``nlpbench synth``: write seeded synthetic clinical notes with gold PHI annotations."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path

import typer

from nlpbench import formats
from nlpbench.cli.common import fail, progress, warn
from nlpbench.cli.db import open_db
from nlpbench.cli.options import DB_OPTION, file_format_option
from nlpbench.errors import collected_warnings
from nlpbench.model import PHI_TYPES, Document
from nlpbench.synth import EMBEDDED_NOTES, EMBEDDED_SEED, embedded, generate

#: Formats whose files have no place for the i2b2-only labels (profession, age).
_SANDBOX_ONLY = {"sandbox", "sandbox-bundles", "sandbox-response"}


def synth(
    output: Path = typer.Argument(None, readable=False, help="File or directory to write (see `nlpbench formats`)."),
    notes: int = typer.Option(100, "--notes", "-n", min=0, help="How many notes to generate."),
    seed: int = typer.Option(0, "--seed", "-s", help="Random seed: the same seed gives the same notes."),
    fmt: str = file_format_option("sandbox-bundles", "--format", "-f", help="Output format."),
    use_embedded: bool = typer.Option(
        False,
        "--embedded",
        help=f"Write the fixed dataset shipped with nlpbench ({EMBEDDED_NOTES} notes, seed {EMBEDDED_SEED}) "
        "instead of generating; --notes and --seed are ignored.",
    ),
    into_store: str = typer.Option(
        None, "--into-store", help="Import the notes into the store as this dataset instead of writing a file."
    ),
    public: bool = typer.Option(False, "--public", help="With --into-store: mark the dataset public."),
    subset: int = typer.Option(0, "--subset", min=0, help="With --into-store: also create NAME-subset (N notes)."),
    db: str = DB_OPTION,
) -> None:
    """Generate synthetic clinical notes with gold date, person name, location, id and contact annotations.

    Discharge summaries, progress notes, radiology and pathology reports and referral letters, with i2b2
    subtypes, PROFESSION and AGE, hard negatives (drugs that look like names, doses that look like dates,
    eponyms) and layout noise. The notes depend on the seed and on the installed Faker version.
    """
    if into_store is not None:
        _into_store(into_store, embedded() if use_embedded else generate(notes, seed), db, public, subset)
        return
    if output is None:
        raise fail("give OUTPUT, or --into-store NAME")
    writer = formats.get(fmt)
    if fmt == "sandbox-response" and (use_embedded or notes != 1):
        raise fail("sandbox-response holds one note: give --notes 1")
    documents: Iterable[Document] = embedded() if use_embedded else generate(notes, seed)
    counts: Counter[str] = Counter()
    with collected_warnings() as warnings:
        writer.write(_counted(documents, counts, drop_i2b2_only=fmt in _SANDBOX_ONLY), output)
    shown = warnings[:5]
    if len(warnings) > 5:
        shown.append(f"… and {len(warnings) - 5} more warnings like these")
    warn(shown)
    labels = ", ".join(f"{n} {label}" for label, n in sorted(counts.items()) if label not in ("notes", "dropped"))
    typer.echo(f"{output}: wrote {counts['notes']} notes ({labels})")
    if counts["dropped"]:
        typer.echo(f"{counts['dropped']} profession and age annotations left out: {fmt} has no place for them")


def _into_store(name: str, documents: Iterable[Document], db: str | None, public: bool, subset: int) -> None:
    from nlpbench.cli.dataset import import_documents, report

    counts: Counter[str] = Counter()
    store = open_db(db)
    try:
        with progress("generating notes") as advance:
            imported = import_documents(
                store,
                name,
                _counted(documents, counts, drop_i2b2_only=True),
                "synth",
                description="synthetic clinical notes from nlpbench synth",
                public=public,
                subset=subset,
                advance=advance,
            )
    finally:
        store.close()
    report(name, imported)
    if counts["dropped"]:
        typer.echo(f"{counts['dropped']} profession and age annotations left out: the data model has no place for them")


def _counted(documents: Iterable[Document], counts: Counter[str], *, drop_i2b2_only: bool) -> Iterator[Document]:
    for document in documents:
        if drop_i2b2_only:
            kept = [a for a in document.annotations if a.label in PHI_TYPES]
            counts["dropped"] += len(document.annotations) - len(kept)
            document.annotations = kept
        counts["notes"] += 1
        counts.update(a.label for a in document.annotations)
        yield document


def add_commands(app: typer.Typer) -> None:
    app.command("synth")(synth)
