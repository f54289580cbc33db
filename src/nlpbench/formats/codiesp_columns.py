"""CodiEsp-X references as numpy columns: the reader of large prediction files and of gold for them.

A prediction file of :data:`~nlpbench.formats.codiesp.SMALL` bytes or more is
read here (:func:`~nlpbench.formats.codiesp.read_predictions`): numpy checks
every line at once and reads the offsets, and Python sees only the distinct
case ids and codes; a file the bulk check does not accept as plainly valid (a
bad line, an id or offset that is not printable ASCII, an offset of more than
8 digits) goes through the exact reader
(:func:`~nlpbench.formats.codiesp.read_predicted_spans`), which names the first
bad line or reads what the bulk check left to it. Gold references are read as
columns too (:func:`read_reference_columns`). A module of its own, so that
reading a small file does not load numpy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from nlpbench.files import Input
from nlpbench.formats.codiesp import GoldRecords, gold_records, normalized_bytes, read_predicted_spans


def read_reference_columns(path: Input, *, listed: bool = False) -> ReferenceColumns:
    """CodiEsp-X gold as columns, each reference from its smallest start to its largest end, or (``listed``)
    from the start of its first listed fragment to the end of its last (which may be inverted)."""
    return reference_columns(gold_records(path), listed=listed)


def reference_columns(gold: GoldRecords, *, listed: bool = False) -> ReferenceColumns:
    """The columns of :func:`read_reference_columns` from gold lines already read."""
    documents: dict[str, int] = {}
    codes: dict[str, int] = {}
    rows = [
        (documents.setdefault(r[0], len(documents)), codes.setdefault(r[2].lower(), len(codes))) for r in gold.records
    ]
    document, code = np.array(rows, dtype=np.int64).reshape(-1, 2).T
    starts, ends = np.array(gold.starts, dtype=np.int64), np.array(gold.ends, dtype=np.int64)
    if not gold.records:
        return ReferenceColumns([], [], document, code, starts, ends)
    first = np.array(gold.first, dtype=np.int64)
    if listed:
        start, end = starts[first[:-1]], ends[first[1:] - 1]
    else:
        start, end = np.minimum.reduceat(starts, first[:-1]), np.maximum.reduceat(ends, first[:-1])
    return ReferenceColumns(list(documents), list(codes), document, code, start, end)


@dataclass(frozen=True)
class ReferenceColumns:
    """CodiEsp-X references as columns: entry ``i`` of each array is line ``i`` (empty lines apart).

    ``document`` and ``code`` index ``documents`` (the distinct case ids) and
    ``codes`` (the distinct codes, lower-cased); ``start`` and ``end`` bound
    the reference (a prediction's offsets as written, see
    :func:`~nlpbench.formats.codiesp.read_predicted_references`).
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
    """CodiEsp-X predictions as columns, the same lines :func:`~nlpbench.formats.codiesp.read_predicted_spans`
    accepts."""
    return predicted_columns(normalized_bytes(path), path)


def predicted_columns(data: bytes, path: Input) -> ReferenceColumns:
    """The columns of :func:`read_predicted_columns` from the file's bytes (:func:`normalized_bytes`)."""
    columns = _bulk_predicted_columns(data)
    if columns is not None:
        return columns
    references = read_predicted_spans(path)
    documents: dict[str, int] = {}
    codes: dict[str, int] = {}
    rows = [
        (documents.setdefault(r.doc_id, len(documents)), codes.setdefault(r.code.lower(), len(codes)), *r.fragments[0])
        for r in references
    ]
    return ReferenceColumns.of_rows(documents, codes, rows)


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
    # through the last line end, one added when the file has none (not an empty last line more, which would send
    # the last chunk to the general path)
    size = len(data) if data.endswith(b"\n") else len(data) + 1
    buf = np.zeros(size + 8 * (_WIDEST["case"] // 8 + 1), dtype=np.uint8)  # and padding: one copy of the file
    buf[: len(data)] = np.frombuffer(data, dtype=np.uint8)
    buf[size - 1] = 10
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
