"""Coreference files: CoNLL-2012 columns, e2e jsonlines and OMIn CSV cluster lists.

These formats hold token-indexed clusters, not character-offset annotations,
so they produce :class:`~nlpbench.model.CorefDocument` and are listed in
:data:`FORMATS` rather than in the format registry of :mod:`nlpbench.formats`.

**CoNLL-2012** (``conll2012``), read the way the reference scorer v8.01 reads
it:

- a document runs from ``#begin document KEY`` to the next line whose first
  field starts with ``#`` and that contains ``#end document`` (v8.01 accepts
  that text anywhere in a line); its id is everything after ``begin document `` (so
  ``(nw/xinhua/00/chtb_0009); part 000`` is one id, trailing spaces
  included): every part is a document of its own;
- blank and whitespace-only lines end sentences and are not tokens; every
  other line inside a document is a token, numbered from 0 over the whole
  document, a line starting with ``#`` included, as v8.01 reads it (with a
  warning); the word is the fourth column when a line has five or more;
- the coreference cell is the last column: ``_`` or ``-`` mean nothing,
  otherwise its ``|``-separated or concatenated parts are taken in four passes,
  as v8.01 does: double antecedents ``(N+M)`` are discarded, then every
  one-token mention ``(N)``, then every opening ``(N``, then every closing
  ``N)`` (each pass reads the cell once, with the outcome of v8.01's removal
  loops); a closing ends the most recently opened mention of the same chain,
  so nested mentions of one chain close last-opened first;
- chains are ordered by first appearance and their mentions by where they
  end; chain ids are compared as written (``01`` is not ``1``).

A mention that never closes, a closing without an opening, a document without
``#end document`` and a document key used twice are errors naming the file,
the document and the line.

**e2e jsonlines** (``jsonl``): one JSON object per line with ``doc_key``,
``clusters`` (lists of inclusive ``[start, end]`` token indices) and,
optionally, ``sentences`` (lists of tokens). A response file that also has
``predicted_clusters`` (the output of e2e-coref, s2e-coref and their
descendants, whose ``clusters`` echo the gold) is read from that field.

**OMIn CSV** (``omin-csv``): one row per document, an id column and a column
of Python-literal cluster lists ``[[[start, end], …], …]``. The columns are
found by name: the id in ``id``, ``c5_id``, ``c5``, ``c5_unique_id`` or
``doc_key``, the clusters in ``coreferences``, ``corefs`` or ``clusters``
(OMIn's gold ``cr.csv`` and every tool output of trusted_ke), unless named.
When an id repeats, the first row is used, as trusted_ke does.
"""

from __future__ import annotations

import ast
import csv
import functools
import itertools
import json
import re
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from nlpbench import files
from nlpbench.errors import InputError, InputWarning, excerpt, shorten
from nlpbench.files import Input, Source
from nlpbench.formats import fields, jsonstream
from nlpbench.model import Cluster, CorefDocument, CorefMention, mention_problem

_BEGIN = re.compile(r"^#\s*begin document (.*?)$")
_END = re.compile(r"#\s*end document")
_DOUBLE_ANTECEDENT = re.compile(r"\d+\+\d")  # inside brackets: (N+M)
_SINGLE = re.compile(r"\d+")  # inside brackets: (N)
_BRACKETS = re.compile(r"[()]|[^()]+")
_OPEN = re.compile(r"\((\d+)")
_CLOSE = re.compile(r"(\d+)\)")
_ONE_PART = re.compile(r"(\()?(\d+)(\))?")
_NO_WORD = "_"
#: The size in bytes from which a block is split into fields with numpy rather than read line by line. Below it
#: the lines are the faster (measured in process, numpy loaded, load 7: 25 / 83 µs for a 212-byte document,
#: 73 / 122 µs at 3.5 kB, 126 / 143 µs at 7.2 kB, 384 / 246 µs at 18 kB), and a small file loads no numpy.
FIELDS_FROM = 8192

if TYPE_CHECKING:
    import numpy as np


# ---------------------------------------------------------------- CoNLL-2012


def read_conll2012(path: Input, *, words: bool = True) -> Iterator[CorefDocument]:
    """The documents of a CoNLL-2012 file, one at a time, in file order; without ``words`` their
    sentences are left empty (scoring needs the clusters alone), with every check made as with them.

    The file comes in blocks of lines (:func:`~nlpbench.files.text_blocks`). A block of
    :data:`FIELDS_FROM` bytes or more whose only whitespace and control characters are spaces, tabs and
    newlines is split into fields at once (:mod:`~nlpbench.formats.fields`):
    its lines whose first field starts with ``#`` are read one by one, the runs of token and blank
    lines between them as arrays, their coreference cells one by one. Any other block is read line by
    line. Both read each line as :meth:`_ConllReader.line` does.
    """
    path = files.source(path)
    reader = _ConllReader(path, words)
    for first, block in files.text_blocks(path):
        data = block.encode("utf-8")
        if len(data) >= FIELDS_FROM:
            found = fields.split(data if block.endswith("\n") else data + b"\n")
            if found is not None and fields.plain_spacing(block, data):
                yield from reader.block(first, found, words)
                continue
        lines = block.split("\n")
        if block.endswith("\n"):
            lines.pop()
        for number, line in enumerate(lines, start=first):
            finished = reader.line(number, line)
            if finished is not None:
                yield finished
    reader.close()


class _ConllReader:
    """The state of reading a CoNLL-2012 file: the documents seen, the one being read, the lines outside."""

    def __init__(self, path: Source, words: bool = True):
        self.path, self.keep_words = path, words
        self.seen: dict[str, int] = {}
        self.document: _ConllDocument | None = None
        self.outside = 0
        self.number = 0

    def line(self, number: int, line: str) -> CorefDocument | None:
        """Read line ``number`` (its ending may be left off); the document it ends, if any."""
        self.number = number
        document = self.document
        if document is not None:
            columns = line.split()
            if not columns:
                document.end_sentence()
                return None
            if columns[0][0] != "#":
                document.words.append(columns[3] if len(columns) > 4 else _NO_WORD)
                document.one_column += len(columns) == 1
                cell = columns[-1]
                if cell != "-" and cell != "_" and ("(" in cell or ")" in cell):
                    document.take(((number, document.tokens, cell),))
                document.tokens += 1
                return None
        begin = _BEGIN.match(line.rstrip("\r\n"))
        if document is None:
            if begin:
                document = self.document = _ConllDocument(self.path, begin[1], number, self.keep_words)
                if document.key in self.seen:
                    raise InputError(
                        f"the document is begun a second time (first at line {self.seen[document.key]})",
                        self.path,
                        f"document {shorten(document.key)}, line {number}",
                    )
                self.seen[document.key] = number
            elif line.strip():
                self.outside += 1
        elif begin:
            raise InputError(
                f"the document begun at line {document.begun} has no #end document before this line begins another",
                self.path,
                f"document {shorten(document.key)}, line {number}",
            )
        elif _END.search(line):
            self.document = None
            return document.finish(number)
        else:
            document.hash_lines += 1
            document.words.append(_NO_WORD)
            document.take(((number, document.tokens, line.split()[-1]),))
            document.tokens += 1
        return None

    def block(self, first: int, found: fields.Fields, words: bool = True) -> Iterator[CorefDocument]:
        """Read the lines of a block split into fields, numbered from ``first``: as :meth:`line` would,
        one line at a time."""
        block = _Block(found, words)
        start = 0
        for special in block.hash_lines.tolist():
            self._run(block, first, start, special)
            finished = self.line(first + special, block.line(special))
            if finished is not None:
                yield finished
            start = special + 1
        self._run(block, first, start, len(block.fields.counts))

    def _run(self, block: _Block, first: int, start: int, stop: int) -> None:
        """Lines ``start`` to ``stop`` (excluded) of the block, none of whose first field starts with ``#``."""
        if start == stop:
            return
        self.number = first + stop - 1
        document = self.document
        if document is None:
            self.outside += block.nonblank(start, stop)
            return
        document.take(block.cells(start, stop), document.tokens - int(block.before[start]), first)
        if block.words is not None:
            words, at = block.words, int(block.before[start])
            for blank in block.blank_lines(start, stop):
                document.words += words[at : block.before[blank]]
                at = int(block.before[blank])
                document.end_sentence()
            document.words += words[at : block.before[stop]]
        document.tokens += int(block.before[stop]) - int(block.before[start])
        document.one_column += block.one_column(start, stop)

    def close(self) -> None:
        """The checks at the end of the file: a document left open, a file with no document, lines outside."""
        document, path = self.document, self.path
        if document is not None:
            raise InputError(
                f"the document begun at line {document.begun} has no #end document",
                path,
                f"document {shorten(document.key)}, line {self.number}",
            )
        if self.outside and not self.seen:
            raise InputError(
                f"no #begin document line: not CoNLL-2012 ({self.outside} lines, none inside a document)", path
            )
        if self.outside:
            warnings.warn(f"{path}: lines outside any document, ignored: {self.outside}", InputWarning, stacklevel=3)


class _Block:
    """What :class:`_ConllReader` needs of a block's fields, for every line at once.

    ``before[i]`` is the number of token lines (with fields, the first not starting with ``#``)
    before line i, ``before[-1]`` all of them; ``words`` is the word of each token line (its fourth
    field when it has five or more, else ``_``), None unless asked for.
    """

    def __init__(self, found: fields.Fields, words: bool = True):
        import numpy as np

        self.fields = found
        counts, first = found.counts, found.first
        filled = counts > 0
        leading = np.zeros(len(counts), np.uint8)
        leading[filled] = found.bytes[found.starts[first[filled]]]
        hashed = leading == ord("#")
        token = filled & ~hashed
        self.hash_lines = np.flatnonzero(hashed)
        self.blank = np.flatnonzero(~filled)
        self.before = np.concatenate(([0], np.cumsum(token)))
        self.single = np.concatenate(([0], np.cumsum(token & (counts == 1))))
        self.filled = np.concatenate(([0], np.cumsum(filled)))
        self.words = _words(found, token) if words else None
        last = first[token] + counts[token] - 1
        starts = found.starts[last]
        odd = found.bytes[starts]
        cells = last[(found.stops[last] - starts > 1) | (odd == ord("(")) | (odd == ord(")"))]  # not "-" or "_"
        texts = fields.texts(found, cells)
        kept = [n for n, cell in enumerate(texts) if "(" in cell or ")" in cell]
        self.cell_texts = [texts[n] for n in kept]
        self.cell_lines = np.searchsorted(found.ends_of_lines, found.starts[cells[kept]])
        self.cell_before = self.before[self.cell_lines].tolist()

    def line(self, index: int) -> str:
        """The text of line ``index``, without its ending."""
        ends = self.fields.ends_of_lines
        start = int(ends[index - 1]) + 1 if index else 0
        return self.fields.bytes[start : ends[index]].tobytes().decode("utf-8")

    def nonblank(self, start: int, stop: int) -> int:
        return int(self.filled[stop] - self.filled[start])

    def one_column(self, start: int, stop: int) -> int:
        return int(self.single[stop] - self.single[start])

    def blank_lines(self, start: int, stop: int) -> list[int]:
        import numpy as np

        return self.blank[np.searchsorted(self.blank, start) : np.searchsorted(self.blank, stop)].tolist()

    def cells(self, start: int, stop: int) -> Iterator[tuple[int, int, str]]:
        """(line, token lines before it, cell) of the lines from ``start`` to ``stop`` whose coreference
        cell holds a bracket."""
        import numpy as np

        low, high = np.searchsorted(self.cell_lines, (start, stop)).tolist()
        lines = self.cell_lines[low:high].tolist()
        return zip(lines, self.cell_before[low:high], self.cell_texts[low:high], strict=True)


def _words(found: fields.Fields, token: np.ndarray) -> list[str]:
    """The word of each token line: its fourth field when it has five or more, else ``_``."""
    worded = token & (found.counts > 4)
    words = fields.texts(found, found.first[worded] + 3)
    if worded[token].all():
        return words
    placed = iter(words)
    return [next(placed) if has else _NO_WORD for has in worded[token].tolist()]


@dataclass
class _ConllDocument:
    """One CoNLL-2012 document being read: its tokens, its chains and the mentions still open."""

    path: Source
    key: str
    begun: int
    keep_words: bool = True
    sentences: list[list[str]] = field(default_factory=list)
    words: list[str] = field(default_factory=list)  # of the sentence being read
    chains: dict[str, list[CorefMention]] = field(default_factory=dict)  # in order of first appearance
    open: dict[str, list[tuple[int, int]]] = field(default_factory=dict)  # chain -> [(token, line)]
    tokens: int = 0
    hash_lines: int = 0
    one_column: int = 0
    discarded: int = 0

    def take(self, cells: Iterable[tuple[int, int, str]], offset: int = 0, first: int = 0) -> None:
        """Read coreference cells given as (line, token, cell), tokens counted from ``offset`` and lines from
        ``first``, each cell as :func:`_events` reads it."""
        chains, pending = self.chains, self.open
        for line, token, cell in cells:
            discarded, events = _cached_events(cell) if len(cell) <= _CACHED else _events(cell)
            self.discarded += discarded
            at = offset + token
            for kind, chain in events:
                mentions = chains.get(chain)
                if mentions is None:
                    mentions = chains[chain] = []
                if kind is _SINGLE_MENTION:
                    mentions.append((at, at))
                elif kind is _OPENING:
                    pending.setdefault(chain, []).append((at, first + line))
                else:  # a closing ends the most recently opened mention of its chain
                    opened = pending.get(chain)
                    if not opened:
                        raise InputError(
                            f"chain {chain} closes a mention at token {at} that was never opened",
                            self.path,
                            f"document {shorten(self.key)}, line {first + line}",
                        )
                    mentions.append((opened.pop()[0], at))

    def end_sentence(self) -> None:
        if self.words:
            self.sentences.append(self.words)
            self.words = []

    def _warn(self, what: str, count: int) -> None:
        message = f"{self.path}: document {shorten(self.key)}: {what}: {count}"
        warnings.warn(message, InputWarning, stacklevel=4)

    def finish(self, number: int) -> CorefDocument:
        for chain, pending in self.open.items():
            if pending:
                token, line = pending[-1]
                raise InputError(
                    f"chain {chain} opens a mention at token {token} (line {line}) that never closes",
                    self.path,
                    f"document {shorten(self.key)}, line {number}",
                )
        if self.hash_lines:
            self._warn("lines starting with # read as tokens, as the reference scorer reads them", self.hash_lines)
        if self.one_column:
            self._warn(
                "token lines of one column, read as the coreference column as the reference scorer reads them "
                "(a file without that column has no mentions)",
                self.one_column,
            )
        if self.discarded:
            self._warn("double antecedents (N+M) discarded, as the reference scorer discards them", self.discarded)
        self.end_sentence()
        sentences = tuple(tuple(sentence) for sentence in self.sentences) if self.keep_words else ()
        clusters = tuple(Cluster(tuple(mentions), chain) for chain, mentions in self.chains.items() if mentions)
        return CorefDocument(self.key, clusters, sentences)


_SINGLE_MENTION, _OPENING, _CLOSING = "single", "opening", "closing"
_CACHED = 64  # the longest cell whose reading is cached (the cache is bounded in bytes)


def _events(cell: str) -> tuple[int, tuple[tuple[str, str], ...]]:
    """A coreference cell as v8.01 reads it: the number of double antecedents discarded, and what it takes
    in the order it takes it, as (``single``, ``opening`` or ``closing``, chain).

    ``_`` and ``-`` hold nothing. Otherwise four passes read the cell: double antecedents ``(N+M)``
    are discarded, then every one-token mention ``(N)`` is taken, then every opening ``(N``, then every
    closing ``N)``, each pass with the outcome of v8.01's removal loops (:func:`_take_enclosed`). A cell
    of one part, ``(N)``, ``(N`` or ``N)`` (most cells), is read without the passes.
    """
    simple = _ONE_PART.fullmatch(cell)
    if simple:
        opening, chain, closing = simple.groups()
        if opening and closing:
            return 0, ((_SINGLE_MENTION, chain),)
        if opening or closing:
            return 0, ((_OPENING if opening else _CLOSING, chain),)
        return 0, ()
    discarded, cell = _take_enclosed(_DOUBLE_ANTECEDENT, cell)
    singles, cell = _take_enclosed(_SINGLE, cell)
    return len(discarded), (
        *((_SINGLE_MENTION, chain) for chain in singles),
        *((_OPENING, chain) for chain in _OPEN.findall(cell)),
        *((_CLOSING, chain) for chain in _CLOSE.findall(_OPEN.sub("", cell))),
    )


_cached_events = functools.lru_cache(maxsize=4096)(_events)


def _take_enclosed(inner: re.Pattern[str], cell: str) -> tuple[list[str], str]:
    """Remove ``(INNER)`` from ``cell`` until none is left, as Perl's ``while ($cell =~ s/\\((INNER)\\)//)`` does:
    the leftmost first, then again from the start, so that ``(1(2)3)`` loses ``(2)`` and then ``(13)``.

    Returns the captured ids in the order removed, and what is left. Perl's loop searches the whole cell
    once per removal (quadratic: a cell of 100,000 mentions took minutes); this reads it once. A match
    holds no bracket inside, so the only place a match can start is the last ``(`` still standing: the
    cell is kept as the text before the first ``(`` and one segment per ``(`` after it, and a ``)``
    either removes the last segment (its text after ``(`` is a whole ``INNER``) or ends its chances.
    """
    found: list[str] = []
    segments: list[list[str]] = [[]]  # the pieces of each segment; every one but the first starts with "("
    open_: list[bool] = [False]  # whether a ")" could still close the segment into a match
    for piece in _BRACKETS.findall(cell):
        if piece == "(":
            segments.append([piece])
            open_.append(True)
            continue
        if piece == ")" and open_[-1]:
            text = "".join(segments[-1][1:])
            if inner.fullmatch(text):
                found.append(text)
                segments.pop()
                open_.pop()
                continue
            open_[-1] = False
        segments[-1].append(piece)
    return found, "".join(piece for segment in segments for piece in segment)


def write_conll2012(documents: Iterable[CorefDocument], path: Path | str) -> None:
    """Write documents as CoNLL-2012: five tab-separated columns per token, the coreference cell last.

    The columns are the document name, the part, the token's number in its
    sentence, the word and the cell. A cluster without an id is numbered after
    the largest numeric id of its document. A document without tokens gets one
    sentence of ``_`` words, long enough for its last mention. Two mentions of
    one chain that overlap without nesting cannot be written (a reader would
    pair their brackets differently): that is an error.
    """
    path = Path(path)
    with files.written(path) as handle:
        for document in documents:
            handle.write(_conll_text(document, path))


def _conll_text(document: CorefDocument, path: Path) -> str:
    cells: dict[int, tuple[list[str], list[str], list[str]]] = {}
    for chain, cluster in zip(_chain_ids(document, path), document.clusters, strict=True):
        _check_nesting(document, chain, cluster, path)
        for mention in cluster:
            start, end = mention[0], mention[-1]
            if start == end:
                cells.setdefault(start, ([], [], []))[0].append(f"({chain})")
            else:
                cells.setdefault(start, ([], [], []))[1].append(f"({chain}")
                cells.setdefault(end, ([], [], []))[2].append(f"{chain})")
    sentences = document.sentences or ((_NO_WORD,) * document.token_count,)
    name, part = _name_and_part(document.id)
    lines = [f"#begin document {document.id}"]
    token = 0
    for sentence in sentences:
        for number, word in enumerate(sentence):
            parts = cells.get(token)
            cell = "|".join(itertools.chain(*parts)) if parts else "-"
            lines.append(f"{name}\t{part}\t{number}\t{word}\t{cell}")
            token += 1
        lines.append("")
    lines.append("#end document")
    return "\n".join(lines) + "\n"


def _chain_ids(document: CorefDocument, path: Path) -> list[str]:
    numeric = [int(c.id) for c in document.clusters if c.id is not None and c.id.isdigit()]
    fresh = itertools.count(max(numeric, default=-1) + 1)
    ids = []
    for cluster in document.clusters:
        ids.append(cluster.id if cluster.id is not None and cluster.id.isdigit() else str(next(fresh)))
    if len(set(ids)) != len(ids):
        raise InputError("two clusters share a chain id", path, f"document {document.id}")
    return ids


def _check_nesting(document: CorefDocument, chain: str, cluster: Cluster, path: Path) -> None:
    """Multi-token mentions of one chain must nest or be disjoint for their brackets to be read back."""
    stack: list[tuple[int, int]] = []
    for start, end in sorted(((m[0], m[-1]) for m in cluster if m[0] != m[-1]), key=lambda s: (s[0], -s[1])):
        while stack and stack[-1][1] < start:
            stack.pop()
        if stack and end > stack[-1][1]:
            raise InputError(
                f"chain {chain}: mentions {stack[-1][0]}-{stack[-1][1]} and {start}-{end} overlap without nesting, "
                "which CoNLL-2012 brackets cannot express",
                path,
                f"document {document.id}",
            )
        stack.append((start, end))


def _name_and_part(key: str) -> tuple[str, str]:
    match = re.fullmatch(r"\((.*)\); part (\d+)", key)
    if match:
        return match[1], match[2]
    return (key.split()[0] if key.split() else "-"), "0"


# ---------------------------------------------------------------- e2e jsonlines


def read_jsonl(path: Input, *, predicted: bool = False) -> Iterator[CorefDocument]:
    """The documents of an e2e jsonlines file; ``predicted`` reads ``predicted_clusters`` where a line has it."""
    path = files.source(path)
    seen: dict[str, str] = {}
    for where, record in jsonstream.json_lines(path):
        document = _jsonl_document(record, predicted, path, where)
        if document.id in seen:
            raise InputError(f"doc_key {excerpt(document.id)} was already used at {seen[document.id]}", path, where)
        seen[document.id] = where
        yield document


def _jsonl_document(record: object, predicted: bool, path: Source, where: str) -> CorefDocument:
    if not isinstance(record, dict):
        raise InputError("a line must be a JSON object", path, where)
    doc_key = record.get("doc_key")
    if not isinstance(doc_key, str):
        raise InputError('"doc_key" must be a string', path, where)
    where = f"{where} (doc_key {shorten(doc_key)})"
    name = "predicted_clusters" if predicted and "predicted_clusters" in record else "clusters"
    if name not in record:
        raise InputError(f'no "{name}"', path, where)
    sentences = record.get("sentences", [])
    if not isinstance(sentences, list) or not all(
        isinstance(s, list) and all(isinstance(t, str) for t in s) for s in sentences
    ):
        raise InputError('"sentences" must be lists of token strings', path, where)
    document = CorefDocument(
        doc_key,
        _clusters(record[name], f'"{name}"', path, where),
        tuple(tuple(s) for s in sentences if s),
    )
    _check_within(document, path, where)
    return document


def _check_within(document: CorefDocument, path: Source, where: str) -> None:
    if not document.sentences:
        return
    tokens = document.token_count
    for mention in document.mentions:
        if mention[-1] >= tokens:
            raise InputError(f"mention {list(mention)} ends beyond the document's {tokens} tokens", path, where)


def write_jsonl(documents: Iterable[CorefDocument], path: Path | str) -> None:
    """One JSON object per document: ``doc_key``, ``sentences`` when known, ``clusters``."""
    with files.written(path) as handle:
        for document in documents:
            record: dict[str, object] = {"doc_key": document.id}
            if document.sentences:
                record["sentences"] = [list(s) for s in document.sentences]
            record["clusters"] = [[list(m) for m in cluster] for cluster in document.clusters]
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")


# ---------------------------------------------------------------- OMIn CSV

ID_COLUMNS = ("id", "c5_id", "c5", "c5_unique_id", "doc_key")
CLUSTER_COLUMNS = ("coreferences", "corefs", "clusters")


#: What a tool writes for a mention it could not place in the tokens (neuralcoref in OMIn).
UNPLACED: CorefMention = (-1, -1)


def read_omin_csv(
    path: Input, *, id_column: str | None = None, clusters_column: str | None = None
) -> Iterator[CorefDocument]:
    """The documents of a CSV with an id column and a column of Python-literal cluster lists.

    Two odd mentions are kept and reported: ``[i]`` (one index, kept as
    written) and ``[-1, -1]`` (a mention the tool could not place; it matches
    nothing but another ``[-1, -1]``).
    """
    path = files.source(path)
    seen: set[str] = set()
    repeated = 0
    odd: dict[str, list[str]] = {"one_index": [], "unplaced": []}
    with _open_text(path) as lines:
        reader = csv.DictReader(lines)
        header = reader.fieldnames or []
        id_name = _column(header, id_column, ID_COLUMNS, "id", path)
        clusters_name = _column(header, clusters_column, CLUSTER_COLUMNS, "clusters", path)
        for row_number, row in enumerate(reader, start=1):
            doc_id, cell = row[id_name], row[clusters_name]
            where = f"row {row_number} (id {shorten(str(doc_id))})"
            if doc_id is None or cell is None:
                raise InputError("the row has fewer cells than the header", path, where)
            if doc_id in seen:
                repeated += 1
                continue
            seen.add(doc_id)
            value = _literal(cell, clusters_name, path, where)
            document = CorefDocument(doc_id, _clusters(value, clusters_name, path, where, allow_unplaced=True))
            for mention in document.mentions:
                if len(mention) == 1 or mention == UNPLACED:
                    odd["one_index" if len(mention) == 1 else "unplaced"].append(f"{list(mention)} in {doc_id}")
            yield document
    if repeated:
        warnings.warn(
            f"{path}: rows repeating the id of an earlier row, ignored (the first row of an id counts): {repeated}",
            InputWarning,
            stacklevel=2,
        )
    if odd["one_index"]:
        warnings.warn(
            f"{path}: mentions written with one index, kept as written (the e2e profile compares them as written, "
            f"the others as one-token spans): {len(odd['one_index'])} (first: {odd['one_index'][0]})",
            InputWarning,
            stacklevel=2,
        )
    if odd["unplaced"]:
        warnings.warn(
            f"{path}: mentions [-1, -1] (a mention the tool could not place), kept, matching no placed mention: "
            f"{len(odd['unplaced'])} (first: {odd['unplaced'][0]})",
            InputWarning,
            stacklevel=2,
        )


def _column(header: Sequence[str], named: str | None, candidates: tuple[str, ...], what: str, path: Source) -> str:
    if named is not None:
        if named not in header:
            raise InputError(
                f"no column {excerpt(named)}; the columns are {shorten(', '.join(header))}", path, "header"
            )
        return named
    for candidate in candidates:
        if candidate in header:
            return candidate
    raise InputError(
        f"no {what} column ({' or '.join(candidates)}); the columns are {shorten(', '.join(header))}", path, "header"
    )


def _literal(cell: str, column: str, path: Source, where: str) -> object:
    try:
        return ast.literal_eval(cell)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        shown = cell[:40]
        raise InputError(f"column {column!r} is not a Python list literal: {shown!r}", path, where) from None


def write_omin_csv(documents: Iterable[CorefDocument], path: Path | str) -> None:
    """Write ``id,coreferences`` rows, the clusters as Python list literals like OMIn's ``cr.csv``."""
    with files.written(path, newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "coreferences"])
        for document in documents:
            clusters = [[list(m) for m in cluster] for cluster in document.clusters]
            writer.writerow([document.id, str(clusters).replace(" ", "")])


# ---------------------------------------------------------------- shared


def _clusters(
    value: object, name: str, path: Source, where: str, *, allow_unplaced: bool = False
) -> tuple[Cluster, ...]:
    """Clusters from nested lists; an empty cluster is dropped with a warning.

    ``allow_unplaced`` accepts the mention ``[-1, -1]`` (see :data:`UNPLACED`).
    """
    if not isinstance(value, list | tuple):
        raise InputError(f"{name} must be a list of clusters", path, where)
    clusters = []
    for index, cluster in enumerate(value):
        if not isinstance(cluster, list | tuple):
            raise InputError(f"{name}[{index}] must be a list of mentions", path, where)
        if not cluster:
            warnings.warn(f"{path}: {where}: {name}[{index}] is an empty cluster; ignored", InputWarning, stacklevel=3)
            continue
        for mention in cluster:
            if allow_unplaced and isinstance(mention, list | tuple) and tuple(mention) == UNPLACED:
                continue
            problem = mention_problem(mention)
            if problem:
                raise InputError(f"{name}[{index}]: {problem}", path, where)
        clusters.append(Cluster(tuple(tuple(m) for m in cluster)))
    return tuple(clusters)


@contextmanager
def _open_text(path: Source) -> Iterator[Iterator[str]]:
    """The lines of a UTF-8 text file (a byte order mark skipped, each bounded: :func:`~nlpbench.files.text_lines`);
    a CSV error becomes an :class:`InputError`."""
    lines = files.text_lines(path, newline="")
    try:
        yield lines
    except csv.Error as error:
        raise InputError(f"not comma-separated values ({error})", path) from None
    finally:
        lines.close()


@dataclass(frozen=True)
class CorefFormat:
    """A coreference format: ``read(path, **options)`` yields documents, ``write(documents, path)`` stores them."""

    name: str
    summary: str
    read: Callable[..., Iterator[CorefDocument]]
    write: Callable[[Iterable[CorefDocument], Path], None]


FORMATS: dict[str, CorefFormat] = {
    f.name: f
    for f in (
        CorefFormat("conll2012", "CoNLL-2012 columns, coreference in the last", read_conll2012, write_conll2012),
        CorefFormat("jsonl", "e2e jsonlines: doc_key, sentences, clusters", read_jsonl, write_jsonl),
        CorefFormat(
            "omin-csv", "CSV of Python-literal cluster lists (OMIn / trusted_ke)", read_omin_csv, write_omin_csv
        ),
    )
}


def coref_format(name: str) -> CorefFormat:
    """The coreference format ``name``; an unknown name is an :class:`InputError` that lists the known ones."""
    if name not in FORMATS:
        raise InputError(f"unknown coreference format {name!r}; known: {', '.join(FORMATS)}")
    return FORMATS[name]


def read(
    name: str,
    path: Input,
    *,
    predicted: bool = False,
    id_column: str | None = None,
    clusters_column: str | None = None,
    words: bool = True,
) -> Iterator[CorefDocument]:
    """Read ``path`` as the coreference format ``name``.

    ``predicted`` reads a jsonlines file's ``predicted_clusters`` where a line
    has them; ``id_column`` and ``clusters_column`` name the CSV columns and
    are an error with any other format; without ``words`` a CoNLL-2012 file's
    documents come without their sentences (a jsonlines file's are read all
    the same: they bound its mentions).
    """
    chosen = coref_format(name)
    if name == "omin-csv":
        return chosen.read(path, id_column=id_column, clusters_column=clusters_column)
    if id_column is not None or clusters_column is not None:
        raise InputError(f"an id or clusters column applies to omin-csv files, not to {name}", path)
    if name == "jsonl":
        return chosen.read(path, predicted=predicted)
    return chosen.read(path, words=words)
