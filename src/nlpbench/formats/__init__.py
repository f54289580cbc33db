"""Readers and writers, one module per format, all speaking :mod:`nlpbench.model`.

A format reads a path into a stream of :class:`~nlpbench.model.Document` and
writes documents back. Readers check what they read and raise
:class:`~nlpbench.errors.InputError` naming file, record and problem; odd but
valid input is reported with :class:`~nlpbench.errors.InputWarning`.
"""

from __future__ import annotations

import csv
import importlib
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from nlpbench import files
from nlpbench.errors import InputError, shorten
from nlpbench.files import Input, Source
from nlpbench.model import Document
from nlpbench.registry import Registry

Reader = Callable[..., Iterator[Document]]

# CSV cells hold whole notes: a cell may be longer than the csv module's default limit of 128 KiB, up to the
# longest line any reader accepts.
csv.field_size_limit(files.MAX_LINE)


@dataclass(frozen=True)
class Format:
    """A named format.

    ``read(path, labels=None)`` yields documents, keeping only annotations
    whose label is in ``labels`` when it is given; ``write(docs, path)``
    stores documents. ``keeps`` names what the writer stores besides
    annotations (``relations``, ``links``): ``convert`` reports the rest as left out.
    A reader that can give annotations as columns (``Document.columns``) for
    scoring takes ``columns=True`` too (``columns``).
    """

    name: str
    summary: str
    read: Reader
    write: Callable[[Iterable[Document], Path], None]
    keeps: frozenset[str] = frozenset()
    columns: bool = False


REGISTRY: Registry[Format] = Registry("format")
#: The module of this package that registers each format: :func:`get` imports that one module only
#: (the others import BioC, XML or JSON libraries a command may not need), :func:`names` lists them
#: without importing any. A test checks that each module registers exactly its formats.
CATALOGUE: dict[str, str] = {
    "bioc": "bioc",
    "brat": "brat",
    "conll": "conll",
    "conll-bioes": "conll",
    "conll-iob1": "conll",
    "i2b2": "i2b2",
    "jsonl": "jsonl",
    "sandbox": "sandbox",
    "sandbox-bundles": "sandbox",
    "sandbox-response": "sandbox",
    "sandbox-seed": "sandbox",
}


def register(
    name: str,
    summary: str,
    read: Reader,
    write,
    *,
    reads_labels: bool = False,
    keeps: Collection[str] = (),
    columns: bool = False,
) -> Format:
    """Register a format; a reader that cannot skip labels itself (``reads_labels``) is filtered after reading."""
    reader = read if reads_labels else _filtered(read)
    return REGISTRY.register(name, Format(name, summary, reader, write, frozenset(keeps), columns))


def _filtered(read: Reader) -> Reader:
    def read_labels(path: Source, labels: Collection[str] | None = None) -> Iterator[Document]:
        for document in read(path):
            if labels is not None:
                document.annotations = [a for a in document.annotations if a.label in labels]
            yield document

    read_labels.__doc__ = read.__doc__
    return read_labels


def get(name: str) -> Format:
    """The format ``name``, its module imported (:data:`CATALOGUE`); an unknown name raises
    :class:`nlpbench.registry.UnknownName` listing the known ones."""
    if name not in REGISTRY:
        if name in CATALOGUE:
            importlib.import_module(f"{__name__}.{CATALOGUE[name]}")
        else:
            _load_all()
    return REGISTRY.get(name)


def names() -> list[str]:
    """Every format's name, sorted, without importing the format modules."""
    return sorted({*CATALOGUE, *REGISTRY.names()})


def _load_all() -> None:
    """Import every format module so that each registers itself."""
    for module in sorted(set(CATALOGUE.values())):
        importlib.import_module(f"{__name__}.{module}")


def with_texts(documents: Iterable[Document], text_dir: Input | None) -> Iterator[Document]:
    """Give each document without text the text of ``text_dir/<id>.txt``."""
    for document in documents:
        if document.text is None and text_dir is not None:
            path = files.source(text_dir) / f"{document.id}.txt"
            if not files.is_file(path):
                raise InputError("no text file for this document", path, f"document {document.id}")
            document.text = read_text(path)
        yield document


def checked(documents: Iterable[Document], source: Path | str) -> Iterator[Document]:
    """Pass documents through, raising on the first annotation that does not fit its text or a repeated document."""
    seen: set[str] = set()
    for document in documents:
        if document.id in seen:
            raise InputError("a second document with this id", source, f"document {shorten(document.id)}")
        seen.add(document.id)
        problem = document.span_problem()
        if problem:
            raise InputError(problem, source, f"document {document.id}")
        yield document


def read_text(path: Source, *, bom: bool = True) -> str:
    """A note's text file as Python reads it, keeping ``\\r`` so that offsets stay true.

    A note's text keeps a byte order mark (it is a character its offsets count);
    ``bom=False`` skips it, for files whose lines are records.
    """
    return files.read_text(path, bom=bom)
