"""The whitespace-separated fields of a block of lines, found for the whole block at once with numpy.

A column reader (CoNLL-2012) that splits each line in Python spends most of
its time in that loop. Here a block of lines, as bytes, is split with array
operations: a byte is a separator when it is at most 0x20 (a space, a tab or
a newline), every line ends with ``\\n``, and a field is a maximal run of other
bytes. A block with another control character is refused, and the caller
makes sure that no character above 0x7f is whitespace to :meth:`str.split`
(:func:`plain_spacing`), so that the fields are those ``line.split()`` gives.
Field texts are taken out in one decode per block (:func:`texts`): a field
never splits a UTF-8 sequence, because every byte of a multi-byte sequence is
0x80 or above.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

#: Every character above 0x7f that :meth:`str.isspace` accepts, as a class.
OTHER_SPACE = re.compile("[\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]")


def plain_spacing(text: str, data: bytes) -> bool:
    """Whether ``text`` (``data`` is it in UTF-8) has no whitespace above 0x7f."""
    return data.isascii() or OTHER_SPACE.search(text) is None


@dataclass(frozen=True)
class Fields:
    """The fields of a block: the bytes, each line's end, each field's bounds and each line's count.

    ``ends_of_lines[i]`` is the offset of line i's ``\\n``; field j spans ``starts[j]:stops[j]``;
    line i holds fields ``first[i]`` to ``first[i] + counts[i] − 1``.
    """

    bytes: np.ndarray
    ends_of_lines: np.ndarray
    starts: np.ndarray
    stops: np.ndarray
    counts: np.ndarray
    first: np.ndarray


def split(data: bytes) -> Fields | None:
    """The fields of ``data``, whole lines each ended by ``\\n``, separated by spaces, tabs and newlines;
    None when it holds a control character other than tab and newline."""
    import numpy as np  # imported here: the command line starts faster for every other reader

    array = np.frombuffer(data, np.uint8)
    ends_of_lines = np.flatnonzero(array == 10)
    separator = np.empty(len(array) + 1, bool)  # whether each byte separates, after one that does
    separator[0] = True
    np.less_equal(array, 32, out=separator[1:])
    if np.count_nonzero(separator) - 1 != data.count(b" ") + data.count(b"\t") + len(ends_of_lines):
        return None
    edges = np.flatnonzero(separator[1:] != separator[:-1])  # where bytes change from separating or to it
    starts, stops = edges[0::2], edges[1::2]  # separator → field is a start, field → separator a stop
    through = np.searchsorted(starts, ends_of_lines)  # the fields up to each line's end
    counts = np.diff(through, prepend=0)
    return Fields(array, ends_of_lines, starts, stops, counts, through - counts)


def texts(fields: Fields, chosen: np.ndarray) -> list[str]:
    """The text of each chosen field (indices into ``fields.starts``), in one decode."""
    import numpy as np

    if not len(chosen):
        return []
    starts = fields.starts[chosen]
    lengths = fields.stops[chosen] - starts + 1  # with the separator after it, made a newline
    ends = np.cumsum(lengths)
    index = np.arange(int(ends[-1])) - np.repeat(ends - lengths - starts, lengths)
    picked = fields.bytes[index]
    picked[ends - 1] = 10
    return picked.tobytes().decode("utf-8").split("\n")[:-1]
