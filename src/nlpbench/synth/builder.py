"""Build a note piece by piece and record a gold annotation as each PHI value goes in.

Offsets are exact by construction: an annotation's span is where its text
was appended. Layout noise applied afterwards keeps every length (a space
becomes a line break, ASCII letters change case), so spans stay valid.
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from nlpbench.model import Annotation, Document, Span


@dataclass(frozen=True)
class Phi:
    """A value to write and annotate: its text, label (``date``, ``age`` …) and attributes."""

    text: str
    label: str
    attributes: dict[str, str] = field(default_factory=dict)


#: What a template field may hold: plain text, one PHI value, or a sequence of both.
Piece = str | Phi | Sequence["str | Phi"]


class NoteBuilder:
    """Appends text and PHI; :meth:`document` returns the note with its gold annotations."""

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._length = 0
        self._spans: list[tuple[int, int, Phi]] = []

    def add(self, piece: Piece) -> None:
        if isinstance(piece, str):
            self._parts.append(piece)
            self._length += len(piece)
        elif isinstance(piece, Phi):
            self._spans.append((self._length, self._length + len(piece.text), piece))
            self.add(piece.text)
        else:
            for part in piece:
                self.add(part)

    def say(self, template: str, **values: Any) -> None:
        """Append ``template`` with each ``{field}`` replaced by its value, annotating PHI fields."""
        for literal, name, spec, _ in string.Formatter().parse(template):
            self.add(literal)
            if name is not None:
                value = values[name]
                self.add(format(value, spec or "") if isinstance(value, str | int) else value)

    def line(self, template: str = "", **values: Any) -> None:
        self.say(template, **values)
        self.add("\n")

    @property
    def text(self) -> str:
        return "".join(self._parts)

    def document(self, doc_id: str, text: str | None = None, metadata: dict[str, Any] | None = None) -> Document:
        """The note (``text`` replaces the built text when noise changed it, lengths equal) and its gold."""
        text = self.text if text is None else text
        annotations = [
            Annotation(doc_id, Span(start, end), phi.label, text[start:end], dict(phi.attributes), id=f"T{index}")
            for index, (start, end, phi) in enumerate(sorted(self._spans, key=lambda s: (s[0], s[1])), start=1)
        ]
        return Document(doc_id, text, annotations, metadata=dict(metadata or {}))
