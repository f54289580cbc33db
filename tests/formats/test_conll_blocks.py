"""The block reading of CoNLL-2012 files against the line-by-line reading it replaced, on many generated files.

:func:`~nlpbench.files.text_blocks` must give the lines, errors and line numbers of
:func:`~nlpbench.files.text_lines`, and :func:`~nlpbench.formats.coref.read_conll2012` the documents,
warnings and errors of its :meth:`_ConllReader.line` fed one line at a time (the loop it had before).
Blocks are made 8 KiB here, so that a file of a few thousand bytes spans several.
"""

import dataclasses
import random
import re
import sys
import tempfile
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from nlpbench import files
from nlpbench.errors import InputError
from nlpbench.formats import coref, fields
from nlpbench.formats.coref import _ConllReader, read_conll2012

PIECES = [
    b"d 0 0 word -\n", b"d\t0\t1\tw\t(1)\n", b"d 0 2 w (12\n", b"d 0 3 w 12)\n", b"x (1)|(2\n", b"x 2)\n",
    b"\n", b"   \n", b"\t\n", b"# a comment 5)\n", b"  #begin document z\n", b"#end document\n",
    b"#begin document (a); part 000\n", b"#begin document (b); part 001\n", b"a b c d e f (3)(4\n", b"w 4)3)\n",
    b"one\n", b"(7)\n", b"\xc3\xa9t\xc3\xa9 0 1 \xc3\xa9 (5)\n", b"\xe4\xb8\xad 0 1 \xe4\xb8\xad -\n",
    b"d 0 0 w (1+2)|(8)\n", b"d 0 0 w 9)\n", b"-\n", b"_ _ _ _ _\n", b"d 0 0 w (1(2))\n",
]  # fmt: skip
ODD_PIECES = [
    b"d 0 0 w \xc2\xa0(1)\n", b"d 0 0 w\x0c(1)\n", b"d\x00 0 w (1)\n", b"d 0 0 w (1)\r\n", b"d 0 0 w (1)\r",
    b"\xff", b"\xe2\x80",
]  # fmt: skip


@st.composite
def conll_bytes(draw):
    """A CoNLL-2012-like file, mostly well formed, of up to a few blocks; sometimes odd, broken or not UTF-8."""
    rng = random.Random(draw(st.integers(0, 2**32)))
    pieces = PIECES + ODD_PIECES
    weights = [draw(st.integers(0, 3)) for _ in PIECES] + [draw(st.sampled_from([0, 0, 0.01])) for _ in ODD_PIECES]
    if not any(weights):
        weights[0] = 1
    parts = [b"\xef\xbb\xbf"] if draw(st.booleans()) else []
    for index in range(draw(st.integers(0, 12))):
        parts.append(f"#begin document (doc{index}); part 000\n".encode())
        body = rng.choices(pieces, weights, k=rng.randrange(0, 500))
        parts.extend(p for p in body if not p.startswith(b"#begin") or rng.random() < 0.1)
        parts.append(b"#end document\n" if rng.random() < 0.97 else b"")
    if draw(st.booleans()):
        parts.append(b"d 0 0 w -")  # no line end
    return b"".join(parts)


def _outcome(read):
    """What a reading gives: (what it yields, the first error, the warnings)."""
    given, error = [], None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            for item in read():
                given.append(item)
        except InputError as raised:
            error = str(raised)
    return given, error, [str(w.message) for w in caught]


def _lines_of(blocks):
    """The lines of the blocks: one line in a block with a ``\\r``, else lines ended by ``\\n``."""
    count = 0
    for first, text in blocks:
        assert first == count + 1
        lines = [text] if "\r" in text else re.findall(r"[^\n]*\n|[^\n]+\Z", text)
        count += len(lines)
        yield from lines


def _line_by_line(path):
    reader = _ConllReader(path)
    for number, line in enumerate(files.text_lines(path, newline=""), start=1):
        finished = reader.line(number, line)
        if finished is not None:
            yield finished
    reader.close()


@contextmanager
def _file(data: bytes) -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder, "in.conll")
        path.write_bytes(data)
        yield path


@settings(max_examples=150, deadline=None)
@given(conll_bytes(), st.sampled_from([files.MAX_LINE, 40, 2000]))
def test_blocks_give_the_lines_and_errors_of_text_lines(data, limit):
    with _file(data) as path:
        blocks = _outcome(lambda: _lines_of(files.text_blocks(path, limit=limit, size=8192)))
        assert blocks == _outcome(lambda: files.text_lines(path, newline="", limit=limit))


@settings(max_examples=250, deadline=None)
@given(conll_bytes(), st.sampled_from([0, coref.FIELDS_FROM]))
def test_reading_in_blocks_gives_what_reading_line_by_line_gives(data, fields_from):
    """Every block split into fields, or (as read) only those of :data:`~nlpbench.formats.coref.FIELDS_FROM`
    bytes or more."""
    with (
        _file(data) as path,
        mock.patch.object(files, "BLOCK", 8192),
        mock.patch.object(coref, "FIELDS_FROM", fields_from),
    ):
        documents, error, warned = _outcome(lambda: _line_by_line(path))
        assert _outcome(lambda: read_conll2012(path)) == (documents, error, warned)
        without = [dataclasses.replace(document, sentences=()) for document in documents]
        assert _outcome(lambda: read_conll2012(path, words=False)) == (without, error, warned)


def test_a_large_file_read_in_blocks_is_read_as_line_by_line():
    """Well-formed documents over several blocks of the default size, mentions open across a block's end."""
    rng = random.Random(23)
    lines = []
    for index in range(60):
        lines.append(f"#begin document (d{index}); part 000")
        stack: list[int] = []
        for token in range(rng.randrange(500, 5000)):
            roll, chain = rng.random(), rng.randrange(30)
            if roll < 0.1:
                cell = f"({chain})"
            elif roll < 0.2:
                stack.append(chain)
                cell = f"({chain}"
            elif roll < 0.3 and stack:
                cell = f"{stack.pop(rng.randrange(len(stack)))})"
            elif roll < 0.32:
                cell = f"({chain})|({chain + 1}"
                stack.append(chain + 1)
            else:
                cell = "-"
            word = rng.choice(["the", "pilot", "été", "中", "said"])
            lines.append(f"doc\t0\t{token}\t{word}\t*\t{cell}" + ("\n" if rng.random() < 0.05 else ""))
        lines.extend(f"doc 0 0 end {chain})" for chain in reversed(stack))
        lines.append("#end document")
    data = ("\n".join(lines) + "\n").encode()
    assert len(data) > 3 * files.BLOCK
    with _file(data) as path:
        outcome = _outcome(lambda: read_conll2012(path))
        assert outcome[1] is None
        assert outcome == _outcome(lambda: _line_by_line(path))


def test_other_space_is_every_whitespace_above_0x7f():
    spaces = [chr(c) for c in range(0x80, sys.maxunicode + 1) if chr(c).isspace()]
    assert all(fields.OTHER_SPACE.fullmatch(c) for c in spaces)
    assert sum(1 for c in range(0x80, 0x3001) if fields.OTHER_SPACE.fullmatch(chr(c))) == len(spaces)
