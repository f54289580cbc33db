"""CodiEsp 2020 tab-separated files: ranked codes (D, P), code references (X), valid-code lists.

- CodiEsp-D and -P, gold and predictions: ``case<TAB>code``. A document's
  codes are the lines with its id, in file order, wherever they are in the
  file; in a prediction file that order is the ranking (rank 1 first).
- CodiEsp-X gold: ``case<TAB>label<TAB>code<TAB>reference text<TAB>s e[;s e…]``;
  a discontinuous reference lists its pieces separated by ``;``, sometimes out
  of text order.
- CodiEsp-X predictions: ``case<TAB>s e<TAB>label<TAB>code``, one span each.
- Valid-code lists: ``code<TAB>Spanish description<TAB>English description``;
  only the first column is read, lower-cased.

Files are UTF-8 (a byte-order mark is ignored); lines end in ``\\n``, ``\\r\\n``
or ``\\r``; empty lines are skipped, and a file of none but empty lines has no
records (scoring warns about it). There is no header (a header line would be
read as data, as the official scripts read it) and no quoting: lines are split
on tabs. Every line must have the layout's number of fields, case ids and
codes must be non-empty and free of whitespace, and offsets are integers
(non-negative in gold; see :func:`read_predicted_references` for predictions)
of at most 18 digits in gold and within 64 bits in predictions.
Anything else raises :class:`~nlpbench.errors.InputError` naming the file and
the first bad line.

Reading is one regular-expression pass over the whole file; only a file that
fails it is read again line by line, to name its first bad line. CodiEsp-X
predictions, the large files, are also read as columns
(:func:`read_predicted_columns`): numpy checks every line at once and reads
the offsets, and Python sees only the distinct case ids and codes; a file
the bulk check does not accept as plainly valid (a bad line, an id or
offset that is not printable ASCII, an offset of more than 8 digits) goes
through the exact reader, which names the first bad line or reads what the
bulk check left to it. Gold references are read as columns too
(:func:`read_reference_columns`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import groupby
from operator import itemgetter
from pathlib import Path
from typing import NoReturn

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from nlpbench import files
from nlpbench.errors import InputError, excerpt
from nlpbench.files import Input, written
from nlpbench.model import CodeReference, RankedCodes

_TOKEN = re.compile(r"\S+")
_GOLD_POSITION = re.compile(r"\d+ \d+(?:;\d+ \d+)*")
_PRED_POSITION = re.compile(r"(-?\d+) (-?\d+)")
_LONG_NUMBER = re.compile(r"\d{19}")


@dataclass(frozen=True)
class Layout:
    """The fields of one kind of CodiEsp line."""

    kind: str  # what a file of such lines is, for error messages
    fields: tuple[str, ...]
    identifiers: tuple[int, ...]  # fields that are case ids or codes
    positions: dict[int, Callable[[str], str | None]]  # field → the problem with its value, or None
    line: re.Pattern[str]  # a whole valid line (or an empty one), one group per value (and per offset)
    code_group: int  # which of those groups is the code

    def problem(self, fields: list[str]) -> str | None:
        """What is wrong with one line's fields, or None."""
        if len(fields) != len(self.fields):
            guess = next((f": is this {other.kind}?" for other in LAYOUTS if len(other.fields) == len(fields)), "")
            expected = f"{len(self.fields)} tab-separated fields ({', '.join(self.fields)})"
            return f"expected {expected}, found {len(fields)}{guess}"
        for index in self.identifiers:
            what = "case id" if index == 0 else "code"
            if not fields[index]:
                return f"empty {what}"
            if not _TOKEN.fullmatch(fields[index]):
                return f"{what} {excerpt(fields[index])} contains whitespace"
        for index, check in self.positions.items():
            problem = check(fields[index])
            if problem:
                return problem
        return None


def _gold_position_problem(position: str) -> str | None:
    if not _GOLD_POSITION.fullmatch(position):
        return f"reference position {excerpt(position)} is not 'start end' or 'start end;start end…'"
    if _LONG_NUMBER.search(position):
        return f"reference position {excerpt(position)} has an offset of more than 18 digits"
    for piece in position.split(";"):
        start, end = map(int, piece.split(" "))
        if end < start:
            return f"reference fragment '{piece}' ends before it starts"
    return None


def _pred_position_problem(position: str) -> str | None:
    if _PRED_POSITION.fullmatch(position):
        return None
    if ";" in position:
        return (
            f"discontinuous predicted span {excerpt(position)}: CodiEsp-X scores one 'start end' span per prediction; "
            "give the first start and the last end"
        )
    return f"predicted span {excerpt(position)} is not two integer offsets 'start end'"


_ID, _ANY = r"(\S+)", r"([^\t\n]*)"
CODES = Layout("a CodiEsp-D/P file", ("case", "code"), (0, 1), {}, re.compile(rf"^(?:{_ID}\t{_ID})?$", re.M), 1)
GOLD_REFERENCES = Layout(
    "a CodiEsp-X gold file",
    ("case", "label", "code", "reference", "'s e[;s e]'"),
    (0, 2),
    {4: _gold_position_problem},
    re.compile(rf"^(?:{_ID}\t{_ANY}\t{_ID}\t{_ANY}\t(\d+ \d+(?:;\d+ \d+)*))?$", re.M),
    2,
)
PREDICTED_REFERENCES = Layout(
    "a CodiEsp-X prediction file",
    ("case", "'s e'", "label", "code"),
    (0, 3),
    {1: _pred_position_problem},
    re.compile(rf"^(?:{_ID}\t(-?\d+) (-?\d+)\t{_ANY}\t{_ID})?$", re.M),
    4,
)
LAYOUTS = (CODES, PREDICTED_REFERENCES, GOLD_REFERENCES)


def read_ranked_codes(path: Input) -> list[RankedCodes]:
    """Each document's codes in file order, documents in order of first appearance."""
    codes: dict[str, list[str]] = {}
    for case, run in groupby(_records(path, CODES), key=itemgetter(0)):  # runs of lines of one document
        codes.setdefault(case, []).extend(map(itemgetter(1), run))
    return [RankedCodes(case, tuple(listed)) for case, listed in codes.items()]


def read_references(path: Input) -> list[CodeReference]:
    """CodiEsp-X gold: one reference per line, fragments in the order the file lists them."""
    records, starts, ends, first = _gold_records(path)
    starts, ends, first = starts.tolist(), ends.tolist(), first.tolist()
    return [
        CodeReference(case, code, tuple(zip(starts[a:b], ends[a:b], strict=True)), label, text)
        for (case, label, code, text, _), a, b in zip(records, first[:-1], first[1:], strict=True)
    ]


def read_reference_columns(path: Input, *, listed: bool = False) -> ReferenceColumns:
    """CodiEsp-X gold as columns, each reference from its smallest start to its largest end, or (``listed``)
    from the start of its first listed fragment to the end of its last (which may be inverted)."""
    records, starts, ends, first = _gold_records(path)
    documents: dict[str, int] = {}
    codes: dict[str, int] = {}
    rows = [(documents.setdefault(r[0], len(documents)), codes.setdefault(r[2].lower(), len(codes))) for r in records]
    document, code = np.array(rows, dtype=np.int64).reshape(-1, 2).T
    if not records:
        return ReferenceColumns([], [], document, code, starts, ends)
    if listed:
        start, end = starts[first[:-1]], ends[first[1:] - 1]
    else:
        start, end = np.minimum.reduceat(starts, first[:-1]), np.maximum.reduceat(ends, first[:-1])
    return ReferenceColumns(list(documents), list(codes), document, code, start, end)


def _gold_records(path: Input) -> tuple[list[tuple[str, ...]], np.ndarray, np.ndarray, np.ndarray]:
    """The fields of each gold line; the starts and ends of all their fragments, line after line; and where each
    line's fragments begin among them (one more entry: where they end)."""
    records = _records(path, GOLD_REFERENCES)
    positions = " ".join(record[4] for record in records)
    if _LONG_NUMBER.search(positions):
        _raise_first_problem(_text(path), path, GOLD_REFERENCES)
    offsets = np.array(positions.replace(";", " ").split(), dtype=np.int64).reshape(-1, 2)
    if np.any(offsets[:, 1] < offsets[:, 0]):
        _raise_first_problem(_text(path), path, GOLD_REFERENCES)
    first = np.concatenate(([0], np.cumsum([record[4].count(";") + 1 for record in records], dtype=np.int64)))
    return records, offsets[:, 0], offsets[:, 1], first


def read_predicted_references(path: Input) -> list[CodeReference]:
    """CodiEsp-X predictions: one ``start end`` span per line.

    A span that ends before it starts or has a negative offset is kept as
    written: the official scorer accepts it and its containment test is
    arithmetic, so such a span can still match (the task warns about them).
    """
    return [
        CodeReference(case, code, ((int(start), int(end)),), label)
        for case, start, end, label, code in _records(path, PREDICTED_REFERENCES)
    ]


@dataclass(frozen=True)
class ReferenceColumns:
    """CodiEsp-X references as columns: entry ``i`` of each array is line ``i`` (empty lines apart).

    ``document`` and ``code`` index ``documents`` (the distinct case ids) and
    ``codes`` (the distinct codes, lower-cased); ``start`` and ``end`` bound
    the reference (a prediction's offsets as written, see
    :func:`read_predicted_references`).
    """

    documents: list[str]
    codes: list[str]
    document: np.ndarray
    code: np.ndarray
    start: np.ndarray
    end: np.ndarray

    @classmethod
    def of_rows(cls, documents: dict[str, int], codes: dict[str, int], rows: list[tuple]) -> ReferenceColumns:
        """Columns of ``(document index, code index, start, end)`` rows; the dicts number the ids."""
        document, code, start, end = np.array(rows, dtype=np.int64).reshape(-1, 4).T
        return cls(list(documents), list(codes), document, code, start, end)


def read_predicted_columns(path: Input) -> ReferenceColumns:
    """CodiEsp-X predictions as columns, the same lines :func:`read_predicted_references` accepts."""
    columns = _bulk_predicted_columns(_bytes(path))
    if columns is not None:
        return columns
    references = read_predicted_references(path)
    documents: dict[str, int] = {}
    codes: dict[str, int] = {}
    rows = [
        (documents.setdefault(r.doc_id, len(documents)), codes.setdefault(r.code.lower(), len(codes)), *r.fragments[0])
        for r in references
    ]
    try:
        return ReferenceColumns.of_rows(documents, codes, rows)
    except OverflowError:
        number = next(n for n, r in enumerate(references) if not all(-(2**63) <= x < 2**63 for x in r.fragments[0]))
        line = [n for n, text in enumerate(_text(path).split("\n"), start=1) if text][number]
        raise InputError("predicted span has an offset beyond 64-bit integers", path, f"line {line}") from None


def read_valid_codes(path: Input) -> frozenset[str]:
    """The lower-cased codes of the first column of a valid-code list."""
    codes = set()
    for number, line in enumerate(_text(path).split("\n"), start=1):
        if line:
            code = line.split("\t", 1)[0]
            if not _TOKEN.fullmatch(code):
                problem = f"code {excerpt(code)} contains whitespace" if code else "empty code"
                raise InputError(problem, path, f"line {number}")
            codes.add(code.lower())
    if not codes:
        raise InputError("empty file: a valid-code list needs at least one code", path)
    return frozenset(codes)


def read_assigned_codes(path: Input) -> set[str]:
    """The lower-cased codes a CodiEsp file assigns, in any of the three layouts (told by its first line)."""
    first = next((line for line in _text(path).split("\n") if line), "")
    layout = next((layout for layout in LAYOUTS if len(layout.fields) == first.count("\t") + 1), CODES)
    return {values[layout.code_group].lower() for values in _records(path, layout)}


def write_valid_codes(codes: Iterable[str], path: Path | str) -> None:
    """A valid-code list of these codes, one per line, with empty descriptions."""
    _write(path, (f"{code}\t\t\n" for code in codes))


def write_ranked_codes(documents: Iterable[RankedCodes], path: Path | str) -> None:
    _write(path, (f"{d.doc_id}\t{code}\n" for d in documents for code in d.codes))


def write_references(references: Iterable[CodeReference], path: Path | str) -> None:
    """Write CodiEsp-X gold lines, fragments in their listed order."""
    lines = (
        f"{r.doc_id}\t{r.label}\t{r.code}\t{r.text or ''}\t{';'.join(f'{s} {e}' for s, e in r.fragments)}\n"
        for r in references
    )
    _write(path, lines)


def write_predicted_references(references: Iterable[CodeReference], path: Path | str) -> None:
    """Write CodiEsp-X prediction lines; a reference of several fragments becomes the span covering them all."""
    lines = (f"{r.doc_id}\t{' '.join(map(str, r.covering_bounds))}\t{r.label}\t{r.code}\n" for r in references)
    _write(path, lines)


def _write(path: Path | str, lines: Iterable[str]) -> None:
    with written(path, newline="") as handle:
        handle.writelines(lines)


def _text(path: Input) -> str:
    """The file as text, a byte-order mark skipped, lines ended by ``\\n``; lines longer than
    :data:`~nlpbench.files.MAX_LINE` and bytes that are not UTF-8 are an :class:`InputError`."""
    text = files.check_lines(files.read_text(path), path)
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def _bytes(path: Input) -> bytes:
    """The file's bytes without a byte-order mark, lines ended by ``\\n``; checked as :func:`_text` checks."""
    data = files.check_lines(files.read_bytes(path), path)
    if not data.isascii():
        files.decoded(data, path)  # raises the reader's one-line error
    data = data.removeprefix(b"\xef\xbb\xbf")
    if b"\r" in data:
        data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    return data


_WIDEST = {"case": 256, "code": 64}  # wider ids go to the exact reader
_CHUNK = 1 << 22  # bytes checked at once (whole lines): keeps the work arrays small enough for the caches


def _bulk_predicted_columns(data: bytes) -> ReferenceColumns | None:
    """The columns of a CodiEsp-X prediction file whose every line is plainly valid, or None.

    Plainly valid: ``case<TAB>start end<TAB>label<TAB>code`` with ids of
    printable ASCII and offsets of ASCII digits. Only the bytes that are not
    printable ASCII (tabs, line ends, spaces, anything else) are located, and
    each must be where such a line allows it. The file is read a chunk of
    whole lines at a time.
    """
    size = len(data) + 1  # with a last line end
    buf = np.zeros(size + 8 * (_WIDEST["case"] // 8 + 1), dtype=np.uint8)  # and padding: one copy of the file
    buf[: len(data)] = np.frombuffer(data, dtype=np.uint8)
    buf[len(data)] = 10
    ascii_only = data.isascii()
    documents: dict[str, int] = {}
    parts = []
    begin = 0
    while begin < size:
        end = data.find(b"\n", begin + _CHUNK - 1) + 1 or size
        part = _bulk_chunk(data, buf, begin, end, ascii_only, documents)
        if part is None:
            return None
        parts.append(part)
        begin = end
    part_documents, part_words, part_starts, part_ends = zip(*parts, strict=True)
    width = max(w.shape[1] for w in part_words)
    words = np.concatenate([np.pad(w, ((0, 0), (0, width - w.shape[1]))) for w in part_words])
    codes, code = _distinct_codes(words)
    return ReferenceColumns(list(documents), codes, np.concatenate(part_documents), code, np.concatenate(part_starts),
                            np.concatenate(part_ends))  # fmt: skip


def _bulk_chunk(data: bytes, buf: np.ndarray, begin: int, end: int, ascii_only: bool, documents: dict[str, int]):
    """Document indices, code words, starts and ends of the lines from byte ``begin`` to ``end``; None if one
    of them is not plainly valid. ``documents`` numbers the case ids."""
    text = buf[begin:end]
    special = np.flatnonzero(text < 33 if ascii_only else (text < 33) | (text > 127)) + begin
    value = buf[special]
    if len(value) and not len(value) % 5 and np.all(value.reshape(-1, 5) == _USUAL):
        # the usual file: each line's bytes below 33 are a tab, the space of its position field, two tabs, its end
        lines = special.reshape(-1, 5)
        tabs, space, ends = lines[:, (0, 2, 3)], lines[:, 1], lines[:, 4]
        starts = np.concatenate(([begin], ends[:-1] + 1))
        if not (np.all(tabs[:, 0] > starts) and np.all(tabs[:, 2] + 1 < ends)):
            return None  # an empty case id or code
    else:
        ends = special[value == 10]
        tabs = special[value == 9]
        other = special[(value != 9) & (value != 10)]
        starts = np.concatenate(([begin], ends[:-1] + 1))
        filled = ends > starts
        starts, ends = starts[filled], ends[filled]
        if len(tabs) != 3 * len(starts):
            return None
        # the three tabs of row i all lie inside line i: with 3 per line in all, every line has exactly 3
        tabs = tabs.reshape(-1, 3)
        if not (np.all(tabs[:, 0] > starts) and np.all(tabs[:, 2] + 1 < ends)):
            return None
        # spaces and other bytes: in the label anything, in the position field one space, elsewhere nothing
        line = np.searchsorted(ends, other)
        field = np.searchsorted(tabs.ravel(), other) - 3 * line
        in_position = field == 1
        if not np.all((field == 2) | (in_position & (buf[other] == 32))):
            return None
        space = other[in_position]
        if len(space) != len(starts) or np.any(line[in_position] != np.arange(len(starts))):
            return None
    offsets = _bulk_offsets(buf, tabs[:, 0] + 1, space, tabs[:, 1])
    case_width = int((tabs[:, 0] - starts).max(initial=1))
    code_width = int((ends - tabs[:, 2] - 1).max(initial=1))
    if offsets is None or case_width > _WIDEST["case"] or code_width > _WIDEST["code"]:
        return None
    if not len(starts):
        return np.zeros(0, dtype=np.int64), np.zeros((0, 1), dtype=np.uint64), *offsets
    # case ids: only where a run of lines of one document begins does Python read the id
    words = _words(buf, starts, tabs[:, 0], case_width)
    lengths = tabs[:, 0] - starts
    changed = lengths[1:] != lengths[:-1]
    for column in words.T:  # word by word: a third of the time of comparing whole rows then any(axis=1)
        changed |= column[1:] != column[:-1]
    heads = np.flatnonzero(np.concatenate(([True], changed)))
    runs = [
        documents.setdefault(data[s:e].decode("ascii"), len(documents))
        for s, e in zip(starts[heads].tolist(), tabs[heads, 0].tolist(), strict=True)
    ]
    document = np.repeat(np.array(runs, dtype=np.int64), np.diff(np.append(heads, len(starts))))
    # codes: their bytes, zero-padded to whole 8-byte words, are their keys
    return document, _words(buf, tabs[:, 2] + 1, ends, code_width), *offsets


def _bulk_offsets(
    buf: np.ndarray, starts: np.ndarray, spaces: np.ndarray, ends: np.ndarray
) -> tuple[np.ndarray, np.ndarray] | None:
    """The two numbers of each 'start end' field (the bytes from ``starts`` to ``ends``, split at ``spaces``), or
    None if one is not an optional minus sign then 1 to 8 ASCII digits.

    Both numbers of every line are read in one pass. The eight bytes from a
    number's first digit, read as one little-endian 64-bit word and shifted up
    by the bytes the number does not use, hold its digits d₁…dₙ in their top
    bytes and zero bytes below them, which read as leading zeros. A byte is a
    digit when its high half is 3 and stays 3 with 6 added. The digits' low
    halves are then added up in three multiply-and-shift steps on the whole
    word: pairs (d₁·10 + d₂), then fours (pair₁·100 + pair₂), then all
    (four₁·10⁴ + four₂).
    """
    count = len(starts)
    first = np.concatenate((starts, spaces + 1))
    negative = buf[first] == 45
    signed = bool(negative.any())
    if signed:
        first += negative
    digits = np.concatenate((spaces, ends)) - first
    if len(digits) and (digits.min() < 1 or digits.max() > 8):
        return None
    shift = (8 - digits).astype(np.uint64)
    shift <<= np.uint64(3)  # bits of the bytes below the number
    word = _unaligned_words(buf)[first]
    word <<= shift
    zeros = _ZEROS << shift  # '0' in the number's bytes, 0 below them
    if np.any(word & _HIGH != zeros) or np.any((word + _SIXES) & _HIGH != zeros):
        return None  # a byte that is not a digit
    word &= _LOW
    for mask, factor, bits in _STEPS:
        word *= factor
        word >>= bits
        word &= mask
    number = word.view(np.int64)
    if signed:
        np.negative(number, out=number, where=negative)
    return number[:count], number[count:]


_ZEROS, _SIXES, _HIGH, _LOW = (np.uint64(int.from_bytes(bytes([b]) * 8, "little")) for b in (0x30, 0x06, 0xF0, 0x0F))
#: Adding up a word of digits: each step multiplies by (10ᵏ·2ᵇ + 1), shifts down by b bits and keeps every other
#: lane of b bits, which then holds a lane's number times 10ᵏ plus the next one's.
_STEPS = tuple(
    (np.uint64(mask), np.uint64(10**k * 2**bits + 1), np.uint64(bits))
    for mask, k, bits in ((0x00FF00FF00FF00FF, 1, 8), (0x0000FFFF0000FFFF, 2, 16), (0x00000000FFFFFFFF, 4, 32))
)
_USUAL = np.array([9, 32, 9, 9, 10], dtype=np.uint8)


def _distinct_codes(words: np.ndarray) -> tuple[list[str], np.ndarray]:
    """The distinct codes, lower-cased, of codes given as rows of zero-padded words, and each row's index."""
    keys = words.ravel() if words.shape[1] == 1 else words.view(f"V{8 * words.shape[1]}").ravel()
    written, index = np.unique(keys, return_inverse=True)  # one sort; a searchsorted of every key took 3x as long
    # the distinct codes as written, lower-cased: codes that differ only in case become one
    lowered: dict[str, int] = {}
    as_lowered = [
        lowered.setdefault(bytes(key).rstrip(b"\0").decode("ascii").lower(), len(lowered))
        for key in (written.view("S8") if words.shape[1] == 1 else written)
    ]
    return list(lowered), np.array(as_lowered, dtype=np.int64)[index]


def _words(buf: np.ndarray, start: np.ndarray, end: np.ndarray, width: int) -> np.ndarray:
    """Each field's bytes, zero-padded to ``width`` rounded up to 8, as rows of little-endian 64-bit words."""
    count = -(-width // 8)
    inside = np.clip(np.arange(width + 1)[:, None] - 8 * np.arange(count), 0, 8)  # bytes of word j in a field of n
    masks = np.where(inside == 8, ~np.uint64(0), (np.uint64(1) << (8 * inside % 64).astype(np.uint64)) - np.uint64(1))
    lengths = end - start
    uniform = len(lengths) and np.all(lengths == lengths[0])  # usual for case ids: one mask for every row
    # one word a row (most codes) is gathered as a column: 3 times as fast as rows of a sliding window
    words = _unaligned_words(buf)[start, None] if count == 1 else sliding_window_view(buf, 8 * count)[start].view("<u8")
    return words & (masks[lengths[0]] if uniform else masks[lengths])


def _unaligned_words(buf: np.ndarray) -> np.ndarray:
    """The little-endian 64-bit word at each byte of ``buf`` (but its last 7), as a view."""
    return np.ndarray((len(buf) - 7,), dtype="<u8", buffer=buf, strides=(1,))


def _records(path: Input, layout: Layout) -> list[tuple[str, ...]]:
    """The values of every non-empty line (none for an empty file); the first bad line raises."""
    text = _text(path)
    matches = layout.line.findall(text)
    if len(matches) != text.count("\n") + 1:  # some line is neither valid nor empty
        _raise_first_problem(text, path, layout)
    return [values for values in matches if values[0]]


def _raise_first_problem(text: str, path: Input, layout: Layout) -> NoReturn:
    """Read line by line to name the first bad line and what is wrong with it."""
    for number, line in enumerate(text.split("\n"), start=1):
        problem = line and layout.problem(line.split("\t"))
        if problem:
            raise InputError(problem, path, f"line {number}")
    raise InputError(f"not {layout.kind}", path)
