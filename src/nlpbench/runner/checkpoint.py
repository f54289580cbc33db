"""A resumable record of finished notes: one JSON line per note, appended as each one finishes.

The first line says who made it::

    {"checkpoint": "nlpbench-annotate-checkpoint", "format": 2, "url": URL,
     "tool": NAME, "version": VERSION, "type": TOOL_TYPE, "labels": [TYPE, …]}

— the tool's URL and what its ``GET /tool`` said, and the annotation types
asked for. Every other line is one finished note::

    {"id": NOTE_ID, "sha256": SHA-256 OF THE NOTE'S TEXT,
     "annotations": [{label, start, length, text, confidence, attributes}, …]}

A run that stops (killed, a tool that fails) leaves the notes it finished; the
next run with the same checkpoint takes them from here instead of the tool,
as long as the note's text still has the same hash (a note whose text changed
is annotated again, and its new line replaces the old). Only byte offsets are
held in memory: a note, resumed or just finished, is read back when its turn
to be written comes, and checked against its note like a fresh answer (a span
past the note's end is an error naming the line). Lines are ASCII (JSON
escapes), so that any text, lone surrogates included, is written whole. A
last line cut short by the stop is dropped, with a warning, and that note is
sent again. A checkpoint made with another tool, URL, version or set of types
is refused rather than mixed in, unless the run restarts it.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from nlpbench.errors import InputError, InputWarning
from nlpbench.model import Annotation, Document, Span
from nlpbench.runner.client import ClientStats, ToolError, annotation_of

MAGIC = "nlpbench-annotate-checkpoint"
FORMAT = 2
#: The fields of an annotation in a finished note's line, and the JSON types each may have.
_FIELDS = (
    ("label", (str,)),
    ("start", (int,)),
    ("length", (int,)),
    ("text", (str,)),
    ("confidence", (int, float)),
    ("attributes", (dict,)),
)


def header(url: str, tool_name: str, tool_version: str, tool_type: str, labels: tuple[str, ...]) -> dict[str, Any]:
    """The first line of a checkpoint: the identity of the tool and the types asked for."""
    return {
        "checkpoint": MAGIC,
        "format": FORMAT,
        "url": url,
        "tool": tool_name,
        "version": tool_version,
        "type": tool_type,
        "labels": list(labels),
    }


@dataclass(frozen=True)
class Entry:
    """Where a finished note's line is: its byte offset and its line number (for messages)."""

    offset: int
    line: int


def text_hash(note: Document) -> str:
    return hashlib.sha256((note.text or "").encode("utf-8", "surrogatepass")).hexdigest()


class Checkpoint:
    """The finished notes of one run in ``path``.

    :meth:`open` indexes them, :meth:`resumed` finds one, :meth:`add` appends
    one, :meth:`document` reads one back.
    """

    def __init__(self, path: Path):
        self.path = Path(path)
        self.changed = 0  # notes in the checkpoint whose text is not the text they were annotated with
        self._index: dict[str, tuple[Entry, str]] = {}  # id → (where, text hash)
        self._labels: frozenset[str] = frozenset()
        self._size = self._lines = 0
        #: Where the lines this run appends begin.
        self.written_from = 0
        self._handle: BinaryIO | None = None
        self._reader: BinaryIO | None = None

    def open(self, expected: dict[str, Any], *, restart: bool = False) -> None:
        """Index the notes already finished; start the file when there is none (or when ``restart``)."""
        self._labels = frozenset(expected["labels"])
        if restart:
            self.path.unlink(missing_ok=True)
        if self.path.exists() and self._load(expected):
            self._handle = open(self.path, "ab")  # noqa: SIM115 - closed by close()
        else:
            self._handle = open(self.path, "wb")  # noqa: SIM115
            self._size = self._lines = 0
            self._write(expected)
        self.written_from = self._size
        self._reader = open(self.path, "rb")  # noqa: SIM115

    def resumed(self, note: Document) -> Entry | None:
        """Where ``note``'s finished line is, if it was annotated with the text it has now."""
        found = self._index.get(note.id)
        if found is None:
            return None
        entry, digest = found
        if digest != text_hash(note):
            self.changed += 1
            return None
        return entry

    def document(self, note: Document, entry: Entry, stats: ClientStats) -> Document:
        """The annotations of ``note`` at ``entry``, checked against it as a fresh answer is.

        A line this run wrote (at or past :attr:`written_from`) was checked as
        the tool's answer a moment ago, and is read back without checks.
        """
        assert self._reader is not None, "open() the checkpoint first"
        self._reader.seek(entry.offset)
        where = f"line {entry.line}"
        record = _record(self._reader.readline(), self.path, where)
        document = Document(note.id)
        if entry.offset >= self.written_from:
            document.annotations = [
                Annotation(note.id, Span.of(a["start"], a["length"]), a["label"], a["text"], a["attributes"],
                           a["confidence"])
                for a in record["annotations"]
            ]  # fmt: skip
            return document
        try:
            for index, a in enumerate(record["annotations"]):
                self._check_annotation(a, where, index)
                document.annotations.append(
                    annotation_of(
                        note,
                        a["label"],
                        a["start"],
                        a["length"],
                        a["text"],
                        a["attributes"],
                        a["confidence"],
                        f"note {note.id}: annotations[{index}]",
                        stats,
                    )
                )
        except ToolError as error:
            raise InputError(str(error), self.path, where) from None
        return document

    def add(self, note: Document, document: Document) -> Entry:
        """Append ``note``'s finished annotations; where they are."""
        annotations = [_annotation_json(a) for a in document.annotations]
        return self._write({"id": document.id, "sha256": text_hash(note), "annotations": annotations})

    def close(self) -> None:
        for handle in (self._handle, self._reader):
            if handle is not None:
                handle.close()
        self._handle = self._reader = None

    def _write(self, obj: dict[str, Any]) -> Entry:
        line = (json.dumps(obj) + "\n").encode("ascii")
        assert self._handle is not None, "open() the checkpoint first"
        self._handle.write(line)  # one write: a line is whole or cut
        self._handle.flush()
        entry = Entry(self._size, self._lines + 1)
        self._size, self._lines = self._size + len(line), self._lines + 1
        return entry

    def _load(self, expected: dict[str, Any]) -> bool:
        """Index the file; False when it holds no whole line (a run killed before its first one)."""
        offset = 0
        with open(self.path, "rb") as handle:
            for number, line in enumerate(handle, 1):
                if not line.endswith(b"\n"):
                    warnings.warn(
                        f"{self.path}: line {number} was cut short (the run was interrupted); that note is sent again",
                        InputWarning,
                        stacklevel=3,
                    )
                    self._truncate(offset)
                    break
                if number == 1:
                    self._check_header(line, expected)
                else:
                    record = _record(line, self.path, f"line {number}")
                    self._index[record["id"]] = (Entry(offset, number), record["sha256"])
                offset += len(line)
                self._lines = number
        self._size = offset
        return offset > 0

    def _check_header(self, line: bytes, expected: dict[str, Any]) -> None:
        try:
            found = json.loads(line)
        except ValueError:
            found = None
        if not isinstance(found, dict) or found.get("checkpoint") != MAGIC:
            raise InputError("not an nlpbench annotate checkpoint", self.path, "line 1")
        if found.get("format") != FORMAT:
            raise InputError(
                "made by an older nlpbench, without note hashes; --restart starts it again", self.path, "line 1"
            )
        if found != expected:
            raise InputError(
                f"made for {_identity(found)}, not {_identity(expected)}; --restart starts it again",
                self.path,
                "line 1",
            )

    def _check_annotation(self, a: Any, where: str, index: int) -> None:
        if not isinstance(a, dict):
            wrong: str | None = "the annotation"
        else:
            wrong = next((name for name, kind in _FIELDS if type(a.get(name)) not in kind), None)
        if wrong:
            raise InputError(f"annotations[{index}]: {wrong} is missing or of the wrong type", self.path, where)
        if a["label"] not in self._labels:
            raise InputError(f"annotations[{index}]: a type that was not asked for", self.path, where)

    def _truncate(self, size: int) -> None:
        with open(self.path, "r+b") as handle:
            handle.truncate(size)


def _identity(found: dict[str, Any]) -> str:
    labels = found.get("labels")
    labels = ", ".join(map(str, labels)) if isinstance(labels, list) else "?"
    return f"{found.get('tool')} {found.get('version')} at {found.get('url')} for {labels}"


def _annotation_json(annotation: Annotation) -> dict[str, Any]:
    return {
        "label": annotation.label,
        "start": annotation.start,
        "length": annotation.span.length,
        "text": annotation.text,
        "confidence": annotation.confidence,
        "attributes": annotation.attributes,
    }


def _record(line: bytes, path: Path, where: str) -> dict[str, Any]:
    """A finished note's line, its shape checked (its annotations are checked when it is resumed)."""
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):
        raise InputError("not a finished note: the line is not JSON", path, where) from None
    if not (
        isinstance(record, dict)
        and isinstance(record.get("id"), str)
        and isinstance(record.get("sha256"), str)
        and isinstance(record.get("annotations"), list)
    ):
        raise InputError("not a finished note: it needs a string id and sha256 and a list of annotations", path, where)
    return record
