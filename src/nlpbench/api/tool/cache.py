"""The note cache of a tool: a PHI tool is asked five times per note, and its annotator is deterministic."""

from __future__ import annotations

import hashlib
import sys
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import replace

from nlpbench.annotators import Annotator
from nlpbench.api.limits import CACHE_BYTES
from nlpbench.api.problems import AnnotatorError
from nlpbench.api.tool.answers import note_document
from nlpbench.model import Annotation
from nlpbench.toolapi import schemas
from nlpbench.toolapi.account import Account

#: An annotator's accounts of a note, per type (:meth:`~nlpbench.annotators.Annotator.annotate_accounted`).
Accounts = Mapping[str, Account] | None

#: What one cache entry holds besides its annotations: the key, the entry, its lock, the dict's slot.
ENTRY_BYTES = 256


class NoteCache:
    """The annotations of recent notes, at most ``max_bytes`` in all: a PHI tool is asked five times per note.

    Entries are keyed by the SHA-256 of the note's text, so the cache never
    keeps a note; each entry's size is estimated from the Python objects of
    its annotations (:func:`annotations_bytes`), and the least recently used
    entries go when the total passes ``max_bytes``. A note whose annotations
    alone exceed ``max_bytes`` is answered but not kept. The five requests for
    one note usually arrive together; the first computes while the others
    wait for its result instead of computing it again.
    """

    def __init__(self, annotator: Annotator, max_bytes: int = CACHE_BYTES):
        self._annotator = annotator
        self.max_bytes = max_bytes
        self.bytes = 0
        self._entries: OrderedDict[bytes, _Entry] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def annotations(self, note: schemas.Note) -> list[Annotation]:
        """The annotator's annotations of ``note``, computed once for recent notes."""
        return self.accounted(note)[0]

    def accounted(self, note: schemas.Note) -> tuple[list[Annotation], Accounts]:
        """The annotations of ``note`` and the annotator's accounts of it per type (None if it keeps none)."""
        key = hashlib.sha256(note.text.encode("utf-8", "surrogatepass")).digest()
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                entry = self._entries[key] = _Entry()
            else:
                self._entries.move_to_end(key)
        with entry.lock:
            if entry.annotations is None:
                try:
                    annotations, accounts = self._annotate(note)
                except BaseException:
                    with self._lock:
                        if self._entries.get(key) is entry:
                            del self._entries[key]
                    raise
                with self._lock:
                    entry.annotations, entry.accounts = annotations, accounts
                    entry.size = ENTRY_BYTES + annotations_bytes(annotations)
                    if self._entries.get(key) is entry:
                        self.bytes += entry.size
                    self._evict()
            return entry.annotations, entry.accounts

    def _annotate(self, note: schemas.Note) -> tuple[list[Annotation], Accounts]:
        found = []
        annotations, accounts = self._annotator.annotate_accounted(note_document(note))
        for a in annotations:
            if a.end > len(note.text):
                raise AnnotatorError(
                    f"the annotator gave a {a.label} span {a.start}-{a.end} "
                    f"past the end of note {note.identifier} ({len(note.text)} characters)"
                )
            found.append(a if a.text is not None else replace(a, text=a.span.covered_text(note.text)))
        return found, accounts

    def _evict(self) -> None:
        """Drop least recently used finished entries until the total fits (the lock is held)."""
        for key in list(self._entries):
            if self.bytes <= self.max_bytes:
                return
            entry = self._entries[key]
            if entry.annotations is not None:
                del self._entries[key]
                self.bytes -= entry.size


class _Entry:
    __slots__ = ("accounts", "annotations", "lock", "size")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.annotations: list[Annotation] | None = None
        self.accounts: Accounts = None
        self.size = 0


def annotations_bytes(annotations: list[Annotation]) -> int:
    """The bytes the annotations' objects hold: each annotation, span, text, attribute dict and values."""
    size = sys.getsizeof(annotations)
    for a in annotations:
        size += sys.getsizeof(a) + sys.getsizeof(a.span) + sys.getsizeof(a.text) + sys.getsizeof(a.attributes)
        size += sum(sys.getsizeof(value) for value in a.attributes.values())
    return size
