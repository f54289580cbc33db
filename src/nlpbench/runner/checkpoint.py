"""A resumable record of finished notes: one JSON line per note, appended as each one finishes.

The first line names the tool and the annotation types; every other line is
``{"id": NOTE_ID, "annotations": [{label, start, length, text, confidence,
attributes}, …]}``. A run that stops (killed, a tool that fails) leaves the
notes it finished; the next run with the same checkpoint skips them. A last
line cut short by the stop is ignored, with a warning; a checkpoint made with
another tool, version or set of types is refused rather than mixed in.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

from nlpbench.errors import InputError, InputWarning
from nlpbench.model import Annotation, Document, Span

MAGIC = "nlpbench-annotate-checkpoint"


def header(tool_name: str, tool_version: str, labels: tuple[str, ...]) -> dict[str, Any]:
    return {"checkpoint": MAGIC, "tool": tool_name, "version": tool_version, "labels": list(labels)}


class Checkpoint:
    """The finished notes of one run in ``path``: :meth:`open` loads them, :meth:`add` appends one."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._handle = None

    def open(self, expected: dict[str, Any]) -> dict[str, Document]:
        """The notes already finished, by id; starts the file when there is none."""
        finished: dict[str, Document] = {}
        if self.path.exists() and self.path.stat().st_size:
            finished = self._load(expected)
            self._handle = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 - closed by close()
        else:
            self._handle = open(self.path, "w", encoding="utf-8")  # noqa: SIM115
            self._write(expected)
        return finished

    def add(self, document: Document) -> None:
        self._write({"id": document.id, "annotations": [_annotation_json(a) for a in document.annotations]})

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    def _write(self, obj: dict[str, Any]) -> None:
        self._handle.write(json.dumps(obj, ensure_ascii=False) + "\n")
        self._handle.flush()

    def _load(self, expected: dict[str, Any]) -> dict[str, Document]:
        with open(self.path, encoding="utf-8") as handle:
            lines = handle.read().split("\n")
        complete, last = lines[:-1], lines[-1]  # a file written whole ends with a newline
        if last:
            warnings.warn(
                f"{self.path}: the last line was cut short (the run was interrupted); that note is sent again",
                InputWarning,
                stacklevel=3,
            )
            self._truncate(sum(len(line.encode()) + 1 for line in complete))
        if not complete:
            raise InputError("not an nlpbench annotate checkpoint: no header line", self.path)
        self._check_header(complete[0], expected)
        finished: dict[str, Document] = {}
        for number, line in enumerate(complete[1:], 2):
            document = _document(line, self.path, f"line {number}")
            finished[document.id] = document
        return finished

    def _check_header(self, line: str, expected: dict[str, Any]) -> None:
        try:
            found = json.loads(line)
        except json.JSONDecodeError:
            found = None
        if not isinstance(found, dict) or found.get("checkpoint") != MAGIC:
            raise InputError("not an nlpbench annotate checkpoint", self.path, "line 1")
        if found != expected:
            raise InputError(
                f"made with {found.get('tool')} {found.get('version')} for {', '.join(found.get('labels', []))}, "
                f"not {expected['tool']} {expected['version']} for {', '.join(expected['labels'])}; "
                "delete it or give another --checkpoint",
                self.path,
                "line 1",
            )

    def _truncate(self, size: int) -> None:
        with open(self.path, "r+b") as handle:
            handle.truncate(size)


def _annotation_json(annotation: Annotation) -> dict[str, Any]:
    return {
        "label": annotation.label,
        "start": annotation.start,
        "length": annotation.span.length,
        "text": annotation.text,
        "confidence": annotation.confidence,
        "attributes": annotation.attributes,
    }


def _document(line: str, path: Path, where: str) -> Document:
    try:
        record = json.loads(line)
        document = Document(record["id"])
        for a in record["annotations"]:
            document.annotations.append(
                Annotation(
                    document.id,
                    Span.of(a["start"], a["length"]),
                    a["label"],
                    a["text"],
                    a["attributes"],
                    a["confidence"],
                )
            )
    except (json.JSONDecodeError, KeyError, TypeError, ValueError) as error:
        raise InputError(f"not a finished note ({type(error).__name__}: {error})", path, where) from None
    return document
