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

import functools
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
_OPENS = np.zeros(256, np.int32)
_OPENS[list(b"[{")] = 1
_OPENS[list(b"]}")] = -1


def too_deep() -> str:
    return f"JSON nested deeper than {MAX_DEPTH} levels"


class _Structure:
    """Tracks the nesting depth of a JSON text read in pieces, outside its strings.

    Every step is a bytes method or a numpy operation over the piece, not a
    Python loop: a quote is a string's edge unless an odd run of backslashes
    precedes it, a byte is inside a string when an odd number of edges precede
    it, and the depth is the running sum of the brackets outside strings. ``commas``
    counts the commas of the top-level container (its members less one), to
    tell whether an object repeats a key.
    """

    def __init__(self) -> None:
        self.depth = 0
        self.in_string = 0
        self.backslashes = 0  # the run of backslashes the last piece ended on
        self.commas = 0

    def feed(self, piece: bytes) -> None:
        """Account for the next piece; :class:`ValueError` when it nests too deep."""
        if not piece:
            return
        if b"\\" in piece or self.backslashes:
            self._feed_escaped(piece)
            return
        # No backslash: every quote is a string's edge, and what lies between strings is every other
        # part of the piece cut at its quotes. Joined and reduced to brackets and commas (all in C), it
        # is short, so numpy has little left to do.
        parts = piece.split(b'"')
        outside = b"".join(parts[self.in_string :: 2]).translate(None, _NOT_STRUCTURE)
        self.in_string = (self.in_string + len(parts) - 1) % 2
        if outside:
            codes = np.frombuffer(outside, np.uint8)
            self._add(codes, _OPENS[codes], np.ones(len(codes), bool))

    def _feed_escaped(self, piece: bytes) -> None:
        codes = np.frombuffer(piece, np.uint8)
        positions = np.arange(len(codes))
        backslash = codes == _BACKSLASH
        # the last byte at or before each position that is not a backslash (-1: none in this piece)
        plain = np.maximum.accumulate(np.where(backslash, -1, positions))
        before = np.concatenate(([-1], plain[:-1]))
        run = positions - 1 - before + np.where(before < 0, self.backslashes, 0)
        edges = (codes == _QUOTE) & (run % 2 == 0)
        inside = (np.cumsum(edges) + self.in_string) % 2 == 1
        steps = _OPENS[codes]
        steps[inside] = 0
        self._add(codes, steps, ~inside)
        self.in_string = int(inside[-1])
        trailing = len(piece) - len(piece.rstrip(b"\\"))
        self.backslashes = trailing + self.backslashes if trailing == len(piece) else trailing

    def _add(self, codes: np.ndarray, steps: np.ndarray, outside: np.ndarray) -> None:
        """Follow the depth through bytes ``codes`` (``steps`` their brackets, ``outside`` not in a string)."""
        depths = np.cumsum(steps) + self.depth
        if int(depths.max()) > MAX_DEPTH:
            raise ValueError(too_deep())
        self.commas += int(np.count_nonzero((codes == _COMMA) & outside & (depths == 1)))
        self.depth = int(depths[-1])


_QUOTE, _BACKSLASH, _COMMA = ord('"'), ord("\\"), ord(",")
_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b"[]{},")
_INNERMOST = re.compile(rb"\[,*\]|\{,*\}")


def check(data: bytes, path: Path | str | None = None, where: str | None = None) -> int:
    """Refuse ``data`` (one whole JSON text) when it nests deeper than :data:`MAX_DEPTH`; its top-level commas.

    A text without backslashes and with few brackets (most lines of a record file) is settled in C: its
    brackets and commas outside strings are too few to nest too deep, and removing the innermost
    containers until one is left leaves the top level's commas.
    """
    if b"\\" not in data:
        marks = b"".join(data.split(b'"')[::2]).translate(None, _NOT_STRUCTURE)
        if marks.count(b"[") + marks.count(b"{") <= MAX_DEPTH:
            while (inner := _INNERMOST.sub(b"", marks)) and inner != marks:
                marks = inner
            return marks.count(b",")
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
        plain = b"\\" not in text and text.count(b"[") + text.count(b"{") <= MAX_DEPTH  # cannot nest too deep
        try:
            commas = None if plain else check(text)
            item = decoder.decode(text)
        except (InputError, msgspec.DecodeError, UnicodeDecodeError, RecursionError):
            break  # ijson, behind its own depth limit, says what is wrong
        if isinstance(item, dict):
            if commas is None and not _keys_once(text, item):
                commas = check(text)
            if commas is not None:
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


def _keys_once(text: bytes, item: dict) -> bool:
    """Whether no key of the object decoded from ``text`` (a line without backslashes) was written twice.

    Without backslashes a quoted key can only occur in the text as that string: once as the key itself,
    and as often as it occurs inside the (undecoded) values. A second member of the same key adds one
    more. False also when a value is decoded (then :func:`check` counts the members exactly).
    """
    if not all(isinstance(value, msgspec.Raw) for value in item.values()):
        return False
    values = b"".join(bytes(value) for value in item.values())
    for key in item:
        quoted = _quoted(key)
        if text.count(quoted) != 1 + values.count(quoted):
            return False
    return True


_quoted = functools.lru_cache(maxsize=256)(msgspec.json.encode)


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
