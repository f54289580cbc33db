"""CoNLL BIO columns: a token per line, its tag in the last column.

A blank line ends a sentence and ``-DOCSTART-`` a document. Tags are read in
any of the three schemes — IOB1 (``I-`` unless two entities of a type touch),
IOB2 (``B-`` starts every entity) and BIOES (``S-`` single, ``E-`` end) — by
one decoder: ``B``/``S`` start an entity, ``I``/``E`` continue one of the same
type or start one, ``E``/``S`` close it. The text is rebuilt with one space
between tokens and a line break between sentences, and each token's offsets
are kept in ``metadata["tokens"]``. Documents are numbered ``1``, ``2``, … in
file order, so a gold and a predicted file pair up by position.

Writing cuts each line of the text at whitespace and at annotation
boundaries, so every annotation covers whole tokens.
"""

from __future__ import annotations

import itertools
import re
import warnings
from collections.abc import Iterable, Iterator
from functools import partial
from pathlib import Path

from nlpbench import files
from nlpbench.errors import InputError, InputWarning, excerpt
from nlpbench.files import Source, text_lines, written
from nlpbench.formats import register
from nlpbench.model import Annotation, Document, Span

SCHEMES = ("iob1", "iob2", "bioes")
_TAG = re.compile(r"^([BIES])-(.+)$")


def read(path: Source) -> Iterator[Document]:
    """The documents of a CoNLL BIO file, in order; a byte order mark is skipped, lines are bounded."""
    path = files.source(path)
    builder = _Builder(path)
    for number, line in enumerate(text_lines(path, newline="\n"), start=1):
        columns = line.split()
        if not columns:
            builder.end_sentence()
        elif columns[0] == "-DOCSTART-":
            yield from builder.end_document()
        elif len(columns) < 2:
            raise InputError(
                f"a token line needs a token and a tag, got one field ({len(line.strip())} characters)",
                path,
                f"line {number}",
            )
        else:
            builder.add(columns[0], columns[-1], f"line {number}")
    yield from builder.end_document()


class _Builder:
    """Collects tokens and decodes tags into annotations, one document at a time."""

    def __init__(self, path: Source):
        self.path = path
        self.count = 0
        self._reset()

    def _reset(self) -> None:
        self.pieces: list[str] = []  # the text being rebuilt, joined once at the document's end
        self.length = 0
        self.tokens: list[tuple[int, int]] = []
        self.annotations: list[tuple[int, int, str]] = []
        self.open: tuple[int, str] | None = None  # (start, label) of the entity being read
        self.sentence_started = False

    def add(self, token: str, tag: str, where: str) -> None:
        prefix, label = self._parse(tag, where)
        if prefix is None or prefix in "BS" or self.open is None or self.open[1] != label:
            self._close()
        if self.length:
            self.pieces.append(" " if self.sentence_started else "\n")
            self.length += 1
        start = self.length
        self.pieces.append(token)
        self.length += len(token)
        self.tokens.append((start, self.length))
        self.sentence_started = True
        if prefix is None or label is None:  # an O tag
            return
        if self.open is None:
            self.open = (start, label)
        if prefix in "ES":
            self._close()

    def _parse(self, tag: str, where: str) -> tuple[str | None, str | None]:
        if tag == "O":
            return None, None
        match = _TAG.match(tag)
        if not match:
            raise InputError(f"bad tag {excerpt(tag)}: expected O or B-, I-, E-, S- and a type", self.path, where)
        return match[1], match[2]

    def _close(self) -> None:
        """Close the open entity at the end of the last token read."""
        if self.open is not None:
            start, label = self.open
            self.annotations.append((start, self.tokens[-1][1], label))
            self.open = None

    def end_sentence(self) -> None:
        self._close()
        self.sentence_started = False

    def end_document(self) -> Iterator[Document]:
        self.end_sentence()
        if self.tokens:
            self.count += 1
            doc_id = str(self.count)
            text = "".join(self.pieces)
            document = Document(doc_id, text, metadata={"tokens": self.tokens})
            document.annotations = [
                Annotation(doc_id, Span(s, e), label, text[s:e]) for s, e, label in self.annotations
            ]
            yield document
        self._reset()


def tokens_of(document: Document) -> list[tuple[int, int]]:
    """Cut each line at whitespace and at annotation boundaries: ``(start, end)`` per token."""
    text = document.text or ""
    cuts = {cut for a in document.annotations for part in a.span.parts for cut in part}
    tokens: list[tuple[int, int]] = []
    for match in re.finditer(r"\S+", text):
        points = sorted({match.start(), match.end(), *(c for c in cuts if match.start() < c < match.end())})
        tokens.extend(itertools.pairwise(points))
    return tokens


def to_conll(document: Document, scheme: str = "iob2") -> str:
    """The document as ``token tag`` lines; sentences are the lines of its text."""
    if document.text is None:
        raise InputError("CoNLL needs the note text", record=f"document {document.id}")
    tokens = tokens_of(document)
    tags = ["O"] * len(tokens)
    position = {start: i for i, (start, _) in enumerate(tokens)}
    taken = [False] * len(tokens)
    skipped = 0
    for annotation in sorted(document.annotations, key=lambda a: (a.start, -a.end)):
        for start, end in annotation.span.parts:
            covered, i = [], position.get(start, len(tokens))
            while i < len(tokens) and tokens[i][0] < end:
                covered.append(i)
                i += 1
            if not covered or any(taken[i] for i in covered):
                skipped += 1
                continue
            for i in covered:
                taken[i] = True
            _tag(tags, covered, annotation.label, scheme)
    if skipped:
        warnings.warn(
            f"document {document.id}: {skipped} overlapping annotations cannot be written in BIO; not written",
            InputWarning,
            stacklevel=2,
        )
    lines: list[str] = []
    previous_end = 0
    for (start, end), tag in zip(tokens, tags, strict=True):
        if lines and "\n" in document.text[previous_end:start]:
            lines.append("")
        lines.append(f"{document.text[start:end]} {tag}")
        previous_end = end
    return "\n".join(lines) + "\n"


def _tag(tags: list[str], covered: list[int], label: str, scheme: str) -> None:
    if scheme == "bioes" and len(covered) == 1:
        tags[covered[0]] = f"S-{label}"
        return
    first, *rest = covered
    touching = first > 0 and tags[first - 1][2:] == label and tags[first - 1] != "O"
    if scheme == "iob1" and not touching:
        tags[first] = f"I-{label}"
    else:
        tags[first] = f"B-{label}"
    for i in rest:
        tags[i] = f"I-{label}"
    if scheme == "bioes":
        tags[covered[-1]] = f"E-{label}"


def write(documents: Iterable[Document], path: Path, scheme: str = "iob2") -> None:
    """Write documents separated by ``-DOCSTART-`` lines, tags in ``scheme``."""
    if scheme not in SCHEMES:
        raise ValueError(f"unknown scheme {scheme!r}; known: {', '.join(SCHEMES)}")
    with written(path) as handle:
        for document in documents:
            handle.write("-DOCSTART- O\n\n" + to_conll(document, scheme) + "\n")


register("conll", "CoNLL BIO columns (reads IOB1, IOB2 and BIOES; writes IOB2)", read, write)
register("conll-iob1", "CoNLL BIO columns, written in IOB1", read, partial(write, scheme="iob1"))
register("conll-bioes", "CoNLL BIO columns, written in BIOES", read, partial(write, scheme="bioes"))
