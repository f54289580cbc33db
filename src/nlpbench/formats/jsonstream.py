"""Stream JSON without holding the file in memory: the items of a top-level array, or JSON Lines.

A file written one item per line (``[``, then ``{…},`` lines, then ``]``,
as nlpbench writes annotation records) is decoded a line at a time with
msgspec, into ``line_type`` — ``dict[str, msgspec.Raw]`` leaves each value
undecoded until it is asked for. Any other layout, or the first line that is
not one whole item, hands the rest of the file to ijson, which streams any
JSON; its items are plain Python values. Both paths accept and refuse the
same files.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import ijson
import msgspec

from nlpbench.errors import InputError


def items(handle: BinaryIO, path: Path, line_type: Any = Any) -> Iterator[Any]:
    """Yield each item of the JSON array in ``handle`` (positioned at the start of the file)."""
    first = handle.readline()
    if first.strip() != b"[":
        handle.seek(0)
        yield from _ijson_items(handle, path)
        return
    decoder = msgspec.json.Decoder(line_type)
    offset = len(first)  # where the line being read starts
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
        try:
            item = decoder.decode(stripped[:-1] if followed else stripped)
        except msgspec.DecodeError:
            break
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
    try:
        stream = ijson.items(handle, "item", use_float=True)
        if skip_first:
            next(stream, None)
        for item in stream:
            yield item
            index += 1
    except ijson.JSONError as error:
        raise InputError(f"malformed JSON after record {index}: {error}", path) from None


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
    number = 0
    try:
        with open(path, encoding="utf-8") as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    value = json.loads(line)
                except json.JSONDecodeError as error:
                    raise InputError(f"bad JSON: {error.msg} at column {error.colno}", path, f"line {number}") from None
                yield f"line {number}", value
    except UnicodeDecodeError as error:
        raise InputError(f"not UTF-8 text ({error.reason})", path, f"line {number + 1}") from None
