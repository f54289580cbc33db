"""Stream JSON without holding the file in memory: the items of a top-level array, or JSON Lines.

A file written one item per line (``[``, then ``{…},`` lines, then ``]``,
as nlpbench writes annotation records) is decoded a line at a time with
msgspec, into ``line_type`` — ``dict[str, msgspec.Raw]`` leaves each value
undecoded until it is asked for. Any other layout, or the first line that is
not one whole item, hands the rest of the file to ijson, which streams any
JSON; its items are plain Python values. Both paths accept and refuse the
same files.

Every path is bounded: nesting deeper than :data:`MAX_DEPTH` is refused
before a parser sees it (a file of 100,000 ``[`` once grew ijson's prefixes
quadratically, to 24 GB), a UTF-8 byte order mark is skipped, bytes that are
not UTF-8 and lone surrogates (``"\\ud800"``) are refused, and an object that
repeats a key at its top level is refused instead of keeping its last value.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import ijson
import msgspec
import numpy as np

from nlpbench.errors import InputError, excerpt

#: The deepest nesting any reader accepts; real files nest a handful of levels.
MAX_DEPTH = 128
BOM = b"\xef\xbb\xbf"
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b"[]{},")
_OPENS = np.zeros(256, np.int64)
_OPENS[list(b"[{")] = 1
_OPENS[list(b"]}")] = -1


def too_deep() -> str:
    return f"JSON nested deeper than {MAX_DEPTH} levels"


class _Structure:
    """Tracks the nesting depth of a JSON text read in pieces, outside its strings.

    Strings are cut out with a regular expression and what is left is reduced
    to brackets and commas, so the work is done in C and numpy, not a Python
    loop over bytes. ``commas`` counts the commas of the top-level container
    (its members less one), to tell whether an object repeats a key.
    """

    def __init__(self) -> None:
        self.depth = 0
        self.in_string = False
        self.escaped = False  # the last piece ended inside a string on a lone backslash
        self.commas = 0

    def feed(self, piece: bytes) -> None:
        """Account for the next piece; :class:`ValueError` when it nests too deep."""
        if not piece:
            return
        start = 0
        if self.in_string:
            start = int(self.escaped)
            self.escaped = False
            end = _string_end(piece, start)
            if end is None:
                self.escaped = _odd_backslashes(piece[start:])
                return
            self.in_string, start = False, end
        rest = _STRING.sub(b'""', piece[start:] if start else piece)
        quote = _open_quote(rest)
        if quote >= 0:  # a string runs on into the next piece
            self.in_string = True
            self.escaped = _odd_backslashes(rest[quote + 1 :])
            rest = rest[:quote]
        self._brackets(rest)

    def _brackets(self, rest: bytes) -> None:
        marks = rest.translate(None, _NOT_STRUCTURE)
        if not marks:
            return
        codes = np.frombuffer(marks, np.uint8)
        depths = np.cumsum(_OPENS[codes]) + self.depth
        if int(depths.max()) > MAX_DEPTH:
            raise ValueError(too_deep())
        self.commas += int(np.count_nonzero((codes == ord(",")) & (depths == 1)))
        self.depth = int(depths[-1])


def _string_end(piece: bytes, start: int) -> int | None:
    """Where the string the piece starts inside ends (just after its quote), or None when it runs on."""
    match = _STRING_BODY.match(piece, start)
    end = match.end()
    if end < len(piece) and piece[end] == 0x22:
        return end + 1
    return None


_STRING_BODY = re.compile(rb'[^"\\]*(?:\\.[^"\\]*)*')


def _open_quote(rest: bytes) -> int:
    """The quote that opens a string the piece does not close, or -1 (complete strings were cut to ``""``)."""
    position = 0
    while True:
        quote = rest.find(b'"', position)
        if quote < 0 or rest[quote + 1 : quote + 2] != b'"':
            return quote
        position = quote + 2


def _odd_backslashes(text: bytes) -> bool:
    return (len(text) - len(text.rstrip(b"\\"))) % 2 == 1


def check(data: bytes, path: Path | str | None = None, where: str | None = None) -> int:
    """Refuse ``data`` (one whole JSON text) when it nests deeper than :data:`MAX_DEPTH`; its top-level commas.

    Cheap when the text has few brackets: the full scan runs only when it could matter.
    """
    structure = _Structure()
    try:
        structure.feed(data)
    except ValueError as error:
        raise InputError(str(error), path, where) from None
    return structure.commas


def decode(
    data: bytes, path: Path | str, where: str | None = None, type: Any = Any, *, everywhere: bool = False
) -> Any:
    """One JSON text decoded by msgspec into ``type``, bounded and checked.

    A byte order mark is skipped; nesting deeper than :data:`MAX_DEPTH`,
    malformed JSON, bytes that are not UTF-8 and lone surrogates are an
    :class:`InputError`; so is a top-level object that repeats a key — or any
    object, when ``everywhere`` (a second pass, for small files).
    :class:`msgspec.ValidationError` (JSON, but not of ``type``) is left to
    the caller, who knows what to say.
    """
    if data.startswith(BOM):
        data = data[len(BOM) :]
    commas = check(data, path, where)
    try:
        value = msgspec.json.decode(data, type=type)
    except msgspec.ValidationError:
        raise
    except msgspec.DecodeError as error:
        raise InputError(f"malformed JSON: {error}", path, where) from None
    except UnicodeDecodeError as error:
        raise InputError(f"not UTF-8 text ({error.reason} at byte {error.start})", path, where) from None
    if isinstance(value, dict):
        repeated(value, commas, path, where)
    if everywhere:
        try:
            json.loads(data, object_pairs_hook=_unique_pairs)
        except _RepeatedKey as error:
            raise InputError(f"an object repeats the key {error}", path, where) from None
    return value


def _unique_pairs(pairs: list[tuple[str, Any]]) -> None:
    keys = set()
    for key, _ in pairs:
        if key in keys:
            raise _RepeatedKey(excerpt(key))
        keys.add(key)


def repeated(value: dict, commas: int, path: Path | str, where: str | None) -> None:
    """Refuse an object decoded from a text with ``commas`` top-level commas that has fewer keys than members."""
    if value and len(value) <= commas:
        raise InputError(f"an object repeats a key ({commas + 1} members, {len(value)} distinct keys)", path, where)


def items(handle: BinaryIO, path: Path, line_type: Any = Any) -> Iterator[Any]:
    """Yield each item of the JSON array in ``handle`` (positioned at the start of the file)."""
    first = handle.readline()
    if first.startswith(BOM):
        first = first[len(BOM) :]
    if first.strip() != b"[":
        handle.seek(0)
        if handle.read(len(BOM)) != BOM:
            handle.seek(0)
        yield from _ijson_items(handle, path)
        return
    decoder = msgspec.json.Decoder(line_type)
    offset = handle.tell()  # where the line being read starts
    count, comma = 0, False  # items read so far; whether the last one was followed by a comma
    lines = iter(handle)
    for line in lines:
        stripped = line.strip()
        if stripped == b"]" and (count == 0 or not comma) and not any(rest.strip() for rest in lines):
            return
        if not stripped:
            offset += len(line)
            continue
        if count and not comma:
            break  # an item follows one without a comma: let ijson say so
        followed = stripped.endswith(b",")
        text = stripped[:-1] if followed else stripped
        try:
            commas = check(text)
            item = decoder.decode(text)
        except (InputError, msgspec.DecodeError, UnicodeDecodeError):
            break  # ijson, behind its own depth limit, says what is wrong
        if isinstance(item, dict):
            repeated(item, commas, path, f"record {count}")
        offset += len(line)
        comma = followed
        count += 1
        yield item
    # The file ended early, or a line is not one whole item: hand the rest to
    # ijson behind a stand-in for what was read, so that it continues the same
    # array and accepts or refuses exactly what it would have.
    handle.seek(offset)
    prefix = b"[" if count == 0 else b"[0," if comma else b"[0"
    yield from _ijson_items(_Prefixed(prefix, handle), path, count, skip_first=count > 0)


def _ijson_items(handle: BinaryIO, path: Path, before: int = 0, skip_first: bool = False) -> Iterator[Any]:
    index = before
    repeated: list[str] = []

    class UniqueKeys(dict):
        """The objects ijson builds, noting a repeated key (raising inside ijson's C code would not reach here)."""

        def __setitem__(self, key: str, value: Any) -> None:
            if key in self:
                repeated.append(key)
            super().__setitem__(key, value)

    try:
        stream = ijson.items(_DepthLimited(handle), "item", use_float=True, map_type=UniqueKeys)
        if skip_first:
            next(stream, None)
        for item in stream:
            if repeated:
                raise InputError(f"an object repeats the key {excerpt(repeated[0])}", path, f"record {index}")
            yield item
            index += 1
    except ijson.JSONError as error:
        raise InputError(f"malformed JSON after record {index}: {error}", path) from None
    except _TooDeep as error:
        raise InputError(str(error), path, f"record {index}") from None
    except UnicodeDecodeError as error:
        raise InputError(f"not UTF-8 text or a lone surrogate ({error.reason})", path, f"record {index}") from None


class _TooDeep(Exception):
    pass


class _RepeatedKey(Exception):
    pass


class _DepthLimited:
    """A binary stream that refuses to hand out JSON nested deeper than :data:`MAX_DEPTH`."""

    def __init__(self, handle: Any):
        self.handle = handle
        self.structure = _Structure()

    def read(self, size: int = -1) -> bytes:
        piece = self.handle.read(size)
        try:
            self.structure.feed(piece)
        except ValueError as error:
            raise _TooDeep(str(error)) from None
        return piece


class _Prefixed:
    """A binary stream that reads ``prefix`` first, then the rest of ``handle``."""

    def __init__(self, prefix: bytes, handle: BinaryIO):
        self.prefix, self.handle = prefix, handle

    def read(self, size: int = -1) -> bytes:
        if not self.prefix or size == 0:  # ijson reads 0 bytes to learn the stream's type
            return self.handle.read(size)
        head, self.prefix = self.prefix, b""
        return head + self.handle.read(max(size - len(head), 0) if size >= 0 else -1)


def json_lines(path: Path) -> Iterator[tuple[str, Any]]:
    """``("line N", value)`` for each non-blank line of a JSON Lines file, in order.

    A line that is not JSON, or bytes that are not UTF-8, stop the reading
    with an :class:`InputError` naming the line.
    """
    with open(path, "rb") as handle:
        for number, line in enumerate(handle, start=1):
            if number == 1 and line.startswith(BOM):
                line = line[len(BOM) :]
            if not line.strip():
                continue
            where = f"line {number}"
            yield where, decode(line, path, where)
