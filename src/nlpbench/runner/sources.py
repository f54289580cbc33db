"""Where a run's notes come from and where its annotations go: a file, or an NLP Sandbox data node.

``annotate`` and ``run`` open their ``--notes`` with :func:`open_notes` (a file
of a format that carries texts, or a data node's FHIR store URL) and
``annotate`` its ``--out`` with :func:`open_output` (a file, written whole or
not at all, or ``datanode:URL`` of an annotation store, created if missing);
the data-node side is :mod:`nlpbench.formats.datanode`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from nlpbench import formats
from nlpbench.errors import InputError
from nlpbench.formats.datanode import (
    ANNOTATIONS,
    NOTES,
    DataNodeClient,
    StoreURL,
    is_data_node,
    read_dataset,
    read_notes,
    write_annotations,
)
from nlpbench.model import Document
from nlpbench.runner.output import replaced_atomically, writable


@dataclass(frozen=True)
class Notes:
    """The notes a command sends: a file of ``format``, or the FHIR store at ``url``."""

    source: str
    format: str
    url: StoreURL | None
    timeout: float
    retries: int

    @property
    def path(self) -> Path | None:
        return Path(self.source) if self.url is None else None

    def count(self) -> int:
        if self.url is None:
            return sum(1 for _ in formats.get(self.format).read(Path(self.source)))
        with self._node(self.url) as node:
            node.get(self.url.path)  # a missing store or dataset: 404 (listing its notes would be a 400)
            return node.total(self.url.path + "/fhir/Note", "notes")

    def documents(self, gold: bool = False) -> Iterator[Document]:
        """Each note with its text; from a data node with ``gold``, with the annotations of ``goldstandard``."""
        if self.url is None:
            for document in formats.get(self.format).read(Path(self.source)):
                if document.text is None:
                    problem = "this note has no text to send (use a format that carries texts)"
                    raise InputError(problem, self.source, document.id)
                yield document
            return
        with self._node(self.url) as node:
            yield from (read_dataset(self.url, node) if gold else read_notes(self.url, node))

    def _node(self, url: StoreURL) -> DataNodeClient:
        return DataNodeClient(url.api, timeout=self.timeout, retries=self.retries)


@dataclass(frozen=True)
class Output:
    """Where a command writes annotations: a file of ``format``, or the annotation store at ``url``."""

    target: str
    format: str
    url: StoreURL | None
    notes: StoreURL | None
    timeout: float
    retries: int

    @property
    def path(self) -> Path | None:
        return Path(self.target) if self.url is None else None

    def checkpoint(self) -> Path:
        """The default checkpoint: beside the file, or ``DATASET-STORE.checkpoint.jsonl`` here for a data node."""
        if self.url is None:
            path = Path(self.target)
            return path.with_name(path.name + ".checkpoint.jsonl")
        return Path(f"{self.url.dataset}-{self.url.store}.checkpoint.jsonl")

    def check(self, notes: int) -> None:
        """Fail before any work if the file format cannot hold a tool's annotations (a data node always can)."""
        if self.url is None:
            writable(formats.get(self.format), notes)

    def write(self, documents: Iterable[Document]) -> str:
        """Write the documents as they come; returns where, for the command's last line.

        A file appears whole or not at all. A data node's annotation store is
        created if missing; a record it already holds is kept when it is the
        same, and is an error when it differs (nothing stored is overwritten).
        """
        if self.url is None:
            with replaced_atomically(Path(self.target)) as partial:
                formats.get(self.format).write(documents, partial)
            return self.target
        with DataNodeClient(self.url.api, timeout=self.timeout, retries=self.retries) as node:
            written = write_annotations(documents, self.url, node, self.notes)
        again = f" ({written.unchanged} already stored)" if written.unchanged else ""
        return f"{self.url}{again}"


def open_notes(source: str | Path, fmt: str = "sandbox-bundles", *, timeout: float = 30.0, retries: int = 3) -> Notes:
    """The notes of ``--notes``: a file of ``fmt``, or a data node's FHIR store URL (checked now)."""
    url = StoreURL.parse(source, NOTES) if is_data_node(source) else None
    return Notes(str(source), fmt, url, timeout, retries)


def open_output(
    target: str | Path,
    fmt: str = "sandbox",
    *,
    notes: str | Path | None = None,
    timeout: float = 30.0,
    retries: int = 3,
) -> Output:
    """The annotations' destination of ``--out``: a file of ``fmt``, or ``datanode:URL`` of an annotation store.

    ``notes`` is where the notes came from: when it is a FHIR store, each record names its note there.
    """
    url = StoreURL.parse(target, ANNOTATIONS) if is_data_node(target) else None
    from_node = StoreURL.parse(notes, NOTES) if notes is not None and is_data_node(notes) else None
    return Output(str(target), fmt, url, from_node, timeout, retries)
